"""Path-length statistics (paper Table 1) and discrimination between methods (Table 4, maths rows).

Cohen's d = (mean_maxcap - mean_random) / s with the pooled SD (column ``d``) and with the
average-variance SD sqrt((s1^2 + s2^2) / 2) (``d_avg_sd``; the SD the paper used is not stated,
the sibling study's code used this one; identical when n1 = n2, as here), by
:func:`judgelab.stats.effects.cohens_d`. AUC-ROC = P(metric of a max-capacity path > metric of a
random path), max-capacity the positive class (:func:`judgelab.stats.effects.auc`). Path
lengths are compared with Welch's t-test (:func:`judgelab.stats.tests.ttest`). A missing metric
value is dropped (and counted in ``note``), never turned into a NaN d or sent to sklearn.
"""
from __future__ import annotations

import pandas as pd

from judgelab.stats import rules
from judgelab.stats.effects import auc, cohens_d
from judgelab.stats.tests import ttest

MATH_METRICS = {"min_coherence": "Min. coherence", "mean_coherence": "Avg. coherence"}


def method_effects(paths: pd.DataFrame, metrics=MATH_METRICS) -> pd.DataFrame:
    """One row per (collection, metric): means by method, d (pooled and average-SD), AUC-ROC."""
    rows = []
    for coll, g in paths.groupby("collection", sort=False):
        mc, rd = g[g["method"] == "maxcap"], g[g["method"] == "random"]
        for col, label in metrics.items():
            d = cohens_d(mc[col], rd[col], sd=("pooled", "average")).set_index("sd_convention")
            a = auc(mc[col], rd[col]).iloc[0]
            rows.append({"collection": coll, "metric": label, "column": col,
                         "mean_maxcap": mc[col].mean(), "mean_random": rd[col].mean(),
                         "d": d.loc["pooled", "d"], "d_avg_sd": d.loc["average", "d"],
                         "auc": a["auc"], "n_maxcap": len(mc), "n_random": len(rd),
                         "note": rules.join(d.loc["pooled", "note"], a["note"])})
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
        a = g.loc[g["method"] == "maxcap", "length"]
        b = g.loc[g["method"] == "random", "length"]
        t = ttest(a, b, equal_var=False).iloc[0]
        rows.append({"collection": coll, "difference": a.mean() - b.mean(), "p_value": t["p"], "note": t["note"]})
    return pd.DataFrame(rows)
