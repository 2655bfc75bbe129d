"""Pearson correlations within groups of the follow-up table (paper 002, sections 5.8.3–5.8.4, 5.9).

Pearson r with its two-sided p (:func:`judgelab.stats.correlation.correlation`), NaN when fewer
than 3 complete pairs remain or either side is constant (the rule of :mod:`judgelab.stats.rules`).

Unit (docs/design.md, principle 12): the rows are narratives, the independent unit the endpoint pair, so r carries a
seeded percentile cluster-bootstrap interval over pairs (``r_ci_low`` / ``r_ci_high``) and a
bootstrap p-value over pairs (``p_boot``, as Table 2), adjusted over every row of the table (one
family, ``mc_family``) by Holm (``p_holm``) and Bonferroni (``p_bonferroni``); scipy's ``p``
treats the narratives as independent.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from judgelab.stats import resampling as rs
from judgelab.stats.correlation import correlation
from judgelab.stats.tests import adjust

UNIT = "endpoint pair"
N_BOOT = 2000


def _pearson(x: np.ndarray, y: np.ndarray) -> tuple[float, float, int]:
    """Pearson r, two-sided p and the number of complete pairs (:func:`judgelab.stats.correlation`)."""
    row = correlation(x, y, method="pearson").iloc[0]
    return float(row["r"]), float(row["p"]), int(row["n"])


def correlations(long: pd.DataFrame, predictors: Sequence[str], targets: Sequence[str] = ("score_mean",),
                 by: Sequence[str] = ("collection", "mode"), family: str = "this table",
                 n_boot: int = N_BOOT, seed: int = 0) -> pd.DataFrame:
    """Pearson r (and two-sided p) between each predictor and each target within groups ``by``,
    with the pair-bootstrap interval and p (clusters: ``pair_id``; each row its own when absent).

    Columns: *by, predictor, target, r, r_ci_low, r_ci_high, p, p_boot, n (complete pairs of
    values), p_holm, p_bonferroni, mc_family, unit, ci_method.
    """
    rows = []
    for key, g in long.groupby(list(by), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        clusters = g["pair_id"].to_numpy() if "pair_id" in g.columns else np.arange(len(g))
        w = rs.cluster_weights(clusters, n_boot, seed)
        for pred in predictors:
            for tgt in targets:
                x, y = g[pred].to_numpy(float), g[tgt].to_numpy(float)
                r, p, n = _pearson(x, y)
                boot = rs.weighted_pearson(x, y, w)
                iv = rs.percentile_interval(boot)
                ok = np.isfinite(r)
                rows.append({**dict(zip(by, key)), "predictor": pred, "target": tgt, "r": r,
                             "r_ci_low": iv.low if ok else np.nan, "r_ci_high": iv.high if ok else np.nan,
                             "p": p, "p_boot": rs.bootstrap_p(boot) if ok else np.nan, "n": n})
    out = pd.DataFrame(rows, columns=[*by, "predictor", "target", "r", "r_ci_low", "r_ci_high", "p", "p_boot", "n"])
    m = len(out)  # the family: every row, an undefined p too
    out["p_holm"], out["p_bonferroni"] = adjust(out["p_boot"], m, "holm"), adjust(out["p_boot"], m, "bonferroni")
    out["mc_family"] = f"{family}: every row (bootstrap p over endpoint pairs)"
    out["unit"], out["ci_method"] = UNIT, rs.ci_method(n_boot, seed) + "; p_boot: bootstrap over pairs"
    return out
