"""Narrative judges: prompt rendering, output schemas, the spread of agents."""
from __future__ import annotations

import json

import numpy as np
import pytest
from pydantic import ValidationError

from judgelab import profiles
from judgelab.narrative.judges import prompts as jp
from judgelab.narrative.judges import schemas as js
from judgelab.narrative.settings import K_BY_COLLECTION, k_for
from judgelab.narrative.settings import judge_knobs as resolve
from judgelab.narrative.judges.run import agent_spread, select_pairs, token_budget

TITLES = ["Obama announces Cuba visit", "Protests erupt\nin Havana", "U.S. restores flights to Cuba"]


# ----------------------------------------------------------------------------- rendering

@pytest.mark.parametrize("mode", jp.MODES)
def test_each_mode_renders_numbered_titles_and_wording(mode):
    news = jp.render(mode, TITLES, "news")
    vis = jp.render(mode, TITLES, "vispub")
    assert "1. Obama announces Cuba visit\n2. Protests erupt in Havana\n3. U.S. restores flights to Cuba" in news.user
    assert "news articles" in news.system and "scientific articles" not in news.system
    assert "scientific articles" in vis.system and "news articles" not in vis.system
    assert "Narrative of 3 news articles" in news.user
    for text in (news.system, news.user):
        assert "$" not in text and "<!--" not in text and "## " not in text
    assert news.template_version == jp.template_version(mode)
    assert news.template_version.startswith(f"narr-judge-{mode}-v")


def test_modes_differ_as_the_paper_describes():
    r = {m: jp.render(m, TITLES, "news").system for m in jp.MODES}
    assert "1-3" in r["cot"] and "4-6" in r["cot"] and "7-9" in r["cot"] and "10:" in r["cot"]
    for step in js.COT_STEPS:
        assert step in r["cot"]
    assert "5 means adequate" in r["standard"] and "10 means exceptional" in r["standard"]
    for dim in js.STANDARD_DIMENSIONS:
        assert dim in r["standard"]
    for crit in js.COMPLEX_CRITERIA:
        assert crit in r["complex"]
    assert "random" in r["complex"]  # behavioural anchor, no numeric anchors
    assert "adequate" not in r["simple"] and "1-3" not in r["simple"]
    assert len({jp.template_version(m) for m in jp.MODES}) == 4


def test_explanations_are_off_by_default_and_switchable():
    for mode in jp.MODES:
        off = jp.render(mode, TITLES, "news")
        on = jp.render(mode, TITLES, "news", explanations=True)
        assert "explanation" not in off.system
        assert "explanation" in on.system and on.system.startswith(off.system.split("Reply with JSON")[0])


def test_literal_collection_wording_and_errors():
    r = jp.render("simple", TITLES, "court rulings")
    assert "court rulings" in r.system
    with pytest.raises(ValueError):
        jp.render("fancy", TITLES)
    with pytest.raises(ValueError):
        jp.format_narrative([])


def test_template_parser_rejects_missing_version(tmp_path):
    with pytest.raises(ValueError, match="front matter"):
        jp.parse_template("## system\nx\n## user\ny\n", "simple")
    with pytest.raises(ValueError, match="version"):
        jp.parse_template("---\nmode: simple\n---\n## system\nx\n## user\ny\n", "simple")
    tpl = jp.parse_template("---\nversion: t-v9\n---\n<!-- c -->\n## system\nS $collection_noun\n## user\nU\n", "simple")
    assert tpl.version == "t-v9" and tpl.system == "S $collection_noun" and tpl.explanations == ""


# ----------------------------------------------------------------------------- schemas

@pytest.mark.parametrize("mode", jp.MODES)
def test_scores_are_an_enum_of_1_to_10(mode):
    schema = js.judge_schema(mode).model_json_schema()
    for field in js.SCORE_FIELDS[mode]:
        prop = schema["properties"][field]
        assert prop["enum"] == list(range(1, 11))
        assert "minimum" not in prop and "maximum" not in prop
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == set(schema["properties"])


@pytest.mark.parametrize("mode", jp.MODES)
def test_schema_validation_accepts_good_and_rejects_bad(mode):
    model = js.judge_schema(mode)
    good = {f: 7 for f in js.SCORE_FIELDS[mode]}
    if mode == "cot":
        good.update({s: "fine" for s in js.COT_STEPS})
    parsed = model.model_validate_json(json.dumps(good))
    assert js.overall_score(mode, parsed) == 7.0
    for bad_value in (0, 11, 7.5, "seven"):
        with pytest.raises(ValidationError):
            model.model_validate({**good, js.SCORE_FIELDS[mode][0]: bad_value})
    with pytest.raises(ValidationError):
        model.model_validate({**good, "explanation": "not asked for"})


def test_cot_reasoning_comes_first_and_is_bounded():
    model = js.judge_schema("cot", reasoning_chars=40)
    props = model.model_json_schema()["properties"]
    assert list(props)[:3] == list(js.COT_STEPS) and list(props)[-1] == "coherence_score"
    assert all(props[s]["maxLength"] == 40 for s in js.COT_STEPS)
    with pytest.raises(ValidationError):
        model.model_validate({**{s: "x" * 41 for s in js.COT_STEPS}, "coherence_score": 5})


def test_explanation_fields_only_when_requested_and_bounded():
    assert "explanation" not in js.judge_schema("simple").model_json_schema()["properties"]
    props = js.judge_schema("simple", explanations=True).model_json_schema()["properties"]
    assert props["explanation"]["maxLength"] == js.DEFAULT_EXPLANATION_CHARS
    props = js.judge_schema("standard", explanations=True).model_json_schema()["properties"]
    assert {f"{d}_explanation" for d in js.STANDARD_DIMENSIONS} <= set(props)
    assert js.judge_schema("simple") is js.judge_schema("simple")  # cached class


def test_overall_score_is_the_mean_of_dimensions():
    std = dict(zip(js.STANDARD_DIMENSIONS, [4, 6, 8, 10]))
    assert js.overall_score("standard", std) == pytest.approx(7.0)
    cx = dict(zip(js.COMPLEX_CRITERIA, [1, 2, 3, 4, 5, 9]))
    assert js.overall_score("complex", js.judge_schema("complex").model_validate(cx)) == pytest.approx(4.0)


# ----------------------------------------------------------------------------- agents

def test_five_agents_spread_evenly_over_03_07_with_distinct_seeds():
    agents = agent_spread(5, (0.3, 0.7), base_seed=100)
    assert [a.temperature for a in agents] == pytest.approx([0.3, 0.4, 0.5, 0.6, 0.7])
    assert [a.seed for a in agents] == [100, 101, 102, 103, 104]
    assert [a.agent for a in agents] == list(range(5))


def test_three_agents_and_one_agent():
    assert [a.temperature for a in agent_spread(3)] == pytest.approx([0.3, 0.5, 0.7])
    assert [a.temperature for a in agent_spread(1)] == pytest.approx([0.5])
    assert np.all(np.diff([a.temperature for a in agent_spread(7)]) > 0)
    with pytest.raises(ValueError):
        agent_spread(0)


def test_k_defaults_follow_the_paper_and_profiles_are_complete():
    assert K_BY_COLLECTION == {"news": 5, "vispub": 3}
    assert k_for("news", None) == 5 and k_for("vispub", None) == 3 and k_for("news", 2) == 2
    for name in profiles.PROFILES:
        knobs = profiles.knobs("narrative_judges", name)
        assert set(knobs["max_tokens"]) == set(jp.MODES)
    assert profiles.knobs("narrative_judges", "paper")["k"] is None


def test_select_pairs_keeps_both_methods_and_is_seeded():
    import pandas as pd

    rows = [{"collection": "news", "pair_id": p, "method": m} for p in range(10) for m in ("maxcap", "random")]
    rows.append({"collection": "news", "pair_id": 99, "method": "maxcap"})  # no random twin
    paths = pd.DataFrame(rows)
    a = select_pairs(paths, 3, seed=1)
    b = select_pairs(paths, 3, seed=1)
    assert a.equals(b) and a["pair_id"].nunique() == 3 and len(a) == 6
    assert 99 not in set(select_pairs(paths, None, seed=1)["pair_id"])


def test_notebook_overrides_arrive_as_strings():
    knobs = resolve("smoke", k="3", modes="simple, cot", n_pairs="all", explanations="true")
    assert knobs["k"] == 3 and knobs["modes"] == ("simple", "cot")
    assert knobs["n_pairs"] is None and knobs["explanations"] is True
    assert resolve("smoke") == profiles.knobs("narrative_judges", "smoke")
    with pytest.raises(ValueError):
        resolve("smoke", modes="simple,fancy")
    with pytest.raises(ValueError):
        resolve("nightly")


def test_explanations_get_their_own_token_budget():
    budget = {"simple": 20, "cot": 100, "standard": 60, "complex": 90}
    assert token_budget(budget, "simple") == 20 and token_budget(50, "complex") == 50
    per_field = -(-js.DEFAULT_EXPLANATION_CHARS // 3) + 8
    assert token_budget(budget, "simple", explanations=True) == 20 + per_field
    assert token_budget(budget, "complex", explanations=True) == 90 + 6 * per_field


@pytest.mark.parametrize("word, expected", [("on", True), ("off", False), ("yes", True), ("0", False),
                                            (True, True), ("FALSE", False)])
def test_explanations_parse_every_yes_no_word(word, expected):
    # judgelab.params: "on" used to read as False here, and "off" as True in notebook 08
    assert resolve("smoke", explanations=word)["explanations"] is expected


def test_bad_overrides_name_the_parameter():
    with pytest.raises(ValueError, match="EXPLANATIONS"):
        resolve("smoke", explanations="maybe")
    with pytest.raises(ValueError, match="K"):
        resolve("smoke", k="0")
    with pytest.raises(ValueError, match="N_PAIRS"):
        resolve("smoke", n_pairs="some")
    assert resolve("smoke", k="all")["k"] is None                      # the paper's K per collection
    assert resolve("smoke", n_pairs="default")["n_pairs"] == profiles.knobs("narrative_judges", "smoke")["n_pairs"]


# ----------------------------------------------------------------------------- per-narrative scores

def _agent_rows():
    import pandas as pd

    return pd.DataFrame({
        "collection": "news", "pair_id": [1, 1, 1, 0, 0, 0, 0],
        "method": ["maxcap"] * 3 + ["random"] * 2 + ["maxcap"] * 2, "mode": "simple",
        "agent": [0, 1, 2, 0, 1, 0, 1], "score": [4.0, 8.0, np.nan, np.nan, np.nan, 5.0, 5.0],
        "status": ["ok", "ok", "failed", "failed", "failed", "ok", "ok"]})


def test_narrative_scores_summarise_the_agents_and_count_failures():
    from judgelab.narrative.judges.scores import SUMMARY_COLUMNS, narrative_scores

    out = narrative_scores(_agent_rows())
    assert list(out.columns) == ["collection", "pair_id", "method", "mode", *SUMMARY_COLUMNS]
    assert out[["pair_id", "method"]].values.tolist() == [[0, "maxcap"], [0, "random"], [1, "maxcap"]]  # sorted
    r = out.set_index(["pair_id", "method"])
    assert r.loc[(1, "maxcap"), "score_mean"] == 6.0
    assert r.loc[(1, "maxcap"), "score_sd"] == pytest.approx(np.sqrt(8.0))   # SD of 4, 8 with ddof = 1
    assert (r.loc[(1, "maxcap"), "n_agents"], r.loc[(1, "maxcap"), "n_failed"]) == (2, 1)
    assert r.loc[(0, "maxcap"), "score_sd"] == 0.0
    # every agent failed: the narrative stays, unscored
    assert np.isnan(r.loc[(0, "random"), "score_mean"]) and (r.loc[(0, "random"), "n_agents"], r.loc[(0, "random"), "n_failed"]) == (0, 2)


def test_narrative_scores_one_agent_has_no_sd_and_missing_columns_are_named():
    from judgelab.narrative.judges.scores import narrative_scores

    one = _agent_rows().iloc[[0]]
    assert np.isnan(narrative_scores(one)["score_sd"].iat[0])
    with pytest.raises(KeyError, match="mode"):
        narrative_scores(_agent_rows().drop(columns="mode"))


def test_judged_paths_joins_in_path_order_and_rejects_duplicate_paths():
    import pandas as pd

    from judgelab.narrative.judges.scores import judged_paths, narrative_scores

    paths = pd.DataFrame({"collection": "news", "pair_id": [1, 0, 0, 2], "method": ["maxcap", "random", "maxcap", "maxcap"],
                          "titles": [["a"]] * 4, "min_coherence": [.7, .2, .6, .9]})
    out = judged_paths(narrative_scores(_agent_rows()), paths)
    assert out[["pair_id", "method"]].values.tolist() == [[1, "maxcap"], [0, "random"], [0, "maxcap"]]
    assert "titles" not in out.columns and out["min_coherence"].tolist() == [.7, .2, .6]
    assert list(judged_paths(narrative_scores(_agent_rows()), paths, path_cols=()).columns[-4:]) == [
        "score_mean", "score_sd", "n_agents", "n_failed"]
    with pytest.raises(ValueError, match="more than once"):
        judged_paths(narrative_scores(_agent_rows()), pd.concat([paths, paths.iloc[[0]]]))


# ----------------------------------------------------------------------------- what notebook 09 shows

def test_agents_table_uses_the_papers_k_per_collection():
    from judgelab.narrative.judges.run import agents_table

    t = agents_table(["news", "vispub"], None, (0.3, 0.7), base_seed=10)
    assert t.groupby("collection").size().to_dict() == {"news": 5, "vispub": 3}
    assert t[t.collection == "vispub"]["temperature"].tolist() == pytest.approx([0.3, 0.5, 0.7])
    assert t[t.collection == "news"]["seed"].tolist() == [10, 11, 12, 13, 14]
    assert len(agents_table(["news"], 2)) == 2


def test_call_summary_and_ledger_by_mode():
    import pandas as pd

    from judgelab.narrative.judges.run import call_summary, ledger_by_mode

    scores = _agent_rows().assign(input_tokens=100, output_tokens=[5, 6, 40, 40, 40, 7, 8], cached=False, latency_s=1.0)
    s = call_summary(scores).set_index("status")
    assert list(call_summary(scores).columns[:3]) == ["collection", "mode", "status"]
    assert s.loc["ok", "calls"] == 4 and s.loc["ok", "score_mean"] == pytest.approx(5.5)
    assert s.loc["failed", "calls"] == 3 and np.isnan(s.loc["failed", "score_mean"])
    assert s.loc["failed", "output_tokens"] == 120 and s.loc["ok", "latency_s"] == 4.0
    ledger = pd.DataFrame({"mode": ["simple", "simple", "cot"], "input_tokens": [10, 20, 30],
                           "output_tokens": [1, 3, 50], "latency_s": [1.0, 2.0, 4.0]})
    by_mode = ledger_by_mode(ledger)
    assert by_mode.loc["simple", ("input_tokens", "mean")] == 15 and by_mode.loc["cot", ("latency_s", "sum")] == 4.0
    assert ledger_by_mode(pd.DataFrame()).empty


def test_prompt_preview_shows_every_mode_with_its_version():
    from judgelab.narrative.judges.run import prompt_preview

    md = prompt_preview(TITLES, "news", ("simple", "cot"))
    assert f"**simple** (`{jp.template_version('simple')}`)" in md and f"(`{jp.template_version('cot')}`)" in md
    assert md.count("1. Obama announces Cuba visit") == 2 and "**standard**" not in md


def test_read_math_table04_reads_notebook_08s_file_only(tmp_path):
    import pandas as pd

    from judgelab.narrative.judges.paper_tables import MATH_TABLE04, read_math_table04

    assert read_math_table04(tmp_path) is None
    pd.DataFrame({"collection": ["news"], "metric": ["Min. coherence"], "d": [1.5]}).to_csv(tmp_path / f"{MATH_TABLE04}.csv", index=False)
    t = read_math_table04(tmp_path)
    assert t["d"].tolist() == [1.5] and MATH_TABLE04 == "narr_table04_effect_sizes"
