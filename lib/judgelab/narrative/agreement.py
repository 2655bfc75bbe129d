"""Agreement among the K judge agents (paper 002, section 5.4, Table 3; Table 8).

Data layout: a *reliability matrix* has one row per item (a narrative: collection, endpoint
pair, path method) and one column per agent (rater), holding the agent's overall score; NaN
where an agent's call failed. Every statistic is computed per collection and prompt mode.

Statistics (k raters, n items, x_ij the score of item i by rater j, x̄_i the item mean):

- ICC(2,1) and ICC(2,k): two-way random effects, absolute agreement, single rater / mean of k
  raters (Shrout & Fleiss 1979, "Intraclass correlations: uses in assessing rater reliability",
  Psychol. Bull. 86:420; McGraw & Wong 1996), computed by ``pingouin.intraclass_corr``:
  ICC(2,1) = (MSR - MSE) / (MSR + (k-1) MSE + k (MSC - MSE) / n),
  ICC(2,k) = (MSR - MSE) / (MSR + (MSC - MSE) / n),
  with MSR, MSC, MSE the mean squares of items (rows), raters (columns) and residual of the
  two-way ANOVA (pingouin >= 0.7 labels them ICC(A,1) / ICC(A,k)).
  Items with a missing rating are dropped (complete cases).
- Krippendorff's alpha, interval metric, alpha = 1 - D_o / D_e (Krippendorff 2011, "Computing
  Krippendorff's alpha-reliability"), by the ``krippendorff`` package; uses every pairable value,
  so missing ratings are allowed.
- Kendall's W, coefficient of concordance, with tie correction, written here
  (:func:`kendalls_w`).
- Mean absolute deviation: mean over items of (1/k) sum_j |x_ij - x̄_i|.
- Exact and within-1 agreement: the share of agent pairs (j < l), pooled over items, with
  |x_ij - x_il| = 0, resp. <= 1. (The paper does not define its denominator; pairs are the
  definition that does not depend on K.)
- Table 8's disagreement: the mean over items of the agents' standard deviation (ddof = 1) and
  of the coefficient of variation SD / mean.
"""
from __future__ import annotations

import warnings
from itertools import combinations
from typing import Sequence

import numpy as np
import pandas as pd

ITEM_COLS: tuple[str, ...] = ("collection", "pair_id", "method")


def reliability_matrix(
    scores: pd.DataFrame,
    item_cols: Sequence[str] = ITEM_COLS,
    rater_col: str = "agent",
    score_col: str = "score",
) -> pd.DataFrame:
    """Pivot tidy judge rows into items x raters (NaN where a rating is missing or failed).

    Rows whose ``status`` is not ``"ok"`` (when a status column is present) count as missing.
    """
    df = scores
    if "status" in df.columns:
        df = df[df["status"] == "ok"]
    item_cols = [c for c in item_cols if c in scores.columns]
    wide = df.pivot_table(index=item_cols, columns=rater_col, values=score_col, aggfunc="first")
    all_items = scores[item_cols].drop_duplicates().set_index(item_cols).index
    raters = sorted(scores[rater_col].unique())  # an agent that failed everywhere stays a column
    return wide.reindex(index=all_items, columns=raters)


def complete_cases(matrix: pd.DataFrame) -> pd.DataFrame:
    """Items rated by every rater."""
    return matrix.dropna(axis=0, how="any")


def _ranks_with_ties(column: np.ndarray) -> tuple[np.ndarray, float]:
    """Mid-ranks of one rater's scores and that rater's tie term sum_g (t_g^3 - t_g)."""
    from scipy.stats import rankdata

    ranks = rankdata(column, method="average")
    _, counts = np.unique(column, return_counts=True)
    return ranks, float(np.sum(counts.astype(float) ** 3 - counts))


def kendalls_w(matrix: pd.DataFrame | np.ndarray) -> float:
    """Kendall's coefficient of concordance W with the correction for ties.

    ``matrix`` is items x raters with no missing values (n items, m raters). Each rater's
    scores are turned into mid-ranks r_ij (tied scores share the average rank). Then

        R_i = sum_j r_ij,   S = sum_i (R_i - m (n + 1) / 2)^2,
        T   = sum_j sum_g (t_g^3 - t_g)      (t_g: size of tie group g of rater j),
        W   = 12 S / (m^2 (n^3 - n) - m T).

    W = 1 when all raters rank the items identically, 0 when the rank sums are all equal.
    Reference: Kendall & Babington Smith (1939), Ann. Math. Stat. 10:275; tie correction as in
    Siegel & Castellan (1988), Nonparametric Statistics, eq. 9.18; Legendre (2005), J. Agric.
    Biol. Environ. Stat. 10:226. Equivalent to Friedman's tie-corrected chi^2 / (m (n - 1)).
    Returns NaN for fewer than 2 items or raters, or when every rater ties every item.
    """
    x = np.asarray(matrix, dtype=float)
    if x.ndim != 2:
        raise ValueError("kendalls_w expects a 2-D items x raters matrix")
    if np.isnan(x).any():
        raise ValueError("kendalls_w needs complete data; drop items with missing ratings first")
    n, m = x.shape
    if n < 2 or m < 2:
        return float("nan")
    ranks = np.empty_like(x)
    tie_total = 0.0
    for j in range(m):
        ranks[:, j], t = _ranks_with_ties(x[:, j])
        tie_total += t
    rank_sums = ranks.sum(axis=1)
    s = float(np.sum((rank_sums - m * (n + 1) / 2.0) ** 2))
    denom = m**2 * (n**3 - n) - m * tie_total
    if denom <= 0:
        return float("nan")
    return 12.0 * s / denom


def icc2(matrix: pd.DataFrame) -> dict[str, float]:
    """ICC(2,1) and ICC(2,k) with 95% CIs, by ``pingouin.intraclass_corr`` on complete cases.

    Returns ``{"icc2_1", "icc2_k", "icc2_1_ci_low", "icc2_1_ci_high", "icc2_k_ci_low",
    "icc2_k_ci_high", "n_items_complete"}``; NaNs when fewer than 2 raters or 2 items remain.
    """
    import pingouin as pg

    full = complete_cases(matrix)
    out = dict.fromkeys(("icc2_1", "icc2_k", "icc2_1_ci_low", "icc2_1_ci_high",
                         "icc2_k_ci_low", "icc2_k_ci_high"), float("nan"))
    out["n_items_complete"] = int(len(full))
    if full.shape[0] < 2 or full.shape[1] < 2 or full.size < 5:
        return out
    long = full.reset_index(drop=True).rename_axis("item").reset_index().melt(
        id_vars="item", var_name="rater", value_name="rating")
    with np.errstate(divide="ignore", invalid="ignore"):
        res = pg.intraclass_corr(data=long, targets="item", raters="rater", ratings="rating")
    res = res.set_index("Type")
    ci = "CI95%" if "CI95%" in res.columns else "CI95"
    # pingouin < 0.7 labels them ICC2 / ICC2k; 0.7 uses McGraw & Wong's ICC(A,1) / ICC(A,k)
    single = "ICC(A,1)" if "ICC(A,1)" in res.index else "ICC2"
    average = "ICC(A,k)" if "ICC(A,k)" in res.index else "ICC2k"
    out["icc2_1"] = float(res.loc[single, "ICC"])
    out["icc2_k"] = float(res.loc[average, "ICC"])
    out["icc2_1_ci_low"], out["icc2_1_ci_high"] = (float(v) for v in res.loc[single, ci])
    out["icc2_k_ci_low"], out["icc2_k_ci_high"] = (float(v) for v in res.loc[average, ci])
    return out


def krippendorff_alpha(matrix: pd.DataFrame | np.ndarray, level: str = "interval") -> float:
    """Krippendorff's alpha (``krippendorff.alpha``) of an items x raters matrix; NaN = missing.

    ``level`` is the metric: "nominal", "ordinal", "interval" (default; the scores are on a
    1–10 scale) or "ratio". NaN when fewer than two values are pairable or all values agree
    trivially (no variation at all).
    """
    import krippendorff

    data = np.asarray(matrix, dtype=float).T  # krippendorff wants raters x units
    pairable = np.sum(np.sum(~np.isnan(data), axis=0) >= 2)
    values = data[~np.isnan(data)]
    if pairable < 1 or data.shape[0] < 2 or np.unique(values).size < 2:
        return float("nan")
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))


def mean_absolute_deviation(matrix: pd.DataFrame | np.ndarray) -> float:
    """Mean over items of the mean absolute deviation of the raters from the item mean,
    (1/n) sum_i (1/k_i) sum_j |x_ij - x̄_i|, over the non-missing ratings of each item."""
    x = np.asarray(matrix, dtype=float)
    with warnings.catch_warnings():  # items (or modes) whose calls all failed give NaN, quietly
        warnings.simplefilter("ignore", RuntimeWarning)
        centre = np.nanmean(x, axis=1, keepdims=True)
        per_item = np.nanmean(np.abs(x - centre), axis=1)
        return float(np.nanmean(per_item)) if per_item.size else float("nan")


def pairwise_agreement(matrix: pd.DataFrame | np.ndarray, tolerance: float = 0.0) -> float:
    """Share of rater pairs, pooled over items, whose scores differ by at most ``tolerance``
    (0 = exact agreement, 1 = within-1 agreement). Pairs with a missing rating are skipped."""
    x = np.asarray(matrix, dtype=float)
    agree = total = 0
    for j, l in combinations(range(x.shape[1]), 2):
        a, b = x[:, j], x[:, l]
        ok = ~(np.isnan(a) | np.isnan(b))
        diff = np.abs(a[ok] - b[ok])
        agree += int(np.sum(diff <= tolerance + 1e-9))
        total += int(ok.sum())
    return agree / total if total else float("nan")


def agreement_stats(matrix: pd.DataFrame) -> dict[str, float]:
    """Every Table 3 statistic for one reliability matrix (items x raters)."""
    full = complete_cases(matrix)
    out = {
        "n_items": int(len(matrix)),
        "k_agents": int(matrix.shape[1]),
        **icc2(matrix),
        "krippendorff_alpha": krippendorff_alpha(matrix),
        "kendalls_w": kendalls_w(full) if len(full) else float("nan"),
        "mean_abs_dev": mean_absolute_deviation(matrix),
        "exact_agreement": pairwise_agreement(matrix, 0.0),
        "within1_agreement": pairwise_agreement(matrix, 1.0),
    }
    return out


def agreement_table(
    scores: pd.DataFrame,
    group_cols: Sequence[str] = ("collection", "mode"),
    item_cols: Sequence[str] = ("pair_id", "method"),
) -> pd.DataFrame:
    """Table 3: one row per collection and mode with ICC(2,1), ICC(2,K), Krippendorff's alpha,
    Kendall's W, mean absolute deviation, exact and within-1 agreement (fractions in 0..1)."""
    rows = []
    for key, grp in scores.groupby(list(group_cols), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        m = reliability_matrix(grp, item_cols=item_cols)
        rows.append({**dict(zip(group_cols, key)), **agreement_stats(m)})
    return pd.DataFrame(rows)


def agent_disagreement(
    scores: pd.DataFrame,
    group_cols: Sequence[str] = ("collection", "mode"),
    item_cols: Sequence[str] = ("pair_id", "method"),
) -> pd.DataFrame:
    """Table 8 / Figure 8(g): per group, the mean over items of the agents' SD (ddof = 1) and of
    the coefficient of variation SD / mean (items with fewer than 2 ok ratings are skipped)."""
    rows = []
    for key, grp in scores.groupby(list(group_cols), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        x = reliability_matrix(grp, item_cols=item_cols).to_numpy(dtype=float)
        enough = np.sum(~np.isnan(x), axis=1) >= 2
        x = x[enough]
        sd = np.nanstd(x, axis=1, ddof=1) if len(x) else np.array([])
        mean = np.nanmean(x, axis=1) if len(x) else np.array([])
        rows.append({
            **dict(zip(group_cols, key)),
            "n_items": int(len(x)),
            "mean_sd": float(np.mean(sd)) if len(sd) else float("nan"),
            "mean_cov": float(np.mean(sd / mean)) if len(sd) else float("nan"),
        })
    return pd.DataFrame(rows)
