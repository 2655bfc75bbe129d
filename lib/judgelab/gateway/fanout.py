"""The fan-out of the :class:`~judgelab.gateway.core.Gateway`: ``run_batch`` and ``map``, in
threads (they also run inside Jupyter's event loop), each guarded by a canary per request shape
and a stop on repeated alike failures (:mod:`~judgelab.gateway.canary`).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, Callable, Iterable

from judgelab.gateway.batch_mode import BatchMode, R, T
from judgelab.gateway.canary import FanOutGuard, shape_key
from judgelab.gateway.progress import BatchProgress
from judgelab.gateway.reasoning import REASONING_ALLOWANCE, reasoning_applies
from judgelab.gateway.types import ChatRequest, ChatResult


class FanOut(BatchMode):
    """``run_batch`` and ``map`` of :class:`~judgelab.gateway.core.Gateway`."""

    def _workers(self, concurrency: int | None) -> int:
        return max(1, min(concurrency or self.concurrency, self.backend.max_concurrency))

    def run_batch(self, requests: Iterable[ChatRequest], concurrency: int | None = None, desc: str = "chat") -> list[ChatResult]:
        """Answer many requests concurrently, in order. In replay every request is checked first
        (one ReplayMissError lists the misses); each shape's canary goes first, before the batch in
        batch mode (:mod:`judgelab.gateway.canary`)."""
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

    def map(self, fn: Callable[[T], R], items: Iterable[T], concurrency: int | None = None, desc: str = "items") -> list[R]:
        """``fn(item)`` (e.g. a conversation of ``chat`` calls) for every item, in order, under the
        canary and streak of :mod:`judgelab.gateway.canary`. An item is cached when all its calls
        were hits, failed when any failed. The in-process backend runs one item at a time, so
        that each conversation keeps its KV prefix."""
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
