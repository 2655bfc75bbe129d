"""Path-length statistics (paper Table 1) and discrimination between methods (Table 4, maths rows).

Cohen's d = (mean_maxcap - mean_random) / s, with the pooled SD
s = sqrt(((n1 - 1) s1^2 + (n2 - 1) s2^2) / (n1 + n2 - 2)) (Cohen 1988). The SD the paper used is
not stated; the original analysis code of the sibling study used sqrt((s1^2 + s2^2) / 2), reported
here too as ``d_avg_sd`` (identical when n1 = n2, as here). AUC-ROC = P(metric of a max-capacity
path > metric of a random path), ``sklearn.metrics.roc_auc_score`` with max-capacity as positive.
Path lengths are compared with Welch's t-test (``scipy.stats.ttest_ind``, equal_var=False).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.metrics import roc_auc_score

MATH_METRICS = {"min_coherence": "Min. coherence", "mean_coherence": "Avg. coherence"}


def cohens_d(x, y, pooled: bool = True) -> float:
    """Standardised mean difference of x over y (pooled SD, or the average-variance SD)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    n1, n2 = len(x), len(y)
    if n1 < 2 or n2 < 2:
        return float("nan")
    v1, v2 = x.var(ddof=1), y.var(ddof=1)
    s = np.sqrt(((n1 - 1) * v1 + (n2 - 1) * v2) / (n1 + n2 - 2)) if pooled else np.sqrt((v1 + v2) / 2)
    return float((x.mean() - y.mean()) / s) if s > 0 else float("nan")


def method_effects(paths: pd.DataFrame, metrics=MATH_METRICS) -> pd.DataFrame:
    """One row per (collection, metric): means by method, d (pooled and average-SD), AUC-ROC."""
    rows = []
    for coll, g in paths.groupby("collection", sort=False):
        mc, rd = g[g["method"] == "maxcap"], g[g["method"] == "random"]
        for col, label in metrics.items():
            y = np.r_[np.ones(len(mc)), np.zeros(len(rd))]
            score = np.r_[mc[col].to_numpy(float), rd[col].to_numpy(float)]
            auc = roc_auc_score(y, score) if len(mc) and len(rd) else float("nan")
            rows.append({"collection": coll, "metric": label, "column": col,
                         "mean_maxcap": mc[col].mean(), "mean_random": rd[col].mean(),
                         "d": cohens_d(mc[col], rd[col]), "d_avg_sd": cohens_d(mc[col], rd[col], pooled=False),
                         "auc": float(auc), "n_maxcap": len(mc), "n_random": len(rd)})
    return pd.DataFrame(rows)


def path_length_table(paths: pd.DataFrame) -> pd.DataFrame:
    """Mean, SD, min, max of path length (documents) by collection and method (Table 1)."""
    g = paths.groupby(["collection", "method"], sort=False)["length"]
    out = g.agg(mean="mean", std="std", min="min", max="max", n="count").reset_index()
    return out


def length_difference(paths: pd.DataFrame) -> pd.DataFrame:
    """Per collection: mean length max-capacity minus random, and Welch's t-test p-value."""
    rows = []
    for coll, g in paths.groupby("collection", sort=False):
        a = g.loc[g["method"] == "maxcap", "length"].to_numpy(float)
        b = g.loc[g["method"] == "random", "length"].to_numpy(float)
        p = stats.ttest_ind(a, b, equal_var=False).pvalue if len(a) > 1 and len(b) > 1 else np.nan
        rows.append({"collection": coll, "difference": a.mean() - b.mean(), "p_value": float(p)})
    return pd.DataFrame(rows)
