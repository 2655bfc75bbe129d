"""What lets a 50,000-document collection through notebook 07 on 2 cores, each against an answer
that is not the code under test:

- HDBSCAN's soft memberships (:mod:`memberships`) are hdbscan's own
  ``all_points_membership_vectors``, bit for bit, on clusterings with noise, nested clusters and
  exemplars at distance zero;
- the shared neighbours are brute force's (numpy's full sort of every similarity);
- a large collection's seeds (and its 2-D map) are fitted in worker processes from one neighbour
  search, and each fit is the one the same call makes in this process, with the neighbours
  reaching UMAP;
- the embedding shows its progress in a pipeline notebook's log.
"""
from __future__ import annotations

import warnings

import hdbscan
import numpy as np
import pandas as pd
import pytest

from judgelab.narrative.landscape import build
from judgelab.narrative.landscape.collections import DocumentCollection
from judgelab.narrative.landscape.knn_graph import exact_neighbours, knn_coherence_graph
from judgelab.narrative.landscape.memberships import all_points_membership_vectors


def blobs(n: int, dim: int, centres: int, seed: int, duplicates: int = 0) -> np.ndarray:
    """Gaussian clusters of different spreads plus uniform noise (and exact duplicate rows)."""
    rng = np.random.default_rng(seed)
    c = rng.uniform(-10, 10, (centres, dim))
    which = rng.integers(0, centres, n)
    x = c[which] + rng.normal(size=(n, dim)) * rng.uniform(0.3, 1.5, centres)[which, None]
    x[: n // 10] = rng.uniform(-12, 12, (n // 10, dim))              # noise
    if duplicates:
        x[-duplicates:] = x[n // 2: n // 2 + duplicates]              # exemplars at distance 0
    return x


@pytest.mark.parametrize("n, dim, centres, mcs, dup", [(900, 5, 12, 8, 0), (1500, 12, 30, 5, 40), (400, 3, 2, 15, 0)])
def test_memberships_are_hdbscans_own_to_the_bit(n, dim, centres, mcs, dup):
    x = blobs(n, dim, centres, seed=n, duplicates=dup)
    model = hdbscan.HDBSCAN(min_cluster_size=mcs, prediction_data=True).fit(x)
    assert model.labels_.max() >= 1 and (model.labels_ < 0).any()     # several clusters and noise
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = hdbscan.all_points_membership_vectors(model)
    got = all_points_membership_vectors(model)
    assert got.shape == expected.shape
    assert np.array_equal(got, expected)


@pytest.mark.parametrize("k", [1, 7, 299])
def test_exact_neighbours_are_brute_forces(k):
    rng = np.random.default_rng(k)
    z = rng.normal(size=(300, 6))
    z /= np.linalg.norm(z, axis=1, keepdims=True)
    sim = z @ z.T
    np.fill_diagonal(sim, -np.inf)
    order = np.argsort(-sim, axis=1, kind="stable")[:, :k]
    idx, cos = exact_neighbours(z, k)
    assert np.array_equal(idx, order)
    assert np.allclose(cos, np.take_along_axis(sim, order, axis=1))


def test_given_neighbours_give_the_graph_the_search_gives():
    rng = np.random.default_rng(3)
    emb = rng.normal(size=(200, 10))
    memb = rng.dirichlet(np.ones(6), size=200)
    searched = knn_coherence_graph(emb, memb, k=9)
    z = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    given = knn_coherence_graph(emb, memb, k=9, neighbours=exact_neighbours(z, 12)[0])
    assert given.critical == searched.critical and given.candidate_edges == searched.candidate_edges
    assert (given.graph != searched.graph).nnz == 0


def test_a_large_collections_seeds_share_one_search_and_fit_in_workers_as_in_this_process(monkeypatch):
    n = 160
    x = blobs(n, 16, 6, seed=1).astype(np.float32)
    docs = pd.DataFrame({"doc": np.arange(n), "title": [f"t{i}" for i in range(n)],
                         "date": pd.Timestamp("2020-01-01") + pd.to_timedelta(np.arange(n) % 300, unit="D"),
                         "text": ["x"] * n})
    col = DocumentCollection("own", docs, x, "test")
    knobs = {"n_neighbors": 12, "min_cluster_size": 5, "knn_k": 10}
    searches = []
    real = build.neighbour_lists
    monkeypatch.setattr(build, "neighbour_lists", lambda *a, **k: searches.append(a[1]) or real(*a, **k))
    monkeypatch.setattr(build, "UMAP_APPROXIMATE_FROM", 100)            # this collection counts as large
    from judgelab.narrative.landscape import knn_graph
    monkeypatch.setattr(knn_graph, "nearest_neighbours", lambda *a, **k: searches.append("per graph"))
    built = build.build_collection_landscapes(col, knobs, [43], ["e", 2], keep=1, route="sparse", map_seed=42)
    assert searches == [12]                     # once, for UMAP's 12 and the graph's 10; no graph searched again
    # one seed and the map: two jobs, one per worker; each as this process fits it with those
    # neighbours (a worker fitting without them searches itself and lands elsewhere: red)
    nb = real(x / np.linalg.norm(x, axis=1, keepdims=True), 12)
    here = build.fit_landscape(x, n_neighbors=12, min_cluster_size=5, seed=43, neighbours=nb)
    got = built.path_runs[43].landscape
    assert np.array_equal(got.reduced, here.reduced) and np.array_equal(got.memberships, here.memberships)
    assert np.array_equal(built.umap2d, build.project_2d(x, 12, 42, neighbours=nb))
    assert set(built.sensitivity["seed"]) == {43} and len(built.sensitivity) == 2


def test_embedding_shows_its_progress_in_a_pipeline_notebooks_log(monkeypatch, tmp_path, capsys):
    from judgelab.embeddings import CachedBackend, EmbeddingCache
    from judgelab.provenance import ENV_NOTEBOOK

    class Counting(CachedBackend):
        name, batch_size = "counting", 4

        def _embed_batch(self, texts):
            return np.ones((len(texts), 3))

    monkeypatch.setenv(ENV_NOTEBOOK, "07_coherence_graph")
    backend = Counting(EmbeddingCache(tmp_path / "e.sqlite"))
    backend.embed([f"text {i}" for i in range(3)])                     # one batch: no bar
    assert "[progress]" not in capsys.readouterr().err
    backend.embed([f"text {i}" for i in range(11)])
    err = capsys.readouterr().err
    assert "[progress] embedding (counting): 11 of 11 done (3 cached, 0 failed)" in err
