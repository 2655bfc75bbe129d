"""What the reply must fit is what the model is told: every character cap that validation enforces
is stated in the strict schema sent (in words: length bounds are not sent to strict mode, which
has refused them), and a longer free text is cut to its cap and recorded instead of failing the
reply. Against the local server emulating OpenAI's strict mode and a capable reasoning model
(gpt-5-mini)."""
from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field

from judgelab.gateway import ChatRequest, Gateway, Message, ResponseCache, Sampling
from judgelab.gateway.backends.openai_backend import OpenAIBackend
from judgelab.gateway.parsing import clip_free_text, parse_reply
from judgelab.gateway.reasoning import ReasoningPolicy
from judgelab.gateway.retry import RetryPolicy
from judgelab.gateway.schema import model_schema, strict_schema
from fake_openai_server import FakeChatServer, ReasoningRules, StrictRules, request_schema

KEY = "sk-test-caps-0000"


class Quote(BaseModel):
    score: int = Field(ge=1, le=5)
    evidence: str = Field(max_length=40, description="a quotation")
    label: str = Field(max_length=3, pattern="^[a-z]+$")


def openai_gateway(srv, tmp_path, model="gpt-5-mini", **kw) -> Gateway:
    be = OpenAIBackend(model, srv.base_url, api_key=KEY)
    return Gateway(be, ResponseCache(tmp_path / f"{model}.sqlite"), progress=False, secrets=(KEY,),
                   retry=RetryPolicy(max_attempts=1), **kw)


def ask(i: int = 0) -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content=f"quote story {i}")], schema=Quote,
                       sampling=Sampling(seed=i, max_tokens=200), tags={"item": f"s{i}"})


# ---------------------------------------------------------------- the schema sent

def test_the_strict_schema_states_each_cap_in_words_and_keeps_no_undocumented_keyword():
    sent = strict_schema(Quote)
    evidence = sent["properties"]["evidence"]
    assert "maxLength" not in evidence and evidence["description"] == "a quotation. At most 40 characters."
    assert sent["properties"]["label"]["description"] == "At most 3 characters."
    assert StrictRules().rejection({"response_format": {"type": "json_schema", "json_schema": {
        "name": "Quote", "schema": sent, "strict": True}}}) is None
    # the emulator refuses what OpenAI documents as outside strict mode
    raw = {**sent, "properties": {**sent["properties"], "evidence": {"type": "string", "maxLength": 40}}}
    refused = StrictRules().rejection({"response_format": {"type": "json_schema", "json_schema": {
        "name": "Quote", "schema": raw, "strict": True}}})
    assert "'maxLength' is not permitted" in refused


def test_every_sage_and_narrative_cap_reaches_the_schema_sent():
    """Walk each study schema: every string with a maxLength in the pydantic schema is a string
    whose strict description ends with that cap."""
    from judgelab.narrative.judges.schemas import judge_schema
    from judgelab.sage.protocol import schemas

    models = [schemas.round_schema("L5", "title", r, 50, 70, 32) for r in (1, 2, 3, 4, 5)]
    models += [schemas.validator_schema("L4", "review", 50, 70), judge_schema("cot", explanations=True)]

    def pairs(raw, sent, loc=""):
        if raw.get("type") == "string" and "maxLength" in raw:
            yield loc, raw["maxLength"], sent.get("description", "")
        for name, sub in raw.get("properties", {}).items():
            yield from pairs(sub, sent["properties"][name], f"{loc}.{name}")

    found = [p for m in models for p in pairs(model_schema(m), strict_schema(m))]
    assert len(found) > 20
    for loc, cap, description in found:
        assert description.endswith(f"At most {cap} characters."), loc


# ---------------------------------------------------------------- validation cuts free text

def test_free_text_past_its_cap_is_cut_and_recorded_a_wrong_value_is_still_refused():
    long = "x" * 95
    notes: list[str] = []
    parsed, err = parse_reply(json.dumps({"score": 3, "evidence": long, "label": "ab"}), Quote, None, notes)
    assert err is None and parsed.evidence == "x" * 40 and notes == ["evidence: 95 chars cut to 40"]
    # a string with a pattern is a value, not free text: refused, as before
    parsed, err = parse_reply(json.dumps({"score": 3, "evidence": "q", "label": "abcd"}), Quote)
    assert parsed is None and "label" in err
    # nested objects and arrays are walked; enums are left alone
    node = {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "string", "maxLength": 2}},
                                             "e": {"type": "string", "enum": ["long-value"], "maxLength": 2}}}
    value, notes = clip_free_text({"xs": ["abc", "d"], "e": "long-value"}, node)
    assert value == {"xs": ["ab", "d"], "e": "long-value"} and notes == ["xs.0: 3 chars cut to 2"]


def test_a_capable_model_that_ignores_a_cap_costs_one_call_and_the_cut_is_in_the_ledger(tmp_path):
    """The model writes 300 characters whatever it is told: one call, a score, the cut recorded."""
    with FakeChatServer(strict=StrictRules(obeys_stated_caps=False), reasoning=ReasoningRules()) as srv:
        gw = openai_gateway(srv, tmp_path)
        res = gw.chat(ask())
        assert res.ok and srv.n_calls == 1 and res.n_repairs == 0
        assert res.parsed.evidence == ("the evidence reads closely " * 12)[:40]
        assert res.clipped == ["evidence: 300 chars cut to 40"]
        assert gw.ledger_frame()["clipped"].tolist() == [1]


def test_a_model_told_the_cap_keeps_it_and_nothing_is_cut(tmp_path):
    with FakeChatServer(strict=StrictRules(), reasoning=ReasoningRules()) as srv:
        gw = openai_gateway(srv, tmp_path)
        res = gw.chat(ask())
        sent = request_schema(srv.calls[0])
        assert "At most 40 characters" in sent["properties"]["evidence"]["description"]
        assert res.ok and len(res.parsed.evidence) == 40 and res.clipped == [] and srv.n_calls == 1


# ---------------------------------------------------------------- SAGE on gpt-5-mini, smoke and demo

@pytest.mark.parametrize("profile", ["smoke", "demo"])
@pytest.mark.parametrize("obeys", [True, False], ids=["told-caps-kept", "caps-ignored"])
def test_sage_on_gpt5_mini_scores_every_evaluation(tmp_path, profile, obeys):
    """SAGE L5 on two stories in both modes, on the emulated gpt-5-mini at effort medium (the
    study's) behind OpenAI's strict mode: every evaluation scored, 7 calls each (5 rounds, the
    blind validator and its review), no repair turn; a model ignoring the stated caps too gets its
    free text cut (recorded), its scores kept."""
    from judgelab.sage.protocol import runner
    from test_sage_runner import corpus

    with FakeChatServer(strict=StrictRules(obeys_stated_caps=obeys), reasoning=ReasoningRules()) as srv:
        gw = openai_gateway(srv, tmp_path, study="sage", reasoning=ReasoningPolicy(default="medium"))
        out = runner.run_layer(gw, corpus(), "L5", profile, stories=["a", "b"], modes="content,title")
        assert len(out.summary) == 4 and (out.summary["status"] == "ok").all()
        assert out.summary["overall_score"].notna().all() and (out.summary["n_repairs"] == 0).all()
        assert out.rows["score"].notna().all() and (out.rows["status"] == "ok").all()
        assert srv.n_calls == 4 * 7
        assert (out.summary["reasoning_effort"] == "medium").all() and out.summary["temperature"].isna().all()
        clipped = gw.ledger_frame()["clipped"]
        assert (clipped == 0).all() if obeys else (clipped > 0).all()


def test_sage_in_batch_mode_on_gpt5_mini_scores_every_evaluation_and_spends_the_providers_bill(tmp_path):
    """Batch mode, round by round: the canaries live, the rest as batch lines; a model ignoring
    the stated caps still scores; the ledger's spend is the provider's usage x prices.csv (batch
    lines at the batch share)."""
    from judgelab.gateway.ledger import PriceTable
    from judgelab.sage.protocol import runner
    from test_sage_runner import corpus

    with FakeChatServer(strict=StrictRules(obeys_stated_caps=False), reasoning=ReasoningRules()) as srv:
        gw = openai_gateway(srv, tmp_path, study="sage", reasoning=ReasoningPolicy(default="medium"),
                            batch=True, batch_poll_s=0.01)
        out = runner.run_layer(gw, corpus(), "L5", "smoke", stories=["a", "b"], modes="content,title")
        assert (out.summary["status"] == "ok").all() and out.summary["overall_score"].notna().all()
        frame = gw.ledger_frame()
        assert len(frame) == len(srv.billed) == 4 * 7 and frame["batch_id"].notna().any()
        price = PriceTable.load().lookup("gpt-5-mini")
        bill = sum((b["usage"]["prompt_tokens"] * price.input + b["usage"]["completion_tokens"] * price.output) / 1e6
                   * (price.batch if b["batch"] else 1.0) for b in srv.billed)
        assert frame["spent_usd"].sum() == pytest.approx(bill, rel=1e-12)
