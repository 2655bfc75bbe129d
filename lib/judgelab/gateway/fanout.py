"""The fan-out: ``run_batch`` and ``map``, in threads (they also run inside Jupyter's event loop),
each guarded by a canary per request shape and a stop on repeated alike failures
(:class:`~judgelab.gateway.canary.Canary`); in batch mode their misses go through
:class:`~judgelab.gateway.batch_mode.BatchMode`. Every request itself is a :class:`~judgelab.gateway.call.Call`.
"""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, Callable, Iterable, TypeVar

from judgelab.gateway.call import Call
from judgelab.gateway.canary import Canary, FanOutGuard
from judgelab.gateway.errors import GatewayError
from judgelab.gateway.progress import BatchProgress
from judgelab.gateway.types import ChatRequest, ChatResult

T = TypeVar("T")
R = TypeVar("R")


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


class FanOut:
    """``run_batch`` and ``map`` over one :class:`~judgelab.gateway.call.Call`. ``workers``: the
    threads a fan-out uses at most (the gateway's concurrency within what the backend allows);
    ``progress``: show a bar."""

    def __init__(self, call: Call, canary: Canary, *, concurrency: int, max_concurrency: int,
                 progress: bool = True):
        self.call = call
        self.canary = canary
        self.concurrency = concurrency
        self.max_concurrency = max_concurrency
        self.progress = progress

    def _workers(self, concurrency: int | None) -> int:
        return max(1, min(concurrency or self.concurrency, self.max_concurrency))

    def _guard(self) -> FanOutGuard | None:
        """A fresh guard for one fan-out (None when switched off or in replay, which never calls)."""
        if self.call.lookup.mode == "replay":
            return None
        guard = self.canary.guard()
        if guard is not None and self.call.batch is not None:
            self.call.batch.new_fanout()
        return guard

    def _guarded(self, guard: FanOutGuard | None, fn: Callable[[T], R]) -> Callable[[T], R]:
        """``fn`` run with ``guard`` watching the calls of this thread."""
        if guard is None:
            return fn

        def run(item: T) -> R:
            with self.call.context.using(guard=guard):
                return fn(item)

        return run

    def run_batch(self, requests: Iterable[ChatRequest], concurrency: int | None = None, desc: str = "chat") -> list[ChatResult]:
        """Answer many requests concurrently, in order. In replay every request is checked first
        (one ReplayMissError lists the misses); each shape's canary goes first, before the batch in
        batch mode (:mod:`judgelab.gateway.canary`)."""
        call, lookup, batch = self.call, self.call.lookup, self.call.batch
        requests = [lookup.as_sent(r) for r in requests]
        if lookup.mode == "replay":
            lookup.check_replay(requests)
        guard = self._guard()
        with BatchProgress(len(requests), desc, self.progress) as bar:
            first: dict[str, ChatResult] = {}
            if batch is not None and guard is not None:  # the canaries before the batch
                canaries = self.canary.first_requests(
                    requests, call.fresh.model_name,
                    lambda r: lookup.find(r, lookup.key(r)) is not None or batch.holds(lookup.key(r)))
                done = self._parallel(self._guarded(guard, call.chat), canaries, self._workers(concurrency))
                first = {lookup.key(r): res for r, res in zip(canaries, done)}
            answered = batch.batch_all([r for r in requests if lookup.key(r) not in first]) if batch is not None else {}

            def one(req: ChatRequest) -> ChatResult:
                key = lookup.key(req)
                res = first.pop(key, None)  # a canary's result (its ledger row is written), once
                if res is None and key in answered:  # batch mode: the misses were answered together, in one batch
                    res = batch.answer(answered[key], req, key)
                    call.ledger.record(res)
                    if guard is not None:
                        guard.record(res, req)
                elif res is None:
                    res = call.chat(req)
                bar.update(res.cached, res.status == "failed")
                return res

            try:
                return self._parallel(self._guarded(guard, one), requests, self._workers(concurrency))
            except BaseException:
                # a stop cancels the requests not yet handed out, but their batch lines were
                # already answered and billed: every one of them goes into the ledger all the same
                if batch is not None:
                    batch.record_unclaimed(answered)
                raise

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
                with self.call.context.using(stats=chains[i]):
                    out = fn(item)
                chains[i].finished = True
                bar.update(chains[i].all_cached, chains[i].failed)
                return out

            try:
                if self.call.batch is not None:
                    return self.call.batch.map(self._guarded(guard, one), list(enumerate(items)))
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
