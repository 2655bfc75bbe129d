"""The SAGE runner against the local fake chat server with scripted replies (known answers)."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from judgelab.gateway import Gateway
from judgelab.run import Run
from fake_openai_server import FakeChatServer
from judgelab.sage.protocol import prompts
from judgelab.sage.protocol import runner

CODES = prompts.layer_spec("L5").codes  # AC, PI, EG, ENC

TEXT_A = ("THE LONG WINTER\n\nBy Ada Fenwick\n\nMarta wrapped the bread in cloth and waited by the door for "
          "her son, who had gone to the river before dawn and had not come back. Her hands would not keep still.")
TEXT_B = ("BROKEN STAIR\n\nBy Ada Fenwick\n\nThe old stair creaked under Tomas every night, and every night he "
          "swore to mend it, and every morning he forgot, until the winter his daughter fell.")


def corpus() -> pd.DataFrame:
    return pd.DataFrame([
        {"story_id": "a", "category": "canonical", "title": "The Long Winter", "author": "Ada Fenwick",
         "year": 1900, "translator": "", "model": "", "tier": "", "words": 40, "in_range": True, "text": TEXT_A},
        {"story_id": "b", "category": "pulp", "title": "Broken Stair", "author": "Ada Fenwick",
         "year": 1930, "translator": "", "model": "", "tier": "", "words": 35, "in_range": True, "text": TEXT_B},
    ])


def scores(values: dict[str, float] | float) -> dict:
    if not isinstance(values, dict):
        values = {c: values for c in CODES}
    return {c: {"score": values[c], "confidence": 3, "evidence_strength": "moderate", "evidence": "q"} for c in CODES}


def which_story(body: dict) -> str:
    first_user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return "a" if ("Marta" in first_user or "Long Winter" in first_user) else "b"


def scripted(body: dict, broken_round2: str | None = None):
    """Fixed replies by turn: evaluator R1..R5 score 1.0, 2.0, 3.0, R4 = 3.0 except AC 3.5, R5 = 4.0;
    validator blind 2.0, review 2.5 with trust 'medium'."""
    last = body["messages"][-1]["content"]
    story = which_story(body)
    if last.startswith("ROUND 2"):
        if broken_round2 == story:
            return '{"projection_bias_found": tru'          # malformed, every time (repairs fail too)
        return {"projection_bias_found": False, "explicitness_bias_found": False, "notes": "n", "scores": scores(2.0)}
    if ("model's validation error" in last or "did not validate" in last.lower() or "invalid" in last.lower()
            or "could not be accepted" in last):  # the gateway's repair turn (parsing.repair_message)
        return '{"projection_bias_found": tru'
    if last.startswith("ROUND 3"):
        return {"boundary_violation": False, "notes": "n", "scores": scores(3.0)}
    if last.startswith("ROUND 4"):
        return {"notes": "thin", "scores": scores({**{c: 3.0 for c in CODES}, "AC": 3.5})}
    if last.startswith("ROUND 5"):
        return {"convergence": "stable", "overall_confidence": 4, "scores": scores(4.0)}
    if "Now read the other critic" in last:
        return {"projection_bias": "none", "hallucination": "low", "boundary_violation": "none",
                "reasoning_quality": "fair", "confidence_calibration": "calibrated", "agreements": "PI",
                "disagreements": "AC", "scores": scores(2.5), "trust_level": "medium"}
    if "independent validator" in last and "ROUND 1" not in last:
        return {"scores": scores(2.0)}
    if "ROUND 1" in last:
        r1 = {c: {**d, "reasoning": "shown"} for c, d in scores(1.0).items()}   # sage-v5: per dimension
        reply = {"extracted": "worry", "scores": r1}
        if "WORK:" in last:
            reply["knows_work"] = story == "a"
        return reply
    raise AssertionError(f"unexpected prompt: {last[:80]}")


def run(tmp_path, script, canary: bool | None = None, **kw) -> runner.SageRun:
    with FakeChatServer(script) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite", progress=False, canary=canary)
        out = runner.run_layer(gw, corpus(), "L5", "smoke", stories=["a", "b"], **kw)
        out.sent = list(srv.calls)
        return out


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    return run(tmp_path_factory.mktemp("sage"), scripted)


def test_rows_follow_the_contract_and_land_in_their_tracks(good):
    rows = good.rows
    assert list(rows.columns) == runner.ROW_COLUMNS
    assert len(rows) == 2 * 2 * 7 * 4                    # stories x modes x replies x dimensions
    assert (rows["status"] == "ok").all()
    per = rows.groupby(["track", "round"])["score"].agg(["min", "max", "size"])
    expected = {("evaluator", 1): 1.0, ("evaluator", 2): 2.0, ("evaluator", 3): 3.0, ("evaluator", 5): 4.0,
                ("validator_blind", 1): 2.0, ("validator_review", 1): 2.5}
    for key, value in expected.items():
        assert per.loc[key, "min"] == per.loc[key, "max"] == value
        assert per.loc[key, "size"] == 16
    r4 = rows[(rows["track"] == "evaluator") & (rows["round"] == 4)]
    assert set(r4.loc[r4["dimension"] == "AC", "score"]) == {3.5}
    assert r4.set_index("dimension")["r4_score_changed"].groupby(level=0).all().to_dict() == \
        {"AC": True, "PI": False, "EG": False, "ENC": False}
    assert rows.loc[rows["r4_score_changed"], "round"].eq(4).all()   # flagged only in R4, and kept
    assert set(rows["backend"]) == {"openai-compatible"} and set(rows["profile"]) == {"smoke"}
    assert rows["template_version"].str.startswith("sage-v5-L5-").all()
    assert not rows["truncated"].any()


def test_summary_has_known_values(good):
    s = good.summary
    assert list(s.columns) == runner.SUMMARY_COLUMNS and len(s) == 4
    assert (s["overall_score"] == 4.0).all()             # mean of R5
    assert (s["validator_blind_overall"] == 2.0).all()
    assert (s["eval_validator_mad"] == 2.0).all()        # |4.0 - 2.0|
    assert s["max_r4_r5_change"].tolist() == [1.0] * 4   # |4.0 - 3.0|, AC |4.0 - 3.5| smaller
    assert (s["trust_level"] == "medium").all() and (s["status"] == "ok").all()
    knows = s.set_index(["story_id", "mode"])["knows_work"]
    assert knows[("a", "title")] is True and knows[("b", "title")] is False
    assert knows[("a", "content")] is None
    assert good.failures.empty


def test_modes_send_only_what_they_may_and_the_validator_is_blind(good):
    for body in good.sent:
        text = "\n".join(m["content"] for m in body["messages"])
        if "WORK:" in text:                              # title mode: no sentence of either story
            assert "Marta wrapped the bread" not in text and "The old stair creaked" not in text
        else:                                            # content mode: no title, no author
            for name in ("Long Winter", "LONG WINTER", "Broken Stair", "BROKEN STAIR", "Ada Fenwick"):
                assert name not in text
        if "independent validator" in body["messages"][-1]["content"]:
            assert len(body["messages"]) == 2 and "ROUND" not in text   # blind: no evaluator output
    # the conversation prefix (system + first user message) is stable across the evaluator's rounds
    firsts = {}
    for body in good.sent:
        if body["messages"][-1]["content"].startswith("ROUND"):
            key = (which_story(body), "WORK:" in body["messages"][1]["content"])
            firsts.setdefault(key, set()).add(body["messages"][0]["content"] + body["messages"][1]["content"])
    assert len(firsts) == 4 and all(len(v) == 1 for v in firsts.values())


def test_one_storys_calls_run_together_and_share_the_system_and_material_prefix(tmp_path):
    """Scheduling and layout (sage-v4): one call at a time (as on the in-process engine), the
    calls arrive story by story, each evaluation's seven calls back to back; every call's first
    message is the same system prompt, and every first user message of one story x mode starts
    with the same material and layer task."""
    sent = run(tmp_path, scripted, overrides={"concurrency": 1}).sent
    order = [which_story(b) for b in sent]
    assert order == sorted(order)                                  # all of a, then all of b
    assert len({b["messages"][0]["content"] for b in sent}) == 1
    assert sent[0]["messages"][0]["content"] == prompts.system_prompt()
    for story, title_mode in [("a", False), ("a", True), ("b", False), ("b", True)]:
        users = [b["messages"][1]["content"] for b in sent
                 if which_story(b) == story and ("WORK:" in b["messages"][1]["content"]) == title_mode]
        assert len(users) == 7                                     # 5 rounds + blind + review
        material = users[0].split("\n\nLAYER TO ASSESS")[0]
        assert all(u.startswith(material + "\n\n" + prompts.layer_task("L5")) for u in users)


def test_a_failed_reply_is_recorded_and_never_scored(tmp_path):
    # without the fan-out guard: a schema-invalid first reply of a shape would stop the run at its
    # canary (test_gateway_canary); here each item's failure must be recorded where it happened
    out = run(tmp_path, lambda body: scripted(body, broken_round2="a"), canary=False, modes=["content"])
    rows, s, f = out.rows, out.summary.set_index("story_id"), out.failures
    a = rows[rows["story_id"] == "a"]
    ev = a[a["track"] == "evaluator"]
    assert ev[ev["round"] == 1]["status"].eq("ok").all()
    failed = ev[ev["round"] >= 2]
    assert failed["status"].eq("failed").all() and failed["score"].isna().all()
    assert a[a["track"] == "validator_blind"]["status"].eq("ok").all()      # independent track still scored
    assert a[a["track"] == "validator_review"]["status"].eq("failed").all()  # nothing to review
    assert s.loc["a", "status"] == "failed" and s.loc["a", "n_failures"] == 5
    assert math.isnan(s.loc["a", "overall_score"]) and s.loc["a", "validator_blind_overall"] == 2.0
    assert s.loc["a", "n_repairs"] >= 1
    assert s.loc["b", "status"] == "ok" and s.loc["b", "overall_score"] == 4.0
    assert sorted(f.loc[f["story_id"] == "a", "round"].tolist()) == [1, 2, 3, 4, 5]
    assert set(f["track"]) == {"evaluator", "validator_review"}
    assert "not run" in f.loc[(f["story_id"] == "a") & (f["round"] == 3), "error"].iloc[0]
    assert (rows.loc[rows["status"] == "failed", "score"].isna()).all()     # never 0.0


def test_select_stories_is_seeded_and_range_first():
    df = pd.DataFrame({"story_id": [f"s{i}" for i in range(6)], "category": ["canonical"] * 4 + ["llm"] * 2,
                       "in_range": [False, True, True, True, True, True], "tier": ["", "", "", "", "high", "low"]})
    one = runner.select_stories(df, {"canonical": 3, "llm": 2}, seed=3)
    assert set(one["story_id"]) == {"s1", "s2", "s3", "s4", "s5"}           # the out-of-range one left out
    assert one.equals(runner.select_stories(df, {"canonical": 3, "llm": 2}, seed=3))
    with pytest.raises(ValueError):
        runner.select_stories(df, {}, seed=0, stories=["nope"])


def test_token_accounting_known_values():
    calls = pd.DataFrame([
        {"story_id": "a", "category": "c", "layer": "L5", "mode": "content", "track": "evaluator", "round": 1,
         "status": "ok", "input_tokens": 1000, "output_tokens": 50, "cached_tokens": 0, "estimated": False,
         "latency_s": 1.0, "cached": False, "n_repairs": 0},
        {"story_id": "a", "category": "c", "layer": "L5", "mode": "content", "track": "evaluator", "round": 2,
         "status": "ok", "input_tokens": 1100, "output_tokens": 50, "cached_tokens": 1050, "estimated": False,
         "latency_s": 1.0, "cached": False, "n_repairs": 0},
    ])
    acc = runner.token_accounting(calls).iloc[0]
    assert acc["input_tokens"] == 2100 and acc["processed_tokens"] == 1050
    assert acc["reuse_ratio"] == pytest.approx(0.5)


@pytest.mark.parametrize("layer", ["L4", "L6"])
def test_every_layer_runs_with_schema_valid_replies(tmp_path, layer):
    """The fake server's default reply is synthesized from each request's schema (first enum value):
    every round and both validator turns of L4 and L6 validate and land as scored rows."""
    with FakeChatServer(None) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite", progress=False)
        out = runner.run_layer(gw, corpus(), layer, "smoke", stories="a", modes="content,title")
    codes = prompts.layer_spec(layer).codes
    assert len(out.rows) == 2 * 7 * 4 and out.rows["status"].eq("ok").all()
    assert set(out.rows["dimension"]) == set(codes) and out.rows["score"].eq(1.0).all()
    assert out.summary["status"].eq("ok").all() and out.summary["trust_level"].eq("high").all()
    assert out.failures.empty


def test_disagreements_flag_differences_above_the_threshold(good):
    flagged = runner.disagreements(good.rows, threshold=0.5)
    assert len(flagged) == 16 and (flagged["diff"] == -2.0).all()     # blind 2.0 vs R5 4.0 everywhere
    assert runner.disagreements(good.rows, threshold=2.0).empty         # |diff| must exceed the threshold


def test_the_text_budget_counts_with_the_gateways_tokenizer(tmp_path, monkeypatch):
    """``run_layer`` measures ``max_text_tokens`` with ``gw.count_tokens`` (the backend's own
    tokenizer): with a counter that counts characters, a budget of the prepared text's length
    minus one cuts the text; the tokenizer-free estimate (~45 tokens) would not have."""
    from judgelab.sage.protocol import modes, text_prep

    prepared = text_prep.prepare_text(TEXT_A, "The Long Winter", "Ada Fenwick", story_id="a").text
    budget = len(prepared) - 1
    assert modes.approx_tokens(prepared) < budget
    kw = dict(stories=["a"], modes=["content"], overrides={"max_text_tokens": budget})
    with FakeChatServer(scripted) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite", progress=False)
        assert gw.count_tokens(prepared) == gw.backend.count_tokens(prepared) < budget  # tiktoken
        whole = runner.run_layer(gw, corpus(), "L5", "smoke", **kw)
        monkeypatch.setattr(gw.backend, "count_tokens", len)
        assert gw.count_tokens(prepared) == len(prepared)
        cut = runner.run_layer(gw, corpus(), "L5", "smoke", **kw)
        first = [next(m["content"] for m in b["messages"] if m["role"] == "user") for b in srv.calls]
    assert not whole.rows["truncated"].any() and cut.rows["truncated"].all()
    assert any("words omitted from the middle" in f for f in first)


def test_mask_title_in_body_reaches_the_prepared_text(tmp_path):
    """The default leaves a title phrase in the body (the mask marked human stories);
    ``mask_title_in_body=True`` (the sensitivity setting) masks it."""
    story = corpus().iloc[[0]].assign(text=TEXT_A + " The long winter had only begun.")
    masked = runner.build_items(story, "L5", ["content"], 10_000, "head_tail",
                                mask_title_in_body=True)[0].prepared.material
    assert "[withheld] had only begun" in masked
    plain = runner.build_items(story, "L5", ["content"], 10_000, "head_tail")[0].prepared.material
    assert "The long winter had only begun" in plain and "[withheld]" not in plain
    with pytest.raises(ValueError, match="MASK_TITLE_IN_BODY"):
        runner.run_layer(None, story, "L5", "smoke", mask_title_in_body="perhaps")


def test_layer_report_passes_mask_title_in_body_to_the_runner(monkeypatch):
    """Notebooks 02-04's ``MASK_TITLE_IN_BODY`` (papermill may pass text) reaches ``run_layer``
    parsed; None leaves the profile's knob (False: the mask marked human stories) in charge."""
    from judgelab.sage import report

    seen = {}

    def fake_run_layer(gw, corpus, layer, profile, **kw):
        seen.update(kw)
        raise RuntimeError("stop")

    monkeypatch.setattr(report.runner, "run_layer", fake_run_layer)
    on = report.LayerReport.open("L5", Run("03_l5_emotional", "smoke"), gateway=object(), corpus=corpus(), mask_title_in_body="true")
    assert on.knobs()["mask_title_in_body"] is True
    with pytest.raises(RuntimeError, match="stop"):
        on.run()
    assert seen["mask_title_in_body"] is True
    default = report.LayerReport.open("L5", Run("03_l5_emotional", "smoke"), gateway=object(), corpus=corpus(), mask_title_in_body=None)
    assert default.knobs()["mask_title_in_body"] is False and default.mask_title_in_body is None
    with pytest.raises(ValueError, match="MASK_TITLE_IN_BODY"):
        report.LayerReport.open("L5", Run("03_l5_emotional", "smoke"), gateway=object(), corpus=corpus(), mask_title_in_body="maybe")


def test_the_anonymous_author_run_follows_its_layers_or_a_yes_no_knob():
    from judgelab.sage.protocol.runner import anonymous_sensitivity_on

    assert anonymous_sensitivity_on(("L4",), "L4") and not anonymous_sensitivity_on(("L4",), "L5")
    assert anonymous_sensitivity_on(True, "L6") and not anonymous_sensitivity_on(False, "L4")
    assert not anonymous_sensitivity_on((), "L4")
