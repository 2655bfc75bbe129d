"""Reading a model's reply: extract the JSON object and validate it against the pydantic schema.

The error text produced here is what a repair turn shows the model, so it names each failing
field, what was wrong and the value received, briefly.
"""
from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ValidationError

_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


def extract_json(text: str) -> Any:
    """The JSON value in ``text``: the whole text, a fenced block, or the first ``{...}`` object.

    Raises ValueError with the decoder's message when there is none.
    """
    stripped = _FENCE.sub("", text.strip())
    try:
        # strict=False: llama.cpp's JSON grammar lets raw newlines into strings; they are harmless.
        return json.loads(stripped, strict=False)
    except json.JSONDecodeError as first:
        start = stripped.find("{")
        if start > 0:
            try:
                value, _ = json.JSONDecoder(strict=False).raw_decode(stripped[start:])
                return value
            except json.JSONDecodeError:
                pass
        raise ValueError(f"not valid JSON ({first.msg} at line {first.lineno} column {first.colno})") from first


def describe_validation_error(exc: ValidationError, limit: int = 8) -> str:
    """One short line per failing field: ``loc: message (got value)``."""
    parts = []
    for err in exc.errors(include_url=False)[:limit]:
        loc = ".".join(str(p) for p in err["loc"]) or "<root>"
        got = json.dumps(err.get("input"), default=str)
        if len(got) > 60:
            got = got[:57] + "..."
        parts.append(f"{loc}: {err['msg']} (got {got})")
    more = len(exc.errors()) - limit
    if more > 0:
        parts.append(f"... and {more} more")
    return "; ".join(parts)


def parse_reply(text: str | None, schema: type[BaseModel] | None, finish_reason: str | None = None) -> tuple[Any, str | None]:
    """(parsed object, None) on success, (None, error text) on failure.

    Free-text requests (``schema=None``) succeed with any non-empty reply.
    """
    cut = " — the reply was cut off by max_tokens" if finish_reason == "length" else ""
    if text is None or not text.strip():
        return None, "empty reply" + cut
    if schema is None:
        return text, None
    try:
        value = extract_json(text)
    except ValueError as exc:
        return None, f"{exc}{cut}"
    try:
        return schema.model_validate(value), None
    except ValidationError as exc:
        return None, f"schema violation: {describe_validation_error(exc)}{cut}"


def repair_message(error: str, schema: type[BaseModel]) -> str:
    """The user turn that shows the model its validation error and asks again."""
    from judgelab.gateway.schema import model_schema

    return (
        f"Your previous reply could not be accepted: {error}. "
        "Reply again with only one JSON object that satisfies this JSON Schema, and nothing else:\n"
        + json.dumps(model_schema(schema), separators=(",", ":"))
    )
