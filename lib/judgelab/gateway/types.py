"""Request and result types of the gateway (pydantic models): a :class:`ChatRequest` holds all
that can change an answer plus accounting ``tags``; a :class:`ChatResult` is a validated object or
a recorded failure, never a default value."""
from __future__ import annotations

import warnings
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

Role = Literal["system", "user", "assistant"]
Status = Literal["ok", "failed"]
Truncation = Literal["head_tail"]


class Message(BaseModel):
    """One chat message."""

    model_config = ConfigDict(frozen=True)

    role: Role
    content: str


class Sampling(BaseModel):
    """Sampling settings, all part of the cache key; ``reasoning_effort`` goes to reasoning models
    only (gpt-5 family, o-series), which get no ``temperature``/``top_p``."""

    model_config = ConfigDict(frozen=True)

    temperature: float | None = 0.0
    top_p: float | None = None
    seed: int | None = 0
    max_tokens: int = Field(default=512, gt=0)
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None


class Usage(BaseModel):
    """Token usage of one logical call (repair turns included). ``estimated``: counted by tiktoken
    (the backend gave none); ``cached_tokens``: prompt tokens served from a prefix cache."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    estimated: bool = False

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            estimated=self.estimated or other.estimated,
        )


# ``schema`` shadows the deprecated ``BaseModel.schema()`` classmethod; the contract in
# CONTRIBUTING.md names the field ``schema``, and instance access returns the field value.
with warnings.catch_warnings():
    warnings.simplefilter("ignore")

    class ChatRequest(BaseModel):
        """One chat-completion request. ``schema``: a pydantic model class (sent as JSON Schema,
        validates the reply) or None for free text; ``tags`` go to the ledger and error messages,
        not into the cache key; ``truncation="head_tail"`` lets the gateway cut the middle of the
        longest user message when the prompt does not fit the context."""

        model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True, protected_namespaces=())

        messages: list[Message]
        schema: Any = None
        sampling: Sampling = Field(default_factory=Sampling)
        replicate: int = 0
        template_version: str = "unversioned"
        tags: dict[str, Any] = Field(default_factory=dict)
        truncation: Truncation | None = None
        #: True once the gateway has replaced ``sampling`` by what it sends (gateway.reasoning)
        _as_sent: bool = PrivateAttr(default=False)

        @field_validator("messages")
        @classmethod
        def _non_empty(cls, v: list[Message]) -> list[Message]:
            if not v:
                raise ValueError("a ChatRequest needs at least one message")
            return v

        @field_validator("schema")
        @classmethod
        def _is_model_class(cls, v: Any) -> Any:
            if v is not None and not (isinstance(v, type) and issubclass(v, BaseModel)):
                raise ValueError(f"schema must be a pydantic model class or None, got {v!r}")
            return v

        def item_label(self) -> str:
            if not self.tags:
                return "<untagged request>"
            return ", ".join(f"{k}={v}" for k, v in self.tags.items())


class Failure(BaseModel):
    """Why a call failed, in fields a fan-out can group by: ``kind`` (one of
    :data:`judgelab.gateway.errors.KINDS`), the HTTP ``status`` (or None), ``url`` and ``model``.
    Two failures with the same :attr:`signature` would repeat alike on the next item."""

    model_config = ConfigDict(frozen=True, protected_namespaces=())

    kind: str
    status: int | None = None
    url: str | None = None
    model: str | None = None

    @property
    def signature(self) -> tuple[str, int | None]:
        return self.kind, self.status

    @classmethod
    def from_exception(cls, exc: BaseException, url: str | None = None, model: str | None = None) -> "Failure":
        """The failure an exception describes (``url``/``model`` fill in what it does not name)."""
        return cls(kind=getattr(exc, "kind", None) or type(exc).__name__, status=getattr(exc, "status", None),
                   url=getattr(exc, "url", None) or url, model=getattr(exc, "model", None) or model)


class ChatResult(BaseModel):
    """The outcome of one :meth:`Gateway.chat` call: "ok" (``parsed``, or ``text`` for free text)
    or "failed" (``error`` says why, ``text`` keeps the raw reply). ``sampling`` is the sampling as
    sent (:func:`judgelab.gateway.reasoning.sent_sampling`), which tables record; ``failure`` the
    class of a failure (:mod:`judgelab.gateway.canary`), ``failure_detail`` the same in fields;
    ``clipped`` the free-text fields cut to their cap (:func:`~.parsing.clip_free_text`);
    ``batch_id`` the Batch API job that answered a fresh call (billed at the batch rate)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, protected_namespaces=())

    status: Status
    parsed: Any = None
    text: str | None = None
    error: str | None = None
    n_repairs: int = 0
    n_attempts: int = 0
    cached: bool = False
    backend: str
    model: str
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    truncated: bool = False
    truncation_note: str | None = None
    key: str = ""
    tags: dict[str, Any] = Field(default_factory=dict)
    sampling: Sampling | None = None
    failure: str | None = None
    failure_detail: Failure | None = None
    finish_reason: str | None = None
    clipped: list[str] = Field(default_factory=list)
    batch_id: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def data(self) -> dict | None:
        """The parsed object as a plain dict (None when failed or free text)."""
        if isinstance(self.parsed, BaseModel):
            return self.parsed.model_dump()
        return None


def sent_columns(result: Any) -> dict:
    """The sampling as sent of a result (its ``sampling``) as table columns: temperature and top_p
    NaN when none was sent, reasoning_effort None for a model that takes none; all missing when
    the result carries no sampling."""
    s = getattr(result, "sampling", None)
    nan = float("nan")
    if s is None:
        return {"temperature": nan, "top_p": nan, "reasoning_effort": None, "max_tokens": None, "seed": None}
    return {"temperature": nan if s.temperature is None else float(s.temperature),
            "top_p": nan if s.top_p is None else float(s.top_p), "reasoning_effort": s.reasoning_effort,
            "max_tokens": int(s.max_tokens), "seed": s.seed}
