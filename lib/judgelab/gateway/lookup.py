"""The cache's side of a call (steps 1 and 5 of :mod:`judgelab.gateway.core`'s flow): the key of a
request with its sampling as sent, a hit read back as a result, in replay the failure a recorded
run ended in, and single flight (identical requests at once pay for one call).

It knows the backend only by its identity, name and model; it never calls it.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Iterable

from judgelab.gateway.cache import ResponseCache, request_key
from judgelab.gateway.errors import ReplayMissError
from judgelab.gateway.reasoning import ReasoningPolicy, sent_sampling
from judgelab.gateway.redact import redact
from judgelab.gateway.types import ChatRequest, ChatResult


class CacheLookup:
    """Keys, hits and recorded failures of one backend's requests in one cache (``mode``: the
    cache mode, :data:`~judgelab.gateway.cache.CACHE_MODES`)."""

    def __init__(self, cache: ResponseCache, backend, mode: str = "normal",
                 reasoning: ReasoningPolicy | None = None, secrets: Iterable[str] = ()):
        self.cache = cache
        self.mode = mode
        self.reasoning = reasoning or ReasoningPolicy()
        self.secrets = tuple(secrets)
        self._backend_name, self._model = backend.name, backend.model
        self.identity = backend.identity()
        self._inflight: dict[str, tuple[threading.Lock, int]] = {}
        self._inflight_guard = threading.Lock()

    def as_sent(self, request: ChatRequest) -> ChatRequest:
        """``request`` with the sampling this gateway sends (:func:`~.reasoning.sent_sampling`);
        idempotent."""
        if request._as_sent:
            return request
        sampling = sent_sampling(request.sampling, self._backend_name, self._model, self.reasoning)
        out = request if sampling == request.sampling else request.model_copy(update={"sampling": sampling})
        if out is request:
            out = request.model_copy()
        out._as_sent = True
        return out

    def key(self, request: ChatRequest) -> str:
        """The cache key of ``request`` for this backend, with its sampling as sent (:meth:`as_sent`)."""
        return request_key(self.identity, self.as_sent(request))

    def find(self, request: ChatRequest, key: str) -> ChatResult | None:
        """The cached answer to ``request`` (None: a miss; always None in ``refresh`` mode)."""
        if self.mode == "refresh":
            return None
        entry = self.cache.get(key)
        return self.from_entry(entry, request, key) if entry is not None else None

    def from_entry(self, entry: dict, request: ChatRequest, key: str) -> ChatResult | None:
        """A cache entry as a result (None when it no longer fits the request's schema: a miss)."""
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
            "truncation_note": entry["truncation_note"], "key": key,
            "tags": redact(dict(request.tags), self.secrets), "sampling": request.sampling,
        })

    def once(self, request: ChatRequest, key: str, fresh: Callable[[], ChatResult]) -> ChatResult:
        """Single flight: the cached answer, else ``fresh()``, one thread per key at a time (a
        second thread asking the same finds the first one's answer in the cache)."""
        try:
            with self._key_lock(key):
                return self.find(request, key) or fresh()
        finally:
            self._release_key_lock(key)

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

    # -- replay ---------------------------------------------------------------------------------
    def recorded_failure(self, request: ChatRequest, key: str) -> ChatResult | None:
        """In replay, the failure the recorded run's fresh call ended in (None: there is none)."""
        stored = self.cache.get_failure(key)
        if stored is None:
            return None
        return ChatResult.model_validate({**stored, "cached": True, "key": key,
                                          "tags": redact(dict(request.tags), self.secrets),
                                          "sampling": request.sampling})

    def miss_message(self, request: ChatRequest, key: str) -> str:
        return (f"replay mode: no cached response for [{request.item_label()}] "
                f"(template {request.template_version}, replicate {request.replicate}, "
                f"backend {self._backend_name}, model {self._model}, key {key[:16]}) in {self.cache.path}; "
                "import the cache you were given or run in normal mode")

    def check_replay(self, requests: list[ChatRequest]) -> None:
        """Raise one :class:`ReplayMissError` listing the requests neither answered nor failed in the cache."""
        misses = [r for r in requests if not self.cache.contains(self.key(r))
                  and self.cache.get_failure(self.key(r)) is None]
        if misses:
            first = "; ".join(self.miss_message(r, self.key(r)) for r in misses[:3])
            raise ReplayMissError(f"{len(misses)} of {len(requests)} requests are not in the cache. {first}")
