"""Reading a model's reply: extract the JSON object and validate it against the pydantic schema.
The error text is what a repair turn shows the model: each failing field, what was wrong, the value.

Replies are strict: a JSON value is never coerced into another JSON type. Pydantic's lax mode
turns ``true`` into the score 1 and ``"7"`` or ``7.0`` into 7, and even its strict mode lets
``true`` and ``1.0`` pass for ``Literal[1, ..., 10]`` (``True == 1``), the form of every score in
the studies. So each value's JSON type is checked against the schema's ``type``/``enum`` first
(:func:`json_type_errors`; an integer is a number, as in JSON Schema), then pydantic validates in
strict mode: the gateway's guarantee for every schema, backend and batch mode.

Free text over its ``maxLength`` is cut to it and recorded, never refused (:func:`clip_free_text`):
OpenAI's strict mode is sent no ``maxLength`` (:func:`judgelab.gateway.schema.strict_schema`), and
refusing a longer quote would pay two repair turns for a reply whose scores were valid. Only plain
strings are cut: an ``enum``, ``const``, ``pattern`` or ``format`` value is still refused if wrong.
"""
from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ValidationError

_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


def extract_json(text: str) -> Any:
    """The JSON value in ``text`` (whole, fenced, or the first ``{...}``); else ValueError."""
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


def _json_type_ok(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    checks = {"boolean": bool, "string": str, "object": dict, "array": list}
    if kind in checks:
        return isinstance(value, checks[kind])
    return value is None if kind == "null" else True


def _same_json_value(value: Any, allowed: Any) -> bool:
    """``value == allowed`` without Python's bool/int/float identities (an int may stand for a float)."""
    if isinstance(value, bool) or isinstance(allowed, bool):
        return isinstance(value, bool) and isinstance(allowed, bool) and value is allowed
    if isinstance(allowed, float) and isinstance(value, int):
        return value == allowed
    return type(value) is type(allowed) and value == allowed


def _json_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float):
        return "a float"
    names = {int: "an integer", str: "a string", dict: "an object", list: "an array", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def json_type_errors(value: Any, node: dict, loc: str = "") -> list[str]:
    """Where ``value`` breaks the JSON types of schema ``node`` (``$ref``s inlined): one
    ``loc: message (got value)`` line per failing value, empty when every type holds."""
    here = loc or "<root>"
    got = json.dumps(value, default=str)[:60]
    for key in ("anyOf", "oneOf"):
        if key in node:
            branches = [json_type_errors(value, sub, loc) for sub in node[key]]
            if all(branches):
                return min(branches, key=len)
    errors = [e for sub in node.get("allOf", []) for e in json_type_errors(value, sub, loc)]
    kinds = node.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else list(kinds)
        if not any(_json_type_ok(value, k) for k in kinds):
            return errors + [f"{here}: expected type {' or '.join(kinds)}, not {_json_name(value)}: "
                             f"values are not converted (got {got})"]
    allowed = node["enum"] if "enum" in node else [node["const"]] if "const" in node else None
    if allowed is not None and any(value == a for a in allowed) and not any(_same_json_value(value, a) for a in allowed):
        return errors + [f"{here}: expected one of {json.dumps(allowed)[:80]}, not {_json_name(value)}: "
                         f"values are not converted (got {got})"]
    if isinstance(value, dict):
        props = node.get("properties", {})
        extra = node.get("additionalProperties")
        for name, sub in value.items():
            schema = props.get(name, extra if isinstance(extra, dict) else None)
            if schema is not None:
                errors += json_type_errors(sub, schema, f"{loc}.{name}" if loc else str(name))
    elif isinstance(value, list):
        prefix, items = node.get("prefixItems", []), node.get("items")
        for i, sub in enumerate(value):
            schema = prefix[i] if i < len(prefix) else items if isinstance(items, dict) else None
            if schema is not None:
                errors += json_type_errors(sub, schema, f"{loc}.{i}" if loc else str(i))
    return errors


_VALUE_KEYS = ("enum", "const", "pattern", "format")


def clip_free_text(value: Any, node: dict, loc: str = "") -> tuple[Any, list[str]]:
    """``value`` with every plain string over its ``maxLength`` cut to it, and one
    ``loc: N chars cut to M`` note per cut; strings under a value key or a union are left alone."""
    if isinstance(value, str):
        cap = node.get("maxLength")
        if node.get("type") == "string" and cap is not None and len(value) > cap \
                and not any(k in node for k in _VALUE_KEYS):
            return value[:int(cap)], [f"{loc or '<root>'}: {len(value)} chars cut to {int(cap)}"]
        return value, []
    notes: list[str] = []
    if isinstance(value, dict) and "properties" in node:
        out = dict(value)
        for name, sub in node["properties"].items():
            if name in out:
                out[name], more = clip_free_text(out[name], sub, f"{loc}.{name}" if loc else name)
                notes += more
        return out, notes
    if isinstance(value, list) and isinstance(node.get("items"), dict):
        out_list = []
        for i, sub in enumerate(value):
            clipped, more = clip_free_text(sub, node["items"], f"{loc}.{i}" if loc else str(i))
            out_list.append(clipped)
            notes += more
        return out_list, notes
    return value, notes


def validate_strict(value: Any, schema: type[BaseModel], clipped: list[str] | None = None) -> tuple[Any, str | None]:
    """(object, None) when ``value`` holds the schema's JSON types and validates strictly, else
    (None, the error for a repair turn); free text is cut first, its notes added to ``clipped``."""
    from judgelab.gateway.schema import model_schema

    node = model_schema(schema)
    wrong = json_type_errors(value, node)
    if not wrong:
        value, notes = clip_free_text(value, node)
        if clipped is not None:
            clipped.extend(notes)
    if wrong:
        more = f"; ... and {len(wrong) - 8} more" if len(wrong) > 8 else ""
        return None, "schema violation: " + "; ".join(wrong[:8]) + more
    try:  # JSON mode: strict about types, yet enums and dates may come as their JSON forms
        return schema.model_validate_json(json.dumps(value), strict=True), None
    except ValidationError as exc:
        return None, f"schema violation: {describe_validation_error(exc)}"


def parse_reply(text: str | None, schema: type[BaseModel] | None, finish_reason: str | None = None,
                clipped: list[str] | None = None) -> tuple[Any, str | None]:
    """(parsed object, None) or (None, error text); free text (``schema=None``) takes any
    non-empty reply; ``clipped`` receives a note per string cut to its cap."""
    cut = " — the reply was cut off by max_tokens" if finish_reason == "length" else ""
    if text is None or not text.strip():
        return None, "empty reply" + cut
    if schema is None:
        return text, None
    try:
        value = extract_json(text)
    except ValueError as exc:
        return None, f"{exc}{cut}"
    notes: list[str] = []
    parsed, error = validate_strict(value, schema, notes)
    if error is not None:
        return None, f"{error}{cut}"
    if clipped is not None:
        clipped.extend(notes)
    return parsed, None


def repair_message(error: str, schema: type[BaseModel]) -> str:
    """The user turn that shows the model its validation error and asks again."""
    from judgelab.gateway.schema import model_schema

    return (
        f"Your previous reply could not be accepted: {error}. "
        "Reply again with only one JSON object that satisfies this JSON Schema, and nothing else:\n"
        + json.dumps(model_schema(schema), separators=(",", ":"))
    )
