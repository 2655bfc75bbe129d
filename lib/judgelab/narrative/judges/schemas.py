"""Output schemas of the narrative judge, one pydantic model per prompt mode (the Narrative paper, 4.2).

Scores are an ``enum`` of the integers 1..10, not an integer with bounds: llama.cpp's JSON-schema
grammar ignores ``minimum``/``maximum`` but enforces enums (docs/design.md, "Engines: embedded by
default, live by configuration").
Every string has a ``maxLength`` so that a small model cannot run a free-text field into
``max_tokens``. Explanations are optional and off by default (the paper: "require_explanations
was set to False"); the chain-of-thought mode's three reasoning steps are the mode itself, so
always present. The overall score of standard and complex is the mean of their dimensions (paper
3.4.3: "The overall score averages these dimensions").
"""
from __future__ import annotations

from functools import lru_cache
from statistics import fmean
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from judgelab.narrative.judges.prompts import check_mode

Score = Literal[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
"""A judge's score: one of the integers 1..10 (an ``enum`` in the JSON schema)."""

SCORE_VALUES: tuple[int, ...] = tuple(range(1, 11))

STANDARD_DIMENSIONS: tuple[str, ...] = (
    "logical_flow", "thematic_consistency", "temporal_coherence", "narrative_completeness",
)
COMPLEX_CRITERIA: tuple[str, ...] = (
    "semantic_coherence", "topic_evolution", "information_density",
    "causal_relationships", "narrative_arc", "contextual_relevance",
)
COT_STEPS: tuple[str, ...] = ("step1_connections", "step2_overall_flow", "step3_transitions")

SCORE_FIELDS: dict[str, tuple[str, ...]] = {
    "simple": ("coherence_score",),
    "cot": ("coherence_score",),
    "standard": STANDARD_DIMENSIONS,
    "complex": COMPLEX_CRITERIA,
}
"""The score fields of each mode; :func:`overall_score` averages them."""

DEFAULT_REASONING_CHARS = 400
DEFAULT_EXPLANATION_CHARS = 300


def _text(max_chars: int, description: str):
    return (str, Field(..., max_length=max_chars, description=description))


def _explanation_fields(mode: str, max_chars: int) -> dict:
    if mode in ("simple", "cot"):
        return {"explanation": _text(max_chars, "A short explanation of the score.")}
    return {
        f"{name}_explanation": _text(max_chars, f"A one-sentence reason for {name}.")
        for name in SCORE_FIELDS[mode]
    }


@lru_cache(maxsize=None)
def judge_schema(
    mode: str,
    *,
    explanations: bool = False,
    reasoning_chars: int = DEFAULT_REASONING_CHARS,
    explanation_chars: int = DEFAULT_EXPLANATION_CHARS,
) -> type[BaseModel]:
    """The pydantic output model of ``mode`` (cached: the same arguments give the same class).

    Fields in the order the model writes them: CoT's reasoning steps before its score,
    explanations after the scores; ``reasoning_chars`` and ``explanation_chars`` are their
    ``maxLength``."""
    check_mode(mode)
    fields: dict = {}
    if mode == "cot":
        descriptions = {
            "step1_connections": "How well each document follows from the previous one.",
            "step2_overall_flow": "Whether the sequence develops one storyline.",
            "step3_transitions": "Any abrupt or jarring transitions.",
        }
        fields.update({s: _text(reasoning_chars, descriptions[s]) for s in COT_STEPS})
    for name in SCORE_FIELDS[mode]:
        fields[name] = (Score, Field(..., description="Integer score from 1 (lowest) to 10 (highest)."))
    if explanations:
        fields.update(_explanation_fields(mode, explanation_chars))
    suffix = "WithExplanations" if explanations else ""
    name = {"simple": "Simple", "cot": "ChainOfThought", "standard": "Standard", "complex": "Complex"}[mode]
    return create_model(
        f"{name}Judgement{suffix}",
        __config__=ConfigDict(extra="forbid"),
        __doc__=f"Narrative coherence judgement, {mode} mode.",
        **fields,
    )


def overall_score(mode: str, parsed: BaseModel | dict) -> float:
    """The narrative's overall score for ``mode``: the single score (simple, CoT) or the
    arithmetic mean of the dimension scores (standard: 4, complex: 6)."""
    check_mode(mode)
    data = parsed if isinstance(parsed, dict) else parsed.model_dump()
    return float(fmean(float(data[f]) for f in SCORE_FIELDS[mode]))

