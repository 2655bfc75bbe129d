"""The coherence graph of a large collection from its nearest neighbours (the sparse route).

The exact graph (:mod:`coherence`, :mod:`graph`, :mod:`sparse_graph`) evaluates theta on every
pair of documents: n^2 / 2 JSDs over the topics, 1.25 billion at 50,000 documents, which 2 cores
do not finish in hours. This route evaluates theta (the same formula, :func:`coherence.coherence`
row for row) only on *candidate* edges: each document and its ``k`` nearest neighbours by cosine
of the embeddings (exact brute force up to :data:`EXACT_UP_TO` documents, pynndescent above it:
approximate, seeded). What it changes against the exact graph:

- the critical coherence is the bottleneck of the candidate graph's maximum spanning forest. When
  the candidate graph is connected it is never above the exact one (a subgraph's spanning tree
  cannot have a stronger weakest edge); with ``k = n - 1`` it is the exact value and the graph is
  the exact graph (tested);
- an edge between two documents that are not among each other's ``k`` nearest neighbours is
  missing even when its theta passes the threshold, so a widest path can only be narrower or
  longer than the exact one; paths run on :func:`judgelab.narrative.paths.widest.widest_path_sparse`;
- when the candidate graph is disconnected there is no single critical value: the weakest edge
  of the spanning forest is used, which can be *above* the exact value (on the news collection at
  k = 8: 0.622 against 0.509), and ``components`` says how many parts there are (a pair in two
  parts has no path): raise ``k`` until it is 1.

Memory is O(n k); time is the neighbour search plus n k JSDs.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components, minimum_spanning_tree

from judgelab.embeddings import l2_normalise
from judgelab.narrative.landscape.coherence import _normalise_rows, neg_entropy

EXACT_UP_TO = 100_000  # documents up to which the neighbours are exact (brute force: 50,000 in ~40 s, 100,000 in ~3 min)
BLOCK_ELEMENTS = 25_000_000  # similarities per row block of the brute force (200 MB of float64)
EDGE_ELEMENTS = 20_000_000  # candidate edges x topics per JSD block (memory: about 4 x 8 bytes each)


@dataclass
class KnnCoherenceGraph:
    """The candidate graph's critical coherence and its (temporal) thresholded graph."""

    critical: float              # bottleneck of the candidate graph's maximum spanning forest
    graph: sparse.csr_matrix     # n x n float32, row u = out-edges of u with theta >= critical
    k: int
    components: int              # connected parts of the candidate graph (1: one critical value)
    candidate_edges: int         # undirected pairs theta was evaluated on
    exact_neighbours: bool
    temporal: bool
    timings: dict = field(default_factory=dict)   # seconds: neighbours, coherence, critical, graph

    @property
    def n(self) -> int:
        return int(self.graph.shape[0])

    @property
    def nbytes(self) -> int:
        g = self.graph
        return int(g.data.nbytes + g.indices.nbytes + g.indptr.nbytes)


def exact_neighbours(z: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(n x k indices, n x k cosines) of each row's k most cosine-similar other rows, most similar
    first (ties by index), by brute force in row blocks (``z`` L2-normalised). About 40 s for
    50,000 x 384 on 2 cores: one matrix product, where NN-descent took 6 minutes."""
    n = len(z)
    k = min(int(k), n - 1)
    idx = np.empty((n, k), dtype=np.int64)
    cos = np.empty((n, k), dtype=np.float64)
    step = max(1, BLOCK_ELEMENTS // n)
    for i0 in range(0, n, step):
        sim = z[i0:i0 + step] @ z.T
        rows = np.arange(len(sim))
        sim[rows, i0 + rows] = -np.inf                                        # not itself
        part = np.argpartition(-sim, k - 1, axis=1)[:, :k] if k < n - 1 else np.argsort(-sim, axis=1)[:, :k]
        vals = np.take_along_axis(sim, part, axis=1)
        order = np.lexsort((part, -vals), axis=1)                            # most similar first, then index
        idx[i0:i0 + step] = np.take_along_axis(part, order, axis=1)
        cos[i0:i0 + step] = np.take_along_axis(vals, order, axis=1)
    return idx, cos


def neighbour_lists(z: np.ndarray, k: int, seed: int = 42) -> tuple[np.ndarray, np.ndarray]:
    """(n x k indices, n x k cosines), most similar first: exact up to :data:`EXACT_UP_TO`
    documents, one seeded NN-descent above (:func:`nearest_neighbours`)."""
    if len(z) <= EXACT_UP_TO:
        return exact_neighbours(z, k)
    idx, _ = nearest_neighbours(z, k, seed, exact=False)
    cos = np.einsum("ij,ikj->ik", z, z[idx])
    order = np.argsort(-cos, axis=1, kind="stable")
    return np.take_along_axis(idx, order, axis=1), np.take_along_axis(cos, order, axis=1)


def nearest_neighbours(z: np.ndarray, k: int, seed: int = 42, exact: bool | None = None) -> tuple[np.ndarray, bool]:
    """(n x k indices of each row's k most cosine-similar other rows, exact?). ``z`` L2-normalised."""
    n = len(z)
    k = min(int(k), n - 1)
    exact = n <= EXACT_UP_TO if exact is None else exact
    if exact:
        return exact_neighbours(z, k)[0], True
    from pynndescent import NNDescent

    index = NNDescent(z, metric="cosine", n_neighbors=k + 1, random_state=seed, n_jobs=1, low_memory=True)
    idx, _ = index.neighbor_graph
    rows = [r[r != i][:k] for i, r in enumerate(idx)]          # drop itself (usually first)
    return np.asarray([np.pad(r, (0, k - len(r)), mode="edge") for r in rows], dtype=np.int64), False


def edge_coherence(z: np.ndarray, p: np.ndarray, u: np.ndarray, v: np.ndarray, base: float = math.e) -> np.ndarray:
    """theta(u_i, v_i) for each candidate edge, eq. 1 as :func:`coherence.coherence` (float64)."""
    h = neg_entropy(p)
    out = np.empty(len(u), dtype=np.float64)
    block = max(1, EDGE_ELEMENTS // p.shape[1])
    for a in range(0, len(u), block):
        uu, vv = u[a:a + block], v[a:a + block]
        cos = np.clip(np.einsum("ij,ij->i", z[uu], z[vv], dtype=np.float64), -1.0, 1.0)
        s = 1.0 - np.arccos(cos) / math.pi
        m = 0.5 * (p[uu] + p[vv])
        jsd = np.maximum(0.5 * (h[uu] + h[vv]) - neg_entropy(m), 0.0) / math.log(base)
        t = np.maximum(1.0 - np.sqrt(jsd), 0.0)
        out[a:a + block] = np.sqrt(s * t)
    return out


def pair_coherence(embeddings: np.ndarray, memberships: np.ndarray, u, v, base: float = math.e) -> np.ndarray:
    """theta(u_i, v_i) for any pairs of documents, from the raw embeddings and memberships (eq. 1;
    what the sparse route reads where the dense route reads its matrix)."""
    z = l2_normalise(embeddings)
    p = _normalise_rows(memberships, "memberships")
    return edge_coherence(z, p, np.asarray(u, dtype=np.int64), np.asarray(v, dtype=np.int64), base)


def knn_coherence_graph(embeddings: np.ndarray, memberships: np.ndarray, k: int = 32, base: float = math.e,
                        dates: np.ndarray | None = None, seed: int = 42, exact: bool | None = None,
                        neighbours: np.ndarray | None = None) -> KnnCoherenceGraph:
    """The sparse route (module doc): candidates = each document's ``k`` nearest neighbours, theta
    on them, the critical value of their maximum spanning forest, the graph u -> v for theta >=
    critical (and date_u <= date_v with ``dates``; same day both ways). ``neighbours``: each
    document's exact neighbours already found (:func:`exact_neighbours`' indices, at least ``k``
    columns), shared by every seed and JSD base instead of searched again."""
    clock, t0 = {}, time.perf_counter()
    z = l2_normalise(embeddings)
    p = _normalise_rows(memberships, "memberships")
    n = len(z)
    if p.shape[0] != n:
        raise ValueError(f"{n} embedding rows but {p.shape[0]} membership rows")
    if neighbours is not None:
        if neighbours.shape[0] != n or neighbours.shape[1] < min(k, n - 1):
            raise ValueError(f"neighbours {neighbours.shape} given for {n} documents and k = {k}")
        nbrs, is_exact = neighbours[:, :min(k, n - 1)], n <= EXACT_UP_TO
    else:
        nbrs, is_exact = nearest_neighbours(z, k, seed, exact)
    u = np.repeat(np.arange(n), nbrs.shape[1])
    v = nbrs.ravel()
    lo, hi = np.minimum(u, v), np.maximum(u, v)
    pairs = np.unique(lo * n + hi)                              # undirected, each pair once
    u, v = pairs // n, pairs % n
    clock["neighbours"], t0 = time.perf_counter() - t0, time.perf_counter()
    w = edge_coherence(z, p, u, v, base)
    clock["coherence"], t0 = time.perf_counter() - t0, time.perf_counter()
    cand = sparse.coo_matrix((2.0 - w, (u, v)), shape=(n, n)).tocsr()   # 2 - theta > 0: order reversed
    forest = minimum_spanning_tree(cand)
    parts = int(connected_components(cand, directed=False)[0])
    critical = float(2.0 - forest.data.max()) if forest.nnz else math.nan
    clock["critical"], t0 = time.perf_counter() - t0, time.perf_counter()
    keep = w >= critical
    su, sv, sw = u[keep], v[keep], w[keep].astype(np.float32)
    if dates is None:
        src, dst, ww = np.r_[su, sv], np.r_[sv, su], np.r_[sw, sw]
    else:
        d = np.asarray(dates)
        fwd, back = d[su] <= d[sv], d[sv] <= d[su]
        src, dst, ww = np.r_[su[fwd], sv[back]], np.r_[sv[fwd], su[back]], np.r_[sw[fwd], sw[back]]
    graph = sparse.csr_matrix((ww, (src, dst)), shape=(n, n), dtype=np.float32)
    graph.sort_indices()
    clock["graph"] = time.perf_counter() - t0
    return KnnCoherenceGraph(critical, graph, int(nbrs.shape[1]), parts, int(len(pairs)), is_exact,
                             dates is not None, clock)
