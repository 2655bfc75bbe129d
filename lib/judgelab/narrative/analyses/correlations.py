"""Path properties of the follow-up table and their Pearson correlations with the judges (paper
002, sections 5.8.3–5.8.4, 5.9).

Pearson r with its two-sided p (:func:`judgelab.stats.correlation.correlation`), NaN when fewer
than 3 complete pairs remain or either side is constant (the rule of :mod:`judgelab.stats.rules`).

Unit (docs/design.md, principle 12): the rows are narratives, the independent unit the endpoint pair, so r carries a
seeded percentile cluster-bootstrap interval over pairs (``r_ci_low`` / ``r_ci_high``) and a
bootstrap p-value over pairs (``p_boot``, as Table 2), adjusted over every row of the table (one
family, ``mc_family``) by Holm (``p_holm``) and Bonferroni (``p_bonferroni``); scipy's ``p``
treats the narratives as independent.

Choices the paper leaves open, stated here:

- The temporal span is ``temporal_span_days`` of notebook 08 (last date − first date on the
  path), shown in days for news and in years (365.25 days) for VisPub, as in the paper.
- Path efficiency is the straightness index (Benhamou 2004, *J. Theor. Biol.* 229:209–220) of the
  path drawn on the landscape's 2-D UMAP map: straight-line distance source→target divided by the
  summed step lengths (1 = no detour). The paper does not define it.
- The complexity score is the mean of the z-scored coherence variance, weak-link ratio and
  (1 − efficiency), within a collection (z with population SD, ddof = 0; a column with zero SD
  contributes 0).
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
SPAN_UNITS: dict[str, tuple[str, float]] = {"news": ("days", 1.0), "vispub": ("years", 365.25)}
"""The paper measures news spans in days and VisPub spans in years (section 5.8.3)."""
COMPLEXITY_METRICS: tuple[str, ...] = ("coherence_var", "weak_link_ratio", "path_efficiency", "complexity_score")


def _pearson(x: np.ndarray, y: np.ndarray) -> tuple[float, float, int]:
    """Pearson r, two-sided p and the number of complete pairs (:func:`judgelab.stats.correlation`)."""
    row = correlation(x, y, method="pearson").iloc[0]
    return float(row["r"]), float(row["p"]), int(row["n"])


def correlations(long: pd.DataFrame, predictors: Sequence[str], targets: Sequence[str] = ("score_mean",),
                 by: Sequence[str] = ("collection", "mode"), family: str = "this table",
                 n_boot: int = N_BOOT, seed: int = 0) -> pd.DataFrame:
    """Pearson r (and two-sided p) between each predictor and each target within groups ``by``,
    with the pair-bootstrap interval and p (clusters: ``pair_id``; each row its own when absent);
    ``n`` counts complete pairs of values."""
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


def temporal_span(long: pd.DataFrame) -> pd.DataFrame:
    """Add ``temporal_span`` (in the collection's unit, :data:`SPAN_UNITS`; days for any other
    collection) and ``span_unit``."""
    out = long.copy()
    unit = out["collection"].map(lambda c: SPAN_UNITS.get(c, ("days", 1.0))[0])
    div = out["collection"].map(lambda c: SPAN_UNITS.get(c, ("days", 1.0))[1])
    out["temporal_span"] = out["temporal_span_days"].astype(float) / div
    out["span_unit"] = unit
    return out


def temporal_analysis(long: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """:func:`correlations` of temporal span with minimum coherence, average coherence and the
    mean LLM score, per collection and mode (coherence rows repeat per mode), + span_unit."""
    t = temporal_span(long)
    out = correlations(t, ["temporal_span"], ["min_coherence", "mean_coherence", "score_mean"],
                       family="temporal span (section 5.8.3)", seed=seed)
    units = t.groupby("collection")["span_unit"].first()
    out["span_unit"] = out["collection"].map(units)
    return out


def span_bins(long: pd.DataFrame, n_bins: int = 4) -> pd.DataFrame:
    """Mean minimum coherence and mean LLM score by temporal-span quantile bin, per collection
    and mode (the paper reports an optimum at moderate spans)."""
    t = temporal_span(long)
    rows = []
    for (coll, mode), g in t.dropna(subset=["temporal_span"]).groupby(["collection", "mode"], sort=True):
        q = min(n_bins, g["temporal_span"].nunique())
        if q < 1:
            continue
        bins = pd.qcut(g["temporal_span"], q=q, duplicates="drop")
        for b, gb in g.groupby(bins, observed=True):
            rows.append({"collection": coll, "mode": mode, "span_bin": str(b), "span_lo": float(b.left),
                         "span_hi": float(b.right), "min_coherence": gb["min_coherence"].mean(),
                         "score_mean": gb["score_mean"].mean(), "n": int(len(gb))})
    return pd.DataFrame(rows, columns=["collection", "mode", "span_bin", "span_lo", "span_hi",
                                       "min_coherence", "score_mean", "n"])


def path_efficiency(path: Sequence[int], coords: np.ndarray) -> float:
    """Straightness index of a path on a map: ‖x_target − x_source‖ / Σ‖x_{i+1} − x_i‖ (1 for a
    straight path, a one-document path or steps of zero total length; towards 0 for a detour)."""
    pts = np.asarray(coords)[np.asarray(path, dtype=int)]
    if len(pts) < 2:
        return 1.0
    steps = np.linalg.norm(np.diff(pts, axis=0), axis=1).sum()
    if steps == 0:
        return 1.0
    return float(np.linalg.norm(pts[-1] - pts[0]) / steps)


def _z(s: pd.Series) -> pd.Series:
    sd = s.std(ddof=0)
    return (s - s.mean()) / sd if sd and np.isfinite(sd) else s * 0.0


def add_complexity(paths: pd.DataFrame, coords_by_collection: dict[str, np.ndarray]) -> pd.DataFrame:
    """Add ``path_efficiency`` (NaN for a collection without a 2-D map) and
    ``complexity_score`` (module doc)."""
    out = paths.copy()
    out["path_efficiency"] = [
        path_efficiency(p, coords_by_collection[c]) if c in coords_by_collection else np.nan
        for c, p in zip(out["collection"], out["path"])
    ]
    parts = pd.DataFrame({
        "a": out.groupby("collection")["coherence_var"].transform(_z),
        "b": out.groupby("collection")["weak_link_ratio"].transform(_z),
        "c": (1 - out["path_efficiency"]).groupby(out["collection"]).transform(_z),
    })
    out["complexity_score"] = parts.mean(axis=1, skipna=True)
    return out


def complexity_analysis(long: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """:func:`correlations` of coherence variance, weak-link ratio, path efficiency and the
    complexity score with the mean LLM score, per collection and mode."""
    present = [m for m in COMPLEXITY_METRICS if m in long.columns]
    return correlations(long, present, ["score_mean"], family="path complexity (section 5.8.4)", seed=seed)
