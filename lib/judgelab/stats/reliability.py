"""Inter-rater reliability over long data (one row per rating): ICC, Krippendorff's alpha,
Kendall's W.

Every function takes ``data`` with a ``targets`` column (the rated items), a ``raters`` column
and a ``ratings`` column, as :func:`pingouin.intraclass_corr` does, and returns one row per
estimate with a ``note``; small or degenerate input follows :mod:`judgelab.stats.rules`
(>= 3 items, >= 2 raters, not all ratings equal).

- ICC in the six Shrout & Fleiss (1979) forms ("Intraclass correlations: uses in assessing rater
  reliability", Psychol. Bull. 86:420; McGraw & Wong 1996), from the mean squares of rows
  (items, MSR), columns (raters, MSC), residual (MSE) and within rows (MSW), n items, k raters:
  ICC1  = (MSR - MSW) / (MSR + (k-1) MSW)                   one-way random, single rating;
  ICC2  = (MSR - MSE) / (MSR + (k-1) MSE + k (MSC - MSE)/n) two-way random, absolute agreement;
  ICC3  = (MSR - MSE) / (MSR + (k-1) MSE)                   two-way mixed, consistency;
  ICC1k = (MSR - MSW) / MSR; ICC2k = (MSR - MSE) / (MSR + (MSC - MSE)/n);
  ICC3k = (MSR - MSE) / MSR                                 (the mean of the k ratings).
  Point estimates, F, df and p by :func:`pingouin.intraclass_corr`, through one adapter
  (:func:`_pingouin_icc`) that maps pingouin's labels and column names across versions (before
  0.7: "ICC2", "CI95%"; 0.7: McGraw & Wong's "ICC(A,1)", "CI95"). The 95% CIs are pingouin's
  F-based ones (Shrout & Fleiss 1979; McGraw & Wong 1996, Table 7; ICC2 with Satterthwaite's
  df) computed here *unrounded* (:func:`icc_ci`): pingouin rounds them to 2 decimals, so with
  9,600 pairs an ICC of 0.998877 came with the CI [1.0, 1.0], which excludes its own estimate.
  Two designs make the ICC undefined beyond constant ratings (mean squares compared with the
  tolerance of :mod:`judgelab.stats.rules`): no variance between items (MSR = 0, e.g. raters who
  differ only by an offset: every form is 0 / 0, -inf or a bound, NaN with a note), and no
  residual variance (MSE = MSW = 0, every rater gives each item the same rating: ICC = 1 in every
  form, F infinite, the CI undefined: NaN with a note).
  ICC needs complete data: items missing a rating are dropped (nan_policy "omit") and counted.
- Krippendorff's alpha = 1 - D_o / D_e, observed over expected disagreement of the pairable values
  (Krippendorff 2011, "Computing Krippendorff's alpha-reliability"), metric "nominal",
  "ordinal", "interval" or "ratio", by the ``krippendorff`` package. Missing ratings are part of
  the method: an item with one rating is not pairable and does not count.
- Kendall's W with the tie correction: mid-ranks r_ij of each rater's scores over the n items,
  R_i = sum_j r_ij, S = sum_i (R_i - m (n+1)/2)^2, T = sum_j sum_g (t_g^3 - t_g) over rater j's
  tie groups, W = 12 S / (m^2 (n^3 - n) - m T) (Kendall & Babington Smith 1939; Siegel &
  Castellan 1988, eq. 9.18); chi^2 = m (n - 1) W with n - 1 df (Friedman's tie-corrected test).
  Complete cases, as for the ICC.
"""
from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from judgelab.stats import rules

ICC_FORMS: dict[str, tuple[str, ...]] = {
    # Shrout & Fleiss name -> pingouin labels (before 0.7, 0.7 = McGraw & Wong's)
    "ICC1": ("ICC1", "ICC(1,1)"),
    "ICC2": ("ICC2", "ICC(A,1)"),
    "ICC3": ("ICC3", "ICC(C,1)"),
    "ICC1k": ("ICC1k", "ICC(1,k)"),
    "ICC2k": ("ICC2k", "ICC(A,k)"),
    "ICC3k": ("ICC3k", "ICC(C,k)"),
}
ICC_COLUMNS = ("form", "icc", "ci_low", "ci_high", "F", "df1", "df2", "p", "n_items", "n_raters", "note")
ALPHA_COLUMNS = ("alpha", "level", "n_items", "n_raters", "n_values", "note")
ALPHA_LEVELS = ("nominal", "ordinal", "interval", "ratio")
W_COLUMNS = ("w", "chi2", "df", "p", "n_items", "n_raters", "note")


def rating_matrix(data: pd.DataFrame, targets: str, raters: str, ratings: str) -> pd.DataFrame:
    """Items x raters matrix of ``ratings`` (NaN where a rater did not rate an item).

    Parameters
    ----------
    data : pandas.DataFrame
        Long ratings, one row per (item, rater).
    targets, raters, ratings : str
        The columns of the items, the raters and the ratings.

    Returns
    -------
    pandas.DataFrame
        Index the items, columns the raters. Two ratings of one item by one rater, or a rating that is
        not a number, are a ValueError naming them.

    Examples
    --------
    >>> long = pd.DataFrame({"item": [1, 1, 2], "rater": ["a", "b", "a"], "score": [3, 4, 5]})
    >>> rating_matrix(long, "item", "rater", "score").values.tolist()
    [[3.0, 4.0], [5.0, nan]]
    """
    rules.require_columns(data, [targets, raters, ratings], "ratings data")
    dup = data.duplicated([targets, raters])
    if dup.any():
        r = data[dup].iloc[0]
        raise ValueError(f"ratings data: rater {str(r[raters])!r} rated item {str(r[targets])!r} more than once")
    values = pd.to_numeric(data[ratings], errors="coerce")
    bad = values.isna() & data[ratings].notna()
    if bad.any():
        raise ValueError(f"ratings data: column {ratings!r} holds a non-number: {str(data.loc[bad, ratings].iloc[0])!r}")
    long = pd.DataFrame({"t": data[targets].to_numpy(), "r": data[raters].to_numpy(), "y": values.to_numpy(float)})
    return long.pivot(index="t", columns="r", values="y")


def _design_problem(matrix: pd.DataFrame, min_items: int = rules.MIN_ITEMS) -> str:
    """The rules' note for a complete items x raters matrix, or ""."""
    n, k = matrix.shape
    if n == 0 and k == 0:
        return rules.EMPTY
    if k < rules.MIN_RATERS:
        return rules.ONE_RATER if k == 1 else rules.too_few(k, rules.MIN_RATERS, "raters")
    if n < min_items:
        return rules.too_few(n, min_items, "items")
    if rules.is_constant(matrix.to_numpy(float)):
        return rules.CONSTANT
    return ""


NO_ITEM_VARIANCE = "no variance between items (MSR = 0: raters differ at most by an offset); ICC undefined"
RATERS_AGREE = "raters agree on every item (MSE = MSW = 0): ICC = 1, F and its CI undefined"


def mean_squares(matrix: pd.DataFrame) -> dict[str, float]:
    """Two-way ANOVA mean squares of a complete items x raters matrix.

    The residual sum of squares is summed from the residuals x_ij - row_i - col_j + grand
    themselves, not taken as SST - SSR - SSC: that difference keeps rounding noise of SST's size
    (~1e-15 relative), so raters who agree on every item got MSE > 0, an ICC above 1 and F < 0.

    Parameters
    ----------
    matrix : pandas.DataFrame
        Items x raters, complete (no NaN), n >= 2 items and k >= 2 raters.

    Returns
    -------
    dict
        msr (items, n - 1 df), msc (raters, k - 1 df), mse (residual, (n - 1)(k - 1) df), msw
        (within items, n (k - 1) df), n, k.

    Examples
    --------
    >>> ms = mean_squares(pd.DataFrame([[1.0, 2.0], [2.0, 3.0], [4.0, 5.0]]))
    >>> round(ms["msr"], 6), round(ms["msc"], 6), ms["mse"]
    (4.666667, 1.5, 0.0)
    """
    x = matrix.to_numpy(float)
    n, k = x.shape
    grand = x.mean()
    rows, cols = x.mean(axis=1), x.mean(axis=0)
    ssr = k * float(((rows - grand) ** 2).sum())
    ssc = n * float(((cols - grand) ** 2).sum())
    sse = float(((x - rows[:, None] - cols[None, :] + grand) ** 2).sum())
    return {"msr": ssr / (n - 1), "msc": ssc / (k - 1), "mse": sse / ((n - 1) * (k - 1)),
            "msw": (sse + ssc) / (n * (k - 1)), "n": n, "k": k}


def icc_ci(ms: dict[str, float], icc2: float, level: float = 0.95) -> dict[str, tuple[float, float]]:
    """The F-based CIs of the six ICC forms, unrounded (the formulas of pingouin 0.5's
    ``intraclass_corr``, from Shrout & Fleiss 1979 and McGraw & Wong 1996; ICC2 with the
    Satterthwaite df v).

    Parameters
    ----------
    ms : dict
        :func:`mean_squares` of the items x raters matrix (msr, msc, mse, msw, n, k); the mean squares
        may be arrays of equal shape (then every bound is an array).
    icc2 : float or array
        The ICC(2,1) point estimate (its CI's Satterthwaite df depends on it).
    level : float
        Confidence level, default 0.95.

    Returns
    -------
    dict
        Form name ("ICC1" ... "ICC3k") -> (low, high).

    Examples
    --------
    Shrout & Fleiss's (1979) Table 2 data; pingouin's documented example gives the ICC2 CI
    [0.02, 0.76] and the ICC3 CI [0.34, 0.95].

    >>> sf = pd.DataFrame([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]])
    >>> ci = icc_ci(mean_squares(sf), 0.2897638)
    >>> [round(float(v), 2) for v in ci["ICC2"]], [round(float(v), 2) for v in ci["ICC3"]]
    ([0.02, 0.76], [0.34, 0.95])
    """
    from scipy.stats import f

    n, k = ms["n"], ms["k"]
    # numpy floats: raters who differ only by an offset (MSE = 0) give inf, not ZeroDivisionError
    msr, msc, mse, msw = (np.float64(ms[k]) for k in ("msr", "msc", "mse", "msw"))
    q = 1 - (1 - level) / 2
    df1, df1w, df2e = n - 1, n * (k - 1), (n - 1) * (k - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        f1, f3 = msr / msw, msr / mse
        f1l, f1u = f1 / f.ppf(q, df1, df1w), f1 * f.ppf(q, df1w, df1)
        f3l, f3u = f3 / f.ppf(q, df1, df2e), f3 * f.ppf(q, df2e, df1)
        fj = msc / mse
        base = n * (1 + (k - 1) * icc2) - k * icc2
        v = df2e * (k * icc2 * fj + base) ** 2 / (df1 * k ** 2 * icc2 ** 2 * fj ** 2 + base ** 2)
        f2u, f2l = f.ppf(q, n - 1, v), f.ppf(q, v, n - 1)
        den = k * msc + (k * n - k - n) * mse
        l2 = n * (msr - f2u * mse) / (f2u * den + n * msr)
        u2 = n * (f2l * msr - mse) / (den + n * f2l * msr)
        return {"ICC1": ((f1l - 1) / (f1l + k - 1), (f1u - 1) / (f1u + k - 1)),
                "ICC2": (l2, u2),
                "ICC3": ((f3l - 1) / (f3l + k - 1), (f3u - 1) / (f3u + k - 1)),
                "ICC1k": (1 - 1 / f1l, 1 - 1 / f1u),
                "ICC2k": (l2 * k / (1 + l2 * (k - 1)), u2 * k / (1 + u2 * (k - 1))),
                "ICC3k": (1 - 1 / f3l, 1 - 1 / f3u)}


def icc_from_f(f, n, k, level: float = 0.95) -> tuple:
    """ICC(1) with its F-based interval from the one-way ANOVA F ratio, vectorised: the ICC a
    paper's summary numbers allow (its F, n targets, k raters) when the ratings are not at hand.

    ICC(1) = (F - 1) / (F + k - 1); with F_L = F / F_(q; n-1, n(k-1)) and
    F_U = F F_(q; n(k-1), n-1), q = (1 + level) / 2, the interval is
    ((F_L - 1) / (F_L + k - 1), (F_U - 1) / (F_U + k - 1)) (Shrout & Fleiss 1979, case 1).

    Parameters
    ----------
    f : float or array_like
        F = MS_between / MS_within of the one-way ANOVA.
    n, k : int or array_like
        Targets and raters; arrays broadcast.
    level : float
        Confidence level, default 0.95.

    Returns
    -------
    tuple
        ``(icc, low, high)`` as float arrays; NaN where n < 3 or k < 2.

    Examples
    --------
    Shrout & Fleiss's (1979) Table 2 data (6 targets, 4 judges): BMS = 11.24, WMS = 6.26, so
    F = 1.795 and ICC(1,1) = 0.17 (their Table 4).

    >>> [round(float(v), 2) for v in icc_from_f(11.24 / 6.26, 6, 4)]
    [0.17, -0.13, 0.72]
    """
    from scipy.stats import f as f_dist

    f, n, k = (np.asarray(v, float) for v in (f, n, k))
    q = (1 + level) / 2
    df1, df2 = n - 1, n * (k - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        est = (f - 1) / (f + k - 1)
        fl = f / f_dist.ppf(q, df1, df2)
        fu = f * f_dist.ppf(q, df2, df1)
        lo, hi = (fl - 1) / (fl + k - 1), (fu - 1) / (fu + k - 1)
    bad = (n < 3) | (k < 2)
    return tuple(np.where(bad, np.nan, v) for v in (est, lo, hi))


def icc2_1(scores, level: float = 0.95) -> tuple:
    """ICC(2,1) with its F-based interval of a (..., n targets, k raters) array, vectorised over
    the leading axes (Shrout & Fleiss 1979, case 2: two-way random, absolute agreement; McGraw &
    Wong's 1996 interval with Satterthwaite's df, the ``ICC2`` row of :func:`icc` and of
    :func:`pingouin.intraclass_corr`): the ICC of the narrative paper's Table 3, for many
    simulated data sets at once.

    The mean squares are those of :func:`mean_squares` (the residual summed from the residuals),
    the interval that of :func:`icc_ci`.

    Parameters
    ----------
    scores : array_like
        Complete ratings, shape (..., n, k).
    level : float
        Confidence level, default 0.95.

    Returns
    -------
    tuple
        ``(icc, low, high)`` as float arrays of the leading shape; NaN where n < 3 or k < 2. No
        degeneracy notes: for one table with its notes use :func:`icc`.

    Examples
    --------
    Shrout & Fleiss's (1979) Table 2: ICC(2,1) = 0.29 (their Table 4; pingouin's example gives
    0.29 [0.02, 0.76]).

    >>> sf = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    >>> [round(float(v), 2) for v in icc2_1(sf)]
    [0.29, 0.02, 0.76]
    """
    x = np.asarray(scores, float)
    n, k = x.shape[-2], x.shape[-1]
    grand = x.mean(axis=(-2, -1), keepdims=True)
    rows, cols = x.mean(axis=-1, keepdims=True), x.mean(axis=-2, keepdims=True)
    ssc = n * ((cols - grand) ** 2).sum(axis=(-2, -1))
    sse = ((x - rows - cols + grand) ** 2).sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        ms = {"msr": k * ((rows - grand) ** 2).sum(axis=(-2, -1)) / (n - 1), "msc": ssc / (k - 1),
              "mse": sse / ((n - 1) * (k - 1)), "msw": (sse + ssc) / (n * (k - 1)), "n": n, "k": k}
        est = (ms["msr"] - ms["mse"]) / (ms["msr"] + (k - 1) * ms["mse"] + k * (ms["msc"] - ms["mse"]) / n)
    lo, hi = icc_ci(ms, est, level)["ICC2"]
    bad = (n < 3) | (k < 2)
    return tuple(np.where(bad, np.nan, v) for v in (est, lo, hi))


def _icc_design(ms: dict[str, float], tol: float) -> str:
    """The note for a design whose mean squares make the ICC undefined (module docstring), or ""."""
    if rules.is_zero_spread(ms["msr"], tol):
        return NO_ITEM_VARIANCE
    if rules.is_zero_spread(ms["mse"], tol) and rules.is_zero_spread(ms["msw"], tol):
        return RATERS_AGREE
    return ""


def complete_items(data: pd.DataFrame, targets: str, raters: str, ratings: str,
                   nan_policy: str) -> tuple[pd.DataFrame, str, bool]:
    """The items x raters matrix restricted to items rated by every rater, the note, and whether an
    estimate can be made (``nan_policy`` on the items missing a rating: "omit" drops and counts them).

    Parameters
    ----------
    data : pandas.DataFrame
        Long ratings.
    targets, raters, ratings : str
        The columns of the items, the raters and the ratings.
    nan_policy : {"omit", "raise", "propagate"}
        Items missing a rating.

    Returns
    -------
    tuple
        (matrix, note, usable).

    Examples
    --------
    >>> long = pd.DataFrame({"item": [1, 1, 2], "rater": ["a", "b", "a"], "score": [3, 4, 5]})
    >>> m, note, usable = complete_items(long, "item", "rater", "score", "omit")
    >>> m.values.tolist(), note, usable
    ([[3.0, 4.0]], 'NaN dropped: 1', True)
    """
    rules.check_policy(nan_policy)
    if data.empty:
        return pd.DataFrame(), "", True
    m = rating_matrix(data, targets, raters, ratings)
    incomplete = m.isna().any(axis=1)
    note, usable = rules.missing_note(int(incomplete.sum()), nan_policy, f"items missing a {ratings!r}")
    return m[~incomplete], note, usable


def _pingouin_icc(matrix: pd.DataFrame) -> pd.DataFrame:
    """pingouin's ICC table for a complete items x raters matrix, indexed by Shrout & Fleiss name
    with columns icc, ci_low, ci_high, F, df1, df2, p -- whatever pingouin version is installed."""
    import pingouin as pg

    long = matrix.reset_index(drop=True).rename_axis("item").reset_index().melt(
        id_vars="item", var_name="rater", value_name="rating")
    long["rater"] = long["rater"].astype(str)
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore")
        res = pg.intraclass_corr(data=long, targets="item", raters="rater", ratings="rating").set_index("Type")
    p = next(c for c in res.columns if c.lower().replace("-", "").replace("_", "") in ("pval", "punc"))
    rows = {}
    for name, labels in ICC_FORMS.items():
        label = next((lab for lab in labels if lab in res.index), None)
        if label is None:
            raise RuntimeError(f"pingouin {pg.__version__} has none of the ICC labels {labels}; update ICC_FORMS")
        rows[name] = {"icc": float(res.at[label, "ICC"]), "F": float(res.at[label, "F"]), "df1": float(res.at[label, "df1"]),
                      "df2": float(res.at[label, "df2"]), "p": float(res.at[label, p])}
    table = pd.DataFrame.from_dict(rows, orient="index")
    cis = icc_ci(mean_squares(matrix), float(table.at["ICC2", "icc"]))  # unrounded (pingouin rounds)
    table.insert(1, "ci_low", [float(cis[f][0]) for f in table.index])
    table.insert(2, "ci_high", [float(cis[f][1]) for f in table.index])
    return table


def icc(data: pd.DataFrame, targets: str, raters: str, ratings: str, *,
        forms: Sequence[str] = ("ICC2", "ICC2k"), nan_policy: str = "omit") -> pd.DataFrame:
    """Intraclass correlations of long ratings, one row per requested Shrout & Fleiss ``form``
    ("ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k"; formulas in the module docstring), as
    :func:`pingouin.intraclass_corr` with unrounded CIs.

    Parameters
    ----------
    data : pandas.DataFrame
        Long ratings, one row per (item, rater).
    targets, raters, ratings : str
        The columns of the items, the raters and the ratings.
    forms : str or sequence of str
        The forms to report; default ICC(2,1) and ICC(2,k).
    nan_policy : {"omit", "raise", "propagate"}
        Items missing a rating (listwise: ICC needs complete items).

    Returns
    -------
    pandas.DataFrame
        One row per form: form, icc, ci_low, ci_high (95%, F-based, unrounded: :func:`icc_ci`), F,
        df1, df2, p, n_items (complete items used), n_raters, note. No variance between items: NaN
        with a note; raters agreeing on every item: icc = 1, F = inf, p = 0, the CI NaN with a note.

    Examples
    --------
    Shrout & Fleiss's (1979) Table 2 (6 targets, 4 judges); their Table 4 gives ICC(1,1) = 0.17,
    ICC(2,1) = 0.29, ICC(3,1) = 0.71, ICC(2,4) = 0.62, ICC(3,4) = 0.91.

    >>> sf = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    >>> long = pd.DataFrame([(i, j, v) for i, row in enumerate(sf) for j, v in enumerate(row)],
    ...                     columns=["item", "judge", "rating"])
    >>> out = icc(long, "item", "judge", "rating", forms=("ICC1", "ICC2", "ICC3", "ICC2k", "ICC3k"))
    >>> out.set_index("form")["icc"].round(2).to_dict()
    {'ICC1': 0.17, 'ICC2': 0.29, 'ICC3': 0.71, 'ICC2k': 0.62, 'ICC3k': 0.91}
    """
    forms = [forms] if isinstance(forms, str) else list(forms)
    bad = [f for f in forms if f not in ICC_FORMS]
    if bad:
        raise ValueError(f"unknown ICC form(s) {bad}; choose from {list(ICC_FORMS)}")
    matrix, note, usable = complete_items(data, targets, raters, ratings, nan_policy)
    base = {"n_items": int(matrix.shape[0]), "n_raters": int(matrix.shape[1])}
    problem = note if not usable else _design_problem(matrix)
    if not problem:
        ms = mean_squares(matrix)
        design = _icc_design(ms, rules.tolerance(matrix.to_numpy(float)))
        if design == RATERS_AGREE:
            n, k = matrix.shape
            rows = [rules.undefined(ICC_COLUMNS, rules.join(design, note), form=f, icc=1.0, F=np.inf,
                                    df1=float(n - 1), df2=float(n * (k - 1) if f.startswith("ICC1") else (n - 1) * (k - 1)),
                                    p=0.0, **base) for f in forms]
            return rules.frame(rows, ICC_COLUMNS)
        problem = design
    if problem:
        rows = [rules.undefined(ICC_COLUMNS, rules.join(problem, note), form=f, **base)
                for f in forms]
        return rules.frame(rows, ICC_COLUMNS)
    table = _pingouin_icc(matrix)
    rows = [{"form": f, **table.loc[f].to_dict(), **base, "note": note} for f in forms]
    return rules.frame(rows, ICC_COLUMNS)


def krippendorff_alpha(data: pd.DataFrame, targets: str, raters: str, ratings: str, *,
                       level: str = "interval", nan_policy: str = "omit") -> pd.DataFrame:
    """Krippendorff's alpha of long ratings (``krippendorff.alpha``), one row.

    Parameters
    ----------
    data : pandas.DataFrame
        Long ratings; cells absent from ``data`` are unrated.
    targets, raters, ratings : str
        The columns of the items, the raters and the ratings.
    level : {"nominal", "ordinal", "interval", "ratio"}
        The metric of the disagreement.
    nan_policy : {"omit", "raise", "propagate"}
        Rows whose rating is NaN ("omit": left out, counted).

    Returns
    -------
    pandas.DataFrame
        One row: alpha, level, n_items (pairable items: >= 2 ratings), n_raters, n_values (pairable
        values), note.

    Examples
    --------
    Two raters, the second one point higher on each of three items: the observed disagreement
    sum (x - y)^2 = 3 against N var = 6 * 1.1, alpha = 1 - 3 / 6.6 = 0.5455 (interval metric;
    :func:`interval_alpha_pairs` by hand).

    >>> long = pd.DataFrame({"item": [1, 2, 3] * 2, "rater": ["a"] * 3 + ["b"] * 3, "score": [1, 2, 3, 2, 3, 4]})
    >>> round(float(krippendorff_alpha(long, "item", "rater", "score")["alpha"].iloc[0]), 4)
    0.5455
    """
    import krippendorff

    if level not in ALPHA_LEVELS:
        raise ValueError(f"level must be one of {ALPHA_LEVELS}, not {level!r}")
    rules.check_policy(nan_policy)
    if data.empty:
        return rules.frame([rules.undefined(ALPHA_COLUMNS, rules.EMPTY, level=level, n_items=0, n_raters=0,
                                            n_values=0)], ALPHA_COLUMNS)
    rules.require_columns(data, [targets, raters, ratings], "ratings data")
    n_nan = int(pd.to_numeric(data[ratings], errors="coerce").isna().sum())
    note, usable = rules.missing_note(n_nan, nan_policy, f"column {ratings!r}")
    m = rating_matrix(data, targets, raters, ratings)
    pairable = m[m.notna().sum(axis=1) >= 2]
    values = pairable.to_numpy(float)
    values = values[~np.isnan(values)]
    raters_used = int(pairable.notna().any(axis=0).sum())
    base = {"level": level, "n_items": int(len(pairable)), "n_raters": raters_used, "n_values": int(values.size)}
    problem = "" if usable else note
    if not problem:
        if m.shape[1] < rules.MIN_RATERS:
            problem = rules.ONE_RATER
        elif len(pairable) < rules.MIN_ITEMS:
            problem = rules.too_few(len(pairable), rules.MIN_ITEMS, "items")
        elif rules.is_constant(values):
            problem = rules.CONSTANT
    if problem:
        return rules.frame([rules.undefined(ALPHA_COLUMNS, rules.join(problem, note), **base)],
                           ALPHA_COLUMNS)
    table = m.T.to_numpy(float)
    if level in ("nominal", "ordinal"):  # categories / ranks: values equal within the tolerance are one
        table = rules.snap(table, rules.tolerance(values))
    with np.errstate(divide="ignore", invalid="ignore"):
        value = float(krippendorff.alpha(reliability_data=table, level_of_measurement=level))
    return rules.frame([{"alpha": value, **base, "note": note}], ALPHA_COLUMNS)


def interval_alpha_pairs(x, y) -> float:
    """Krippendorff's alpha, interval metric, of two raters who rated every item (x_i, y_i), in O(n):
    with N = 2n pairable values, D_o = (2/N) sum_i (x_i - y_i)^2 and D_e = 2 var(values, ddof = 1),
    so alpha = 1 - sum_i (x_i - y_i)^2 / (N var(values)) (Krippendorff 2011, eqs. for D_o and D_e
    with m_u = 2). The same number as :func:`krippendorff_alpha`, for bootstrap resamples.

    Parameters
    ----------
    x, y : array_like
        The two raters' ratings of the same items.

    Returns
    -------
    float
        alpha; NaN (no note: the caller's rules apply) when the values are constant or
        n < ``rules.MIN_ITEMS``.

    Examples
    --------
    >>> round(interval_alpha_pairs([1, 2, 3], [2, 3, 4]), 4)
    0.5455
    >>> interval_alpha_pairs([1, 2], [1, 2])
    nan
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    v = np.r_[x, y]
    if len(x) < rules.MIN_ITEMS or rules.is_constant(v):
        return float("nan")
    return float(1.0 - np.sum((x - y) ** 2) / (len(v) * v.var(ddof=1)))


def kendalls_w(data: pd.DataFrame, targets: str, raters: str, ratings: str, *,
               nan_policy: str = "omit") -> pd.DataFrame:
    """Kendall's coefficient of concordance W with the tie correction (formula in the module docstring),
    and Friedman's chi^2 = m (n - 1) W with its p-value, one row.

    Parameters
    ----------
    data : pandas.DataFrame
        Long ratings.
    targets, raters, ratings : str
        The columns of the items, the raters and the ratings.
    nan_policy : {"omit", "raise", "propagate"}
        Items missing a rating (complete cases).

    Returns
    -------
    pandas.DataFrame
        One row: w, chi2, df, p, n_items, n_raters, note. W = 1 when every rater ranks the items
        alike; NaN when every rater ties every item.

    Examples
    --------
    Three raters who rank three items alike: W = 1, chi^2 = 3 * 2 * 1 = 6 on 2 df, p = exp(-3).

    >>> long = pd.DataFrame({"item": [1, 2, 3] * 3, "rater": sorted(["a", "b", "c"] * 3), "score": [1, 2, 3, 2, 4, 6, 1, 5, 9]})
    >>> kendalls_w(long, "item", "rater", "score")[["w", "chi2", "df", "p"]].round(4).values.tolist()
    [[1.0, 6.0, 2.0, 0.0498]]
    """
    matrix, note, usable = complete_items(data, targets, raters, ratings, nan_policy)
    n, m = matrix.shape
    base = {"n_items": int(n), "n_raters": int(m)}
    problem = note if not usable else _design_problem(matrix)
    x = matrix.to_numpy(float)
    x = rules.snap(x, rules.tolerance(x)) if x.size else x  # ulp-apart ratings tie
    if not problem:
        ranks = np.column_stack([stats.rankdata(x[:, j]) for j in range(m)])
        ties = sum(float(np.sum(c.astype(float) ** 3 - c)) for c in
                   (np.unique(x[:, j], return_counts=True)[1] for j in range(m)))
        denom = m ** 2 * (n ** 3 - n) - m * ties
        if denom <= 0:
            problem = "every rater gives every item the same rating"
    if problem:
        return rules.frame([rules.undefined(W_COLUMNS, rules.join(problem, note), **base)],
                           W_COLUMNS)
    s = float(np.sum((ranks.sum(axis=1) - m * (n + 1) / 2.0) ** 2))
    w = 12.0 * s / denom
    chi2 = m * (n - 1) * w
    row = {"w": w, "chi2": chi2, "df": float(n - 1), "p": float(stats.chi2.sf(chi2, n - 1)), **base, "note": note}
    return rules.frame([row], W_COLUMNS)
