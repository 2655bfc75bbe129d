"""Reasoning models: the sampling as sent, against the local server's emulation
of OpenAI's documented rules (hidden reasoning drawn from ``max_completion_tokens`` first,
``temperature``/``top_p`` rejected), and the narrative judges on an emulated gpt-5-mini."""
from __future__ import annotations

import pandas as pd
import pytest
from pydantic import BaseModel

from judgelab.gateway import ChatRequest, Gateway, Message, ResponseCache, Sampling
from judgelab.gateway.backends.openai_backend import OpenAIBackend
from judgelab.gateway.canary import FanOutStopped
from judgelab.gateway.errors import ConfigError
from fake_openai_server import FakeChatServer, ReasoningRules
from judgelab.gateway.reasoning import REASONING_ALLOWANCE, ReasoningPolicy, lowest_effort, sent_sampling
from judgelab.gateway.retry import RetryPolicy

KEY = "sk-test-reasoning-0000"


class Verdict(BaseModel):
    score: int


def openai_gateway(srv, tmp_path, model="gpt-5-mini", **kw) -> Gateway:
    """The ``openai`` backend (reasoning rules apply) pointed at the local server."""
    be = OpenAIBackend(model, srv.base_url, api_key=KEY)
    tmp_path.mkdir(parents=True, exist_ok=True)
    return Gateway(be, ResponseCache(tmp_path / f"{model}.sqlite"), progress=False, secrets=(KEY,),
                   retry=RetryPolicy(max_attempts=1), **kw)


def ask(score_budget: int = 16, **sampling) -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content="rate the story")], schema=Verdict,
                       sampling=Sampling(max_tokens=score_budget, **sampling), tags={"item": "s1"})


# ---------------------------------------------------------------- the emulator's rules

def test_the_emulator_spends_hidden_reasoning_from_the_budget_first():
    """Known answers of ReasoningRules: medium (the default when no effort is sent) = 800 hidden
    tokens; a 64-token budget is all reasoning; minimal (0) leaves the reply whole."""
    import openai

    with FakeChatServer(default='{"score": 7}', reasoning=ReasoningRules()) as srv:
        client = openai.OpenAI(api_key=KEY, base_url=srv.base_url, max_retries=0)
        msgs = [{"role": "user", "content": "rate"}]
        cut = client.chat.completions.create(model="gpt-5-mini", messages=msgs, max_completion_tokens=64)
        assert cut.choices[0].message.content == "" and cut.choices[0].finish_reason == "length"
        assert cut.usage.completion_tokens == 64 and cut.usage.completion_tokens_details.reasoning_tokens == 64
        whole = client.chat.completions.create(model="gpt-5-mini", messages=msgs, max_completion_tokens=64,
                                               reasoning_effort="minimal")
        assert whole.choices[0].message.content == '{"score": 7}' and whole.choices[0].finish_reason == "stop"
        assert whole.usage.completion_tokens == 2  # two words, no reasoning
        roomy = client.chat.completions.create(model="gpt-5-mini", messages=msgs, max_completion_tokens=900)
        assert roomy.usage.completion_tokens == 802 and roomy.choices[0].finish_reason == "stop"
        with pytest.raises(openai.BadRequestError, match="temperature"):
            client.chat.completions.create(model="gpt-5-mini", messages=msgs, temperature=0.3,
                                           max_completion_tokens=900)
        with pytest.raises(openai.BadRequestError, match="max_completion_tokens"):
            client.chat.completions.create(model="o3-mini", messages=msgs, max_tokens=900)
        # a non-reasoning model is answered as before
        plain = client.chat.completions.create(model="gpt-4.1", messages=msgs, temperature=0.3, max_completion_tokens=8)
        assert plain.choices[0].message.content == '{"score": 7}'


# ---------------------------------------------------------------- the sampling as sent

def test_sent_sampling_adds_the_allowance_and_drops_temperature():
    design = Sampling(temperature=0.3, top_p=0.9, seed=4, max_tokens=64)
    sent = sent_sampling(design, "openai", "gpt-5-mini")
    assert (sent.temperature, sent.top_p, sent.seed) == (None, None, 4)
    assert sent.reasoning_effort == "minimal" and sent.max_tokens == 64 + REASONING_ALLOWANCE["minimal"]
    # the study's default fills a request that states none; the request's own beats the default;
    # the override beats both
    assert sent_sampling(design, "openai", "gpt-5-mini", ReasoningPolicy(default="medium")).max_tokens == 64 + 25_000
    stated = design.model_copy(update={"reasoning_effort": "low"})
    assert sent_sampling(stated, "openai", "gpt-5-mini", ReasoningPolicy(default="medium")).reasoning_effort == "low"
    assert sent_sampling(stated, "openai", "gpt-5-mini", ReasoningPolicy("medium", "high")).max_tokens == 64 + 50_000
    assert lowest_effort("o3-mini") == "low" and sent_sampling(design, "openai", "o4-mini").reasoning_effort == "low"
    # non-reasoning models, and any model on an OpenAI-compatible server, get the design as it is
    for backend, model in (("openai", "gpt-4.1"), ("openai", "gpt-5-chat-latest"), ("openai-compatible", "gpt-5-mini"),
                           ("llamacpp", "SmolLM2-135M-Instruct-Q8_0")):
        assert sent_sampling(design, backend, model) == design
    with pytest.raises(ConfigError, match="reasoning effort"):
        ReasoningPolicy(default="maximal")


def test_the_gateway_sends_records_and_keys_the_sampling_as_sent(tmp_path):
    with FakeChatServer(default='{"score": 7}', reasoning=ReasoningRules()) as srv:
        gw = openai_gateway(srv, tmp_path, reasoning=ReasoningPolicy(default="medium"))
        res = gw.chat(ask(temperature=0.0))
        assert res.ok and res.parsed.score == 7 and srv.n_calls == 1
        body = srv.calls[0]
        assert "temperature" not in body and body["reasoning_effort"] == "medium"
        assert body["max_completion_tokens"] == 16 + 25_000
        assert res.sampling.max_tokens == 16 + 25_000 and res.sampling.temperature is None
        assert res.usage.output_tokens == 802  # hidden reasoning is billed output
        again = gw.chat(ask(temperature=0.0))
        assert again.cached and again.sampling == res.sampling and srv.n_calls == 1
        # another effort is another request: a new cache entry
        low = Gateway(gw.backend, gw.cache, progress=False, secrets=(KEY,), reasoning=ReasoningPolicy(override="low"))
        assert low.key(ask(temperature=0.0)) != gw.key(ask(temperature=0.0))
        assert gw.as_sent(gw.as_sent(ask())) .sampling == gw.as_sent(ask()).sampling  # idempotent


def test_an_empty_reply_cut_by_reasoning_is_not_repaired(tmp_path):
    """content="" with finish_reason length: a repair turn with the same budget buys the same."""
    rules = ReasoningRules(tokens={"minimal": 5_000, "low": 9_000, "medium": 30_000, "high": 60_000})
    with FakeChatServer(default='{"score": 7}', reasoning=rules) as srv:
        gw = openai_gateway(srv, tmp_path, canary=False)
        res = gw.chat(ask())
        assert not res.ok and srv.n_calls == 1 and res.failure == "empty" and res.finish_reason == "length"
        assert res.usage.output_tokens == 16 + REASONING_ALLOWANCE["minimal"]  # the whole budget, billed


# ---------------------------------------------------------------- the narrative judges on gpt-5-mini

def judged_paths() -> pd.DataFrame:
    rows = [{"collection": "news", "pair_id": p, "method": m, "titles": [f"Story {p}-{m}-{i}" for i in range(3)],
             "length": 3} for p in range(2) for m in ("maxcap", "random")]
    return pd.DataFrame(rows)


def judge_reply(body: dict):
    from fake_openai_server import request_schema, synthesize

    out = synthesize(request_schema(body))
    for name in ("coherence_score",):
        if name in out:
            out[name] = 6
    return out


def paper_budgets():
    from judgelab import profiles

    return profiles.knobs("narrative_judges", "paper")["max_tokens"]


def test_narrative_judges_on_gpt5_mini_before_and_after(tmp_path, monkeypatch):
    """Before: the profile's budgets sent as designed (no allowance, the API's default medium
    effort) pay every call for no score. After: the temperature design is refused before any
    call; the seed-only design gets every score, one call each; the table records what was sent."""
    from judgelab.narrative.judges.run import run_judges

    n = len(judged_paths()) * 4 * 2  # narratives x modes x agents
    with FakeChatServer(judge_reply, reasoning=ReasoningRules()) as srv:
        # before: what the gateway sent until now (sampling as designed, temperature dropped by the backend)
        monkeypatch.setattr("judgelab.gateway.lookup.sent_sampling", lambda s, *a: s.model_copy(
            update={"temperature": None, "top_p": None}))
        before = run_judges(openai_gateway(srv, tmp_path, model="gpt-5-mini", canary=False), judged_paths(), k=2,
                            max_tokens=paper_budgets(), agent_design="seed-only")
        assert srv.n_calls == n and (before["status"] == "failed").all() and before["score"].isna().all()
        monkeypatch.undo()

        srv.reset_counts()
        gw = openai_gateway(srv, tmp_path / "after", model="gpt-5-mini")
        with pytest.raises(ConfigError, match="JUDGELAB_NARRATIVE_AGENTS=seed-only") as refused:
            run_judges(gw, judged_paths(), k=2, max_tokens=paper_budgets(), agent_design="temperature")
        assert "JUDGELAB_NARRATIVE_MODEL=gpt-4.1" in str(refused.value) and srv.n_calls == 0
        after = run_judges(gw, judged_paths(), k=2, max_tokens=paper_budgets(), agent_design="seed-only")
        assert srv.n_calls == n and (after["status"] == "ok").all() and after["score"].notna().all()
        assert after["temperature"].isna().all() and (after["reasoning_effort"] == "minimal").all()
        budgets = {m: b + REASONING_ALLOWANCE["minimal"] for m, b in paper_budgets().items()}
        assert (after["max_tokens"] == after["mode"].map(budgets)).all()
        assert {c["max_completion_tokens"] for c in srv.calls} == set(budgets.values())


def test_narrative_judges_stop_at_the_canary_when_the_allowance_is_too_small(tmp_path):
    """Reasoning beyond the allowance: one call per request shape (4 modes), then a stop naming the settings."""
    from judgelab.narrative.judges.run import run_judges

    rules = ReasoningRules(tokens={"minimal": 5_000, "low": 9_000, "medium": 30_000, "high": 60_000})
    with FakeChatServer(judge_reply, reasoning=rules) as srv:
        gw = openai_gateway(srv, tmp_path, model="gpt-5-mini", study="narrative")
        with pytest.raises(FanOutStopped) as stop:
            run_judges(gw, judged_paths(), k=2, max_tokens=paper_budgets(), agent_design="seed-only", concurrency=1)
        assert srv.n_calls == 1  # one worker: the first shape's canary, then the stop
        msg = str(stop.value)
        assert "gpt-5-mini" in msg and srv.base_url in msg and "JUDGELAB_NARRATIVE_REASONING_EFFORT" in msg
        assert "max_completion_tokens=" in msg and "JUDGELAB_NARRATIVE_MODEL=gpt-4.1" in msg
        srv.reset_counts()
        with pytest.raises(FanOutStopped):
            run_judges(gw, judged_paths(), k=2, max_tokens=paper_budgets(), agent_design="seed-only", concurrency=4)
        assert srv.n_calls <= 4  # at most one call per shape (4 modes), whichever worker got there first


def test_a_rejected_request_stops_at_the_canary(tmp_path):
    """A model that does not take the effort sent answers 400: the first call of the shape is the
    only one paid, and the stop names the server's reason, the URL and the model."""
    rules = ReasoningRules(tokens={"low": 200, "medium": 800, "high": 3000})  # no "minimal"
    with FakeChatServer(default='{"score": 7}', reasoning=rules) as srv:
        gw = openai_gateway(srv, tmp_path, model="gpt-5-mini", study="sage")
        with pytest.raises(FanOutStopped, match="http_4xx") as stop:
            gw.run_batch([ask(seed=i) for i in range(6)], concurrency=1)
        assert srv.n_calls == 1 and "reasoning_effort" in str(stop.value) and srv.base_url in str(stop.value)
        assert "JUDGELAB_SAGE_MODEL" in str(stop.value)
        assert len(gw.ledger_frame()) == 1  # the paid canary is in the ledger
        # the effort the model takes, stated for the study: every item answered
        ok = openai_gateway(srv, tmp_path / "low", model="gpt-5-mini", reasoning=ReasoningPolicy(override="low"))
        assert all(r.ok for r in ok.run_batch([ask(seed=i) for i in range(6)], concurrency=2))
