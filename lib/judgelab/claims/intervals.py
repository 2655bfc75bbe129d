"""95% intervals for the scorecard's statistic kinds, from summary numbers; vectorised, so that
the power simulation (:mod:`judgelab.claims.power`) computes its intervals with the very same code.

Kinds (``kind`` in ``claims.yaml``) and their methods (:data:`METHODS`):

``proportion``   k successes of n: Wilson score interval.
``mean``         one mean with its SD and n: Student t.
``paired_diff``  mean of n paired differences with their SD: Student t (the paired t-test's CI).
``mean_diff``    two independent groups' means, SDs, sizes: pooled-SD Student t (as the SAGE
                 paper's independent-samples t-tests), with its two-sided p.
``cohens_d``     Cohen's d of two groups of n1 and n2: normal approximation with the
                 Hedges–Olkin SE, sqrt((n1 + n2) / (n1 n2) + d² / (2 (n1 + n2))).
``auc``          AUC-ROC of n1 positives and n2 negatives: Hanley–McNeil SE, clipped to [0, 1].
``correlation``  Pearson r over n pairs: Fisher z.
``icc``          from summary numbers: ICC(1) of n targets by k raters from its F ratio (Shrout &
                 Fleiss 1979), a stand-in for ICC(2,1) when the raters have no systematic offsets;
                 from scores (the power simulation): ICC(2,1) itself, :func:`icc2_1`.
``ratio``        a ratio of two independent means (m1, s1, n1) / (m2, s2, n2): delta method on the
                 log ratio.
"""
from __future__ import annotations

import numpy as np
from scipy import stats

from judgelab.stats.intervals import proportion_ci

Z95 = float(stats.norm.ppf(0.975))

METHODS = {
    "proportion": "Wilson score",
    "mean": "Student t",
    "paired_diff": "paired Student t",
    "mean_diff": "pooled-SD Student t",
    "cohens_d": "normal approx., Hedges-Olkin SE",
    "auc": "Hanley-McNeil SE",
    "correlation": "Fisher z",
    "icc": "F-ratio (Shrout & Fleiss), ICC(1)",
    "ratio": "delta method on the log ratio",
}
KINDS = tuple(METHODS)
#: The fewest units (per group, for two groups) at which the scorecard computes a kind's interval
#: from summary numbers. Below it the interval would rest wholly on a distributional assumption
#: that so few units cannot check (a Student t on two latencies spans hundreds of seconds; a
#: normal d or AUC interval needs groups of several): the scorecard says "too few units" instead.
#: Wilson's interval is valid for any n >= 1.
MIN_UNITS = {"proportion": 1, "mean": 5, "paired_diff": 5, "mean_diff": 5, "cohens_d": 5, "auc": 5,
             "correlation": 5, "icc": 5, "ratio": 5}


def _nan_where(bad, *arrays):
    return tuple(np.where(bad, np.nan, a) for a in arrays)


def proportion(k, n):
    """(estimate, low, high): Wilson score interval of k successes in n trials."""
    return proportion_ci(k, n)


def mean(m, sd, n):
    """(estimate, low, high): Student-t interval of a mean."""
    m, sd, n = (np.asarray(v, float) for v in (m, sd, n))
    with np.errstate(invalid="ignore", divide="ignore"):
        half = stats.t.ppf(0.975, n - 1) * sd / np.sqrt(n)
    return _nan_where(n < 2, m, m - half, m + half)


paired_diff = mean  # the CI of a mean of paired differences is a one-sample t interval


def mean_diff(m1, s1, n1, m2, s2, n2):
    """(m1 - m2, low, high, p): pooled-SD Student t interval and two-sided p."""
    m1, s1, n1, m2, s2, n2 = (np.asarray(v, float) for v in (m1, s1, n1, m2, s2, n2))
    df = n1 + n2 - 2
    with np.errstate(invalid="ignore", divide="ignore"):
        sp = np.sqrt(((n1 - 1) * s1 ** 2 + (n2 - 1) * s2 ** 2) / df)
        se = sp * np.sqrt(1 / n1 + 1 / n2)
        diff = m1 - m2
        half = stats.t.ppf(0.975, df) * se
        p = 2 * stats.t.sf(np.abs(diff / se), df)
    est, lo, hi, p = _nan_where((n1 < 2) | (n2 < 2), diff, diff - half, diff + half, p)
    return est, lo, hi, p


def cohens_d(d, n1, n2):
    """(d, low, high): normal interval with the Hedges–Olkin standard error."""
    d, n1, n2 = (np.asarray(v, float) for v in (d, n1, n2))
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.sqrt((n1 + n2) / (n1 * n2) + d ** 2 / (2 * (n1 + n2)))
    return _nan_where((n1 < 2) | (n2 < 2), d, d - Z95 * se, d + Z95 * se)


def auc(a, n1, n2):
    """(AUC, low, high): Hanley & McNeil (1982) standard error, interval clipped to [0, 1]."""
    a, n1, n2 = (np.asarray(v, float) for v in (a, n1, n2))
    q1, q2 = a / (2 - a), 2 * a ** 2 / (1 + a)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = (a * (1 - a) + (n1 - 1) * (q1 - a ** 2) + (n2 - 1) * (q2 - a ** 2)) / (n1 * n2)
        se = np.sqrt(np.maximum(var, 0))
    lo, hi = np.clip(a - Z95 * se, 0, 1), np.clip(a + Z95 * se, 0, 1)
    return _nan_where((n1 < 1) | (n2 < 1), a, lo, hi)


def correlation(r, n):
    """(r, low, high): Fisher-z interval (needs n ≥ 4)."""
    r, n = np.asarray(r, float), np.asarray(n, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.arctanh(np.clip(r, -0.999999, 0.999999))
        half = Z95 / np.sqrt(n - 3)
    return _nan_where(n < 4, r, np.tanh(z - half), np.tanh(z + half))


def icc_from_f(f, n, k):
    """(ICC(1), low, high) from the one-way ANOVA F = MS_between / MS_within of n targets, k raters."""
    f, n, k = (np.asarray(v, float) for v in (f, n, k))
    df1, df2 = n - 1, n * (k - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        est = (f - 1) / (f + k - 1)
        fl = f / stats.f.ppf(0.975, df1, df2)
        fu = f * stats.f.ppf(0.975, df2, df1)
        lo, hi = (fl - 1) / (fl + k - 1), (fu - 1) / (fu + k - 1)
    return _nan_where((n < 3) | (k < 2), est, lo, hi)


def icc2_1(scores):
    """(ICC(2,1), low, high) of a (..., n targets, k raters) array (Shrout & Fleiss 1979 case 2;
    McGraw & Wong's 1996 F interval, Satterthwaite df, as pingouin's ``ICC2``): the ICC of the
    narrative paper's Table 3, vectorised for the power simulation."""
    x = np.asarray(scores, float)
    n, k = x.shape[-2], x.shape[-1]
    grand = x.mean(axis=(-2, -1), keepdims=True)
    rows, cols = x.mean(axis=-1, keepdims=True), x.mean(axis=-2, keepdims=True)
    msr = k * ((rows - grand) ** 2).sum(axis=(-2, -1)) / (n - 1)
    msc = n * ((cols - grand) ** 2).sum(axis=(-2, -1)) / (k - 1)
    mse = ((x - rows - cols + grand) ** 2).sum(axis=(-2, -1)) / ((n - 1) * (k - 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        est = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
        fj = msc / mse
        a = n * (1 + (k - 1) * est) - k * est
        v = (n - 1) * (k - 1) * (k * est * fj + a) ** 2 / ((n - 1) * k ** 2 * est ** 2 * fj ** 2 + a ** 2)
        f_up, f_lo = stats.f.ppf(0.975, n - 1, v), stats.f.ppf(0.975, v, n - 1)
        lo = n * (msr - f_up * mse) / (f_up * (k * msc + (k * n - k - n) * mse) + n * msr)
        hi = n * (f_lo * msr - mse) / (k * msc + (k * n - k - n) * mse + n * f_lo * msr)
    return _nan_where((n < 3) | (k < 2), est, lo, hi)


def ratio(m1, s1, n1, m2, s2, n2):
    """(m1 / m2, low, high): delta method on log(m1 / m2) (both means positive)."""
    m1, s1, n1, m2, s2, n2 = (np.asarray(v, float) for v in (m1, s1, n1, m2, s2, n2))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = m1 / m2
        se = np.sqrt(s1 ** 2 / (n1 * m1 ** 2) + s2 ** 2 / (n2 * m2 ** 2))
        lo, hi = r * np.exp(-Z95 * se), r * np.exp(Z95 * se)
    return _nan_where((n1 < 2) | (n2 < 2) | (m1 <= 0) | (m2 <= 0), r, lo, hi)
