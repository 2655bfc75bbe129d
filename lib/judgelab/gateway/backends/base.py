"""The backend interface shared by llama.cpp and the OpenAI-protocol backends."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel

from judgelab.gateway.types import Sampling, Usage


@dataclass
class BackendReply:
    """One model reply: raw text, usage (``None`` when the backend gave none), reported model."""

    text: str
    usage: Usage | None
    reported_model: str
    latency_s: float
    finish_reason: str | None = None


class Backend(Protocol):
    """What the gateway needs from a backend."""

    #: ``llamacpp`` | ``openai`` | ``openai-compatible``
    name: str
    #: the model name recorded with every result
    model: str
    base_url: str | None
    #: the most calls it makes sense to run at once (1 for the in-process model)
    max_concurrency: int

    def identity(self) -> dict[str, Any]:
        """Everything about the backend that changes an answer (part of the cache key)."""

    def fit_messages(
        self, messages: list[dict], max_tokens: int, truncation: str | None, label: str
    ) -> tuple[list[dict], str | None]:
        """Make the prompt fit the context or raise ContextOverflowError naming ``label``.

        Returns the (possibly truncated) messages and a note describing any truncation.
        """

    def complete(self, messages: list[dict], schema: type[BaseModel] | None, sampling: Sampling) -> BackendReply:
        """One chat completion. Raises TransientError / PermanentError / ContextOverflowError."""

    def count_tokens(self, text: str) -> int:
        """Token count of ``text`` with this backend's tokenizer (or tiktoken's estimate)."""
