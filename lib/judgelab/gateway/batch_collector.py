"""Batch mode (``JUDGELAB_BATCH=1``): every cache miss goes through the OpenAI Batch API, round
by round, into the cache; no caller changes.

A miss in :meth:`Gateway.chat` is handed to its :class:`WorkerGroup` and the thread waits; when
every live worker of the group waits (or has finished), the pending requests go out as one batch
(split at the API's limits), which :class:`BatchCollector` polls, caches and answers. A SAGE layer
is thus 7 batches (evaluator rounds 1-5, blind, review), the narrative judges' ``run_batch`` one.
Each batch is recorded (:class:`~judgelab.gateway.cache.BatchJobs`) before it is polled, so a run
killed while waiting meets the same requests again and resumes that batch.

A line that failed for a passing reason (HTTP 429, 408 or 5xx: :func:`transient_line`) is sent
again with the next batch round (with the other chains' next requests), at most
``RetryPolicy.max_attempts`` times in all, so that one server error does not end a chain of
rounds (a SAGE evaluation is 7). A line that failed in every round stops the run
(:class:`~judgelab.gateway.errors.BatchStoppedError`, fallback ``stop``) before the chains' later
rounds are paid, naming its cause; no worker of the fan-out asks anything after it.

Any other request the batch did not answer validly (``JUDGELAB_BATCH_FALLBACK``; asking it live
costs full price, so that is never done unasked): ``stop`` (default) stops the run with
:class:`~judgelab.gateway.errors.BatchStoppedError` when a batch failed, expired or was cancelled,
and records a bad line of a completed batch as a failure; ``live`` asks it again as an ordinary
call (a line failed on the server side too); ``fail`` records a failure naming the batch. Every
billed line reaches the ledger; a prompt too long for the context is a recorded failure without any
call, as in live mode.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from judgelab.gateway import batch_api
from judgelab.gateway.cache import BatchJobs, fingerprint
from judgelab.gateway.errors import BatchStoppedError, ConfigError, ContextOverflowError
from judgelab.gateway.settings import BATCH_FALLBACKS
from judgelab.gateway.types import ChatRequest, ChatResult, Failure, Usage

log = logging.getLogger("judgelab.gateway.batch")

#: threads a batch-mode ``map`` starts at most: more items still work, in smaller batches
MAX_WORKERS = 1024


@dataclass(eq=False)
class Pending:
    """One distinct request waiting for a batch (several workers may wait for the same key)."""

    key: str
    request: ChatRequest
    done: bool = False
    claimed: bool = False
    result: ChatResult | None = None  # the batch's answer (or a failure recorded without a call)
    reason: str | None = None  # why the batch gave no valid answer -> fallback
    failure: Failure | None = None  # the same, in groupable fields
    billed: ChatResult | None = None  # a paid line that gave no valid reply (its tokens, for the ledger)
    transient: bool = False  # its last line failed for a passing reason (transient_line)
    error: BaseException | None = None  # the batch could not be run at all -> raised in every waiter
    sent: int = 0  # batch rounds this request was sent in
    owner: Any = None  # the asking map item's calls (fanout.ItemCalls), told of a stop's ledger rows
    again: bool = False  # its line failed for a passing reason: it goes with the next batch round
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def claim(self) -> bool:
        """True for the first waiter (it gets ``result`` as made); the others read the cache."""
        with self._lock:
            first, self.claimed = not self.claimed, True
        return first

    def take_billed(self) -> ChatResult | None:
        """The billed failure, for the first waiter that asks (so that the ledger counts it once)."""
        with self._lock:
            billed, self.billed = self.billed, None
        return billed


def transient_line(rec: dict) -> bool:
    """True for an output line that failed for a passing reason: HTTP 408, 429 or 5xx."""
    status = (rec.get("response") or {}).get("status_code")
    return status is not None and (int(status) in (408, 429) or int(status) >= 500)


class WorkerGroup:
    """The workers of one ``map``/``run_batch`` call; they share batches.

    ``active`` counts workers that have not finished; ``blocked`` those waiting for a batch. The
    worker that makes ``blocked == active`` (by asking, or by finishing) runs the batch for all
    pending requests. While it runs nobody can ask (every live worker waits), so afterwards no
    worker is blocked any more.
    """

    def __init__(self, collector: "BatchCollector", active: int):
        self.collector = collector
        self.cond = threading.Condition()
        self.active = active
        self.blocked = 0
        self.pending: dict[str, Pending] = {}
        self.flushing = False
        #: the requests each waiting worker waits for (one dict per ask_many)
        self.waiters: list[dict[str, Pending]] = []

    def ask(self, request: ChatRequest, key: str) -> Pending:
        """Wait until a batch has answered ``request`` (this thread may be the one that runs it)."""
        return self.ask_many({key: request})[key]

    def ask_many(self, requests: dict[str, ChatRequest]) -> dict[str, Pending]:
        """Wait until batches have answered all ``requests`` (keyed by cache key); one waiter."""
        with self.cond:
            mine = {}
            owner = self.collector.fresh.context.stats
            for key, request in requests.items():
                if key not in self.pending:
                    self.pending[key] = Pending(key, request, owner=owner)
                mine[key] = self.pending[key]
            self.waiters.append(mine)
            self.blocked += 1
            take = self._take_if_ready()
        if take:
            self._flush(take)
        with self.cond:
            self.cond.wait_for(lambda: all(p.done for p in mine.values()))
        return mine

    def leave(self) -> None:
        """A worker finished; the others may now all be waiting."""
        with self.cond:
            self.active -= 1
            take = self._take_if_ready()
        if take:
            self._flush(take)

    def _take_if_ready(self) -> list[Pending] | None:
        if self.flushing or not self.pending or self.blocked < self.active:
            return None
        take, self.pending = list(self.pending.values()), {}
        self.flushing = True
        return take

    def _flush(self, take: list[Pending] | None) -> None:
        while take:
            try:
                self.collector.run(take)
            except BaseException as exc:  # noqa: BLE001 - every waiter re-raises it
                for p in take:
                    p.error = exc
            finally:
                with self.cond:
                    for p in take:
                        if p.again and p.error is None:  # sent again with the next round's requests
                            p.again, p.transient, p.reason, p.failure = False, False, None, None
                            self.pending[p.key] = p
                        else:
                            p.done = True
                    # a waiter whose requests are all answered is counted as running before it wakes
                    self.waiters = [m for m in self.waiters if not all(p.done for p in m.values())]
                    self.blocked = len(self.waiters)
                    self.flushing = False
                    self.cond.notify_all()
                    # every live worker waits for a request sent again: its round goes out now
                    take = self._take_if_ready()


class BatchCollector:
    """Runs a set of pending requests as Batch API jobs and fills in their results, from the
    gateway's parts it uses and nothing else: ``lookup`` (keys, the cache), ``fresh`` (the backend
    and its client, redaction, the transcript log, the per-thread call context; it asks a request
    that cannot be sent so that its failure is recorded), ``ledger`` (the paid lines of a stopped
    run), ``concurrency`` (the ordinary calls a fallback makes at once) and ``max_attempts`` (the
    rounds a line failing on the server side is sent in)."""

    def __init__(self, lookup, fresh, ledger, *, concurrency: int, max_attempts: int, poll_s: float = 30.0,
                 fallback: str = "stop", max_requests: int = batch_api.MAX_REQUESTS,
                 max_bytes: int = batch_api.MAX_BYTES):
        if fallback not in BATCH_FALLBACKS:
            raise ConfigError("batch fallback (JUDGELAB_BATCH_FALLBACK) must be one of "
                              f"{', '.join(BATCH_FALLBACKS)}, got {fallback!r}")
        self.lookup, self.fresh, self.ledger = lookup, fresh, ledger
        self.max_attempts = int(max_attempts)
        self.backend = batch_api.batch_backend(fresh)
        self.poll_s = poll_s
        self.fallback = fallback
        self.max_requests = max_requests
        self.max_bytes = max_bytes
        self.jobs = BatchJobs(lookup.cache.path)
        #: (batch id, number of requests) of every batch this collector submitted or resumed
        self.history: list[tuple[str, int]] = []
        #: bounds the ordinary calls made as fallback (a batch-mode map has one thread per item)
        self.live_gate = threading.BoundedSemaphore(max(1, int(concurrency)))
        #: set when the caller gave up (an interrupted notebook): a wait in a worker thread ends
        self.stop = threading.Event()

    def group(self, active: int) -> WorkerGroup:
        return WorkerGroup(self, active)

    # -- one flush ------------------------------------------------------------------------------
    def run(self, pending: list[Pending]) -> None:
        """Submit (or resume) the batches for ``pending``, wait, and fill every entry's outcome."""
        lines, notes = [], {}
        for p in pending:
            req = p.request
            messages = [m.model_dump() for m in req.messages]
            try:
                messages, notes[p.key] = self.backend.fit_messages(messages, req.sampling.max_tokens, req.truncation,
                                                                   req.item_label())
            except (ContextOverflowError, ValueError):
                p.result = self.fresh.ask(req, p.key)  # records the overflow failure; makes no call
                continue
            lines.append(batch_api.batch_line(self.backend, p.key, messages, req))
            p.sent += 1
        if not lines:
            return
        by_key = {p.key: p for p in pending}
        lines.sort(key=lambda line: line["custom_id"])  # the same requests -> the same chunks on a rerun
        chunks = batch_api.chunk_lines(lines, self.max_requests, self.max_bytes)
        started = [self._start(chunk) for chunk in chunks]  # all chunks run on the server at once
        # every chunk is collected before a stop, so that each billed line reaches cache and ledger
        ended = [self._collect(fp, batch_id, [by_key[line["custom_id"]] for line in chunk], notes)
                 for fp, batch_id, chunk in started]
        ended = [(batch, left) for batch, left in ended if left]
        if ended and self.fallback == "stop":
            self._record_paid(pending)
            raise self._stopped(ended, sum(p.result is not None and p.result.ok for p in pending))
        spent = [p for p in pending if p.reason is not None and p.transient and not p.again]
        if spent and self.fallback == "stop":
            self._record_paid(pending)
            raise self._unfinished(spent)
        for batch, left in ended:
            action = ("asked again as ordinary calls at full price (JUDGELAB_BATCH_FALLBACK=live)"
                      if self.fallback == "live" else "recorded as failures (JUDGELAB_BATCH_FALLBACK=fail)")
            log.warning("batch mode: %s; its %d unanswered requests are %s", batch_api.describe_end(batch),
                        len(left), action)

    def _stopped(self, ended: list, answered: int) -> BatchStoppedError:
        """The error that stops the run: why each batch ended and the settings that continue."""
        n = sum(len(left) for _, left in ended)
        why = " | ".join(batch_api.describe_end(batch).rstrip(".") for batch, _ in ended)
        kept = f" The {answered} replies the batches did finish are cached." if answered else ""
        batch = ended[0][0]
        message = (
            f"{why}. {n} request(s) have no reply and were not asked again as ordinary calls at full price.{kept} "
            "To continue: run the same command again with JUDGELAB_BATCH_FALLBACK=live to ask them as ordinary "
            "calls (full price; e.g. `JUDGELAB_BATCH_FALLBACK=live make ... BATCH=1`), or again as it is to send "
            "them in a new batch (after fixing the cause above, e.g. once the enqueued-token limit has room), or "
            "with JUDGELAB_BATCH_FALLBACK=fail to record them as failures.")
        return BatchStoppedError(self.fresh.redact(message), batch.id, batch.status,
                                 [e for b, _ in ended for e in batch_api.batch_errors(b)])

    def _record_paid(self, pending: list[Pending]) -> None:
        """Before a stop (the waiters raise): every paid line into the ledger, and its item's count."""
        for p in pending:
            for res in (p.result, p.take_billed()):
                if res is not None:
                    spent = self.ledger.record(res)
                    if p.owner is not None:
                        p.owner.add(res, spent)

    def _unfinished(self, spent: list[Pending]) -> BatchStoppedError:
        """The stop for requests whose lines failed on the server side in every round they were sent."""
        shown = "; ".join(f"[{p.request.item_label()}] {p.reason}" for p in spent[:5])
        more = f"; ... and {len(spent) - 5} more" if len(spent) > 5 else ""
        message = (
            f"batch mode: {len(spent)} request(s) failed on the server side in each of the {spent[0].sent} batch "
            f"round(s) they were sent in (RetryPolicy.max_attempts): {shown}{more}. Their chains cannot finish, so "
            "the run stops before their later rounds are paid. Completed calls are cached: once the server "
            "recovers, run the same command again to continue from the cache (JUDGELAB_BATCH_FALLBACK=live asks "
            "such requests as ordinary calls at full price; =fail records them as failures).")
        return BatchStoppedError(self.fresh.redact(message), "", "completed", [])

    def _start(self, chunk: list[dict]) -> tuple[str, str, list[dict]]:
        keys = [line["custom_id"] for line in chunk]
        fp, batch_id = self.jobs.resumable(keys) or (fingerprint(keys), None)
        if batch_id is not None:
            log.warning("batch mode: resuming batch %s (%d requests) recorded in %s", batch_id, len(keys),
                        self.jobs.path)
        else:
            batch_id = batch_api.create_batch(self.backend, chunk, metadata={"judgelab_fingerprint": fp})
            self.jobs.record(fp, batch_id, len(keys))
            self.lookup.cache.add_batch(batch_id, keys)
            log.warning("batch mode: submitted batch %s (%d requests) to %s", batch_id, len(keys),
                        self.backend.base_url)
        self.history.append((batch_id, len(keys)))
        return fp, batch_id, chunk

    def _collect(self, fp: str, batch_id: str, pending: list[Pending], notes: dict) -> None:
        seen: list[str] = []

        def on_poll(batch) -> None:
            if not seen or seen[-1] != batch.status:  # one log line and one write per change
                seen.append(batch.status)
                self.jobs.update(fp, batch.status)
                log.warning("batch mode: batch %s is %s", batch_id, batch.status)

        batch = batch_api.wait_for(self.backend, batch_id, self.poll_s, on_poll, stop=self.stop)
        records = batch_api.output_records(self.backend, batch)  # an expired batch keeps what it finished
        url, model = self.backend.base_url, self.fresh.model_name
        for p in pending:
            rec = records.get(p.key)
            if rec is None:
                p.reason = f"no reply in batch {batch_id} (status {batch.status})"
                p.failure = Failure(kind="batch_unanswered", url=url, model=model)
                continue
            p.result, err = batch_api.store_line(self.lookup, self.fresh, p.key, p.request, rec, batch_id, notes.get(p.key))
            if p.result is None:
                p.reason, p.failure = err, batch_api.line_failure(rec, url, model)
                p.billed = batch_api.billed_failure(self.fresh, p.key, p.request, rec, batch_id, err)
                p.transient = transient_line(rec)
                # a passing server error goes with the next round, unless asked live (fallback) or
                # its rounds are used up; an unbilled line costs nothing to send again
                p.again = (p.transient and self.fallback != "live" and batch.status == "completed"
                           and p.sent < self.max_attempts)
            else:
                self._transcript(p, batch_id)
        self.jobs.update(fp, batch.status, collected=True)
        self.lookup.cache.mark_batch_collected(batch_id)
        left = [p for p in pending if p.result is None] if batch.status != "completed" else []
        return batch, left

    def _transcript(self, p: Pending, batch_id: str) -> None:
        if self.fresh.transcripts is None:
            return
        req, res = p.request, p.result
        self.fresh.transcripts.write({
            "time": time.time(), "key": p.key, "tags": req.tags, "backend": res.backend, "model": res.model,
            "template_version": req.template_version, "replicate": req.replicate,
            "sampling": req.sampling.model_dump(), "messages": [m.model_dump() for m in req.messages],
            "replies": [{"reply": res.text, "finish_reason": None, "error": None}], "status": res.status,
            "parsed": res.data, "error": None, "usage": res.usage.model_dump(), "latency_s": 0.0,
            "attempts": 1, "truncation": res.truncation_note, "batch_id": batch_id,
        })

    # -- what a waiter gets ---------------------------------------------------------------------
    def fallback_answer(self, p: Pending, live) -> ChatResult:
        """For a request the batch did not answer: ``live()`` after the billed line's own ledger
        row (``fallback="live"``), else a recorded failure holding the billed line's tokens."""
        billed = p.take_billed()
        if self.fallback == "live":
            if billed is not None:
                self.ledger.record(billed)
            with self.live_gate:
                return live()
        return self.failed(p, billed)

    def failed(self, p: Pending, billed: ChatResult | None = None) -> ChatResult:
        """The recorded failure of a request the batch did not answer (its tokens if paid)."""
        req = p.request
        note = ("" if self.fallback == "fail" else
                "; not asked again at full price (JUDGELAB_BATCH_FALLBACK=stop): a rerun sends it in a new batch, "
                "JUDGELAB_BATCH_FALLBACK=live asks it as an ordinary call")
        return ChatResult(status="failed", error=self.fresh.redact(f"{req.item_label()}: {p.reason}{note}"),
                          backend=self.fresh.backend_name, model=self.fresh.model_name, key=p.key,
                          usage=billed.usage if billed is not None else Usage(),
                          n_attempts=1 if billed is not None else 0,
                          tags=billed.tags if billed is not None else self.fresh.redact(dict(req.tags)),
                          batch_id=billed.batch_id if billed is not None else None, failure_detail=p.failure,
                          failure=billed.failure if billed is not None else (p.failure.kind if p.failure else None))

    def close(self) -> None:
        self.jobs.close()
