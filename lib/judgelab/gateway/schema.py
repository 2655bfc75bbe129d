"""Pydantic model -> JSON Schema as each backend wants it (``$ref``s inlined; the reply is always
validated afterwards by the pydantic model itself).

* :func:`grammar_schema`, llama.cpp's JSON grammar: it enforces no ``minimum``/``maximum``, so
  bounded integers (and stepped floats) become an ``enum``; unbounded strings can run until
  ``max_tokens`` cuts the JSON, so every string gets a ``maxLength`` (every array a ``maxItems``).
* :func:`strict_schema`, OpenAI's strict structured outputs: objects closed and all properties
  required; ``default``, ``examples`` and length bounds dropped (strict mode has refused them, and
  a schema an endpoint refuses stops the whole run). A dropped cap is stated in the description
  ("At most 400 characters."); validation cuts a longer string (:mod:`judgelab.gateway.parsing`).
"""
from __future__ import annotations

import copy
import json
from decimal import Decimal
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

#: Largest enum we build from a numeric range; beyond it the bounds are left to validation.
MAX_ENUM_VALUES = 201
#: Cap given to strings that have no ``maxLength`` (characters).
DEFAULT_MAX_LENGTH = 600
#: Cap given to arrays that have no ``maxItems`` (a small model can list forever).
DEFAULT_MAX_ITEMS = 16

_STRICT_DROP = {"default", "maxLength", "minLength", "examples"}


def model_schema(model: type[BaseModel]) -> dict:
    """The pydantic JSON Schema of ``model`` with ``$ref``s inlined (a fresh copy)."""
    return copy.deepcopy(_model_schema(model))


@lru_cache(maxsize=512)
def _model_schema(model: type[BaseModel]) -> dict:
    # cached per class: building a schema costs far more than a cache-hit lookup
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})
    return _inline(raw, defs)


@lru_cache(maxsize=512)
def schema_json(model: type[BaseModel] | None) -> str | None:
    """Canonical JSON text of the model's schema (part of the cache key)."""
    if model is None:
        return None
    return json.dumps(_model_schema(model), sort_keys=True, separators=(",", ":"))


def grammar_schema(model: type[BaseModel], default_max_length: int = DEFAULT_MAX_LENGTH) -> dict:
    """Schema for llama.cpp's grammar: numeric ranges as ``enum``, strings capped."""
    return _walk(model_schema(model), lambda node: _grammar_node(node, default_max_length))


def strict_schema(model: type[BaseModel]) -> dict:
    """Schema for OpenAI strict structured outputs."""
    return _walk(model_schema(model), _strict_node)


def numeric_enum(node: dict) -> list | None:
    """The allowed values of a bounded integer or stepped number (exclusive bounds honoured); None
    when the range is open, not stepped, or longer than :data:`MAX_ENUM_VALUES`."""
    kind = node.get("type")
    if kind not in ("integer", "number"):
        return None
    step = node.get("multipleOf", 1 if kind == "integer" else None)
    lo = node.get("minimum", node.get("exclusiveMinimum"))
    hi = node.get("maximum", node.get("exclusiveMaximum"))
    if step is None or lo is None or hi is None:
        return None
    dstep, dlo, dhi = Decimal(str(step)), Decimal(str(lo)), Decimal(str(hi))
    # first multiple of step at or above the lower bound
    first = (dlo / dstep).to_integral_value(rounding="ROUND_CEILING") * dstep
    values = []
    v = first
    while v <= dhi:
        if not ("exclusiveMinimum" in node and v <= dlo) and not ("exclusiveMaximum" in node and v >= dhi):
            values.append(int(v) if kind == "integer" else float(v))
        if len(values) > MAX_ENUM_VALUES:
            return None
        v += dstep
    return values or None


def _grammar_node(node: dict, default_max_length: int) -> dict:
    values = numeric_enum(node)
    if values is not None:
        keep = {k: v for k, v in node.items() if k in ("title", "description")}
        return {**keep, "enum": values}
    if node.get("type") == "string" and "enum" not in node and "const" not in node:
        node.setdefault("maxLength", default_max_length)
    if node.get("type") == "array":
        node.setdefault("maxItems", DEFAULT_MAX_ITEMS)
    return node


def _strict_node(node: dict) -> dict:
    values = numeric_enum(node)
    if values is not None:
        keep = {k: v for k, v in node.items() if k in ("description",)}
        return {**keep, "type": node["type"], "enum": values}
    if node.get("type") == "string" and node.get("maxLength") is not None:
        node["description"] = cap_sentence(node.get("description"), int(node["maxLength"]))
    for key in _STRICT_DROP:
        node.pop(key, None)
    if node.get("type") == "object" and "properties" in node:
        node["additionalProperties"] = False
        node["required"] = list(node["properties"])
    return node


def cap_sentence(description: str | None, max_chars: int) -> str:
    """``description`` followed by the cap in words, as a strict schema states it."""
    head = (description or "").strip()
    if head and not head.endswith((".", "!", "?")):
        head += "."
    return f"{head} At most {max_chars} characters.".strip()


def _walk(node: Any, fn) -> Any:
    """Apply ``fn`` to every schema node, children first."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key in ("properties", "$defs", "definitions"):
                out[key] = {name: _walk(sub, fn) for name, sub in value.items()}
            elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
                out[key] = _walk(value, fn)
            elif key in ("anyOf", "oneOf", "allOf", "prefixItems") and isinstance(value, list):
                out[key] = [_walk(sub, fn) for sub in value]
            else:
                out[key] = copy.deepcopy(value)
        return fn(out)
    return node


def _inline(node: Any, defs: dict, depth: int = 0) -> Any:
    """Replace ``{"$ref": "#/$defs/X"}`` by the definition (recursive models are refused)."""
    if depth > 32:
        raise ValueError("schema nesting too deep (recursive model?); the gateway needs a finite schema")
    if isinstance(node, dict):
        if "$ref" in node:
            name = node["$ref"].split("/")[-1]
            if name not in defs:
                raise ValueError(f"schema reference {node['$ref']!r} not found in $defs")
            merged = {**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}
            return _inline(merged, defs, depth + 1)
        return {k: _inline(v, defs, depth + 1) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, defs, depth + 1) for v in node]
    return node
