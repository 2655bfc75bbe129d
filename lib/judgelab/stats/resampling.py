"""Cluster bootstrap by resampling weights and vectorised statistics over the resamples.

The narrative study's unit is the *endpoint pair*: a pair contributes a max-capacity and a random
path (and, once judged, one score per path and mode), and the two are not independent, so an
interval on a statistic of narratives is a percentile cluster bootstrap over pairs (as in
:mod:`judgelab.stats.bootstrap`).

A resample is represented by *weights*: row i's weight is the number of times its cluster was
drawn (:func:`cluster_weights`), so a weighted statistic with integer weights equals the statistic
of the data with each row repeated that many times (tests check this by brute force). Every
statistic stays vectorised over the B resamples (one matrix product instead of B data frames),
and rows with a missing value simply carry no value, without dropping their pair.

Resamples on which a statistic is undefined are left out of the percentiles and counted
(``n_boot_valid``), under the floor's one NaN rule (:func:`judgelab.stats.bootstrap.percentile_ci`:
no interval when fewer than half the resamples are valid); "undefined" is the floor's one rule, :func:`judgelab.stats.rules.negligible`,
never exact float equality. Multiple comparisons go through :func:`judgelab.stats.tests.adjust`
with every test of the table as the family (``n_tests=len(p)``: an undefined test enters as
p = 1, so the family never shrinks).
"""
from __future__ import annotations


import numpy as np

from judgelab.stats import bootstrap, rules

N_BOOT = 2000
CI = 0.95


cluster_weights = bootstrap.cluster_weights
"""Cluster weights of the resamples (:func:`judgelab.stats.bootstrap.cluster_weights`)."""
Interval = bootstrap.Interval
percentile_interval = bootstrap.percentile_ci
"""The floor's one NaN rule for bootstrap intervals (:func:`judgelab.stats.bootstrap.percentile_ci`):
the percentiles of the finite values, NaN when fewer than half the resamples gave one."""


def interval_note(name: str, boot: np.ndarray, estimate: float, n_clusters: int, unit: str = "endpoint pair") -> str:
    """Why ``name`` has an estimate but no interval ("" otherwise): the statistic was undefined on more
    than half of the resamples (the one NaN rule, :func:`judgelab.stats.bootstrap.percentile_ci`).

    Parameters
    ----------
    name : str
        The statistic's name in the note.
    boot : array_like
        Its bootstrap values.
    estimate : float
        Its estimate on the data (no note when it is NaN: the estimate's own note says why).
    n_clusters : int
        The clusters resampled.
    unit : str
        Their name.

    Returns
    -------
    str

    Examples
    --------
    >>> interval_note("r", np.r_[np.ones(4), np.full(6, np.nan)], 0.5, 7)
    'r: no interval, undefined on 6 of 10 resamples (7 endpoint pairs)'
    >>> interval_note("r", np.ones(10), 0.5, 7)
    ''
    """
    iv = percentile_interval(boot)
    if not np.isfinite(estimate) or np.isfinite(iv.low):
        return ""
    return (f"{name}: no interval, undefined on {iv.n_boot - iv.n_boot_valid} of {iv.n_boot} resamples "
            f"({n_clusters} {unit}s)")


def ci_method(n_boot: int, seed: int, unit: str = "endpoint pair", ci: float = CI) -> str:
    """The ``ci_method`` text of a table whose intervals come from :func:`cluster_weights`.

    Parameters
    ----------
    n_boot, seed : int
        Resamples and seed.
    unit : str
        The resampled unit.
    ci : float
        Confidence level.

    Returns
    -------
    str

    Examples
    --------
    >>> ci_method(2000, 0)
    '95% percentile cluster bootstrap over endpoint pairs (all rows of one endpoint pair resampled together), B = 2000, seed 0'
    """
    return (f"{ci:.0%} percentile cluster bootstrap over {unit}s (all rows of one {unit} resampled together), "
            f"B = {n_boot}, seed {seed}")


def weighted_mean(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Per resample, the mean of the non-missing ``x`` with weights ``w`` (B, n); NaN with no value.
    ``x`` may also be S data sets of the same units stacked (S, n), complete: then (S, B), one
    matrix product (the power simulation bootstraps its simulated runs so).

    Parameters
    ----------
    x : array_like
        (n,) values (NaN = missing) or (S, n) complete data sets.
    w : numpy.ndarray
        (B, n) weights (:func:`cluster_weights`).

    Returns
    -------
    numpy.ndarray
        (B,) means, or (S, B).

    Examples
    --------
    Weights (1, 1, 1) and (2, 0, 1) of 1, 2, 4: means 7/3 and 6/3.

    >>> weighted_mean(np.array([1.0, 2.0, 4.0]), np.array([[1, 1, 1], [2, 0, 1]])).round(4).tolist()
    [2.3333, 2.0]
    """
    x = np.asarray(x, float)
    if x.ndim == 2:
        return _moments(x, w)[1]
    ok = np.isfinite(x)
    ww = w[:, ok].astype(float)
    n = ww.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, ww @ x[ok] / n, np.nan)


def _moments(x: np.ndarray, w: np.ndarray):
    """Per resample: count, mean and sum of squared deviations of the non-missing ``x`` (or, for
    complete stacked data sets ``x`` of shape (S, n), the (S, B) means and sums)."""
    x = np.asarray(x, float)
    if x.ndim == 2:
        ww = w.astype(float)
        n = ww.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            m = x @ ww.T / n
            ss = (x ** 2) @ ww.T - n * m ** 2
        return n, m, np.maximum(ss, 0.0)
    ok = np.isfinite(x)
    x, ww = x[ok], w[:, ok].astype(float)
    n = ww.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = ww @ x / n
        ss = ww @ (x ** 2) - n * m ** 2
    return n, m, np.maximum(ss, 0.0)


def weighted_cohens_d(x: np.ndarray, wx: np.ndarray, y: np.ndarray, wy: np.ndarray) -> np.ndarray:
    """Cohen's d (pooled SD, :func:`judgelab.stats.effects.cohens_d`) of x over y per resample, rows of
    x weighted by ``wx`` and of y by ``wy``. NaN when a group has < 2 values or the pooled SD is
    zero within the rules' tolerance; one constant group alone is fine.

    Parameters
    ----------
    x, y : array_like
        (n_x,) and (n_y,) values, or stacked complete data sets (S, n_x) and (S, n_y).
    wx, wy : numpy.ndarray
        (B, n_x) and (B, n_y) weights.

    Returns
    -------
    numpy.ndarray
        (B,) d values, or (S, B).

    Examples
    --------
    Unit weights give Cohen's d itself: means 3 and 5, pooled SD sqrt(2.5), d = -1.2649.

    >>> x, y = np.array([1.0, 2, 3, 4, 5]), np.array([3.0, 4, 5, 6, 7])
    >>> weighted_cohens_d(x, np.ones((1, 5)), y, np.ones((1, 5))).round(4).tolist()
    [-1.2649]
    """
    n1, m1, ss1 = _moments(x, wx)
    n2, m2, ss2 = _moments(y, wy)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.sqrt((ss1 + ss2) / (n1 + n2 - 2))
        d = (m1 - m2) / s
    bad = (n1 < 2) | (n2 < 2) | rules.negligible(s, np.maximum(np.abs(m1), np.abs(m2)))
    return np.where(bad, np.nan, d)


def weighted_auc(x: np.ndarray, wx: np.ndarray, y: np.ndarray, wy: np.ndarray) -> np.ndarray:
    """AUC = P(X > Y) + P(X = Y) / 2 per resample (x the positive class; ties count one half, as
    :func:`sklearn.metrics.roc_auc_score`), rows weighted as in :func:`weighted_cohens_d`.

    Parameters
    ----------
    x, y : array_like
        Scores of the positive and the negative class (NaN = missing).
    wx, wy : numpy.ndarray
        (B, n_x) and (B, n_y) weights.

    Returns
    -------
    numpy.ndarray
        (B,) AUCs; NaN where a class has no weight.

    Examples
    --------
    Unit weights: 8 wins and one tie of 9 pairs; doubling x's tied 3 gives 2 ties of 12 pairs.

    >>> x, y = np.array([3.0, 4, 5]), np.array([1.0, 2, 3])
    >>> weighted_auc(x, np.array([[1, 1, 1], [2, 1, 1]]), y, np.ones((2, 3))).round(4).tolist()
    [0.9444, 0.9167]
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    okx, oky = np.isfinite(x), np.isfinite(y)
    x, y, wx, wy = x[okx], y[oky], wx[:, okx].astype(float), wy[:, oky].astype(float)
    values, inv = np.unique(np.r_[x, y], return_inverse=True)
    ix, iy = inv[:len(x)], inv[len(x):]
    cx = np.zeros((wx.shape[0], len(values)))
    cy = np.zeros((wy.shape[0], len(values)))
    np.add.at(cx.T, ix, wx.T)
    np.add.at(cy.T, iy, wy.T)
    below = np.cumsum(cy, axis=1) - cy
    n1, n2 = cx.sum(axis=1), cy.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        u = (cx * (below + 0.5 * cy)).sum(axis=1)
        return np.where((n1 > 0) & (n2 > 0), u / (n1 * n2), np.nan)


def weighted_pearson(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Pearson r of the complete (x, y) rows per resample, weights ``w`` (B, n). NaN when a side is
    constant within the rules' tolerance or fewer than 3 rows carry weight.

    Parameters
    ----------
    x, y : array_like
        Paired values (NaN = missing).
    w : numpy.ndarray
        (B, n) weights.

    Returns
    -------
    numpy.ndarray
        (B,) correlations.

    Examples
    --------
    Unit weights give r = 6 / sqrt(60) (as :func:`judgelab.stats.correlation.correlation`); a resample
    with two rows carrying weight has none.

    >>> x, y = np.array([1.0, 2, 3, 4, 5]), np.array([2.0, 4, 5, 4, 5])
    >>> weighted_pearson(x, y, np.array([[1, 1, 1, 1, 1], [3, 2, 0, 0, 0]])).round(4).tolist()
    [0.7746, nan]
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y, ww = x[ok], y[ok], w[:, ok].astype(float)
    n = ww.sum(axis=1)
    distinct = (ww > 0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx, my = ww @ x / n, ww @ y / n
        sxx = np.maximum(ww @ x ** 2 - n * mx ** 2, 0.0)
        syy = np.maximum(ww @ y ** 2 - n * my ** 2, 0.0)
        sxy = ww @ (x * y) - n * mx * my
        r = np.clip(sxy / np.sqrt(sxx * syy), -1.0, 1.0)
    bad = (distinct < 3) | rules.negligible(np.sqrt(sxx / np.maximum(n, 1)), mx) | rules.negligible(np.sqrt(syy / np.maximum(n, 1)), my)
    return np.where(bad, np.nan, r)


def weighted_icc2(matrix: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ICC(2,1) and ICC(2,k) (two-way random, absolute agreement; Shrout & Fleiss 1979, as
    :func:`judgelab.stats.reliability.icc`) of a complete items x raters ``matrix`` per resample,
    item i repeated w[b, i] times.

    Parameters
    ----------
    matrix : array_like
        Complete items x raters ratings (k >= 2 raters).
    w : numpy.ndarray
        (B, n_items) weights.

    Returns
    -------
    tuple of numpy.ndarray
        Two (B,) arrays; NaN when fewer than 3 items carry weight or the ratings are constant within
        the rules' tolerance.

    Examples
    --------
    Unit weights on Shrout & Fleiss's (1979) Table 2: ICC(2,1) = 0.29, ICC(2,4) = 0.62 (their Table 4).

    >>> sf = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]])
    >>> [v.round(2).tolist() for v in weighted_icc2(sf, np.ones((1, 6)))]
    [[0.29], [0.62]]
    """
    x = np.asarray(matrix, float)
    if x.ndim != 2 or x.shape[1] < 2:
        raise ValueError(f"ICC needs an items x raters matrix with >= 2 raters, got shape {x.shape}")
    if np.isnan(x).any():
        raise ValueError("ICC bootstrap: the matrix must be complete (drop items with a missing rating first)")
    k = x.shape[1]
    ww = w.astype(float)
    n = ww.sum(axis=1)
    rows = x.mean(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        grand = ww @ rows / n
        cols = ww @ x / n[:, None]
        ssr = k * (ww @ rows ** 2 - n * grand ** 2)
        ssc = n * ((cols - grand[:, None]) ** 2).sum(axis=1)
        sst = ww @ (x ** 2).sum(axis=1) - n * k * grand ** 2
        # the residual SS from the within-item deviations, not as sst - ssr - ssc: the subtraction
        # leaves rounding noise of sst's size, so raters who agree would not give ICC = 1
        within = x - rows[:, None]
        sse = np.maximum(ww @ (within ** 2).sum(axis=1) - ssc, 0.0)
        msr, msc, mse = ssr / (n - 1), ssc / (k - 1), sse / ((n - 1) * (k - 1))
        icc1 = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
        icck = (msr - mse) / (msr + (msc - mse) / n)
    bad = ((ww > 0).sum(axis=1) < 3) | rules.negligible(np.sqrt(np.maximum(sst, 0) / np.maximum(n * k, 1)), grand)
    return np.where(bad, np.nan, icc1), np.where(bad, np.nan, icck)


def weighted_interval_alpha(matrix: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Krippendorff's alpha, interval metric, of an items x raters ``matrix`` (NaN: unrated) per
    resample, item u repeated w[b, u] times; the number :func:`judgelab.stats.reliability.krippendorff_alpha`
    gives on the repeated data (tests check both).

    With m_u pairable values in item u (items with one value do not count), s1_u and s2_u their sum
    and sum of squares, N = sum_u w_u m_u, S1 = sum_u w_u s1_u, S2 = sum_u w_u s2_u (Krippendorff
    2011, "Computing Krippendorff's alpha-reliability", interval metric):
    D_o = (1/N) sum_u w_u (2 m_u s2_u - 2 s1_u^2) / (m_u - 1), D_e = (2 N S2 - 2 S1^2) / (N (N - 1)),
    alpha = 1 - D_o / D_e.

    Parameters
    ----------
    matrix : array_like
        Items x raters ratings, NaN where a rater did not rate an item.
    w : numpy.ndarray
        (B, n_items) weights.

    Returns
    -------
    numpy.ndarray
        (B,) alpha; NaN when fewer than 3 pairable items carry weight or the values are constant
        within the rules' tolerance.

    Examples
    --------
    Krippendorff's (2011) worked example, 4 observers x 12 units with missing values: alpha = 0.849
    (interval metric).

    >>> k = np.array([[1, 1, np.nan, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4],
    ...               [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [np.nan, 5, 5, 5], [np.nan, np.nan, 1, 1],
    ...               [np.nan, np.nan, np.nan, np.nan]])
    >>> weighted_interval_alpha(k, np.ones((1, 12))).round(3).tolist()
    [0.849]
    """
    x = np.asarray(matrix, float)
    if x.ndim != 2 or x.shape[1] < 2:
        raise ValueError(f"alpha needs an items x raters matrix with >= 2 raters, got shape {x.shape}")
    m = (~np.isnan(x)).sum(axis=1).astype(float)
    pairable = m >= 2
    finite = x[np.isfinite(x)]
    centre = float(finite.mean()) if finite.size else 0.0
    y = np.where(np.isnan(x), 0.0, x - centre)   # alpha is translation invariant; centring keeps S2 exact
    s1, s2 = y.sum(axis=1), (y ** 2).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        o = np.where(pairable, (2 * m * s2 - 2 * s1 ** 2) / np.maximum(m - 1, 1), 0.0)
    ww = np.asarray(w, float) * pairable
    n, t1, t2, t_o = ww @ m, ww @ s1, ww @ s2, ww @ o
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = 2 * n * t2 - 2 * t1 ** 2
        alpha = 1.0 - (n - 1) * t_o / expected
    spread = np.sqrt(np.maximum(expected, 0.0)) / np.maximum(n, 1)
    bad = ((ww > 0).sum(axis=1) < 3) | rules.negligible(spread, np.full_like(spread, abs(centre)))
    return np.where(bad, np.nan, alpha)


def bootstrap_p(boot: np.ndarray) -> float:
    """Two-sided bootstrap p-value of "statistic = 0" (percentile-interval inversion): twice the smaller
    share of finite resampled values on either side of 0 (ties at 0 count half), floored at 1 / B,
    capped at 1; NaN when fewer than half the resamples gave a value (the one NaN rule).

    Parameters
    ----------
    boot : array_like
        The bootstrap values.

    Returns
    -------
    float

    Examples
    --------
    2 of 10 values below 0: p = 2 * 0.2; none below 0: the floor 1 / 10.

    >>> bootstrap_p(np.r_[-1.0, -2.0, np.arange(1.0, 9.0)]), bootstrap_p(np.arange(1.0, 11.0))
    (0.4, 0.1)
    """
    b = np.asarray(boot, float)
    ok = b[np.isfinite(b)]
    if len(ok) == 0 or len(ok) < bootstrap.MIN_VALID_SHARE * len(b):
        return np.nan
    below = (np.sum(ok < 0) + 0.5 * np.sum(ok == 0)) / len(ok)
    return float(min(1.0, max(2 * min(below, 1 - below), 1.0 / len(ok))))
