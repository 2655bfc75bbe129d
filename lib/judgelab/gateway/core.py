"""The :class:`Gateway`: cache, backend, repairs, retries, limits, ledger and transcripts in one place.

Flow of one :meth:`Gateway.chat`:

1. hash the canonical request into the cache key; a hit (modes normal/replay) is returned as is;
   a miss in replay mode raises :class:`ReplayMissError` naming the item;
2. fit the prompt into the context (or record a failure naming the item and its token count, or
   cut the middle when the request chose ``truncation="head_tail"``);
3. call the backend through the rate limiter and the retry policy;
4. parse and validate the reply; on failure show the model its validation error and ask again,
   at most ``max_repairs`` times; then record a failure (status, raw text, error) — never a
   default value;
5. cache successes only; write the ledger row and the transcript line.

Everything written (cache entry, transcript line, ledger row, a result's error and raw text) goes
through :func:`~judgelab.gateway.redact.redact` with the configured key. Consecutive connect-phase
failures to the endpoint open a :class:`~judgelab.gateway.breaker.CircuitBreaker`, which stops
the run with one error naming the URL.

Before step 1 the request's sampling becomes the sampling as sent (:mod:`~judgelab.gateway.reasoning`:
a reasoning model's effort and budget with its reasoning allowance, no temperature); the cache key,
the call and ``ChatResult.sampling`` all see that. In :meth:`Gateway.run_batch` and
:meth:`Gateway.map` a canary per request shape and a stop on repeated alike failures guard the
money (:mod:`~judgelab.gateway.canary`).

In batch mode (``batch=True``, ``JUDGELAB_BATCH=1``) step 3 goes through the OpenAI Batch API:
``map`` runs each item in its own thread, ``run_batch`` hands all its requests over at once, and
misses are answered batch by batch (:mod:`~judgelab.gateway.batch_collector`).
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, TypeVar


from judgelab import tokens
from judgelab.engines import is_embedded_small_model
from judgelab.gateway.breaker import CircuitBreaker
from judgelab.gateway.cache import ResponseCache, canonical_request, request_key
from judgelab.gateway.canary import (FanOutGuard, FanOutStopped, canary_enabled, classify_exception, classify_reply,
                                     shape_key, stop_after_setting)
from judgelab.gateway.errors import ConfigError, ContextOverflowError, PermanentError, ReplayMissError, TransientError
from judgelab.gateway.ledger import Ledger, PriceTable
from judgelab.gateway.limiter import RateLimiter
from judgelab.gateway.parsing import parse_reply, repair_message
from judgelab.gateway.progress import BatchProgress
from judgelab.gateway.reasoning import REASONING_ALLOWANCE, ReasoningPolicy, reasoning_applies, sent_sampling
from judgelab.gateway.redact import configured_secrets, redact
from judgelab.gateway.retry import RetryPolicy
from judgelab.gateway.settings import resolve
from judgelab.gateway.transcripts import TranscriptLog
from judgelab.gateway.types import ChatRequest, ChatResult, Failure, Usage

if TYPE_CHECKING:
    import pandas as pd

T = TypeVar("T")
R = TypeVar("R")

_NO_BATCH = ("batch mode (JUDGELAB_BATCH=1, make ... BATCH=1) needs the openai or openai-compatible backend "
             "(an endpoint with the Batch API); backend {backend} has none: unset JUDGELAB_BATCH")


@dataclass
class _Outcome:
    """What one fresh conversation produced (internal to :meth:`Gateway._fresh`)."""

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


class Gateway:
    """The only object in the project that talks to a model. Thread-safe."""

    def __init__(
        self,
        backend,
        cache: ResponseCache,
        cache_mode: str = "normal",
        concurrency: int = 8,
        max_repairs: int = 2,
        retry: RetryPolicy | None = None,
        limiter: RateLimiter | None = None,
        prices: PriceTable | None = None,
        transcripts: TranscriptLog | None = None,
        progress: bool = True,
        secrets: tuple[str, ...] | None = None,
        breaker: CircuitBreaker | None = None,
        batch: bool = False,
        batch_poll_s: float = 30.0,
        batch_fallback: str = "stop",
        reasoning: ReasoningPolicy | None = None,
        study: str | None = None,
        canary: bool | None = None,
        stop_after: int | None = None,
    ):
        self.backend = backend
        #: which effort a reasoning model gets where a request states none (gateway.reasoning)
        self.reasoning = reasoning or ReasoningPolicy()
        #: the study whose judge this is (judgelab.judges), named in stop messages' settings
        self.study = study
        #: canary per request shape and stop on repeated failures in fan-outs (gateway.canary)
        self.canary = canary_enabled(backend.name, canary)
        self.stop_after = stop_after_setting(stop_after)
        self._passed_shapes: set = set()
        self._pending_batch_keys: set | None = None  # batch mode, per fan-out (_in_pending_batch)
        #: redacted from every file the gateway writes ($OPENAI_API_KEY and the backend's key)
        self.secrets = tuple(secrets) if secrets is not None else configured_secrets(getattr(backend, "api_key", None))
        self.cache = cache
        self.cache_mode = cache_mode
        self.concurrency = concurrency
        self.max_repairs = max_repairs
        self.retry = retry or RetryPolicy()
        self.limiter = limiter or RateLimiter()
        self.prices = prices or PriceTable.load()
        self.ledger = Ledger(self.prices, self.secrets)
        self.breaker = breaker or CircuitBreaker(backend.base_url)
        self.transcripts = transcripts
        self.progress = progress
        self._identity = backend.identity()
        self._tls = threading.local()
        self._inflight: dict[str, tuple[threading.Lock, int]] = {}
        self._inflight_guard = threading.Lock()
        self._batch = self._batch_collector(batch, batch_poll_s, batch_fallback)

    def _batch_collector(self, batch: bool, poll_s: float, fallback: str):
        """The Batch API collector, or None: not asked for, or replay (which never submits).

        On the in-process llamacpp backend batch mode is an error, not a silent no-op: someone who
        asked for the Batch API's price has a backend with no Batch API, and should know it."""
        if not batch or self.cache_mode == "replay":
            return None
        from judgelab.gateway.backends.openai_backend import OpenAIBackend
        from judgelab.gateway.batch_collector import BatchCollector

        if not isinstance(self.backend, OpenAIBackend):
            raise ConfigError(_NO_BATCH.format(backend=self.backend_name))
        return BatchCollector(self, poll_s=poll_s, fallback=fallback)

    @property
    def batch_mode(self) -> bool:
        """True when cache misses go through the OpenAI Batch API."""
        return self._batch is not None

    @property
    def batch_history(self) -> list[tuple[str, int]]:
        """(batch id, number of requests) of every batch submitted or resumed by this gateway."""
        return list(self._batch.history) if self._batch is not None else []

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def from_settings(
        cls,
        backend: str | None = None,
        model: str | None = None,
        base_url: str | None = None,
        cache_mode: str | None = None,
        *,
        concurrency: int | None = None,
        rpm: float | None = None,
        tpm: float | None = None,
        cache_path: str | Path | None = None,
        max_repairs: int = 2,
        retry: RetryPolicy | None = None,
        n_ctx: int | None = None,
        timeout_s: float = 120.0,
        schema_style: str | None = None,
        price_table: str | Path | None = None,
        transcripts: bool = True,
        progress: bool | None = None,
        batch: bool | None = None,
        batch_poll_s: float | None = None,
        batch_fallback: str | None = None,
        reasoning: ReasoningPolicy | None = None,
        study: str | None = None,
        canary: bool | None = None,
        stop_after: int | None = None,
    ) -> "Gateway":
        """A gateway configured by arguments, else the environment, else the embedded model.

        See :mod:`judgelab.gateway.settings` for the environment variables, and for the keys:
        ``OPENAI_API_KEY`` only for OpenAI's own URL, ``JUDGELAB_API_KEY`` (or none) for any other.
        """
        s = resolve(backend, model, base_url, cache_mode, concurrency, rpm, tpm, cache_path, progress,
                    batch, batch_poll_s, batch_fallback)
        prices = PriceTable.load(price_table)
        # in replay the backend is never called: it is built without key, network or model load
        # (llamacpp then counts tokens with the GGUF's vocabulary alone, no weights)
        offline = s.cache_mode == "replay"
        if s.batch and s.backend == "llamacpp" and not offline:  # say so before loading the GGUF
            raise ConfigError(_NO_BATCH.format(backend=s.backend))
        if s.backend == "llamacpp":
            from judgelab.gateway.backends.llamacpp import DEFAULT_N_CTX, LlamaCppBackend

            be = LlamaCppBackend(s.model, n_ctx=n_ctx or DEFAULT_N_CTX, offline=offline,
                                 state_dir=s.llama_states_dir, state_max_mb=s.llama_states_mb)
        else:
            from judgelab.gateway.backends.openai_backend import OpenAIBackend

            be = OpenAIBackend(s.model, s.base_url, compatible=s.backend == "openai-compatible",
                               timeout_s=timeout_s, schema_style=schema_style, prices=prices, offline=offline)
        secrets = configured_secrets(getattr(be, "api_key", None))
        log = None
        if transcripts:
            log = TranscriptLog(s.cache_path.parent / "transcripts", f"{be.name}_{be.model}", secrets=list(secrets))
        return cls(
            be, ResponseCache(s.cache_path), cache_mode=s.cache_mode, concurrency=s.concurrency,
            max_repairs=max_repairs, retry=retry, limiter=RateLimiter(s.rpm, s.tpm), prices=prices,
            transcripts=log, progress=s.progress, secrets=secrets,
            batch=s.batch, batch_poll_s=s.batch_poll_s, batch_fallback=s.batch_fallback,
            reasoning=reasoning, study=study, canary=canary, stop_after=stop_after,
        )

    # -- identity -------------------------------------------------------------------------------
    @property
    def backend_name(self) -> str:
        return self.backend.name

    @property
    def model_name(self) -> str:
        return self.backend.model

    @property
    def base_url(self) -> str | None:
        return self.backend.base_url

    @property
    def is_embedded_small_model(self) -> bool:
        """True when answers come from the bundled SmolLM2-135M (say so in every caption)."""
        return is_embedded_small_model(self.backend_name, self.model_name)

    def describe(self) -> dict[str, Any]:
        """Backend, model, base URL, cache file and mode (never the key)."""
        return {"backend": self.backend_name, "model": self.model_name, "base_url": self.base_url,
                "cache": str(self.cache.path), "cache_mode": self.cache_mode,
                "embedded_small_model": self.is_embedded_small_model}

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` under the backend's own tokenizer (llama.cpp's vocabulary for the
        embedded model, tiktoken's encoding of the model for OpenAI-compatible endpoints), so that
        a token budget counts what the model will actually read."""
        return int(self.backend.count_tokens(text))

    def redact(self, value: Any) -> Any:
        """``value`` (text, or dicts/lists of it) with the configured key replaced; see :mod:`.redact`."""
        return redact(value, self.secrets)

    def key(self, request: ChatRequest) -> str:
        """The cache key of ``request`` for this backend, with its sampling as sent (:meth:`as_sent`)."""
        return request_key(self._identity, self.as_sent(request))

    @property
    def rejects_temperature(self) -> bool:
        """True when this judge is sent no ``temperature``/``top_p`` (a reasoning model on OpenAI)."""
        return reasoning_applies(self.backend_name, self.model_name)

    def as_sent(self, request: ChatRequest) -> ChatRequest:
        """``request`` with the sampling this gateway sends (:func:`~.reasoning.sent_sampling`:
        for a reasoning model its effort, the budget plus the reasoning allowance, no
        temperature). Idempotent; other models get ``request`` itself."""
        if request._as_sent:
            return request
        sampling = sent_sampling(request.sampling, self.backend_name, self.model_name, self.reasoning)
        out = request if sampling == request.sampling else request.model_copy(update={"sampling": sampling})
        if out is request:
            out = request.model_copy()
        out._as_sent = True
        return out

    # -- one call -------------------------------------------------------------------------------
    def chat(self, request: ChatRequest) -> ChatResult:
        """Answer one request from the cache or the model. Never raises for a model failure.

        Raises :class:`ReplayMissError` in replay mode when the request is not cached. Inside
        :meth:`run_batch`/:meth:`map` raises :class:`~.canary.FanOutStopped` when the request's
        shape failed its canary or items keep failing alike (:mod:`.canary`).
        """
        request = self.as_sent(request)
        key = self.key(request)
        guard: FanOutGuard | None = getattr(self._tls, "guard", None)
        if guard is not None:
            guard.check()
        result = self._lookup(request, key)
        if result is None:
            if self.cache_mode == "replay":
                failed = self._recorded_failure(request, key)
                if failed is None:
                    raise ReplayMissError(self._miss_message(request, key))
                return self._recorded(failed)
            if guard is None or self._in_pending_batch(key):
                # a request a recorded batch already holds passed its shape's canary before that
                # batch was submitted: asking it live again (a resumed run) would pay twice
                if guard is not None:
                    guard.hit(shape_key(request, self.model_name))
                result = self._miss(request, key)
            else:  # a shape's first miss goes alone, as an ordinary call even in batch mode
                result = guard.call(shape_key(request, self.model_name), request,
                                    lambda: self._recorded(self._canary(request, key)),
                                    lambda: self._recorded(self._miss(request, key)))
                guard.record(result, request)
                return result
        elif guard is not None:
            guard.hit(shape_key(request, self.model_name))
        return self._recorded(result)

    def _miss(self, request: ChatRequest, key: str) -> ChatResult:
        if self._batch is not None:
            return self._batched(request, key, getattr(self._tls, "batch_group", None))
        return self._live(request, key)

    def _recorded(self, result: ChatResult) -> ChatResult:
        """``result`` after its ledger row and the fan-out's item statistics."""
        self.ledger.record(result)
        stats = getattr(self._tls, "stats", None)
        if stats is not None:
            stats["all_cached"] &= result.cached
            stats["failed"] |= result.status == "failed"
        return result

    def _canary(self, request: ChatRequest, key: str) -> ChatResult:
        """A shape's canary: an ordinary call whose reply cut at the budget, or empty, gets no repair
        turn (:meth:`_converse`): the same budget buys the same cut, and the fan-out stops on it anyway."""
        self._tls.canary = True
        try:
            return self._live(request, key)
        finally:
            self._tls.canary = False

    def _live(self, request: ChatRequest, key: str) -> ChatResult:
        """A miss answered by an ordinary call."""
        # single flight: identical requests running at once pay for one call, not several
        try:
            with self._key_lock(key):
                return self._lookup(request, key) or self._fresh(request, key)
        finally:
            self._release_key_lock(key)

    def _batched(self, request: ChatRequest, key: str, group=None) -> ChatResult:
        """A miss answered through the Batch API: wait with the other workers of ``group`` (a
        group of one outside ``map``/``run_batch``), then take the answer or fall back."""
        own = group is None
        if own:
            group = self._batch.group(1)
        try:
            pending = group.ask(request, key)
        finally:
            if own:
                group.leave()
        return self._answer(pending, request, key)

    def _answer(self, p, request: ChatRequest, key: str) -> ChatResult:
        """What one waiter of a batch-answered request gets (see :class:`~.batch_collector.Pending`)."""
        if p.error is not None:
            raise p.error
        first = p.claim()
        if p.result is not None:
            if first or not p.result.ok:
                return p.result
            entry = self.cache.get(key)  # a duplicate of an answered request: the cache has it
            if entry is not None and (res := self._from_cache(entry, request, key)) is not None:
                return res
        # unanswered: an ordinary call (fallback "live"), or a recorded failure (batch_collector)
        return self._batch.fallback_answer(p, lambda: self._live(request, key))

    def _lookup(self, request: ChatRequest, key: str) -> ChatResult | None:
        if self.cache_mode == "refresh":
            return None
        entry = self.cache.get(key)
        return self._from_cache(entry, request, key) if entry is not None else None

    def _key_lock(self, key: str) -> threading.Lock:
        with self._inflight_guard:
            lock, users = self._inflight.get(key, (None, 0))
            lock = lock or threading.Lock()
            self._inflight[key] = (lock, users + 1)
            return lock

    def _release_key_lock(self, key: str) -> None:
        with self._inflight_guard:
            lock, users = self._inflight[key]
            if users <= 1:
                del self._inflight[key]
            else:
                self._inflight[key] = (lock, users - 1)

    def _recorded_failure(self, request: ChatRequest, key: str) -> ChatResult | None:
        """In replay, the failure a fresh call of the recorded run ended in (its row failed there
        too), served as that failure; None when the cache holds none."""
        stored = self.cache.get_failure(key)
        if stored is None:
            return None
        return ChatResult.model_validate({**stored, "cached": True, "key": key,
                                          "tags": self.redact(dict(request.tags)), "sampling": request.sampling})

    def _miss_message(self, request: ChatRequest, key: str) -> str:
        return (f"replay mode: no cached response for [{request.item_label()}] "
                f"(template {request.template_version}, replicate {request.replicate}, "
                f"backend {self.backend_name}, model {self.model_name}, key {key[:16]}) in {self.cache.path}; "
                "import the cache you were given or run in normal mode")

    def _from_cache(self, entry: dict, request: ChatRequest, key: str) -> ChatResult | None:
        parsed: Any = entry["text"]
        if request.schema is not None:
            try:
                parsed = request.schema.model_validate(entry["parsed"])
            except Exception:  # noqa: BLE001 - an unreadable entry is treated as a miss
                return None
        return ChatResult.model_validate({
            "status": "ok", "parsed": parsed, "text": entry["text"], "n_repairs": entry["n_repairs"],
            "cached": True, "backend": entry["backend"], "model": entry["model"], "usage": entry["usage"],
            "latency_s": entry["latency_s"], "truncated": entry["truncated"],
            "truncation_note": entry["truncation_note"], "key": key, "tags": self.redact(dict(request.tags)),
            "sampling": request.sampling,
        })

    def _fresh(self, request: ChatRequest, key: str) -> ChatResult:
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

    def _redact_outcome(self, out: "_Outcome", request: ChatRequest) -> None:
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

    def _converse(self, messages: list[dict], request: ChatRequest, label: str, out: "_Outcome") -> list[dict]:
        """Call, validate, and on an invalid reply show the model its error (at most ``max_repairs``
        times). Fills ``out``; returns the conversation as finally sent (repair turns included)."""
        for turn in range(self.max_repairs + 1):
            try:
                reply, n = self._call(messages, request)
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
            out.usage = out.usage + (reply.usage or self._estimate(messages, reply.text))
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
            cut_canary = (reply.finish_reason == "length" or out.failure == "empty") and getattr(self._tls, "canary", False)
            if request.schema is None or turn == self.max_repairs or cut_canary or (
                    out.failure == "empty" and reply.finish_reason == "length"):
                return messages
            messages = messages + [
                {"role": "assistant", "content": reply.text},
                {"role": "user", "content": repair_message(verr, request.schema)},
            ]
            out.repairs += 1
        return messages

    def _call(self, messages: list[dict], request: ChatRequest):
        """One backend call through the limiter and the retry policy; returns (reply, attempts)."""
        budget = tokens.count_message_tokens(messages, self.model_name) + request.sampling.max_tokens if self.limiter.active else 0

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

        return self.retry.call(attempt)

    def _estimate(self, messages: list[dict], text: str) -> Usage:
        """tiktoken counts when the backend reported no usage (labelled as an estimate)."""
        return Usage(input_tokens=tokens.count_message_tokens(messages, self.model_name),
                     output_tokens=tokens.count_tokens(text or "", self.model_name), estimated=True)

    # -- many calls -----------------------------------------------------------------------------
    def _workers(self, concurrency: int | None) -> int:
        return max(1, min(concurrency or self.concurrency, self.backend.max_concurrency))

    def run_batch(self, requests: Iterable[ChatRequest], concurrency: int | None = None, desc: str = "chat") -> list[ChatResult]:
        """Answer many requests concurrently; results in the order of ``requests``.

        Threads rather than asyncio so that it also runs inside Jupyter's event loop. In replay
        mode every request is checked first and a ReplayMissError lists the misses. The first miss
        of every request shape goes alone, before the others (in batch mode: before the batch), and
        the run stops with :class:`~.canary.FanOutStopped` when it is rejected, empty or cut, or
        when calls keep failing alike (:mod:`judgelab.gateway.canary`).
        """
        requests = [self.as_sent(r) for r in requests]
        if self.cache_mode == "replay":
            self._check_replay(requests)
        guard = self._guard()
        with BatchProgress(len(requests), desc, self.progress) as bar:
            first: dict[str, ChatResult] = {}
            if self._batch is not None and guard is not None:  # the canaries before the batch
                canaries = self._canary_requests(requests)
                done = self._parallel(self._guarded(guard, self.chat), canaries, self._workers(concurrency))
                first = {self.key(r): res for r, res in zip(canaries, done)}
            answered = self._batch_all([r for r in requests if self.key(r) not in first]) if self._batch is not None else {}

            def one(req: ChatRequest) -> ChatResult:
                key = self.key(req)
                res = first.pop(key, None)  # a canary's result (its ledger row is written), once
                if res is None and key in answered:  # batch mode: the misses were answered together, in one batch
                    res = self._answer(answered[key], req, key)
                    self.ledger.record(res)
                    if guard is not None:
                        guard.record(res, req)
                elif res is None:
                    res = self.chat(req)
                bar.update(res.cached, res.status == "failed")
                return res

            try:
                return self._parallel(self._guarded(guard, one), requests, self._workers(concurrency))
            except BaseException:
                # a stop cancels the requests not yet handed out, but their batch lines were
                # already answered and billed: every one of them goes into the ledger all the same
                self._record_unclaimed(answered)
                raise

    def _record_unclaimed(self, answered: dict) -> None:
        """The ledger rows of batch answers no worker took (:class:`~.batch_collector.Pending`):
        a valid reply (cached, and billed) or a billed line that gave none."""
        for p in answered.values():
            if p.error is not None or not p.claim():
                continue  # taken (and recorded) by a worker, or no batch ran at all
            billed = p.result if p.result is not None else p.take_billed()
            if billed is not None:
                self.ledger.record(billed)

    # -- canary and streak (gateway.canary) -----------------------------------------------------
    def _guard(self) -> FanOutGuard | None:
        """A fresh guard for one fan-out (None when switched off or in replay, which never calls)."""
        if not self.canary or self.cache_mode == "replay":
            return None
        self._pending_batch_keys = None
        return FanOutGuard(self._passed_shapes, self.stop_after, self._stop_message)

    def _guarded(self, guard: FanOutGuard | None, fn: Callable[[T], R]) -> Callable[[T], R]:
        """``fn`` run with ``guard`` watching the calls of this thread."""
        if guard is None:
            return fn

        def run(item: T) -> R:
            outer, self._tls.guard = getattr(self._tls, "guard", None), guard
            try:
                return fn(item)
            finally:
                self._tls.guard = outer

        return run

    def _canary_requests(self, requests: list[ChatRequest]) -> list[ChatRequest]:
        """The first uncached request of every shape not answered before."""
        out, seen = [], set(self._passed_shapes)
        for req in requests:
            shape = shape_key(req, self.model_name)
            if shape in seen:
                continue
            if self._lookup(req, self.key(req)) is not None or self._in_pending_batch(self.key(req)):
                self._passed_shapes.add(shape)
            else:
                out.append(req)
            seen.add(shape)
        return out

    def _in_pending_batch(self, key: str) -> bool:
        """Batch mode: ``key`` is held by a recorded batch not collected yet (read once per fan-out)."""
        if self._batch is None:
            return False
        if self._pending_batch_keys is None:
            self._pending_batch_keys = self._batch.jobs.pending_keys()
        return key in self._pending_batch_keys

    def _stop_message(self, why: str, result: ChatResult, request: ChatRequest, n: int) -> str:
        """Why the fan-out stopped and which setting to change (``why``: canary | streak)."""
        sent = request.sampling
        head = (f"stopped after {'the canary call of this request shape' if why == 'canary' else f'{n} consecutive calls that failed alike'}"
                f" ({result.failure}) at {self.base_url or self.backend_name}, model {self.model_name}, "
                f"[{request.item_label()}]: {result.error}")
        return self.redact(f"{head}. {self._remedy(result.failure, result.finish_reason, sent)}")

    def _remedy(self, failure: str | None, finish_reason: str | None, sent) -> str:
        """The settings that would change the outcome of a ``failure``."""
        study = (self.study or "").upper()
        model_var = f"JUDGELAB_{study}_MODEL" if study else "JUDGELAB_MODEL"
        effort_var = f"JUDGELAB_{study}_REASONING_EFFORT" if study else "the request's reasoning_effort"
        reasoning = reasoning_applies(self.backend_name, self.model_name)
        if failure == "empty" and finish_reason != "length":
            return f"The model answered nothing within its budget: choose another model ({model_var})"
        if failure in ("empty", "cut"):
            if reasoning:
                allowance = REASONING_ALLOWANCE.get(sent.reasoning_effort, 0)
                return (f"The reply did not fit max_completion_tokens={sent.max_tokens} (the profile's "
                        f"max_tokens {sent.max_tokens - allowance} + a reasoning allowance of {allowance} for "
                        f"reasoning_effort={sent.reasoning_effort}): raise the profile's max_tokens, lower "
                        f"{effort_var} (minimal), or choose a non-reasoning model ({model_var}=gpt-4.1)")
            return (f"The reply did not fit max_tokens={sent.max_tokens}: raise the profile's max_tokens for "
                    f"this request, or choose another model ({model_var})")
        if failure == "invalid":
            return (f"The model's replies break the reply schema, repair turns included: choose another model "
                    f"({model_var}), or check the study's schema and prompt version (a cap the reply must fit is "
                    "stated in the schema's descriptions)")
        if failure == "http_4xx":
            return (f"The server rejects the request: check the model name and key ({model_var}, "
                    "OPENAI_API_KEY) or the setting the server's message names")
        return (f"Every further item would fail the same way: fix the endpoint ({self.base_url}) or the model "
                f"({model_var}); JUDGELAB_STOP_AFTER sets how many alike failures stop a run")

    def _batch_all(self, requests: list[ChatRequest]) -> dict:
        """Batch mode: send every cache miss of ``requests`` as one batch; key -> Pending."""
        misses = {}
        for req in requests:
            key = self.key(req)
            if key not in misses and self._lookup(req, key) is None:
                misses[key] = req
        return self._batch.group(1).ask_many(misses) if misses else {}

    async def arun_batch(self, requests: Iterable[ChatRequest], concurrency: int | None = None,
                         desc: str = "chat") -> list[ChatResult]:
        """``await``-able :meth:`run_batch` for async code (e.g. ``await gw.arun_batch(reqs)`` in Jupyter).

        An ``asyncio.Semaphore`` bounds the calls in flight; each call runs in a worker thread of a
        pool of that size, since the backends' clients are synchronous.
        """
        import asyncio

        requests = list(requests)
        if self.cache_mode == "replay":
            self._check_replay(requests)
        loop = asyncio.get_running_loop()
        if self._batch is not None:  # one batch for all misses, not one per request
            return await loop.run_in_executor(None, self.run_batch, requests, concurrency, desc)
        workers = self._workers(concurrency)
        gate = asyncio.Semaphore(workers)
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="judgelab-gw-async")
        with BatchProgress(len(requests), desc, self.progress) as bar:
            async def one(req: ChatRequest) -> ChatResult:
                async with gate:
                    res = await loop.run_in_executor(pool, self.chat, req)
                bar.update(res.cached, res.status == "failed")
                return res

            try:
                return list(await asyncio.gather(*(one(r) for r in requests)))
            finally:
                pool.shutdown(wait=True, cancel_futures=True)

    def map(self, fn: Callable[[T], R], items: Iterable[T], concurrency: int | None = None, desc: str = "items") -> list[R]:
        """Run ``fn(item)`` (e.g. a multi-turn conversation of ``chat`` calls) for every item.

        Results keep the order of ``items``. The bar counts an item as cached when all its calls
        were cache hits and as failed when any call failed. Every call runs under the canary and
        the failure streak of :mod:`judgelab.gateway.canary`, as in :meth:`run_batch`. On the in-process backend items run
        one at a time so that each conversation keeps its KV prefix.
        """
        items = list(items)
        guard = self._guard()
        with BatchProgress(len(items), desc, self.progress) as bar:
            def one(item: T) -> R:
                self._tls.stats = {"all_cached": True, "failed": False}
                try:
                    out = fn(item)
                finally:
                    stats, self._tls.stats = self._tls.stats, None
                bar.update(stats["all_cached"], stats["failed"])
                return out

            if self._batch is not None:
                return self._map_batched(self._guarded(guard, one), items)
            return self._parallel(self._guarded(guard, one), items, self._workers(concurrency))

    def _map_batched(self, fn: Callable[[T], R], items: list[T]) -> list[R]:
        """Batch mode: every item in its own thread (at most ``MAX_WORKERS`` at a time), so that
        each round of every item waits for the same batch; ``concurrency`` does not apply."""
        from judgelab.gateway.batch_collector import MAX_WORKERS

        out: list[Any] = []
        self._batch.stop.clear()
        for start in range(0, len(items), MAX_WORKERS):
            part = items[start:start + MAX_WORKERS]
            group = self._batch.group(len(part))

            def member(item: T, group=group) -> R:
                self._tls.batch_group = group
                try:
                    return fn(item)
                finally:
                    self._tls.batch_group = None
                    group.leave()

            out.extend(self._run_members(member, part))
        return out

    def _run_members(self, member: Callable[[T], R], part: list[T]) -> list[R]:
        """``member`` for each item of ``part``, each in its own thread, results in order."""
        res: list[Any] = [None] * len(part)
        pool = ThreadPoolExecutor(max_workers=len(part), thread_name_prefix="judgelab-gw-batch")
        try:
            futures = {pool.submit(member, item): i for i, item in enumerate(part)}
            for fut in as_completed(futures):
                res[futures[fut]] = fut.result()
        except BaseException:
            # an interrupt (or a worker's error) reaches this thread while another worker waits
            # for a batch: end that wait, or the shutdown below would wait for the batch to finish
            self._batch.stop.set()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        return res

    @staticmethod
    def _parallel(fn: Callable[[T], R], items: list[T], workers: int) -> list[R]:
        if workers <= 1 or len(items) <= 1:
            return [fn(item) for item in items]
        out: list[Any] = [None] * len(items)
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="judgelab-gw")
        try:
            futures = {pool.submit(fn, item): i for i, item in enumerate(items)}
            for fut in as_completed(futures):
                out[futures[fut]] = fut.result()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        return out

    def _check_replay(self, requests: list[ChatRequest]) -> None:
        misses = [r for r in requests if not self.cache.contains(self.key(r))
                  and self.cache.get_failure(self.key(r)) is None]
        if misses:
            first = "; ".join(self._miss_message(r, self.key(r)) for r in misses[:3])
            raise ReplayMissError(f"{len(misses)} of {len(requests)} requests are not in the cache. {first}")

    # -- Batch API ------------------------------------------------------------------------------
    def submit_batch(self, requests: Iterable[ChatRequest], metadata: dict | None = None) -> str | None:
        """Send the uncached requests through the OpenAI Batch API; returns the batch id (None if all cached)."""
        from judgelab.gateway.batch_api import submit_batch

        return submit_batch(self, list(requests), metadata)

    def collect_batch(self, batch_id: str, requests: Iterable[ChatRequest], wait: bool = False, poll_s: float = 30.0,
                      fill_missing: bool = False):
        """Store a finished batch's replies in the cache and return results for ``requests``
        (None for each request when the batch is not finished and ``wait`` is False)."""
        from judgelab.gateway.batch_api import collect_batch

        return collect_batch(self, batch_id, list(requests), wait=wait, poll_s=poll_s, fill_missing=fill_missing)

    # -- accounting -----------------------------------------------------------------------------
    def ledger_frame(self) -> "pd.DataFrame":
        """One row per call: tags, status, tokens (estimated flag), latency, cost, cached."""
        return self.ledger.frame()

    def ledger_summary(self, by: list[str] | str) -> "pd.DataFrame":
        """Calls, tokens, latency and cost summed by tag columns."""
        return self.ledger.summary(by)

    def close(self) -> None:
        if self._batch is not None:
            self._batch.close()
        if self.transcripts is not None:
            self.transcripts.close()
        self.cache.close()

    def __enter__(self) -> "Gateway":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Gateway(backend={self.backend_name!r}, model={self.model_name!r}, cache_mode={self.cache_mode!r})"
