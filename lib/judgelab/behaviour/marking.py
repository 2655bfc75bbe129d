"""Every table of notebook 12 says who judged: ``judge`` (backend:model), ``profile`` and, when the
embedded 135M model answered, ``judge_note`` = the small-model warning (its numbers show that the
pipeline runs, not the findings).

Notebook 12 calls two judges (SAGE's and the narrative judges', :mod:`judgelab.study_models`), which
differ on OpenAI: a table is marked with its study's judge, and a table with a ``study`` column
(the planted study's calls) row by row."""
from __future__ import annotations

import pandas as pd

from judgelab import reporting
from judgelab.provenance import SMALL_MODEL_WARNING, is_embedded_small_model

STUDY_LABELS = {"sage": "SAGE", "narrative": "Narrative"}


def _judge(gateway) -> tuple[str, str]:
    backend, model = gateway.backend_name, gateway.model_name
    return f"{backend}:{model}", SMALL_MODEL_WARNING if is_embedded_small_model(backend, model) else ""


def mark(df: pd.DataFrame, gateways: dict, profile: str, study: str = "sage") -> pd.DataFrame:
    """``df`` with ``judge``, ``profile``, ``judge_note`` of ``study``'s (or each row's) judge."""
    studies = df["study"] if "study" in df.columns else pd.Series(study, index=df.index)
    unknown = sorted(set(studies) - set(gateways))
    if unknown:
        raise ValueError(f"no judge for study {unknown[0]!r}; known: {', '.join(sorted(gateways))}")
    judges = {s: _judge(g) for s, g in gateways.items()}
    return df.assign(judge=[judges[s][0] for s in studies], profile=profile,
                     judge_note=[judges[s][1] for s in studies])


def writer(run, gateways: dict, profile: str):
    """``write(tables, study="sage")``: each table of ``tables`` (output name -> frame) marked with
    its study's judge (:func:`mark`) and written through ``run``; returns the marked tables."""
    def write(tables: dict, study: str = "sage") -> dict:
        out = {name: mark(df, gateways, profile, study) for name, df in tables.items()}
        for name, df in out.items():
            studies = tuple(dict.fromkeys(df["study"])) if "study" in df.columns and len(df) else study
            run.table(df, name, study=studies)  # the sidecar names this table's own judge(s)
        return out
    return write


def banner(gateways: dict) -> str:
    """The model banner of each study's judge (:func:`judgelab.reporting.model_banner`), one per line."""
    # model_banner is a Markdown quote ("> ..."): the study's label goes inside it
    return "\n\n".join(f"> **{STUDY_LABELS.get(s, s)} calls:** "
                         + reporting.model_banner(g.backend_name, g.model_name).removeprefix("> ")
                         for s, g in gateways.items())


def caption(gateways: dict, profile: str, *studies: str) -> str:
    """A figure's provenance line: one when its studies' judges agree, else one per study."""
    lines = {s: reporting.caption_line(profile, gateways[s].backend_name, gateways[s].model_name) for s in studies}
    if len(set(lines.values())) == 1:
        return next(iter(lines.values()))
    return " ".join(f"{STUDY_LABELS.get(s, s)}: {line}" for s, line in lines.items())
