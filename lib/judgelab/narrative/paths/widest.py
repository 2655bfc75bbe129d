"""Maximum-capacity (widest) paths: the Narrative Trails extraction (German et al. 2025; paper 3.1).

A path's capacity is its weakest edge, min over consecutive (u, v) of theta(u, v); the widest path
from s to t maximises it, by the modified Dijkstra of the original code: pop the vertex whose best
capacity from s is largest, relax its out-edges with min(capacity, weight), stop when t is popped.

Bottleneck ties are the rule (every path through the same weakest edge has the same capacity),
so the tie rules are those of the original's heap of ``(-capacity, node)``: among equal
capacities the smallest document index is popped first; a predecessor changes only on a *strict*
improvement; out-edges are relaxed in increasing document index. :func:`widest_path` (dense
matrix) and :func:`widest_path_sparse` (CSR graph) therefore return the original's path (tested,
with the capacity checked by exhaustive search). With ``dates`` the temporal rule (u -> v only if
date_u <= date_v) applies and the search is restricted to documents dated between the endpoints.
"""
from __future__ import annotations

import heapq
import math

import numpy as np


def _reconstruct(parent: np.ndarray, s_local: int, t_local: int, nodes: np.ndarray) -> list[int]:
    path = [t_local]
    while path[-1] != s_local:
        path.append(int(parent[path[-1]]))
    return [int(nodes[i]) for i in reversed(path)]


def _endpoints(n: int, s, t, dates):
    """``(s, t, dates)`` checked for a graph of ``n`` documents: IndexError outside it, ValueError when
    s == t; ``(None, None, None)`` when s is dated after t (no chronological path exists)."""
    s, t = int(s), int(t)
    if not (0 <= s < n and 0 <= t < n):
        raise IndexError(f"endpoints ({s}, {t}) outside 0..{n - 1}")
    if s == t:
        raise ValueError(f"source and target are the same document ({s})")
    if dates is not None:
        dates = np.asarray(dates)
        if dates[s] > dates[t]:
            return None, None, None
    return s, t, dates


def widest_path(c: np.ndarray, s: int, t: int, threshold: float = -np.inf,
                dates: np.ndarray | None = None) -> tuple[list[int] | None, float]:
    """``(path, capacity)`` of the widest s -> t path over edges theta >= ``threshold`` (and the
    temporal rule if ``dates``), ``(None, nan)`` if t is unreachable. Only the rows of visited
    vertices of the dense matrix ``c`` are read, so a memory map works."""
    n = c.shape[0]
    s, t, dates = _endpoints(n, s, t, dates)
    if s is None:
        return None, math.nan
    if dates is not None:
        nodes = np.flatnonzero((dates >= dates[s]) & (dates <= dates[t]))
        local_dates = dates[nodes]
    else:
        nodes = np.arange(n)
        local_dates = None
    m = len(nodes)
    contiguous = nodes[-1] - nodes[0] + 1 == m
    cols = slice(int(nodes[0]), int(nodes[-1]) + 1) if contiguous else nodes
    s_l, t_l = int(np.searchsorted(nodes, s)), int(np.searchsorted(nodes, t))
    best = np.full(m, -np.inf)          # best capacity from s found so far
    key = best.copy()                   # best, or -inf once popped
    visited = np.zeros(m, dtype=bool)
    parent = np.full(m, -1, dtype=np.int64)
    best[s_l] = key[s_l] = np.inf
    while True:
        u = int(np.argmax(key))         # first maximum = smallest index (tie rule 1)
        if key[u] == -np.inf:
            return None, math.nan
        if u == t_l:
            return _reconstruct(parent, s_l, t_l, nodes), float(best[t_l])
        visited[u] = True
        key[u] = -np.inf
        row = np.asarray(c[nodes[u], cols], dtype=np.float64)
        cand = np.minimum(row, best[u])
        ok = (row >= threshold) & ~visited & (cand > best)   # strict improvement (tie rule 2)
        if local_dates is not None:
            ok &= local_dates >= local_dates[u]
        best[ok] = cand[ok]
        key[ok] = cand[ok]
        parent[ok] = u


def widest_path_sparse(g, s: int, t: int, dates: np.ndarray | None = None) -> tuple[list[int] | None, float]:
    """Widest s -> t path on a sparse graph (scipy CSR, row u = out-edges of u with theta), by
    the algorithm and tie rules of :func:`widest_path` with a heap, so the same path and capacity
    (tested). The edges encode the threshold and the temporal rule; ``dates`` only prunes
    documents dated after t. Memory O(n + edges), time O(edges log edges) per path.
    """
    n = g.shape[0]
    s, t, dates = _endpoints(n, s, t, dates)
    if s is None:
        return None, math.nan
    indptr, indices, data = g.indptr, g.indices, g.data
    best = np.full(n, -np.inf)
    done = np.zeros(n, dtype=bool)
    parent = np.full(n, -1, dtype=np.int64)
    best[s] = np.inf
    heap = [(-math.inf, s)]
    while heap:
        neg, u = heapq.heappop(heap)
        if done[u] or -neg < best[u]:
            continue                     # stale entry
        if u == t:
            return _reconstruct(parent, s, t, np.arange(n)), float(best[t])
        done[u] = True
        nb = indices[indptr[u]:indptr[u + 1]]
        cand = np.minimum(data[indptr[u]:indptr[u + 1]].astype(np.float64), best[u])
        ok = ~done[nb] & (cand > best[nb])             # strict improvement (tie rule 2)
        if dates is not None:
            ok &= dates[nb] <= dates[t]
        nb, cand = nb[ok], cand[ok]
        best[nb] = cand
        parent[nb] = u
        for item in zip((-cand).tolist(), nb.tolist()):
            heapq.heappush(heap, item)
    return None, math.nan

