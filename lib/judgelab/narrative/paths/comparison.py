"""Path-length statistics (paper Table 1) and discrimination between methods (Table 4, maths rows).

Unit: the **endpoint pair**, which has one max-capacity and one random path: every interval is a
seeded percentile cluster bootstrap over pairs (:mod:`judgelab.stats.resampling`) and the tests
are paired over pairs (max-capacity minus random).

Cohen's d with the pooled SD (``d``) and with the average-variance SD sqrt((s1^2 + s2^2) / 2)
(``d_avg_sd``: the paper does not state its SD, the sibling study's code used this one; identical
when n1 = n2). AUC-ROC = P(metric of a max-capacity path > metric of a random path). A missing
metric value is dropped and counted in ``note``; its pair still counts for the other method.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab.stats import resampling as rs
from judgelab.stats import rules
from judgelab.stats.effects import auc, cohens_d
from judgelab.stats.tests import paired_ttest, ttest

MATH_METRICS = {"min_coherence": "Min. coherence", "mean_coherence": "Avg. coherence"}
UNIT = "endpoint pair"
N_BOOT = 2000


def _need_pairs(g: pd.DataFrame) -> None:
    rules.require_columns(g, ["pair_id", "method"], "narr_paths rows")


def _paired(g: pd.DataFrame, col: str) -> tuple[np.ndarray, np.ndarray]:
    """Max-capacity and random values of ``col`` aligned by endpoint pair (NaN where one is absent)."""
    wide = g.pivot_table(index="pair_id", columns="method", values=col, aggfunc="first", dropna=False)
    wide = wide.reindex(columns=["maxcap", "random"])
    return wide["maxcap"].to_numpy(float), wide["random"].to_numpy(float)


def _boot(g: pd.DataFrame, n_boot: int, seed: int):
    """Cluster weights over the pairs of ``g`` and the max-capacity / random row masks."""
    w = rs.cluster_weights(g["pair_id"].to_numpy(), n_boot, seed)
    mc = (g["method"] == "maxcap").to_numpy()
    return w, mc, ~mc


def _ci(prefix: str, boot: np.ndarray) -> dict:
    iv = rs.percentile_interval(boot)
    return {f"{prefix}_ci_low": iv.low, f"{prefix}_ci_high": iv.high}


def method_effects(paths: pd.DataFrame, metrics=MATH_METRICS, n_boot: int = N_BOOT, seed: int = 0) -> pd.DataFrame:
    """One row per (collection, metric): means by method, d (pooled and average-SD), AUC-ROC, each
    with its pair-bootstrap 95% interval, and the paired t-test over endpoint pairs (``p``)."""
    rows = []
    for coll, g in paths.groupby("collection", sort=False):
        _need_pairs(g)
        g = g.reset_index(drop=True)
        w, is_mc, is_rd = _boot(g, n_boot, seed)
        mc, rd = g[is_mc], g[is_rd]
        for col, label in metrics.items():
            d = cohens_d(mc[col], rd[col], sd=("pooled", "average")).set_index("sd_convention")
            a = auc(mc[col], rd[col]).iloc[0]
            x, y = g.loc[is_mc, col].to_numpy(float), g.loc[is_rd, col].to_numpy(float)
            t = paired_ttest(*_paired(g, col)).iloc[0]
            rows.append({"collection": coll, "metric": label, "column": col,
                         "mean_maxcap": mc[col].mean(), **_ci("mean_maxcap", rs.weighted_mean(x, w[:, is_mc])),
                         "mean_random": rd[col].mean(), **_ci("mean_random", rs.weighted_mean(y, w[:, is_rd])),
                         "d": d.loc["pooled", "d"],
                         **_ci("d", rs.weighted_cohens_d(x, w[:, is_mc], y, w[:, is_rd])),
                         "d_avg_sd": d.loc["average", "d"],
                         "auc": a["auc"], **_ci("auc", rs.weighted_auc(x, w[:, is_mc], y, w[:, is_rd])),
                         "p": t["p"], "test": "paired t over endpoint pairs",
                         "n_pairs": int(g["pair_id"].nunique()), "n_maxcap": len(mc), "n_random": len(rd),
                         "unit": UNIT, "ci_method": rs.ci_method(n_boot, seed),
                         "note": rules.join(d.loc["pooled", "note"], a["note"], t["note"])})
    return pd.DataFrame(rows)


def path_length_table(paths: pd.DataFrame, n_boot: int = N_BOOT, seed: int = 0) -> pd.DataFrame:
    """Mean (with its pair-bootstrap 95% interval), SD, min, max of path length (documents) by
    collection and method (Table 1); n counts paths (one per endpoint pair and method)."""
    rows = []
    for coll, g in paths.groupby("collection", sort=False):
        _need_pairs(g)
        g = g.reset_index(drop=True)
        w = rs.cluster_weights(g["pair_id"].to_numpy(), n_boot, seed)
        for method in dict.fromkeys(g["method"]):
            m = (g["method"] == method).to_numpy()
            s = g.loc[m, "length"]
            rows.append({"collection": coll, "method": method, "mean": s.mean(),
                         **_ci("mean", rs.weighted_mean(s.to_numpy(float), w[:, m])),
                         "std": s.std(), "min": s.min(), "max": s.max(), "n": int(s.count())})
    return pd.DataFrame(rows)


def length_difference(paths: pd.DataFrame, n_boot: int = N_BOOT, seed: int = 0) -> pd.DataFrame:
    """Per collection: mean length max-capacity minus random over endpoint pairs (``difference``),
    its pair-bootstrap 95% interval, the paired t-test p-value (``p_value``, the unit's test) and
    Welch's t-test p-value as if the paths were independent (``p_welch``, the unpaired reading)."""
    rows = []
    for coll, g in paths.groupby("collection", sort=False):
        _need_pairs(g)
        x, y = _paired(g, "length")
        t = paired_ttest(x, y).iloc[0]
        welch = ttest(x[np.isfinite(x)], y[np.isfinite(y)], equal_var=False).iloc[0]
        ok = np.isfinite(x) & np.isfinite(y)
        w = rs.cluster_weights(np.flatnonzero(ok), n_boot, seed)
        rows.append({"collection": coll, "difference": float(np.mean(x[ok] - y[ok])) if ok.any() else np.nan,
                     **_ci("difference", rs.weighted_mean(x[ok] - y[ok], w)),
                     "p_value": t["p"], "p_welch": welch["p"], "n_pairs": int(ok.sum()),
                     "note": rules.join(t["note"], f"{int((~ok).sum())} pairs without both paths" if (~ok).any() else "")})
    return pd.DataFrame(rows)
