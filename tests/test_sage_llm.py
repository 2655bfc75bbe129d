"""One real SAGE evaluation end to end on the bundled SmolLM2-135M (short text, offline)."""
from __future__ import annotations

import math

import pytest

from judgelab.gateway import Gateway
from judgelab.sage.protocol import runner
from judgelab.gateway.backends.llamacpp import common_prefix_len
from judgelab.sage.protocol import prompts
from judgelab.sage.protocol.evaluation import BLIND, EVALUATOR, EvalConfig, EvalItem, evaluate, first_messages
from judgelab.sage.protocol.modes import prepare_input
from judgelab.sage.protocol.schemas import SCORE_VALUES

pytestmark = pytest.mark.llm

TEXT = ("THE LAST FERRY\n\nBy Nora Vell\n\nThe ferry left at dusk, and Ilse stood at the rail with her father's "
        "letter folded in her glove. She had not opened it. Her brother said it would only be money and "
        "apologies, and she believed him, and she did not believe him. When the lights of the town went "
        "out behind the headland she took the letter out, held it over the black water, and put it back.")


def test_one_content_evaluation_on_the_bundled_model(tmp_path):
    gw = Gateway.from_settings(cache_path=tmp_path / "c.sqlite", progress=False)
    assert gw.is_embedded_small_model
    prepared = prepare_input("content", text=TEXT, title="The Last Ferry", author="Nora Vell", max_text_tokens=700)
    item = EvalItem("ferry", "canonical", "", "L5", "content", prepared)
    cfg = EvalConfig(max_tokens=300, evidence_chars=16, note_chars=16, temperature=0.0, seed=3)
    ev = evaluate(gw, item, cfg)
    assert [(c.track, c.round) for c in ev.calls] == [("evaluator", r) for r in range(1, 6)] + [
        ("validator_blind", 1), ("validator_review", 1)]
    rows, summary, failures, calls = runner.tidy([ev], gw.backend_name, gw.model_name, "smoke")
    assert len(rows) == 28 and len(summary) == 1
    ok = rows[rows["status"] == "ok"]
    assert ok["score"].isin(SCORE_VALUES).all() and ok["confidence"].between(1, 5).all()
    assert rows.loc[rows["status"] == "failed", "score"].isna().all()
    assert len(failures) == int((rows.groupby(["track", "round"])["status"].first() == "failed").sum())
    # the story prefix is reused by the KV cache after the first call
    live = calls[calls["status"] != "not_run"]
    assert live["cached_tokens"].iloc[1:].sum() > 0
    # the blind turn holds nothing of the evaluator, and on the real engine it re-evaluates none of
    # the prefix it shares with the evaluator's Round 1: system + material + layer task
    r1, blind = ev.call(EVALUATOR, 1), ev.call(BLIND, 1)
    assert blind.messages == first_messages(item, "validator", prompts.blind_instructions("L5", "content"))
    tok = gw.backend.prompt_tokens
    as_dicts = lambda msgs: [{"role": m.role, "content": m.content} for m in msgs]  # noqa: E731
    shared = common_prefix_len(tok(as_dicts(r1.messages)), tok(as_dicts(blind.messages)))
    system_and_story = len(tok([{"role": "system", "content": prompts.system_prompt()},
                                {"role": "user", "content": prepared.material}])) - 3  # minus the closing tags
    assert shared > system_and_story
    if ev.call(EVALUATOR, 5).ok:  # the blind turn came straight after Round 5 of the same story
        assert blind.result.usage.cached_tokens >= shared - 1
    for c in ev.calls:
        for m in c.messages:
            assert "Last Ferry" not in m.content and "Nora Vell" not in m.content
    s = summary.iloc[0]
    assert s["status"] in ("ok", "failed") and (math.isnan(s["overall_score"]) or 1.0 <= s["overall_score"] <= 5.0)
