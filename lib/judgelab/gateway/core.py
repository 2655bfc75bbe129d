"""The :class:`Gateway`: the parts that answer a model request, put together.

Flow of one :meth:`Gateway.chat` (:class:`~judgelab.gateway.call.Call`):

1. the sampling as sent (:mod:`~judgelab.gateway.reasoning`) hashed into the cache key; a hit is
   returned as is, a miss in replay mode raises :class:`ReplayMissError` naming the item
   (:class:`~judgelab.gateway.lookup.CacheLookup`);
2. fit the prompt into the context (or record a failure, or cut the middle: ``head_tail``);
3. call the backend through the rate limiter, the retry policy and the circuit breaker
   (:class:`~judgelab.gateway.fresh.Sender`);
4. validate the reply; on failure show the model its error and ask again, at most
   ``max_repairs`` times; then record a failure, never a default value (steps 2-5:
   :class:`~judgelab.gateway.fresh.FreshCall`);
5. cache successes only; write the ledger row and the transcript line, all redacted.

The fan-out (:class:`~judgelab.gateway.fanout.FanOut`) adds a canary per request shape and a stop on
repeated failures (:class:`~judgelab.gateway.canary.Canary`); batch mode
(:class:`~judgelab.gateway.batch_mode.BatchMode`) sends step 3 as Batch API jobs.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, Iterable

from judgelab.provenance import is_embedded_small_model
from judgelab.gateway import batch_mode
from judgelab.gateway.batch_mode import NO_BATCH, BatchMode
from judgelab.gateway.cache import ResponseCache
from judgelab.gateway.call import Call
from judgelab.gateway.canary import Canary, StopWording, canary_enabled, stop_after_setting
from judgelab.gateway.context import CallContext
from judgelab.gateway.errors import ConfigError
from judgelab.gateway.fanout import FanOut, R, T
from judgelab.gateway.fresh import FreshCall, Sender
from judgelab.gateway.ledger import Ledger, PriceTable, TranscriptLog
from judgelab.gateway.limiter import RateLimiter
from judgelab.gateway.lookup import CacheLookup
from judgelab.gateway.reasoning import reasoning_applies
from judgelab.gateway.redact import configured_secrets, redact
from judgelab.gateway.retry import CircuitBreaker, RetryPolicy
from judgelab.gateway.settings import DEFAULT_CONCURRENCY, Settings, resolve
from judgelab.gateway.types import ChatRequest, ChatResult

if TYPE_CHECKING:
    import pandas as pd


class Gateway:
    """The only object in the project that talks to a model. Thread-safe.

    ``settings``: what it does (:class:`~judgelab.gateway.settings.Settings`, as resolved for a run;
    by default the fields' defaults for ``backend``), changed by ``changes`` (field names). Each
    part reads its own fields: the lookup the cache mode and reasoning policy, the fresh call
    ``max_repairs``, the retry policy ``retry``, batch mode ``batch*``, the canary ``canary``,
    ``stop_after`` and ``study``, the fan-out ``concurrency`` and ``progress``. The keyword arguments before them replace a part built from
    the settings: the rate ``limiter`` (``rpm``/``tpm``), the ``prices`` (``price_table``), the
    ``transcripts`` log (none by default), the ``secrets`` redacted from every file (by default
    ``$OPENAI_API_KEY`` and the backend's key) and the circuit ``breaker``.
    """

    def __init__(self, backend, cache: ResponseCache, settings: Settings | None = None, *,
                 limiter: RateLimiter | None = None, prices: PriceTable | None = None,
                 transcripts: TranscriptLog | None = None, secrets: Iterable[str] | None = None,
                 breaker: CircuitBreaker | None = None, **changes: Any):
        s = settings or Settings(backend=backend.name, model=backend.model, base_url=backend.base_url,
                                 cache_mode="normal", concurrency=DEFAULT_CONCURRENCY, rpm=None, tpm=None,
                                 cache_path=cache.path, progress=True)
        s = dataclasses.replace(s, **changes) if changes else s
        self.settings = s
        self.backend = backend
        self.cache = cache
        self.secrets = tuple(secrets) if secrets is not None else configured_secrets(getattr(backend, "api_key", None))
        self.transcripts = transcripts
        self.ledger = Ledger(prices or PriceTable.load(s.price_table), self.secrets)
        self.retry = s.retry or RetryPolicy()
        self.context = CallContext()
        self.lookup = CacheLookup(cache, backend, s.cache_mode, s.reasoning, self.secrets)
        sender = Sender(backend, self.retry, limiter or RateLimiter(s.rpm, s.tpm),
                        breaker or CircuitBreaker(backend.base_url))
        self.fresh = FreshCall(backend, cache, sender, self.context, max_repairs=s.max_repairs,
                               secrets=self.secrets, transcripts=transcripts)
        self.batch = self._batch_mode(s)
        self.call = Call(self.lookup, self.fresh, self.ledger, self.context, self.batch)
        #: canary per request shape and stop on repeated failures in fan-outs (gateway.canary)
        self.canary = Canary(canary_enabled(backend.name, s.canary), stop_after_setting(s.stop_after),
                             StopWording(backend, s.study, self.secrets))
        self.fanout = FanOut(self.call, self.canary, concurrency=s.concurrency,
                             max_concurrency=backend.max_concurrency, progress=s.progress)

    def _batch_mode(self, s: Settings) -> BatchMode | None:
        """Batch mode, or None (not asked for, or replay). On a backend without a Batch API it is
        an error, not a silent no-op: who asked for the batch price should know."""
        if not s.batch or s.cache_mode == "replay":
            return None
        from judgelab.gateway.backends.openai_backend import OpenAIBackend
        from judgelab.gateway.batch_collector import BatchCollector

        if not isinstance(self.backend, OpenAIBackend):
            raise ConfigError(NO_BATCH.format(backend=self.backend.name))
        collector = BatchCollector(self.lookup, self.fresh, self.ledger, concurrency=s.concurrency,
                                   max_attempts=self.retry.max_attempts, poll_s=s.batch_poll_s,
                                   fallback=s.batch_fallback)
        return BatchMode(collector, self.lookup, self.fresh, self.ledger, self.context)

    @classmethod
    def from_settings(cls, settings: Settings | None = None, /, **choices) -> "Gateway":
        """A gateway configured by ``settings``, else by :func:`~judgelab.gateway.settings.resolve`
        on ``choices`` (arguments, else the environment, else the embedded model)."""
        if settings is not None and (choices or not isinstance(settings, Settings)):
            raise TypeError("Gateway.from_settings takes a gateway.settings.Settings or resolve's keyword "
                            f"arguments (backend=..., model=...), not {settings!r} with {sorted(choices)}")
        s = settings or resolve(**choices)
        prices = PriceTable.load(s.price_table)
        # in replay the backend is never called: it is built without key, network or model load
        # (llamacpp then counts tokens with the GGUF's vocabulary alone, no weights)
        offline = s.cache_mode == "replay"
        if s.batch and s.backend == "llamacpp" and not offline:  # say so before loading the GGUF
            raise ConfigError(NO_BATCH.format(backend=s.backend))
        if s.backend == "llamacpp":
            from judgelab.gateway.backends.llamacpp import DEFAULT_N_CTX, LlamaCppBackend

            be = LlamaCppBackend(s.model, n_ctx=s.n_ctx or DEFAULT_N_CTX, offline=offline,
                                 state_dir=s.llama_states_dir, state_max_mb=s.llama_states_mb)
        else:
            from judgelab.gateway.backends.openai_backend import OpenAIBackend

            be = OpenAIBackend(s.model, s.base_url, compatible=s.backend == "openai-compatible",
                               timeout_s=s.timeout_s, schema_style=s.schema_style, prices=prices, offline=offline,
                               cache_endpoint=s.cache_endpoint)
        log = None
        if s.transcripts:
            secrets = configured_secrets(getattr(be, "api_key", None))
            log = TranscriptLog(s.cache_path.parent / "transcripts", f"{be.name}_{be.model}", secrets=list(secrets))
        return cls(be, ResponseCache(s.cache_path), s, prices=prices, transcripts=log)

    # -- who answers ----------------------------------------------------------------------------
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
    def cache_mode(self) -> str:
        return self.settings.cache_mode

    @property
    def concurrency(self) -> int:
        return self.settings.concurrency

    @property
    def study(self) -> str | None:
        return self.settings.study

    @property
    def reasoning(self):
        """Which effort a reasoning model gets where a request states none (:mod:`.reasoning`)."""
        return self.lookup.reasoning

    @property
    def is_embedded_small_model(self) -> bool:
        """True when answers come from the bundled SmolLM2-135M (say so in every caption)."""
        return is_embedded_small_model(self.backend_name, self.model_name)

    @property
    def rejects_temperature(self) -> bool:
        """True when this judge is sent no ``temperature``/``top_p`` (a reasoning model on OpenAI)."""
        return reasoning_applies(self.backend_name, self.model_name)

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` under the backend's own tokenizer (what the model will read)."""
        return int(self.backend.count_tokens(text))

    def redact(self, value: Any) -> Any:
        """``value`` (text, or dicts/lists of it) with the configured key replaced; see :mod:`.redact`."""
        return redact(value, self.secrets)

    def key(self, request: ChatRequest) -> str:
        """The cache key of ``request`` for this backend, with its sampling as sent (:meth:`as_sent`)."""
        return self.lookup.key(request)

    def as_sent(self, request: ChatRequest) -> ChatRequest:
        """``request`` with the sampling this gateway sends (:func:`~.reasoning.sent_sampling`); idempotent."""
        return self.lookup.as_sent(request)

    # -- calls ----------------------------------------------------------------------------------
    def chat(self, request: ChatRequest) -> ChatResult:
        """Answer one request from the cache or the model; never raises for a model failure.
        Raises :class:`ReplayMissError` on a replay miss, and inside :meth:`run_batch`/:meth:`map`
        :class:`~.canary.FanOutStopped` (:mod:`.canary`)."""
        return self.call.chat(request)

    def run_batch(self, requests: Iterable[ChatRequest], concurrency: int | None = None,
                  desc: str = "chat") -> list[ChatResult]:
        """Answer many requests concurrently, in order (:meth:`.fanout.FanOut.run_batch`)."""
        return self.fanout.run_batch(requests, concurrency, desc)

    def map(self, fn: Callable[[T], R], items: Iterable[T], concurrency: int | None = None,
            desc: str = "items") -> list[R]:
        """``fn(item)`` for every item, in order, under the canary and streak (:meth:`.fanout.FanOut.map`)."""
        return self.fanout.map(fn, items, concurrency, desc)

    # -- batch mode -----------------------------------------------------------------------------
    @property
    def batch_mode(self) -> bool:
        """True when cache misses go through the OpenAI Batch API."""
        return self.batch is not None

    @property
    def batch_history(self) -> list[tuple[str, int]]:
        """(batch id, number of requests) of every batch submitted or resumed by this gateway."""
        return self.batch.history if self.batch is not None else []

    def submit_batch(self, requests: Iterable[ChatRequest], metadata: dict | None = None) -> str | None:
        """Send the uncached requests as one batch; its id (None if all are cached): :func:`.batch_mode.submit_batch`."""
        return batch_mode.submit_batch(self, requests, metadata)

    def collect_batch(self, batch_id: str, requests: Iterable[ChatRequest], wait: bool = False,
                      poll_s: float = 30.0, fill_missing: bool = False) -> list[ChatResult] | None:
        """Cache a finished batch's replies and return results for ``requests``: :func:`.batch_mode.collect_batch`."""
        return batch_mode.collect_batch(self, batch_id, requests, wait, poll_s, fill_missing)

    # -- accounting -----------------------------------------------------------------------------
    def ledger_frame(self) -> "pd.DataFrame":
        """One row per call: tags, status, tokens (estimated flag), latency, cost, cached."""
        return self.ledger.frame()

    def close(self) -> None:
        if self.batch is not None:
            self.batch.close()
        if self.transcripts is not None:
            self.transcripts.close()
        self.cache.close()

    def __enter__(self) -> "Gateway":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Gateway(backend={self.backend_name!r}, model={self.model_name!r}, cache_mode={self.cache_mode!r})"
