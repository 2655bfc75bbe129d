"""Where the judges disagree: with each other by score range (the Narrative paper, section 5.8.2), with the
coherence per narrative (section 5.8, Figure 9e), and both side by side per method (Figure 9f).

Table 8 itself (mean SD and CoV of the K agents per mode) is
:func:`judgelab.narrative.judges.agreement.agent_disagreement`.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

SCORE_BINS: tuple[float, ...] = (1.0, 3.0, 5.0, 7.0, 9.0, 10.0)
"""Score-range edges (the paper names a 5–7 "medium" range, where disagreement peaks)."""


def disagreement_by_score_range(long: pd.DataFrame, bins: Sequence[float] = SCORE_BINS) -> pd.DataFrame:
    """Mean agent SD (``score_sd``, ddof = 1; narratives with one successful agent left out) by
    the narrative's mean score range ("5-7": closed on the left, the last on both sides), per
    collection and mode: ``avg_std``, ``n_narratives``."""
    d = long[(long["n_agents"] >= 2) & long["score_sd"].notna()].copy()
    labels = [f"{lo:g}-{hi:g}" for lo, hi in zip(bins[:-1], bins[1:])]
    d["score_range"] = pd.cut(d["score_mean"].clip(bins[0], bins[-1]), bins=list(bins), labels=labels,
                              right=False, include_lowest=True)
    d.loc[d["score_mean"] >= bins[-1], "score_range"] = labels[-1]
    out = (d.groupby(["collection", "mode", "score_range"], observed=True)
             .agg(avg_std=("score_sd", "mean"), n_narratives=("score_sd", "size")).reset_index())
    out["score_range"] = out["score_range"].astype(str)
    return out


def evaluation_errors(long: pd.DataFrame, coherence: str = "min_coherence",
                      score_range: tuple[float, float] = (1.0, 10.0)) -> pd.DataFrame:
    """Add ``score_norm`` = (s − 1) / 9 for scores 1–10, ``coherence_norm`` (min–max within the
    collection; NaN when it is constant) and ``error`` = score_norm − coherence_norm, per
    narrative and mode (0 = the judge ranks the narrative where its coherence does; positive = the
    judge is more generous)."""
    out = long.copy()
    lo, hi = score_range
    out["score_norm"] = (out["score_mean"] - lo) / (hi - lo)
    c = out.groupby("collection")[coherence]
    span = (c.transform("max") - c.transform("min")).replace(0, np.nan)
    out["coherence_norm"] = (out[coherence] - c.transform("min")) / span
    out["error"] = out["score_norm"] - out["coherence_norm"]
    return out


def method_summary(long: pd.DataFrame, score_max: float = 10.0) -> pd.DataFrame:
    """Mean minimum coherence, mean average coherence and mean LLM score by collection, mode and
    method, with ``score_scaled`` = score_mean / ``score_max`` (on the coherence's 0–1 scale)."""
    out = (long.groupby(["collection", "mode", "method"])
               .agg(min_coherence=("min_coherence", "mean"), mean_coherence=("mean_coherence", "mean"),
                    score_mean=("score_mean", "mean"), n=("score_mean", "size")).reset_index())
    out["score_scaled"] = out["score_mean"] / score_max
    return out
