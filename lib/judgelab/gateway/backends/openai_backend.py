"""The ``openai`` and ``openai-compatible`` backends: the official ``openai`` client.

* ``openai``: structured outputs with a strict JSON Schema
  (``response_format={"type": "json_schema", "json_schema": {..., "strict": true}}``). Reasoning
  models (gpt-5 family, o-series) get ``reasoning_effort`` and no ``temperature``/``top_p``, which
  they reject.
* ``openai-compatible``: the same client pointed at a base URL (vLLM, Ollama, llama.cpp server).
  By default the schema goes as ``{"type": "json_object", "schema": ...}``, the form the llama.cpp
  server understands (vLLM accepts it too); ``schema_style="json_schema"`` sends OpenAI's form.

The client's own retries are off: the gateway retries, so its counts are the true number of
calls. The key: :func:`~judgelab.gateway.settings.api_key_for`. Errors are classified for the retry
policy and the circuit breaker (only a failure to *connect* is ``connection_failed``) and name the
URL and the model, from which an error repeating on every item is diagnosed. The client is built
on the first call, so an ``offline`` backend (replay) needs no key and no network.
"""
from __future__ import annotations

import json
import re
import socket
import time
from typing import Any

import httpx
import openai
from pydantic import BaseModel

from judgelab import tokens
from judgelab.gateway.errors import ConfigError, ContextOverflowError, PermanentError, TransientError
from judgelab.gateway.ledger import PriceTable
from judgelab.gateway.retry import parse_retry_after
from judgelab.gateway.schema import grammar_schema, strict_schema
from judgelab.gateway.settings import (DEFAULT_CACHE_ENDPOINT, OPENAI_KEY_VAR, api_key_for, endpoint_identity,
                                       openai_client)
from judgelab.gateway.types import Sampling, Usage
from judgelab.gateway.backends.base import BackendReply, fit_by_head_tail

OPENAI_URL = "https://api.openai.com/v1"
#: HTTP statuses that the same request will meet again: retrying them only repeats the bill
NOT_RETRIED = (400, 401, 403, 404, 422)
#: A 5xx whose body says the request's *form* is not accepted will repeat too. The llama.cpp
#: server answers ``json_schema`` response formats with HTTP 500 "Input should be 'text' or
#: 'json_object'"; vLLM and other pydantic-validated servers phrase it the same way.
FORM_REJECTED = re.compile(r"Input should be '|unsupported (parameter|value|response_format)|"
                           r"unrecognized request argument|extra inputs are not permitted", re.IGNORECASE)
_REASONING = re.compile(r"^(gpt-5|o\d)")


def is_reasoning_model(model: str) -> bool:
    """True for models that take ``reasoning_effort`` and refuse ``temperature`` (gpt-5*, o1/o3/o4*)."""
    name = model.lower().split("/")[-1]
    return bool(_REASONING.match(name)) and not name.startswith("gpt-5-chat")


class OpenAIBackend:
    """Chat completions over the OpenAI protocol."""

    def __init__(
        self,
        model: str | None,
        base_url: str | None = None,
        compatible: bool = False,
        timeout_s: float = 120.0,
        schema_style: str | None = None,
        prices: PriceTable | None = None,
        api_key: str | None = None,
        offline: bool = False,
        cache_endpoint: str = DEFAULT_CACHE_ENDPOINT,
    ):
        self.name = "openai-compatible" if compatible else "openai"
        self.compatible = compatible
        if compatible and not base_url:
            raise ConfigError("backend openai-compatible needs a base URL (JUDGELAB_BASE_URL), e.g. http://127.0.0.1:8000/v1")
        self.base_url = (base_url or OPENAI_URL).rstrip("/")
        env_key, self.key_var = api_key_for(self.base_url)
        key = api_key if api_key is not None else env_key
        #: the key (None when absent); for redaction and the client, never part of identity()
        self.api_key = key or None
        self.offline = offline
        #: the part of the base URL the cache key holds (settings.endpoint_identity; checked here)
        self.endpoint = endpoint_identity(self.base_url, cache_endpoint)
        if not key and not compatible and not offline:
            raise ConfigError(self._missing_key())
        self.timeout_s = timeout_s
        self._client = None
        self.schema_style = schema_style or ("json_object" if compatible else "json_schema")
        if self.schema_style not in ("json_object", "json_schema"):
            raise ConfigError(f"schema_style must be json_object or json_schema, got {self.schema_style!r}")
        if not model:
            if not compatible:
                raise ConfigError("backend openai needs a model (JUDGELAB_MODEL), e.g. gpt-5-mini or gpt-4.1")
            try:
                model = self._server_model()
            except ConfigError as exc:
                if not offline:
                    raise
                # the cache is keyed by the model name; replay must not depend on a running server
                raise ConfigError(f"replay with backend openai-compatible needs the model name (JUDGELAB_MODEL) "
                                  f"that filled the cache; `python -m judgelab.gateway stats` lists it ({exc})") from exc
        self.model = model
        self.max_concurrency = 1024
        price = (prices or PriceTable.load()).lookup(model)
        self.context_window = price.context_window if price else None

    @property
    def client(self) -> openai.OpenAI:
        """The official client, built on first use (so that replay needs no key)."""
        if self._client is None:
            key = self.api_key
            if not key:
                if not self.compatible:
                    raise ConfigError(self._missing_key())
                # local servers ignore it; the client insists on one, and given None it would read
                # OPENAI_API_KEY itself and send it here
                key = "no-key"
            self._client = openai_client(key, self.base_url, self.key_var, max_retries=0, timeout=self.timeout_s)
        return self._client

    def _missing_key(self) -> str:
        if self.key_var == OPENAI_KEY_VAR:
            return ("backend openai needs OPENAI_API_KEY in the environment "
                    "(replay mode, JUDGELAB_CACHE_MODE=replay, needs none)")
        return (f"backend openai at {self.base_url} needs JUDGELAB_API_KEY: OPENAI_API_KEY is sent only to "
                f"{OPENAI_URL} (set JUDGELAB_API_KEY to the key this server expects; replay mode needs none)")

    def key_note(self) -> str:
        """Which key this backend sends, for error messages (never the key itself)."""
        if self.api_key:
            return f"the key from {self.key_var}"
        return f"no key ({self.key_var} is unset; OPENAI_API_KEY is sent only to {OPENAI_URL})"

    def _server_model(self) -> str:
        """The first model the server lists (Ollama, vLLM and llama.cpp server all list theirs)."""
        try:
            listed = self.client.models.list()
            return listed.data[0].id
        except Exception as exc:  # noqa: BLE001 - any failure means we cannot infer the model
            raise ConfigError(f"no model given and {self.base_url}/models did not name one ({exc})") from exc

    def identity(self) -> dict[str, Any]:
        # "base_url" holds the endpoint as JUDGELAB_CACHE_ENDPOINT says (by default without the port
        # of a local server, which a restart may change); the name is kept so that caches filled
        # on a URL without a port (OpenAI's) keep their keys
        return {"backend": self.name, "model": self.model, "base_url": self.endpoint, "schema_style": self.schema_style}

    # -- tokens -------------------------------------------------------------------------------
    def count_tokens(self, text: str) -> int:
        return tokens.count_tokens(text, self.model)

    def fit_messages(self, messages, max_tokens, truncation, label):
        if not self.context_window:
            return messages, None
        budget = self.context_window - max_tokens
        n = tokens.count_message_tokens(messages, self.model)
        if n <= budget:
            return messages, None
        if truncation != "head_tail":
            raise ContextOverflowError(
                f"{label}: prompt has ~{n} tokens (tiktoken) + {max_tokens} output > context {self.context_window} of {self.model}"
            )
        enc = tokens.encoding_for(self.model)
        return fit_by_head_tail(
            messages, lambda m: tokens.count_message_tokens(m, self.model), budget,
            lambda t: enc.encode(t, disallowed_special=()), enc.decode,
        )

    # -- the call -----------------------------------------------------------------------------
    def request_body(self, messages: list[dict], schema: type[BaseModel] | None, sampling: Sampling) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create`` (also the Batch API body)."""
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        reasoning = not self.compatible and is_reasoning_model(self.model)
        if reasoning:
            if sampling.reasoning_effort:
                body["reasoning_effort"] = sampling.reasoning_effort
            body["max_completion_tokens"] = sampling.max_tokens
        else:
            if sampling.temperature is not None:
                body["temperature"] = sampling.temperature
            if sampling.top_p is not None:
                body["top_p"] = sampling.top_p
            body["max_tokens" if self.compatible else "max_completion_tokens"] = sampling.max_tokens
        if sampling.seed is not None:
            body["seed"] = sampling.seed
        if schema is not None:
            if self.schema_style == "json_schema":
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": schema.__name__[:64], "schema": strict_schema(schema), "strict": True},
                }
            else:
                body["response_format"] = {"type": "json_object", "schema": grammar_schema(schema)}
        return body

    def _send(self, body: dict[str, Any]) -> Any:
        """POST the body: ``openai`` with the typed ``chat.completions.create``; a compatible server
        with the client's generic ``post`` (the body verbatim, e.g. llama.cpp's ``json_object`` +
        ``schema``, and a plain dict back, which spares the client about half its CPU per call)."""
        if self.compatible:
            return self.client.post("/chat/completions", cast_to=object, body=body)
        return self.client.chat.completions.create(**body)

    def complete(self, messages: list[dict], schema: type[BaseModel] | None, sampling: Sampling) -> BackendReply:
        body = self.request_body(messages, schema, sampling)
        t0 = time.perf_counter()
        try:
            resp = self._send(body)
        except openai.APIStatusError as exc:
            raise classify_status_error(exc, self.base_url, self.model, self.key_note()) from exc
        except openai.APIConnectionError as exc:  # APITimeoutError included (a subclass)
            raise classify_connection_error(exc, self.base_url, self.model) from exc
        except (openai.APIResponseValidationError, ValueError) as exc:
            # 200 with an unreadable body (proxy hiccup, cut connection): worth another try
            raise TransientError(f"unreadable response body from {self.base_url} (model {self.model}): {exc}",
                                 kind="unreadable", url=self.base_url, model=self.model) from exc
        latency = time.perf_counter() - t0
        return reply_from_completion(resp, latency, self.model)


def reply_from_completion(resp: Any, latency: float, model: str) -> BackendReply:
    """A BackendReply from a chat.completion object (client object or plain dict)."""
    data = resp if isinstance(resp, dict) else resp.model_dump()
    choices = data.get("choices") or []
    if not choices:
        raise TransientError(f"response without choices: {json.dumps(data)[:200]}")
    choice = choices[0]
    message = choice.get("message") or {}
    text = message.get("content") or message.get("refusal") or ""
    usage = None
    u = data.get("usage")
    if u:
        details = u.get("prompt_tokens_details") or {}
        usage = Usage(
            input_tokens=int(u.get("prompt_tokens") or 0),
            output_tokens=int(u.get("completion_tokens") or 0),
            cached_tokens=int(details.get("cached_tokens") or 0),
            estimated=False,
        )
    return BackendReply(text=text, usage=usage, reported_model=data.get("model") or model,
                        latency_s=latency, finish_reason=choice.get("finish_reason"))


#: causes of an ``APIConnectionError`` raised before any connection was made
_CONNECT_PHASE = (httpx.ConnectError, httpx.ConnectTimeout, ConnectionRefusedError, socket.gaierror)


def connect_phase(exc: BaseException) -> bool:
    """True when ``exc`` (or an exception it was raised from) is a failure to connect at all."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, _CONNECT_PHASE):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def classify_connection_error(exc: openai.APIConnectionError, url: str | None = None,
                              model: str | None = None) -> TransientError:
    """No connection -> ``connection_failed`` (the breaker counts it); a read timeout ->
    ``timed_out`` (the server may still bill it); a connection cut once made: ``dropped``."""
    cause = exc.__cause__ or exc.__context__
    detail = f"{type(exc).__name__}: {exc}" + (f" ({type(cause).__name__}: {cause})" if cause else "")
    where = f"{url} (model {model})"
    if connect_phase(exc):
        return TransientError(f"could not connect to {where}: {detail}", connection_failed=True, kind="connect",
                              url=url, model=model)
    if isinstance(exc, openai.APITimeoutError):
        return TransientError(f"no reply in time from {where}: {detail}", timed_out=True, kind="timeout",
                              url=url, model=model)
    return TransientError(f"connection to {where} cut before the reply was complete: {detail}", kind="dropped",
                          url=url, model=model)


def classify_status_error(exc: openai.APIStatusError, url: str | None = None, model: str | None = None,
                          key_note: str | None = None) -> Exception:
    """Context overflow -> ContextOverflowError; errors that will repeat (:data:`NOT_RETRIED`, a
    5xx saying :data:`FORM_REJECTED`) -> PermanentError; 408/409/429 and other 5xx ->
    TransientError (with Retry-After); else PermanentError. A 401 names the key sent."""
    status = exc.status_code
    retry_after = parse_retry_after(getattr(exc.response, "headers", None))
    where = f" from {url} (model {model})" if url else ""
    text = f"HTTP {status}{where}: {exc.message}"
    if status == 401 and key_note:
        text += f" [sent {key_note}]"
    said = f"{exc.message} {exc.body}"
    info = {"status": status, "url": url, "model": model}
    if "context_length" in said or "maximum context length" in said:
        return ContextOverflowError(text, **info)
    if status in NOT_RETRIED:
        return PermanentError(text, **info)
    if status >= 500 and FORM_REJECTED.search(said):
        return PermanentError(f"{text} (the server rejects the request's form; for a llama.cpp server "
                              "use schema_style='json_object', the openai-compatible default)", **info)
    if status in (408, 409, 429) or status >= 500:
        return TransientError(text, retry_after=retry_after, **info)
    return PermanentError(text, **info)
