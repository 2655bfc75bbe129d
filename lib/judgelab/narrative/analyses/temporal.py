"""Temporal span of a narrative and the judges (paper 002, section 5.8.3).

The span is ``temporal_span_days`` of notebook 08 (last date − first date on the path), shown in
days for news and in years (365.25 days) for VisPub, as in the paper.
"""
from __future__ import annotations

import pandas as pd

from judgelab.narrative.analyses.correlations import correlations

SPAN_UNITS: dict[str, tuple[str, float]] = {"news": ("days", 1.0), "vispub": ("years", 365.25)}
"""The paper measures news spans in days and VisPub spans in years (section 5.8.3)."""


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
    """Pearson r of temporal span with minimum coherence, average coherence and the mean LLM
    score, per collection and mode (coherence rows repeat per mode, since the narratives are the
    same), with the pair-bootstrap interval and adjusted p of
    :func:`judgelab.narrative.analyses.correlations.correlations`. Columns: theirs + span_unit."""
    t = temporal_span(long)
    out = correlations(t, ["temporal_span"], ["min_coherence", "mean_coherence", "score_mean"],
                       family="temporal span (section 5.8.3)", seed=seed)
    units = t.groupby("collection")["span_unit"].first()
    out["span_unit"] = out["collection"].map(units)
    return out


def span_bins(long: pd.DataFrame, n_bins: int = 4) -> pd.DataFrame:
    """Mean minimum coherence and mean LLM score by temporal-span quantile bin, per collection
    and mode (the paper reports an optimum at moderate spans). Columns: collection, mode,
    span_bin, span_lo, span_hi, min_coherence, score_mean, n."""
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
