"""What llama.cpp and the OpenAI-protocol backends share: the interface, and the ``head_tail``
truncation (keep the beginning and the end of the longest user message, the story or document,
cut the middle) applied when a prompt does not fit the context and the caller opted in."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol

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
        """(messages, truncation note or None) that fit the context, else ContextOverflowError."""

    def complete(self, messages: list[dict], schema: type[BaseModel] | None, sampling: Sampling) -> BackendReply:
        """One chat completion. Raises TransientError / PermanentError / ContextOverflowError."""

    def count_tokens(self, text: str) -> int:
        """Token count of ``text`` with this backend's tokenizer (or tiktoken's estimate)."""


MARKER = "\n\n[... {n} tokens omitted to fit the context ...]\n\n"


def head_tail(text: str, excess: int, encode: Callable[[str], list[int]], decode: Callable[[list[int]], str]) -> tuple[str, int]:
    """Remove at least ``excess`` tokens from the middle of ``text``.

    Returns the new text and the number of tokens removed. Raises ValueError if the text is too
    short to lose that many tokens and keep a head and a tail.
    """
    tokens = encode(text)
    marker_cost = len(encode(MARKER.format(n=len(tokens))))
    cut = excess + marker_cost
    keep = len(tokens) - cut
    if keep < 2:
        raise ValueError(f"cannot cut {excess} tokens from a message of {len(tokens)} tokens")
    head = keep // 2 + keep % 2
    tail = keep // 2
    new = decode(tokens[:head]) + MARKER.format(n=cut) + decode(tokens[len(tokens) - tail:])
    return new, cut


def longest_user_message(messages: list[dict]) -> int:
    """Index of the longest user message (where a story or document lives)."""
    best, best_len = -1, -1
    for i, m in enumerate(messages):
        if m["role"] == "user" and len(m["content"]) > best_len:
            best, best_len = i, len(m["content"])
    if best < 0:
        raise ValueError("no user message to truncate")
    return best


def fit_by_head_tail(
    messages: list[dict],
    prompt_tokens: Callable[[list[dict]], int],
    budget: int,
    encode: Callable[[str], list[int]],
    decode: Callable[[list[int]], str],
    rounds: int = 4,
) -> tuple[list[dict], str]:
    """Cut the longest user message until ``prompt_tokens(messages) <= budget``.

    Decoding token slices can re-tokenize slightly differently, so the check is repeated.
    """
    msgs = [dict(m) for m in messages]
    idx = longest_user_message(msgs)
    total_cut = 0
    before = prompt_tokens(msgs)
    for i in range(rounds + 1):
        n = prompt_tokens(msgs)
        if n <= budget:
            return msgs, f"head_tail: cut {total_cut} tokens from message {idx} ({before} -> {n} prompt tokens)"
        if i == rounds:
            raise ValueError(f"head_tail truncation could not fit the prompt ({n} > {budget} tokens)")
        msgs[idx]["content"], cut = head_tail(msgs[idx]["content"], n - budget + 8, encode, decode)
        total_cut += cut
