"""The gateway against a real local HTTP server that injects faults.

Every request must end as a valid result or a recorded failure, and the server's call counts
must match what the retry and repair policies promise.
"""
from __future__ import annotations

import random
import threading

import pytest
from pydantic import BaseModel, Field

from judgelab.gateway import ChatRequest, Gateway, Message, RetryPolicy, Sampling
from fake_openai_server import FakeChatServer, Fault, Reply, malformed_json, truncated_json

GOOD = {"score": 4, "reason": "clear arc"}


class Verdict(BaseModel):
    score: int = Field(ge=1, le=5)
    reason: str


class Sleeps(list):
    """Records the retry waits instead of sleeping (no wall-clock in tests)."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make_gateway(srv, tmp_path, sleeps=None, **kw) -> Gateway:
    retry = RetryPolicy(max_attempts=kw.pop("max_attempts", 4), base_s=0.01, rng=random.Random(1),
                        sleep=sleeps if sleeps is not None else Sleeps())
    return Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                 cache_mode=kw.pop("cache_mode", "normal"), cache_path=tmp_path / "cache.sqlite",
                                 retry=retry, progress=False, **kw)


def req(item="s1", schema=Verdict, **kw) -> ChatRequest:
    return ChatRequest(messages=[Message(role="system", content="Rate the story."), Message(role="user", content=f"story {item}")],
                       schema=schema, sampling=Sampling(max_tokens=64), tags={"study": "test", "item": item}, **kw)


@pytest.mark.parametrize("fault", [
    Fault.rate_limit(retry_after=2), Fault.server_error(500), Fault.server_error(503),
    Fault.malformed_body(), Fault.disconnect(),
], ids=["429", "500", "503", "malformed-body", "disconnect"])
def test_transient_fault_then_success(tmp_path, fault):
    sleeps = Sleeps()
    with FakeChatServer([fault, GOOD]) as srv:
        res = make_gateway(srv, tmp_path, sleeps).chat(req())
        assert srv.n_calls == 2
    assert res.status == "ok" and res.parsed == Verdict(**GOOD)
    assert res.n_attempts == 2 and len(sleeps) == 1
    if fault.retry_after:
        assert sleeps[0] >= fault.retry_after  # Retry-After honoured


class PaidCalls:
    """A server script that counts the calls the server completes, i.e. the calls a provider bills.

    A client timeout does not stop the server: a ``Fault.timeout`` call is still answered (late)
    and so still paid. Error faults (429, 5xx, malformed body, disconnect) produce no completion.
    """

    def __init__(self, items):
        self.items, self.paid, self.lock = list(items), 0, threading.Lock()

    def __call__(self, body):
        with self.lock:
            item = self.items.pop(0) if len(self.items) > 1 else self.items[0]  # the last one repeats
            completes = not isinstance(item, Fault) or item.kind == "sleep"
            self.paid += completes
        return item


def test_timed_out_call_is_paid_exactly_twice_once_abandoned_once_retried(tmp_path):
    # The first reply comes 3 s late, after the client gave up at 0.3 s: the server still bills
    # it. The retry is answered at once. So the call is paid exactly twice, and is ok.
    script = PaidCalls([Fault.timeout(3.0), GOOD])
    with FakeChatServer(script) as srv:
        res = make_gateway(srv, tmp_path, timeout_s=0.3).chat(req())
        assert srv.n_calls == 2
    assert res.status == "ok" and res.n_attempts == 2
    assert script.paid == 2


@pytest.mark.parametrize("items,attempts", [
    ([Fault.timeout(3.0)], 2),                                                   # always too slow
    ([Fault.timeout(3.0), Fault.server_error(503), Fault.timeout(3.0), GOOD], 3),  # an unpaid 503 between
], ids=["always-slow", "slow-503-slow"])
def test_timed_out_call_is_paid_at_most_twice(tmp_path, items, attempts):
    # Bound: a call is paid at most twice (one abandoned attempt, one retry). A second timeout
    # ends the call as a recorded failure even though max_attempts (6) would allow more attempts:
    # each further attempt would be billed again for an answer the client cannot wait for.
    script = PaidCalls(items)
    with FakeChatServer(script) as srv:
        res = make_gateway(srv, tmp_path, timeout_s=0.3, max_attempts=6).chat(req("slow"))
        received = srv.n_calls
    assert script.paid == 2
    assert res.status == "failed" and "item=slow" in res.error and "Timeout" in res.error
    assert res.n_attempts == received == attempts


def test_persistent_429_becomes_a_recorded_failure(tmp_path):
    with FakeChatServer(lambda body: Fault.rate_limit(retry_after=0)) as srv:
        gw = make_gateway(srv, tmp_path, max_attempts=3)
        res = gw.chat(req("s9"))
        assert srv.n_calls == 3
    assert res.status == "failed" and res.parsed is None
    assert "item=s9" in res.error and "429" in res.error and "3 attempt" in res.error
    assert len(gw.cache) == 0  # errors are never cached


@pytest.mark.parametrize("bad", [
    malformed_json(), truncated_json(GOOD), '{"score": 99, "reason": "too high"}', '{"reason": "no score"}', "",
], ids=["malformed", "truncated", "out-of-range", "missing-field", "empty"])
def test_invalid_reply_is_repaired_with_the_error_shown(tmp_path, bad):
    with FakeChatServer([bad, GOOD]) as srv:
        res = make_gateway(srv, tmp_path).chat(req())
        assert srv.n_calls == 2
        repair_turn = srv.calls[1]["messages"]
    assert res.status == "ok" and res.n_repairs == 1 and res.parsed.score == 4
    assert repair_turn[-2] == {"role": "assistant", "content": bad}
    assert "could not be accepted" in repair_turn[-1]["content"]


def test_repairs_are_bounded_then_failure_keeps_raw_text(tmp_path):
    bad = '{"score": 0, "reason": "zero"}'
    with FakeChatServer(lambda body: bad) as srv:
        gw = make_gateway(srv, tmp_path)
        res = gw.chat(req("s3"))
        assert srv.n_calls == 1 + gw.fresh.max_repairs
    assert res.status == "failed" and res.parsed is None and res.text == bad
    assert res.n_repairs == gw.fresh.max_repairs and "score" in res.error and "item=s3" in res.error
    assert len(gw.cache) == 0
    row = gw.ledger_frame().iloc[0]
    assert row["status"] == "failed" and row["item"] == "s3"


def test_permanent_error_is_not_retried(tmp_path):
    with FakeChatServer([Fault.status(400, "bad request: unknown parameter")]) as srv:
        res = make_gateway(srv, tmp_path).chat(req())
        assert srv.n_calls == 1
    assert res.status == "failed" and "400" in res.error


def test_schema_goes_as_llamacpp_server_json_object(tmp_path):
    with FakeChatServer() as srv:  # default reply synthesizes a schema-valid object
        res = make_gateway(srv, tmp_path).chat(req())
        rf = srv.calls[0]["response_format"]
    assert rf["type"] == "json_object" and rf["schema"]["properties"]["score"]["enum"] == [1, 2, 3, 4, 5]
    assert res.status == "ok" and res.parsed.score == 1


def test_every_request_in_a_faulty_batch_ends_valid_or_failed(tmp_path):
    rng = random.Random(42)
    menu = [Fault.rate_limit(retry_after=0), Fault.server_error(502), Fault.malformed_body(),
            malformed_json(), truncated_json(GOOD), '{"score": 7, "reason": "x"}']

    def script(body):
        return rng.choice(menu) if rng.random() < 0.5 else GOOD

    with FakeChatServer(script) as srv:
        # no stop on alike failures: at 50% faults four invalid replies in a row (repairs
        # included) are likely, and this test is about each request's own end
        gw = make_gateway(srv, tmp_path, max_attempts=3, concurrency=6, canary=False)
        results = gw.run_batch([req(f"s{i}") for i in range(30)], desc="faults")
        assert srv.n_calls == sum(r.n_attempts for r in results)
    assert [r.tags["item"] for r in results] == [f"s{i}" for i in range(30)]  # order kept
    for r in results:
        assert (r.status == "ok" and isinstance(r.parsed, Verdict)) or (r.status == "failed" and r.parsed is None and r.error)
    assert len(gw.cache) == sum(r.status == "ok" for r in results)
    ledger = gw.ledger_frame()
    assert len(ledger) == 30 and set(ledger["status"]) <= {"ok", "failed"}


def test_free_text_and_usage_from_the_api(tmp_path):
    with FakeChatServer([Reply("a plain answer", usage={"prompt_tokens": 11, "completion_tokens": 3,
                                                        "prompt_tokens_details": {"cached_tokens": 5}})]) as srv:
        gw = make_gateway(srv, tmp_path)
        res = gw.chat(req(schema=None))
    assert res.status == "ok" and res.parsed == "a plain answer"
    assert (res.usage.input_tokens, res.usage.output_tokens, res.usage.cached_tokens, res.usage.estimated) == (11, 3, 5, False)


def test_usage_is_estimated_with_tiktoken_when_missing(tmp_path):
    from judgelab import tokens

    with FakeChatServer([Reply("four words right here", omit_usage=True)]) as srv:
        res = make_gateway(srv, tmp_path).chat(req(schema=None))
    assert res.usage.estimated
    assert res.usage.output_tokens == tokens.count_tokens("four words right here", "fake-model")


def test_identical_requests_in_flight_pay_once(tmp_path):
    with FakeChatServer(lambda body: GOOD, latency_s=0.1) as srv:
        gw = make_gateway(srv, tmp_path, concurrency=4)
        results = gw.run_batch([req("same") for _ in range(4)])
        assert srv.n_calls == 1
    assert sum(not r.cached for r in results) == 1 and all(r.status == "ok" for r in results)


def test_run_batch_keeps_order_and_bounds_concurrency(tmp_path):
    live, peak, guard = [0], [0], threading.Lock()
    # each call waits until three are in flight together: proves the runner reaches 3 at once
    together = threading.Barrier(3, timeout=60)

    def script(body):
        with guard:
            live[0] += 1
            peak[0] = max(peak[0], live[0])
        together.wait()
        with guard:
            live[0] -= 1
        return {"score": int(body["messages"][-1]["content"].split("s")[-1]) % 5 + 1, "reason": "r"}

    with FakeChatServer(script) as srv:
        gw = make_gateway(srv, tmp_path, canary=False)
        results = gw.run_batch([req(f"s{i}") for i in range(12)], concurrency=3)
        assert srv.n_calls == 12
    assert [r.parsed.score for r in results] == [i % 5 + 1 for i in range(12)]
    assert peak[0] == 3
