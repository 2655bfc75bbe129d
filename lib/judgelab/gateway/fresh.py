"""A cache miss asked of the model (steps 2-5 of :mod:`judgelab.gateway.core`'s flow): fit, call
through limiter, breaker and retries (:class:`Sender`), validate and repair; cache a success, keep a
failure apart for replay, write the transcript line; all of it redacted (:class:`FreshCall`).

Neither knows the cache key's making, the fan-out or batch mode: a :class:`FreshCall` is given a
request and its key, and reads from the :class:`~judgelab.gateway.context.CallContext` only whether
this call is a canary and which guard counts its failed replies.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from judgelab import tokens
from judgelab.gateway.cache import canonical_request
from judgelab.gateway.canary import classify_exception, classify_reply
from judgelab.gateway.context import CallContext
from judgelab.gateway.errors import ContextOverflowError, PermanentError, TransientError
from judgelab.gateway.parsing import parse_reply, repair_message
from judgelab.gateway.redact import redact
from judgelab.gateway.types import ChatRequest, ChatResult, Failure, Usage


@dataclass
class _Outcome:
    """What one fresh conversation produced (internal to :meth:`FreshCall.ask`)."""

    reported: str
    text: str | None = None
    parsed: Any = None
    error: str | None = None
    note: str | None = None
    usage: Usage = field(default_factory=Usage)
    attempts: int = 0
    repairs: int = 0
    latency: float = 0.0
    turns: list = field(default_factory=list)
    failure: str | None = None  # the class a fan-out groups by (gateway.canary: http_4xx, empty, cut ...)
    failure_detail: Failure | None = None  # the same in fields: kind, status, url, model (errors.KINDS)
    finish_reason: str | None = None
    clipped: list = field(default_factory=list)  # free text cut to its cap (parsing.clip_free_text)


class Sender:
    """One backend call through the rate limiter, the circuit breaker and the retry policy."""

    def __init__(self, backend, retry, limiter, breaker):
        self.backend = backend
        self.retry = retry
        self.limiter = limiter
        self.breaker = breaker

    def send(self, messages: list[dict], request: ChatRequest, canary: bool = False):
        """(reply, attempts used). A shape's canary is paid once whatever its failure: it gives up
        at its first timeout (the server may still finish and bill it), where an ordinary call
        tries once more."""
        budget = (tokens.count_message_tokens(messages, self.backend.model) + request.sampling.max_tokens
                  if self.limiter.active else 0)

        def attempt():
            self.breaker.check()  # an endpoint found dead stops every item, retries included
            self.limiter.acquire(budget)
            try:
                reply = self.backend.complete(messages, request.schema, request.sampling)
            except TransientError as exc:
                if exc.connection_failed:
                    self.breaker.record_failure(exc)  # raises EndpointUnreachableError at the limit
                else:
                    self.breaker.record_success()  # the server answered, with an error
                raise
            except PermanentError:
                self.breaker.record_success()
                raise
            self.breaker.record_success()
            return reply

        return self.retry.call(attempt, max_timeouts=1 if canary else None)


class FreshCall:
    """Asks the model one request (a cache miss) and stores what came of it."""

    def __init__(self, backend, cache, sender: Sender, context: CallContext, *, max_repairs: int = 2,
                 secrets: tuple[str, ...] = (), transcripts=None):
        self.backend = backend
        self.cache = cache
        self.sender = sender
        self.context = context
        self.max_repairs = max_repairs
        self.secrets = tuple(secrets)
        self.transcripts = transcripts
        self._identity = backend.identity()

    @property
    def backend_name(self) -> str:
        return self.backend.name

    @property
    def model_name(self) -> str:
        return self.backend.model

    @property
    def base_url(self) -> str | None:
        return self.backend.base_url

    def redact(self, value: Any) -> Any:
        return redact(value, self.secrets)

    def ask(self, request: ChatRequest, key: str) -> ChatResult:
        """Ask the model (fit, call, validate, repair), then cache a success and log the transcript."""
        label = request.item_label()
        messages = [m.model_dump() for m in request.messages]
        out = _Outcome(reported=self.model_name)
        try:
            messages, out.note = self.backend.fit_messages(messages, request.sampling.max_tokens, request.truncation, label)
        except ContextOverflowError as exc:
            out.error, out.failure = f"context overflow: {exc}", "context_overflow"
            out.failure_detail = Failure.from_exception(exc, self.base_url, self.model_name)
        except ValueError as exc:  # head_tail could not make it fit
            out.error, out.failure = f"context overflow: {label}: {exc}", "context_overflow"
            out.failure_detail = Failure(kind="context_overflow", url=self.base_url, model=self.model_name)
        else:
            messages = self._converse(messages, request, label, out)
        self._redact_outcome(out, request)
        ok = out.error is None
        result = ChatResult(
            status="ok" if ok else "failed", parsed=out.parsed if ok else None, text=out.text, error=out.error,
            n_repairs=out.repairs, n_attempts=out.attempts, cached=False, backend=self.backend_name,
            model=self.model_name, usage=out.usage, latency_s=out.latency, truncated=out.note is not None,
            truncation_note=out.note, key=key, tags=self.redact(dict(request.tags)), sampling=request.sampling,
            failure=None if ok else (out.failure or "invalid"), finish_reason=out.finish_reason,
            failure_detail=None if ok else out.failure_detail, clipped=out.clipped if ok else [],
        )
        if not ok:  # never an answer; kept apart for replay (ResponseCache.put_failure)
            self.cache.put_failure(key, self.redact(result.model_dump(
                mode="json", include={"status", "text", "error", "n_repairs", "n_attempts", "backend", "model",
                                      "usage", "latency_s", "truncated", "truncation_note", "failure",
                                      "failure_detail", "finish_reason"})))
        if ok:  # errors and recorded failures are never cached as answers
            self.cache.put(self.redact({
                "key": key, "request": canonical_request(self._identity, request), "text": out.text,
                "parsed": out.parsed.model_dump(mode="json") if request.schema is not None else None,
                "usage": out.usage.model_dump(), "latency_s": out.latency, "reported_model": out.reported,
                "backend": self.backend_name, "model": self.model_name, "n_repairs": out.repairs,
                "truncated": out.note is not None, "truncation_note": out.note, "tags": dict(request.tags),
                "created_at": time.time(),
            }))
        if self.transcripts is not None:
            self.transcripts.write({
                "time": time.time(), "key": key, "tags": request.tags, "backend": self.backend_name,
                "model": self.model_name, "reported_model": out.reported, "template_version": request.template_version,
                "replicate": request.replicate, "sampling": request.sampling.model_dump(), "messages": messages,
                "replies": out.turns, "status": result.status, "parsed": result.data, "error": out.error,
                "usage": out.usage.model_dump(), "latency_s": out.latency, "attempts": out.attempts,
                "truncation": out.note, "clipped": out.clipped,
            })
        return result

    def _redact_outcome(self, out: _Outcome, request: ChatRequest) -> None:
        """Replace the key in the reply, the parsed object and the error (a server may echo it)."""
        if not self.secrets:
            return
        out.text, out.error, out.turns = self.redact(out.text), self.redact(out.error), self.redact(out.turns)
        if request.schema is not None and out.parsed is not None:
            dumped = out.parsed.model_dump(mode="json")
            clean = self.redact(dumped)
            if clean != dumped:
                try:
                    out.parsed = request.schema.model_validate(clean)
                except Exception as exc:  # noqa: BLE001 - the masked reply no longer fits the schema
                    out.parsed, out.error = None, f"{request.item_label()}: the reply repeats the API key ({exc})"
                    out.failure = "repeats_key"
        elif isinstance(out.parsed, str):
            out.parsed = self.redact(out.parsed)

    def _converse(self, messages: list[dict], request: ChatRequest, label: str, out: _Outcome) -> list[dict]:
        """Call, validate, and on an invalid reply show the model its error (at most ``max_repairs``
        times). Fills ``out``; returns the conversation as finally sent (repair turns included)."""
        for turn in range(self.max_repairs + 1):
            try:
                reply, n = self.sender.send(messages, request, self.context.canary)
            except TransientError as exc:
                out.attempts += getattr(exc, "attempts", 1)
                out.error = f"{label}: gave up after {out.attempts} attempt(s): {exc}"
                out.failure = classify_exception(exc)
                out.failure_detail = Failure.from_exception(exc, self.base_url, self.model_name)
                return messages
            except PermanentError as exc:  # bad request, context too long: retrying cannot help
                out.attempts += 1
                out.error = f"{label}: {exc}"
                out.failure = classify_exception(exc)
                out.failure_detail = Failure.from_exception(exc, self.base_url, self.model_name)
                return messages
            out.attempts += n
            out.latency += reply.latency_s
            out.usage = out.usage + (reply.usage or self.estimate(messages, reply.text))
            out.text, out.reported = reply.text, reply.reported_model
            out.clipped = []  # the notes of the reply that is kept, not of a refused one
            out.parsed, verr = parse_reply(reply.text, request.schema, reply.finish_reason, out.clipped)
            out.turns.append({"reply": reply.text, "finish_reason": reply.finish_reason, "error": verr})
            out.finish_reason = reply.finish_reason
            if verr is None:
                out.error = out.failure = out.failure_detail = None
                return messages
            out.error = f"{label}: invalid reply after {out.repairs} repair(s): {verr}"
            out.failure = classify_reply(reply.text, reply.finish_reason)
            out.failure_detail = Failure(kind="invalid_reply", url=self.base_url, model=self.model_name)
            # an empty reply cut at the budget (a reasoning model spent it all thinking) comes
            # back empty again on a repair turn with the same budget: do not pay for it twice;
            # nor for a canary's cut or empty reply, which stops its fan-out whatever a repair brings
            cut_canary = (reply.finish_reason == "length" or out.failure == "empty") and self.context.canary
            if request.schema is None or turn == self.max_repairs or cut_canary or (
                    out.failure == "empty" and reply.finish_reason == "length"):
                return messages
            # after its canary a shape's failed reply counts toward the fan-out's stop on alike
            # failures before a repair turn is paid, so a shape that turns bad costs at most the
            # stop's threshold plus the calls in flight (gateway.canary), not three calls an item
            guard = self.context.guard
            counted = guard is not None and not self.context.canary
            if counted and not guard.count_failed_reply(out.failure):
                return messages
            messages = messages + [
                {"role": "assistant", "content": reply.text},
                {"role": "user", "content": repair_message(verr, request.schema)},
            ]
            out.repairs += 1
        return messages

    def estimate(self, messages: list[dict], text: str) -> Usage:
        """tiktoken counts when the backend reported no usage (labelled as an estimate)."""
        return Usage(input_tokens=tokens.count_message_tokens(messages, self.model_name),
                     output_tokens=tokens.count_tokens(text or "", self.model_name), estimated=True)
