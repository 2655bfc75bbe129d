"""Agreement among the K judge agents (the Narrative paper, section 5.4, Table 3; Table 8).

A *reliability matrix* has one row per item (a narrative: collection, endpoint pair, path method)
and one column per agent, holding the agent's overall score; NaN where an agent's call failed.
Per collection and mode, from the floor :mod:`judgelab.stats`: ICC(2,1) and ICC(2,k), Kendall's W
(complete cases), Krippendorff's alpha (interval metric), the mean absolute deviation, exact and
within-1 agreement as the share of agent pairs pooled over items (the paper does not define its
denominator; pairs do not depend on K), and Table 8's mean SD (ddof = 1) and CoV of the agents.

Unit (docs/design.md, principle 12): the endpoint pair, which a max-capacity and a random
narrative share. Every interval of Tables 3 and 8 is a seeded percentile cluster bootstrap over
pairs; the Shrout-Fleiss F interval, which treats narratives as independent, stays beside it
(``icc2_1_ci_low_f`` ...). Krippendorff's alpha has the same bootstrap over pairs (all items,
missing ratings as the method treats them: :func:`judgelab.stats.resampling.weighted_interval_alpha`);
W has no interval; no p-values.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from judgelab.stats import agreement, reliability, resampling as rs, rules

ITEM_COLS: tuple[str, ...] = ("collection", "pair_id", "method")
UNIT = "endpoint pair"
N_BOOT = 2000


def _ci(prefix: str, boot: np.ndarray, estimate: float) -> dict:
    if not np.isfinite(estimate):
        return {f"{prefix}_ci_low": np.nan, f"{prefix}_ci_high": np.nan}
    iv = rs.percentile_interval(boot)
    return {f"{prefix}_ci_low": iv.low, f"{prefix}_ci_high": iv.high}


def _pairs_of(matrix: pd.DataFrame) -> np.ndarray:
    """The endpoint pair of each item (the ``pair_id`` index level; each item its own when absent)."""
    names = list(matrix.index.names)
    return matrix.index.get_level_values("pair_id").to_numpy() if "pair_id" in names else np.arange(len(matrix))


def bootstrap_agreement(matrix: pd.DataFrame, n_boot: int = N_BOOT, seed: int = 0) -> dict[str, np.ndarray]:
    """Bootstrap values over endpoint pairs of ICC(2,1), ICC(2,k) (complete items), Krippendorff's
    alpha (interval metric), mean absolute deviation, exact and within-1 agreement (items with >= 2
    ratings), one (B,) array each."""
    x = matrix.to_numpy(dtype=float)
    pairs = _pairs_of(matrix)
    out = {}
    complete = ~np.isnan(x).any(axis=1)
    if complete.sum() >= 1 and x.shape[1] >= 2:
        w = rs.cluster_weights(pairs, n_boot, seed)
        out["icc2_1"], out["icc2_k"] = rs.weighted_icc2(x[complete], w[:, complete])
    counts = (~np.isnan(x)).sum(axis=1)
    enough = counts >= 2
    if enough.any():
        w = rs.cluster_weights(pairs, n_boot, seed)[:, enough]
        y = x[enough]
        with np.errstate(invalid="ignore"):
            mad = np.nanmean(np.abs(y - np.nanmean(y, axis=1, keepdims=True)), axis=1)
        out["mean_abs_dev"] = rs.weighted_mean(mad, w)
        out["krippendorff_alpha"] = rs.weighted_interval_alpha(y, w)
        j, l = np.triu_indices(x.shape[1], k=1)
        d = np.abs(y[:, j] - y[:, l])
        n_pairs = (~np.isnan(d)).sum(axis=1).astype(float)
        slack = rules.tolerance(y[np.isfinite(y)])  # |x - y| <= t within the rules' tolerance, as stats.agreement
        with np.errstate(invalid="ignore", divide="ignore"):
            for name, tol in (("exact_agreement", 0.0), ("within1_agreement", 1.0)):
                hits = np.nansum(np.where(np.isnan(d), np.nan, d <= tol + slack), axis=1)
                out[name] = (w @ hits) / (w @ n_pairs)
    return out


def reliability_matrix(
    scores: pd.DataFrame,
    item_cols: Sequence[str] = ITEM_COLS,
    rater_col: str = "agent",
    score_col: str = "score",
) -> pd.DataFrame:
    """Pivot tidy judge rows into items x raters (NaN where a rating is missing or not ``"ok"``)."""
    df = scores
    if "status" in df.columns:
        df = df[df["status"] == "ok"]
    item_cols = [c for c in item_cols if c in scores.columns]
    wide = df.pivot_table(index=item_cols, columns=rater_col, values=score_col, aggfunc="first")
    all_items = scores[item_cols].drop_duplicates().set_index(item_cols).index
    raters = sorted(scores[rater_col].unique())  # an agent that failed everywhere stays a column
    return wide.reindex(index=all_items, columns=raters)


def agreement_stats(matrix: pd.DataFrame, n_boot: int = N_BOOT, seed: int = 0) -> dict[str, float | str]:
    """Every Table 3 statistic (module doc) for one reliability matrix whose index carries
    ``pair_id``, the cluster of the bootstrap; ``note`` says why a statistic is NaN."""
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
    boot = bootstrap_agreement(matrix, n_boot, seed) if len(matrix) else {}
    nan = np.full(1, np.nan)
    est = {"icc2_1": icc.loc["ICC2", "icc"], "icc2_k": icc.loc["ICC2k", "icc"], "mean_abs_dev": mad["mad"],
           "exact_agreement": pairs.loc[0.0, "agreement"], "within1_agreement": pairs.loc[1.0, "agreement"],
           "krippendorff_alpha": alpha["alpha"]}
    ci = {k: _ci(k, boot.get(k, nan), v) for k, v in est.items()}
    return {
        "n_items": int(len(matrix)),
        "n_pairs": int(len(np.unique(_pairs_of(matrix)))) if len(matrix) else 0,
        "k_agents": int(matrix.shape[1]),
        "icc2_1": est["icc2_1"], **ci["icc2_1"], "icc2_k": est["icc2_k"], **ci["icc2_k"],
        "icc2_1_ci_low_f": icc.loc["ICC2", "ci_low"], "icc2_1_ci_high_f": icc.loc["ICC2", "ci_high"],
        "icc2_k_ci_low_f": icc.loc["ICC2k", "ci_low"], "icc2_k_ci_high_f": icc.loc["ICC2k", "ci_high"],
        "n_items_complete": int(icc["n_items"].iloc[0]),
        "krippendorff_alpha": est["krippendorff_alpha"], **ci["krippendorff_alpha"],
        "kendalls_w": w["w"],
        "mean_abs_dev": est["mean_abs_dev"], **ci["mean_abs_dev"],
        "exact_agreement": est["exact_agreement"], **ci["exact_agreement"],
        "within1_agreement": est["within1_agreement"], **ci["within1_agreement"],
        "unit": UNIT, "ci_method": rs.ci_method(n_boot, seed),
        "note": rules.join(constant_agents_note(matrix), *(f"{k}: {v}" for k, v in notes.items() if v),
                           *(rs.interval_note(k, boot.get(k, nan), v, len(np.unique(_pairs_of(matrix))))
                             for k, v in est.items() if k.startswith("icc") or k == "krippendorff_alpha")),
    }


def constant_agents_note(matrix: pd.DataFrame) -> str:
    """The note of a degenerate reliability matrix: an agent that gave one score to every item (two
    or more) ranks nothing, so ICC, alpha and W there (often 0 with an interval [0, 0]) say that
    agent's scores have no spread, not that the agents disagree; "" when every agent varies."""
    constant = {a: matrix[a].dropna() for a in matrix.columns}
    constant = {a: s.iloc[0] for a, s in constant.items() if len(s) >= 2 and s.nunique() == 1}
    if not constant:
        return ""
    who = "; ".join(f"agent {a} gave {v:g} to all {int(matrix[a].notna().sum())} items" for a, v in constant.items())
    return (f"degenerate: {who}: a constant agent has no ordering to agree on, so ICC, alpha and W measure "
            "its missing spread, not disagreement between agents")


def agreement_table(
    scores: pd.DataFrame,
    group_cols: Sequence[str] = ("collection", "mode"),
    item_cols: Sequence[str] = ("pair_id", "method"),
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> pd.DataFrame:
    """Table 3: :func:`agreement_stats` per collection and mode (agreement shares as fractions)."""
    rows = []
    for key, grp in scores.groupby(list(group_cols), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        m = reliability_matrix(grp, item_cols=item_cols)
        rows.append({**dict(zip(group_cols, key)), **agreement_stats(m, n_boot, seed)})
    return pd.DataFrame(rows)


def agent_disagreement(
    scores: pd.DataFrame,
    group_cols: Sequence[str] = ("collection", "mode"),
    item_cols: Sequence[str] = ("pair_id", "method"),
    n_boot: int = N_BOOT,
    seed: int = 0,
) -> pd.DataFrame:
    """Table 8 / Figure 8(g): per group, the mean over items (with >= 2 ok ratings) of the agents'
    SD (ddof = 1) and of SD / mean, each with its cluster-bootstrap interval over endpoint pairs."""
    rows = []
    for key, grp in scores.groupby(list(group_cols), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        m = reliability_matrix(grp, item_cols=item_cols)
        x = m.to_numpy(dtype=float)
        enough = np.sum(~np.isnan(x), axis=1) >= 2
        x = x[enough]
        sd = np.nanstd(x, axis=1, ddof=1) if len(x) else np.array([])
        mean = np.nanmean(x, axis=1) if len(x) else np.array([])
        cov = sd / mean if len(x) else np.array([])
        row = {**dict(zip(group_cols, key)), "n_items": int(len(x)),
               "mean_sd": float(np.mean(sd)) if len(sd) else float("nan"),
               "mean_cov": float(np.mean(cov)) if len(sd) else float("nan")}
        if len(x):
            w = rs.cluster_weights(_pairs_of(m)[enough], n_boot, seed)
            row.update({**_ci("mean_sd", rs.weighted_mean(sd, w), row["mean_sd"]),
                        **_ci("mean_cov", rs.weighted_mean(cov, w), row["mean_cov"])})
        else:
            row.update({"mean_sd_ci_low": np.nan, "mean_sd_ci_high": np.nan,
                        "mean_cov_ci_low": np.nan, "mean_cov_ci_high": np.nan})
        row.update({"unit": UNIT, "ci_method": rs.ci_method(n_boot, seed)})
        rows.append(row)
    return pd.DataFrame(rows)
