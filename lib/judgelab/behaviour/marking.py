"""Every table of notebook 12 says who judged: ``judge`` (backend:model), ``profile`` and, when the
embedded 135M model answered, ``judge_note`` = the small-model warning (its numbers show that the
pipeline runs, not the findings).

Notebook 12 calls two judges (SAGE's and the narrative judges', :mod:`judgelab.judges`), which
differ on OpenAI: a table is marked with its study's judge, and a table with a ``study`` column
(the planted study's calls) row by row."""
from __future__ import annotations

import pandas as pd

from judgelab.engines import is_embedded_small_model
from judgelab.provenance import SMALL_MODEL_WARNING


def _judge(gateway) -> tuple[str, str]:
    backend, model = gateway.backend_name, gateway.model_name
    return f"{backend}:{model}", SMALL_MODEL_WARNING if is_embedded_small_model(backend, model) else ""


def mark(df: pd.DataFrame, gateways: dict, profile: str, study: str = "sage") -> pd.DataFrame:
    """``df`` with ``judge``, ``profile`` and ``judge_note``. ``gateways``: study -> gateway;
    ``study``: whose judge answered, unless ``df`` has a ``study`` column naming it per row."""
    studies = df["study"] if "study" in df.columns else pd.Series(study, index=df.index)
    unknown = sorted(set(studies) - set(gateways))
    if unknown:
        raise ValueError(f"no judge for study {unknown[0]!r}; known: {', '.join(sorted(gateways))}")
    judges = {s: _judge(g) for s, g in gateways.items()}
    return df.assign(judge=[judges[s][0] for s in studies], profile=profile,
                     judge_note=[judges[s][1] for s in studies])
