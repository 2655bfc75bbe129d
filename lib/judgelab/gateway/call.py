"""The core call of the :class:`~judgelab.gateway.core.Gateway` (step 1 and 5 of its flow): the
cache key, a hit or the single-flight miss, the ledger row. Batch mode overrides :meth:`Caller._miss`.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from judgelab.provenance import is_embedded_small_model
from judgelab.gateway.cache import request_key
from judgelab.gateway.canary import FanOutGuard, shape_key
from judgelab.gateway.errors import ReplayMissError
from judgelab.gateway.fresh import FreshCall
from judgelab.gateway.reasoning import reasoning_applies, sent_sampling
from judgelab.gateway.redact import redact
from judgelab.gateway.types import ChatRequest, ChatResult

if TYPE_CHECKING:
    import pandas as pd


class Caller(FreshCall):
    """Identity, cache and the one call of :class:`~judgelab.gateway.core.Gateway`, which sets
    the attributes in its ``__init__``."""

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

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` under the backend's own tokenizer (what the model will read)."""
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
        """``request`` with the sampling this gateway sends (:func:`~.reasoning.sent_sampling`);
        idempotent."""
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
        """Answer one request from the cache or the model; never raises for a model failure.
        Raises :class:`ReplayMissError` on a replay miss, and inside :meth:`run_batch`/:meth:`map`
        :class:`~.canary.FanOutStopped` (:mod:`.canary`)."""
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
        """A miss outside a canary: an ordinary call (batch mode sends it through a batch)."""
        return self._live(request, key)

    def _recorded(self, result: ChatResult) -> ChatResult:
        """``result`` after its ledger row and the fan-out's item statistics."""
        spent = self.ledger.record(result)
        stats = getattr(self._tls, "stats", None)
        if stats is not None:
            stats.add(result, spent)
        return result

    def _canary(self, request: ChatRequest, key: str) -> ChatResult:
        """A shape's canary: an ordinary call whose cut or empty reply gets no repair turn."""
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

    def _in_pending_batch(self, key: str) -> bool:
        """Whether a recorded batch holds ``key`` (only batch mode has batches)."""
        return False

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
        """In replay, the failure the recorded run's fresh call ended in (None: there is none)."""
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

    def _check_replay(self, requests: list[ChatRequest]) -> None:
        misses = [r for r in requests if not self.cache.contains(self.key(r))
                  and self.cache.get_failure(self.key(r)) is None]
        if misses:
            first = "; ".join(self._miss_message(r, self.key(r)) for r in misses[:3])
            raise ReplayMissError(f"{len(misses)} of {len(requests)} requests are not in the cache. {first}")

    # -- accounting -----------------------------------------------------------------------------
    def ledger_frame(self) -> "pd.DataFrame":
        """One row per call: tags, status, tokens (estimated flag), latency, cost, cached."""
        return self.ledger.frame()

    def close(self) -> None:
        if self._batch is not None:
            self._batch.close()
        if self.transcripts is not None:
            self.transcripts.close()
        self.cache.close()

    def __enter__(self) -> "Caller":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Gateway(backend={self.backend_name!r}, model={self.model_name!r}, cache_mode={self.cache_mode!r})"
