"""Shared prompt prefixes kept across processes (``llamacpp_states``), on the real bundled model.

A "new process" is simulated by emptying llama.cpp's KV cache: what the next call reuses can then
come only from the disk store.
"""
from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel

from judgelab.gateway import Sampling
from judgelab.gateway.backends.llamacpp import LlamaCppBackend, common_prefix_len

pytestmark = pytest.mark.llm

STORY = " ".join(
    f"On day {i} the keeper of the lighthouse wrote in his log that the sea was {w} and the lamp burned."
    for i, w in enumerate(["calm", "grey", "rough", "silver", "black", "green", "wild", "still"] * 2))
GREEDY = Sampling(temperature=0.0, seed=3, max_tokens=40)


class Verdict(BaseModel):
    mood: Literal["calm", "tense", "sad"]


def messages(task: str) -> list[dict]:
    return [{"role": "system", "content": "You read stories and answer in JSON."},
            {"role": "user", "content": STORY + "\n\n" + task}]


def empty_kv(be: LlamaCppBackend) -> None:
    """What a new process starts with: nothing in the KV cache."""
    be.llama.reset()
    be.llama._ctx.kv_cache_clear()


def backend(tmp_path, **store) -> LlamaCppBackend:
    be = LlamaCppBackend(state_dir=tmp_path)
    for k, v in ({"min_tokens": 100, "min_new": 50} | store).items():
        setattr(be.states, k, v)
    return be


def test_a_story_prefix_is_saved_once_and_loaded_by_the_next_process(tmp_path):
    be = backend(tmp_path)
    # system + story + the start of the task: about 390 tokens
    shared = common_prefix_len(be.prompt_tokens(messages("Task A: what is the mood?")),
                               be.prompt_tokens(messages("Task D: give the mood.")))
    empty_kv(be)
    be.complete(messages("Task A: what is the mood?"), Verdict, GREEDY)
    assert be.states.saved == 0  # nothing was left yet
    be.complete(messages("Task B: say the mood."), Verdict, GREEDY)  # leaves task A: saved
    assert be.states.saved == 1 and len(list(tmp_path.rglob("*.kv"))) == 1
    be.complete(messages("Task C: the mood?"), Verdict, GREEDY)  # shares no new 50 tokens: not saved
    assert be.states.saved == 1

    empty_kv(be)
    loaded = be.complete(messages("Task D: give the mood."), Verdict, GREEDY)
    assert be.states.loaded == 1
    assert loaded.usage.cached_tokens >= shared - 1 > 350  # system + story came from the disk

    plain = LlamaCppBackend()  # the same model object, no store: prefilled from scratch
    empty_kv(plain)
    fresh = plain.complete(messages("Task D: give the mood."), Verdict, GREEDY)
    assert fresh.usage.cached_tokens == 0
    # both replies are valid verdicts; they are not compared token for token, since a prefix
    # restored from disk and one prefilled in other batch sizes may differ in the last bits
    assert Verdict.model_validate_json(loaded.text) and Verdict.model_validate_json(fresh.text)


def test_a_full_store_saves_nothing_more(tmp_path):
    be = backend(tmp_path, max_bytes=1)
    (tmp_path / be.states.dir.name).mkdir()
    (be.states.dir / "filler.kv").write_bytes(b"x" * 10)
    empty_kv(be)
    be.complete(messages("Task A: what is the mood?"), Verdict, GREEDY)
    be.complete(messages("Task B: say the mood."), Verdict, GREEDY)
    assert be.states.saved == 0


def test_a_state_that_does_not_load_is_deleted_and_the_prompt_prefilled(tmp_path):
    be = backend(tmp_path)
    empty_kv(be)
    be.complete(messages("Task A: what is the mood?"), Verdict, GREEDY)
    be.complete(messages("Task B: say the mood."), Verdict, GREEDY)
    (kv,) = list(tmp_path.rglob("*.kv"))
    kv.write_bytes(b"not a llama.cpp state")
    empty_kv(be)
    reply = be.complete(messages("Task D: give the mood."), Verdict, GREEDY)
    assert reply.text.startswith("{") and be.states.loaded == 0
    assert not kv.exists() and reply.usage.cached_tokens == 0


def test_the_store_is_configured_beside_the_cache(tmp_path, monkeypatch):
    from judgelab.gateway.errors import ConfigError
    from judgelab.gateway.settings import resolve

    monkeypatch.delenv("JUDGELAB_LLAMA_STATES_MB", raising=False)
    s = resolve("llamacpp", cache_path=tmp_path / "c.sqlite")
    assert s.llama_states_dir == tmp_path / "llama_states" and s.llama_states_mb == 1024
    monkeypatch.setenv("JUDGELAB_LLAMA_STATES_MB", "0")
    assert resolve("llamacpp", cache_path=tmp_path / "c.sqlite").llama_states_dir is None
    monkeypatch.setenv("JUDGELAB_LLAMA_STATES_MB", "lots")
    with pytest.raises(ConfigError, match="JUDGELAB_LLAMA_STATES_MB"):
        resolve("llamacpp")
