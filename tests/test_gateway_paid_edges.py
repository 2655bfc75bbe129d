"""A paid run never buys nothing: batch chains that finish or stop naming themselves, a canary
paid once whatever its failure, failures after the canary bounded by the stop's threshold, a
cache that survives a local server's new port, and stop messages that name what the user set.

Against ``tests/fake_openai_server.py``: server errors on batch lines are decided per request
body and per send (:func:`faulty`), so a test's outcome does not depend on thread timing.
"""
from __future__ import annotations

import hashlib
import json
import random
import threading

import pandas as pd
import pytest
from pydantic import BaseModel

from judgelab.gateway import ChatRequest, Gateway, Message, Sampling
from judgelab.gateway.canary import FanOutStopped
from judgelab.gateway.errors import BatchStoppedError
from judgelab.gateway.retry import RetryPolicy
from judgelab.gateway.settings import endpoint_identity
from fake_openai_server import FakeChatServer, Fault, Reply, default_reply, truncated_json

POLL = 0.01
NO_SLEEP = dict(retry=RetryPolicy(max_attempts=6, sleep=lambda s: None))


class Score(BaseModel):
    score: int


def request(i: int) -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content=f"story {i}")], schema=Score,
                       sampling=Sampling(seed=i, max_tokens=32), tags={"item": f"s{i}"})


def gateway(srv, tmp_path, **kw) -> Gateway:
    kw.setdefault("retry", RetryPolicy(max_attempts=2, sleep=lambda s: None))
    return Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                 cache_path=tmp_path / "c.sqlite", progress=False, **kw)


def faulty(rate: float, seed: int = 0, fails=None):
    """A script answering 500 for a share ``rate`` of sends (decided by the body and how often it
    was sent before, never by arrival order), else the schema's synthesized reply; ``fails(body)``
    instead names the bodies that fail on every send."""
    sent: dict[str, int] = {}
    lock = threading.Lock()

    def script(body):
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        with lock:
            n = sent[digest] = sent.get(digest, 0) + 1
        bad = fails(body) if fails is not None else random.Random(f"{seed}:{digest}:{n}").random() < rate
        return Fault.server_error(500) if bad else default_reply(body)

    return script


def sage_corpus(n_per_category: int) -> pd.DataFrame:
    text = "Marta wrapped the bread in cloth and waited by the door for her son, who had gone to the river."
    rows = []
    for cat in ("canonical", "pulp", "llm"):
        for j in range(n_per_category):
            sid, title = f"{cat[0]}{j}", f"The {cat.title()} Story {j}"
            rows.append({"story_id": sid, "category": cat, "title": title, "author": "Ada Fenwick", "year": 1900,
                         "translator": "", "model": "", "tier": "", "words": 20, "in_range": True,
                         "text": f"{title.upper()}\n\n{text} {sid}"})
    return pd.DataFrame(rows)


def run_sage(gw, corpus):
    from judgelab.sage.protocol import runner

    return runner.run_layer(gw, corpus, "L4", "demo", stories=list(corpus["story_id"]), modes="content,title")


# ---------------------------------------------------------------- batch chains

def test_sage_chains_at_a_5_percent_server_error_rate_all_finish(tmp_path):
    """The demo's design (two stories a category, both modes: 12 evaluations of 7 chained calls)
    with 5% of batch lines answered 500: each failed line goes with the next round, every
    evaluation is scored, and no request is paid twice (5xx lines are not billed)."""
    corpus = sage_corpus(2)
    with FakeChatServer(faulty(0.05), batch_replies=faulty(0.05, seed=1)) as srv:
        gw = gateway(srv, tmp_path, batch=True, batch_poll_s=POLL, **NO_SLEEP)
        run = run_sage(gw, corpus)
        billed = len(srv.billed)
    assert len(run.summary) == 12 and (run.summary["status"] == "ok").all()
    assert run.rows["score"].notna().all()
    ledger = gw.ledger_frame()
    assert (ledger["status"] == "ok").all() and len(ledger) == 12 * 7 == billed


def chain_a_round_2(body) -> bool:
    """Every send of story c0's content-mode Round 2 (the evaluator's second user turn) fails."""
    users = [m["content"] for m in body["messages"] if m["role"] == "user"]
    return len(users) == 2 and "river. c0" in users[0] and "Another critic" not in users[0]


def test_a_chain_that_cannot_finish_stops_the_run_before_its_later_rounds_are_paid(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_CANARY", "0")  # every call in a batch: exact counts
    corpus = sage_corpus(1).iloc[:2]
    with FakeChatServer(None, batch_replies=faulty(0, fails=chain_a_round_2)) as srv:
        gw = gateway(srv, tmp_path, batch=True, batch_poll_s=POLL)  # max_attempts 2
        with pytest.raises(BatchStoppedError) as stop:
            run_sage(gw, corpus)
        sent = srv.count("batch_line") + srv.n_calls
    # Round 1 (4 lines), Round 2 (4, c0 content fails), then c0's Round 2 again with the others'
    # Round 3 (4, fails again): the stop; without it the other chains and c0's validator went on
    assert sent == 12 and srv.n_calls == 0
    msg = str(stop.value)
    assert "in each of the 2 batch round(s)" in msg and "item=c0" in msg and "HTTP 500" in msg
    assert "run the same command again to continue from the cache" in msg
    assert "Unfinished: 4 of 4 items" in msg and "mode=content, item=c0" in msg
    assert sorted(c.calls for c in stop.value.unfinished) == [1, 3, 3, 3]
    # every billed line of the stopped run is in the ledger (Round 1: 4, Round 2: 3, Round 3: 3)
    assert len(gw.ledger_frame()) == len(srv.billed) == 10


# ---------------------------------------------------------------- the canary and after it

def test_a_canary_that_times_out_is_paid_once_and_says_a_rerun_continues(tmp_path):
    with FakeChatServer(default=Fault.timeout(1.0)) as srv:
        gw = gateway(srv, tmp_path, timeout_s=0.2, retry=RetryPolicy(max_attempts=4, sleep=lambda s: None))
        with pytest.raises(FanOutStopped) as stop:
            gw.run_batch([request(i) for i in range(6)], concurrency=3)
        assert srv.n_calls == 1  # max_timeouts (2) applies to ordinary calls, not to a canary
    msg = str(stop.value)
    assert "(timeout)" in msg and "run the same command again to continue from the cache" in msg


@pytest.mark.parametrize("bad", ['{"score": "many"}', Reply(truncated_json({"score": 4}), finish_reason="length")],
                         ids=["invalid", "cut"])
def test_a_shape_that_turns_bad_after_its_canary_costs_at_most_the_stop_plus_calls_in_flight(tmp_path, bad):
    """Concurrency 8, 64 items, two repair turns allowed: the streak counts every failed reply, so
    at most stop_after + 7 failed replies are paid (counting results paid 3 calls an item: >= 12)."""
    with FakeChatServer([{"score": 1}], default=bad) as srv:
        gw = gateway(srv, tmp_path, stop_after=4, max_repairs=2)
        with pytest.raises(FanOutStopped, match="consecutive calls that failed alike"):
            gw.run_batch([request(i) for i in range(64)], concurrency=8)
        failed_replies = srv.n_calls - 1
    assert failed_replies <= 4 + 8 - 1
    assert gw.ledger_frame()["status"].eq("failed").sum() <= failed_replies


# ---------------------------------------------------------------- the cache and a moved server

def test_a_local_server_restarted_on_another_port_replays_the_cache(tmp_path, monkeypatch):
    monkeypatch.delenv("JUDGELAB_CACHE_ENDPOINT", raising=False)
    reqs = [request(i) for i in range(3)]
    with FakeChatServer() as first, FakeChatServer() as moved:  # the same server, on another port
        gateway(first, tmp_path).run_batch(reqs)
        assert first.n_calls == 3 and moved.port != first.port
        again = gateway(moved, tmp_path).run_batch(reqs)
        assert moved.n_calls == 0 and all(r.cached for r in again)
        monkeypatch.setenv("JUDGELAB_CACHE_ENDPOINT", "url")  # the port is part of the endpoint
        fresh = gateway(moved, tmp_path).run_batch(reqs)
        assert moved.n_calls == 3 and not any(r.cached for r in fresh)
    # another host or path is another endpoint; OpenAI's URL (no port) is kept as it is
    assert endpoint_identity("http://127.0.0.1:8123/v1") == "http://127.0.0.1/v1"
    assert endpoint_identity("http://[::1]:8000/v1") == "http://[::1]/v1"
    assert endpoint_identity("https://api.openai.com/v1") == "https://api.openai.com/v1"
    assert endpoint_identity("http://127.0.0.1:8123/v1", "url") == "http://127.0.0.1:8123/v1"
    assert endpoint_identity("http://localhost:1/v1") != endpoint_identity("http://127.0.0.1:1/v1")


# ---------------------------------------------------------------- what the stop messages name

def test_a_rejected_reasoning_model_on_a_compatible_url_names_the_key_sent_and_the_backend(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_API_KEY", "sk-judgelab-test-0000")
    with FakeChatServer(default=Fault.status(401, "Incorrect API key provided"), model="gpt-5-mini") as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="gpt-5-mini", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite", progress=False)
        with pytest.raises(FanOutStopped) as stop:
            gw.run_batch([request(i) for i in range(3)])
    msg = str(stop.value)
    assert "JUDGELAB_API_KEY" in msg and "OPENAI_API_KEY" not in msg
    assert "JUDGELAB_BACKEND=openai" in msg
    assert "run the same command again" not in msg  # a rejected request does not pass by itself
