"""Agreement among the K judge agents (paper 002, section 5.4, Table 3; Table 8).

Data layout: a *reliability matrix* has one row per item (a narrative: collection, endpoint
pair, path method) and one column per agent (rater), holding the agent's overall score; NaN
where an agent's call failed. Every statistic is computed per collection and prompt mode.

Statistics, all from the shared floor :mod:`judgelab.stats` (formulas and references there; the
same small-sample rule as the SAGE study: >= 3 items rated by >= 2 agents, NaN with a ``note``
otherwise):

- ICC(2,1) and ICC(2,k): two-way random effects, absolute agreement, single rater / mean of k
  raters (Shrout & Fleiss 1979; :func:`judgelab.stats.reliability.icc`, forms "ICC2" and
  "ICC2k"), with 95% CIs; items with a failed call are dropped (complete cases).
- Krippendorff's alpha, interval metric (:func:`judgelab.stats.reliability.krippendorff_alpha`);
  uses every pairable value, so missing ratings are allowed.
- Kendall's W with tie correction (:func:`judgelab.stats.reliability.kendalls_w`), complete cases.
- Mean absolute deviation around the item mean (:func:`judgelab.stats.agreement.mean_absolute_deviation`);
  an item with one ok rating does not count.
- Exact and within-1 agreement: the share of agent pairs (j < l), pooled over items, with
  |x_ij - x_il| = 0, resp. <= 1 (:func:`judgelab.stats.agreement.pairwise_agreement`; the paper
  does not define its denominator; pairs are the definition that does not depend on K).
- Table 8's disagreement: the mean over items of the agents' standard deviation (ddof = 1) and
  of the coefficient of variation SD / mean.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from judgelab.stats import agreement, reliability, rules

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


def agreement_stats(matrix: pd.DataFrame) -> dict[str, float | str]:
    """Every Table 3 statistic for one reliability matrix (items x raters, NaN = failed call).

    Keys: n_items, k_agents, icc2_1, icc2_k and their ``_ci_low`` / ``_ci_high``,
    n_items_complete, krippendorff_alpha, kendalls_w, mean_abs_dev, exact_agreement,
    within1_agreement, note (why a statistic is NaN, or what was dropped).
    """
    long = (matrix.reset_index(drop=True).rename_axis("item").reset_index()
            .melt(id_vars="item", var_name="rater", value_name="score"))
    cols = ("item", "rater", "score")
    icc = reliability.icc(long, *cols, forms=("ICC2", "ICC2k")).set_index("form")
    alpha = reliability.krippendorff_alpha(long, *cols, level="interval").iloc[0]
    w = reliability.kendalls_w(long, *cols).iloc[0]
    mad = agreement.mean_absolute_deviation(long, *cols).iloc[0]
    pairs = agreement.pairwise_agreement(long, *cols, tolerance=(0.0, 1.0)).set_index("tolerance")
    notes = {"ICC": icc["note"].iloc[0], "alpha": alpha["note"], "W": w["note"], "MAD": mad["note"],
             "agreement": pairs["note"].iloc[0]}
    return {
        "n_items": int(len(matrix)),
        "k_agents": int(matrix.shape[1]),
        "icc2_1": icc.loc["ICC2", "icc"], "icc2_k": icc.loc["ICC2k", "icc"],
        "icc2_1_ci_low": icc.loc["ICC2", "ci_low"], "icc2_1_ci_high": icc.loc["ICC2", "ci_high"],
        "icc2_k_ci_low": icc.loc["ICC2k", "ci_low"], "icc2_k_ci_high": icc.loc["ICC2k", "ci_high"],
        "n_items_complete": int(icc["n_items"].iloc[0]),
        "krippendorff_alpha": alpha["alpha"],
        "kendalls_w": w["w"],
        "mean_abs_dev": mad["mad"],
        "exact_agreement": pairs.loc[0.0, "agreement"],
        "within1_agreement": pairs.loc[1.0, "agreement"],
        "note": rules.join(*(f"{k}: {v}" for k, v in notes.items() if v)),
    }


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
