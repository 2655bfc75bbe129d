"""The canary before the fan-out and the stop on alike failures, against the
local chat server: known call counts for every way a fan-out can stop, or must not."""
from __future__ import annotations

import pytest
from pydantic import BaseModel

from judgelab.gateway import ChatRequest, Gateway, Message, Sampling
from judgelab.gateway.canary import FanOutStopped, classify_exception, failure_key, shape_key
from judgelab.gateway.errors import ContextOverflowError, PermanentError, TransientError
from fake_openai_server import FakeChatServer, Fault, Reply, truncated_json
from judgelab.gateway.retry import RetryPolicy


class Score(BaseModel):
    score: int


class Verdict(BaseModel):
    verdict: str


def request(i: int, schema=Score, shape: str | None = None, max_tokens: int = 32) -> ChatRequest:
    tags = {"item": f"s{i}"} | ({"shape": shape} if shape else {})
    return ChatRequest(messages=[Message(role="user", content=f"story {i}")], schema=schema,
                       sampling=Sampling(seed=i, max_tokens=max_tokens), tags=tags)


@pytest.fixture
def gateway(tmp_path):
    def make(srv, **kw):
        kw.setdefault("retry", RetryPolicy(max_attempts=2, sleep=lambda s: None))
        return Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                     cache_path=tmp_path / "c.sqlite", progress=False, **kw)
    return make


# ---------------------------------------------------------------- the canary

@pytest.mark.parametrize("bad, failure", [
    (Fault.status(400, "Unsupported parameter: 'seed'"), "http_4xx"),
    (Fault.status(404, "The model `fake-model` does not exist"), "http_4xx"),
    (Reply("", finish_reason="length"), "empty"),
    (Reply(""), "empty"),
])
def test_a_failed_canary_stops_after_one_call(gateway, bad, failure):
    with FakeChatServer(default=bad) as srv:
        gw = gateway(srv)  # repairs allowed (2), as every study runs: none is paid for a canary's empty reply
        with pytest.raises(FanOutStopped) as stop:
            gw.run_batch([request(i) for i in range(8)], concurrency=4)
        assert srv.n_calls == 1, "the other seven requests of the shape were never sent"
        msg = str(stop.value)
        assert f"({failure})" in msg and srv.base_url in msg and "fake-model" in msg and "[item=s" in msg
        assert len(gw.ledger_frame()) == 1


def test_a_cut_reply_names_the_budget(gateway):
    with FakeChatServer(default=Reply(truncated_json({"score": 4}), finish_reason="length")) as srv:
        gw = gateway(srv, max_repairs=0)
        with pytest.raises(FanOutStopped, match=r"\(cut\)") as stop:
            gw.run_batch([request(i, max_tokens=7) for i in range(5)])
        assert srv.n_calls == 1 and "max_tokens=7" in str(stop.value) and "raise the profile's max_tokens" in str(stop.value)


def test_each_shape_has_its_own_canary(gateway):
    """Two schemas: one passes, the other is rejected; one worker: [A0 passes, B0 rejected] then stop."""
    def script(body):
        return Fault.status(400, "schema refused") if "verdict" in str(body.get("response_format")) else {"score": 3}

    with FakeChatServer(script) as srv:
        gw = gateway(srv)
        reqs = [request(i, Score if i % 2 == 0 else Verdict) for i in range(10)]
        with pytest.raises(FanOutStopped, match="schema refused"):
            gw.run_batch(reqs, concurrency=1)
        assert srv.n_calls == 2
        # the shape that passed needs no canary again; the same requests of it alone all run
        srv.reset_counts()
        res = gw.run_batch([r for r in reqs if r.schema is Score], concurrency=2)
        assert all(r.ok for r in res) and srv.n_calls == 4  # s0 is cached


def test_shapes_are_told_by_model_schema_label_and_sampling_not_by_seed():
    a, b = request(1), request(2)
    assert shape_key(a, "m") == shape_key(b, "m")
    assert shape_key(a, "m") != shape_key(a, "n")
    assert shape_key(a, "m") != shape_key(request(1, Verdict), "m")
    assert shape_key(a, "m") != shape_key(request(1, shape="round 2"), "m")
    assert shape_key(a, "m") != shape_key(request(1, max_tokens=33), "m")


def with_sampling(req: ChatRequest, **kw) -> ChatRequest:
    return req.model_copy(update={"sampling": req.sampling.model_copy(update=kw)})


def test_a_shape_is_which_sampling_parameters_are_sent_not_their_values():
    """The K agents differ only in temperature: one shape. Sending top_p (or none) is another."""
    agents = [with_sampling(request(i), temperature=t) for i, t in enumerate((0.3, 0.4, 0.5, 0.6, 0.7))]
    assert len({shape_key(r, "m") for r in agents}) == 1
    assert shape_key(agents[0], "m") != shape_key(with_sampling(agents[0], top_p=0.9), "m")
    assert shape_key(agents[0], "m") != shape_key(with_sampling(agents[0], temperature=None), "m")
    assert shape_key(agents[0], "m") != shape_key(with_sampling(agents[0], reasoning_effort="low"), "m")


def test_k_agents_share_one_canary_and_a_cut_canary_costs_one_call(gateway):
    """Five agents x four items, every reply cut at the budget, repairs allowed (2): one call."""
    with FakeChatServer(default=Reply(truncated_json({"score": 4}), finish_reason="length")) as srv:
        gw = gateway(srv)  # max_repairs 2, as every study runs
        reqs = [with_sampling(request(10 * i + k), temperature=0.3 + 0.1 * k) for i in range(4) for k in range(5)]
        with pytest.raises(FanOutStopped, match=r"\(cut\)"):
            gw.run_batch(reqs, concurrency=5)
        assert srv.n_calls == 1
        assert len(gw.ledger_frame()) == 1 and gw.ledger_frame()["n_repairs"].tolist() == [0]


def test_a_canary_failing_on_5xx_after_its_retries_stops_the_fan_out(gateway):
    """A server answering 500 forever: the canary's two attempts (unbilled 5xx), then a stop
    naming the cause, the URL, the model and what to change; no item after it is tried."""
    with FakeChatServer(default=Fault.server_error(500)) as srv:
        gw = gateway(srv)
        with pytest.raises(FanOutStopped) as stop:
            gw.run_batch([request(i) for i in range(12)], concurrency=4)
        assert srv.n_calls == 2
        msg = str(stop.value)
        assert "canary" in msg and "(http_500)" in msg and srv.base_url in msg and "fake-model" in msg
        assert "fix the endpoint" in msg


def test_a_schema_invalid_canary_stops_after_its_counted_repairs(gateway):
    with FakeChatServer(default='{"score": "many"}') as srv:
        gw = gateway(srv)
        with pytest.raises(FanOutStopped) as stop:
            gw.run_batch([request(i) for i in range(6)], concurrency=3)
        assert srv.n_calls == 3  # the call and its two repair turns, one request only
        msg = str(stop.value)
        assert "(invalid)" in msg and "after 2 repair(s)" in msg and "JUDGELAB_MODEL" in msg
        assert gw.ledger_frame()["n_repairs"].tolist() == [2]


def test_cached_answers_are_passed_canaries(gateway):
    """A replay of answered requests costs nothing, even when the server now refuses everything."""
    with FakeChatServer(default={"score": 2}) as srv:
        gw = gateway(srv)
        assert all(r.ok for r in gw.run_batch([request(i) for i in range(6)]))
        assert srv.n_calls == 6
        srv._default = Fault.status(401, "bad key")  # the same server, now refusing
        again = gateway(srv)
        res = again.run_batch([request(i) for i in range(6)])
        assert srv.n_calls == 6 and all(r.cached and r.ok for r in res)


def test_map_sends_each_shape_of_a_conversation_alone_first(gateway):
    """map: item conversations of two turns; the second turn's shape is rejected: stop after the
    first item's two calls."""
    def script(body):
        return Fault.status(422, "round two refused") if "verdict" in str(body.get("response_format")) else {"score": 1}

    with FakeChatServer(script) as srv:
        gw = gateway(srv)

        def conversation(i):
            first = gw.chat(request(i))
            return first, gw.chat(request(i, Verdict))

        with pytest.raises(FanOutStopped, match="round two refused"):
            gw.map(conversation, range(6), concurrency=3)
        # at most: one canary per shape, plus first turns of other items that passed shape A
        assert srv.count("/v1/chat/completions") <= 1 + 3
        assert sum("verdict" in str(c.get("response_format")) for c in srv.calls) == 1


# ---------------------------------------------------------------- the streak

def test_alike_failures_stop_the_run_naming_url_model_and_cause(gateway):
    """After a passed canary, a server answering 500 forever: three items (two attempts each), then a stop."""
    replies = [{"score": 5}] + [Fault.server_error(500)] * 100
    with FakeChatServer(replies) as srv:
        gw = gateway(srv, stop_after=3)
        with pytest.raises(FanOutStopped) as stop:
            gw.run_batch([request(i) for i in range(20)], concurrency=1)
        assert srv.n_calls == 1 + 3 * 2
        msg = str(stop.value)
        assert "3 consecutive calls that failed alike (http_500)" in msg and srv.base_url in msg and "fake-model" in msg
        failed = gw.ledger_frame().query("status == 'failed'")
        assert len(failed) == 3


def test_a_success_resets_the_streak_and_schema_violations_count(gateway):
    cycle = [{"score": 1}, Fault.server_error(503), Fault.server_error(503)]
    with FakeChatServer([cycle[i % 3] for i in range(30)]) as srv:
        gw = gateway(srv, stop_after=3, retry=RetryPolicy(max_attempts=1, sleep=lambda s: None))
        res = gw.run_batch([request(i) for i in range(10)], concurrency=1)
        assert len(res) == 10 and srv.n_calls == 10  # never three 503s in a row
    # after a passed canary, a model that keeps breaking the schema: stop_after items, then a stop
    with FakeChatServer([{"score": 1}], default='{"score": "many"}') as srv:
        gw = gateway(srv, stop_after=2, max_repairs=0)
        with pytest.raises(FanOutStopped, match=r"2 consecutive calls that failed alike \(invalid\)"):
            gw.run_batch([request(i) for i in range(6)], concurrency=1)
        assert srv.n_calls == 1 + 2
    # a prompt too long for the context is the item's: it never counts (nor stops at the canary)
    from judgelab.gateway.canary import canary_stops

    assert not canary_stops("context_overflow") and canary_stops("invalid") and canary_stops("http_503")


def test_the_guard_is_off_for_the_embedded_backend_and_when_switched_off(gateway, monkeypatch):
    from judgelab.gateway.canary import canary_enabled

    assert canary_enabled("llamacpp") is False and canary_enabled("openai") is True
    monkeypatch.setenv("JUDGELAB_CANARY", "0")
    assert canary_enabled("openai") is False
    with FakeChatServer(default=Fault.status(400, "no")) as srv:
        res = gateway(srv).run_batch([request(i) for i in range(4)], concurrency=1)
        assert srv.n_calls == 4 and all(r.failure == "http_4xx" for r in res)


def test_batch_mode_sends_the_canaries_live_then_the_rest_in_one_batch(gateway):
    with FakeChatServer() as srv:  # schema-synthesized replies
        gw = gateway(srv, batch=True, batch_poll_s=0.01)
        res = gw.run_batch([request(i) for i in range(5)] + [request(9, Verdict)])
        assert all(r.ok for r in res)
        assert srv.n_calls == 2 and srv.count("batch_line") == 4 and srv.count("/v1/batches") == 1
    with FakeChatServer(default=Fault.status(400, "refused")) as srv:
        gw = gateway(srv, batch=True, batch_poll_s=0.01)
        with pytest.raises(FanOutStopped):  # new requests: the cache is keyed by host, not port
            gw.run_batch([request(i) for i in range(10, 15)], concurrency=1)
        assert srv.n_calls == 1 and srv.count("/v1/batches") == 0  # nothing was submitted


# ---------------------------------------------------------------- the grouping key

def test_failure_classes():
    assert classify_exception(TransientError("HTTP 500: boom", status=500)) == "http_500"
    assert classify_exception(TransientError("HTTP 429: slow down", status=429)) == "http_429"
    assert classify_exception(PermanentError("HTTP 404: no such model")) == "http_4xx"
    assert classify_exception(TransientError("timed out", timed_out=True)) == "timeout"
    assert classify_exception(TransientError("refused", connection_failed=True)) == "connection"
    assert classify_exception(ContextOverflowError("too long")) == "context_overflow"
    from judgelab.gateway.types import ChatResult

    assert failure_key(ChatResult(status="ok", backend="b", model="m")) is None
    assert failure_key(ChatResult(status="failed", backend="b", model="m", failure="http_500")) == "http_500"
