"""The narrative landscape: UMAP projection and HDBSCAN topics with soft memberships (paper 4.2).

As Narrative Trails (German et al. 2025, ``Library/narrative_landscape.py``): UMAP with 48
components, cosine, ``min_dist=0``, centred on its mean; HDBSCAN with ``prediction_data=True`` and
``all_points_membership_vectors`` for each document's topic distribution (hdbscan's function, run
by :mod:`memberships` in time that scales to large collections: the same numbers). A document's hard topic
is the argmax of its memberships (the original's choice: noise points join their most probable
topic); HDBSCAN's own labels (-1 = noise) are kept too.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from judgelab.narrative.landscape.memberships import all_points_membership_vectors


@dataclass
class Landscape:
    """UMAP coordinates, topic memberships (rows sum to 1) and labels of one fit."""

    reduced: np.ndarray          # n x n_components, centred
    memberships: np.ndarray      # n x n_topics
    labels: np.ndarray           # argmax topic of each document
    hdbscan_labels: np.ndarray   # HDBSCAN labels, -1 = noise
    seed: int
    params: dict

    @property
    def n_topics(self) -> int:
        return int(self.memberships.shape[1])


UMAP_APPROXIMATE_FROM = 4096
"""umap-learn finds a collection's neighbours exactly below this many documents and by NN-descent
(approximate, seeded, single-threaded: minutes at 50,000) from it on; from it on we hand UMAP the
exact neighbours instead (:func:`judgelab.narrative.landscape.build.shared_neighbours`), found once
for every seed."""


def umap_project(embeddings: np.ndarray, n_components: int = 48, n_neighbors: int = 16,
                 seed: int = 42, min_dist: float = 0.0,
                 neighbours: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """UMAP (cosine) of the embeddings; seeded (umap then runs single-threaded, deterministically).
    ``neighbours``: each document's nearest neighbours (``(indices, cosines)``, most similar first,
    itself excluded, at least ``n_neighbors - 1`` of them), given to UMAP in place of its own search."""
    import umap
    n = len(embeddings)
    if n <= n_components + 1:
        raise ValueError(f"UMAP with {n_components} components needs more than {n_components + 1} documents, got {n}")
    nn = min(n_neighbors, n - 1)
    knn = (None, None, None)
    if neighbours is not None:             # UMAP's lists start with the document itself, at distance 0
        idx, cos = neighbours
        if idx.shape[1] < nn - 1:
            raise ValueError(f"{idx.shape[1]} neighbours given, UMAP with n_neighbors={nn} needs {nn - 1}")
        knn = (np.hstack([np.arange(n)[:, None], idx[:, :nn - 1]]).astype(np.int32),
               np.hstack([np.zeros((n, 1)), np.maximum(1.0 - cos[:, :nn - 1], 0.0)]).astype(np.float32), None)
    model = umap.UMAP(n_components=n_components, n_neighbors=nn, min_dist=min_dist,
                      metric="cosine", random_state=seed, n_jobs=1, low_memory=True, precomputed_knn=knn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(model.fit_transform(embeddings), dtype=np.float64)


def topic_memberships(reduced: np.ndarray, min_cluster_size: int = 4,
                      cluster_selection_method: str = "eom"):
    """HDBSCAN on the projection; returns (memberships n x k rows summing to 1, HDBSCAN labels)."""
    import hdbscan
    model = hdbscan.HDBSCAN(min_cluster_size=min_cluster_size, prediction_data=True,
                            cluster_selection_method=cluster_selection_method)
    model.fit(reduced)
    n_clusters = int(model.labels_.max()) + 1
    if n_clusters < 1:
        raise ValueError(f"HDBSCAN found no cluster (min_cluster_size={min_cluster_size}, n={len(reduced)})")
    # hdbscan's all_points_membership_vectors, the same numbers in time that scales (memberships.py)
    memb = np.asarray(all_points_membership_vectors(model), dtype=np.float64)
    if memb.ndim == 1:            # a single cluster: hdbscan returns a vector
        memb = memb.reshape(-1, 1)
    sums = memb.sum(axis=1, keepdims=True)
    bad = ~np.isfinite(sums[:, 0]) | (sums[:, 0] <= 0)
    memb[bad] = 1.0 / memb.shape[1]   # defensive: a degenerate row becomes uniform
    memb /= memb.sum(axis=1, keepdims=True)
    return memb, np.asarray(model.labels_)


def fit_landscape(embeddings: np.ndarray, *, n_neighbors: int = 16, n_components: int = 48,
                  min_cluster_size: int = 4, seed: int = 42,
                  cluster_selection_method: str = "eom",
                  neighbours: tuple[np.ndarray, np.ndarray] | None = None) -> Landscape:
    """UMAP (centred) + HDBSCAN soft memberships + argmax labels, as in Narrative Trails.
    ``neighbours``: the neighbours for UMAP (:func:`umap_project`), shared by every seed."""
    reduced = umap_project(embeddings, n_components, n_neighbors, seed, neighbours=neighbours)
    reduced -= reduced.mean(axis=0)
    memb, hl = topic_memberships(reduced, min_cluster_size, cluster_selection_method)
    params = {"n_neighbors": n_neighbors, "n_components": n_components,
              "min_cluster_size": min_cluster_size, "min_dist": 0.0, "metric": "cosine",
              "cluster_selection_method": cluster_selection_method}
    return Landscape(reduced, memb, memb.argmax(axis=1), hl, int(seed), params)


def project_2d(embeddings: np.ndarray, n_neighbors: int = 16, seed: int = 42,
               neighbours: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """A 2-D UMAP of the embeddings for display (min_dist 0.25, as the original's plot)."""
    return umap_project(embeddings, 2, n_neighbors, seed, min_dist=0.25, neighbours=neighbours)
