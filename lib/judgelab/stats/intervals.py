"""Intervals of independent units: Wilson's interval of a share, Student's t interval of a mean
(from the values or from summary numbers), the pooled-SD t interval of a difference of two means,
the delta-method interval of a ratio of means, and the percentile bootstrap of a mean or of a
difference of two means.

These are the floor's only copies; a study module calls them and never writes its own (the test
``tests/test_stats_floor.py`` fails when one does). For units nested in clusters (a story's modes,
an endpoint pair's two paths) use the cluster bootstraps instead:
:func:`judgelab.stats.bootstrap.cluster_bootstrap` (any statistic of a DataFrame) and
:mod:`judgelab.stats.resampling` (vectorised statistics by resampling weights).

- Wilson score interval (Wilson 1927, JASA 22:209; recommended over the Wald interval by Brown,
  Cai & DasGupta 2001, Stat. Sci. 16:101): ``statsmodels.stats.proportion.proportion_confint``.
- Student t interval of a mean: mean -+ t_(n-1, (1+ci)/2) sd / sqrt(n), exact for normal data;
  Welch's interval of a difference of two means (:func:`welch_interval`, scipy's);
  the summary-number forms (:func:`t_interval_from_summary`, :func:`pooled_t_from_summary`,
  :func:`ratio_ci`) are vectorised, so the claims scorecard's power simulation computes its
  intervals with the very same code.
- Percentile bootstrap (Efron & Tibshirani 1993, ch. 13): the floor's one bootstrap,
  :func:`judgelab.stats.bootstrap.bootstrap` with ``method="independent"`` (``scipy.stats.bootstrap``'s
  draws, seeded by ``numpy.random.default_rng(seed)``), under its one NaN rule.

Degenerate input follows :mod:`judgelab.stats.rules`: no interval (NaN) with fewer than 2 values;
values equal within the rules' tolerance have the interval [mean, mean].
"""
from __future__ import annotations

import numpy as np

from judgelab.stats import rules
from judgelab.stats.bootstrap import bootstrap

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
        ``(low, high)`` = mean -+ t_(n-1) sd / sqrt(n) (:func:`t_interval_from_summary`); NaN with
        fewer than 2 values.

    Examples
    --------
    Mean 2, sd 1, n 3: t_(2, 0.975) = 4.3027 (any t table), half-width 4.3027 / sqrt(3) = 2.4841.

    >>> [round(v, 4) for v in t_interval([1.0, 2.0, 3.0])]
    [-0.4841, 4.4841]
    >>> t_interval([1.0])
    (nan, nan)
    """
    v = rules.as_float_array(values, "values")
    v = v[np.isfinite(v)]
    if len(v) < 2:
        return np.nan, np.nan
    _, lo, hi = t_interval_from_summary(v.mean(), v.std(ddof=1), len(v), ci)
    return float(lo), float(hi)


def welch_interval(x, y, ci: float = 0.95) -> tuple[float, float]:
    """Welch's t interval of mean(x) - mean(y), NaN values left out
    (``scipy.stats.ttest_ind(..., equal_var=False).confidence_interval``): the interval that goes
    with Welch's test (:func:`judgelab.stats.tests.ttest`, ``equal_var=False``).

    Parameters
    ----------
    x, y : array_like
        The two independent groups.
    ci : float
        Confidence level, default 0.95.

    Returns
    -------
    tuple of float
        ``(low, high)`` = diff -+ t_(df, (1+ci)/2) sqrt(s_x^2/n_x + s_y^2/n_y), df by
        Welch-Satterthwaite; NaN with fewer than 2 values in a group or no spread in either.

    Examples
    --------
    Variances 1 (n = 3) and 20 / 3 (n = 4): se = sqrt(2), df = 4.0755, t_(4.0755, 0.975) = 2.7563,
    so -5 -+ 3.8980.

    >>> [round(v, 4) for v in welch_interval([1, 2, 3], [4, 6, 8, 10])]
    [-8.898, -1.102]
    """
    from scipy import stats

    a, b = (rules.as_float_array(v, name) for v, name in ((x, "x"), (y, "y")))
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if len(a) < 2 or len(b) < 2:
        return np.nan, np.nan
    tol = rules.tolerance(a, b)
    if rules.is_zero_spread(a.var(), tol) and rules.is_zero_spread(b.var(), tol):
        return np.nan, np.nan
    res = stats.ttest_ind(a, b, equal_var=False).confidence_interval(ci)
    return float(res.low), float(res.high)


def _nan_where(bad, *arrays):
    """The arrays with NaN where ``bad`` (a design too small for the interval)."""
    return tuple(np.where(bad, np.nan, a) for a in arrays)


def t_interval_from_summary(m, sd, n, ci: float = 0.95) -> tuple:
    """Student's t interval of a mean from its summary numbers, vectorised.

    mean -+ t_(n-1, (1+ci)/2) sd / sqrt(n) (Student 1908), exact for normal data; also the CI of a
    mean of paired differences (the paired t-test's interval).

    Parameters
    ----------
    m, sd, n : float or array_like
        Mean, sample SD (ddof = 1) and number of units; arrays broadcast (the scorecard's power
        simulation passes one value per simulated run).
    ci : float
        Confidence level, default 0.95.

    Returns
    -------
    tuple
        ``(m, low, high)`` as float arrays; NaN where ``n`` < 2.

    Examples
    --------
    Mean 10, SD 2, n 4: t_(3, 0.975) = 3.1824 (any t table), half-width 3.1824 * 2 / 2.

    >>> [round(float(v), 4) for v in t_interval_from_summary(10.0, 2.0, 4)]
    [10.0, 6.8176, 13.1824]
    >>> [float(v) for v in t_interval_from_summary(10.0, 2.0, 1)]
    [nan, nan, nan]
    """
    from scipy import stats

    m, sd, n = (np.asarray(v, float) for v in (m, sd, n))
    with np.errstate(invalid="ignore", divide="ignore"):
        half = stats.t.ppf((1 + ci) / 2, n - 1) * sd / np.sqrt(n)
    return _nan_where(n < 2, m, m - half, m + half)


def prediction_interval_from_summary(m, sd, n, ci: float = 0.95) -> tuple:
    """Student's t prediction interval for one new value of a normal variable from n values' mean
    and SD, vectorised: m -+ t_(n-1, (1+ci)/2) sd sqrt(1 + 1/n) (e.g. one more UMAP seed's critical
    coherence, the paper's single landscape among this run's seeds).

    Parameters
    ----------
    m, sd, n : float or array_like
        Mean, sample SD (ddof = 1) and number of values.
    ci : float
        Coverage of the new value, default 0.95.

    Returns
    -------
    tuple
        ``(m, low, high)`` as float arrays; NaN where ``n`` < 2.

    Examples
    --------
    Mean 10, SD 2, n 4: t_(3, 0.975) = 3.1824, half-width 3.1824 * 2 * sqrt(1.25) = 7.1162.

    >>> [round(float(v), 4) for v in prediction_interval_from_summary(10.0, 2.0, 4)]
    [10.0, 2.8838, 17.1162]
    """
    m, sd, n = (np.asarray(v, float) for v in (m, sd, n))
    return t_interval_from_summary(m, sd * np.sqrt(n + 1), n, ci)


def pooled_t_from_summary(m1, s1, n1, m2, s2, n2, ci: float = 0.95) -> tuple:
    """The difference of two independent means with its pooled-SD Student t interval and two-sided
    p, from summary numbers, vectorised (the independent-samples t-test of the SAGE paper).

    s_p = sqrt(((n1 - 1) s1^2 + (n2 - 1) s2^2) / (n1 + n2 - 2)), se = s_p sqrt(1/n1 + 1/n2),
    df = n1 + n2 - 2; CI = diff -+ t_(df, (1+ci)/2) se, p = 2 P(T_df > |diff| / se) (Student 1908;
    the p as :func:`scipy.stats.ttest_ind_from_stats` with ``equal_var=True``).

    Parameters
    ----------
    m1, s1, n1, m2, s2, n2 : float or array_like
        Each group's mean, sample SD (ddof = 1) and size; arrays broadcast.
    ci : float
        Confidence level, default 0.95.

    Returns
    -------
    tuple
        ``(m1 - m2, low, high, p)`` as float arrays; NaN where a group has fewer than 2 units.

    Examples
    --------
    Means 5 and 4, SDs 1, 10 per group: s_p = 1, se = sqrt(0.2) = 0.4472, t_(18, 0.975) = 2.1009
    (any t table), t = 2.2361.

    >>> [round(float(v), 4) for v in pooled_t_from_summary(5.0, 1.0, 10, 4.0, 1.0, 10)]
    [1.0, 0.0604, 1.9396, 0.0382]
    """
    from scipy import stats

    m1, s1, n1, m2, s2, n2 = (np.asarray(v, float) for v in (m1, s1, n1, m2, s2, n2))
    df = n1 + n2 - 2
    with np.errstate(invalid="ignore", divide="ignore"):
        sp = np.sqrt(((n1 - 1) * s1 ** 2 + (n2 - 1) * s2 ** 2) / df)
        se = sp * np.sqrt(1 / n1 + 1 / n2)
        diff = m1 - m2
        half = stats.t.ppf((1 + ci) / 2, df) * se
        p = 2 * stats.t.sf(np.abs(diff / se), df)
    return _nan_where((n1 < 2) | (n2 < 2), diff, diff - half, diff + half, p)


def ratio_ci(m1, s1, n1, m2, s2, n2, ci: float = 0.95) -> tuple:
    """A ratio of two independent positive means with its delta-method interval on the log scale,
    vectorised.

    se(log(m1 / m2)) = sqrt(s1^2 / (n1 m1^2) + s2^2 / (n2 m2^2)) (the delta method; e.g. Casella &
    Berger 2002, sec. 5.5.4); CI = (m1 / m2) exp(-+ z_(1+ci)/2 se).

    Parameters
    ----------
    m1, s1, n1, m2, s2, n2 : float or array_like
        Each mean, its sample SD and its number of units; arrays broadcast.
    ci : float
        Confidence level, default 0.95.

    Returns
    -------
    tuple
        ``(m1 / m2, low, high)`` as float arrays; NaN where a group has fewer than 2 units or a
        mean is not positive.

    Examples
    --------
    Means 2 and 1, SDs 1 and 0.5, 25 units each: se = sqrt(0.01 + 0.01) = 0.1414, so the interval
    is 2 exp(-+ 1.96 * 0.1414).

    >>> [round(float(v), 4) for v in ratio_ci(2.0, 1.0, 25, 1.0, 0.5, 25)]
    [2.0, 1.5158, 2.6388]
    """
    from scipy import stats

    m1, s1, n1, m2, s2, n2 = (np.asarray(v, float) for v in (m1, s1, n1, m2, s2, n2))
    z = stats.norm.ppf((1 + ci) / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = m1 / m2
        se = np.sqrt(s1 ** 2 / (n1 * m1 ** 2) + s2 ** 2 / (n2 * m2 ** 2))
        lo, hi = r * np.exp(-z * se), r * np.exp(z * se)
    return _nan_where((n1 < 2) | (n2 < 2) | (m1 <= 0) | (m2 <= 0), r, lo, hi)


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
    x = rules.as_float_array(values, "values")
    x = x[np.isfinite(x)]
    if len(x) == 0:
        return (np.nan, np.nan, np.nan)
    m = float(x.mean())
    if len(x) < 2:
        return (m, np.nan, np.nan)
    if rules.is_constant(x):  # every resample has the same mean: the interval is the point
        return (m, m, m)
    row = bootstrap((x,), np.mean, method="independent", n_boot=n_boot, seed=seed, ci=ci).iloc[0]
    return (m, float(row["ci_low"]), float(row["ci_high"]))


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
    a, b = rules.as_float_array(x, "x"), rules.as_float_array(y, "y")
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if len(a) == 0 or len(b) == 0:
        return (np.nan, np.nan, np.nan)
    d = float(a.mean() - b.mean())
    if len(a) < 2 or len(b) < 2:
        return (d, np.nan, np.nan)
    row = bootstrap((a, b), _mean_difference, method="independent", n_boot=n_boot, seed=seed, ci=ci).iloc[0]
    return (d, float(row["ci_low"]), float(row["ci_high"]))


def _mean_difference(u, v, axis=-1):
    return np.mean(u, axis=axis) - np.mean(v, axis=axis)


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
