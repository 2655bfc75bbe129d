"""Where the judge and the coherence disagree (paper 002, section 5.8, Figure 9e).

Both are put on [0, 1]: the mean LLM score by its scale, (s − 1) / 9 for scores 1–10, and the
coherence by min–max within the collection; the evaluation error is their difference (0 = the
judge ranks the narrative where its coherence does; positive = the judge is more generous).
"""
from __future__ import annotations

import numpy as np
import pandas as pd


def evaluation_errors(long: pd.DataFrame, coherence: str = "min_coherence",
                      score_range: tuple[float, float] = (1.0, 10.0)) -> pd.DataFrame:
    """Add ``score_norm``, ``coherence_norm`` (NaN when the collection's coherence is constant)
    and ``error`` = score_norm − coherence_norm, per narrative and mode."""
    out = long.copy()
    lo, hi = score_range
    out["score_norm"] = (out["score_mean"] - lo) / (hi - lo)
    c = out.groupby("collection")[coherence]
    span = (c.transform("max") - c.transform("min")).replace(0, np.nan)
    out["coherence_norm"] = (out[coherence] - c.transform("min")) / span
    out["error"] = out["score_norm"] - out["coherence_norm"]
    return out
