"""A breaker that tells dead from flaky, Retry-After beyond the cap, and errors that name their
endpoint, against the fake server: connections dropped before a response or cut in the
middle of one, a server answering 500 forever, a quota 429 with ``Retry-After: 3600``."""
from __future__ import annotations

import random
import threading

import httpx
import openai
import pytest
from pydantic import BaseModel

from judgelab.gateway import ChatRequest, Gateway, Message, RetryPolicy, Sampling
from judgelab.gateway.backends.openai_backend import classify_connection_error
from judgelab.gateway.errors import EndpointUnreachableError, RetryAfterBeyondCapError, TransientError
from fake_openai_server import FakeChatServer, Fault
from judgelab.gateway.types import Failure


@pytest.fixture(autouse=True)
def _no_canary(monkeypatch):
    """These tests count the calls of the path they test (batches, retries, the breaker); the
    canary per request shape that precedes a fan-out is tested in test_gateway_canary.py."""
    monkeypatch.setenv("JUDGELAB_CANARY", "0")



class Label(BaseModel):
    label: str


def req(i) -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content=f"item {i}")], schema=Label,
                       sampling=Sampling(max_tokens=32), tags={"item": i})


class Sleeps(list):
    """Records the retry waits instead of sleeping (no wall-clock in tests)."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def policy(**kw) -> RetryPolicy:
    return RetryPolicy(**{"max_attempts": 6, "base_s": 0.01, "rng": random.Random(1), "sleep": Sleeps(), **kw})


def gateway(srv, tmp_path, **kw) -> Gateway:
    return Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                 cache_path=tmp_path / "c.sqlite", progress=False, **kw)


def first_attempts_fail(*faults):
    """Each item's first attempts meet ``faults`` in turn, then it is answered."""
    seen: dict[str, int] = {}
    lock = threading.Lock()

    def script(body):
        text = body["messages"][-1]["content"]
        with lock:
            n = seen[text] = seen.get(text, 0) + 1
        return faults[n - 1] if n <= len(faults) else {"label": text}

    return script


# -- dead or flaky ---------------------------------------------------------------------------------
def test_dropped_and_cut_responses_are_retried_and_never_open_the_breaker(tmp_path):
    # every item's first call is dropped without a response, its second cut half way through the
    # body: with 8 threads the first 16 calls all fail, far past the breaker's limit of 3
    with FakeChatServer(first_attempts_fail(Fault.disconnect(), Fault.cut_body())) as srv:
        gw = gateway(srv, tmp_path, retry=policy(), concurrency=8)
        results = gw.run_batch([req(i) for i in range(16)])
        assert srv.n_calls == 48
    assert all(r.ok for r in results) and [r.n_attempts for r in results] == [3] * 16
    assert not gw.fresh.sender.breaker.is_open and gw.fresh.sender.breaker.failures == 0


def test_a_response_dropped_every_time_fails_the_item_as_dropped(tmp_path):
    with FakeChatServer(default=Fault.cut_body()) as srv:
        gw = gateway(srv, tmp_path, retry=policy(max_attempts=3))
        res = gw.chat(req(1))
        assert srv.n_calls == 3
    assert res.status == "failed" and res.n_attempts == 3 and not gw.fresh.sender.breaker.is_open
    assert res.failure_detail == Failure(kind="dropped", url=gw.base_url, model="fake-model")
    assert gw.base_url in res.error and "cut before the reply was complete" in res.error


def test_a_dead_endpoint_still_opens_the_breaker(tmp_path):
    srv = FakeChatServer().start()
    url = srv.base_url
    srv.stop()  # nothing listens on the port: connection refused
    gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=url,
                               cache_path=tmp_path / "c.sqlite", progress=False, retry=policy())
    with pytest.raises(EndpointUnreachableError, match=r"could not connect on 3 consecutive calls") as err:
        gw.run_batch([req(i) for i in range(8)], concurrency=1)
    assert err.value.url == url and url in str(err.value)


def request_to(url="http://127.0.0.1:9/v1") -> httpx.Request:
    return httpx.Request("POST", url + "/chat/completions")


def raised_from(exc: openai.APIConnectionError, cause: BaseException) -> openai.APIConnectionError:
    exc.__cause__ = cause
    return exc


@pytest.mark.parametrize("cause,kind,connect,timed_out", [
    (httpx.ConnectError("[Errno 111] Connection refused"), "connect", True, False),
    (httpx.ConnectError("[Errno -2] Name or service not known"), "connect", True, False),   # DNS
    (httpx.RemoteProtocolError("Server disconnected without sending a response."), "dropped", False, False),
    (httpx.ReadError("[Errno 104] Connection reset by peer"), "dropped", False, False),
])
def test_connection_errors_are_classified_by_phase(cause, kind, connect, timed_out):
    err = classify_connection_error(raised_from(openai.APIConnectionError(request=request_to()), cause),
                                    "http://127.0.0.1:9/v1", "m")
    assert (err.kind, err.connection_failed, err.timed_out) == (kind, connect, timed_out)
    assert err.url == "http://127.0.0.1:9/v1" and err.model == "m"


@pytest.mark.parametrize("cause,kind,connect,timed_out", [
    (httpx.ConnectTimeout("timed out"), "connect", True, False),   # never reached a server: not billed
    (httpx.ReadTimeout("timed out"), "timeout", False, True),      # the server may still bill it
])
def test_timeouts_are_classified_by_phase(cause, kind, connect, timed_out):
    err = classify_connection_error(raised_from(openai.APITimeoutError(request=request_to()), cause), "u", "m")
    assert (err.kind, err.connection_failed, err.timed_out) == (kind, connect, timed_out)


def test_the_breaker_ignores_what_is_not_a_failure_to_connect():
    from judgelab.gateway.retry import CircuitBreaker

    breaker = CircuitBreaker("http://x/v1", limit=2)
    breaker.record_failure(TransientError("refused", connection_failed=True))
    breaker.record_failure(TransientError("cut", kind="dropped"))  # closes the count, as an answer does
    breaker.record_failure(TransientError("refused", connection_failed=True))
    assert not breaker.is_open and breaker.failures == 1


# -- Retry-After -------------------------------------------------------------------------------------
def test_a_retry_after_beyond_the_cap_fails_the_item_at_once_with_the_servers_reason(tmp_path):
    with FakeChatServer(default=Fault.quota(retry_after=3600)) as srv:
        retry = policy()
        gw = gateway(srv, tmp_path, retry=retry)
        res = gw.chat(req(1))
        assert srv.n_calls == 1  # not 6 calls after 5 waits of the 300 s cap (25 minutes)
    assert retry.sleep == []
    assert res.status == "failed" and res.n_attempts == 1
    assert "You exceeded your current quota" in res.error and "3600 s" in res.error and "300 s" in res.error
    assert res.failure_detail == Failure(kind="retry_after_beyond_cap", status=429, url=gw.base_url, model="fake-model")


def test_a_retry_after_within_the_cap_is_waited_for_exactly():
    sleeps = Sleeps()
    pol = RetryPolicy(max_attempts=3, base_s=1.0, retry_after_cap_s=30.0, rng=random.Random(0), sleep=sleeps)
    calls = []

    def answer_after(retry_after):
        def fn():
            calls.append(1)
            if len(calls) == 1:
                raise TransientError("HTTP 429: slow down", retry_after=retry_after, status=429)
            return "ok"
        return fn

    assert pol.call(answer_after(30.0)) == ("ok", 2)  # at the cap: waited for (plus < 0.1 s jitter)
    assert 30.0 <= sleeps[0] < 30.1
    calls.clear()
    with pytest.raises(RetryAfterBeyondCapError, match=r"30\.5 s .*beyond the retry cap of 30 s") as err:
        pol.call(answer_after(30.5))
    assert len(calls) == 1 and len(sleeps) == 1 and err.value.attempts == 1 and err.value.status == 429


# -- errors that repeat on every item name URL and model ---------------------------------------------
@pytest.mark.parametrize("fault,attempts", [
    (Fault.server_error(500), 4),
    (Fault.status(401, "Incorrect API key provided"), 1),
    (Fault.status(404, "The model `fake-model` does not exist"), 1),
], ids=["500-forever", "401", "404"])
def test_errors_that_repeat_on_every_item_name_the_url_and_model_and_group(tmp_path, fault, attempts):
    with FakeChatServer(default=fault) as srv:
        gw = gateway(srv, tmp_path, retry=policy(max_attempts=4))
        results = gw.run_batch([req(i) for i in range(3)], concurrency=1)
        assert srv.n_calls == 3 * attempts
    for res in results:
        assert res.status == "failed" and gw.base_url in res.error and "fake-model" in res.error
        assert f"HTTP {fault.status}" in res.error and fault.message in res.error
    # what a fan-out groups by: the same signature on every item
    assert {r.failure_detail for r in results} == {Failure(kind="http", status=fault.status, url=gw.base_url,
                                                    model="fake-model")}
    assert {r.failure_detail.signature for r in results} == {("http", fault.status)}
