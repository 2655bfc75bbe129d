"""Pydantic schemas of every SAGE reply: the five evaluator rounds and the validator's two turns.

Scores are 1.0–5.0 with one decimal (the paper states no step; its convergence test, a change
below 0.3, needs a grid finer than halves) and confidence 1–5, both ``Literal`` (JSON Schema
``enum``, which the llama.cpp grammar enforces, unlike ``minimum``/``maximum``). Every string
has a ``maxLength`` so that a small model cannot run a string into ``max_tokens``; one required
property per dimension code, so a reply can neither skip nor invent one. Models are cached per
(layer, mode, lengths): the same request carries the same JSON Schema (part of the cache key).
"""
from __future__ import annotations

import functools
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from judgelab.sage.protocol.prompts import layer_spec

#: Allowed dimension scores: 1.0–5.0 with one decimal (41 values).
SCORE_VALUES: tuple[float, ...] = tuple(round(1 + i / 10, 1) for i in range(41))
SCALE_NOTE = "dimension scores 1.0–5.0, one decimal (schema-enforced)"
Score = Literal[SCORE_VALUES]  # type: ignore[valid-type]
Confidence = Literal[1, 2, 3, 4, 5]
EvidenceStrength = Literal["strong", "moderate", "weak", "absent"]
Severity = Literal["none", "low", "medium", "high"]
TrustLevel = Literal["high", "medium", "low"]
ReasoningQuality = Literal["good", "fair", "poor"]
Calibration = Literal["calibrated", "overconfident", "underconfident"]

ROUNDS = (1, 2, 3, 4, 5)

#: Round 2's layer-specific checks (paper Table 12 and prompt appendix): field -> description.
ROUND2_CHECKS: dict[str, dict[str, str]] = {
    "L4": {"hallucination_found": "a claim rests on a cultural or historical detail the source lacks",
           "overinterpretation_found": "an ambiguous passage was over-read"},
    "L5": {"projection_bias_found": "restraint read as shallowness or one culture's display norms applied",
           "explicitness_bias_found": "emotion words rewarded without substance"},
    "L6": {"western_frame_imposed": "a Western existentialist frame forced on another tradition",
           "explicit_philosophy_bias": "stated philosophy taken for depth",
           "profundity_bias": "dark themes ranked above joy or ordinary life"},
}

_FROZEN = ConfigDict(extra="forbid")


@functools.lru_cache(maxsize=None)
def dimension_score_model(evidence_chars: int, reasoning_chars: int = 0) -> type[BaseModel]:
    """One dimension's score, confidence, evidence strength and evidence (capped length); with
    ``reasoning_chars > 0`` also its ``reasoning`` (Round 1: the paper's "scores (per dimension:
    score, confidence, reasoning, evidence_strength)"), capped at that length."""
    fields: dict[str, tuple] = {
        "score": (Score, Field(description="1.0-5.0, one decimal")),
        "confidence": (Confidence, Field(description="1-5")),
        "evidence_strength": (EvidenceStrength, ...),
        "evidence": (str, Field(max_length=evidence_chars, description="quotation or cited reading")),
    }
    if reasoning_chars > 0:
        fields["reasoning"] = (str, Field(max_length=reasoning_chars,
                                          description="how the evidence leads to this score"))
    suffix = f"_{reasoning_chars}" if reasoning_chars > 0 else ""
    return create_model(f"DimensionScore{evidence_chars}{suffix}", __config__=_FROZEN, **fields)


@functools.lru_cache(maxsize=None)
def scores_model(layer: str, evidence_chars: int, reasoning_chars: int = 0) -> type[BaseModel]:
    """An object with one required :func:`dimension_score_model` per dimension code of ``layer``."""
    dim = dimension_score_model(evidence_chars, reasoning_chars)
    fields = {code: (dim, ...) for code in layer_spec(layer).codes}
    suffix = f"_{reasoning_chars}" if reasoning_chars > 0 else ""
    return create_model(f"{layer}Scores{evidence_chars}{suffix}", __config__=_FROZEN, **fields)


def _note(chars: int, what: str):
    return (str, Field(max_length=chars, description=what))


@functools.lru_cache(maxsize=None)
def round_schema(layer: str, mode: str, rnd: int, evidence_chars: int, note_chars: int,
                 reasoning_chars: int | None = None) -> type[BaseModel]:
    """The reply schema of evaluator round ``rnd`` (1–5) for ``layer`` and ``mode``.

    R1: ``extracted`` + ``scores`` with a ``reasoning`` per dimension (the paper's R1, the argument
    the review judges; at most ``reasoning_chars``) (+ ``knows_work`` in title mode). R2: the
    layer's :data:`ROUND2_CHECKS` + ``notes``. R3: ``boundary_violation`` + ``notes``. R4:
    ``notes`` (scores may not change: the runner flags a change). R5: ``convergence`` +
    ``overall_confidence``. Every round carries ``scores``.
    """
    scores = (scores_model(layer, evidence_chars), ...)
    fields: dict[str, tuple] = {}
    if rnd == 1:
        if mode == "title":
            fields["knows_work"] = (bool, Field(description="true only if the model knows this work"))
        fields["extracted"] = _note(note_chars, "layer-relevant content found")
        rc = note_chars if reasoning_chars is None else reasoning_chars
        if rc < 1:
            raise ValueError(f"Round 1 needs reasoning per dimension: reasoning_chars must be >= 1, got {rc}")
        scores = (scores_model(layer, evidence_chars, rc), ...)
    elif rnd == 2:
        for name, what in ROUND2_CHECKS[layer].items():
            fields[name] = (bool, Field(description=what))
        fields["notes"] = _note(note_chars, "what the check found")
    elif rnd == 3:
        fields["boundary_violation"] = (bool, Field(description="a score used another layer"))
        fields["notes"] = _note(note_chars, "the slip, if any")
    elif rnd == 4:
        fields["notes"] = _note(note_chars, "where evidence is thin")
    elif rnd == 5:
        fields["convergence"] = _note(note_chars, "which dimensions were stable since Round 4")
        fields["overall_confidence"] = (Confidence, ...)
    else:
        raise ValueError(f"round must be 1-5, got {rnd}")
    fields["scores"] = scores
    rsuffix = f"_{reasoning_chars}" if rnd == 1 and reasoning_chars is not None else ""
    return create_model(f"{layer}{mode.title()}Round{rnd}_{evidence_chars}_{note_chars}{rsuffix}",
                        __config__=_FROZEN, **fields)


@functools.lru_cache(maxsize=None)
def validator_schema(layer: str, turn: str, evidence_chars: int, note_chars: int) -> type[BaseModel]:
    """The validator's reply: ``turn="blind"`` (own scores) or ``"review"`` (review + scores + trust)."""
    scores = (scores_model(layer, evidence_chars), ...)
    if turn == "blind":
        return create_model(f"{layer}ValidatorBlind_{evidence_chars}", __config__=_FROZEN, scores=scores)
    if turn != "review":
        raise ValueError(f"validator turn must be 'blind' or 'review', got {turn!r}")
    return create_model(
        f"{layer}ValidatorReview_{evidence_chars}_{note_chars}",
        __config__=_FROZEN,
        projection_bias=(Severity, ...),
        hallucination=(Severity, ...),
        boundary_violation=(Severity, ...),
        reasoning_quality=(ReasoningQuality, ...),
        confidence_calibration=(Calibration, ...),
        agreements=_note(note_chars, "dimensions agreed on, with evidence"),
        disagreements=_note(note_chars, "dimensions disputed, with evidence"),
        scores=scores,
        trust_level=(TrustLevel, ...),
    )
