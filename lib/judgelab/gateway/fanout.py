"""The fan-out of the :class:`~judgelab.gateway.core.Gateway`: ``run_batch`` and ``map``, in
threads (they also run inside Jupyter's event loop), each guarded by a canary per request shape
and a stop on repeated alike failures (:mod:`~judgelab.gateway.canary`).
"""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, Callable, Iterable

from judgelab.gateway.backends.openai_backend import is_reasoning_model
from judgelab.gateway.batch_mode import BatchMode, R, T
from judgelab.gateway.canary import RERUN, FanOutGuard, shape_key, transient
from judgelab.gateway.errors import GatewayError
from judgelab.gateway.progress import BatchProgress
from judgelab.gateway.reasoning import REASONING_ALLOWANCE, reasoning_applies
from judgelab.gateway.types import ChatRequest, ChatResult


class ItemCalls:
    """What the calls of one ``map`` item came to: cached or failed, paid calls, spend, and the
    tags all its requests share (the item's label)."""

    def __init__(self):
        self.all_cached, self.failed, self.finished = True, False, False
        self.calls, self.spent_usd = 0, 0.0
        self.tags: dict | None = None

    def add(self, result: ChatResult, spent_usd: float) -> None:
        self.all_cached &= result.cached
        self.failed |= result.status == "failed"
        self.calls += not result.cached
        self.spent_usd += spent_usd
        tags = {k: v for k, v in result.tags.items() if k != "batch_id"}
        self.tags = tags if self.tags is None else {k: v for k, v in self.tags.items() if tags.get(k) == v}

    def label(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in (self.tags or {}).items()) or "<untagged>"


def _usd(value: float) -> str:
    return f"${value:.4f}" if math.isfinite(value) else "USD unknown (no price in prices.csv)"


def unfinished_summary(chains: list[ItemCalls], n_items: int) -> str:
    """One sentence: the items a stop left half done, their paid calls and spend (the ledger's)."""
    shown = "; ".join(f"[{c.label()}] {c.calls} call(s), {_usd(c.spent_usd)}" for c in chains[:8])
    more = f"; ... and {len(chains) - 8} more" if len(chains) > 8 else ""
    calls, spent = sum(c.calls for c in chains), sum(c.spent_usd for c in chains)
    return (f"Unfinished: {len(chains)} of {n_items} items had paid calls and did not finish "
            f"({calls} call(s), {_usd(spent)} in all): {shown}{more}.")


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
        rerun = f" {RERUN}" if result.failure is not None and transient(result.failure) else ""
        return self.redact(f"{head}. {self._remedy(result.failure, result.finish_reason, sent)}.{rerun}")

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
            key_var = getattr(self.backend, "key_var", None) or "no key"
            hint = ""
            if self.backend_name == "openai-compatible" and is_reasoning_model(self.model_name or ""):
                hint = (f"; {self.model_name} is a reasoning model, sent here as designed (temperature, "
                        "max_tokens): if this URL serves OpenAI's models, choose JUDGELAB_BACKEND=openai, which "
                        "sends it reasoning_effort and max_completion_tokens")
            return (f"The server rejects the request: check the model name and key ({model_var}, "
                    f"{key_var}, the variable whose key was sent to this host) or the setting the server's "
                    f"message names{hint}")
        return (f"Every further item would fail the same way: fix the endpoint ({self.base_url}) or the model "
                f"({model_var}); JUDGELAB_STOP_AFTER sets how many alike failures stop a run")

    def map(self, fn: Callable[[T], R], items: Iterable[T], concurrency: int | None = None, desc: str = "items") -> list[R]:
        """``fn(item)`` (e.g. a conversation of ``chat`` calls) for every item, in order, under the
        canary and streak of :mod:`judgelab.gateway.canary`. An item is cached when all its calls
        were hits, failed when any failed. The in-process backend runs one item at a time, so
        that each conversation keeps its KV prefix."""
        items = list(items)
        guard = self._guard()
        chains = [ItemCalls() for _ in items]
        with BatchProgress(len(items), desc, self.progress) as bar:
            def one(pair: tuple[int, T]) -> R:
                i, item = pair
                self._tls.stats = chains[i]
                try:
                    out = fn(item)
                finally:
                    self._tls.stats = None
                chains[i].finished = True
                bar.update(chains[i].all_cached, chains[i].failed)
                return out

            try:
                if self._batch is not None:
                    return self._map_batched(self._guarded(guard, one), list(enumerate(items)))
                return self._parallel(self._guarded(guard, one), list(enumerate(items)), self._workers(concurrency))
            except GatewayError as exc:  # a stop: say which items it left half done, and what they cost
                exc.unfinished = [c for c in chains if not c.finished and c.calls]
                if exc.unfinished and exc.args:
                    exc.args = (f"{exc.args[0]} {unfinished_summary(exc.unfinished, len(items))}", *exc.args[1:])
                raise

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
