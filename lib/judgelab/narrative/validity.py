"""Do the LLM judges track mathematical coherence? (paper 002, sections 5.2, 5.3, 5.5;
Tables 2 and 4; Figure 8).

Unit of analysis: a *narrative* (collection, endpoint pair, method). Its LLM score in a mode is
the mean over the K agents' overall scores (failed calls excluded); its mathematical metrics
are the path's minimum and average coherence from notebook 08.

- Table 2: Pearson r (and Spearman rho, "similar patterns" in the paper) between the mean LLM
  score and min / average coherence, per collection and mode; ``scipy.stats.pearsonr`` /
  ``spearmanr``, two-sided p.
- Table 4: discrimination between max-capacity (positive class) and random paths, per metric:
  Cohen's d = (mean_maxcap - mean_random) / s, reported with two choices of s
  (:func:`cohens_d`): the pooled SD sqrt(((n1-1)s1^2 + (n2-1)s2^2) / (n1+n2-2)) (Cohen 1988,
  the ``d`` column) and the root mean square of the two SDs sqrt((s1^2+s2^2)/2)
  (``d_avg_sd``, what the original code used); AUC-ROC with max-capacity as positive
  (``sklearn.metrics.roc_auc_score``; equals U / (n1 n2) for Mann–Whitney U); Welch's t-test
  (``scipy.stats.ttest_ind(equal_var=False)``) and the two-sided Mann–Whitney U test
  (``scipy.stats.mannwhitneyu``) for Figure 8(l).
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from .judge_prompts import MODES

POSITIVE_METHOD = "maxcap"
NEGATIVE_METHOD = "random"
MATH_METRICS: dict[str, str] = {"min_coherence": "Min. coherence", "mean_coherence": "Avg. coherence"}
"""Path columns of notebook 08 -> the paper's row names in Tables 2 and 4."""


def llm_metric_name(mode: str) -> str:
    """The paper's Table 4 row name for a judge mode, e.g. ``"LLM simple"``, ``"LLM CoT"``."""
    return "LLM " + ("CoT" if mode == "cot" else mode)


def narrative_scores(
    scores: pd.DataFrame, item_cols: Sequence[str] = ("collection", "pair_id", "method", "mode")
) -> pd.DataFrame:
    """Per narrative and mode: mean, SD (ddof = 1) and count of the agents' ok scores."""
    ok = scores[scores["status"] == "ok"] if "status" in scores.columns else scores
    cols = [c for c in item_cols if c in scores.columns]
    g = ok.groupby(cols, sort=True)["score"]
    out = g.agg(mean_score="mean", sd_score=lambda s: s.std(ddof=1) if len(s) > 1 else np.nan,
                n_agents="count").reset_index()
    return out


def judged_paths(means: pd.DataFrame, paths: pd.DataFrame,
                 path_cols: Iterable[str] = ("length", "min_coherence", "mean_coherence")) -> pd.DataFrame:
    """Join per-narrative mean scores to the path metrics of notebook 08 (long: one row per mode)."""
    keys = ["collection", "pair_id", "method"]
    cols = keys + [c for c in path_cols if c in paths.columns]
    return means.merge(paths[cols], on=keys, how="inner", validate="many_to_one")


def _corr(x: np.ndarray, y: np.ndarray, fn) -> tuple[float, float]:
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y = x[ok], y[ok]
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan"), float("nan")
    res = fn(x, y)
    return float(res[0]), float(res[1])


def correlation_table(judged: pd.DataFrame, metrics: Sequence[str] = ("min_coherence", "mean_coherence")) -> pd.DataFrame:
    """Table 2: per collection and mode, Pearson and Spearman correlations (with p-values) of the
    mean LLM score with each coherence metric, and n (narratives). NaN when a side is constant
    or n < 3."""
    rows = []
    for (coll, mode), g in judged.groupby(["collection", "mode"], sort=False):
        row = {"collection": coll, "mode": mode, "n": int(g["mean_score"].notna().sum())}
        y = g["mean_score"].to_numpy(float)
        for m in metrics:
            short = "min" if m == "min_coherence" else ("avg" if m == "mean_coherence" else m)
            x = g[m].to_numpy(float)
            row[f"pearson_{short}"], row[f"pearson_p_{short}"] = _corr(x, y, stats.pearsonr)
            row[f"spearman_{short}"], row[f"spearman_p_{short}"] = _corr(x, y, stats.spearmanr)
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


def cohens_d(x: np.ndarray, y: np.ndarray, sd: str = "pooled") -> float:
    """Cohen's d = (mean(x) - mean(y)) / s.

    ``sd="pooled"``: s = sqrt(((n1-1) s1^2 + (n2-1) s2^2) / (n1 + n2 - 2)) (Cohen 1988, eq. 2.5.2).
    ``sd="average"``: s = sqrt((s1^2 + s2^2) / 2), the root mean square of the group SDs.
    Sample SDs use ddof = 1. NaN when either group has fewer than 2 values or s = 0.
    """
    x = np.asarray(x, float); y = np.asarray(y, float)
    x = x[~np.isnan(x)]; y = y[~np.isnan(y)]
    n1, n2 = len(x), len(y)
    if n1 < 2 or n2 < 2:
        return float("nan")
    v1, v2 = x.var(ddof=1), y.var(ddof=1)
    if sd == "pooled":
        s = np.sqrt(((n1 - 1) * v1 + (n2 - 1) * v2) / (n1 + n2 - 2))
    elif sd == "average":
        s = np.sqrt((v1 + v2) / 2.0)
    else:
        raise ValueError("sd must be 'pooled' or 'average'")
    return float((x.mean() - y.mean()) / s) if s > 0 else float("nan")


def discrimination(values: np.ndarray, is_positive: np.ndarray) -> dict[str, float]:
    """Cohen's d (pooled and average SD), AUC-ROC, Welch t-test and Mann–Whitney U between the
    positive (max-capacity) and negative (random) groups of ``values``.

    Keys: n_maxcap, n_random, mean_maxcap, mean_random, ``d`` (pooled SD), ``d_avg_sd``,
    ``auc``, t_stat, t_p, mw_u, mw_p (the names of notebook 08's Table 4 columns where they
    overlap)."""
    from sklearn.metrics import roc_auc_score

    v = np.asarray(values, float); pos = np.asarray(is_positive, bool)
    ok = ~np.isnan(v)
    v, pos = v[ok], pos[ok]
    a, b = v[pos], v[~pos]
    out = {
        "n_maxcap": int(len(a)), "n_random": int(len(b)),
        "mean_maxcap": float(a.mean()) if len(a) else float("nan"),
        "mean_random": float(b.mean()) if len(b) else float("nan"),
        "d": cohens_d(a, b, "pooled"),
        "d_avg_sd": cohens_d(a, b, "average"),
        "auc": float("nan"), "t_stat": float("nan"), "t_p": float("nan"),
        "mw_u": float("nan"), "mw_p": float("nan"),
    }
    if len(a) and len(b):
        out["auc"] = float(roc_auc_score(pos.astype(int), v))
        out["mw_u"], out["mw_p"] = (float(t) for t in stats.mannwhitneyu(a, b, alternative="two-sided"))
    if len(a) >= 2 and len(b) >= 2 and (a.var() > 0 or b.var() > 0):
        out["t_stat"], out["t_p"] = (float(t) for t in stats.ttest_ind(a, b, equal_var=False))
    return out


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
                         **discrimination(gm["mean_score"].to_numpy(float),
                                          (gm["method"] == POSITIVE_METHOD).to_numpy())})
    return pd.DataFrame(rows)


def correlation_matrix(judged: pd.DataFrame, collection: str,
                       metrics: Sequence[str] = ("min_coherence", "mean_coherence", "length")) -> pd.DataFrame:
    """Figure 8(j): Pearson correlations among the coherence metrics and each mode's mean LLM
    score, over the narratives of one collection (narratives as rows, pairwise-complete)."""
    g = judged[judged["collection"] == collection]
    wide = g.pivot_table(index=["pair_id", "method"], columns="mode", values="mean_score")
    wide = wide[[m for m in MODES if m in wide.columns] + [m for m in wide.columns if m not in MODES]]
    wide.columns = [llm_metric_name(c) for c in wide.columns]
    base = g.drop_duplicates(["pair_id", "method"]).set_index(["pair_id", "method"])
    base = base[[m for m in metrics if m in base.columns]].rename(columns={**MATH_METRICS, "length": "Path length"})
    return base.join(wide).corr(method="pearson")
