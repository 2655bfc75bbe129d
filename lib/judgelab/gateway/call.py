"""One request answered (the whole of :mod:`judgelab.gateway.core`'s flow for one ``chat``): a hit
from the cache, in replay a recorded failure or :class:`ReplayMissError`, else a miss asked of
the model; inside a fan-out, a shape's first miss goes alone as its canary; every result gets its
ledger row. The parts it composes each do one of these:

* :class:`~judgelab.gateway.lookup.CacheLookup`: keys, hits, recorded failures, single flight;
* :class:`~judgelab.gateway.fresh.FreshCall`: the model asked (fit, call, validate, repair);
* :class:`~judgelab.gateway.batch_mode.BatchMode` (optional): misses sent through the Batch API;
* :class:`~judgelab.gateway.context.CallContext`: the fan-out's guard and ``map`` item of this thread.
"""
from __future__ import annotations

from judgelab.gateway.canary import FanOutGuard, shape_key
from judgelab.gateway.context import CallContext
from judgelab.gateway.errors import ReplayMissError
from judgelab.gateway.fresh import FreshCall
from judgelab.gateway.ledger import Ledger
from judgelab.gateway.lookup import CacheLookup
from judgelab.gateway.types import ChatRequest, ChatResult


class Call:
    """``chat``: one request from the cache or the model; never raises for a model failure."""

    def __init__(self, lookup: CacheLookup, fresh: FreshCall, ledger: Ledger, context: CallContext, batch=None):
        self.lookup = lookup
        self.fresh = fresh
        self.ledger = ledger
        self.context = context
        #: a :class:`~judgelab.gateway.batch_mode.BatchMode`, or None (misses are ordinary calls)
        self.batch = batch

    def chat(self, request: ChatRequest) -> ChatResult:
        """Raises :class:`ReplayMissError` on a replay miss, and inside a fan-out
        :class:`~.canary.FanOutStopped` (:mod:`.canary`)."""
        request = self.lookup.as_sent(request)
        key = self.lookup.key(request)
        guard: FanOutGuard | None = self.context.guard
        if guard is not None:
            guard.check()
        result = self.lookup.find(request, key)
        if result is None:
            if self.lookup.mode == "replay":
                failed = self.lookup.recorded_failure(request, key)
                if failed is None:
                    raise ReplayMissError(self.lookup.miss_message(request, key))
                return self.recorded(failed)
            if guard is None or (self.batch is not None and self.batch.holds(key)):
                # a request a recorded batch already holds passed its shape's canary before that
                # batch was submitted: asking it live again (a resumed run) would pay twice
                if guard is not None:
                    guard.hit(shape_key(request, self.fresh.model_name))
                result = self.miss(request, key)
            else:  # a shape's first miss goes alone, as an ordinary call even in batch mode
                result = guard.call(shape_key(request, self.fresh.model_name), request,
                                    lambda: self.recorded(self.canary(request, key)),
                                    lambda: self.recorded(self.miss(request, key)))
                guard.record(result, request)
                return result
        elif guard is not None:
            guard.hit(shape_key(request, self.fresh.model_name))
        return self.recorded(result)

    def miss(self, request: ChatRequest, key: str) -> ChatResult:
        """A miss outside a canary: an ordinary call, or in batch mode through a batch."""
        if self.batch is not None:
            return self.batch.batched(request, key)
        return self.live(request, key)

    def live(self, request: ChatRequest, key: str) -> ChatResult:
        """A miss answered by an ordinary call (single flight: identical requests pay once)."""
        return self.lookup.once(request, key, lambda: self.fresh.ask(request, key))

    def canary(self, request: ChatRequest, key: str) -> ChatResult:
        """A shape's canary: an ordinary call whose cut or empty reply gets no repair turn."""
        with self.context.using(canary=True):
            return self.live(request, key)

    def recorded(self, result: ChatResult) -> ChatResult:
        """``result`` after its ledger row and the ``map`` item's statistics."""
        spent = self.ledger.record(result)
        stats = self.context.stats
        if stats is not None:
            stats.add(result, spent)
        return result
