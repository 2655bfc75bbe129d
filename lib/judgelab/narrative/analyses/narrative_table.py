"""The follow-up table of notebook 10: one row per judged narrative and prompt mode.

It joins notebook 08's paths (``narr_paths``: length, minimum / average coherence, coherence
variance, weak-link ratio, temporal span, ...) to the K agents' score summary of notebook 09
(``score_mean``, ``score_sd``, ``n_agents``, ``n_failed``;
:func:`judgelab.narrative.judges.scores.narrative_scores`), adds path efficiency and the
complexity score (:mod:`judgelab.narrative.analyses.complexity`) and the temporal span in the
collection's unit (:mod:`judgelab.narrative.analyses.temporal`). Every follow-up analysis reads it.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab.narrative.analyses.complexity import add_complexity
from judgelab.narrative.analyses.temporal import temporal_span
from judgelab.narrative.judges.scores import judged_paths, narrative_scores


def narrative_table(paths: pd.DataFrame, scores: pd.DataFrame,
                    coords_by_collection: dict[str, np.ndarray]) -> pd.DataFrame:
    """Paths x modes with their score summary, complexity and temporal span (rows in the order of
    ``paths``; only narratives that were judged)."""
    return temporal_span(judged_paths(narrative_scores(scores), add_complexity(paths, coords_by_collection)))
