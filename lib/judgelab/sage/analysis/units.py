"""The units of the SAGE statistics and the intervals on their headline numbers (docs/design.md, principle 12).

The story, not the story x mode evaluation, is the independent unit, so every genre test, effect
size and cross-layer correlation is reported per analysis (column ``analysis``): ``"story"`` (the
main rows: the mean of a story's modes), ``"content"`` / ``"title"`` (one mode), and
``"story_x_mode"``, the paper's reading (N = 200 per layer), a labelled sensitivity row whose
p-values count a story's two modes as two stories.

Intervals: a seeded cluster bootstrap over stories (within category where groups are compared);
analytic ones where exact for independent units (Fisher z, paired t, the F-based ICC CI).
``[<profile>.sage_bootstrap]`` (``profiles.toml``) sets B per profile.
"""
from __future__ import annotations

import pandas as pd

from judgelab import profiles
from judgelab.sage.analysis.scores import SageStatsError, observation_units

ANALYSES = ("story", "content", "title", "story_x_mode")
"""The analyses of every SAGE genre and cross-layer table, main first, the paper's reading last."""
UNIT_LABELS = {
    "story": "story (mean of its modes)",
    "content": "story (content mode only)",
    "title": "story (title mode only)",
    "story_x_mode": "story x mode (the paper's reading; sensitivity: a story's two modes counted as two)",
}
DEFAULT_BOOT = profiles.resolved("sage_bootstrap", "demo")[0]
"""The demo's resamples and seed: the defaults of the table functions."""


def bootstrap_knobs(profile: str | None) -> dict:
    """``{"n_boot", "boot_seed"}`` of ``profile`` (None: the demo values)."""
    return dict(DEFAULT_BOOT) if profile is None else profiles.knobs("sage_bootstrap", profile)


def analysis_units(story_scores: pd.DataFrame, analysis: str) -> pd.DataFrame:
    """The observations of one analysis (module docstring) from the story x mode scores."""
    if analysis not in ANALYSES:
        raise SageStatsError(f"unknown analysis {analysis!r}; choose one of {', '.join(ANALYSES)}")
    unit = {"story": "story", "content": "content", "title": "title", "story_x_mode": "story_mode"}[analysis]
    return observation_units(story_scores, unit)


def label(frame: pd.DataFrame, analysis: str, position: int = 0) -> pd.DataFrame:
    """``frame`` with ``analysis`` and ``unit`` columns inserted at ``position``."""
    out = frame.copy()
    out.insert(position, "unit", UNIT_LABELS[analysis])
    out.insert(position, "analysis", analysis)
    return out
