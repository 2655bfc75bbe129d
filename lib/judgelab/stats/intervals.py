"""Intervals of independent units: Wilson's interval of a share, Student's t interval of a mean,
and the percentile bootstrap of a mean or of a difference of two means.

These are the floor's only copies; a study module calls them and never writes its own (the test
``tests/test_stats_floor.py`` fails when one does). For units nested in clusters (a story's modes,
an endpoint pair's two paths) use the cluster bootstraps instead:
:func:`judgelab.stats.bootstrap.cluster_bootstrap` (any statistic of a DataFrame) and
:mod:`judgelab.stats.resampling` (vectorised statistics by resampling weights).

- Wilson score interval (Wilson 1927, JASA 22:209; recommended over the Wald interval by Brown,
  Cai & DasGupta 2001, Stat. Sci. 16:101): ``statsmodels.stats.proportion.proportion_confint``.
- Student t interval of a mean: mean -+ t_(n-1, (1+ci)/2) sd / sqrt(n), exact for normal data.
- Percentile bootstrap (Efron & Tibshirani 1993, ch. 13): ``scipy.stats.bootstrap`` with
  ``method="percentile"``, seeded by ``numpy.random.default_rng(seed)``.

Degenerate input follows :mod:`judgelab.stats.rules`: no interval (NaN) with fewer than 2 values;
values equal within the rules' tolerance have the interval [mean, mean].
"""
from __future__ import annotations

import numpy as np

from judgelab.stats import rules

BOOT_METHOD = "percentile bootstrap over {unit} ({n} resamples)"
"""The ``ci_method`` text of :func:`mean_ci` / :func:`diff_ci`, e.g.
``BOOT_METHOD.format(unit="stories", n=2000)``."""


def proportion_ci(k: int, n: int, ci: float = 0.95) -> tuple[float, float, float]:
    """A share with its Wilson score interval.

    Parameters
    ----------
    k : int or array
        Successes.
    n : int or array
        Trials (independent; clustered trials need a cluster bootstrap).
    ci : float
        Confidence level, default 0.95.

    Returns
    -------
    tuple of float
        ``(k / n, low, high)``; all NaN when ``n`` is 0.

    Examples
    --------
    >>> share, lo, hi = proportion_ci(8, 10)
    >>> share, round(lo, 4), round(hi, 4)
    (0.8, 0.4902, 0.9433)
    >>> [round(v, 4) for v in proportion_ci(0, 5)]
    [0.0, 0.0, 0.4345]
    >>> proportion_ci(0, 0)
    (nan, nan, nan)
    """
    from statsmodels.stats.proportion import proportion_confint

    if np.ndim(k) or np.ndim(n):  # arrays (the scorecard's power draws): arrays, NaN where n is 0
        k, n = np.asarray(k, float), np.asarray(n, float)
        safe = np.where(n < 1, 1.0, n)
        lo, hi = proportion_confint(np.minimum(k, safe), safe, alpha=1 - ci, method="wilson")
        return tuple(np.where(n < 1, np.nan, v) for v in (k / safe, lo, hi))
    if n <= 0:
        return (np.nan, np.nan, np.nan)
    lo, hi = proportion_confint(int(k), int(n), alpha=1 - ci, method="wilson")
    return (int(k) / int(n), float(lo), float(hi))


def t_interval(values, ci: float = 0.95) -> tuple[float, float]:
    """Student's t interval of a mean, NaN values left out.

    Parameters
    ----------
    values : array_like
        The sample.
    ci : float
        Confidence level, default 0.95.

    Returns
    -------
    tuple of float
        ``(low, high)`` = mean -+ t_(n-1) sd / sqrt(n); NaN with fewer than 2 values.

    Examples
    --------
    >>> [round(v, 4) for v in t_interval([1.0, 2.0, 3.0])]
    [-0.4841, 4.4841]
    >>> t_interval([1.0])
    (nan, nan)
    """
    from scipy import stats

    v = rules.as_float_array(values, "values")
    v = v[np.isfinite(v)]
    if len(v) < 2:
        return np.nan, np.nan
    half = stats.t.ppf((1 + ci) / 2, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v))
    return float(v.mean() - half), float(v.mean() + half)


def mean_ci(values, n_boot: int = 2000, seed: int = 0, ci: float = 0.95) -> tuple[float, float, float]:
    """A mean with its percentile-bootstrap interval over independent units.

    Parameters
    ----------
    values : array_like
        One value per unit; NaN values are left out.
    n_boot : int
        Resamples, default 2000.
    seed : int
        Seed of ``numpy.random.default_rng``: the result depends only on the data, ``n_boot`` and it.
    ci : float
        Confidence level, default 0.95.

    Returns
    -------
    tuple of float
        ``(mean, low, high)``: all NaN without values, NaN bounds with one value, ``(m, m, m)`` when
        the values are equal within the rules' tolerance (:func:`judgelab.stats.rules.is_constant`).

    Examples
    --------
    >>> mean_ci([2.0, 2.0, 2.0])
    (2.0, 2.0, 2.0)
    >>> mean_ci([1.0, np.nan])
    (1.0, nan, nan)
    >>> m, lo, hi = mean_ci([0.0, 1.0, 2.0, 3.0, 4.0], n_boot=500, seed=1)
    >>> m, 0.0 <= lo < m < hi <= 4.0
    (2.0, True)
    """
    from scipy import stats

    x = rules.as_float_array(values, "values")
    x = x[np.isfinite(x)]
    if len(x) == 0:
        return (np.nan, np.nan, np.nan)
    m = float(x.mean())
    if len(x) < 2:
        return (m, np.nan, np.nan)
    if rules.is_constant(x):  # every resample has the same mean: the interval is the point
        return (m, m, m)
    res = stats.bootstrap((x,), np.mean, n_resamples=int(n_boot), method="percentile", confidence_level=ci,
                          random_state=np.random.default_rng(seed))
    return (m, float(res.confidence_interval.low), float(res.confidence_interval.high))


def diff_ci(x, y, n_boot: int = 2000, seed: int = 0, ci: float = 0.95) -> tuple[float, float, float]:
    """The difference of two independent means with its two-sample percentile-bootstrap interval
    (each sample resampled on its own).

    Parameters
    ----------
    x, y : array_like
        The two samples; NaN values are left out.
    n_boot, seed, ci
        As :func:`mean_ci`.

    Returns
    -------
    tuple of float
        ``(mean(x) - mean(y), low, high)``: all NaN when a sample is empty, NaN bounds when one
        has a single value.

    Examples
    --------
    >>> d, lo, hi = diff_ci([1.0, 2.0, 3.0], [0.0, 0.0, 0.0], n_boot=500, seed=1)
    >>> d, 1.0 <= lo <= d <= hi <= 3.0
    (2.0, True)
    >>> diff_ci([1.0], [2.0, 3.0])
    (-1.5, nan, nan)
    """
    from scipy import stats

    a, b = rules.as_float_array(x, "x"), rules.as_float_array(y, "y")
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if len(a) == 0 or len(b) == 0:
        return (np.nan, np.nan, np.nan)
    d = float(a.mean() - b.mean())
    if len(a) < 2 or len(b) < 2:
        return (d, np.nan, np.nan)
    res = stats.bootstrap((a, b), lambda u, v, axis=-1: np.mean(u, axis=axis) - np.mean(v, axis=axis),
                          n_resamples=int(n_boot), method="percentile", confidence_level=ci, vectorized=True,
                          random_state=np.random.default_rng(seed))
    return (d, float(res.confidence_interval.low), float(res.confidence_interval.high))


def proportion_ci_design_effect(share, n, se, ci: float = 0.95):
    """A share of clustered trials with Wilson's interval at its effective sample size.

    The design effect is deff = se² / (share (1 − share) / n), from ``se``, the share's standard
    error under the clustering (a cluster bootstrap's), floored at 1; Wilson's interval is then
    taken at n / deff trials (Kish 1965, *Survey Sampling*, §8.2; effective-n intervals for
    clustered proportions: Korn & Graubard 1998, *Survey Methodology* 24:193). Valid where a
    percentile bootstrap is not: a share of 0 or 1, whose bootstrap is a constant, has no
    measurable design effect and gets Wilson's interval at n (independent trials).

    Parameters
    ----------
    share, n, se : float or array
        The share, its number of trials, its clustered standard error (NaN: unknown, deff = 1).
    ci : float
        Confidence level, default 0.95.

    Returns
    -------
    tuple
        ``(share, low, high)``, arrays where the input is; NaN where ``n`` < 1.

    Examples
    --------
    >>> [round(float(v), 4) for v in proportion_ci_design_effect(1.0, 12, 0.0)]
    [1.0, 0.7575, 1.0]
    >>> [round(float(v), 4) for v in proportion_ci_design_effect(0.8, 100, 0.08)]  # deff 4: Wilson at 25
    [0.8, 0.6087, 0.9114]
    """
    share, n, se = (np.asarray(v, float) for v in (share, n, se))
    with np.errstate(invalid="ignore", divide="ignore"):
        deff = se ** 2 / (share * (1 - share) / n)
    deff = np.where(np.isfinite(deff), np.maximum(deff, 1.0), 1.0)
    n_eff = np.where(n < 1, np.nan, n / deff)
    from statsmodels.stats.proportion import proportion_confint

    with np.errstate(invalid="ignore"):
        lo, hi = proportion_confint(share * n_eff, n_eff, alpha=1 - ci, method="wilson")
    out = (share, np.asarray(lo, float), np.asarray(hi, float))
    return tuple(float(v) for v in out) if share.ndim == 0 else out
