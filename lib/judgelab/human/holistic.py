"""The short holistic judge: one 1–10 quality score per story (``prompts/human/holistic.md``).

It follows the narrative judge's *simple* mode (the Narrative paper, section 3.4.1: one score, no
rubric), applied to a whole story, so that a judge's overall impression can be set against the
human ratings.

The score is an ``enum`` of 1..10 (``Literal``) because llama.cpp's JSON-schema grammar ignores
``minimum``/``maximum``; the optional reason has a ``maxLength`` so that a small model cannot run
it into ``max_tokens``.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from string import Template
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, create_model

from judgelab import paths
from judgelab.prompting import PromptTemplate, parse_template

MEASURE = "holistic"
"""The judge measure name of the holistic score in judge-score tables."""

Score = Literal[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
"""An enum, not an integer with bounds: llama.cpp's grammar enforces enums, not minimum/maximum."""


def prompt_path(prompts_dir: Path | None = None) -> Path:
    """``prompts/human/holistic.md`` (or ``<prompts_dir>/holistic.md``)."""
    return (Path(prompts_dir) if prompts_dir else paths.prompts_dir() / "human") / "holistic.md"


@lru_cache(maxsize=None)
def _load(path: Path) -> PromptTemplate:
    return parse_template(path.read_text(encoding="utf-8"), "holistic", path)


def load_template(prompts_dir: Path | None = None) -> PromptTemplate:
    """The parsed holistic prompt (its ``version`` is the gateway's ``template_version``)."""
    return _load(prompt_path(prompts_dir))


@lru_cache(maxsize=None)
def verdict_schema(reason_chars: int | None = None) -> type[BaseModel]:
    """Output model: ``score`` in 1..10 (enum); with ``reason_chars`` also a capped ``reason``."""
    fields: dict[str, Any] = {
        "score": (Score, Field(..., description="Overall quality, integer from 1 (very poor) to 10 (excellent).")),
    }
    if reason_chars:
        fields["reason"] = (str, Field(..., max_length=int(reason_chars), description="One-sentence reason."))
    return create_model("HolisticVerdict" + ("WithReason" if reason_chars else ""),
                        __config__=ConfigDict(extra="forbid"), __doc__="Holistic story judgement.", **fields)


def render(text: str, *, reason: bool = False, prompts_dir: Path | None = None) -> tuple[str, str, str]:
    """(system, user, template_version) for one story text."""
    if not str(text).strip():
        raise ValueError("the holistic judge needs a non-empty story text")
    tpl = load_template(prompts_dir)
    values = {"story": str(text).strip(), "explanations": tpl.explanations if reason else ""}
    return Template(tpl.system).substitute(values), Template(tpl.user).substitute(values), tpl.version


def build_request(story_id: str, text: str, *, dataset: str, max_tokens: int, temperature: float | None = 0.0,
                  seed: int = 7, replicate: int = 0, reason_chars: int | None = None,
                  reasoning_effort: str | None = None, prompts_dir: Path | None = None):
    """The gateway :class:`ChatRequest` judging one story (tags: study, dataset, measure, item)."""
    from judgelab.gateway import ChatRequest, Message, Sampling

    system, user, version = render(text, reason=bool(reason_chars), prompts_dir=prompts_dir)
    return ChatRequest(
        messages=[Message(role="system", content=system), Message(role="user", content=user)],
        schema=verdict_schema(reason_chars),
        sampling=Sampling(temperature=temperature, top_p=None, seed=seed, max_tokens=max_tokens,
                          reasoning_effort=reasoning_effort),
        replicate=replicate, template_version=version,
        tags={"study": "human", "dataset": dataset, "measure": MEASURE, "item": story_id},
        truncation=None,
    )


def judge_stories(gateway, stories: pd.DataFrame, *, dataset: str, max_tokens: int,
                  temperature: float | None = 0.0, seed: int = 7, reason_chars: int | None = None,
                  reasoning_effort: str | None = None, concurrency: int | None = None,
                  profile: str = "") -> pd.DataFrame:
    """The holistic judge per story: score (NaN when the call failed), reason, tokens, sampling."""
    missing = [c for c in ("story", "text") if c not in stories.columns]
    if missing:
        raise ValueError(f"stories: missing column(s) {missing}")
    reqs = [build_request(s, t, dataset=dataset, max_tokens=max_tokens, temperature=temperature, seed=seed,
                          reason_chars=reason_chars, reasoning_effort=reasoning_effort) for s, t in zip(stories["story"], stories["text"])]
    results = gateway.run_batch(reqs, concurrency=concurrency, desc=f"holistic {dataset}")
    rows = []
    for story, req, res in zip(stories["story"], reqs, results):
        ok = res.status == "ok" and res.parsed is not None
        usage = res.usage
        sent = gateway.as_sent(req).sampling if hasattr(gateway, "as_sent") else req.sampling
        rows.append({
            "dataset": dataset, "story": story, "measure": MEASURE,
            "score": float(res.parsed.score) if ok else float("nan"),
            "status": "ok" if ok else "failed", "error": None if ok else (res.error or "no parsed reply"),
            "reason": getattr(res.parsed, "reason", None) if ok else None,
            "input_tokens": getattr(usage, "input_tokens", None), "output_tokens": getattr(usage, "output_tokens", None),
            "cached": bool(res.cached), "backend": res.backend, "model": res.model,
            "template_version": req.template_version, "temperature": sent.temperature,
            "reasoning_effort": sent.reasoning_effort, "max_tokens": sent.max_tokens, "profile": profile,
        })
    return pd.DataFrame(rows)
