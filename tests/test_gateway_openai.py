"""The ``openai`` backend's request shape, context pre-check, ledger costs, map() and the CLI."""
from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field

from judgelab.gateway import ChatRequest, ConfigError, Gateway, Message, Sampling
from judgelab.gateway.__main__ import main as cli
from fake_openai_server import FakeChatServer, Reply
from judgelab.gateway.reasoning import REASONING_ALLOWANCE

KEY = "sk-test-openai-backend-key-000000"


class Rating(BaseModel):
    score: int = Field(ge=1, le=3)
    why: str = Field(max_length=80)


def req(text="a story", **kw) -> ChatRequest:
    kw.setdefault("sampling", Sampling(temperature=0.3, top_p=0.9, seed=7, max_tokens=50, reasoning_effort="medium"))
    return ChatRequest(messages=[Message(role="system", content="judge"), Message(role="user", content=text)],
                       schema=Rating, tags={"study": "narr", "item": text[:10]}, **kw)


@pytest.fixture
def openai_env(monkeypatch):
    # the fake server is not OpenAI's own URL: it gets JUDGELAB_API_KEY, never OPENAI_API_KEY
    monkeypatch.setenv("JUDGELAB_API_KEY", KEY)


def openai_gw(srv, tmp_path, model, **kw) -> Gateway:
    return Gateway.from_settings(backend="openai", model=model, base_url=srv.base_url, cache_path=tmp_path / "c.sqlite",
                                 progress=False, **kw)


def test_reasoning_model_gets_effort_and_no_temperature(tmp_path, openai_env):
    with FakeChatServer() as srv:
        res = openai_gw(srv, tmp_path, "gpt-5-mini").chat(req())
        body = srv.calls[0]
    assert res.status == "ok"
    # the budget as sent: the request's 50 + the reasoning allowance of its effort (gateway.reasoning)
    assert body["reasoning_effort"] == "medium" and body["max_completion_tokens"] == 50 + REASONING_ALLOWANCE["medium"]
    assert "temperature" not in body and "top_p" not in body and body["seed"] == 7
    rf = body["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["strict"] is True
    schema = rf["json_schema"]["schema"]
    assert schema["additionalProperties"] is False and schema["required"] == ["score", "why"]
    assert schema["properties"]["score"]["enum"] == [1, 2, 3]


def test_chat_model_gets_temperature_and_no_effort(tmp_path, openai_env):
    with FakeChatServer() as srv:
        openai_gw(srv, tmp_path, "gpt-4.1").chat(req())
        body = srv.calls[0]
    assert body["temperature"] == 0.3 and body["top_p"] == 0.9 and "reasoning_effort" not in body
    assert srv.calls[0]["model"] == "gpt-4.1"


def test_openai_backend_needs_key_and_model(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        Gateway.from_settings(backend="openai", model="gpt-4.1", cache_path=tmp_path / "c.sqlite")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with pytest.raises(ConfigError, match="JUDGELAB_MODEL"):
        Gateway.from_settings(backend="openai", cache_path=tmp_path / "c.sqlite")
    with pytest.raises(ConfigError, match="unknown backend"):
        Gateway.from_settings(backend="gemini", cache_path=tmp_path / "c.sqlite")


def test_environment_configures_the_gateway(tmp_path, monkeypatch):
    with FakeChatServer(model="served-model") as srv:
        monkeypatch.setenv("JUDGELAB_BASE_URL", srv.base_url)   # a base URL alone implies openai-compatible
        monkeypatch.setenv("JUDGELAB_CACHE_MODE", "replay")
        monkeypatch.setenv("JUDGELAB_CONCURRENCY", "3")
        gw = Gateway.from_settings(cache_path=tmp_path / "c.sqlite")
    assert (gw.backend_name, gw.model_name, gw.cache_mode, gw.concurrency) == ("openai-compatible", "served-model", "replay", 3)
    assert not gw.is_embedded_small_model


def test_context_precheck_and_costs_from_an_edited_price_table(tmp_path, openai_env):
    prices = tmp_path / "prices.csv"
    prices.write_text("# test prices\nmodel,input,cached_input,output,context_window\ntiny-model,2.0,1.0,8.0,120\n")
    story = " ".join(f"word{i}" for i in range(300))
    usage = {"prompt_tokens": 100, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 40}}
    with FakeChatServer([Reply({"score": 2, "why": "ok"}, usage=usage)]) as srv:
        gw = openai_gw(srv, tmp_path, "tiny-model", price_table=prices)
        over = gw.chat(req(story))
        assert srv.n_calls == 0  # refused before paying
        cut = gw.chat(req(story, truncation="head_tail"))
        assert srv.n_calls == 1
    assert over.status == "failed" and "context overflow" in over.error and "item=word0 wor" in over.error
    assert cut.status == "ok" and cut.truncated
    row = gw.ledger_frame().iloc[-1]
    assert row["cost_usd"] == pytest.approx((60 * 2.0 + 40 * 1.0 + 10 * 8.0) / 1e6)
    assert row["spent_usd"] == row["cost_usd"] and not row["estimated"]
    ledger = gw.ledger_frame()
    assert len(ledger) == 2 and (ledger["status"] == "failed").sum() == 1


def test_map_runs_conversations_and_keeps_prefix_order(tmp_path):
    with FakeChatServer(lambda body: {"score": len(body["messages"]) // 2, "why": "turns"}) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite", progress=False)

        def conversation(item):
            msgs = [Message(role="system", content="judge"), Message(role="user", content=f"story {item}")]
            first = gw.chat(ChatRequest(messages=msgs, schema=Rating, tags={"item": item, "turn": 1}))
            msgs += [Message(role="assistant", content=first.text), Message(role="user", content="again?")]
            second = gw.chat(ChatRequest(messages=msgs, schema=Rating, tags={"item": item, "turn": 2}))
            return item, first.parsed.score, second.parsed.score

        out = gw.map(conversation, range(5), concurrency=3)
        assert out == [(i, 1, 2) for i in range(5)] and srv.n_calls == 10
        # the follow-up turn starts with the first turn's messages unchanged (prefix reuse)
        firsts = {json.dumps(c["messages"]) for c in srv.calls if len(c["messages"]) == 2}
        assert all(json.dumps(c["messages"][:2]) in firsts for c in srv.calls if len(c["messages"]) == 4)
        assert gw.map(conversation, range(5)) == out and srv.n_calls == 10  # all from the cache


def test_cli_stats_export_import(tmp_path, capsys):
    with FakeChatServer() as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "a.sqlite", progress=False)
        gw.run_batch([req(f"s{i}") for i in range(4)])
    assert cli(["--cache", str(tmp_path / "a.sqlite"), "stats"]) == 0
    assert json.loads(capsys.readouterr().out)["entries"] == 4
    assert cli(["--cache", str(tmp_path / "a.sqlite"), "export", str(tmp_path / "x.jsonl")]) == 0
    assert cli(["--cache", str(tmp_path / "b.sqlite"), "import", str(tmp_path / "x.jsonl")]) == 0
    assert "imported 4 new entries" in capsys.readouterr().out
    assert cli(["--cache", str(tmp_path / "missing.sqlite"), "stats"]) == 1


def test_transcript_records_the_repair_conversation(tmp_path):
    with FakeChatServer(['{"score": 9, "why": "x"}', {"score": 3, "why": "fixed"}]) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite", progress=False)
        gw.chat(req("s1"))
        gw.close()
    (line,) = gw.transcripts.path.read_text().splitlines()
    rec = json.loads(line)
    assert rec["status"] == "ok" and rec["parsed"] == {"score": 3, "why": "fixed"}
    assert [r["error"] is None for r in rec["replies"]] == [False, True]
    assert rec["messages"][-2]["content"] == '{"score": 9, "why": "x"}' and rec["tags"]["item"] == "s1"
