"""Stratified endpoint sampling (paper 3.2).

Six strata, in the paper's proportions (:data:`STRATA`): same topic with short or long temporal
distance (lowest / highest quartile of same-topic pairs; 20% each), different topics close or far
in time (quartiles of cross-topic pairs; 20% each), a hub (sparse-graph degree in the top decile)
with a peripheral document (bottom decile; 10%), and the 5% of pairs farthest apart in angle in
the embedding space (10%). The paper names the strata but not their cut-offs; those are ours
(parameters of :func:`candidate_pools`). Topics are the landscape's hard labels.

Every pair is oriented chronologically (source = earlier; same day: lower index). Candidates are
drawn uniformly without replacement from each pool (seeded); a pair is rejected if the sparse
graph has no path between its endpoints or it was already taken. Quotas are rounded by largest
remainder; a stratum whose pool runs out is recorded as a shortfall (``DataFrame.attrs``), never
filled from another stratum.
"""
from __future__ import annotations

import warnings
from typing import Callable

import numpy as np
import pandas as pd

STRATA: dict[str, float] = {
    "within_short": 0.2, "within_long": 0.2, "cross_close": 0.2, "cross_far": 0.2,
    "hub_peripheral": 0.1, "spatial_extremes": 0.1,
}


def stratum_quotas(n_pairs: int, proportions: dict[str, float] = STRATA) -> dict[str, int]:
    """Pairs per stratum: floor of n * p, remaining pairs to the largest remainders (ties: order)."""
    total = sum(proportions.values())
    raw = {k: n_pairs * v / total for k, v in proportions.items()}
    quotas = {k: int(np.floor(v)) for k, v in raw.items()}
    left = n_pairs - sum(quotas.values())
    for k in sorted(raw, key=lambda k: (-(raw[k] - quotas[k]), list(raw).index(k)))[:left]:
        quotas[k] += 1
    return quotas


def orient(i: np.ndarray, j: np.ndarray, dates: np.ndarray):
    """(source, target) with source dated first (same date: lower index first)."""
    swap = (dates[i] > dates[j]) | ((dates[i] == dates[j]) & (i > j))
    return np.where(swap, j, i), np.where(swap, i, j)


def sparse_degree(c: np.ndarray, critical: float) -> np.ndarray:
    """Undirected degree of each document in the thresholded graph (theta >= critical)."""
    deg = (np.asarray(c) >= critical).sum(axis=1)
    return deg - (np.diag(c) >= critical)


def candidate_pools(labels: np.ndarray, dates: np.ndarray, degree: np.ndarray,
                    embeddings: np.ndarray, *, time_quantile: float = 0.25,
                    degree_quantile: float = 0.10, spatial_quantile: float = 0.05,
                    pairs: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, tuple]:
    """For each stratum, arrays (source, target) of every eligible pair, chronologically oriented.
    ``pairs``: ``(i, j)`` with i < j, the pairs to choose from (default every pair; the sparse
    route of a large collection passes a uniform sample, so the cut-offs are the sample's quantiles)."""
    labels, dates, degree = map(np.asarray, (labels, dates, degree))
    n = len(labels)
    i, j = np.triu_indices(n, k=1) if pairs is None else (np.asarray(pairs[0]), np.asarray(pairs[1]))
    src, tgt = orient(i, j, dates)
    dt = np.abs(dates[i] - dates[j])
    same = labels[i] == labels[j]
    pools: dict[str, tuple] = {}
    for name, mask in (("within", same), ("cross", ~same)):
        if not mask.any():
            pools[f"{name}_{'short' if name == 'within' else 'close'}"] = (src[:0], tgt[:0])
            pools[f"{name}_{'long' if name == 'within' else 'far'}"] = (src[:0], tgt[:0])
            continue
        lo, hi = np.quantile(dt[mask], [time_quantile, 1 - time_quantile])
        near, far = mask & (dt <= lo), mask & (dt >= hi)
        pools["within_short" if name == "within" else "cross_close"] = (src[near], tgt[near])
        pools["within_long" if name == "within" else "cross_far"] = (src[far], tgt[far])
    hub_cut, per_cut = np.quantile(degree, [1 - degree_quantile, degree_quantile])
    hub, per = degree >= hub_cut, degree <= per_cut
    hp = (hub[i] & per[j]) | (per[i] & hub[j])
    pools["hub_peripheral"] = (src[hp], tgt[hp])
    z = np.asarray(embeddings, dtype=np.float32)
    z = z / np.linalg.norm(z, axis=1, keepdims=True)
    cos = np.empty(len(i), dtype=np.float32)
    if pairs is not None:                           # a sample: cos pair by pair, in chunks
        for start in range(0, len(i), 100_000):
            part = slice(start, start + 100_000)
            cos[part] = np.einsum("ij,ij->i", z[i[part]], z[j[part]])
    else:
        for start in range(0, n, 512):              # blockwise cos of the upper triangle
            rows = slice(start, min(n, start + 512))
            block = z[rows] @ z.T
            sel = (i >= rows.start) & (i < rows.stop)
            cos[sel] = block[i[sel] - rows.start, j[sel]]
    ang = np.arccos(np.clip(cos, -1, 1)) / np.pi
    far_cut = np.quantile(ang, 1 - spatial_quantile)
    ext = ang >= far_cut
    pools["spatial_extremes"] = (src[ext], tgt[ext])
    return {k: pools[k] for k in STRATA}


def sample_endpoints(pools: dict[str, tuple], n_pairs: int,
                     path_fn: Callable[[int, int], list | None], seed: int,
                     proportions: dict[str, float] = STRATA, max_tries_per_pair: int = 200) -> pd.DataFrame:
    """Draw pairs stratum by stratum; keep those with a path (``path_fn`` returns it or None).
    ``attrs`` hold quotas, rejections and shortfalls per stratum."""
    rng = np.random.default_rng(int(seed))
    quotas = stratum_quotas(n_pairs, proportions)
    taken: set[tuple[int, int]] = set()
    rows, rejected, shortfall = [], {}, {}
    for stratum, quota in quotas.items():
        src, tgt = pools[stratum]
        order = rng.permutation(len(src))
        got, rej = 0, 0
        for k in order:
            if got == quota or rej > max_tries_per_pair * max(quota, 1):
                break
            s, t = int(src[k]), int(tgt[k])
            if (s, t) in taken:
                continue
            path = path_fn(s, t)
            if path is None:
                rej += 1
                continue
            taken.add((s, t))
            rows.append({"stratum": stratum, "source": s, "target": t, "path": list(path)})
            got += 1
        rejected[stratum] = rej
        if got < quota:
            shortfall[stratum] = quota - got
            warnings.warn(f"endpoint stratum {stratum!r}: {got} of {quota} pairs "
                          f"(pool {len(src)}, {rej} without a path)")
    out = pd.DataFrame(rows, columns=["stratum", "source", "target", "path"])
    out.insert(0, "pair_id", np.arange(len(out)))
    out.attrs.update({"quotas": quotas, "rejected": rejected, "shortfall": shortfall})
    return out
