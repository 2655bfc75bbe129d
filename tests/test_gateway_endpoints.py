"""Replay anywhere (no key, no network, no model load), endpoints (OPENAI_BASE_URL, the circuit
breaker, errors that are not retried) and the key kept out of every written file."""
from __future__ import annotations

import json
import random
import threading

import pandas as pd
import pytest
from pydantic import BaseModel

from judgelab.gateway import ChatRequest, Gateway, Message, ReplayMissError, RetryPolicy, Sampling
from judgelab.gateway.retry import CircuitBreaker
from judgelab.gateway.cache import canonical_request
from judgelab.gateway.errors import EndpointUnreachableError, TransientError
from fake_openai_server import FakeChatServer, Fault
from judgelab.gateway.redact import MASK, redact
from judgelab.gateway.settings import endpoint_identity, resolve

DUMMY_KEY = "sk-dummy-key-for-filling-the-cache-0000"


class Label(BaseModel):
    label: str


def req(i, content=None, **kw) -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content=content or f"item {i}")], schema=Label,
                       sampling=Sampling(max_tokens=32), tags={"item": i, **kw.pop("tags", {})}, **kw)


def echo(body):
    return {"label": body["messages"][-1]["content"]}


class Sleeps(list):
    """Records the retry waits instead of sleeping (no wall-clock in tests)."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def quick_retry(max_attempts=6) -> RetryPolicy:
    return RetryPolicy(max_attempts=max_attempts, base_s=0.01, rng=random.Random(1), sleep=Sleeps())


@pytest.fixture
def clean_env(monkeypatch):
    for var in ("OPENAI_API_KEY", "JUDGELAB_API_KEY", "OPENAI_BASE_URL", "JUDGELAB_BACKEND", "JUDGELAB_MODEL",
                "JUDGELAB_BASE_URL", "JUDGELAB_CACHE_MODE", "JUDGELAB_CACHE_ENDPOINT"):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


# -- replay anywhere -----------------------------------------------------------------------------
def test_openai_cache_replays_with_no_key_and_no_server(tmp_path, clean_env):
    path = tmp_path / "c.sqlite"
    clean_env.setenv("JUDGELAB_API_KEY", DUMMY_KEY)  # the fake server's key (OPENAI_API_KEY: OpenAI's URL only)
    with FakeChatServer(echo) as srv:
        filled = Gateway.from_settings(backend="openai", model="gpt-4.1", base_url=srv.base_url, cache_path=path,
                                       progress=False).run_batch([req(i) for i in range(3)])
        url = srv.base_url
        assert srv.n_calls == 3
    # the server is gone and so is the key: a fresh gateway configured from the environment alone
    clean_env.delenv("JUDGELAB_API_KEY")
    for var, value in {"JUDGELAB_CACHE_MODE": "replay", "JUDGELAB_BACKEND": "openai",
                       "JUDGELAB_MODEL": "gpt-4.1", "OPENAI_BASE_URL": url}.items():
        clean_env.setenv(var, value)
    gw = Gateway.from_settings(cache_path=path, progress=False)
    assert gw.backend.api_key is None and gw.backend.identity()["base_url"] == endpoint_identity(url)
    replayed = gw.run_batch([req(i) for i in range(3)])
    assert all(r.cached and r.status == "ok" for r in replayed)
    assert [r.parsed for r in replayed] == [r.parsed for r in filled] == [Label(label=f"item {i}") for i in range(3)]
    with pytest.raises(ReplayMissError, match=r"item=9"):
        gw.chat(req(9))
    assert gw.backend._client is None  # no client was ever built, so nothing could be sent


def test_openai_without_key_still_fails_fast_outside_replay(tmp_path, clean_env):
    from judgelab.gateway import ConfigError

    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        Gateway.from_settings(backend="openai", model="gpt-4.1", cache_path=tmp_path / "c.sqlite")


def test_llamacpp_replay_never_constructs_the_model(tmp_path, monkeypatch):
    import llama_cpp

    from judgelab.gateway.backends import llamacpp

    def refuse(*args, **kwargs):
        raise AssertionError("llama_cpp.Llama constructed in replay mode")

    monkeypatch.setattr(llama_cpp, "Llama", refuse)
    monkeypatch.setattr(llamacpp, "_MODELS", {})  # a model another test loaded must not hide a load
    gw = Gateway.from_settings(backend="llamacpp", cache_mode="replay", cache_path=tmp_path / "c.sqlite", progress=False)
    cached = req(1)
    gw.cache.put({  # an entry as a live call writes it, under the backend's own identity
        "key": gw.key(cached), "request": canonical_request(gw.backend.identity(), cached), "text": '{"label": "x"}',
        "parsed": {"label": "x"}, "usage": {"input_tokens": 5, "output_tokens": 3}, "latency_s": 0.1,
        "reported_model": gw.model_name, "backend": "llamacpp", "model": gw.model_name, "created_at": 0.0,
    })
    (res,) = gw.run_batch([cached])
    assert res.cached and res.parsed == Label(label="x") and gw.is_embedded_small_model
    with pytest.raises(ReplayMissError, match="item=2"):
        gw.chat(req(2))
    assert gw.backend._llama is None


def test_llamacpp_replay_counts_tokens_with_the_vocabulary_alone(tmp_path, monkeypatch):
    # callers size prompts with count_tokens (the SAGE runner does), so replay must count without
    # loading the weights: only a vocab_only Llama may be built
    import llama_cpp

    from judgelab.gateway.backends import llamacpp

    real = llama_cpp.Llama

    def vocab_only(*args, **kwargs):
        assert kwargs.get("vocab_only") is True, "the weights were loaded in replay mode"
        return real(*args, **kwargs)

    monkeypatch.setattr(llama_cpp, "Llama", vocab_only)
    monkeypatch.setattr(llamacpp, "_MODELS", {})
    monkeypatch.setattr(llamacpp, "_VOCABS", {})
    gw = Gateway.from_settings(backend="llamacpp", cache_mode="replay", cache_path=tmp_path / "c.sqlite", progress=False)
    assert gw.backend.count_tokens("Hello world") == 2  # SmolLM2's BPE: "Hello", " world"
    assert gw.backend._llama is None and len(llamacpp._VOCABS) == 1


# -- endpoints -----------------------------------------------------------------------------------
def test_openai_backend_honours_openai_base_url_and_judgelab_base_url_wins(tmp_path, clean_env):
    clean_env.setenv("JUDGELAB_API_KEY", DUMMY_KEY)
    with FakeChatServer(echo) as a, FakeChatServer(echo) as b:
        clean_env.setenv("OPENAI_BASE_URL", a.base_url)
        clean_env.setenv("JUDGELAB_CACHE_ENDPOINT", "url")  # a and b differ by their port alone
        gw = Gateway.from_settings(backend="openai", model="gpt-4.1", cache_path=tmp_path / "c.sqlite", progress=False)
        assert gw.base_url == gw.backend.identity()["base_url"] == a.base_url
        assert gw.chat(req(1)).status == "ok" and (a.n_calls, b.n_calls) == (1, 0)
        clean_env.setenv("JUDGELAB_BASE_URL", b.base_url)
        gw = Gateway.from_settings(backend="openai", model="gpt-4.1", cache_path=tmp_path / "c.sqlite", progress=False)
        assert gw.backend.identity()["base_url"] == b.base_url
        assert not gw.chat(req(1)).cached and (a.n_calls, b.n_calls) == (1, 1)  # another endpoint, another key
    clean_env.delenv("JUDGELAB_BASE_URL")
    # OPENAI_BASE_URL alone does not switch the default backend (only JUDGELAB_BASE_URL does)
    assert resolve(cache_path=tmp_path / "c.sqlite").backend == "llamacpp"


def dead_url() -> str:
    """The base URL of a fake server that has been stopped: nothing listens on its port."""
    srv = FakeChatServer().start()
    url = srv.base_url
    srv.stop()
    return url


def counting(gw: Gateway) -> list[int]:
    """Count the backend's attempts (a dead port cannot count them itself)."""
    calls, lock, complete = [0], threading.Lock(), gw.backend.complete

    def counted(*args, **kwargs):
        with lock:
            calls[0] += 1
        return complete(*args, **kwargs)

    gw.backend.complete = counted
    return calls


@pytest.mark.parametrize("concurrency", [1, 4])
def test_dead_endpoint_stops_the_run_after_the_breaker_limit(tmp_path, concurrency):
    url = dead_url()
    gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=url, cache_path=tmp_path / "c.sqlite",
                               retry=quick_retry(max_attempts=6), progress=False)
    calls = counting(gw)
    with pytest.raises(EndpointUnreachableError) as err:
        gw.run_batch([req(i) for i in range(32)], concurrency=concurrency)
    limit = gw.fresh.sender.breaker.limit
    assert limit == 3 and url in str(err.value) and f"{limit} consecutive" in str(err.value)
    # at most the limit, plus the attempts already in flight on the other workers when it opened
    # (without the breaker: 32 items x 6 attempts = 192)
    assert limit <= calls[0] <= limit + concurrency - 1
    with pytest.raises(EndpointUnreachableError):  # and it stays open: no further attempt at all
        gw.chat(req(99))
    assert calls[0] <= limit + concurrency - 1


def test_breaker_counts_only_consecutive_connection_failures():
    breaker = CircuitBreaker("http://x/v1", limit=3)
    down = TransientError("refused", connection_failed=True)
    for _ in range(5):  # failure, failure, answer: never three in a row
        breaker.record_failure(down)
        breaker.record_failure(down)
        breaker.record_success()
    assert not breaker.is_open
    breaker.record_failure(down)
    breaker.record_failure(down)
    with pytest.raises(EndpointUnreachableError, match=r"http://x/v1.*3 consecutive"):
        breaker.record_failure(down)
    breaker.record_success()  # an open breaker stays open for the run
    with pytest.raises(EndpointUnreachableError):
        breaker.check()


LLAMACPP_FORM = "Input should be 'text' or 'json_object'"


@pytest.mark.parametrize("fault,attempts", [
    (Fault.status(400, "bad request"), 1),
    (Fault.status(401, "invalid key"), 1),
    (Fault.status(403, "forbidden"), 1),
    (Fault.status(404, "no such model"), 1),
    (Fault.status(422, "unprocessable entity"), 1),
    (Fault.status(500, LLAMACPP_FORM), 1),     # llama.cpp server given the json_schema form: will repeat
    (Fault.server_error(500), 4),              # an ordinary 500 may pass: retried up to max_attempts
    (Fault.server_error(503), 4),
], ids=["400", "401", "403", "404", "422", "500-form-rejected", "500", "503"])
def test_errors_that_will_repeat_are_tried_once(tmp_path, fault, attempts):
    with FakeChatServer(lambda body: fault) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite", retry=quick_retry(max_attempts=4), progress=False)
        res = gw.chat(req("x"))
        assert srv.n_calls == attempts
    assert res.status == "failed" and res.n_attempts == attempts
    assert f"HTTP {fault.status}" in res.error and "item=x" in res.error
    assert not gw.fresh.sender.breaker.is_open  # the server answered: not a dead endpoint


# -- keys ------------------------------------------------------------------------------------------
def test_redact_walks_text_and_containers():
    key = "sk-abcdefgh12345678"
    value = {"a": f"Bearer {key}", key: [1, None, (f"x{key}y", 2.5)], "n": 3}
    assert redact(value, [key]) == {"a": f"Bearer {MASK}", MASK: [1, None, (f"x{MASK}y", 2.5)], "n": 3}
    assert redact("no secret here", [key]) == "no secret here" and redact("abc", []) == "abc"


def test_the_key_is_in_no_file_under_the_output_root(tmp_path, clean_env):
    key = "sk-test-echoed-in-401-0123456789abcdef"
    clean_env.setenv("JUDGELAB_API_KEY", key)  # the key this (non-OpenAI) host is given
    clean_env.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))

    def script(body):
        text = body["messages"][-1]["content"]
        return Fault.echo_authorization(401) if text == "check auth" else {"label": text}  # echoes the key back

    requests = [req("auth", content="check auth"),
                req("pasted", content=f"my key is {key}", tags={"note": f"key={key}"})]
    with FakeChatServer(script) as srv:
        # canary off: the refused first request must be a failure row here, not a stop (gateway.canary)
        gw = Gateway.from_settings(backend="openai", model="gpt-4.1", base_url=srv.base_url, progress=False, canary=False)
        denied, echoed = gw.run_batch(requests, concurrency=1)
        assert srv.n_calls == 2
        # what a notebook writes: the failures table, the ledger, the exported cache
        pd.DataFrame([r.model_dump(mode="json") for r in (denied, echoed)]).to_csv(tmp_path / "failures.csv")
        gw.ledger_frame().to_csv(tmp_path / "ledger.csv")
        gw.cache.export_jsonl(tmp_path / "export.jsonl")
        again = gw.chat(requests[1])
        gw.close()
    assert denied.status == "failed" and "HTTP 401" in denied.error and f"Bearer {MASK}" in denied.error
    assert echoed.status == "ok" and echoed.parsed == Label(label=f"my key is {MASK}")
    assert again.cached and again.parsed == echoed.parsed  # the cached answer is the redacted one
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {"llm_cache.sqlite", "failures.csv", "ledger.csv", "export.jsonl"} <= {p.name for p in files}
    assert any("transcripts" in p.parts for p in files)
    for p in files:
        assert key.encode() not in p.read_bytes(), p
    stored = json.loads((tmp_path / "export.jsonl").read_text().splitlines()[0])
    assert MASK in stored["request"]["messages"][0]["content"] and MASK in stored["tags"]["note"]
