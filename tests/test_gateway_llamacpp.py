"""The embedded backend: the bundled SmolLM2-135M GGUF under llama.cpp (offline, a few seconds)."""
from __future__ import annotations

import json
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from judgelab.gateway import ChatRequest, Gateway, Message, Sampling

pytestmark = pytest.mark.llm


class Judgement(BaseModel):
    genre: Literal["horror", "romance", "western"]
    score: int = Field(ge=1, le=5)
    half: float = Field(ge=1, le=3, multiple_of=0.5)


@pytest.fixture(scope="module")
def gw(tmp_path_factory):
    path = tmp_path_factory.mktemp("llm") / "c.sqlite"
    return Gateway.from_settings(backend="llamacpp", model=None, cache_mode="normal", cache_path=path, progress=False)


def story_request(extra=(), story="The ghost walked the dark corridor and the candles died one by one.") -> ChatRequest:
    msgs = [Message(role="system", content="You label short stories. Answer in JSON."),
            Message(role="user", content=story + " Give the genre, a score from 1 to 5 and a half-point score from 1 to 3."),
            *extra]
    return ChatRequest(messages=msgs, schema=Judgement, sampling=Sampling(temperature=0.0, seed=1, max_tokens=60),
                       tags={"item": "ghost"})


def test_default_is_the_bundled_small_model(gw, monkeypatch):
    from judgelab.gateway.settings import resolve

    for var in ("JUDGELAB_BACKEND", "JUDGELAB_MODEL", "JUDGELAB_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    assert resolve().backend == "llamacpp" and resolve().model is None
    assert gw.backend_name == "llamacpp" and gw.is_embedded_small_model
    assert "smollm2" in gw.model_name.lower() and "135m" in gw.model_name.lower()


def test_schema_valid_json_with_enums_respected(gw):
    res = gw.chat(story_request())
    assert res.status == "ok", res.error
    raw = json.loads(res.text)  # the grammar makes the raw text itself valid JSON
    assert raw["genre"] in ("horror", "romance", "western")
    assert raw["score"] in (1, 2, 3, 4, 5) and raw["half"] in (1.0, 1.5, 2.0, 2.5, 3.0)
    assert res.n_repairs == 0 and not res.usage.estimated and res.usage.output_tokens > 0


def test_follow_up_turn_reuses_the_kv_prefix(gw):
    story = "The cowboy rode into town at noon and the sheriff was waiting by the well."
    first = gw.chat(story_request(story=story))
    follow = gw.chat(story_request(story=story, extra=[Message(role="assistant", content=first.text),
                                                       Message(role="user", content="Reconsider and answer again.")]))
    assert not first.cached and first.status == "ok" and follow.status == "ok"
    # the whole first prompt is still in llama.cpp's KV cache and is not evaluated again
    assert first.usage.cached_tokens < first.usage.input_tokens
    assert follow.usage.cached_tokens >= first.usage.input_tokens - 1
    # ... and neither is the reply: its own generated ids are carried over, not re-tokenised. Only
    # the reply's end is read with the next turn: the closing "}" and, since "half" is a closed
    # enum (1, 1.5, ..., 3), the last token of its value (llamacpp_decoding.closing_test)
    assert follow.usage.cached_tokens >= first.usage.input_tokens + first.usage.output_tokens - 2


def test_replies_are_minified_json(gw):
    """The grammar's optional whitespace is removed: no space after ``{``, ``:`` or ``,``."""
    res = gw.chat(story_request(story="She kissed him under the summer moon."))
    assert res.status == "ok", res.error
    assert res.text == json.dumps(json.loads(res.text), separators=(",", ":"))


def test_context_overflow_names_the_item_and_head_tail_truncates(tmp_path):
    small = Gateway.from_settings(backend="llamacpp", cache_path=tmp_path / "c.sqlite", n_ctx=256, progress=False)
    long_text = "The night was long and the river was cold. " * 80
    base = dict(messages=[Message(role="user", content=long_text + " Label it.")], schema=Judgement,
                sampling=Sampling(max_tokens=40), tags={"item": "long-story"})
    res = small.chat(ChatRequest(**base))
    assert res.status == "failed" and "item=long-story" in res.error and "tokens" in res.error
    # free text and 4 output tokens keep this call short; the cut is what is tested
    cut = small.chat(ChatRequest(**{**base, "schema": None, "sampling": Sampling(max_tokens=4)}, truncation="head_tail"))
    assert cut.status == "ok" and cut.truncated and "head_tail" in cut.truncation_note
    assert 200 < cut.usage.input_tokens <= 256 - 4
