"""Scale-out path: the OpenAI Batch API, collected into the same cache.

``submit_batch`` writes one JSONL line per uncached request (``custom_id`` = the cache key, the
body exactly as :meth:`OpenAIBackend.request_body` would send it live), uploads it
(``files.create(purpose="batch")``), creates the batch and remembers its keys in the cache file,
so the batch can be collected by a later process. ``collect_batch`` downloads the output file,
validates each reply against its request's schema, stores the valid ones in the cache (exactly
as a live call would) and returns one result per request. Invalid or errored lines are recorded
failures — or, with ``fill_missing=True``, are re-asked live through :meth:`Gateway.chat` with
repair turns. Batch replies carry no latency (recorded as 0).
"""
from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from judgelab.gateway.cache import canonical_request
from judgelab.gateway.errors import ConfigError, ContextOverflowError
from judgelab.gateway.parsing import parse_reply
from judgelab.gateway.types import ChatRequest, ChatResult, Usage

if TYPE_CHECKING:
    from judgelab.gateway.core import Gateway

TERMINAL = {"completed", "failed", "expired", "cancelled"}


def _backend(gw: "Gateway"):
    from judgelab.gateway.backends.openai_backend import OpenAIBackend

    if not isinstance(gw.backend, OpenAIBackend):
        raise ConfigError(f"the Batch API needs an openai or openai-compatible backend, not {gw.backend_name}")
    return gw.backend


def batch_lines(gw: "Gateway", requests: list[ChatRequest]) -> list[dict]:
    """The Batch API input lines for the requests not yet cached (one per distinct key)."""
    be = _backend(gw)
    lines, seen = [], set()
    for req in requests:
        key = gw.key(req)
        if key in seen or (gw.cache_mode != "refresh" and gw.cache.contains(key)):
            continue
        seen.add(key)
        messages = [m.model_dump() for m in req.messages]
        try:
            messages, _ = be.fit_messages(messages, req.sampling.max_tokens, req.truncation, req.item_label())
        except (ContextOverflowError, ValueError):
            continue  # left out: collect_batch records it as "not in batch" (or asks live with fill_missing)
        lines.append({"custom_id": key, "method": "POST", "url": "/v1/chat/completions",
                      "body": be.request_body(messages, req.schema, req.sampling)})
    return lines


def submit_batch(gw: "Gateway", requests: list[ChatRequest], metadata: dict | None = None) -> str | None:
    """Upload and create a batch for the uncached requests; returns its id (None if nothing to do)."""
    if gw.cache_mode == "replay":
        raise ConfigError("cannot submit a batch in replay mode")
    be = _backend(gw)
    lines = batch_lines(gw, requests)
    if not lines:
        return None
    data = "".join(json.dumps(line) + "\n" for line in lines).encode("utf-8")
    upload = be.client.files.create(file=("judgelab_batch.jsonl", data, "application/jsonl"), purpose="batch")
    batch = be.client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions",
                                     completion_window="24h", metadata=metadata)
    gw.cache.add_batch(batch.id, [line["custom_id"] for line in lines])
    return batch.id


def collect_batch(
    gw: "Gateway", batch_id: str, requests: list[ChatRequest], wait: bool = False,
    poll_s: float = 30.0, fill_missing: bool = False,
) -> list[ChatResult] | None:
    """Results for ``requests`` from a finished batch (None if it is still running and not ``wait``)."""
    be = _backend(gw)
    batch = be.client.batches.retrieve(batch_id)
    while batch.status not in TERMINAL:
        if not wait:
            return None
        time.sleep(poll_s)
        batch = be.client.batches.retrieve(batch_id)
    by_key = {gw.key(r): r for r in requests}
    fresh: dict[str, ChatResult] = {}
    errors: dict[str, str] = {}
    if batch.status != "completed" or not batch.output_file_id:
        errors = {k: f"batch {batch_id} ended with status {batch.status}" for k in by_key}
    else:
        content = be.client.files.content(batch.output_file_id).text
        for line in content.splitlines():
            if not line.strip():
                continue
            rec = json.loads(line)
            key = rec["custom_id"]
            req = by_key.get(key)
            if req is None:
                continue
            res, err = _store(gw, key, req, rec, batch_id)
            if res is not None:
                fresh[key] = res
            else:
                errors[key] = err
    gw.cache.mark_batch_collected(batch_id)
    out = []
    for req in requests:
        key = gw.key(req)
        if key in fresh:
            res = fresh.pop(key)
            gw.ledger.record(res)
        elif gw.cache.contains(key) or fill_missing:
            res = gw.chat(req)
        else:
            res = ChatResult(status="failed", error=gw.redact(f"{req.item_label()}: {errors.get(key, f'not in batch {batch_id}')}"),
                             backend=gw.backend_name, model=gw.model_name, key=key, tags=dict(req.tags))
            gw.ledger.record(res)
        out.append(res)
    return out


def _store(gw: "Gateway", key: str, req: ChatRequest, rec: dict, batch_id: str) -> tuple[ChatResult | None, str]:
    """Validate one output line and cache it; returns (result, "") or (None, error)."""
    from judgelab.gateway.backends.openai_backend import reply_from_completion

    response = rec.get("response") or {}
    if rec.get("error") or response.get("status_code") != 200:
        detail = rec.get("error") or (response.get("body") or {}).get("error")
        return None, f"batch {batch_id} line failed: HTTP {response.get('status_code')} {detail}"
    reply = reply_from_completion(response["body"], 0.0, gw.model_name)
    parsed, verr = parse_reply(reply.text, req.schema, reply.finish_reason)
    if verr is not None:
        return None, f"invalid reply in batch {batch_id}: {verr}"
    usage = reply.usage or gw._estimate([m.model_dump() for m in req.messages], reply.text)
    gw.cache.put(gw.redact({  # the key never reaches a file (judgelab.gateway.redact)
        "key": key, "request": canonical_request(gw._identity, req), "text": reply.text,
        "parsed": parsed.model_dump(mode="json") if req.schema is not None else None,
        "usage": usage.model_dump(), "latency_s": 0.0, "reported_model": reply.reported_model,
        "backend": gw.backend_name, "model": gw.model_name, "n_repairs": 0, "truncated": False,
        "truncation_note": None, "tags": {**req.tags, "batch_id": batch_id}, "created_at": time.time(),
    }))
    return ChatResult(status="ok", parsed=parsed, text=reply.text, backend=gw.backend_name, model=gw.model_name,
                      usage=usage, latency_s=0.0, key=key, tags=dict(req.tags), n_attempts=1), ""
