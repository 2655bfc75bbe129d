"""Batch mode of the :class:`~judgelab.gateway.core.Gateway` (``batch=True``, ``JUDGELAB_BATCH=1``):
misses go through the OpenAI Batch API, batch by batch (:mod:`~judgelab.gateway.batch_collector`),
or by hand with ``submit_batch``/``collect_batch`` (the pieces: :mod:`~judgelab.gateway.batch_api`).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, Callable, Iterable, TypeVar

from judgelab.gateway import batch_api
from judgelab.gateway.call import Caller
from judgelab.gateway.errors import ConfigError
from judgelab.gateway.types import ChatRequest, ChatResult

T = TypeVar("T")
R = TypeVar("R")

NO_BATCH = ("batch mode (JUDGELAB_BATCH=1, make ... BATCH=1) needs the openai or openai-compatible backend "
            "(an endpoint with the Batch API); backend {backend} has none: unset JUDGELAB_BATCH")


class BatchMode(Caller):
    """The batch mode of :class:`~judgelab.gateway.core.Gateway` (None in ``self._batch``: off)."""

    def _batch_collector(self, batch: bool, poll_s: float, fallback: str):
        """The Batch API collector, or None (not asked for, or replay). On a backend without a Batch
        API it is an error, not a silent no-op: who asked for the batch price should know."""
        if not batch or self.cache_mode == "replay":
            return None
        from judgelab.gateway.backends.openai_backend import OpenAIBackend
        from judgelab.gateway.batch_collector import BatchCollector

        if not isinstance(self.backend, OpenAIBackend):
            raise ConfigError(NO_BATCH.format(backend=self.backend_name))
        return BatchCollector(self, poll_s=poll_s, fallback=fallback)

    @property
    def batch_mode(self) -> bool:
        """True when cache misses go through the OpenAI Batch API."""
        return self._batch is not None

    @property
    def batch_history(self) -> list[tuple[str, int]]:
        """(batch id, number of requests) of every batch submitted or resumed by this gateway."""
        return list(self._batch.history) if self._batch is not None else []

    def _miss(self, request: ChatRequest, key: str) -> ChatResult:
        if self._batch is not None:
            return self._batched(request, key, getattr(self._tls, "batch_group", None))
        return super()._miss(request, key)

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

    def _in_pending_batch(self, key: str) -> bool:
        """Batch mode: ``key`` is held by a recorded batch not collected yet (read once per fan-out)."""
        if self._batch is None:
            return False
        if self._pending_batch_keys is None:
            self._pending_batch_keys = self._batch.jobs.pending_keys()
        return key in self._pending_batch_keys

    def _batch_all(self, requests: list[ChatRequest]) -> dict:
        """Batch mode: send every cache miss of ``requests`` as one batch; key -> Pending."""
        misses = {}
        for req in requests:
            key = self.key(req)
            if key not in misses and self._lookup(req, key) is None:
                misses[key] = req
        return self._batch.group(1).ask_many(misses) if misses else {}

    def _record_unclaimed(self, answered: dict) -> None:
        """The ledger rows of batch answers no worker took (:class:`~.batch_collector.Pending`):
        a valid reply (cached, and billed) or a billed line that gave none."""
        for p in answered.values():
            if p.error is not None or not p.claim():
                continue  # taken (and recorded) by a worker, or no batch ran at all
            billed = p.result if p.result is not None else p.take_billed()
            if billed is not None:
                self.ledger.record(billed)

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

    # -- the Batch API by hand: submit now, collect later (possibly from another process) --------
    def submit_batch(self, requests: Iterable[ChatRequest], metadata: dict | None = None) -> str | None:
        """Send the uncached requests as one batch (one JSONL line each, ``custom_id`` the cache
        key, the body as a live call sends it); returns the batch id (None if all are cached)."""
        if self.cache_mode == "replay":
            raise ConfigError("cannot submit a batch in replay mode")
        be = batch_api.batch_backend(self)
        lines = batch_api.batch_lines(self, list(requests))
        if not lines:
            return None
        batch_id = batch_api.create_batch(be, lines, metadata)
        self.cache.add_batch(batch_id, [line["custom_id"] for line in lines])
        return batch_id

    def collect_batch(self, batch_id: str, requests: Iterable[ChatRequest], wait: bool = False,
                      poll_s: float = 30.0, fill_missing: bool = False) -> list[ChatResult] | None:
        """Cache a finished batch's valid replies and return results for ``requests`` (None when
        the batch is still running and not ``wait``). An invalid or errored line is a recorded
        failure (a paid one with its tokens), or with ``fill_missing`` asked again live."""
        requests = list(requests)
        be = batch_api.batch_backend(self)
        batch = be.client.batches.retrieve(batch_id)
        if batch.status not in batch_api.TERMINAL:
            if not wait:
                return None
            batch = batch_api.wait_for(be, batch_id, poll_s)
        by_key = {self.key(r): r for r in requests}
        fresh: dict[str, ChatResult] = {}
        billed: dict[str, ChatResult] = {}
        # an expired or cancelled batch keeps (and bills) the replies it finished: store those too
        ended = batch_api.describe_end(batch)
        errors = {k: ended for k in by_key} if batch.status != "completed" else {}
        for key, rec in batch_api.output_records(be, batch).items():
            req = by_key.get(key)
            if req is None:
                continue
            res, err = batch_api.store_line(self, key, req, rec, batch_id)
            if res is not None:
                fresh[key] = res
            else:
                errors[key] = err
                paid = batch_api.billed_failure(self, key, req, rec, batch_id, err)
                if paid is not None:
                    billed[key] = paid
        self.cache.mark_batch_collected(batch_id)
        out = []
        for req in requests:
            key = self.key(req)
            if key in fresh:
                res = fresh.pop(key)
                self.ledger.record(res)
            elif self.cache.contains(key) or fill_missing:
                if key in billed:  # the paid invalid reply: its own row, then the live call's
                    self.ledger.record(billed.pop(key))
                res = self.chat(req)
            elif key in billed:
                res = billed.pop(key)
                self.ledger.record(res)
            else:
                why = errors.get(key, f"not in batch {batch_id}")
                res = ChatResult(status="failed", error=self.redact(f"{req.item_label()}: {why}"),
                                 backend=self.backend_name, model=self.model_name, key=key,
                                 tags=dict(req.tags))
                self.ledger.record(res)
            out.append(res)
        return out
