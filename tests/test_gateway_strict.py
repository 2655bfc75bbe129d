"""Strict replies: a boolean, a string or a float is never coerced into an integer score.

Pydantic's lax mode turns ``true`` into 1, and even its strict mode lets ``true`` and ``1.0`` pass
for ``Literal[1, ..., 10]``, the form of the studies' scores; the gateway checks JSON types itself,
so the studies' schemas, unchanged, are strict on every backend and in batch mode."""
from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, Field

from judgelab.gateway import ChatRequest, Gateway, Message
from fake_openai_server import FakeChatServer
from judgelab.gateway.parsing import json_type_errors, parse_reply
from judgelab.gateway.schema import model_schema
from judgelab.human.holistic import verdict_schema
from judgelab.narrative.judges.prompts import MODES
from judgelab.narrative.judges.schemas import judge_schema
from judgelab.sage.protocol.schemas import dimension_score_model


class Verdict(BaseModel):
    score: Literal[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    flagged: bool = False
    weight: float = 1.0
    count: int = Field(default=0, ge=0)


@pytest.mark.parametrize("reply", ['{"score": true}', '{"score": false}', '{"score": 7.0}', '{"score": "7"}',
                                   '{"score": 7, "flagged": 1}', '{"score": 7, "flagged": "true"}',
                                   '{"score": 7, "weight": true}', '{"score": 7, "count": 2.0}',
                                   '{"score": 7, "count": "2"}'])
def test_a_value_of_another_json_type_is_refused(reply):
    parsed, error = parse_reply(reply, Verdict)
    assert parsed is None and error.startswith("schema violation") and "not converted" in error


def test_values_of_the_right_json_type_pass():
    parsed, error = parse_reply('{"score": 7, "flagged": true, "weight": 2, "count": 3}', Verdict)
    assert error is None and parsed == Verdict(score=7, flagged=True, weight=2.0, count=3)  # an int is a number


def test_the_error_names_the_field_and_the_value_for_the_repair_turn():
    assert json_type_errors({"score": True}, model_schema(Verdict)) == [
        "score: expected type integer, not a boolean: values are not converted (got true)"]


@pytest.mark.parametrize("schema", [verdict_schema(), verdict_schema(reason_chars=80), *(judge_schema(m) for m in MODES)],
                         ids=lambda s: s.__name__)
def test_the_studies_integer_scores_refuse_true_and_floats(schema):
    fields = model_schema(schema)["properties"]
    scores = [name for name, node in fields.items() if node.get("type") == "integer"]
    assert scores, f"{schema.__name__} has no integer field"
    for wrong in ("true", "7.0", '"7"'):
        value = {name: 7 for name in scores}
        value[scores[0]] = wrong
        text = "{" + ", ".join(f'"{k}": {v}' for k, v in value.items()) + "}"
        parsed, error = parse_reply(text, schema)
        assert parsed is None and scores[0] in error, (schema.__name__, wrong, error)


def test_sage_scores_are_numbers_so_an_integer_still_passes():
    dim = dimension_score_model(80)
    ok, error = parse_reply('{"score": 3, "confidence": 4, "evidence_strength": "weak", "evidence": "x"}', dim)
    assert error is None and ok.score == 3.0
    bad, error = parse_reply('{"score": 3.0, "confidence": true, "evidence_strength": "weak", "evidence": "x"}', dim)
    assert bad is None and "confidence" in error


def test_a_json_object_server_answering_true_gets_a_repair_turn_and_nothing_is_cached(tmp_path):
    replies = [{"score": True}, {"score": 7.0}, {"score": "7"}]
    with FakeChatServer(replies) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite", progress=False)
        request = ChatRequest(messages=[Message(role="user", content="rate it")], schema=Verdict)
        res = gw.chat(request)
        assert srv.n_calls == 3
    assert res.status == "failed" and res.n_repairs == 2 and not gw.cache.contains(res.key)
    assert "not converted" in res.error and res.failure_detail.kind == "invalid_reply"
    with FakeChatServer([{"score": True}, {"score": 7}]) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "d.sqlite", progress=False)
        res = gw.chat(request)
        assert "expected type integer, not a boolean" in srv.calls[1]["messages"][-1]["content"]  # the repair turn
    assert res.ok and res.parsed.score == 7 and res.n_repairs == 1


def test_batch_replies_are_just_as_strict(tmp_path):
    """The canary (live) is answered validly; the batch line that follows answers ``true``."""
    with FakeChatServer(lambda body: {"score": 7}, batch_replies=lambda body: {"score": True}) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite", progress=False, batch=True, batch_poll_s=0.01,
                                   batch_fallback="fail")
        canary, res = gw.run_batch([ChatRequest(messages=[Message(role="user", content=f"rate it {i}")], schema=Verdict)
                                    for i in range(2)])
        assert canary.ok and srv.n_calls == 1 and srv.count("batch_line") == 1
    assert res.status == "failed" and "not converted" in res.error and res.failure == "invalid"
