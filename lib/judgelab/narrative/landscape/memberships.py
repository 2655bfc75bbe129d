"""Soft topic memberships of every document: HDBSCAN's ``all_points_membership_vectors``, exactly,
in time that scales.

hdbscan's own function (0.8.44, ``prediction.all_points_membership_vectors``) walks the cluster
tree for every document and every selected cluster, searching the tree linearly for each parent
and copying the tree's columns once per document: time grows with documents x clusters x tree
size. At 10,000 documents and 694 topics it takes 150 s for a fit whose HDBSCAN took 2 s; at
50,000 documents (thousands of topics) it is hours. The merge height of a document and a cluster
depends on the document only through its leaf cluster of the condensed tree (and, when that leaf
lies under the cluster, its own lambda), so this module computes it once per (leaf, cluster),
with the parents indexed by id, and the exemplar distances with the same sequential sums, in
numba. Every formula below is hdbscan's, term for term (``_prediction_utils.pyx``); the result
equals hdbscan's own to the last bit (tests/test_landscape_large.py on three clusterings, and
``make bench``'s ``memberships_speedup_vs_hdbscan`` again).
"""
from __future__ import annotations

import math

import numba
import numpy as np

DBL_MAX = np.finfo(np.float64).max


@numba.njit(cache=True)
def _leaf_heights(leaves, clusters, parent_of, lambda_of, offset):
    """For each leaf cluster and selected cluster: the lambda at which they merge (``value``)
    when each lies outside the other (``merged``), as hdbscan's ``merge_height`` walks it:
    move the larger id to its parent until the two meet; the last cluster moved gives the lambda.
    Where ``merged`` is false the height is the document's own lambda (filled in by the caller)."""
    merged = np.zeros((leaves.shape[0], clusters.shape[0]), dtype=np.bool_)
    value = np.zeros((leaves.shape[0], clusters.shape[0]), dtype=np.float64)
    for a in range(leaves.shape[0]):
        for i in range(clusters.shape[0]):
            left, right = leaves[a], clusters[i]
            took_left, took_right, last = False, False, -1
            while left != right:
                if left > right:
                    took_left, last = True, left
                    left = parent_of[left - offset]
                else:
                    took_right, last = True, right
                    right = parent_of[right - offset]
            if took_left and took_right:
                merged[a, i] = True
                value[a, i] = lambda_of[last - offset]
    return merged, value


@numba.njit(cache=True, parallel=True)
def _min_exemplar_distances(points, exemplars, starts):
    """hdbscan's ``all_points_dist_membership_vector`` (softmax off), n x k: 1 / each point's
    smallest Euclidean distance to cluster i's exemplars (rows ``starts[i]:starts[i + 1]``;
    DBL_MAX / k at distance 0), each row normalised to sum 1; every sum in hdbscan's order."""
    n, k, d = points.shape[0], starts.shape[0] - 1, points.shape[1]
    out = np.empty((n, k), dtype=np.float64)
    for p in numba.prange(n):
        for i in range(k):
            best = DBL_MAX
            for e in range(starts[i], starts[i + 1]):
                s = 0.0
                for j in range(d):
                    t = points[p, j] - exemplars[e, j]
                    s += t * t
                dist = np.sqrt(s)
                if dist < best:
                    best = dist
            out[p, i] = 1.0 / best if best != 0 else DBL_MAX / k
        total = 0.0
        for i in range(k):                      # normalised with a sequential sum, as hdbscan does
            total += out[p, i]
        for i in range(k):
            out[p, i] = out[p, i] / total
    return out


@numba.njit(cache=True)
def _scores(heights, max_lambda):
    """exp(-(max_lambda / height)), with the C library's exp as hdbscan's Cython calls it (numpy's
    own exp can differ in the last bit)."""
    out = np.empty_like(heights)
    for p in range(heights.shape[0]):
        for i in range(heights.shape[1]):
            out[p, i] = math.exp(-(max_lambda[p] / heights[p, i]))
    return out


def _distance_vectors(points: np.ndarray, exemplars: list[np.ndarray]) -> np.ndarray:
    """:func:`_min_exemplar_distances` of the points and each cluster's exemplars."""
    starts = np.r_[0, np.cumsum([len(e) for e in exemplars])].astype(np.int64)
    stacked = np.ascontiguousarray(np.vstack(exemplars), dtype=np.float64)
    return _min_exemplar_distances(np.ascontiguousarray(points, dtype=np.float64), stacked, starts)


def _tree_terms(tree: np.ndarray, ctree: np.ndarray, max_lambdas: dict, clusters: np.ndarray):
    """hdbscan's ``all_points_outlier_membership_vector`` (softmax on) and
    ``all_points_prob_in_some_cluster``, from the condensed tree, its cluster rows and the leaves'
    largest lambdas, with the merge heights of :func:`_leaf_heights`."""
    offset = int(tree["parent"].min())                   # the root: ids below it are documents
    size = int(max(tree["parent"].max(), ctree["child"].max() if len(ctree) else offset)) - offset + 1
    parent_of = np.full(size, -1, dtype=np.int64)
    lambda_of = np.zeros(size, dtype=np.float64)
    # hdbscan's linear search takes the first row with that child: keep the first, as it does
    rows = ctree[::-1]
    parent_of[rows["child"].astype(np.int64) - offset] = rows["parent"].astype(np.int64)
    lambda_of[rows["child"].astype(np.int64) - offset] = rows["lambda_val"].astype(np.float64)

    point_rows = tree[tree["child_size"] == 1]
    point = point_rows["child"].astype(np.int64)
    leaf = point_rows["parent"].astype(np.int64)
    own_lambda = point_rows["lambda_val"].astype(np.float64)
    leaves, leaf_index = np.unique(leaf, return_inverse=True)
    merged, value = _leaf_heights(leaves, clusters, parent_of, lambda_of, offset)
    heights = np.where(merged[leaf_index], value[leaf_index], own_lambda[:, None])

    leaf_max = np.array([max_lambdas[c] for c in leaves], dtype=np.float64)[leaf_index]
    scores = _scores(heights, leaf_max + 1e-8)                       # all_points_per_cluster_scores
    n = int(offset)
    per_cluster = np.empty((n, clusters.size), dtype=np.float64)
    per_cluster[point] = scores
    outlier = np.exp(per_cluster - np.nanmax(per_cluster))          # its softmax, as hdbscan scales it
    outlier = outlier / outlier.sum(axis=1)[:, None]

    top = heights.argmax(axis=1)                                      # all_points_prob_in_some_cluster
    cluster_max = np.array([max_lambdas[c] for c in clusters], dtype=np.float64)
    in_some = np.empty(n, dtype=np.float64)
    in_some[point] = heights[np.arange(len(point)), top] / np.maximum(cluster_max[top], own_lambda)

    return outlier, in_some


def all_points_membership_vectors(clusterer) -> np.ndarray:
    """``hdbscan.all_points_membership_vectors(clusterer)`` for a Euclidean fit with prediction
    data: n x k memberships (k selected clusters in sorted order), the same numbers."""
    import hdbscan

    data = clusterer.prediction_data_
    if type(data.dist_metric).__name__ != "EuclideanDistance":
        return hdbscan.all_points_membership_vectors(clusterer)   # the library's own, any metric
    clusters = np.array(sorted(clusterer.condensed_tree_._select_clusters()), dtype=np.int64)
    points = data.raw_data
    if clusters.size == 0:
        return np.zeros(points.shape[0])
    outlier, in_some = _tree_terms(clusterer.condensed_tree_._raw_tree, data.cluster_tree,
                                   data.leaf_max_lambdas, clusters)
    result = _distance_vectors(points, data.exemplars) * outlier
    result = result / result.sum(axis=1)[:, np.newaxis]
    result *= in_some[:, np.newaxis]
    return result
