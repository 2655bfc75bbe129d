"""Pearson correlations within groups of the follow-up table (paper 002, sections 5.8.3–5.8.4, 5.9).

Pearson r with its two-sided p (:func:`judgelab.stats.correlation.correlation`), NaN when fewer
than 3 complete pairs remain or either side is constant (the rule of :mod:`judgelab.stats.rules`).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from judgelab.stats.correlation import correlation


def _pearson(x: np.ndarray, y: np.ndarray) -> tuple[float, float, int]:
    """Pearson r, two-sided p and the number of complete pairs (:func:`judgelab.stats.correlation`)."""
    row = correlation(x, y, method="pearson").iloc[0]
    return float(row["r"]), float(row["p"]), int(row["n"])


def correlations(long: pd.DataFrame, predictors: Sequence[str], targets: Sequence[str] = ("score_mean",),
                 by: Sequence[str] = ("collection", "mode")) -> pd.DataFrame:
    """Pearson r (and two-sided p) between each predictor and each target within groups ``by``.

    Columns: *by, predictor, target, r, p, n (complete pairs).
    """
    rows = []
    for key, g in long.groupby(list(by), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        for pred in predictors:
            for tgt in targets:
                r, p, n = _pearson(g[pred].to_numpy(float), g[tgt].to_numpy(float))
                rows.append({**dict(zip(by, key)), "predictor": pred, "target": tgt, "r": r, "p": p, "n": n})
    return pd.DataFrame(rows, columns=[*by, "predictor", "target", "r", "p", "n"])
