"""Intervals over the study's units: a percentile bootstrap of a mean (scipy), Wilson intervals of a
share (statsmodels), and Holm / Bonferroni adjustment over a table's rows (statsmodels)."""
from __future__ import annotations

import numpy as np
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

BOOT_METHOD = "percentile bootstrap over {unit} ({n} resamples)"


def mean_ci(values, n_boot: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """(mean, 95% low, 95% high) of ``values`` (NaN dropped); the interval is a percentile bootstrap
    (``scipy.stats.bootstrap``); NaN bounds with fewer than 2 values, the value itself when all equal."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if len(x) == 0:
        return (np.nan, np.nan, np.nan)
    m = float(x.mean())
    if len(x) < 2:
        return (m, np.nan, np.nan)
    if np.all(x == x[0]):
        return (m, m, m)
    res = stats.bootstrap((x,), np.mean, n_resamples=int(n_boot), method="percentile",
                          random_state=np.random.default_rng(seed))
    return (m, float(res.confidence_interval.low), float(res.confidence_interval.high))


def diff_ci(x, y, n_boot: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """(mean(x) - mean(y), 95% low, high): independent two-sample percentile bootstrap."""
    a, b = (np.asarray(v, dtype=float) for v in (x, y))
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if len(a) == 0 or len(b) == 0:
        return (np.nan, np.nan, np.nan)
    d = float(a.mean() - b.mean())
    if len(a) < 2 or len(b) < 2:
        return (d, np.nan, np.nan)
    res = stats.bootstrap((a, b), lambda u, v, axis=-1: np.mean(u, axis=axis) - np.mean(v, axis=axis),
                          n_resamples=int(n_boot), method="percentile", vectorized=True,
                          random_state=np.random.default_rng(seed))
    return (d, float(res.confidence_interval.low), float(res.confidence_interval.high))


def share_ci(k: int, n: int) -> tuple[float, float, float]:
    """(k / n, Wilson 95% low, high); NaN when n = 0."""
    if n == 0:
        return (np.nan, np.nan, np.nan)
    lo, hi = proportion_confint(int(k), int(n), alpha=0.05, method="wilson")
    return (k / n, float(lo), float(hi))


def adjust(p) -> tuple[np.ndarray, np.ndarray]:
    """(Holm, Bonferroni) adjusted p-values over the family of every test given (the floor's rule:
    :func:`judgelab.stats.resampling.adjust_p`)."""
    from judgelab.stats.resampling import adjust_p

    return adjust_p(p)
