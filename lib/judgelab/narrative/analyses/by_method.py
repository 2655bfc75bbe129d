"""Coherence and LLM score side by side for max-capacity and random paths (paper 002, Figure 9f)."""
from __future__ import annotations

import pandas as pd


def method_summary(long: pd.DataFrame, score_max: float = 10.0) -> pd.DataFrame:
    """Mean minimum coherence, mean average coherence and mean LLM score by collection, mode and
    method, with ``score_scaled`` = score_mean / ``score_max`` (on the coherence's 0–1 scale).

    Columns: collection, mode, method, min_coherence, mean_coherence, score_mean, n, score_scaled.
    """
    out = (long.groupby(["collection", "mode", "method"])
               .agg(min_coherence=("min_coherence", "mean"), mean_coherence=("mean_coherence", "mean"),
                    score_mean=("score_mean", "mean"), n=("score_mean", "size")).reset_index())
    out["score_scaled"] = out["score_mean"] / score_max
    return out
