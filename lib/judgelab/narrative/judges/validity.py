"""Do the LLM judges track mathematical coherence? (paper 002, sections 5.2, 5.3, 5.5;
Tables 2 and 4; Figure 8).

Unit of analysis: a *narrative* (collection, endpoint pair, method). Its LLM score in a mode is
``score_mean``, the mean over the K agents' overall scores (failed calls excluded;
:func:`judgelab.narrative.judges.scores.narrative_scores`); its mathematical metrics are the
path's minimum and average coherence from notebook 08 (joined by
:func:`judgelab.narrative.judges.scores.judged_paths`).

- Table 2: Pearson r (and Spearman rho, "similar patterns" in the paper) between the mean LLM
  score and min / average coherence, per collection and mode, with two-sided p and the Fisher-z
  95% CI of r (:func:`judgelab.stats.correlation.correlation`).
- Table 4: discrimination between max-capacity (positive class) and random paths, per metric:
  Cohen's d = (mean_maxcap - mean_random) / s with the pooled SD (the ``d`` column) and the root
  mean square of the two SDs sqrt((s1^2+s2^2)/2) (``d_avg_sd``, what the original code used)
  (:func:`judgelab.stats.effects.cohens_d`); AUC-ROC with max-capacity as positive
  (:func:`judgelab.stats.effects.auc`; equals U / (n1 n2)); Welch's t-test and the two-sided
  Mann-Whitney U test (:mod:`judgelab.stats.tests`) for Figure 8(l).

Small or degenerate groups give NaN with a ``note`` by the one rule of :mod:`judgelab.stats.rules`.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from judgelab.narrative.judges.prompts import MODES
from judgelab.stats import rules
from judgelab.stats.correlation import correlation
from judgelab.stats.effects import auc, cohens_d
from judgelab.stats.tests import mann_whitney, ttest

POSITIVE_METHOD = "maxcap"
NEGATIVE_METHOD = "random"
MATH_METRICS: dict[str, str] = {"min_coherence": "Min. coherence", "mean_coherence": "Avg. coherence"}
"""Path columns of notebook 08 -> the paper's row names in Tables 2 and 4."""


def llm_metric_name(mode: str) -> str:
    """The paper's Table 4 row name for a judge mode, e.g. ``"LLM simple"``, ``"LLM CoT"``."""
    return "LLM " + ("CoT" if mode == "cot" else mode)


def correlation_table(judged: pd.DataFrame, metrics: Sequence[str] = ("min_coherence", "mean_coherence")) -> pd.DataFrame:
    """Table 2: per collection and mode, Pearson (with its 95% CI) and Spearman correlations, with
    p-values, of the mean LLM score with each coherence metric, and n (narratives). NaN with a
    ``note`` when a side is constant or n < 3."""
    rows = []
    for (coll, mode), g in judged.groupby(["collection", "mode"], sort=False):
        row = {"collection": coll, "mode": mode, "n": int(g["score_mean"].notna().sum())}
        notes = []
        for m in metrics:
            short = "min" if m == "min_coherence" else ("avg" if m == "mean_coherence" else m)
            pr = correlation(g[m], g["score_mean"], method="pearson").iloc[0]
            sr = correlation(g[m], g["score_mean"], method="spearman").iloc[0]
            row[f"pearson_{short}"], row[f"pearson_p_{short}"] = pr["r"], pr["p"]
            row[f"pearson_ci_low_{short}"], row[f"pearson_ci_high_{short}"] = pr["ci_low"], pr["ci_high"]
            row[f"spearman_{short}"], row[f"spearman_p_{short}"] = sr["r"], sr["p"]
            notes += [f"{short}: {pr['note']}"] if pr["note"] else []
        row["note"] = rules.join(*notes)
        rows.append(row)
    return _in_mode_order(pd.DataFrame(rows))


def _in_mode_order(df: pd.DataFrame) -> pd.DataFrame:
    """Rows sorted by collection (first appearance) and the paper's mode order (:data:`MODES`)."""
    if df.empty:
        return df
    coll_rank = {c: i for i, c in enumerate(dict.fromkeys(df["collection"]))}
    mode_rank = {m: i for i, m in enumerate(MODES)}
    key = df["collection"].map(coll_rank) * 100 + df["mode"].map(lambda m: mode_rank.get(m, 99))
    return df.iloc[np.argsort(key.to_numpy(), kind="stable")].reset_index(drop=True)


def discrimination(values: np.ndarray, is_positive: np.ndarray) -> dict[str, float]:
    """Cohen's d (pooled and average SD), AUC-ROC, Welch t-test and Mann–Whitney U between the
    positive (max-capacity) and negative (random) groups of ``values`` (NaN values dropped).

    Keys: n_maxcap, n_random, mean_maxcap, mean_random, ``d`` (pooled SD), ``d_avg_sd``,
    ``auc``, t_stat, t_p, mw_u, mw_p (the names of notebook 08's Table 4 columns where they
    overlap), note."""
    v = np.asarray(values, float)
    pos = np.asarray(is_positive, bool)
    a, b = v[pos], v[~pos]
    d = cohens_d(a, b, sd=("pooled", "average")).set_index("sd_convention")
    roc, t, u = auc(a, b).iloc[0], ttest(a, b, equal_var=False).iloc[0], mann_whitney(a, b).iloc[0]
    return {
        "n_maxcap": int(d.loc["pooled", "n_x"]), "n_random": int(d.loc["pooled", "n_y"]),
        "mean_maxcap": float(d.loc["pooled", "mean_x"]), "mean_random": float(d.loc["pooled", "mean_y"]),
        "d": float(d.loc["pooled", "d"]), "d_avg_sd": float(d.loc["average", "d"]), "auc": float(roc["auc"]),
        "t_stat": float(t["t"]), "t_p": float(t["p"]), "mw_u": float(u["u"]), "mw_p": float(u["p"]),
        "note": rules.join(d.loc["pooled", "note"], t["note"]),
    }


def effect_size_table(judged: pd.DataFrame, paths: pd.DataFrame | None = None,
                      include_math: bool = True) -> pd.DataFrame:
    """Table 4 (and Figure 8 i, l): per collection, one row per metric — min and average coherence
    (over the judged narratives' paths, or over ``paths`` if given) and each LLM mode's mean
    score — with d, AUC-ROC and the two tests. Column ``metric`` holds the paper's row name,
    ``column`` the path column or judge mode it came from, ``kind`` "math" or "llm"."""
    rows = []
    for coll, g in judged.groupby("collection", sort=False):
        if include_math:
            src = paths[paths["collection"] == coll] if paths is not None else (
                g.drop_duplicates(["pair_id", "method"]))
            for key, label in MATH_METRICS.items():
                if key in src.columns:
                    rows.append({"collection": coll, "metric": label, "column": key, "kind": "math",
                                 **discrimination(src[key].to_numpy(float),
                                                  (src["method"] == POSITIVE_METHOD).to_numpy())})
        present = list(dict.fromkeys(g["mode"]))
        for mode in [m for m in MODES if m in present] + [m for m in present if m not in MODES]:
            gm = g[g["mode"] == mode]
            rows.append({"collection": coll, "metric": llm_metric_name(mode), "column": mode, "kind": "llm",
                         **discrimination(gm["score_mean"].to_numpy(float),
                                          (gm["method"] == POSITIVE_METHOD).to_numpy())})
    return pd.DataFrame(rows)


def correlation_matrix(judged: pd.DataFrame, collection: str,
                       metrics: Sequence[str] = ("min_coherence", "mean_coherence", "length")) -> pd.DataFrame:
    """Figure 8(j): Pearson correlations among the coherence metrics and each mode's mean LLM
    score, over the narratives of one collection (narratives as rows, pairwise-complete)."""
    g = judged[judged["collection"] == collection]
    wide = g.pivot_table(index=["pair_id", "method"], columns="mode", values="score_mean")
    wide = wide[[m for m in MODES if m in wide.columns] + [m for m in wide.columns if m not in MODES]]
    wide.columns = [llm_metric_name(c) for c in wide.columns]
    base = g.drop_duplicates(["pair_id", "method"]).set_index(["pair_id", "method"])
    base = base[[m for m in metrics if m in base.columns]].rename(columns={**MATH_METRICS, "length": "Path length"})
    return base.join(wide).corr(method="pearson")
