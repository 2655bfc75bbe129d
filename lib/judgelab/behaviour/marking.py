"""Every table of notebook 12 says who judged: ``judge`` (backend:model), ``profile`` and, when the
embedded 135M model answered, ``judge_note`` = the small-model warning (its numbers show that the
pipeline runs, not the findings)."""
from __future__ import annotations

import pandas as pd

from judgelab.engines import is_embedded_small_model
from judgelab.provenance import SMALL_MODEL_WARNING


def mark(df: pd.DataFrame, backend: str, model: str, profile: str) -> pd.DataFrame:
    note = SMALL_MODEL_WARNING if is_embedded_small_model(backend, model) else ""
    return df.assign(judge=f"{backend}:{model}", profile=profile, judge_note=note)
