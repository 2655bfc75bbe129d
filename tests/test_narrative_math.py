"""Known-answer tests of the narrative mathematics: coherence, critical coherence, widest paths."""
from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon

from judgelab.narrative.landscape.coherence import (angular_similarity, coherence, coherence_matrix,
                                          js_distance_block, topic_similarity)
from judgelab.narrative.landscape.graph import (coherence_digraph, critical_coherence, critical_coherence_prim,
                                      critical_coherence_scipy, temporal_mask)
from judgelab.narrative.paths.widest import widest_path
from widest_reference import path_is_valid, widest_path_graph


# --- coherence on hand-computed pairs -------------------------------------------------------

def test_angular_similarity_hand_computed():
    assert angular_similarity([1, 0], [1, 0]) == pytest.approx(1.0)
    assert angular_similarity([1, 0], [0, 1]) == pytest.approx(0.5)        # 90 degrees
    assert angular_similarity([1, 0], [-1, 0]) == pytest.approx(0.0)       # 180 degrees
    assert angular_similarity([1, 0], [1, 1]) == pytest.approx(0.75)       # 45 degrees


def test_topic_similarity_hand_computed():
    # disjoint distributions: JSD = ln 2 nats = 1 bit; distance = sqrt
    p, q = [1.0, 0.0], [0.0, 1.0]
    assert topic_similarity(p, q, base=2) == pytest.approx(0.0)
    assert topic_similarity(p, q, base=math.e) == pytest.approx(1 - math.sqrt(math.log(2)))  # 0.1674
    # p = (1, 0), q = (1/2, 1/2): m = (3/4, 1/4)
    # KL(p||m) = ln(4/3); KL(q||m) = 1/2 ln(2/3) + 1/2 ln 2; JSD = mean of the two
    jsd = 0.5 * (math.log(4 / 3) + 0.5 * math.log(2 / 3) + 0.5 * math.log(2))
    assert topic_similarity([1, 0], [0.5, 0.5], base=math.e) == pytest.approx(1 - math.sqrt(jsd))
    assert topic_similarity([1, 0], [0.5, 0.5], base=2) == pytest.approx(1 - math.sqrt(jsd / math.log(2)))


def test_coherence_hand_computed_pairs():
    # orthogonal embeddings (S = 1/2) and identical topics (T = 1): theta = sqrt(1/2)
    assert coherence([1, 0], [0, 1], [0.3, 0.7], [0.3, 0.7]) == pytest.approx(math.sqrt(0.5))
    # 45 degrees (S = 3/4) and disjoint topics in base 2 (T = 0): theta = 0
    assert coherence([1, 0], [1, 1], [1, 0], [0, 1], base=2) == pytest.approx(0.0)
    # 45 degrees, disjoint topics, natural log: theta = sqrt(0.75 * (1 - sqrt(ln 2)))
    assert coherence([1, 0], [1, 1], [1, 0], [0, 1]) == pytest.approx(
        math.sqrt(0.75 * (1 - math.sqrt(math.log(2)))))


@pytest.mark.parametrize("base", [2.0, math.e])
def test_js_block_matches_scipy(base):
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(6) * 0.3, size=7)
    block = js_distance_block(p[:3], p, base)
    for a in range(3):
        for b in range(7):
            assert block[a, b] == pytest.approx(jensenshannon(p[a], p[b], base=base), abs=1e-6)


@pytest.mark.parametrize("base", [2.0, math.e])
def test_coherence_matrix_matches_pairwise(base):
    rng = np.random.default_rng(1)
    z = rng.normal(size=(9, 5))
    p = rng.dirichlet(np.ones(4), size=9)
    c = coherence_matrix(z, p, base, block_elements=20)       # forces several blocks
    assert c.dtype == np.float32 and np.allclose(c, c.T, atol=1e-6)
    assert np.all(np.diag(c) == 0)
    for u, v in itertools.combinations(range(9), 2):
        assert c[u, v] == pytest.approx(coherence(z[u], z[v], p[u], p[v], base), abs=2e-6)


def test_base2_lowers_cross_topic_coherence():
    rng = np.random.default_rng(2)
    z = rng.normal(size=(12, 8))
    p = rng.dirichlet(np.ones(3), size=12)
    ce, c2 = coherence_matrix(z, p, math.e), coherence_matrix(z, p, 2.0)
    off = ~np.eye(12, dtype=bool)
    assert np.all(c2[off] <= ce[off] + 1e-7)


# --- critical coherence == brute-force largest connecting threshold ----------------------------

def brute_force_critical(c: np.ndarray) -> float:
    n = c.shape[0]
    for tau in sorted({c[u, v] for u in range(n) for v in range(u + 1, n)}, reverse=True):
        g = nx.Graph()
        g.add_nodes_from(range(n))
        g.add_edges_from((u, v) for u in range(n) for v in range(u + 1, n) if c[u, v] >= tau)
        if nx.is_connected(g):
            return float(tau)
    raise AssertionError("never connected")


def random_symmetric(n, rng, integer=False):
    a = rng.integers(1, 6, size=(n, n)).astype(np.float32) / 6 if integer else rng.random((n, n)).astype(np.float32)
    c = np.triu(a, 1)
    c = c + c.T
    np.fill_diagonal(c, 0)
    return c


@pytest.mark.parametrize("seed", range(12))
def test_critical_coherence_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    c = random_symmetric(int(rng.integers(2, 9)), rng, integer=seed % 3 == 0)
    expected = brute_force_critical(c)
    assert critical_coherence_scipy(c) == pytest.approx(expected, abs=0)
    assert critical_coherence_prim(c) == pytest.approx(expected, abs=0)
    assert critical_coherence(c) == pytest.approx(expected, abs=0)


def test_critical_coherence_hand_example():
    # a chain 0-1 (0.9), 1-2 (0.6), 2-3 (0.8) and weaker cross links: the chain is the max tree
    c = np.array([[0, .9, .2, .1], [.9, 0, .6, .3], [.2, .6, 0, .8], [.1, .3, .8, 0]], np.float32)
    assert critical_coherence(c) == pytest.approx(0.6)
    assert critical_coherence(c, method="prim") == pytest.approx(0.6)


def test_critical_coherence_rejects_non_square():
    with pytest.raises(ValueError, match="square"):
        critical_coherence(np.zeros((3, 4)))


# --- temporal constraint and sparse DiGraph ------------------------------------------------------

def test_temporal_mask_and_digraph():
    dates = np.array([0, 5, 5, 9])
    m = temporal_mask(dates)
    assert m[0, 1] and not m[1, 0] and m[1, 2] and m[2, 1] and not m.diagonal().any()
    c = np.full((4, 4), 0.7, np.float32)
    np.fill_diagonal(c, 0)
    g = coherence_digraph(c, 0.5, dates)
    assert all(dates[u] <= dates[v] for u, v in g.edges)
    assert g.has_edge(1, 2) and g.has_edge(2, 1) and not g.has_edge(3, 0)
    assert g.number_of_edges() == 7   # 0->1,0->2,0->3,1->2,2->1,1->3,2->3


# --- widest path == exhaustive search -------------------------------------------------------------

def exhaustive_widest(g: nx.DiGraph, s, t):
    best = -math.inf
    for p in nx.all_simple_paths(g, s, t):
        best = max(best, min(g[u][v]["weight"] for u, v in zip(p[:-1], p[1:])))
    return best


@pytest.mark.parametrize("seed", range(25))
def test_widest_path_equals_exhaustive_search(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(3, 8))
    c = random_symmetric(n, rng, integer=seed % 4 == 0)          # integer weights: many ties
    dates = np.sort(rng.integers(0, 4, size=n)) if seed % 2 else None
    threshold = float(np.quantile(c[~np.eye(n, dtype=bool)], 0.3))
    g = coherence_digraph(c, threshold, dates)
    for s, t in itertools.permutations(range(n), 2):
        path, cap = widest_path(c, s, t, threshold, dates)
        gpath, gcap = widest_path_graph(g, s, t)
        if not nx.has_path(g, s, t):
            assert path is None and gpath is None
            continue
        assert cap == pytest.approx(exhaustive_widest(g, s, t), abs=0)
        assert path == gpath and cap == gcap                     # same tie-breaking
        assert path[0] == s and path[-1] == t
        assert path_is_valid(path, c, threshold, dates)
        assert min(c[u, v] for u, v in zip(path[:-1], path[1:])) == pytest.approx(cap, abs=0)


def test_widest_path_respects_time_and_prefers_strong_detour():
    # 0 -> 3 direct is weak (0.3); 0 -> 1 -> 3 is strong (0.8, 0.9); 2 is dated before 0
    c = np.array([[0, .8, .95, .3], [.8, 0, .95, .9], [.95, .95, 0, .99], [.3, .9, .99, 0]], np.float32)
    dates = np.array([1, 2, 0, 3])
    path, cap = widest_path(c, 0, 3, dates=dates)
    assert path == [0, 1, 3] and cap == pytest.approx(0.8)
    path, cap = widest_path(c, 0, 3)                             # without time 2 is allowed
    assert path == [0, 2, 3] and cap == pytest.approx(0.95)
    assert widest_path(c, 3, 0, dates=dates) == (None, pytest.approx(math.nan, nan_ok=True))
