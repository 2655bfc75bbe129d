"""Reference oracles for the widest-path tests (not the code under test): the modified Dijkstra on
a networkx DiGraph with a heap (the original's formulation, same tie-breaking as
:func:`judgelab.narrative.paths.widest.widest_path`) and a path validity check."""
from __future__ import annotations

import heapq
import math

import networkx as nx
import numpy as np


def widest_path_graph(g: nx.DiGraph, s, t, weight: str = "weight") -> tuple[list | None, float]:
    """The same algorithm on a networkx DiGraph with a heap (the original's formulation)."""
    if s == t:
        raise ValueError(f"source and target are the same node ({s})")
    best = {s: math.inf}
    parent = {s: None}
    done = set()
    heap = [(-math.inf, s)]
    while heap:
        neg, u = heapq.heappop(heap)
        if u in done or -neg < best[u]:
            continue                     # stale entry
        if u == t:
            path = [t]
            while parent[path[-1]] is not None:
                path.append(parent[path[-1]])
            return path[::-1], float(best[t])
        done.add(u)
        for v in sorted(g.successors(u)):
            if v in done:
                continue
            cap = min(best[u], g[u][v][weight])
            if cap > best.get(v, -math.inf):
                best[v] = cap
                parent[v] = u
                heapq.heappush(heap, (-cap, v))
    return None, math.nan


def path_is_valid(path: list[int], c: np.ndarray, threshold: float = -np.inf,
                  dates: np.ndarray | None = None) -> bool:
    """Every step is an edge >= threshold (and respects time, if dates are given); no repeats."""
    if len(set(path)) != len(path):
        return False
    for u, v in zip(path[:-1], path[1:]):
        if c[u, v] < threshold or (dates is not None and dates[u] > dates[v]):
            return False
    return True
