"""Prompt tokens as the configured backend will count them, offline and without a model load.

* ``openai`` / ``openai-compatible``: tiktoken with the model's encoding (the gateway's own count);
  OpenAI's structured outputs also bill the response schema as prompt tokens, counted as the
  strict schema's JSON text (:func:`schema_tokens`), an estimate of OpenAI's own rendering;
* ``llamacpp``: the GGUF's vocabulary alone (no weights read) and its chat template, i.e. what
  :meth:`LlamaCppBackend.prompt_tokens` evaluates (the schema is a grammar there, not prompt text).

Later requests of a conversation resend earlier replies, not given yet: :func:`reply` builds two
schema-valid stand-ins that bound them, ``"min"`` (first enum value, ``false``, empty strings) and
``"max"`` (the longest enum value, every string at its ``maxLength`` in English words), from the
grammar form of the schema and validated by it, so a change of schema changes the estimate.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable

from pydantic import BaseModel

from judgelab import tokens
from judgelab.gateway.schema import grammar_schema


@lru_cache(maxsize=None)
def _vocab_and_formatter(gguf: str):
    """The vocabulary-only Llama of ``gguf`` and its chat formatter (None when it has no template)."""
    from judgelab.gateway.backends.llamacpp import _load_vocab, chat_formatter

    vocab = _load_vocab(gguf)
    return vocab, chat_formatter(vocab)


@lru_cache(maxsize=4096)
def schema_tokens(schema, model: str) -> int:
    """Tokens of ``schema``'s strict JSON Schema text under ``model``'s tiktoken encoding."""
    from judgelab.gateway.schema import strict_schema

    return tokens.count_tokens(json.dumps(strict_schema(schema), separators=(",", ":")), model)


@dataclass
class TokenCounter:
    """Counts text and whole chat prompts for one backend and model (see module docstring)."""

    backend: str
    model: str
    gguf: str | None = None
    schema_in_prompt: bool = False
    _memo: dict = field(default_factory=dict, repr=False)

    @classmethod
    def for_settings(cls, backend: str, model: str | None) -> "TokenCounter":
        """The counter for resolved gateway settings (``model`` None = the bundled GGUF)."""
        if backend == "llamacpp":
            from pathlib import Path

            from judgelab.gateway.backends.llamacpp import bundled_gguf

            path = Path(model).expanduser() if model else bundled_gguf()
            return cls(backend, path.stem, gguf=str(path.resolve()))
        if not model:
            raise ValueError(f"backend {backend} needs a model name (JUDGELAB_MODEL) to count tokens")
        return cls(backend, model, schema_in_prompt=backend == "openai")

    @property
    def tokenizer(self) -> str:
        """What counts the tokens, for the printed report."""
        if self.gguf:
            return f"GGUF vocabulary of {self.model} (llama.cpp, chat template applied)"
        return f"tiktoken {tokens.encoding_name_for(self.model)}"

    def text(self, text: str) -> int:
        """Tokens of plain ``text`` (no chat framing)."""
        if self.gguf:
            vocab, _ = _vocab_and_formatter(self.gguf)
            return len(vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False))
        return self._content(text)

    def messages(self, messages: list[dict]) -> int:
        """Prompt tokens of a chat (framing included), memoised on the messages' text."""
        key = tuple((m["role"], m["content"]) for m in messages)
        if key not in self._memo:
            self._memo[key] = self._count(messages)
        return self._memo[key]

    def _count(self, messages: list[dict]) -> int:
        if not self.gguf:
            # count_message_tokens is a sum over messages: count each distinct text once (a story
            # is resent in every round)
            return sum(self._content(m["content"]) + 4 for m in messages) + 3
        vocab, fmt = _vocab_and_formatter(self.gguf)
        if fmt is None:
            return self.text("\n".join(m["content"] for m in messages))
        res = fmt(messages=messages)
        return len(vocab.tokenize(res.prompt.encode("utf-8"), add_bos=not res.added_special, special=True))

    def _content(self, text: str) -> int:
        key = ("text", text)
        if key not in self._memo:
            self._memo[key] = tokens.count_tokens(text, self.model)
        return self._memo[key]

    def request(self, messages: list[dict], schema) -> int:
        """Prompt tokens of a request: the messages, plus the schema where the API bills it."""
        n = self.messages(messages)
        if schema is not None and self.schema_in_prompt:
            n += schema_tokens(schema, self.model)
        return n

    def one_turn(self, req) -> dict:
        """The token columns of a one-turn request: its exact input, no cached prefix (far below
        OpenAI's 1,024-token floor), the stand-in replies' sizes, the budget and effort."""
        n = self.request([{"role": m.role, "content": m.content} for m in req.messages], req.schema)
        sent = req.sampling
        return {"max_tokens": sent.max_tokens, "reasoning_effort": sent.reasoning_effort,
                "input_min": n, "input_max": n, "cached_min": 0, "cached_max": 0,
                "reply_min": self.text(reply(req.schema, "min")[0]),
                "reply_max": self.text(reply(req.schema, "max")[0])}

    def text_counter(self) -> Callable[[str], int]:
        """``count_tokens`` for the SAGE text budget (the gateway's ``count_tokens`` equivalent)."""
        return self.text


SIZES = ("min", "max")
#: Filler for strings at their cap: common English words (about 4-5 characters per token, as prose).
_WORDS = ("the story keeps its quiet tone while the evidence in the middle passage shows how the "
          "narrator weighs memory against duty and returns to the harbour at the end ").split()


def filler(chars: int) -> str:
    """English-like text of exactly ``chars`` characters (0 -> empty)."""
    if chars <= 0:
        return ""
    line = " ".join(_WORDS)
    text = ((line + " ") * (chars // len(line) + 1))[:chars]
    return text[:-1] + "s" if text.endswith(" ") else text  # exactly ``chars``, no trailing blank


def _value(node: dict, size: str) -> Any:
    if "enum" in node:
        values = node["enum"]
        return max(values, key=lambda v: len(json.dumps(v))) if size == "max" else values[0]
    if "anyOf" in node:
        return _value(node["anyOf"][0], size)
    kind = node.get("type")
    if kind == "object":
        return {k: _value(v, size) for k, v in node.get("properties", {}).items()}
    if kind == "array":
        n = node.get("maxItems", 1) if size == "max" else node.get("minItems", 0)
        return [_value(node.get("items", {}), size) for _ in range(n)]
    if kind == "string":
        return filler(int(node.get("maxLength", 0))) if size == "max" else ""
    if kind == "boolean":
        return size == "max"
    if kind in ("integer", "number"):
        return node.get("maximum" if size == "max" else "minimum", 0)
    return None


@lru_cache(maxsize=None)
def reply(schema: type[BaseModel] | None, size: str, free_text_chars: int = 0) -> tuple[str, Any]:
    """(text, parsed) of a stand-in reply of ``size`` for ``schema`` (None = free text); cached,
    since the schema classes are (the parsed object is a frozen pydantic model)."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}, got {size!r}")
    if schema is None:
        text = filler(free_text_chars) if size == "max" else "ok"
        return text, text
    data = _value(grammar_schema(schema), size)
    parsed = schema.model_validate(data)
    return json.dumps(parsed.model_dump(mode="json"), ensure_ascii=False), parsed
