"""Effect sizes of two groups: Cohen's d (two SD conventions) and the AUC.

Cohen's d = (mean(x) - mean(y)) / s, sample SDs s1, s2 with ddof = 1, and s one of

- ``"pooled"``: s = sqrt(((n1 - 1) s1^2 + (n2 - 1) s2^2) / (n1 + n2 - 2)), the pooled SD
  (Cohen 1988, *Statistical Power Analysis*, eq. 2.5.2; pingouin's
  ``compute_effsize(eftype="cohen")``);
- ``"average"``: s = sqrt((s1^2 + s2^2) / 2), the root mean of the two variances (Cohen 1988,
  eq. 2.3.2), which ignores the group sizes: the convention of the SAGE paper's code and of the
  Narrative Trails analysis code. Equal to the pooled SD when n1 = n2.

For paired data, d_z = mean(x - y) / sd(x - y) (ddof = 1; Cohen 1988, eq. 2.3.5; Lakens 2013,
*Front. Psychol.* 4:863), the standardised mean difference of the pairs.

AUC = P(X > Y) + P(X = Y) / 2 for a random x of ``x`` (the positive class) and y of ``y``, by
:func:`sklearn.metrics.roc_auc_score`; it equals U / (n1 n2) of the Mann-Whitney test.

Intervals from summary numbers, vectorised (the claims scorecard and its power simulation):
:func:`cohens_d_ci` (normal approximation, Hedges & Olkin's standard error) and :func:`auc_ci`
(Hanley & McNeil's standard error).

Small or degenerate input follows :mod:`judgelab.stats.rules`.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from judgelab.stats import rules

SD_CONVENTIONS: dict[str, str] = {
    "pooled": "s = sqrt(((n1-1) s1^2 + (n2-1) s2^2) / (n1 + n2 - 2))  [Cohen 1988, eq. 2.5.2]",
    "average": "s = sqrt((s1^2 + s2^2) / 2)  [Cohen 1988, eq. 2.3.2; the SAGE paper's code]",
}
D_COLUMNS = ("sd_convention", "d", "n_x", "n_y", "mean_x", "mean_y", "note")
AUC_COLUMNS = ("auc", "n_x", "n_y", "note")
DZ_COLUMNS = ("d_z", "n", "mean_diff", "note")


def _conventions(sd: str | Sequence[str]) -> list[str]:
    names = [sd] if isinstance(sd, str) else list(sd)
    bad = [s for s in names if s not in SD_CONVENTIONS]
    if bad:
        raise ValueError(f"unknown SD convention(s) {bad}; choose from {list(SD_CONVENTIONS)}")
    return names


def _pooled_sd(v1: float, v2: float, n1: int, n2: int, sd: str) -> float:
    if sd == "pooled":
        return float(np.sqrt(((n1 - 1) * v1 + (n2 - 1) * v2) / (n1 + n2 - 2)))
    return float(np.sqrt((v1 + v2) / 2.0))


def cohens_d(x, y, *, sd: str | Sequence[str] = "pooled", nan_policy: str = "omit") -> pd.DataFrame:
    """Cohen's d of ``x`` over ``y``, one row per SD convention in ``sd`` (formulas in the module
    docstring).

    Parameters
    ----------
    x, y : array_like
        The two groups (``x`` first: d > 0 when its mean is larger).
    sd : str or sequence of str
        "pooled" (Cohen 1988, eq. 2.5.2) and/or "average" (the root mean of the two variances).
    nan_policy : {"omit", "raise", "propagate"}
        Missing values, each group on its own (:func:`judgelab.stats.rules.missing_note`).

    Returns
    -------
    pandas.DataFrame
        One row per convention: sd_convention, d, n_x, n_y, mean_x, mean_y, note. NaN when a group
        has fewer than ``rules.MIN_PER_GROUP`` values or both groups have zero variance.

    Examples
    --------
    Means 4 and 3, variances 4 (n = 3) and 2.5 (n = 5): pooled SD sqrt((2 * 4 + 4 * 2.5) / 6) =
    sqrt(3), average SD sqrt((4 + 2.5) / 2) = sqrt(3.25).

    >>> out = cohens_d([2, 4, 6], [1, 2, 3, 4, 5], sd=("pooled", "average"))
    >>> out[["sd_convention", "d"]].round(4).values.tolist()
    [['pooled', 0.5774], ['average', 0.5547]]
    >>> cohens_d([1], [2, 3])["note"].iloc[0]
    '1 values in x < 2'
    """
    names = _conventions(sd)
    x, y, note, usable = rules.two_groups(x, y, nan_policy)
    n1, n2 = len(x), len(y)
    base = {"n_x": n1, "n_y": n2,
            "mean_x": float(x.mean()) if n1 else np.nan, "mean_y": float(y.mean()) if n2 else np.nan}
    problem = note if not usable else rules.group_problem(n1, n2, rules.MIN_PER_GROUP)
    v1 = float(x.var(ddof=1)) if n1 > 1 else np.nan
    v2 = float(y.var(ddof=1)) if n2 > 1 else np.nan
    tol = rules.tolerance(x, y)
    if not problem and rules.is_zero_spread(v1, tol) and rules.is_zero_spread(v2, tol):
        problem = "zero variance in both groups"  # within the tolerance (one constant group is fine)
    rows = []
    for s in names:
        if problem:
            rows.append(rules.undefined(D_COLUMNS, rules.join(problem, note),
                                        sd_convention=s, **base))
            continue
        d = (base["mean_x"] - base["mean_y"]) / _pooled_sd(v1, v2, n1, n2, s)
        rows.append({"sd_convention": s, "d": float(d), **base, "note": note})
    return rules.frame(rows, D_COLUMNS)


def cohens_d_from_summary(m1: float, s1: float, n1: int, m2: float, s2: float, n2: int,
                          sd: str = "pooled") -> float:
    """Cohen's d from reported means, SDs and group sizes (conventions as in :func:`cohens_d`), used to
    check a paper's own d against its own reported means and SDs.

    Parameters
    ----------
    m1, s1, n1 : float, float, int (or arrays)
        The first group's mean, SD (ddof = 1) and size; arrays broadcast (the claims scorecard's
        power simulation passes one value per simulated run).
    m2, s2, n2 : float, float, int (or arrays)
        The second group's.
    sd : {"pooled", "average"}
        The SD convention.

    Returns
    -------
    float or numpy.ndarray
        d (an array when any argument is one); NaN when the SD is 0 or (pooled) n1 + n2 <= 2.

    Examples
    --------
    The groups of :func:`cohens_d`'s example from their summary numbers:

    >>> round(cohens_d_from_summary(4.0, 2.0, 3, 3.0, 2.5 ** 0.5, 5), 4)
    0.5774
    >>> round(cohens_d_from_summary(4.0, 2.0, 3, 3.0, 2.5 ** 0.5, 5, sd="average"), 4)
    0.5547
    >>> cohens_d_from_summary(np.array([4.0, 3.0]), 2.0, 3, 3.0, np.array([2.5 ** 0.5, 0.0]), 5).round(4).tolist()
    [0.5774, 0.0]
    """
    (sd,) = _conventions(sd)
    if all(np.ndim(v) == 0 for v in (m1, s1, n1, m2, s2, n2)):
        if sd == "pooled" and n1 + n2 <= 2:
            return np.nan
        s = _pooled_sd(s1 ** 2, s2 ** 2, n1, n2, sd)
        return float((m1 - m2) / s) if s > 0 else np.nan
    m1, s1, n1, m2, s2, n2 = (np.asarray(v, float) for v in (m1, s1, n1, m2, s2, n2))
    with np.errstate(invalid="ignore", divide="ignore"):
        s = (np.sqrt(((n1 - 1) * s1 ** 2 + (n2 - 1) * s2 ** 2) / (n1 + n2 - 2)) if sd == "pooled"
             else np.sqrt((s1 ** 2 + s2 ** 2) / 2.0))
        d = (m1 - m2) / s
    return np.where((s > 0) & ((n1 + n2 > 2) | (sd != "pooled")), d, np.nan)


def cohens_dz(x, y, *, nan_policy: str = "omit") -> pd.DataFrame:
    """Cohen's d_z of paired data, mean(x - y) / sd(x - y) (Cohen 1988, eq. 2.3.5).

    Parameters
    ----------
    x, y : array_like
        Paired values, equally long.
    nan_policy : {"omit", "raise", "propagate"}
        Pairs missing a side (listwise).

    Returns
    -------
    pandas.DataFrame
        One row: d_z, n, mean_diff, note; NaN with fewer than ``rules.MIN_PAIRED`` pairs or constant
        differences (within ``rules.tolerance`` of the scores).

    Examples
    --------
    Differences 2, 3, 4, 5: mean 3.5, SD sqrt(5 / 3) = 1.2910, d_z = 2.7111.

    >>> cohens_dz([3, 5, 7, 9], [1, 2, 3, 4])[["d_z", "n", "mean_diff"]].round(4).values.tolist()
    [[2.7111, 4.0, 3.5]]
    >>> cohens_dz([2, 3], [1, 2])["note"].iloc[0]
    'constant differences'
    """
    x, y, note, usable = rules.paired(x, y, nan_policy)
    d = x - y
    base = {"n": len(d), "mean_diff": float(d.mean()) if len(d) else np.nan}
    problem = note if not usable else rules.paired_problem(d, tol=rules.tolerance(x, y))
    if problem:
        return rules.frame([rules.undefined(DZ_COLUMNS, rules.join(problem, note), **base)],
                           DZ_COLUMNS)
    return rules.frame([{"d_z": float(d.mean() / d.std(ddof=1)), **base, "note": note}], DZ_COLUMNS)


def auc(x, y, *, nan_policy: str = "omit") -> pd.DataFrame:
    """AUC-ROC with ``x`` the positive class: P(X > Y) + P(X = Y) / 2 (:func:`sklearn.metrics.roc_auc_score`;
    the Mann-Whitney U of x over n_x n_y).

    Parameters
    ----------
    x, y : array_like
        Scores of the positive and of the negative class.
    nan_policy : {"omit", "raise", "propagate"}
        Missing values, each group on its own.

    Returns
    -------
    pandas.DataFrame
        One row: auc, n_x, n_y, note; NaN when a group is empty.

    Examples
    --------
    Of the 9 pairs, x wins 8 and ties 1 (3 against 3): AUC = 8.5 / 9.

    >>> round(float(auc([3, 4, 5], [1, 2, 3])["auc"].iloc[0]), 4)
    0.9444
    >>> auc([], [1.0])["note"].iloc[0]
    '0 values in x < 1'
    """
    from sklearn.metrics import roc_auc_score

    x, y, note, usable = rules.two_groups(x, y, nan_policy)
    n1, n2 = len(x), len(y)
    if not usable:
        return rules.frame([rules.undefined(AUC_COLUMNS, note, n_x=n1, n_y=n2)], AUC_COLUMNS)
    problem = rules.group_problem(n1, n2, rules.MIN_PER_CLASS)
    if problem:
        return rules.frame([rules.undefined(AUC_COLUMNS, rules.join(problem, note), n_x=n1, n_y=n2)], AUC_COLUMNS)
    labels = np.r_[np.ones(n1), np.zeros(n2)]
    value = float(roc_auc_score(labels, rules.snap(np.r_[x, y])))  # values equal within the tolerance tie
    return rules.frame([{"auc": value, "n_x": n1, "n_y": n2, "note": note}], AUC_COLUMNS)


def cohens_d_ci(d, n1, n2, ci: float = 0.95) -> tuple:
    """Cohen's d with its normal-approximation interval, from d and the group sizes, vectorised.

    se(d) = sqrt((n1 + n2) / (n1 n2) + d^2 / (2 (n1 + n2))) (Hedges & Olkin 1985, *Statistical
    Methods for Meta-Analysis*, eq. 5.14); CI = d -+ z_(1+ci)/2 se.

    Parameters
    ----------
    d : float or array_like
        Cohen's d (pooled SD).
    n1, n2 : int or array_like
        The group sizes; arrays broadcast.
    ci : float
        Confidence level, default 0.95.

    Returns
    -------
    tuple
        ``(d, low, high)`` as float arrays; NaN where a group has fewer than 2 units.

    Examples
    --------
    d = 0.5 with 20 per group: se = sqrt(0.1 + 0.25 / 80) = 0.3211, half-width 1.96 * 0.3211.

    >>> [round(float(v), 4) for v in cohens_d_ci(0.5, 20, 20)]
    [0.5, -0.1294, 1.1294]
    """
    from scipy import stats

    d, n1, n2 = (np.asarray(v, float) for v in (d, n1, n2))
    z = stats.norm.ppf((1 + ci) / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.sqrt((n1 + n2) / (n1 * n2) + d ** 2 / (2 * (n1 + n2)))
    bad = (n1 < 2) | (n2 < 2)
    return tuple(np.where(bad, np.nan, v) for v in (d, d - z * se, d + z * se))


def auc_ci(a, n1, n2, ci: float = 0.95) -> tuple:
    """An AUC with its Hanley-McNeil interval, from the AUC and the class sizes, vectorised.

    With Q1 = A / (2 - A) and Q2 = 2 A^2 / (1 + A),
    se^2 = (A (1 - A) + (n1 - 1)(Q1 - A^2) + (n2 - 1)(Q2 - A^2)) / (n1 n2) (Hanley & McNeil 1982,
    *Radiology* 143:29, eq. 2); CI = A -+ z_(1+ci)/2 se, clipped to [0, 1].

    Parameters
    ----------
    a : float or array_like
        The AUC, P(X > Y) + P(X = Y) / 2.
    n1, n2 : int or array_like
        Positives and negatives; arrays broadcast.
    ci : float
        Confidence level, default 0.95.

    Returns
    -------
    tuple
        ``(a, low, high)`` as float arrays; NaN where a class is empty.

    Examples
    --------
    A = 0.8 with 50 per class, by hand: Q1 = 0.6667, Q2 = 0.7111,
    se^2 = (0.16 + 49 * 0.0267 + 49 * 0.0711) / 2500 = 0.00198, se = 0.0445.

    >>> [round(float(v), 4) for v in auc_ci(0.8, 50, 50)]
    [0.8, 0.7128, 0.8872]
    """
    from scipy import stats

    a, n1, n2 = (np.asarray(v, float) for v in (a, n1, n2))
    z = stats.norm.ppf((1 + ci) / 2)
    q1, q2 = a / (2 - a), 2 * a ** 2 / (1 + a)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = (a * (1 - a) + (n1 - 1) * (q1 - a ** 2) + (n2 - 1) * (q2 - a ** 2)) / (n1 * n2)
        se = np.sqrt(np.maximum(var, 0))
    lo, hi = np.clip(a - z * se, 0, 1), np.clip(a + z * se, 0, 1)
    bad = (n1 < 1) | (n2 < 1)
    return tuple(np.where(bad, np.nan, v) for v in (a, lo, hi))
