"""Batch mode (``batch=True``, ``JUDGELAB_BATCH=1``): misses go through the OpenAI Batch API,
batch by batch (:class:`BatchMode` over a :class:`~judgelab.gateway.batch_collector.BatchCollector`),
or by hand with :func:`submit_batch`/:func:`collect_batch` (the pieces: :mod:`~judgelab.gateway.batch_api`),
whose ``gw`` is the :class:`~judgelab.gateway.core.Gateway` that asks.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import TYPE_CHECKING, Any, Callable, Iterable, TypeVar

from judgelab.gateway import batch_api
from judgelab.gateway.context import CallContext
from judgelab.gateway.errors import ConfigError
from judgelab.gateway.fresh import FreshCall
from judgelab.gateway.ledger import Ledger
from judgelab.gateway.lookup import CacheLookup
from judgelab.gateway.types import ChatRequest, ChatResult

if TYPE_CHECKING:
    from judgelab.gateway.batch_collector import BatchCollector

T = TypeVar("T")
R = TypeVar("R")

NO_BATCH = ("batch mode (JUDGELAB_BATCH=1, make ... BATCH=1) needs the openai or openai-compatible backend "
            "(an endpoint with the Batch API); backend {backend} has none: unset JUDGELAB_BATCH")


class BatchMode:
    """Cache misses answered through a :class:`~judgelab.gateway.batch_collector.BatchCollector`:
    the workers of one fan-out wait together for each batch; what a batch leaves unanswered is an
    ordinary call (fallback ``live``) or a failure, as the collector's fallback says."""

    def __init__(self, collector: "BatchCollector", lookup: CacheLookup, fresh: FreshCall, ledger: Ledger,
                 context: CallContext):
        self.collector = collector
        self.lookup = lookup
        self.fresh = fresh
        self.ledger = ledger
        self.context = context
        self._pending_keys: set | None = None  # read once per fan-out (holds)

    @property
    def history(self) -> list[tuple[str, int]]:
        """(batch id, number of requests) of every batch submitted or resumed."""
        return list(self.collector.history)

    def new_fanout(self) -> None:
        """A fan-out starts: the recorded batches' keys are read again at its first :meth:`holds`."""
        self._pending_keys = None

    def holds(self, key: str) -> bool:
        """``key`` is held by a recorded batch not collected yet (read once per fan-out)."""
        if self._pending_keys is None:
            self._pending_keys = self.collector.jobs.pending_keys()
        return key in self._pending_keys

    def batched(self, request: ChatRequest, key: str) -> ChatResult:
        """A miss answered through the Batch API: wait with the other workers of this thread's
        group (a group of one outside ``map``/``run_batch``), then take the answer or fall back."""
        group = self.context.batch_group
        own = group is None
        if own:
            group = self.collector.group(1)
        try:
            pending = group.ask(request, key)
        finally:
            if own:
                group.leave()
        return self.answer(pending, request, key)

    def answer(self, p, request: ChatRequest, key: str) -> ChatResult:
        """What one waiter of a batch-answered request gets (see :class:`~.batch_collector.Pending`)."""
        if p.error is not None:
            raise p.error
        first = p.claim()
        if p.result is not None:
            if first or not p.result.ok:
                return p.result
            entry = self.lookup.cache.get(key)  # a duplicate of an answered request: the cache has it
            if entry is not None and (res := self.lookup.from_entry(entry, request, key)) is not None:
                return res
        # unanswered: an ordinary call (fallback "live"), or a recorded failure (batch_collector)
        return self.collector.fallback_answer(
            p, lambda: self.lookup.once(request, key, lambda: self.fresh.ask(request, key)))

    def batch_all(self, requests: list[ChatRequest]) -> dict:
        """Send every cache miss of ``requests`` as one batch; key -> Pending."""
        misses = {}
        for req in requests:
            key = self.lookup.key(req)
            if key not in misses and self.lookup.find(req, key) is None:
                misses[key] = req
        return self.collector.group(1).ask_many(misses) if misses else {}

    def record_unclaimed(self, answered: dict) -> None:
        """The ledger rows of batch answers no worker took (:class:`~.batch_collector.Pending`):
        a valid reply (cached, and billed) or a billed line that gave none."""
        for p in answered.values():
            if p.error is not None or not p.claim():
                continue  # taken (and recorded) by a worker, or no batch ran at all
            billed = p.result if p.result is not None else p.take_billed()
            if billed is not None:
                self.ledger.record(billed)

    def map(self, fn: Callable[[T], R], items: list[T]) -> list[R]:
        """Every item in its own thread (at most ``MAX_WORKERS`` at a time), so that each round of
        every item waits for the same batch; ``concurrency`` does not apply."""
        from judgelab.gateway.batch_collector import MAX_WORKERS

        out: list[Any] = []
        self.collector.stop.clear()
        for start in range(0, len(items), MAX_WORKERS):
            part = items[start:start + MAX_WORKERS]
            group = self.collector.group(len(part))

            def member(item: T, group=group) -> R:
                try:
                    with self.context.using(batch_group=group):
                        return fn(item)
                finally:
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
            self.collector.stop.set()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        return res

    def close(self) -> None:
        self.collector.close()


# -- the Batch API by hand: submit now, collect later (possibly from another process) ------------
def submit_batch(gw, requests: Iterable[ChatRequest], metadata: dict | None = None) -> str | None:
    """Send the uncached requests as one batch (one JSONL line each, ``custom_id`` the cache
    key, the body as a live call sends it); returns the batch id (None if all are cached)."""
    if gw.cache_mode == "replay":
        raise ConfigError("cannot submit a batch in replay mode")
    be = batch_api.batch_backend(gw.fresh)
    lines = batch_api.batch_lines(gw.lookup, gw.fresh, list(requests))
    if not lines:
        return None
    batch_id = batch_api.create_batch(be, lines, metadata)
    gw.cache.add_batch(batch_id, [line["custom_id"] for line in lines])
    return batch_id

def collect_batch(gw, batch_id: str, requests: Iterable[ChatRequest], wait: bool = False,
                  poll_s: float = 30.0, fill_missing: bool = False) -> list[ChatResult] | None:
    """Cache a finished batch's valid replies and return results for ``requests`` (None when
    the batch is still running and not ``wait``). An invalid or errored line is a recorded
    failure (a paid one with its tokens), or with ``fill_missing`` asked again live."""
    requests = list(requests)
    be = batch_api.batch_backend(gw.fresh)
    batch = be.client.batches.retrieve(batch_id)
    if batch.status not in batch_api.TERMINAL:
        if not wait:
            return None
        batch = batch_api.wait_for(be, batch_id, poll_s)
    by_key = {gw.key(r): r for r in requests}
    fresh: dict[str, ChatResult] = {}
    billed: dict[str, ChatResult] = {}
    # an expired or cancelled batch keeps (and bills) the replies it finished: store those too
    ended = batch_api.describe_end(batch)
    errors = {k: ended for k in by_key} if batch.status != "completed" else {}
    for key, rec in batch_api.output_records(be, batch).items():
        req = by_key.get(key)
        if req is None:
            continue
        res, err = batch_api.store_line(gw.lookup, gw.fresh, key, req, rec, batch_id)
        if res is not None:
            fresh[key] = res
        else:
            errors[key] = err
            paid = batch_api.billed_failure(gw.fresh, key, req, rec, batch_id, err)
            if paid is not None:
                billed[key] = paid
    gw.cache.mark_batch_collected(batch_id)
    out = []
    for req in requests:
        key = gw.key(req)
        if key in fresh:
            res = fresh.pop(key)
            gw.ledger.record(res)
        elif gw.cache.contains(key) or fill_missing:
            if key in billed:  # the paid invalid reply: its own row, then the live call's
                gw.ledger.record(billed.pop(key))
            res = gw.chat(req)
        elif key in billed:
            res = billed.pop(key)
            gw.ledger.record(res)
        else:
            why = errors.get(key, f"not in batch {batch_id}")
            res = ChatResult(status="failed", error=gw.redact(f"{req.item_label()}: {why}"),
                             backend=gw.backend_name, model=gw.model_name, key=key,
                             tags=dict(req.tags))
            gw.ledger.record(res)
        out.append(res)
    return out
