"""A scriptable chat-completions server on 127.0.0.1 for tests and benchmarks.

It is a real HTTP server (``http.server.ThreadingHTTPServer`` on a free port), so the code under
test goes through the official ``openai`` client, real sockets and real timeouts. It speaks:

* ``POST /v1/chat/completions`` — replies according to a *script*;
* ``GET /v1/models`` — lists one model (``fake-model`` unless told otherwise);
* ``POST /v1/files``, ``POST /v1/batches``, ``GET /v1/batches/{id}``, ``GET /v1/files/{id}/content``
  — a minimal OpenAI Batch API (each input line is answered by the same script, when the batch
  is created). ``hold_batches()`` keeps every batch ``in_progress`` until ``release_batches()``
  (to kill a client while it polls); ``batch_status="expired"`` (or ``"failed"``) ends batches
  that way, with no output file.
* ``POST /v1/embeddings`` — only when asked (``embeddings=True`` or a script of per-request
  items: a ``Fault``, a dict sent as the HTTP 200 body, or None for the normal answer); a text's
  vector is (len(text), its count of "a", 1), floats or base64 as requested, ``data`` out of
  order; without it the route is a 404, as before.

Usage in a test::

    from judgelab.gateway import Gateway, ChatRequest, Message
    from fake_openai_server import FakeChatServer, Fault

    replies = [
        Fault.rate_limit(retry_after=0),        # first call: 429 with Retry-After: 0
        '{"score": 99}',                        # second: valid JSON, violates the schema
        {"score": 7, "reason": "tight plot"},   # third: a dict is sent as JSON content
    ]
    with FakeChatServer(replies) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite")
        res = gw.chat(ChatRequest(messages=[Message(role="user", content="rate it")], schema=Score))
        assert res.status == "ok" and srv.n_calls == 3

The script (``replies``) is one of:

* a **list** (or any iterable): items are used in order, one per chat call; when it runs out the
  ``default`` is used;
* a **callable** ``fn(request_body: dict) -> item``: decides from the request (the JSON body as
  sent: ``model``, ``messages``, ``response_format``, ``temperature``, ``seed`` ...), e.g. to
  answer by the story id in the prompt; it is called from server threads, keep it thread-safe;
* ``None``: every call gets the ``default``.

An *item* is a ``str`` (the assistant message content, sent verbatim — use it for malformed,
truncated or schema-violating JSON), a ``dict`` or ``list`` (JSON-encoded into the content), a
:class:`Reply` (content plus usage / finish_reason / model / latency / omit_usage), or a :class:`Fault`.

The ``default`` (when ``default=None``) synthesizes a schema-valid object from the request's
``response_format`` schema (first enum value, minimum of a range, "x" for strings) or the text
"ok" for free-text requests — so a test that does not care about the content needs no script.

Faults: ``Fault.rate_limit(retry_after=1)`` (429 + ``Retry-After``), ``Fault.server_error(500)``,
``Fault.timeout(seconds)`` (sleeps before answering, so a client with a shorter timeout gives
up), ``Fault.malformed_body()`` (HTTP 200 whose body is not JSON), ``Fault.disconnect()`` (closes
the connection without a response), ``Fault.status(400, "bad request")`` (any error status, e.g.
``Fault.status(500, "Input should be 'text' or 'json_object'")``, the llama.cpp server's answer to
a ``json_schema`` response format), ``Fault.echo_authorization(401)`` (an error whose message
repeats the Authorization header, to test that the key is kept out of files).
Helpers for content faults: :func:`malformed_json`, :func:`truncated_json`.

Gateway faults (options and faults kept together, marked "gateway faults"):

* ``Fault.cut_body()``: HTTP 200 whose body stops half way (Content-Length promises more) and
  the connection closes: a connection made, then cut (not a dead endpoint);
* ``Fault.quota(retry_after=3600)``: HTTP 429 "You exceeded your current quota" with a long
  ``Retry-After``; a server answering 500 forever is ``default=Fault.server_error(500)``;
* ``srv.authorizations``: the ``Authorization`` header of every request received (None when
  absent), to check which key, if any, a host was sent; ``srv.account_headers`` the same for the
  ``OpenAI-Organization`` and ``OpenAI-Project`` headers;
* ``batch_status="failed"`` with ``batch_errors=[{"code": ..., "message": ..., "line": ...}]``: the
  batch fails validation (as for an organisation's enqueued-token limit) before any line runs,
  and reports the errors in ``batch.errors``;
* ``batch_status="expired"`` with ``batch_expire_after=n``: the first ``n`` lines are answered
  (and listed in the output file), the others are in the error file with code ``batch_expired``.

Reasoning models (option ``reasoning=ReasoningRules()``, off by default; see :class:`ReasoningRules`):
OpenAI's documented rules for gpt-5* and o-series models. ``temperature``/``top_p`` other than the
default and ``max_tokens`` are rejected with HTTP 400; hidden reasoning tokens (by
``reasoning_effort``, medium when none is sent) are drawn from ``max_completion_tokens`` first, so a
budget they exhaust gives ``content=""``, ``finish_reason="length"``, and one they leave too little
of gives the reply cut there; usage counts them in ``completion_tokens`` and
``completion_tokens_details.reasoning_tokens``. Batch input lines follow the same rules.

Strict structured outputs (option ``strict=StrictRules()``, off by default; see :class:`StrictRules`):
OpenAI's documented strict mode. A ``json_schema`` response format with ``strict: true`` whose
schema uses a keyword outside the subset the structured-outputs guide has long documented
(``maxLength``, ``minLength``, ``default`` ...: the strictest reading, as fine-tuned models get)
or leaves an object open (no ``additionalProperties: false``, a property not required) is refused
with HTTP 400, as the API refuses it; an accepted schema is answered by a capable model's reply
(:meth:`StrictRules.reply`): every string as long as the model likes (``text_chars``) unless the
property states its cap in words ("At most 40 characters."), which a capable model keeps
(``obeys_stated_caps``). Constrained decoding keeps the reply inside the schema *sent*, so a cap
validation enforces but the schema sent does not state is a cap the reply breaks.

Billing: ``srv.billed`` lists the ``usage`` of every reply the server answered with HTTP 200
(chat calls and batch lines, each as ``{"usage": ..., "batch": bool, "model": ...}``): what a
provider bills, to compare with a ledger. ``batch_replies`` (a script like ``replies``) answers
batch input lines instead of the chat script, so a canary can pass live while the batch lines
are, say, schema-invalid.

Counting: ``srv.n_calls`` (chat calls received, faults included), ``srv.calls`` (their request
bodies, in arrival order), ``srv.count(path)``, ``srv.reset_counts()``. ``latency_s`` delays
every chat reply (the benchmark uses 0.2 s). Batch API counters: ``count("/v1/files")`` (uploads),
``count("/v1/batches")`` (batch creations), ``count("batch_poll")`` (status reads of any batch),
``count("batch_line")`` (batch input lines answered).
"""
from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable

__all__ = ["FakeChatServer", "Fault", "Reply", "ReasoningRules", "StrictRules", "malformed_json", "truncated_json",
           "synthesize"]


@dataclass
class Fault:
    """An injected failure for one call. Build with the class methods."""

    kind: str
    status: int = 500
    retry_after: float | None = None
    seconds: float = 0.0
    message: str = ""

    @classmethod
    def rate_limit(cls, retry_after: float | None = 1) -> "Fault":
        """HTTP 429 with ``Retry-After: <retry_after>`` (omitted when None)."""
        return cls("status", 429, retry_after=retry_after, message="Rate limit reached (fake)")

    @classmethod
    def server_error(cls, status: int = 500) -> "Fault":
        return cls("status", status, message="Internal server error (fake)")

    @classmethod
    def status(cls, status: int, message: str = "error (fake)") -> "Fault":
        return cls("status", status, message=message)

    @classmethod
    def timeout(cls, seconds: float = 5.0) -> "Fault":
        """Sleep ``seconds`` and then answer normally (too late for a client with a shorter timeout)."""
        return cls("sleep", 200, seconds=seconds)

    @classmethod
    def malformed_body(cls) -> "Fault":
        """HTTP 200 whose body is not JSON."""
        return cls("body", 200)

    @classmethod
    def echo_authorization(cls, status: int = 401) -> "Fault":
        """An error whose message repeats the request's Authorization header (as some proxies do)."""
        return cls("echo_auth", status, message="Incorrect API key provided: ")

    @classmethod
    def disconnect(cls) -> "Fault":
        """Close the connection without answering."""
        return cls("disconnect")

    # -- gateway faults ----------------------------------------------------------------
    @classmethod
    def cut_body(cls) -> "Fault":
        """HTTP 200 whose body is cut half way and the connection closed (a dropped response)."""
        return cls("cut_body", 200)

    @classmethod
    def quota(cls, retry_after: float | None = 3600) -> "Fault":
        """HTTP 429 for an exhausted quota, with a long ``Retry-After``."""
        return cls("status", 429, retry_after=retry_after,
                   message="You exceeded your current quota, please check your plan and billing details (fake)")


@dataclass
class Reply:
    """Full control over one reply."""

    content: Any
    usage: dict | None = None
    finish_reason: str = "stop"
    model: str | None = None
    latency_s: float = 0.0
    headers: dict = field(default_factory=dict)
    #: send no ``usage`` object at all (as some servers do), so the client must estimate
    omit_usage: bool = False


# ---- reasoning-model emulation (option ``reasoning=``) ---------------------------------------------
_REASONING_NAME = re.compile(r"^(gpt-5|o\d)")


@dataclass
class ReasoningRules:
    """OpenAI's documented behaviour of reasoning models, for the models it names.

    ``tokens`` is the hidden reasoning spent per call by effort (fixed here so that tests know the
    answer); ``default_effort`` is what the API uses when the request sends none (medium).
    ``models``: a predicate on the model name (default: gpt-5*, o1/o3/o4*, not gpt-5-chat*)."""

    tokens: dict = field(default_factory=lambda: {"minimal": 0, "low": 200, "medium": 800, "high": 3000})
    default_effort: str = "medium"
    models: Callable[[str], bool] | None = None

    def applies(self, model: str | None) -> bool:
        name = (model or "").lower().split("/")[-1]
        if self.models is not None:
            return bool(self.models(name))
        return bool(_REASONING_NAME.match(name)) and not name.startswith("gpt-5-chat")

    def rejection(self, body: dict) -> str | None:
        """The 400 message OpenAI gives this request, or None when it is accepted."""
        for name in ("temperature", "top_p"):
            if body.get(name) is not None and body[name] != 1:
                return (f"Unsupported value: '{name}' does not support {body[name]} with this model. "
                        "Only the default (1) value is supported.")
        if "max_tokens" in body:
            return ("Unsupported parameter: 'max_tokens' is not supported with this model. "
                    "Use 'max_completion_tokens' instead.")
        effort = body.get("reasoning_effort")
        if effort is not None and effort not in self.tokens:
            return f"Unsupported value: 'reasoning_effort' does not support {effort!r} with this model."
        return None

    def spend(self, body: dict, content: str) -> tuple[str, str | None, int, int]:
        """(visible content, finish_reason override, completion tokens, reasoning tokens): the
        reasoning first, then as much of the reply as the budget leaves (one token a word)."""
        reasoning = int(self.tokens[body.get("reasoning_effort") or self.default_effort])
        budget = body.get("max_completion_tokens")
        words = content.split(" ")
        visible = max(1, len(content.split()))
        if budget is None or reasoning + visible <= int(budget):
            return content, None, reasoning + visible, reasoning
        left = max(0, int(budget) - reasoning)
        return " ".join(words[:left]) if left else "", "length", int(budget), min(reasoning, int(budget))


# ---- strict structured outputs (option ``strict=``) --------------------------------------------------
#: keywords OpenAI's structured-outputs guide lists for strict mode on every model (types,
#: composition, and the string, number and array constraints without length bounds, which it long
#: listed as refused and still does for fine-tuned models); anything else is refused with a 400
STRICT_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "$defs", "$ref",
    "description", "title", "pattern", "format", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "minItems", "maxItems", "definitions"})
_STATED_CAP = re.compile(r"[Aa]t most (\d+) characters")


@dataclass
class StrictRules:
    """OpenAI's documented strict mode for ``json_schema`` response formats, and a capable model.

    ``text_chars``: how long the model writes a string it is told no cap for; ``obeys_stated_caps``:
    a property whose description says "At most N characters" gets N characters (the cap kept,
    to the last character); False: the model ignores stated caps too."""

    text_chars: int = 300
    obeys_stated_caps: bool = True

    def rejection(self, body: dict) -> str | None:
        """The 400 message for a strict schema outside the documented subset, or None."""
        rf = body.get("response_format") or {}
        if rf.get("type") != "json_schema" or not (rf.get("json_schema") or {}).get("strict"):
            return None
        return self._check((rf.get("json_schema") or {}).get("schema") or {}, "schema")

    def _check(self, node: Any, where: str) -> str | None:
        if not isinstance(node, dict):
            return None
        for key in node:
            if key not in STRICT_KEYWORDS:
                return (f"Invalid schema for response_format: In context={where}, '{key}' is not permitted.")
        if node.get("type") == "object" or "properties" in node:
            if node.get("additionalProperties") is not False:
                return f"Invalid schema for response_format: In context={where}, 'additionalProperties' is required to be supplied and to be false."
            missing = set(node.get("properties", {})) - set(node.get("required", []))
            if missing:
                return f"Invalid schema for response_format: In context={where}, 'required' is missing {sorted(missing)}."
        for name, sub in node.get("properties", {}).items():
            if (err := self._check(sub, f"{where}.{name}")) is not None:
                return err
        for key in ("items",):
            if (err := self._check(node.get(key), f"{where}.{key}")) is not None:
                return err
        for i, sub in enumerate(node.get("anyOf", [])):
            if (err := self._check(sub, f"{where}.anyOf.{i}")) is not None:
                return err
        return None

    def reply(self, schema: dict | None) -> Any:
        """What a capable model writes inside the schema: :func:`synthesize`'s values, strings as
        long as it likes unless told otherwise."""
        if schema is None:
            return "ok"
        return self._value(schema)

    def _value(self, node: dict) -> Any:
        # a pattern or format is enforced by the decoder (both are in the strict subset): keep to
        # synthesize's plain value rather than generate from a regular expression
        if any(k in node for k in ("enum", "const", "pattern", "format")) or node.get("type") != "string":
            if node.get("type") == "object" or "properties" in node:
                return {name: self._value(sub) for name, sub in node.get("properties", {}).items()}
            if node.get("type") == "array":
                return [self._value(node.get("items", {})) for _ in range(node.get("minItems", 0))]
            return synthesize(node)
        stated = _STATED_CAP.search(node.get("description") or "")
        n = int(stated.group(1)) if stated and self.obeys_stated_caps else self.text_chars
        if node.get("maxLength") is not None:  # a cap in the schema is enforced by the decoder
            n = min(n, int(node["maxLength"]))
        words = ("the evidence reads closely " * (n // 27 + 1))[:n]
        return words


def malformed_json(obj: Any = None) -> str:
    """JSON-like text that does not parse (unquoted key, trailing comma)."""
    return "{score: 5, 'reason': 'single quotes',}" if obj is None else json.dumps(obj)[:-1] + ",,}"


def truncated_json(obj: Any) -> str:
    """The JSON of ``obj`` cut in the middle, as when ``max_tokens`` runs out."""
    text = json.dumps(obj)
    return text[: max(1, len(text) // 2)]


def synthesize(schema: dict | None) -> Any:
    """A value valid under a (simple) JSON Schema: first enum/const, bounds' minimum, "x" strings."""
    if not schema:
        return {}
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return synthesize(schema[key][0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        return {name: synthesize(sub) for name, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [synthesize(schema.get("items", {})) for _ in range(schema.get("minItems", 0))]
    if kind == "integer":
        return int(schema.get("minimum", schema.get("exclusiveMinimum", -1) + 1))
    if kind == "number":
        return float(schema.get("minimum", 0.0))
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return "x" * max(1, schema.get("minLength", 1))


def request_schema(body: dict) -> dict | None:
    """The JSON Schema in a request's response_format (OpenAI json_schema or llama.cpp json_object form)."""
    rf = body.get("response_format") or {}
    if rf.get("type") == "json_schema":
        return (rf.get("json_schema") or {}).get("schema")
    return rf.get("schema")


def default_reply(body: dict) -> Any:
    schema = request_schema(body)
    return synthesize(schema) if schema is not None else "ok"


class FakeChatServer:
    """A threaded HTTP server speaking chat completions; see the module docstring."""

    def __init__(
        self,
        replies: Iterable[Any] | Callable[[dict], Any] | None = None,
        default: Callable[[dict], Any] | Any | None = None,
        latency_s: float = 0.0,
        model: str = "fake-model",
        batch_status: str = "completed",
        batch_errors: list[dict] | None = None,
        batch_expire_after: int = 0,
        reasoning: ReasoningRules | None = None,
        strict: StrictRules | None = None,
        batch_replies: Iterable[Any] | Callable[[dict], Any] | None = None,
        embeddings: Iterable[Any] | bool | None = None,
    ):
        #: reasoning-model rules (None: every model is answered as a plain chat model)
        self.reasoning = reasoning
        #: strict structured-output rules and a capable model's replies (None: schema-synthesized)
        self.strict = strict
        self._batch_script = (batch_replies if callable(batch_replies) or batch_replies is None
                              else iter(list(batch_replies)))
        #: usage of every reply answered with HTTP 200 (chat and batch lines): what a provider bills
        self.billed: list[dict] = []
        self._script = replies if callable(replies) else (iter(list(replies)) if replies is not None else None)
        self._default = default
        self.latency_s = latency_s
        self.model = model
        self.calls: list[dict] = []
        self._counts: Counter = Counter()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ids = itertools.count(1)
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict] = {}
        #: how a batch ends once released: "completed", "expired", "failed" or "cancelled"
        self.batch_status = batch_status
        #: gateway faults: ``batch.errors`` of a failed batch; lines an expired batch answered
        self.batch_errors = list(batch_errors or [])
        self.batch_expire_after = batch_expire_after
        #: the Authorization header of every request, in arrival order (None when there was none)
        self.authorizations: list[str | None] = []
        #: (OpenAI-Organization, OpenAI-Project) headers of every request (None when absent)
        self.account_headers: list[tuple[str | None, str | None]] = []
        #: ``/v1/embeddings``: None = no such route (404); True = each text's vector is
        #: (len(text), its count of "a", 1); an iterable = per request, in order, a Fault, a dict sent
        #: as the HTTP 200 body (an invalid reply), or None (the normal answer); then normal answers
        self._embeddings = embeddings if embeddings is None or embeddings is True else iter(list(embeddings))
        #: the body of every /v1/embeddings request, faulted ones included
        self.embedding_calls: list[dict] = []
        self._held = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> "FakeChatServer":
        handler = type("_Handler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-chat-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "FakeChatServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1`` — give this to the client as its base URL."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- counting -------------------------------------------------------------------------------
    @property
    def n_calls(self) -> int:
        """Chat-completion calls received (faulted ones included)."""
        with self._lock:
            return self._counts["/v1/chat/completions"]

    def count(self, path: str) -> int:
        with self._lock:
            return self._counts[path]

    def reset_counts(self) -> None:
        with self._lock:
            self._counts.clear()
            self.calls.clear()

    # -- Batch API timing -----------------------------------------------------------------------
    def hold_batches(self) -> None:
        """Report every batch as ``in_progress`` (no output yet) until :meth:`release_batches`."""
        self._held.set()

    def release_batches(self) -> None:
        self._held.clear()

    def batch_view(self, batch_id: str) -> dict | None:
        """The batch object as a status read sees it now (held, or ended as ``batch_status``)."""
        batch = self.batches.get(batch_id)
        if batch is None:
            return None
        if self._held.is_set():
            return {**batch, "status": "in_progress", "output_file_id": None, "completed_at": None}
        if batch["final_status"] != "completed":
            return {**batch, "status": batch["final_status"], "output_file_id": batch["partial_output_file_id"],
                    "error_file_id": batch["partial_error_file_id"], "errors": batch["partial_errors"],
                    "request_counts": batch["partial_counts"]}
        return {**batch, "status": "completed"}

    # -- the script -----------------------------------------------------------------------------
    def next_batch_item(self, body: dict) -> Any:
        """A batch input line's item: from ``batch_replies`` when given, else as a chat call's."""
        if self._batch_script is None:
            return self.next_item(body)
        if callable(self._batch_script):
            return self._batch_script(body)
        with self._lock:
            item = next(self._batch_script, _EXHAUSTED)
        return self.next_item(body) if item is _EXHAUSTED else item

    def next_item(self, body: dict) -> Any:
        if callable(self._script):
            return self._script(body)
        if self._script is not None:
            with self._lock:
                item = next(self._script, _EXHAUSTED)
            if item is not _EXHAUSTED:
                return item
        if self._default is None:
            return self.strict.reply(request_schema(body)) if self.strict is not None else default_reply(body)
        return self._default(body) if callable(self._default) else self._default

    def reasoning_rejection(self, body: dict) -> Fault | None:
        """The 400 this request is refused with before any model runs: a reasoning model's
        parameter rules (option ``reasoning``) or a strict schema outside the documented subset
        (option ``strict``); None when it is accepted."""
        if self.strict is not None and (message := self.strict.rejection(body)):
            return Fault.status(400, message)
        if self.reasoning is None or not self.reasoning.applies(body.get("model")):
            return None
        message = self.reasoning.rejection(body)
        return Fault.status(400, message) if message else None

    def completion(self, body: dict, item: Any) -> tuple[dict, Reply]:
        """The chat.completion object for a non-fault item."""
        reply = item if isinstance(item, Reply) else Reply(item)
        content = reply.content if isinstance(reply.content, str) else json.dumps(reply.content)
        prompt_words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
        finish, details = reply.finish_reason, None
        if self.reasoning is not None and self.reasoning.applies(body.get("model")) and not reply.usage:
            content, cut, completion_tokens, spent = self.reasoning.spend(body, content)
            finish, details = cut or finish, {"reasoning_tokens": spent}
        else:
            completion_tokens = max(1, len(content.split()))
        usage = dict(reply.usage) if reply.usage else {
            "prompt_tokens": prompt_words + 4 * len(body.get("messages", [])),
            "completion_tokens": completion_tokens,
        }
        if details is not None:
            usage["completion_tokens_details"] = details
        usage.setdefault("total_tokens", usage["prompt_tokens"] + usage["completion_tokens"])
        usage.setdefault("prompt_tokens_details", {"cached_tokens": 0})
        n = next(self._ids)
        out = {
            "id": f"chatcmpl-fake-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model or body.get("model") or self.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": finish, "logprobs": None}],
            "usage": usage,
        }
        if reply.omit_usage:
            del out["usage"]
        return out, reply

    def bill(self, completion: dict, batch: bool) -> None:
        """Note what a provider bills for a reply answered with HTTP 200 (:attr:`billed`)."""
        with self._lock:
            self.billed.append({"usage": completion.get("usage"), "batch": batch, "model": completion.get("model")})

    def run_batch_file(self, input_file_id: str, limit: int | None = None) -> str:
        """Answer every line of an uploaded batch input file (the first ``limit``); returns the
        output file id."""
        out_lines = []
        lines = [line for line in self.files[input_file_id].decode("utf-8").splitlines() if line.strip()]
        for line in lines[:limit]:
            req = json.loads(line)
            body = req["body"]
            with self._lock:
                self._counts["batch_line"] += 1
                self.calls.append(body)
            item = self.reasoning_rejection(body) or self.next_batch_item(body)
            n = next(self._ids)
            if isinstance(item, Fault):
                response = {"status_code": item.status if item.kind == "status" else 500,
                            "request_id": f"req-{n}", "body": {"error": {"message": item.message or item.kind}}}
            else:
                comp, _ = self.completion(body, item)
                self.bill(comp, batch=True)
                response = {"status_code": 200, "request_id": f"req-{n}", "body": comp}
            out_lines.append(json.dumps({"id": f"batch_req_{n}", "custom_id": req["custom_id"], "response": response, "error": None}))
        file_id = f"file-out-{next(self._ids)}"
        self.files[file_id] = ("\n".join(out_lines) + "\n").encode("utf-8")
        return file_id


_EXHAUSTED = object()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the openai client expects
    fake: FakeChatServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence stderr logging
        pass

    # -- plumbing -------------------------------------------------------------------------------
    def _read(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _send(self, status: int, payload: Any, headers: dict | None = None, raw: bytes | None = None) -> None:
        data = raw if raw is not None else json.dumps(payload).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, str(v))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test): nothing to do

    def _count(self, path: str, body: Any = None) -> None:
        with self.fake._lock:
            self.fake._counts[path] += 1
            if body is not None:
                self.fake.calls.append(body)

    # -- routes ---------------------------------------------------------------------------------
    def _note_authorization(self) -> None:  # gateway faults: which key did this host get?
        with self.fake._lock:
            self.fake.authorizations.append(self.headers.get("Authorization"))
            self.fake.account_headers.append((self.headers.get("OpenAI-Organization"),
                                              self.headers.get("OpenAI-Project")))

    def do_GET(self) -> None:  # noqa: N802
        self._note_authorization()
        path = self.path.split("?")[0]
        self._count(path)
        if path.rstrip("/") == "/v1/models":
            self._send(200, {"object": "list", "data": [{"id": self.fake.model, "object": "model", "created": 0, "owned_by": "fake"}]})
        elif path.startswith("/v1/batches/"):
            self._count("batch_poll")
            batch = self.fake.batch_view(path.rsplit("/", 1)[-1])
            self._send(200, batch) if batch else self._send(404, {"error": {"message": "no such batch"}})
        elif path.startswith("/v1/files/") and path.endswith("/content"):
            data = self.fake.files.get(path.split("/")[3])
            if data is None:
                self._send(404, {"error": {"message": "no such file"}})
            else:
                self._send(200, None, raw=data)
        else:
            self._send(404, {"error": {"message": f"no route {path}"}})

    def do_POST(self) -> None:  # noqa: N802
        self._note_authorization()
        path = self.path.split("?")[0]
        raw = self._read()
        if path == "/v1/chat/completions":
            self._chat(raw)
        elif path == "/v1/files":
            self._count(path)
            self._upload(raw)
        elif path == "/v1/batches":
            self._count(path)
            self._create_batch(json.loads(raw or b"{}"))
        elif path == "/v1/embeddings" and self.fake._embeddings is not None:
            self._count(path)
            self._embed(json.loads(raw or b"{}"))
        else:
            self._count(path)
            self._send(404, {"error": {"message": f"no route {path}"}})

    def _chat(self, raw: bytes) -> None:
        try:
            body = json.loads(raw)
        except json.JSONDecodeError:
            self._count("/v1/chat/completions")
            self._send(400, {"error": {"message": "request body is not JSON"}})
            return
        self._count("/v1/chat/completions", body)
        rejected = self.fake.reasoning_rejection(body)
        if rejected is not None:  # the API refuses before it runs the model
            self._fault(rejected, body)
            return
        try:
            item = self.fake.next_item(body)
        except Exception as exc:  # noqa: BLE001 - a broken script must show up in the test, as a 500
            self._send(500, {"error": {"message": f"fake server script raised {exc!r}"}})
            return
        if self.fake.latency_s:
            self.fake._stop.wait(self.fake.latency_s)
        if isinstance(item, Fault):
            self._fault(item, body)
            return
        comp, reply = self.fake.completion(body, item)
        if reply.latency_s:
            self.fake._stop.wait(reply.latency_s)
        self.fake.bill(comp, batch=False)
        self._send(200, comp, headers=reply.headers)

    def _embed(self, body: dict) -> None:
        """One /v1/embeddings request: the scripted item (a Fault, a raw dict body) or the vectors."""
        with self.fake._lock:
            self.fake.embedding_calls.append(body)
            script = self.fake._embeddings
            item = next(script, None) if script is not True else None
        if isinstance(item, Fault):
            self._fault(item, body)
            return
        if isinstance(item, dict):
            self._send(200, item)
            return
        import base64
        import struct

        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = []
        for i, t in enumerate(texts):
            vec = [float(len(t)), float(t.count("a")), 1.0]
            if body.get("encoding_format") == "base64":  # what the openai client asks for by default
                vec = base64.b64encode(struct.pack(f"<{len(vec)}f", *vec)).decode("ascii")
            data.append({"object": "embedding", "index": i, "embedding": vec})
        tokens = sum(len(t.split()) for t in texts)
        self._send(200, {"object": "list", "data": data[::-1], "model": body.get("model"),  # out of order on purpose
                         "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

    def _fault(self, fault: Fault, body: dict) -> None:
        if fault.kind in ("status", "echo_auth"):
            headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
            message = fault.message + (self.headers.get("Authorization", "") if fault.kind == "echo_auth" else "")
            self._send(fault.status, {"error": {"message": message, "type": "fake_error", "code": str(fault.status)}}, headers)
        elif fault.kind == "sleep":
            self.fake._stop.wait(fault.seconds)
            self._send(200, self.fake.completion(body, default_reply(body))[0])
        elif fault.kind == "body":
            self._send(200, None, raw=b'{"id": "chatcmpl-broken", "choices": [{"index": 0, "mess')
        elif fault.kind == "cut_body":  # gateway faults: half the promised body, then close
            data = json.dumps(self.fake.completion(body, default_reply(body))[0]).encode("utf-8")
            self.close_connection = True
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.connection.shutdown(2)
            except OSError:
                pass
        elif fault.kind == "disconnect":
            self.close_connection = True
            try:
                self.connection.shutdown(2)
            except OSError:
                pass
        else:
            raise ValueError(f"unknown fault kind {fault.kind!r}")

    # -- gateway faults ----------------------------------------------------------------
    def _lines_run(self, n_lines: int) -> int:
        """How many input lines a batch runs: none when it fails (validation, before any line),
        ``batch_expire_after`` when it expires or is cancelled, else all."""
        status = self.fake.batch_status
        if status == "failed":
            return 0
        return min(self.fake.batch_expire_after, n_lines) if status in ("expired", "cancelled") else n_lines

    def _partial(self, input_id: str, out_id: str, done: int) -> dict:
        """What a batch that does not complete shows: a failed one reports ``batch_errors``; an
        expired (or cancelled) one its ``done`` answered lines, the others in its error file as
        ``batch_expired``."""
        fake = self.fake
        lines = [json.loads(line) for line in fake.files[input_id].decode("utf-8").splitlines() if line.strip()]
        errors = None
        if fake.batch_status == "failed":
            errors = {"object": "list", "data": [
                {"code": e.get("code"), "message": e.get("message"), "line": e.get("line"), "param": e.get("param")}
                for e in fake.batch_errors]}
        err_id = None
        if fake.batch_status in ("expired", "cancelled") and lines[done:]:
            err_id = f"file-err-{next(fake._ids)}"
            fake.files[err_id] = "".join(json.dumps({
                "id": f"batch_req_x{i}", "custom_id": line["custom_id"], "response": None,
                "error": {"code": f"batch_{fake.batch_status}", "message": "This request could not be executed "
                          f"before the batch was {fake.batch_status}."}}) + "\n"
                for i, line in enumerate(lines[done:])).encode("utf-8")
        return {"partial_output_file_id": out_id if done else None, "partial_error_file_id": err_id,
                "partial_errors": errors, "partial_counts": {"total": len(lines), "completed": done, "failed": 0}}

    def _upload(self, raw: bytes) -> None:
        """multipart/form-data upload (fields ``purpose`` and ``file``)."""
        ctype = self.headers.get("Content-Type", "")
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {ctype}\r\n\r\n".encode() + raw
        )
        fields = {}
        for part in msg.iter_parts():
            name = part.get_param("name", header="content-disposition")
            fields[name] = (part.get_filename(), part.get_payload(decode=True))
        filename, data = fields.get("file", (None, b""))
        file_id = f"file-{next(self.fake._ids)}"
        self.fake.files[file_id] = data or b""
        purpose = (fields.get("purpose", (None, b"batch"))[1] or b"batch").decode()
        self._send(200, {"id": file_id, "object": "file", "bytes": len(data or b""), "created_at": int(time.time()),
                         "filename": filename or "input.jsonl", "purpose": purpose, "status": "processed"})

    def _create_batch(self, req: dict) -> None:
        input_id = req.get("input_file_id")
        if input_id not in self.fake.files:
            self._send(400, {"error": {"message": f"unknown input_file_id {input_id!r}"}})
            return
        n_lines = sum(1 for line in self.fake.files[input_id].splitlines() if line.strip())
        done = self._lines_run(n_lines)
        out_id = self.fake.run_batch_file(input_id, done)
        batch_id = f"batch_{next(self.fake._ids)}"
        now = int(time.time())
        batch = {"id": batch_id, "object": "batch", "endpoint": req.get("endpoint", "/v1/chat/completions"),
                 "input_file_id": input_id, "completion_window": req.get("completion_window", "24h"),
                 "status": "completed", "output_file_id": out_id, "error_file_id": None, "created_at": now,
                 "completed_at": now, "metadata": req.get("metadata"),
                 "request_counts": {"total": n_lines, "completed": n_lines, "failed": 0},
                 "final_status": self.fake.batch_status, **self._partial(input_id, out_id, done)}
        self.fake.batches[batch_id] = batch
        self._send(200, {**batch, "status": "validating"})


def main(argv: list[str] | None = None) -> None:
    """``python tests/fake_openai_server.py [--latency S] [--reply JSON] [--reasoning] [--strict]``: serve until killed.

    ``--reasoning`` answers reasoning models by OpenAI's rules (:class:`ReasoningRules`);
    ``--strict`` applies strict mode's schema rules and writes a capable model's free text
    (:class:`StrictRules`).

    Prints ``base_url <url>`` on its first line, so a parent process (a benchmark, a manual check
    of a notebook against a scripted model) can read where to connect.
    """
    import argparse

    parser = argparse.ArgumentParser(description="scriptable fake chat-completions server")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before every reply")
    parser.add_argument("--reply", default=None, help="fixed reply content (JSON text); default: schema-synthesized")
    parser.add_argument("--model", default="fake-model")
    parser.add_argument("--reasoning", action="store_true", help="emulate reasoning models (ReasoningRules)")
    parser.add_argument("--strict", action="store_true",
                        help="emulate OpenAI's strict structured outputs and a capable model's free text (StrictRules)")
    args = parser.parse_args(argv)
    default = (lambda body: args.reply) if args.reply is not None else None
    rules = ReasoningRules() if args.reasoning else None
    strict = StrictRules() if args.strict else None
    with FakeChatServer(default=default, latency_s=args.latency, model=args.model, reasoning=rules,
                        strict=strict) as srv:
        print(f"base_url {srv.base_url}", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
