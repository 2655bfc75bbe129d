"""How the in-process llama.cpp backend turns a chat request into prompt tokens and a grammar:
three things ``create_chat_completion`` does not do, each worth time on a CPU engine where one
generated token costs as much as three or four prefilled (``benchmarks/bench_sage.py``):

* **The model's own tokens come back as its own** (:class:`ConversationTokens`): re-tokenising a
  reply gives other ids than those generated, so prefix reuse would stop there and re-read it
  (~800 tokens per SAGE evaluation). When the new prompt extends the previous prompt + reply, the
  previous ids are kept (if the ids detokenise back to the prompt text, else it is tokenised whole).
* **Fixed text is not sampled** (:func:`json_template`): braces, keys, colons and commas are ~85%
  of a SAGE round's ~200 tokens. For a fixed-shape schema the fixed text is appended as tokens
  and only the values are sampled, each under its own grammar (guidance's "fast forward").
* **Compact JSON** (:func:`compact_json_grammar`): the grammar's optional spaces made empty.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache

#: The optional-whitespace rule of llama.cpp's JSON-schema grammar (``json_schema_to_gbnf``).
_SPACE_RULE = re.compile(r'^space ::= .*$', re.MULTILINE)


@lru_cache(maxsize=256)
def compact_json_gbnf(schema_json: str) -> str:
    """llama.cpp's GBNF for the JSON schema ``schema_json`` with its whitespace rule made empty."""
    from llama_cpp import llama_grammar

    gbnf = llama_grammar.json_schema_to_gbnf(schema_json)
    if not _SPACE_RULE.search(gbnf):
        raise ValueError("llama.cpp's JSON grammar has no 'space' rule; its format changed")
    return _SPACE_RULE.sub('space ::= ""', gbnf)


@lru_cache(maxsize=256)
def compact_json_grammar(schema_json: str):
    """The parsed :class:`llama_cpp.LlamaGrammar` of :func:`compact_json_gbnf` (cached per schema)."""
    from llama_cpp import LlamaGrammar

    return LlamaGrammar.from_string(compact_json_gbnf(schema_json), verbose=False)


def schema_text(schema: dict) -> str:
    """JSON text of a schema, the grammar caches' key. Keys keep their order: the grammar writes
    properties in the schema's order (e.g. SAGE's reasoning before its scores)."""
    return json.dumps(schema)


@dataclass
class ConversationTokens:
    """The text and token ids of the last prompt + reply, to continue a conversation in place
    (``tokenize``/``detokenize``: the model's own, special tokens included)."""

    tokenize: object
    detokenize: object
    text: str = ""
    ids: list[int] = field(default_factory=list)

    def prompt_ids(self, prompt: str) -> tuple[list[int], int]:
        """Token ids for ``prompt`` and how many of them were carried over from the last call."""
        if self.ids and len(prompt) > len(self.text) and prompt.startswith(self.text):
            ids = self.ids + self.tokenize(prompt[len(self.text):])
            if self.detokenize(ids) == prompt:  # the seam tokenised cleanly
                return ids, len(self.ids)
        return self.tokenize(prompt), 0

    def remember(self, ids: list[int]) -> None:
        """Record the ids now in the KV cache (prompt + generated reply) and their text."""
        self.ids = list(ids)
        self.text = self.detokenize(self.ids)

    def forget(self) -> None:
        self.ids, self.text = [], ""


@dataclass(frozen=True)
class Slot:
    """A value the model chooses: its own JSON schema, as text."""

    schema_json: str


@lru_cache(maxsize=256)
def json_template(schema_json: str) -> tuple | None:
    """The minified reply of a fixed-shape schema as fixed strings and :class:`Slot` values, e.g.
    ``('{"score":', Slot(enum), ',"evidence":', Slot(string), '}')``; None when the shape is
    not fixed (an optional property, an array, a union), which is then decoded whole."""
    parts: list = []
    if not _template_node(json.loads(schema_json), parts):
        return None
    merged: list = []
    for part in parts:  # adjacent fixed strings become one
        if merged and isinstance(part, str) and isinstance(merged[-1], str):
            merged[-1] += part
        else:
            merged.append(part)
    return tuple(merged)


_LEAF_TYPES = {"string", "number", "integer", "boolean"}
_UNFIXED = {"anyOf", "oneOf", "allOf", "$ref", "items", "patternProperties"}


def _template_node(node: dict, parts: list) -> bool:
    if _UNFIXED & node.keys():
        return False
    if "enum" in node or "const" in node or node.get("type") in _LEAF_TYPES:
        parts.append(Slot(json.dumps(node)))
        return True
    props = node.get("properties")
    if node.get("type") != "object" or not props or set(node.get("required", ())) != set(props):
        return False
    parts.append("{")
    for i, (name, sub) in enumerate(props.items()):
        parts.append(("," if i else "") + json.dumps(name) + ":")
        if not _template_node(sub, parts):
            return False
    parts.append("}")
    return True


@lru_cache(maxsize=256)
def closing_test(schema_json: str):
    """``text -> bool`` telling whether a value slot's text can no longer go on, or None when it
    always can (numbers). A closed value's grammar allows only the end token, so its last token is
    evaluated with the fixed text after it: one decode saved per slot (~120 per SAGE evaluation).
    Closed: a string past its closing quote, ``true``/``false``, an enum literal none extends."""
    node = json.loads(schema_json)
    if "enum" in node or "const" in node:
        literals = frozenset(json.dumps(v) for v in (node["enum"] if "enum" in node else [node["const"]]))
        final = frozenset(lit for lit in literals if not any(o != lit and o.startswith(lit) for o in literals))
        return final.__contains__
    if node.get("type") == "string":
        return _closed_string
    if node.get("type") == "boolean":
        return frozenset(("true", "false")).__contains__
    return None


def _closed_string(text: str) -> bool:
    """``"..."`` ended by an unescaped quote."""
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        return False
    body = text[1:-1]
    return (len(body) - len(body.rstrip("\\"))) % 2 == 0
