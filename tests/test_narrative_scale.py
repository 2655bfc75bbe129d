"""The landscape at scale: the block-wise sparse graph gives the same coherence, critical
coherence, graph and widest paths as the dense implementation, on the real news collection and on
a synthetic 5,000-document set.

References that are not the code under test: theta per pair through scipy's ``jensenshannon``
(:func:`coherence.coherence`); the critical value checked by its definition (the largest threshold
at which the graph is connected: connected at tau, disconnected above it, scipy's
``connected_components``) and by scipy's MST; edges and paths from the dense matrix
(:func:`graph.sparse_edges`, :func:`widest.widest_path`) and networkx (``widest_reference.widest_path_graph``).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from judgelab.narrative.landscape.coherence import coherence, coherence_matrix, coherence_row_blocks
from judgelab.narrative.landscape.collections import NEWS_CSV, NEWS_DIR, NEWS_EMBEDDINGS, CollectionError, load_news, locate
from judgelab.narrative.landscape.graph import coherence_digraph, critical_coherence_scipy, sparse_edges
from judgelab.narrative.landscape.sparse_graph import build_sparse_graph, sparse_degree
from judgelab.narrative.paths.endpoints import candidate_pools, sample_endpoints
from judgelab.narrative.paths.endpoints import sparse_degree as dense_degree
from judgelab.narrative.paths.widest import widest_path, widest_path_sparse
from widest_reference import widest_path_graph


def synthetic(n: int, dim: int = 32, n_topics: int = 6, seed: int = 0):
    """Embeddings around topic centres, memberships peaked on the topic, integer dates (days)."""
    rng = np.random.default_rng(seed)
    topic = rng.integers(0, n_topics, size=n)
    emb = rng.standard_normal((n_topics, dim))[topic] + 1.5 * rng.standard_normal((n, dim))
    alpha = np.full((n, n_topics), 0.05)
    alpha[np.arange(n), topic] = 5.0
    memb = rng.gamma(alpha)
    return emb.astype(np.float32), memb / memb.sum(axis=1, keepdims=True), np.sort(rng.integers(0, 3000, size=n))


def dense_graph(c: np.ndarray, tau: float, dates=None) -> sparse.csr_matrix:
    """The dense implementation's sparse graph (:func:`graph.sparse_edges`) as a CSR matrix."""
    u, v, w = sparse_edges(c, tau, dates)
    g = sparse.csr_matrix((w.astype(np.float32), (u, v)), shape=c.shape)
    g.sort_indices()
    return g


def is_critical(c: np.ndarray, tau: float) -> bool:
    """The definition: the graph of edges >= tau is connected and the graph of edges > tau is not."""
    at = dense_graph(c, tau)
    above = keep_at_least(at, np.nextafter(np.float32(tau), np.float32(2)))
    return (connected_components(at, directed=False)[0] == 1
            and connected_components(above, directed=False)[0] > 1)


def keep_at_least(g: sparse.csr_matrix, lo) -> sparse.csr_matrix:
    out = g.copy()
    out.data[out.data < lo] = 0
    out.eliminate_zeros()
    return out


def assert_same_graph(got: sparse.csr_matrix, expected: sparse.csr_matrix) -> None:
    for name in ("indptr", "indices", "data"):
        assert np.array_equal(getattr(got, name), getattr(expected, name)), name


def same_paths(c, g, pairs, tau, dates) -> None:
    for s, t in pairs:
        dense = widest_path(c, s, t, threshold=tau, dates=dates)
        got = widest_path_sparse(g, s, t, dates)
        assert got[0] == dense[0], (s, t)
        assert got[1] == dense[1] or (math.isnan(got[1]) and math.isnan(dense[1]))


# ----------------------------------------------------------------- synthetic 5,000 documents

@pytest.fixture(scope="module")
def synth5000():
    emb, memb, dates = synthetic(5000)
    # small row blocks: 13 blocks, so the forest merges across blocks are exercised
    kw = {"compute_dtype": np.float32, "row_block_elements": 2_000_000}
    c = coherence_matrix(emb, memb, **kw)
    g = build_sparse_graph(emb, memb, dates=dates, **kw)
    return emb, memb, dates, c, g, kw


def test_synthetic_5000_critical_and_graph_match_the_dense_matrix(synth5000):
    emb, memb, dates, c, g, kw = synth5000
    assert is_critical(c, g.critical)
    assert_same_graph(g.graph, dense_graph(c, g.critical, dates))
    assert g.pairs_at_critical == int((np.triu(c, 1) >= g.critical).sum())
    assert np.array_equal(sparse_degree(g), dense_degree(c, g.critical))


def test_synthetic_5000_widest_paths_match_the_dense_search(synth5000):
    emb, memb, dates, c, g, kw = synth5000
    rng = np.random.default_rng(3)
    pairs = [tuple(sorted(rng.choice(5000, 2, replace=False), key=lambda x: (dates[x], x))) for _ in range(40)]
    # and pairs a few weeks apart, which mostly have a path
    starts = rng.choice(4800, 40, replace=False)
    pairs += [(int(s), int(s) + int(rng.integers(20, 200))) for s in starts]
    same_paths(c, g.graph, pairs, g.critical, dates)
    found = [p for p in pairs if widest_path_sparse(g.graph, *p, dates)[0] is not None]
    assert len(found) >= 10                         # the comparison covers real paths


def test_blocks_are_the_dense_matrix_and_the_per_pair_formula():
    emb, memb, _ = synthetic(300, n_topics=5, seed=1)
    c = coherence_matrix(emb, memb, row_block_elements=20_000)
    rebuilt = np.zeros_like(c)
    for i0, i1, block in coherence_row_blocks(emb, memb, row_block_elements=20_000):
        rebuilt[i0:i1, i0:] = block
    rebuilt = np.triu(rebuilt, 1)
    assert np.array_equal(rebuilt + rebuilt.T, c)
    rng = np.random.default_rng(0)
    for u, v in rng.integers(0, 300, size=(30, 2)):
        if u != v:
            assert c[u, v] == pytest.approx(coherence(emb[u], emb[v], memb[u], memb[v]), abs=1e-6)


# ----------------------------------------------------------------- news (the real collection)

@pytest.fixture(scope="module")
def news():
    for relative in (NEWS_DIR / NEWS_CSV, NEWS_DIR / NEWS_EMBEDDINGS):
        try:
            locate(relative)
        except CollectionError as err:
            pytest.skip(f"news collection not available (set DATA_MIRROR): {err}")
    from judgelab.narrative.landscape.projection import fit_landscape
    col = load_news()
    land = fit_landscape(col.embeddings, n_neighbors=32, min_cluster_size=8, seed=42)   # notebook 07's default
    return col, land


@pytest.mark.parametrize("base", [math.e, 2.0])
def test_news_critical_graph_and_paths_match_the_dense_implementation(news, base):
    col, land = news
    dates = np.asarray(col.dates)
    c = coherence_matrix(col.embeddings, land.memberships, base)
    g = build_sparse_graph(col.embeddings, land.memberships, base, dates)
    assert g.critical == critical_coherence_scipy(c)
    assert is_critical(c, g.critical)
    assert_same_graph(g.graph, dense_graph(c, g.critical, dates))
    pools = candidate_pools(land.labels, dates, sparse_degree(g), col.embeddings)
    pairs = sample_endpoints(pools, 30, lambda s, t: widest_path(c, s, t, g.critical, dates)[0], seed=42)
    assert len(pairs) == 30
    endpoints = list(zip(pairs["source"], pairs["target"]))
    same_paths(c, g.graph, endpoints, g.critical, dates)
    nxg = coherence_digraph(c, g.critical, dates)
    for s, t in endpoints[:5]:
        assert widest_path_graph(nxg, s, t)[0] == widest_path_sparse(g.graph, s, t, dates)[0]


def test_news_top_k_keeps_each_documents_strongest_forward_edges(news):
    col, land = news
    dates = np.asarray(col.dates)
    exact = build_sparse_graph(col.embeddings, land.memberships, dates=dates)
    bounded = build_sparse_graph(col.embeddings, land.memberships, dates=dates, top_k=7)
    assert bounded.critical == exact.critical                  # the bound never moves tau
    full, kept = exact.graph, bounded.graph
    for u in range(exact.n):
        lo, hi = full.indptr[u], full.indptr[u + 1]
        order = np.lexsort((full.indices[lo:hi], -full.data[lo:hi]))[:7]   # strongest, then lower index
        assert sorted(kept.indices[kept.indptr[u]:kept.indptr[u + 1]].tolist()) == sorted(full.indices[lo:hi][order].tolist())
    c = coherence_matrix(col.embeddings, land.memberships)
    rng = np.random.default_rng(0)
    for s, t in rng.integers(0, exact.n, size=(20, 2)):
        s, t = sorted((int(s), int(t)), key=lambda x: (dates[x], x))
        if s == t:
            continue
        path, cap = widest_path_sparse(kept, s, t, dates)
        if path is not None:                        # a subgraph: valid path, never wider
            assert all(c[a, b] >= exact.critical and dates[a] <= dates[b] for a, b in zip(path, path[1:]))
            assert cap <= widest_path_sparse(full, s, t, dates)[1]
    big = build_sparse_graph(col.embeddings, land.memberships, dates=dates, top_k=exact.n)
    assert_same_graph(big.graph, full)


def test_floor_keeps_only_edges_above_it():
    emb, memb, dates = synthetic(400, seed=2)
    exact = build_sparse_graph(emb, memb, dates=dates)
    floor = float(np.quantile(exact.graph.data, 0.5))
    bounded = build_sparse_graph(emb, memb, dates=dates, floor=floor)
    assert bounded.critical == exact.critical
    assert_same_graph(bounded.graph, keep_at_least(exact.graph, np.float32(floor)))


def test_without_dates_the_graph_is_symmetric_and_matches_the_dense_one():
    emb, memb, _ = synthetic(400, seed=4)
    c = coherence_matrix(emb, memb)
    g = build_sparse_graph(emb, memb)
    assert g.critical == critical_coherence_scipy(c)
    assert_same_graph(g.graph, dense_graph(c, g.critical))
    assert (g.graph != g.graph.T).nnz == 0
    assert g.n_edges == 2 * g.pairs_at_critical


def test_bad_input_is_named():
    emb, memb, dates = synthetic(50, seed=5)
    with pytest.raises(ValueError, match="top_k"):
        build_sparse_graph(emb, memb, top_k=0)
    with pytest.raises(ValueError, match="49 dates but 50 documents"):
        build_sparse_graph(emb, memb, dates=dates[:-1])
    with pytest.raises(ValueError, match="at least 2"):
        build_sparse_graph(emb[:1], memb[:1])
    g = build_sparse_graph(emb, memb, dates=dates)
    with pytest.raises(ValueError, match="same document"):
        widest_path_sparse(g.graph, 3, 3)
    with pytest.raises(IndexError):
        widest_path_sparse(g.graph, 0, 50)
    late, early = int(np.argmax(dates)), int(np.argmin(dates))
    assert widest_path_sparse(g.graph, late, early, dates)[0] is None
    with pytest.raises(ValueError, match="exact graph"):
        sparse_degree(build_sparse_graph(emb, memb, dates=dates, top_k=3))
