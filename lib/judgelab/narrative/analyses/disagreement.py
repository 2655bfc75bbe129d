"""Agent disagreement by the narrative's score range (paper 002, section 5.8.2, Table 8's breakdown).

Table 8 itself (mean SD and CoV of the K agents per mode) is
:func:`judgelab.narrative.judges.agreement.agent_disagreement`; this module splits the agents' SD
by the range of the narrative's mean score, where the paper reports that disagreement peaks in the
"medium" 5–7 range.
"""
from __future__ import annotations

from typing import Sequence

import pandas as pd

SCORE_BINS: tuple[float, ...] = (1.0, 3.0, 5.0, 7.0, 9.0, 10.0)
"""Score-range edges (the paper names a 5–7 "medium" range)."""


def disagreement_by_score_range(long: pd.DataFrame, bins: Sequence[float] = SCORE_BINS) -> pd.DataFrame:
    """Mean agent SD (``score_sd``, ddof = 1) by the narrative's mean score range, per collection
    and mode; narratives with fewer than two successful agents have no SD and are left out.

    Intervals are closed on the left, the last one on both sides. Columns: collection, mode,
    score_range ("5-7"), avg_std, n_narratives.
    """
    d = long[(long["n_agents"] >= 2) & long["score_sd"].notna()].copy()
    labels = [f"{lo:g}-{hi:g}" for lo, hi in zip(bins[:-1], bins[1:])]
    d["score_range"] = pd.cut(d["score_mean"].clip(bins[0], bins[-1]), bins=list(bins), labels=labels,
                              right=False, include_lowest=True)
    d.loc[d["score_mean"] >= bins[-1], "score_range"] = labels[-1]
    out = (d.groupby(["collection", "mode", "score_range"], observed=True)
             .agg(avg_std=("score_sd", "mean"), n_narratives=("score_sd", "size")).reset_index())
    out["score_range"] = out["score_range"].astype(str)
    return out
