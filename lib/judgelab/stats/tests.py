"""Significance tests: Student and Welch t, paired t, Wilcoxon signed-rank, Mann-Whitney U,
one-way ANOVA, and the one entry point for multiple comparisons (:func:`adjust`).

- Student t (pooled variance) and Welch t (unequal variances): ``scipy.stats.ttest_ind``; Welch's
  degrees of freedom by Welch-Satterthwaite, df = (a + b)^2 / (a^2 / (n1 - 1) + b^2 / (n2 - 1))
  with a = s1^2 / n1, b = s2^2 / n2 (Welch 1947).
- Paired t: t = mean(d) / (sd(d) / sqrt(n)), d = x - y, n - 1 df (``scipy.stats.ttest_rel``).
- Wilcoxon signed-rank test of d = x - y, zero differences dropped (Wilcoxon 1945;
  ``scipy.stats.wilcoxon``, ``zero_method="wilcox"``).
- Mann-Whitney U of x vs y, two-sided (``scipy.stats.mannwhitneyu``); U / (n1 n2) is the AUC.
- One-way between-groups ANOVA, F = MS_between / MS_within with (k - 1, N - k) df and
  eta^2 = SS_between / SS_total (``pingouin.anova``; for one factor its partial eta^2 is eta^2).
- Holm (1979) step-down: p_adj(i) = max over j <= i of min(1, (m - j + 1) p(j)); Bonferroni:
  p_adj = min(1, m p) over m tests; Benjamini-Hochberg (1995, JRSS B 57:289) step-up FDR:
  p_adj(i) = min over j >= i of min(1, m p(j) / j); p sorted ascending
  (``statsmodels.stats.multitest.multipletests``; Holm written out, see :func:`_holm`).

Every function returns one row per test (a DataFrame) with a ``note``; small or degenerate input
follows :mod:`judgelab.stats.rules` (values equal within ``rules.tolerance`` of the data's scale
are equal; rank tests rank the values snapped to that grid).

Multiple comparisons: :func:`adjust` gives Holm (the default of every table), Bonferroni (the
SAGE paper's reading) and Benjamini-Hochberg over a stated family. No other module adjusts
p-values.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import stats

from judgelab.stats import rules

T_COLUMNS = ("test", "t", "df", "p", "n_x", "n_y", "note")
PAIRED_COLUMNS = ("test", "t", "df", "p", "n", "mean_diff", "note")
WILCOXON_COLUMNS = ("test", "w", "p", "n", "n_nonzero", "note")
U_COLUMNS = ("test", "u", "p", "n_x", "n_y", "note")
ANOVA_COLUMNS = ("k_groups", "n", "F", "df_between", "df_within", "p", "eta2", "note")


def ttest(x, y, *, equal_var: bool = True, nan_policy: str = "omit") -> pd.DataFrame:
    """Student (``equal_var=True``) or Welch t-test of x vs y, two-sided (``scipy.stats.ttest_ind``;
    Welch's df by Welch-Satterthwaite, module docstring).

    Parameters
    ----------
    x, y : array_like
        The two independent groups.
    equal_var : bool
        True: Student's pooled-variance test; False: Welch's.
    nan_policy : {"omit", "raise", "propagate"}
        Missing values, each group on its own.

    Returns
    -------
    pandas.DataFrame
        One row: test ("student" / "welch"), t, df, p, n_x, n_y, note. NaN with fewer than 2 values
        in a group or zero variance in both.

    Examples
    --------
    Means 3 and 5, both variances 2.5, n = 5 each: se = sqrt(2.5 (1/5 + 1/5)) = 1, t = -2 on 8 df,
    two-sided p = 0.0805 (t table). Welch, variances 1 (n = 3) and 20 / 3 (n = 4): a = 1/3, b = 5/3,
    t = -5 / sqrt(2) = -3.5355, df = 4 / ((1/9) / 2 + (25/9) / 3) = 4.0755.

    >>> ttest([1, 2, 3, 4, 5], [3, 4, 5, 6, 7])[["t", "df", "p"]].round(4).values.tolist()
    [[-2.0, 8.0, 0.0805]]
    >>> ttest([1, 2, 3], [4, 6, 8, 10], equal_var=False)[["t", "df"]].round(4).values.tolist()
    [[-3.5355, 4.0755]]
    """
    name = "student" if equal_var else "welch"
    x, y, note, usable = rules.two_groups(x, y, nan_policy)
    n1, n2 = len(x), len(y)
    problem = note if not usable else rules.group_problem(n1, n2, rules.MIN_PER_GROUP)
    tol = rules.tolerance(x, y)
    if not problem and rules.is_zero_spread(x.var(), tol) and rules.is_zero_spread(y.var(), tol):
        problem = "zero variance in both groups"  # within the tolerance
    if problem:
        row = rules.undefined(T_COLUMNS, rules.join(problem, note), test=name, n_x=n1, n_y=n2)
        return rules.frame([row], T_COLUMNS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = stats.ttest_ind(x, y, equal_var=equal_var)
    if equal_var:
        df = n1 + n2 - 2
    else:
        a, b = x.var(ddof=1) / n1, y.var(ddof=1) / n2
        df = (a + b) ** 2 / (a ** 2 / (n1 - 1) + b ** 2 / (n2 - 1))
    row = {"test": name, "t": float(res.statistic), "df": float(df), "p": float(res.pvalue),
           "n_x": n1, "n_y": n2, "note": note}
    return rules.frame([row], T_COLUMNS)


def paired_ttest(x, y, *, nan_policy: str = "omit") -> pd.DataFrame:
    """Paired-samples t-test of x - y: t = mean(d) / (sd(d) / sqrt(n)) on n - 1 df (``scipy.stats.ttest_rel``).

    Parameters
    ----------
    x, y : array_like
        Paired values, equally long.
    nan_policy : {"omit", "raise", "propagate"}
        Pairs missing a side (listwise).

    Returns
    -------
    pandas.DataFrame
        One row: test ("paired_t"), t, df, p, n, mean_diff, note; NaN with fewer than 2 pairs or
        constant differences.

    Examples
    --------
    Differences 2, 3, 4, 5: mean 3.5, SD 1.2910, se 0.6455, t = 5.4222 on 3 df.

    >>> paired_ttest([3, 5, 7, 9], [1, 2, 3, 4])[["t", "df", "p", "mean_diff"]].round(4).values.tolist()
    [[5.4222, 3.0, 0.0123, 3.5]]
    """
    x, y, note, usable = rules.paired(x, y, nan_policy)
    d = x - y
    n = len(d)
    mean_diff = float(d.mean()) if n else np.nan
    problem = note if not usable else rules.paired_problem(d, tol=rules.tolerance(x, y))
    if problem:
        row = rules.undefined(PAIRED_COLUMNS, rules.join(problem, note), test="paired_t", n=n,
                              mean_diff=mean_diff, df=float(n - 1) if n >= rules.MIN_PAIRED else np.nan)
        return rules.frame([row], PAIRED_COLUMNS)
    res = stats.ttest_rel(x, y)
    row = {"test": "paired_t", "t": float(res.statistic), "df": float(n - 1), "p": float(res.pvalue), "n": n,
           "mean_diff": mean_diff, "note": note}
    return rules.frame([row], PAIRED_COLUMNS)


def wilcoxon(x, y, *, nan_policy: str = "omit") -> pd.DataFrame:
    """Wilcoxon signed-rank test of x - y, zero differences dropped (``scipy.stats.wilcoxon``).

    Parameters
    ----------
    x, y : array_like
        Paired values, equally long.
    nan_policy : {"omit", "raise", "propagate"}
        Pairs missing a side (listwise).

    Returns
    -------
    pandas.DataFrame
        One row: test ("wilcoxon"), w (the smaller signed-rank sum), p, n, n_nonzero, note; NaN with
        fewer than ``rules.MIN_PAIRED`` non-zero differences.

    Examples
    --------
    Differences 1, 2, 3, -4, 5: the negative ranks sum to W = 4; 7 of the 32 sign patterns give a
    sum <= 4, so the exact two-sided p is 2 * 7 / 32 = 0.4375.

    >>> wilcoxon([2, 4, 6, 0, 10], [1, 2, 3, 4, 5])[["w", "p", "n_nonzero"]].values.tolist()
    [[4.0, 0.4375, 5.0]]
    """
    x, y, note, usable = rules.paired(x, y, nan_policy)
    d = rules.snap(x - y, rules.tolerance(x, y))  # differences equal within the tolerance tie (or are 0)
    nonzero = int(np.count_nonzero(d))
    base = {"test": "wilcoxon", "n": len(d), "n_nonzero": nonzero}
    problem = "" if usable else note
    if not problem and len(d) < rules.MIN_PAIRED:
        problem = rules.too_few(len(d), rules.MIN_PAIRED, "pairs")
    elif not problem and nonzero < rules.MIN_PAIRED:
        problem = "all differences 0" if not nonzero else rules.too_few(nonzero, rules.MIN_PAIRED,
                                                                         "non-zero differences")
    if not problem:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                res = stats.wilcoxon(d)  # the rounded differences: equal ones tie
            except ValueError as exc:  # scipy's own refusal, worded as a note
                problem = f"Wilcoxon undefined: {exc}"
    if problem:
        return rules.frame([rules.undefined(WILCOXON_COLUMNS, rules.join(problem, note),
                                            **base)], WILCOXON_COLUMNS)
    row = {**base, "w": float(res.statistic), "p": float(res.pvalue), "note": note}
    return rules.frame([row], WILCOXON_COLUMNS)


def mann_whitney(x, y, *, nan_policy: str = "omit") -> pd.DataFrame:
    """Two-sided Mann-Whitney U test of x vs y (``scipy.stats.mannwhitneyu``); U / (n_x n_y) is the AUC.

    Parameters
    ----------
    x, y : array_like
        The two independent groups.
    nan_policy : {"omit", "raise", "propagate"}
        Missing values, each group on its own.

    Returns
    -------
    pandas.DataFrame
        One row: test ("mann_whitney"), u (x's U), p, n_x, n_y, note; NaN when a group is empty.

    Examples
    --------
    x wins 8 of the 9 pairs and ties 1: U = 8.5 (= 9 x the AUC of :func:`judgelab.stats.effects.auc`).

    >>> float(mann_whitney([3, 4, 5], [1, 2, 3])["u"].iloc[0])
    8.5
    """
    x, y, note, usable = rules.two_groups(x, y, nan_policy)
    n1, n2 = len(x), len(y)
    problem = ("" if usable else note) or rules.group_problem(n1, n2, rules.MIN_PER_CLASS)
    if problem:
        row = rules.undefined(U_COLUMNS, rules.join(problem, note), test="mann_whitney",
                              n_x=n1, n_y=n2)
        return rules.frame([row], U_COLUMNS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        tol = rules.tolerance(x, y)
        res = stats.mannwhitneyu(rules.snap(x, tol), rules.snap(y, tol), alternative="two-sided")
    row = {"test": "mann_whitney", "u": float(res.statistic), "p": float(res.pvalue), "n_x": n1, "n_y": n2,
           "note": note}
    return rules.frame([row], U_COLUMNS)


def anova(data: pd.DataFrame, dv: str, between: str, *, nan_policy: str = "omit") -> pd.DataFrame:
    """One-way between-groups ANOVA of ``dv`` on ``between`` (``pingouin.anova``).

    Parameters
    ----------
    data : pandas.DataFrame
        Long data, one row per unit.
    dv : str
        The column of the values.
    between : str
        The column of the groups.
    nan_policy : {"omit", "raise", "propagate"}
        Rows with a missing ``dv``.

    Returns
    -------
    pandas.DataFrame
        One row: k_groups (groups with values), n, F, df_between, df_within, p, eta2, note. NaN with
        fewer than 2 groups, no within-group df, constant values (F = 0/0) or no variance within any
        group (F infinite).

    Examples
    --------
    Groups 1, 2, 3 and 4, 5, 6: SS_between = 13.5 on 1 df, SS_within = 4 on 4 df, F = 13.5,
    eta^2 = 13.5 / 17.5 = 0.7714 (and F = t^2 of the Student t-test).

    >>> df = pd.DataFrame({"y": [1, 2, 3, 4, 5, 6], "g": list("aaabbb")})
    >>> anova(df, "y", "g")[["F", "df_between", "df_within", "p", "eta2"]].round(4).values.tolist()
    [[13.5, 1.0, 4.0, 0.0213, 0.7714]]
    """
    import pingouin as pg

    rules.require_columns(data, [dv, between], "anova data")
    values = pd.to_numeric(data[dv], errors="coerce")
    miss = values.isna().to_numpy()
    note, usable = rules.missing_note(int(miss.sum()), nan_policy, f"column {dv!r}")
    sub = pd.DataFrame({"dv": values[~miss].to_numpy(float), "group": data[between].to_numpy()[~miss]})
    k = int(sub["group"].nunique())
    base = {"k_groups": k, "n": len(sub)}
    problem = "" if usable else note
    if not problem:
        if not len(sub):
            problem = rules.EMPTY
        elif k < 2:
            problem = rules.too_few(k, 2, "groups")
        elif len(sub) - k < 1:
            problem = "no within-group df (one value per group)"
        elif rules.is_constant(sub["dv"]):
            problem = "constant values"
        elif all(rules.is_zero_spread(v, rules.tolerance(sub["dv"]))
                 for v in sub.groupby("group")["dv"].var(ddof=1).fillna(0)):
            problem = "no variance within any group"
    if problem:
        return rules.frame([rules.undefined(ANOVA_COLUMNS, rules.join(problem, note), **base)],
                           ANOVA_COLUMNS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = pg.anova(data=sub, dv="dv", between="group", detailed=False)
    p_col = next(c for c in ("p_unc", "p-unc", "p_val", "p-val") if c in a.columns)  # renamed in pingouin 0.7
    row = {**base, "F": float(a["F"].iloc[0]), "df_between": int(a["ddof1"].iloc[0]),
           "df_within": int(a["ddof2"].iloc[0]), "p": float(a[p_col].iloc[0]), "eta2": float(a["np2"].iloc[0]),
           "note": note}
    return rules.frame([row], ANOVA_COLUMNS)


MC_METHODS = ("holm", "bonferroni")
"""Holm (1979) step-down, the default of every table, and Bonferroni, the SAGE paper's reading."""


def adjust(p, n_tests: int | None = None, method: str = "holm") -> np.ndarray:
    """p-values adjusted over a stated family: the project's one multiple-comparison entry point.

    When the family is larger than the tests defined here (a missing category leaves a test
    undefined) the family does not shrink: the undefined tests enter as p = 1, which for Holm and
    Bonferroni is the most conservative completion (for Bonferroni it is exactly min(1, m p)).

    Parameters
    ----------
    p : array_like
        The family's p-values; NaN for a test that is undefined (it stays NaN).
    n_tests : int, optional
        The family's size m; default the number of finite p-values. A table whose every row is in
        the family passes ``len(p)``.
    method : {"holm", "bonferroni", "fdr_bh"}
        Holm's step-down (the default of every table), Bonferroni (the SAGE paper's reading) or
        Benjamini-Hochberg's step-up FDR (``statsmodels.stats.multitest.multipletests``).

    Returns
    -------
    numpy.ndarray
        The adjusted p-values, in the order given.

    Examples
    --------
    >>> adjust([0.01, 0.04, 0.03]).round(4).tolist()
    [0.03, 0.06, 0.06]
    >>> adjust([0.01, 0.04, np.nan], 3, "bonferroni").round(4).tolist()
    [0.03, 0.12, nan]
    >>> adjust([0.04, 0.01, 0.02], method="fdr_bh").round(4).tolist()
    [0.04, 0.03, 0.03]
    """
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(p, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    if not ok.any():
        return out
    m = int(ok.sum()) if n_tests is None else int(n_tests)
    if m < ok.sum():
        raise ValueError(f"n_tests={m} is smaller than the {int(ok.sum())} p-values given")
    padded = np.r_[p[ok], np.ones(m - int(ok.sum()))]
    adjusted = _holm(padded) if method == "holm" else multipletests(padded, method=method)[1]
    out[ok] = adjusted[: int(ok.sum())]
    return out


def _holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment, p_adj(i) = max_{j <= i} min(1, (m - j + 1) p(j)) over the
    ascending p(j). Written out because statsmodels' ``multipletests(method="holm")`` (the reference
    in the tests, equal to 1e-15) calls ``gc.collect()`` on every call: ~0.5 s each here, and the
    tables adjust dozens of families inside loops."""
    order = np.argsort(p, kind="mergesort")
    m = len(p)
    stepped = np.minimum(1.0, np.maximum.accumulate(p[order] * np.arange(m, 0, -1)))
    out = np.empty(m)
    out[order] = stepped
    return out
