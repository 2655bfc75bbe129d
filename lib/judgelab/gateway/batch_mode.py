"""Batch mode of the :class:`~judgelab.gateway.core.Gateway` (``batch=True``, ``JUDGELAB_BATCH=1``):
misses go through the OpenAI Batch API, batch by batch (:mod:`~judgelab.gateway.batch_collector`),
or by hand with ``submit_batch``/``collect_batch`` (:mod:`~judgelab.gateway.batch_api`).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, Callable, Iterable, TypeVar

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
        """The Batch API collector, or None: not asked for, or replay (which never submits).

        On the in-process llamacpp backend batch mode is an error, not a silent no-op: someone who
        asked for the Batch API's price has a backend with no Batch API, and should know it."""
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

    # -- Batch API ------------------------------------------------------------------------------
    def submit_batch(self, requests: Iterable[ChatRequest], metadata: dict | None = None) -> str | None:
        """Send the uncached requests through the OpenAI Batch API; returns the batch id (None if all cached)."""
        from judgelab.gateway.batch_api import submit_batch

        return submit_batch(self, list(requests), metadata)

    def collect_batch(self, batch_id: str, requests: Iterable[ChatRequest], wait: bool = False, poll_s: float = 30.0,
                      fill_missing: bool = False):
        """Store a finished batch's replies in the cache and return results for ``requests``
        (None for each request when the batch is not finished and ``wait`` is False)."""
        from judgelab.gateway.batch_api import collect_batch

        return collect_batch(self, batch_id, list(requests), wait=wait, poll_s=poll_s, fill_missing=fill_missing)
