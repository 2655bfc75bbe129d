"""The OpenAI Batch API, collected into the same cache: the pieces batch mode
(:mod:`~judgelab.gateway.batch_collector`) and ``Gateway.submit_batch``/``collect_batch`` build on.
Each function takes only the gateway parts it uses: ``lookup``, the
:class:`~judgelab.gateway.lookup.CacheLookup` (keys, the sampling as sent, the cache and its mode),
and ``fresh``, the :class:`~judgelab.gateway.fresh.FreshCall` (the backend and its client, the
names a result carries, redaction, the token estimate).

A batch line is the live request body (:meth:`OpenAIBackend.request_body`) under the cache key as
``custom_id``. A valid reply is cached exactly as a live call's, with no latency (0); a reply
that fails validation was paid for: a failed ledger row with its tokens (:func:`billed_failure`).
"""
from __future__ import annotations

import json
import threading
import time
from typing import Any, Callable

from judgelab.gateway.cache import canonical_request
from judgelab.gateway.errors import ConfigError, ContextOverflowError
from judgelab.gateway.parsing import parse_reply
from judgelab.gateway.types import ChatRequest, ChatResult, Failure, Usage

TERMINAL = {"completed", "failed", "expired", "cancelled"}
ENDPOINT = "/v1/chat/completions"
#: the Batch API's limits on one input file (platform.openai.com/docs/guides/batch)
MAX_REQUESTS = 50_000
MAX_BYTES = 200 * 1024 * 1024


def batch_backend(fresh):
    """The gateway's OpenAI-protocol backend, or a ConfigError naming the backend in use."""
    from judgelab.gateway.backends.openai_backend import OpenAIBackend

    if not isinstance(fresh.backend, OpenAIBackend):
        raise ConfigError(f"the Batch API needs an openai or openai-compatible backend, not {fresh.backend_name}")
    return fresh.backend


def batch_line(be, key: str, messages: list[dict], req: ChatRequest) -> dict:
    """One Batch API input line: the live request body under the cache key as ``custom_id``."""
    return {"custom_id": key, "method": "POST", "url": ENDPOINT,
            "body": be.request_body(messages, req.schema, req.sampling)}


def encode_line(line: dict) -> bytes:
    return (json.dumps(line) + "\n").encode("utf-8")


def chunk_lines(lines: list[dict], max_requests: int = MAX_REQUESTS, max_bytes: int = MAX_BYTES) -> list[list[dict]]:
    """Split input lines, in order, into files the API accepts (at most ``max_requests`` lines and
    ``max_bytes`` bytes each). A single line over ``max_bytes`` is a ConfigError naming it."""
    chunks: list[list[dict]] = []
    current: list[dict] = []
    size = 0
    for line in lines:
        n = len(encode_line(line))
        if n > max_bytes:
            raise ConfigError(f"batch line {line['custom_id'][:16]} is {n} bytes, over the Batch API's {max_bytes}")
        if current and (len(current) >= max_requests or size + n > max_bytes):
            chunks.append(current)
            current, size = [], 0
        current.append(line)
        size += n
    if current:
        chunks.append(current)
    return chunks


def create_batch(be, lines: list[dict], metadata: dict | None = None) -> str:
    """Upload ``lines`` as one JSONL file and create a 24 h batch over it; returns the batch id."""
    import openai

    data = b"".join(encode_line(line) for line in lines)
    try:
        upload = be.client.files.create(file=("judgelab_batch.jsonl", data, "application/jsonl"), purpose="batch")
        batch = be.client.batches.create(input_file_id=upload.id, endpoint=ENDPOINT, completion_window="24h",
                                         metadata=metadata)
    except openai.APIError as exc:  # e.g. a vLLM or llama.cpp server without /v1/files, /v1/batches
        raise ConfigError(f"{be.base_url} did not accept a batch of {len(lines)} requests ({exc}); "
                          "unset JUDGELAB_BATCH (make ... without BATCH=1) to call it directly") from exc
    return batch.id


def wait_for(be, batch_id: str, poll_s: float, on_poll: Callable[[Any], None] | None = None,
             max_errors: int = 20, stop: threading.Event | None = None):
    """Poll the batch every ``poll_s`` seconds until it ends; returns the final batch object.

    A batch may take hours: a status read that fails for a passing reason (connection, timeout,
    429, 5xx) is tried again at the next poll; ``max_errors`` such failures in a row stop the wait
    with a ConfigError naming the batch (the run can be restarted and resumes it). Setting
    ``stop`` (an interrupted notebook) ends the wait at the next poll with an InterruptedError."""
    import openai

    stop = stop or threading.Event()

    def pause() -> None:
        if stop.wait(poll_s):
            raise InterruptedError(f"stopped waiting for batch {batch_id} at {be.base_url}; it is recorded in "
                                   "the cache file and a rerun resumes it")

    passing = (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError)
    errors = 0
    while True:
        try:
            batch = be.client.batches.retrieve(batch_id)
        except passing as exc:
            errors += 1
            if errors >= max_errors:
                raise ConfigError(f"batch {batch_id} at {be.base_url}: {errors} status reads in a row failed "
                                  f"(last: {exc}); restart the run to resume waiting for it") from exc
            pause()
            continue
        errors = 0
        if on_poll is not None:
            on_poll(batch)
        if batch.status in TERMINAL:
            return batch
        pause()


def output_records(be, batch) -> dict[str, dict]:
    """custom_id -> output line, from the output file and the error file (failed requests land
    in the latter on the OpenAI API)."""
    records: dict[str, dict] = {}
    for file_id in (getattr(batch, "error_file_id", None), getattr(batch, "output_file_id", None)):
        if not file_id:
            continue
        for line in be.client.files.content(file_id).text.splitlines():
            if line.strip():
                rec = json.loads(line)
                records[rec["custom_id"]] = rec
    return records


def batch_errors(batch) -> list[dict]:
    """The batch's ``errors`` as dicts with ``code``, ``message``, ``line``, ``param`` (empty if none)."""
    errors = getattr(batch, "errors", None)
    data = getattr(errors, "data", None) if errors is not None else None
    if data is None and isinstance(errors, dict):
        data = errors.get("data")
    out = []
    for err in data or []:
        get = err.get if isinstance(err, dict) else (lambda name, e=err: getattr(e, name, None))
        out.append({"code": get("code"), "message": get("message"), "line": get("line"), "param": get("param")})
    return out


def describe_end(batch) -> str:
    """One sentence on how a batch ended: status, request counts and its errors (code, message, line)."""
    text = f"batch {batch.id} ended with status {batch.status}"
    counts = getattr(batch, "request_counts", None)
    if counts is not None:
        text += f" ({counts.completed} of {counts.total} requests completed, {counts.failed} failed)"
    errors = batch_errors(batch)
    if errors:
        shown = "; ".join(f"{e['code']}: {e['message']}" + (f" (line {e['line']})" if e.get("line") is not None else "")
                          for e in errors[:5])
        more = f"; ... and {len(errors) - 5} more" if len(errors) > 5 else ""
        text += f"; errors: {shown}{more}"
    elif batch.status != "completed":
        text += "; the batch reported no errors"
    return text


def line_failure(rec: dict, url: str | None = None, model: str | None = None) -> Failure:
    """The :class:`Failure` of an output line that is not a valid reply (an error line, or a 200
    whose reply fails validation: ``invalid_reply``)."""
    response = rec.get("response") or {}
    status = response.get("status_code")
    if rec.get("error") or status != 200:
        return Failure(kind="http" if status else "batch_unanswered", status=status, url=url, model=model)
    return Failure(kind="invalid_reply", url=url, model=model)


def billed_failure(fresh, key: str, req: ChatRequest, rec: dict, batch_id: str, error: str) -> ChatResult | None:
    """A failed result holding the tokens of a billed line that gave no valid reply (a 200 whose
    reply fails validation), or None for a line that was not billed (an error line)."""
    from judgelab.gateway.backends.openai_backend import reply_from_completion

    response = rec.get("response") or {}
    if rec.get("error") or response.get("status_code") != 200:
        return None
    from judgelab.gateway.canary import classify_reply

    failure = "invalid"
    try:
        reply = reply_from_completion(response["body"], 0.0, fresh.model_name)
    except Exception:  # noqa: BLE001 - a body without choices: billed, but its usage is all we can read
        u = (response.get("body") or {}).get("usage") or {}
        usage = Usage(input_tokens=int(u.get("prompt_tokens") or 0), output_tokens=int(u.get("completion_tokens") or 0))
    else:
        usage = reply.usage or fresh.estimate([m.model_dump() for m in req.messages], reply.text)
        failure = classify_reply(reply.text, reply.finish_reason)
    # ``failure`` is the class a live call of the same reply gets (invalid, empty, cut), so that the
    # stop on alike failures counts batch lines as it counts live calls; the detail keeps the kind
    return ChatResult(status="failed", error=fresh.redact(f"{req.item_label()}: {error}"), backend=fresh.backend_name,
                      model=fresh.model_name, usage=usage, key=key, n_attempts=1,
                      tags=fresh.redact({**req.tags, "batch_id": batch_id}), batch_id=batch_id,
                      failure_detail=line_failure(rec, fresh.base_url, fresh.model_name), failure=failure)


def batch_lines(lookup, fresh, requests: list[ChatRequest]) -> list[dict]:
    """The Batch API input lines for the requests not yet cached (one per distinct key)."""
    be = batch_backend(fresh)
    lines, seen = [], set()
    for req in requests:
        req = lookup.as_sent(req)  # the sampling as sent (gateway.reasoning), as live calls send it
        key = lookup.key(req)
        if key in seen or (lookup.mode != "refresh" and lookup.cache.contains(key)):
            continue
        seen.add(key)
        messages = [m.model_dump() for m in req.messages]
        try:
            messages, _ = be.fit_messages(messages, req.sampling.max_tokens, req.truncation, req.item_label())
        except (ContextOverflowError, ValueError):
            continue  # left out: collect_batch records it as "not in batch" (or asks live with fill_missing)
        lines.append(batch_line(be, key, messages, req))
    return lines


def store_line(lookup, fresh, key: str, req: ChatRequest, rec: dict, batch_id: str,
               note: str | None = None) -> tuple[ChatResult | None, str]:
    """Validate one output line and cache it; returns (result, "") or (None, error).

    ``note`` is the head_tail truncation note of the prompt as sent (None when it fitted)."""
    from judgelab.gateway.backends.openai_backend import reply_from_completion

    req = lookup.as_sent(req)
    response = rec.get("response") or {}
    if rec.get("error") or response.get("status_code") != 200:
        detail = rec.get("error") or (response.get("body") or {}).get("error")
        return None, f"batch {batch_id} line failed: HTTP {response.get('status_code')} {detail}"
    reply = reply_from_completion(response["body"], 0.0, fresh.model_name)
    clipped: list[str] = []
    parsed, verr = parse_reply(reply.text, req.schema, reply.finish_reason, clipped)
    if verr is not None:
        return None, f"invalid reply in batch {batch_id}: {verr}"
    usage = reply.usage or fresh.estimate([m.model_dump() for m in req.messages], reply.text)
    lookup.cache.put(fresh.redact({  # the key never reaches a file (judgelab.gateway.redact)
        "key": key, "request": canonical_request(lookup.identity, req), "text": reply.text,
        "parsed": parsed.model_dump(mode="json") if req.schema is not None else None,
        "usage": usage.model_dump(), "latency_s": 0.0, "reported_model": reply.reported_model,
        "backend": fresh.backend_name, "model": fresh.model_name, "n_repairs": 0, "truncated": note is not None,
        "truncation_note": note, "tags": {**req.tags, "batch_id": batch_id}, "created_at": time.time(),
    }))
    return ChatResult(status="ok", parsed=parsed, text=fresh.redact(reply.text), backend=fresh.backend_name,
                      model=fresh.model_name, usage=usage, latency_s=0.0, key=key, n_attempts=1,
                      truncated=note is not None, truncation_note=note, sampling=req.sampling,
                      tags=fresh.redact({**req.tags, "batch_id": batch_id}), clipped=clipped, batch_id=batch_id), ""
