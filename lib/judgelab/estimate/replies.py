"""Schema-valid stand-in replies that bound what a model's answer can add to a conversation.

Later requests of a multi-turn conversation (SAGE rounds 2-5, the validator's review) resend the
earlier replies, so their size depends on answers not given yet. Two stand-ins bound it:

* ``"min"``: the shortest valid reply (first enum value, ``false``, empty strings);
* ``"max"``: the longest the schema allows (the longest enum value, every string filled to its
  ``maxLength`` with ordinary English words, as the llama.cpp grammar and the validator cap it).

Both are built from the grammar form of the schema (:func:`judgelab.gateway.schema.grammar_schema`:
``$ref``s inlined, every string capped) and validated by the pydantic model, so a change of schema
changes the estimate with it.
"""
from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from judgelab.gateway.schema import grammar_schema

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
