"""Mathematical quality of a narrative path (paper 5.2, 5.8.4; Narrative Trails ``Storyline``).

For a path d_1 .. d_L with edge coherences theta_i = theta(d_i, d_{i+1}), read from the *dense*
coherence matrix (a random path's steps need not be sparse-graph edges): ``length`` = L
(endpoints included), ``min_coherence`` (the capacity), ``mean_coherence``, ``reliability`` (the
geometric mean), ``temporal_span_days`` = date(d_L) - date(d_1), ``coherence_var`` (population
variance) and ``weak_link_ratio``, the share of theta_i below a reference median (paper 5.8.4:
"edges below median coherence"; notebook 08 pools every path edge of the collection).
"""
from __future__ import annotations

import math

import numpy as np


def edge_coherences(path: list[int], c: np.ndarray) -> np.ndarray:
    """theta of each consecutive pair along the path."""
    if len(path) < 2:
        raise ValueError(f"a path needs at least 2 documents, got {path}")
    p = np.asarray(path, dtype=int)
    return np.asarray(c[p[:-1], p[1:]], dtype=np.float64)


def path_metrics(path: list[int], c: np.ndarray, dates: np.ndarray | None = None,
                 weak_reference: float | None = None) -> dict:
    """The metrics above for one path (``weak_link_ratio`` NaN without a reference)."""
    e = edge_coherences(path, c)
    return {
        "length": len(path),
        "min_coherence": float(e.min()),
        "mean_coherence": float(e.mean()),
        "reliability": float(np.exp(np.log(np.maximum(e, 1e-300)).mean())),
        "temporal_span_days": (float(dates[path[-1]] - dates[path[0]]) if dates is not None else math.nan),
        "coherence_var": float(e.var()),
        "weak_link_ratio": (float((e < weak_reference).mean()) if weak_reference is not None else math.nan),
    }


def weak_link_ratios(paths: list[list[int]], c: np.ndarray, reference: float) -> list[float]:
    """Share of each path's edges with theta below ``reference``."""
    return [float((edge_coherences(p, c) < reference).mean()) for p in paths]


def pooled_edge_median(paths: list[list[int]], c: np.ndarray) -> float:
    """Median theta over all edges of all given paths (the weak-link reference)."""
    return float(np.median(np.concatenate([edge_coherences(p, c) for p in paths])))
