"""Batch mode that says why: a failed or expired batch reports its ``errors``; going on
at full price is a setting (``JUDGELAB_BATCH_FALLBACK``) whose default, ``stop``, stops the run
with the reason and the setting to continue; every billed batch line is in the ledger.

Against the fake server's Batch API: ``batch_status="failed"`` with ``batch_errors`` (a batch
refused before any line runs, as for an organisation's enqueued-token limit) and
``batch_status="expired"`` with ``batch_expire_after`` (a batch that answered only its first lines).
"""
from __future__ import annotations

import logging

import pytest
from pydantic import BaseModel

from judgelab.gateway import ChatRequest, Gateway, Message
from judgelab.gateway.errors import BatchStoppedError, ConfigError
from fake_openai_server import FakeChatServer, Reply
from judgelab.gateway.settings import resolve


@pytest.fixture(autouse=True)
def _no_canary(monkeypatch):
    """These tests count the calls of the path they test (batches, retries, the breaker); the
    canary per request shape that precedes a fan-out is tested in test_gateway_canary.py."""
    monkeypatch.setenv("JUDGELAB_CANARY", "0")


POLL = 0.01
#: the error the Batch API reports for a batch over the organisation's enqueued-token limit
TOKEN_LIMIT = {"code": "token_limit_exceeded", "line": None,
               "message": "Enqueued token limit reached for gpt-4.1 in organization org-test. Limit: 90,000 "
                          "enqueued tokens. Please try again once some in_progress batches have been completed."}
#: every reply of these tests bills exactly this many tokens
USAGE = {"prompt_tokens": 10, "completion_tokens": 3}


class Label(BaseModel):
    label: str


def req(i) -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content=f"item {i}")], schema=Label, tags={"item": i})


def echo(body):
    return Reply({"label": body["messages"][-1]["content"]}, usage=dict(USAGE))


def batch_gw(srv, tmp_path, **kw) -> Gateway:
    return Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                 cache_path=tmp_path / "c.sqlite", progress=False, batch=True, batch_poll_s=POLL, **kw)


def test_the_fallback_setting_defaults_to_stop_and_is_checked(monkeypatch, tmp_path):
    monkeypatch.delenv("JUDGELAB_BATCH_FALLBACK", raising=False)
    assert resolve("openai-compatible", cache_path=tmp_path / "c.sqlite").batch_fallback == "stop"
    monkeypatch.setenv("JUDGELAB_BATCH_FALLBACK", "LIVE")
    assert resolve("openai-compatible", cache_path=tmp_path / "c.sqlite").batch_fallback == "live"
    monkeypatch.setenv("JUDGELAB_BATCH_FALLBACK", "sometimes")
    with pytest.raises(ConfigError, match="JUDGELAB_BATCH_FALLBACK.*stop, live, fail"):
        resolve("openai-compatible", cache_path=tmp_path / "c.sqlite")


def test_a_failed_batch_stops_with_its_errors_and_pays_for_nothing(tmp_path):
    with FakeChatServer(echo, batch_status="failed", batch_errors=[TOKEN_LIMIT]) as srv:
        gw = batch_gw(srv, tmp_path)
        with pytest.raises(BatchStoppedError) as stopped:
            gw.run_batch([req(i) for i in range(3)])
        assert srv.n_calls == 0 and srv.count("batch_line") == 0  # no ordinary call at full price
    err = stopped.value
    message = str(err)
    assert "status failed" in message and "token_limit_exceeded" in message and "Enqueued token limit" in message
    assert "3 request(s) have no reply" in message and "JUDGELAB_BATCH_FALLBACK=live" in message
    assert err.status == "failed" and err.batch_id == gw.batch_history[0][0]
    assert [e["code"] for e in err.errors] == ["token_limit_exceeded"]
    assert gw.ledger_frame().empty  # nothing was billed, nothing recorded


def test_a_failed_batch_goes_live_only_when_asked_and_says_why(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("JUDGELAB_BATCH_FALLBACK", "live")  # as the stop message says
    with FakeChatServer(echo, batch_status="failed", batch_errors=[TOKEN_LIMIT]) as srv:
        gw = batch_gw(srv, tmp_path)
        with caplog.at_level(logging.WARNING, logger="judgelab.gateway.batch"):
            results = gw.run_batch([req(i) for i in range(3)])
        assert [r.parsed.label for r in results] == ["item 0", "item 1", "item 2"]
        assert srv.n_calls == 3 and srv.count("/v1/batches") == 1
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert "token_limit_exceeded" in warned and "full price" in warned


def test_an_expired_batch_keeps_what_it_finished_and_a_rerun_sends_only_the_rest(tmp_path):
    with FakeChatServer(echo, batch_status="expired", batch_expire_after=2) as srv:
        gw = batch_gw(srv, tmp_path)
        reqs = [req(i) for i in range(4)]
        with pytest.raises(BatchStoppedError, match=r"status expired \(2 of 4 requests completed") as stopped:
            gw.run_batch(reqs)
        assert "2 request(s) have no reply" in str(stopped.value) and srv.n_calls == 0
        # the two finished replies were billed: cached, and in the ledger with their tokens
        answered = [r for r in reqs if gw.cache.contains(gw.key(r))]
        assert len(answered) == 2
        ledger = gw.ledger_frame()
        assert len(ledger) == 2 and (ledger["status"] == "ok").all()
        assert ledger["input_tokens"].sum() == 2 * USAGE["prompt_tokens"]
        # the same command again: the two cached replies are free, the other two go in a new batch
        again = batch_gw(srv, tmp_path).run_batch(reqs)
        assert [r.parsed.label for r in again] == [f"item {i}" for i in range(4)]
        assert sum(r.cached for r in again) == 2 and srv.count("batch_line") == 4 and srv.n_calls == 0


def test_a_multi_turn_map_stops_at_the_failed_round(tmp_path):
    def conversation(name):
        res = gw.chat(ChatRequest(messages=[Message(role="user", content=name)], schema=Label, tags={"item": name}))
        return res.parsed.label

    with FakeChatServer(echo, batch_status="failed", batch_errors=[TOKEN_LIMIT]) as srv:
        gw = batch_gw(srv, tmp_path)
        with pytest.raises(BatchStoppedError, match="token_limit_exceeded"):
            gw.map(conversation, ["a", "b", "c"])
        assert srv.n_calls == 0 and srv.count("/v1/batches") == 1


def invalid_then_valid(body):
    """Item 1's reply breaks the schema (billed all the same); the others, and a repair turn, are valid."""
    text = body["messages"][-1]["content"]
    if text == "item 1":
        return Reply('{"nope": 1}', usage=dict(USAGE))
    return echo(body)


@pytest.mark.parametrize("fallback,live_calls,status", [("stop", 0, "failed"), ("fail", 0, "failed"), ("live", 2, "ok")])
def test_every_billed_batch_line_is_in_the_ledger(tmp_path, fallback, live_calls, status):
    # live: item 1 is asked again as an ordinary call, invalid again, then repaired (2 calls)
    with FakeChatServer(invalid_then_valid) as srv:
        gw = batch_gw(srv, tmp_path, batch_fallback=fallback)
        results = gw.run_batch([req(i) for i in range(4)])
        assert [r.status for r in results] == ["ok", status, "ok", "ok"]
        billed_replies = srv.count("batch_line") + srv.n_calls
        assert srv.count("batch_line") == 4 and srv.n_calls == live_calls
    ledger = gw.ledger_frame()
    # server-side usage, reply by reply, equals the ledger's tokens: nothing paid is left out
    assert ledger["input_tokens"].sum() == billed_replies * USAGE["prompt_tokens"]
    assert ledger["output_tokens"].sum() == billed_replies * USAGE["completion_tokens"]
    failed = ledger[ledger["status"] == "failed"]
    assert (failed["item"] == 1).all() and failed["batch_id"].notna().any()
    if fallback != "live":
        assert len(ledger) == 4 and "invalid reply in batch" in results[1].error


def test_a_batch_reply_that_fails_validation_in_manual_collect_is_in_the_ledger(tmp_path):
    with FakeChatServer(invalid_then_valid) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite", progress=False)
        reqs = [req(i) for i in range(3)]
        batch_id = gw.submit_batch(reqs)
        results = gw.collect_batch(batch_id, reqs, fill_missing=True)
        assert [r.status for r in results] == ["ok", "ok", "ok"]
        billed = srv.count("batch_line") + srv.n_calls
    assert srv.n_calls == 2  # item 1 asked live (fill_missing): invalid again, then repaired
    assert gw.ledger_frame()["input_tokens"].sum() == billed * USAGE["prompt_tokens"]
