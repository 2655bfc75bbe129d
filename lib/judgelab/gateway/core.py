"""The :class:`Gateway`: cache, backend, repairs, retries, limits, ledger and transcripts in one place.

Flow of one :meth:`Gateway.chat` (:mod:`~judgelab.gateway.call`, steps 2-4 :mod:`~judgelab.gateway.fresh`):

1. the sampling as sent (:mod:`~judgelab.gateway.reasoning`) hashed into the cache key; a hit is
   returned as is, a miss in replay mode raises :class:`ReplayMissError` naming the item;
2. fit the prompt into the context (or record a failure, or cut the middle: ``head_tail``);
3. call the backend through the rate limiter, the retry policy and the circuit breaker;
4. validate the reply; on failure show the model its error and ask again, at most
   ``max_repairs`` times; then record a failure, never a default value;
5. cache successes only; write the ledger row and the transcript line, all redacted.

The fan-out (:mod:`~judgelab.gateway.fanout`) adds a canary per request shape and a stop on
repeated failures; batch mode (:mod:`~judgelab.gateway.batch_mode`) sends step 3 as Batch API jobs.
"""
from __future__ import annotations

import threading

from judgelab.gateway.batch_mode import NO_BATCH
from judgelab.gateway.cache import ResponseCache
from judgelab.gateway.canary import canary_enabled, stop_after_setting
from judgelab.gateway.errors import ConfigError
from judgelab.gateway.fanout import FanOut
from judgelab.gateway.ledger import Ledger, PriceTable, TranscriptLog
from judgelab.gateway.limiter import RateLimiter
from judgelab.gateway.reasoning import ReasoningPolicy
from judgelab.gateway.redact import configured_secrets
from judgelab.gateway.retry import CircuitBreaker, RetryPolicy
from judgelab.gateway.settings import Settings, resolve


class Gateway(FanOut):
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
        #: the study whose judge this is (judgelab.study_models), named in stop messages' settings
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
        secrets = configured_secrets(getattr(be, "api_key", None))
        log = None
        if s.transcripts:
            log = TranscriptLog(s.cache_path.parent / "transcripts", f"{be.name}_{be.model}", secrets=list(secrets))
        return cls(
            be, ResponseCache(s.cache_path), cache_mode=s.cache_mode, concurrency=s.concurrency,
            max_repairs=s.max_repairs, retry=s.retry, limiter=RateLimiter(s.rpm, s.tpm), prices=prices,
            transcripts=log, progress=s.progress, secrets=secrets,
            batch=s.batch, batch_poll_s=s.batch_poll_s, batch_fallback=s.batch_fallback,
            reasoning=s.reasoning, study=s.study, canary=s.canary, stop_after=s.stop_after,
        )
