"""Gateway behaviour no test used to pin down: the RPM/TPM limits are applied to real
calls, the schema's body (not only its class name) is in the cache key, and repair turns' tokens
are in the ledger. (The Retry-After cap: tests/test_gateway_flaky.py.)"""
from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, create_model

from judgelab import tokens
from judgelab.gateway import ChatRequest, Gateway, Message, Sampling
from judgelab.gateway.backends.openai_backend import OpenAIBackend
from judgelab.gateway.cache import ResponseCache
from fake_openai_server import FakeChatServer, Reply
from judgelab.gateway.limiter import RateLimiter
from judgelab.gateway.settings import resolve


class Label(BaseModel):
    label: str


class FakeClock:
    """A clock that only moves when the limiter sleeps: waits are exact numbers, not wall time."""

    def __init__(self):
        self.t = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.sleeps.append(s)
        self.t += s


def req(i, max_tokens=40) -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content=f"item {i}")], schema=Label,
                       sampling=Sampling(max_tokens=max_tokens), tags={"item": i})


def limited_gateway(srv, tmp_path, **limits) -> tuple[Gateway, FakeClock]:
    clock = FakeClock()
    backend = OpenAIBackend("fake-model", srv.base_url, compatible=True)
    gw = Gateway(backend, ResponseCache(tmp_path / "c.sqlite"), progress=False,
                 limiter=RateLimiter(clock=clock, sleep=clock.sleep, **limits))
    return gw, clock


def test_the_rpm_limit_spaces_real_calls(tmp_path):
    with FakeChatServer() as srv:
        gw, clock = limited_gateway(srv, tmp_path, rpm=2)  # a bucket of 2, refilled at one per 30 s
        results = [gw.chat(req(i)) for i in range(4)]
        assert all(r.ok for r in results) and srv.n_calls == 4
    assert clock.sleeps == [pytest.approx(30.0), pytest.approx(30.0)]  # the 3rd and 4th calls each wait for a refill


def test_the_tpm_limit_counts_prompt_and_output_budget(tmp_path):
    # each request may use its prompt (tiktoken count) plus max_tokens: with TPM equal to one
    # request's budget, the second waits a whole minute for the bucket to refill
    budget = tokens.count_message_tokens([{"role": "user", "content": "item 0"}], "fake-model") + 40
    with FakeChatServer() as srv:
        gw, clock = limited_gateway(srv, tmp_path, tpm=budget)
        assert gw.chat(req(0)).ok and gw.chat(req(1)).ok  # "item 0" and "item 1": the same token count
    assert clock.sleeps == [pytest.approx(60.0)]


def test_rpm_and_tpm_settings_reach_the_gateways_limiter(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_RPM", "30")
    monkeypatch.setenv("JUDGELAB_TPM", "9000")
    s = resolve("openai-compatible", base_url="http://127.0.0.1:1/v1", model="m", cache_path=tmp_path / "c.sqlite")
    assert (s.rpm, s.tpm) == (30.0, 9000.0)
    gw = Gateway.from_settings(backend="openai-compatible", model="m", base_url="http://127.0.0.1:1/v1",
                               cache_path=tmp_path / "c.sqlite", progress=False)
    limiter = gw.fresh.sender.limiter  # the part that waits before each call
    assert limiter.active
    assert (limiter._requests.capacity, limiter._tokens.capacity) == (30.0, 9000.0)


def verdict(scale: int) -> type[BaseModel]:
    """A class named ``Verdict`` whose body (the score's scale) is the argument."""
    return create_model("Verdict", score=(Literal[tuple(range(1, scale + 1))], ...))


def test_the_schema_body_is_in_the_cache_key_not_only_its_name(tmp_path):
    five, ten, ten_again = verdict(5), verdict(10), verdict(10)
    assert five.__name__ == ten.__name__ == "Verdict" and ten is not ten_again
    with FakeChatServer() as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite", progress=False)

        def ask(schema):
            return gw.chat(ChatRequest(messages=[Message(role="user", content="rate")], schema=schema))

        a, b, c = ask(five), ask(ten), ask(ten_again)
        assert srv.n_calls == 2  # same name, other body: asked again; same body: from the cache
    assert a.key != b.key == c.key and not b.cached and c.cached


def test_repair_turns_tokens_are_in_the_ledger(tmp_path):
    replies = [Reply('{"nope": 1}', usage={"prompt_tokens": 11, "completion_tokens": 5}),
               Reply('{"label": 7}', usage={"prompt_tokens": 40, "completion_tokens": 6}),
               Reply('{"label": "x"}', usage={"prompt_tokens": 90, "completion_tokens": 4})]
    with FakeChatServer(replies) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite", progress=False)
        res = gw.chat(req(0))
        assert srv.n_calls == 3
    assert res.ok and res.n_repairs == 2
    (row,) = gw.ledger_frame().to_dict("records")
    assert (row["input_tokens"], row["output_tokens"]) == (11 + 40 + 90, 5 + 6 + 4)
    assert row["n_repairs"] == 2 and not row["estimated"]


def test_a_failure_after_repairs_keeps_every_turns_tokens(tmp_path):
    bad = Reply('{"nope": 1}', usage={"prompt_tokens": 10, "completion_tokens": 2})
    with FakeChatServer(default=bad) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="gpt-4.1-mini", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite", progress=False)
        res = gw.chat(req(0))
    assert res.status == "failed" and res.n_repairs == 2
    (row,) = gw.ledger_frame().to_dict("records")
    assert (row["input_tokens"], row["output_tokens"]) == (30, 6)
    price = gw.ledger.prices.lookup("gpt-4.1-mini")
    assert row["spent_usd"] == (30 * price.input + 6 * price.output) / 1e6  # a failed call is paid all the same
