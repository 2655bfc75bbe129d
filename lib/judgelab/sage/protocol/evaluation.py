"""One SAGE evaluation: the five-round iterative evaluator and the two-turn validator.

Paper, "Dual-Track Evaluation Architecture" and Table 12:

- **Evaluator** (one conversation): R1 extraction and scores; R2 the layer's bias check (L4
  hallucination, L5 projection, L6 Western frame / explicit philosophy / profundity); R3 layer
  boundary; R4 evidence sufficiency (confidence may change, scores may not — a changed score is
  kept and flagged by the runner); R5 consolidation with a convergence note.
- **Validator** (its own conversation): a *blind* scoring of the same material with no sight of
  the evaluator (the paper's stated independence; the original code showed it the evaluator's
  scores), then a *review* of the evaluator's transcript: biases, reasoning, its scores after
  review and a trust level.

Message layout (``prompts.LAYOUTS``, default ``shared-prefix``): one system message for every
call, then the material, the layer, the role and the turn's instructions, so that llama.cpp's KV
cache and OpenAI's prompt caching reuse system + story across one story's calls. A failed reply is
recorded, never scored: later rounds that need it are recorded as not run.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from judgelab.gateway import ChatRequest, ChatResult, Gateway, Message, Sampling
from judgelab.sage.protocol import prompts
from judgelab.sage.protocol import schemas
from judgelab.sage.protocol.modes import PreparedInput

EVALUATOR, BLIND, REVIEW = "evaluator", "validator_blind", "validator_review"


@dataclass(frozen=True)
class EvalConfig:
    """Per-run knobs (the profile's ``[sage]`` knobs) that shape the requests."""

    max_tokens: int = 420
    evidence_chars: int = 60
    note_chars: int = 80
    #: ``maxLength`` of each dimension's Round 1 ``reasoning`` (sage-v5; the paper's R1)
    reasoning_chars: int = 60
    temperature: float | None = 0.0
    seed: int | None = 7
    reasoning_effort: str | None = None
    #: message layout, one of ``prompts.LAYOUTS`` (``v2`` only to benchmark the old order)
    layout: str = "shared-prefix"

    @classmethod
    def from_settings(cls, settings: dict[str, Any]) -> "EvalConfig":
        return cls(**{k: settings[k] for k in cls.__dataclass_fields__ if k in settings})

    def sampling(self) -> Sampling:
        return Sampling(temperature=self.temperature, seed=self.seed, max_tokens=self.max_tokens,
                        reasoning_effort=self.reasoning_effort)


@dataclass(frozen=True)
class EvalItem:
    """One evaluation = (story, layer, mode) with its prepared material."""

    story_id: str
    category: str
    tier: str
    layer: str
    mode: str
    prepared: PreparedInput


@dataclass
class Call:
    """One reply of a track: the gateway result, or None when the call was not run."""

    track: str
    round: int
    result: ChatResult | None
    error: str | None = None
    messages: list[Message] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.result is not None and self.result.status == "ok"

    @property
    def parsed(self) -> Any:
        return self.result.parsed if self.ok else None

    @property
    def failure(self) -> str | None:
        if self.ok:
            return None
        if self.result is not None:
            return self.result.error or "failed"
        return self.error or "not run"


@dataclass
class Evaluation:
    """All calls of one evaluation, evaluator rounds 1–5 then the validator's two turns."""

    item: EvalItem
    calls: list[Call]
    template_version: str

    def call(self, track: str, rnd: int = 1) -> Call | None:
        for c in self.calls:
            if c.track == track and c.round == rnd:
                return c
        return None


def _request(item: EvalItem, messages: list[Message], schema, cfg: EvalConfig, track: str, rnd: int,
             version: str) -> ChatRequest:
    return ChatRequest(
        messages=messages, schema=schema, sampling=cfg.sampling(), replicate=0, template_version=version,
        tags={"study": "sage", "layer": item.layer, "mode": item.mode, "item": item.story_id,
              "track": track, "round": rnd},
        truncation=None,  # the text was already fitted by the context policy (stable prefix)
    )


def _reply_text(res: ChatResult) -> str:
    """What the assistant said, as it goes back into the conversation (raw text keeps the KV prefix)."""
    if res.text:
        return res.text
    return json.dumps(res.data, ensure_ascii=False)


def opening(item: EvalItem, role: str = "evaluator", layout: str = "shared-prefix") -> Message:
    """The system message of ``role``'s conversation: in the shared-prefix layout the same for
    every role, layer and mode; in ``v2`` it carries the role's and the layer's blocks."""
    return Message(role="system", content=first_messages(item, role, "", layout)[0].content)


def first_messages(item: EvalItem, role: str, instructions: str, layout: str = "shared-prefix") -> list[Message]:
    """[system, user] of a track's first turn (``prompts.first_turn``): the material, the layer
    block and the role's block come with ``instructions``."""
    system, user = prompts.first_turn(item.layer, item.mode, role, item.prepared.material, instructions, layout)
    return [Message(role="system", content=system), Message(role="user", content=user)]


def run_evaluator(gw: Gateway, item: EvalItem, cfg: EvalConfig, version: str) -> list[Call]:
    """Rounds 1–5 as one growing conversation; after a failed round the rest are not run."""
    messages: list[Message] = []
    calls: list[Call] = []
    for rnd in schemas.ROUNDS:
        if calls and not calls[-1].ok:
            calls.append(Call(EVALUATOR, rnd, None, error=f"not run: round {rnd - 1} failed"))
            continue
        instructions = prompts.round_instructions(item.layer, item.mode, rnd)
        if rnd == 1:
            messages = first_messages(item, "evaluator", instructions, cfg.layout)
        else:
            messages = messages + [Message(role="user", content=instructions)]
        schema = schemas.round_schema(item.layer, item.mode, rnd, cfg.evidence_chars, cfg.note_chars,
                                      cfg.reasoning_chars)
        res = gw.chat(_request(item, messages, schema, cfg, EVALUATOR, rnd, version))
        calls.append(Call(EVALUATOR, rnd, res, messages=messages))
        if res.status == "ok":
            messages = messages + [Message(role="assistant", content=_reply_text(res))]
    return calls


def transcript(calls: list[Call]) -> str:
    """The evaluator's five rounds as the validator reads them: per round its notes and, per
    dimension, score, confidence, evidence and (Round 1) reasoning (compact, so the review turn
    stays short)."""
    lines = []
    for c in calls:
        if c.track != EVALUATOR or not c.ok:
            continue
        data = c.result.data
        parts = []
        for code, d in data["scores"].items():
            why = f"; why: {d['reasoning']!r}" if d.get("reasoning") else ""
            parts.append(f"{code} {d['score']} (conf {d['confidence']}, {d['evidence_strength']}: {d['evidence']!r}{why})")
        extras = {k: v for k, v in data.items() if k != "scores"}
        extra = "; ".join(f"{k}={v}" for k, v in extras.items())
        lines.append(f"Round {c.round}: " + "; ".join(parts) + (f" | {extra}" if extra else ""))
    return "\n".join(lines)


def run_validator(gw: Gateway, item: EvalItem, cfg: EvalConfig, version: str,
                  evaluator_calls: list[Call]) -> list[Call]:
    """The blind turn (no evaluator output anywhere in its messages), then the review turn."""
    messages = first_messages(item, "validator", prompts.blind_instructions(item.layer, item.mode), cfg.layout)
    blind_schema = schemas.validator_schema(item.layer, "blind", cfg.evidence_chars, cfg.note_chars)
    blind = gw.chat(_request(item, messages, blind_schema, cfg, BLIND, 1, version))
    calls = [Call(BLIND, 1, blind, messages=messages)]
    final = next((c for c in evaluator_calls if c.track == EVALUATOR and c.round == 5), None)
    if blind.status != "ok":
        calls.append(Call(REVIEW, 1, None, error="not run: the blind validator turn failed"))
        return calls
    if final is None or not final.ok:
        calls.append(Call(REVIEW, 1, None, error="not run: the evaluator has no final round"))
        return calls
    messages = messages + [
        Message(role="assistant", content=_reply_text(blind)),
        Message(role="user", content=prompts.validator_review_prompt(item.layer, item.mode, transcript(evaluator_calls))),
    ]
    review_schema = schemas.validator_schema(item.layer, "review", cfg.evidence_chars, cfg.note_chars)
    review = gw.chat(_request(item, messages, review_schema, cfg, REVIEW, 1, version))
    calls.append(Call(REVIEW, 1, review, messages=messages))
    return calls


def template_version(layer: str, layout: str = "shared-prefix") -> str:
    """``prompts.template_version`` plus the layout when it is not the default (the cache key
    then differs, so the two layouts never share cached replies)."""
    base = prompts.template_version(layer)
    return base if layout == "shared-prefix" else f"{base}-{layout}"


def evaluate(gw: Gateway, item: EvalItem, cfg: EvalConfig) -> Evaluation:
    """Evaluator rounds 1–5, then the validator (blind, review), back to back so that the story's
    prefix stays in the llama.cpp KV cache; never raises for a model failure."""
    version = template_version(item.layer, cfg.layout)
    ev = run_evaluator(gw, item, cfg, version)
    val = run_validator(gw, item, cfg, version, ev)
    return Evaluation(item=item, calls=ev + val, template_version=version)
