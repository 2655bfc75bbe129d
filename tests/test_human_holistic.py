"""The holistic 1-10 judge: prompt, schema, and a run through the gateway against the fake server."""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from judgelab.gateway import Gateway
from fake_openai_server import FakeChatServer, malformed_json
from judgelab.gateway.schema import grammar_schema
from judgelab.human import holistic


def test_prompt_is_versioned_and_renders_the_story():
    tpl = holistic.load_template()
    assert tpl.version == "human-holistic-v1"
    system, user, version = holistic.render("Once upon a time.")
    assert version == tpl.version and "1 (very poor) to 10 (excellent)" in system
    assert "Once upon a time." in user and "$" not in system + user
    assert "reason" not in system
    assert '"reason"' in holistic.render("x", reason=True)[0]
    with pytest.raises(ValueError, match="non-empty"):
        holistic.render("   ")


def test_score_is_an_enum_for_the_llamacpp_grammar():
    schema = grammar_schema(holistic.verdict_schema())
    assert schema["properties"]["score"]["enum"] == list(range(1, 11))
    assert schema["required"] == ["score"]
    with_reason = grammar_schema(holistic.verdict_schema(120))
    assert with_reason["properties"]["reason"]["maxLength"] == 120
    model = holistic.verdict_schema()
    assert model(score=7).score == 7
    with pytest.raises(Exception):
        model(score=11)


def test_judge_stories_through_the_gateway(tmp_path):
    stories = pd.DataFrame({"story": ["a", "b", "c"], "text": ["quality 3 story", "quality 9 story", "quality 5 story"]})

    def script(body):
        user = body["messages"][-1]["content"]
        if "quality 5" in user:
            return malformed_json()  # never valid: the gateway repairs, then records a failure
        return {"score": int(re.search(r"quality (\d+)", user).group(1))}

    with FakeChatServer(script) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite", transcripts=False, progress=False)
        out = holistic.judge_stories(gw, stories, dataset="syn", max_tokens=16, profile="smoke")
        sent = json.dumps(srv.calls[0])
    assert out["story"].tolist() == ["a", "b", "c"]
    assert out["score"].iloc[:2].tolist() == [3.0, 9.0] and np.isnan(out["score"].iloc[2])
    assert out["status"].tolist() == ["ok", "ok", "failed"] and out["error"].iloc[2]
    assert set(out["template_version"]) == {"human-holistic-v1"} and set(out["measure"]) == {"holistic"}
    assert "enum" in sent  # the schema went out with the request
