"""The appendix steps end to end on real mirrored ratings, with the judges behind the fake server."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab import paths, profiles
from judgelab.gateway import Gateway
from fake_openai_server import FakeChatServer
from judgelab.human import appendix, figures

MIRROR = paths.data_mirror()
pytestmark = pytest.mark.skipif(
    MIRROR is None or not (MIRROR / "llm_stories").is_dir(),
    reason="DATA_MIRROR is unset or lacks llm_stories/ (set DATA_MIRROR=../shared/mirror)",
)


@pytest.fixture(scope="module")
def human():
    return appendix.load_human("confederacy")


def test_derived_criteria(human):
    over = human[human["criterion"] == "overall"]
    assert len(over) == 65 * 2
    one = human[(human["story"] == over["story"].iloc[0]) & (human["rater"] == over["rater"].iloc[0])]
    assert over["value"].iloc[0] == pytest.approx(one[one["criterion"] != "overall"]["value"].mean())
    art = appendix.load_human("artifice")
    passed = art[art["criterion"] == "tests_passed"]
    assert len(passed) == 48 * 3 and passed["value"].between(0, 14).all()
    assert set(art["criterion"]) >= {"dim_fluency", "dim_flexibility", "dim_originality", "dim_elaboration"}
    assert appendix.alpha_level("artifice", "narrative_ending") == "nominal"
    assert appendix.alpha_level("artifice", "tests_passed") == appendix.alpha_level("confederacy", "humor") == "interval"


def test_oracle_judges_reach_one_and_rankings_match(human, tmp_path):
    """A fake judge that answers each story's rounded mean human overall rating: rho = 1 up to rounding."""
    knobs = dict(profiles.knobs("human", "smoke"), n_boot=200)
    stories = appendix.stories_to_judge("confederacy", 13, "random", seed=3)
    assert stories["source"].nunique() == 13
    means = human[human["criterion"] == "overall"].groupby("story")["value"].mean()
    by_text = {t: means[s] for s, t in zip(stories["story"], stories["text"])}

    def script(body):
        user = body["messages"][-1]["content"]
        for text, m in by_text.items():
            if text[:200] in user:
                return {"score": int(np.clip(round(m), 1, 10))}
        raise AssertionError("story not found in prompt")

    with FakeChatServer(script) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite", transcripts=False, progress=False)
        rows = appendix.run_holistic(gw, stories, knobs, "smoke")
    scores = appendix.judge_scores(rows)
    ceiling = appendix.human_ceiling(human)
    table = appendix.comparison(scores, human, ceiling, knobs, backend="b", model="m", profile="smoke")
    row = table.set_index("criterion").loc["overall"]
    assert row["n"] == 13 and row["spearman"] > 0.95 and row["spearman_hi"] == pytest.approx(1.0, abs=0.01)
    assert row["ceiling_spearman"] == pytest.approx(ceiling.set_index("criterion").at["overall", "loo_spearman_mean"])
    assert set(table["measure"]) == {"holistic"} and (table["status"] == "ok").all()
    assert list(table.columns[:4]) == ["dataset", "measure", "criterion", "status"]
    ranks, agree = appendix.rankings(scores, human)
    assert len(ranks) == 13 and agree["spearman"].iloc[0] > 0.95
    fig = figures.plot_judge_vs_human(table, scores, human)
    assert len(fig.axes) == 2


def test_sage_through_the_fake_server(human, tmp_path):
    """Two short stories through the SAGE L5 protocol (schema-valid default replies)."""
    knobs = dict(profiles.knobs("human", "smoke"), sage_max_stories=None)
    stories = appendix.stories_to_judge("confederacy", 2, "shortest")
    with FakeChatServer() as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite", transcripts=False, progress=False)
        run = appendix.run_sage(gw, stories, knobs, "smoke")
        holistic_rows = appendix.run_holistic(gw, stories, knobs, "smoke")
    assert set(run.summary["dataset"]) == {"confederacy"} and len(run.summary) == 2
    sage = appendix.sage_scores(run.summary, run.rows)
    measures = set(sage["measure"])
    assert measures == {"sage_l5_overall", "sage_l5_ac", "sage_l5_pi", "sage_l5_eg", "sage_l5_enc"}
    wide = sage.pivot(index="story", columns="measure", values="score")
    dims = wide[["sage_l5_ac", "sage_l5_pi", "sage_l5_eg", "sage_l5_enc"]].mean(axis=1)
    assert np.allclose(dims, wide["sage_l5_overall"])  # dimensions and overall from the same round
    scores = appendix.judge_scores(holistic_rows, sage)
    table = appendix.comparison(scores, human, appendix.human_ceiling(human), knobs, backend="b", model="m",
                                profile="smoke")
    assert (table["n"] == 2).all() and table["spearman"].isna().all()
    assert table["status"].str.contains("n=2 < 3").all()
    fig = figures.plot_judge_vs_human(table, scores, human)
    assert len(fig.axes) == 2


def test_profiles_share_their_knobs():
    keys = {p: set(profiles.knobs("human", p)) for p in ("smoke", "demo", "paper")}
    assert keys["smoke"] == keys["demo"] == keys["paper"]
    for knobs in map(lambda p: profiles.knobs("human", p), profiles.PROFILES):
        assert set(knobs["n_stories"]) == {"confederacy", "artifice"}
    assert profiles.knobs("human", "paper")["n_stories"] == {"confederacy": 65, "artifice": 36}


def test_story_selection_is_stratified_and_seeded():
    from judgelab.human.appendix import select_stories

    stories = pd.DataFrame({"story": [f"{s}{i}" for s in "abc" for i in range(4)],
                            "source": [s for s in "abc" for _ in range(4)],
                            "words": [10, 5, 7, 1, 20, 30, 2, 40, 3, 9, 8, 6]})
    short = select_stories(stories, 4, "shortest")
    assert short["story"].tolist() == ["a3", "b2", "c0", "a1"]  # shortest of each source, then round 2
    rnd = select_stories(stories, 6, "random", seed=4)
    assert rnd["source"].value_counts().to_dict() == {"a": 2, "b": 2, "c": 2}
    assert rnd.equals(select_stories(stories, 6, "random", seed=4))
    assert len(select_stories(stories, 99, "random")) == 12 and select_stories(stories, 0).empty
    with pytest.raises(ValueError, match="strategy"):
        select_stories(stories, 2, "best")


def test_parameters_from_the_command_line():
    assert appendix.check_datasets("confederacy, artifice") == ["confederacy", "artifice"]
    assert appendix.check_datasets(None) == appendix.check_datasets("none") == ["confederacy", "artifice"]
    with pytest.raises(ValueError, match="unknown data set"):
        appendix.check_datasets("hanna")
    knobs = profiles.knobs("human", "demo")
    assert appendix.stories_per_dataset(knobs, ["confederacy", "artifice"]) == profiles.knobs("human", "demo")["n_stories"]
    assert appendix.stories_per_dataset(knobs, ["artifice"], "3") == {"artifice": 3}
    assert appendix.stories_per_dataset(knobs, ["artifice"], "all") == {"artifice": knobs["n_stories"]["artifice"]}
    with pytest.raises(ValueError, match="N_STORIES"):
        appendix.stories_per_dataset(knobs, ["artifice"], "few")
    # RUN_SAGE from the command line: "off" is False (bool("off") would be True); no call is made
    assert appendix.run_sage(None, pd.DataFrame(), knobs, "demo", enabled="off") is None
    with pytest.raises(ValueError, match="RUN_SAGE"):
        appendix.run_sage(None, pd.DataFrame(), knobs, "demo", enabled="maybe")
    settings = appendix.run_settings("demo", knobs, {"artifice": 3})
    assert settings["n_stories"] == {"artifice": 3} and settings["profile"] == "demo" and settings["n_boot"] == 2000


def test_small_tables_of_the_notebook_known_answers():
    tidy = pd.DataFrame({"dataset": ["confederacy"] * 4 + ["artifice"] * 2, "story": ["s1", "s1", "s2", "s2", "t", "t"],
                         "source": ["m1", "m1", "m2", "m2", "g", "g"], "criterion": ["humor", "overall"] * 3,
                         "rater": ["r1", "r1", "r2", "r3", "e1", "e1"], "value": [1.0, 2.0, 3.0, 4.0, 1.0, 0.0]})
    overview = appendix.human_overview(tidy)
    assert overview.loc["confederacy"].to_dict() == {"stories": 2, "sources": 2, "raters": 3, "criteria": 2,
                                                     "ratings": 4}
    holistic_rows = pd.DataFrame({"dataset": ["confederacy"] * 2, "story": ["s1", "s2"],
                                  "measure": ["holistic"] * 2, "score": [7.0, np.nan]})
    assert appendix.collect_scores(holistic_rows, None).equals(appendix.judge_scores(holistic_rows))
    wide = appendix.scores_wide(appendix.collect_scores(holistic_rows))
    assert wide.loc[("confederacy", "s1"), "holistic"] == 7.0 and np.isnan(wide.loc[("confederacy", "s2"), "holistic"])
    assert appendix.sage_overview(None).empty and "overall_score" in appendix.sage_overview(None)
    tagged = appendix.with_provenance(holistic_rows, backend="b", model="m", profile="smoke")
    assert list(tagged.columns[-3:]) == ["backend", "model", "profile"] and (tagged["model"] == "m").all()
    ledger = pd.DataFrame({"study": ["human", "human", "sage"], "measure": ["holistic", "holistic", None],
                           "layer": [None, None, "L5"], "input_tokens": [10, 20, 5], "output_tokens": [1, 2, 3],
                           "latency_s": [0.5, 0.25, 1.0]})
    cost = appendix.cost_summary(ledger)
    assert cost["input_tokens"].sum() == 35 and len(cost) == 2
    assert cost.xs("holistic", level="measure")["input_tokens"].iloc[0] == 30
    assert appendix.cost_summary(ledger.head(0)).empty

    class Judge:
        is_embedded_small_model = True
    assert "correlations near zero" in appendix.judge_note(Judge())
    Judge.is_embedded_small_model = False
    assert appendix.judge_note(Judge()) == ""


def test_published_judges_against_experts():
    from scipy import stats

    from judgelab.human import artifice

    human = appendix.load_human("artifice")
    knobs = dict(profiles.knobs("human", "smoke"), n_boot=200)
    tab = appendix.published_judges_vs_experts(human, knobs, judges=["gpt4", "gemini-pro"]).set_index("judge")
    g = tab.loc["gpt4"]
    assert g["n_verdicts"] == 672 and g["n_unparsed"] == 0
    # Cohen's kappa from its definition: (p_o - p_e) / (1 - p_e), p_e from the two yes-rates
    p_o, pj, pm = g["agreement"], g["judge_yes_rate"], g["expert_yes_rate"]
    p_e = pj * pm + (1 - pj) * (1 - pm)
    assert g["kappa"] == pytest.approx((p_o - p_e) / (1 - p_e))
    # story-level: the judge's tests passed against the experts' mean tests passed
    j = artifice.load_published_judge("gpt4").groupby("story")["value"].sum()
    e = human[human["criterion"] == "tests_passed"].groupby("story")["value"].mean()
    assert g["tests_passed_n"] == 48
    assert g["tests_passed_spearman"] == pytest.approx(stats.spearmanr(j[e.index], e).statistic)
    gem = tab.loc["gemini-pro"]
    assert gem["n_unparsed"] > 0 and gem["n_verdicts"] + gem["n_unparsed"] == 658
