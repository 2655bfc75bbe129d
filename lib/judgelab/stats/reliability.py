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
  Computed by :func:`pingouin.intraclass_corr` with its F-based 95% CIs, through one adapter
  (:func:`_pingouin_icc`) that maps pingouin's labels and column names across versions (before
  0.7: "ICC2", "CI95%"; 0.7: McGraw & Wong's "ICC(A,1)", "CI95").
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

    Two ratings of one item by one rater are an error naming both.
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
    if np.unique(matrix.to_numpy(float)).size < 2:
        return rules.CONSTANT
    return ""


def complete_items(data: pd.DataFrame, targets: str, raters: str, ratings: str,
                   nan_policy: str) -> tuple[pd.DataFrame, str, bool]:
    """The items x raters matrix restricted to items rated by every rater (``nan_policy`` on the
    items missing a rating: "omit" drops and counts them), the note, and whether usable."""
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
    ci = next(c for c in res.columns if c.startswith("CI"))
    p = next(c for c in res.columns if c.lower().replace("-", "").replace("_", "") in ("pval", "punc"))
    rows = {}
    for name, labels in ICC_FORMS.items():
        label = next((lab for lab in labels if lab in res.index), None)
        if label is None:
            raise RuntimeError(f"pingouin {pg.__version__} has none of the ICC labels {labels}; update ICC_FORMS")
        lo, hi = res.at[label, ci]
        rows[name] = {"icc": float(res.at[label, "ICC"]), "ci_low": float(lo), "ci_high": float(hi),
                      "F": float(res.at[label, "F"]), "df1": float(res.at[label, "df1"]),
                      "df2": float(res.at[label, "df2"]), "p": float(res.at[label, p])}
    return pd.DataFrame.from_dict(rows, orient="index")


def icc(data: pd.DataFrame, targets: str, raters: str, ratings: str, *,
        forms: Sequence[str] = ("ICC2", "ICC2k"), nan_policy: str = "omit") -> pd.DataFrame:
    """Intraclass correlations of long ratings, one row per requested Shrout & Fleiss ``form``
    ("ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k"; formulas in the module docstring).

    Columns: form, icc, ci_low, ci_high (95%), F, df1, df2, p, n_items (complete items used),
    n_raters, note. Items missing a rating are handled by ``nan_policy`` (listwise).
    """
    forms = [forms] if isinstance(forms, str) else list(forms)
    bad = [f for f in forms if f not in ICC_FORMS]
    if bad:
        raise ValueError(f"unknown ICC form(s) {bad}; choose from {list(ICC_FORMS)}")
    matrix, note, usable = complete_items(data, targets, raters, ratings, nan_policy)
    base = {"n_items": int(matrix.shape[0]), "n_raters": int(matrix.shape[1])}
    problem = note if not usable else _design_problem(matrix)
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

    Columns: alpha, level, n_items (pairable items: >= 2 ratings), n_raters, n_values (pairable
    values), note. Cells absent from ``data`` are simply unrated; rows whose rating is NaN are
    handled by ``nan_policy`` ("omit": left out, counted).
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
        elif np.unique(values).size < 2:
            problem = rules.CONSTANT
    if problem:
        return rules.frame([rules.undefined(ALPHA_COLUMNS, rules.join(problem, note), **base)],
                           ALPHA_COLUMNS)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = float(krippendorff.alpha(reliability_data=m.T.to_numpy(float), level_of_measurement=level))
    return rules.frame([{"alpha": value, **base, "note": note}], ALPHA_COLUMNS)


def kendalls_w(data: pd.DataFrame, targets: str, raters: str, ratings: str, *,
               nan_policy: str = "omit") -> pd.DataFrame:
    """Kendall's coefficient of concordance W with the tie correction (formula in the module
    docstring), and Friedman's chi^2 = m (n - 1) W with its p-value, one row.

    Columns: w, chi2, df, p, n_items (complete items), n_raters, note. W = 1 when every rater
    ranks the items alike; NaN when every rater ties every item ("constant ratings" or each
    rater constant: the denominator is 0).
    """
    matrix, note, usable = complete_items(data, targets, raters, ratings, nan_policy)
    n, m = matrix.shape
    base = {"n_items": int(n), "n_raters": int(m)}
    problem = note if not usable else _design_problem(matrix)
    x = matrix.to_numpy(float)
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
