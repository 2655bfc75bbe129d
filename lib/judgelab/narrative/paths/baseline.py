"""The random chronological baseline (paper 3.1).

For endpoints (s, t) with date_s <= date_t the candidates are the documents dated between them,
s and t excluded: strictly (date_s < date < date_t, the main rule: the paper samples "from those
that occur temporally between the endpoints") or inclusively (date_s <= date <= date_t, the
labelled sensitivity row, which gives the random path the candidate set of the max-capacity
graph's same-day edges; ``baseline_dates`` in :mod:`judgelab.narrative.settings`). With no
candidate the random path is the direct step [s, t].

The length L is drawn from Normal(mean, sd) of the max-capacity path lengths, rounded and clipped
to [2, 2 + #candidates]; L - 2 distinct intermediates are drawn uniformly and put in
chronological order (ties by document index). The generator is seeded per pair
(``numpy.random.default_rng([seed, pair_id])``) so any pair's baseline can be rebuilt alone.
"""
from __future__ import annotations

import numpy as np


def baseline_candidates(s: int, t: int, dates: np.ndarray, strict: bool = True) -> np.ndarray:
    """Documents dated between s and t (strictly, or inclusively), excluding s and t, in index order."""
    dates = np.asarray(dates)
    if dates[s] > dates[t]:
        raise ValueError(f"source {s} is dated after target {t}; orient pairs chronologically")
    if strict:
        inside = (dates > dates[s]) & (dates < dates[t])
    else:
        inside = (dates >= dates[s]) & (dates <= dates[t])
    inside[[s, t]] = False
    return np.flatnonzero(inside)


def random_chronological_path(s: int, t: int, dates: np.ndarray, length_mean: float,
                              length_sd: float, rng: np.random.Generator, strict: bool = True) -> list[int]:
    """One random chronological path from s to t (see module doc)."""
    cand = baseline_candidates(s, t, dates, strict)
    length = int(round(rng.normal(length_mean, max(0.0, float(length_sd)))))
    length = int(np.clip(length, 2, 2 + len(cand)))
    chosen = rng.choice(cand, size=length - 2, replace=False) if length > 2 else np.empty(0, int)
    chosen = chosen[np.lexsort((chosen, np.asarray(dates)[chosen]))]
    return [int(s), *map(int, chosen), int(t)]


def random_baselines(pairs: list[tuple[int, int]], dates: np.ndarray, lengths: np.ndarray,
                     seed: int, pair_ids: list[int] | None = None, strict: bool = True) -> list[list[int]]:
    """Baselines for every pair, length ~ Normal(mean, sd) of ``lengths`` (the max-capacity ones)."""
    lengths = np.asarray(lengths, dtype=float)
    mean, sd = float(lengths.mean()), float(lengths.std(ddof=1)) if len(lengths) > 1 else 0.0
    ids = pair_ids if pair_ids is not None else list(range(len(pairs)))
    return [random_chronological_path(s, t, dates, mean, sd, np.random.default_rng([int(seed), int(i)]), strict)
            for (s, t), i in zip(pairs, ids)]
