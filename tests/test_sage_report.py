"""What notebooks 01-06 show, with known answers: the layer report of 02-04 (behind the fake chat
server), the L1-L3 features of 01, the loaders and table builders of 05-06, and the interim files
they write and read through ``judgelab.interim``."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from judgelab import exchange, interim, reporting
from judgelab.gateway import Gateway
from fake_openai_server import FakeChatServer
from judgelab.run import Run
from judgelab.sage import report
from judgelab.sage.analysis import evaluations, independence, paper_tables, scores
from sage_synthetic import (
    DIMENSIONS, evaluation_records, rows_from_records, synthetic_rows, synthetic_summary,
)
from judgelab.sage.layers import features as l123
from figure_geometry import text_overlaps

TEXT = ("THE LONG WINTER\n\nBy Ada Fenwick\n\nMarta wrapped the bread in cloth and waited by the door for "
        "her son, who had gone to the river before dawn and had not come back. Her hands would not keep still.")


def tiny_corpus() -> pd.DataFrame:
    """One canonical story in the corpus.parquet schema (CONTRIBUTING.md)."""
    return pd.DataFrame([{"story_id": "a", "category": "canonical", "title": "The Long Winter",
                          "author": "Ada Fenwick", "year": 1900, "translator": "", "model": "", "tier": "",
                          "words": 40, "in_range": True, "text": TEXT}])


@pytest.fixture
def out_root(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    return tmp_path


# ---------------------------------------------------------------- layer-report numbers, by hand

def hand_rows() -> pd.DataFrame:
    """Two canonical stories in content mode (R5: a = 4,3,2,1; b = 2,3,4,5), one llm story whose
    R5 failed, validator scores for a only."""
    recs = evaluation_records("a", "L4", "content", {4: [4.0, 3.0, 2.0, 1.0], 5: [4.0, 3.0, 2.0, 1.0]},
                              validator_blind=[3.0, 3.0, 3.0, 3.0])
    recs += evaluation_records("b", "L4", "content", {4: [2.0, 3.0, 4.0, 4.0], 5: [2.0, 3.0, 4.0, 5.0]})
    recs += evaluation_records("c", "L4", "content", {5: [None] * 4}, category="llm")
    return rows_from_records(recs)


def test_score_distribution_of_final_scores():
    dist = report.score_distribution(hand_rows())
    ipd = dist.loc[("content", "canonical", "IPD")]
    assert ipd["count"] == 2 and ipd["mean"] == 3.0 and ipd["min"] == 2.0 and ipd["max"] == 4.0
    assert ipd["std"] == pytest.approx(math.sqrt(2))           # (4 - 3)^2 + (2 - 3)^2 over n - 1 = 1
    assert dist.loc[("content", "canonical", "CSP"), "mean"] == 3.0
    assert "llm" not in dist.index.get_level_values("category")  # failed replies are never scored


def test_trajectory_pivot_orders_steps_and_leaves_out_empty_ones():
    traj = report.trajectory_table(hand_rows())
    wide = report.trajectory_pivot(traj)
    assert list(wide.columns) == ["R4", "R5", "V-blind"]        # no R1-R3, no review in these rows
    assert wide.loc[("content", "CPC"), "R4"] == pytest.approx(2.5)   # (1 + 4) / 2
    assert wide.loc[("content", "CPC"), "R5"] == pytest.approx(3.0)   # (1 + 5) / 2
    assert wide.loc[("content", "IPD"), "V-blind"] == 3.0


def test_r4_score_changes_counts_flags_and_scored_r4_replies():
    rows = hand_rows()
    rows.loc[(rows["story_id"] == "b") & (rows["round"] == 4) & (rows["dimension"] == "CPC"), "r4_score_changed"] = True
    assert report.r4_score_changes(rows) == (1, 8)              # 2 stories x 4 dimensions scored in R4


def test_truncated_evaluations_counts_evaluations_not_rows():
    rows = pd.DataFrame({"story_id": ["a", "a", "b", "a"], "mode": ["content", "content", "content", "title"],
                         "truncated": [True, False, False, False]})
    summary = pd.DataFrame({"story_id": ["a", "b", "a"], "mode": ["content", "content", "title"]})
    assert report.truncated_evaluations(rows, summary) == (1, 2)


def test_token_means_per_mode():
    acc = pd.DataFrame({"mode": ["content", "content", "title"], "n_calls": [7, 5, 7],
                        "input_tokens": [1000, 2000, 300], "cached_tokens": [500, 0, 0],
                        "processed_tokens": [500, 2000, 300], "output_tokens": [10, 20, 30],
                        "latency_s": [1.0, 2.0, 0.25]})
    means = report.token_means(acc)
    assert means.loc["content", "input_tokens"] == 1500 and means.loc["content", "n_calls"] == 6
    assert means.loc["content", "processed_tokens"] == 1250 and means.loc["title", "latency_s"] == 0.2  # 0.25 -> 0.2


def test_png_bytes_render_a_closed_figure():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    plt.close(fig)
    assert report.png_bytes(fig).startswith(b"\x89PNG")


# ---------------------------------------------------------------- the layer report end to end

def fake_gateway(srv, tmp_path) -> Gateway:
    """A gateway to the fake server: every reply is synthesized from the request's schema (first
    enum value), so every score is 1.0 and every trust level "high"."""
    return Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                 cache_path=tmp_path / "c.sqlite", progress=False)


def smoke_run(gateway=None, profile="smoke") -> Run:
    """Notebook 02's run (using ``gateway``, as ``LayerReport.open`` has it use the one it opens)."""
    run = Run("02_l4_cultural", profile)
    if gateway is not None:
        run.use(gateway)
    return run


def test_layer_report_runs_writes_and_shows(out_root, monkeypatch):
    monkeypatch.setenv("JUDGELAB_CACHE_PATH", str(out_root / "c.sqlite"))  # where the exchange reads
    interim.write(tiny_corpus(), "corpus")                     # what notebook 01 leaves behind
    with FakeChatServer(None) as srv:
        gw = fake_gateway(srv, out_root)
        rep = report.LayerReport.open("L4", smoke_run(gw), gateway=gw)
        assert rep.knobs()["per_category"] == {"canonical": 1, "pulp": 0, "llm": 0}
        assert "fake-model" in rep.header().text
        shown = rep.run()
        sent = [m["content"] for body in srv.calls for m in body["messages"]]
    assert len(shown.table) == 2                                # 1 story x 2 modes
    assert "2 evaluations, 56 rows" in shown.text              # 2 x 7 replies x 4 dimensions
    # then the anonymous-author title run (Table 9's sensitivity): 1 evaluation, 7 calls, 28 rows
    anon = interim.read("sage_rows_anonymous_L4")
    assert len(anon) == 28 and set(anon["mode"]) == {"title"} and len(srv.calls) == 21
    assert "an unknown author" in shown.text and any("by an unknown author" in c for c in sent)
    assert "Texts cut" not in shown.text                       # the story fits the smoke budget
    rows = interim.read("sage_rows_L4")
    assert len(rows) == 56 and rows["score"].eq(1.0).all()
    pd.testing.assert_frame_equal(interim.read("sage_summary_L4"), rep.result.summary)
    assert rep.disagreements().table.empty                     # blind 1.0 = R5 1.0
    final = rep.final_scores()
    assert final.table["mean"].eq(1.0).all() and final.table["count"].eq(1).all()
    saved = pd.read_csv(out_root / "results" / "tables" / "sage_score_distribution_L4.csv")
    assert set(saved["dimension"]) == set(DIMENSIONS["L4"]) and set(saved["mode"]) == {"content", "title"}
    assert (out_root / "figures" / "sage_scores_L4.png").exists()
    traj = rep.trajectories()
    assert list(traj.table.columns) == report.STEPS and (traj.table == 1.0).all().all()
    assert "0 of 8 dimension scores" in traj.text              # no score changed in R4
    assert (out_root / "figures" / "sage_trajectory_L4.pdf").exists()
    fails = rep.failures()
    assert fails.table.empty and "**0 failed or not-run replies** in 0 of 2" in fails.text
    tok = rep.tokens()
    assert tok.table["n_calls"].eq(7).all()
    assert len(pd.read_csv(out_root / "results" / "tables" / "sage_tokens_L4.csv")) == 2
    assert "judge=openai-compatible:fake-model" in tok.text      # the run's caption line
    # the judge at work: the anonymous title run went last with the main run's tags; the
    # exchange is still one whole main-run evaluation (5 rounds, blind, review), its story by its author
    assert rep.exchange().text.count("#### ") == 7
    ex = exchange.load_exchange({"study": "sage", "layer": "L4"})
    assert ex.item["mode"] == "title" and [c.tags["track"] for c in ex.calls] == (
        ["evaluator"] * 5 + ["validator_blind", "validator_review"])
    sent = " ".join(m["content"] for c in ex.calls for m in c.new_messages)
    assert "by Ada Fenwick" in sent and "unknown author" not in sent
    headings = [h for h, _ in rep.sections()]
    assert len(headings) == 7 and "sage_rows_L4.parquet" in headings[0] and "SAGE L4" in headings[-1]


def test_layer_report_parameters_from_the_command_line(out_root):
    """An empty STORIES string means the profile's selection; MODES may be "content"."""
    with FakeChatServer(None) as srv:
        rep = report.LayerReport.open("L4", smoke_run(), gateway=fake_gateway(srv, out_root), corpus=tiny_corpus(),
                                      stories="", modes="content", context_policy="error")
        assert rep.knobs()["context_policy"] == "error"
        shown = rep.run()
    assert shown.table[["story_id", "mode"]].values.tolist() == [["a", "content"]]
    assert "on, but this run has no title mode" in shown.text and rep.anonymous is None


def test_layer_report_without_the_sensitivity_removes_a_stale_anonymous_file(out_root):
    """An anonymous file from an earlier run would be paired with other scores: it goes (its
    calls stay in the cache), and the report says the sensitivity was off."""
    stale = interim.path_of("sage_rows_anonymous_L4")
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_bytes(b"old")
    with FakeChatServer(None) as srv:
        rep = report.LayerReport.open("L4", smoke_run(), gateway=fake_gateway(srv, out_root), corpus=tiny_corpus(),
                                      anonymous_author_sensitivity="false")
        assert rep.knobs()["anonymous_author_sensitivity"] is False
        shown = rep.run()
        assert len(srv.calls) == 14
    assert not stale.exists() and "sensitivity** (off)" in shown.text


def test_layer_report_refuses_bad_input(out_root):
    with pytest.raises(ValueError, match="unknown layer"):
        report.LayerReport.open("L7", smoke_run(), gateway=object(), corpus=tiny_corpus())
    with pytest.raises(ValueError, match="unknown PROFILE"):
        report.LayerReport.open("L4", smoke_run(profile="full"), gateway=object(), corpus=tiny_corpus())
    rep = report.LayerReport.open("L4", smoke_run(), gateway=object(), corpus=tiny_corpus())
    with pytest.raises(RuntimeError, match="call run"):
        rep.final_scores()


# ---------------------------------------------------------------- notebook 01: L1-L3

def test_feature_summary_wide_and_preview():
    feats = pd.DataFrame({"story_id": ["a", "b", "c"], "category": ["canonical", "canonical", "llm"],
                          "l1_mtld": [10.0, 20.0, 40.0], "l2_arc_range": [0.5, 0.7, np.nan]})
    wide = l123.feature_summary_wide(l123.feature_summary(feats))
    assert list(wide.index) == ["l1_mtld", "l2_arc_range"]     # FEATURE_COLUMNS order
    assert wide.loc["l1_mtld", "canonical"] == 15.0 and wide.loc["l1_mtld", "llm"] == 40.0
    assert np.isnan(wide.loc["l2_arc_range", "llm"])
    sd = l123.feature_summary_wide(l123.feature_summary(feats), stat="sd")
    assert sd.loc["l1_mtld", "canonical"] == pytest.approx(math.sqrt(50))
    preview = l123.features_preview(feats, n_features=1)
    assert preview.shape == (1, 3) and preview.loc["l1_mtld", "c"] == 40.0


def test_plot_features_by_category_marks_features_not_computed(out_root):
    feats = pd.DataFrame({"story_id": ["a", "b"], "category": ["canonical", "llm"], "l1_mtld": [10.0, 20.0],
                          "l3_embed_spread": [np.nan, np.nan]})
    fig = l123.plot_features_by_category(feats, {"l1_mtld": "MTLD", "l3_embed_spread": "spread"}, n_cols=2)
    shown = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in shown] == ["MTLD", "spread"]
    assert any("not computed" in t.get_text() for t in shown[1].texts)
    assert not any("not computed" in t.get_text() for t in shown[0].texts)
    assert set(l123.FEATURES_SHOWN) <= set(l123.FEATURE_COLUMNS)
    reporting.save_figure(fig, "features_test", caption="A caption long enough to wrap " * 8)
    assert text_overlaps(fig) == []


# ---------------------------------------------------------------- notebooks 05-06: loading and tables

def write_layer(rows: pd.DataFrame, directory, layer: str, summary: bool = True) -> None:
    """Synthetic rows of one layer as notebook 02-04 would write them (the runner's evidence
    strengths are words; failed replies have none)."""
    rows = rows.assign(evidence_strength=np.where(rows["status"] == "ok", "moderate", ""))
    interim.write(rows[rows["layer"] == layer].reset_index(drop=True), f"sage_rows_{layer}", directory)
    if summary:
        summ = synthetic_summary(rows)
        interim.write(summ[summ["layer"] == layer].reset_index(drop=True), f"sage_summary_{layer}", directory)


def test_load_evaluations_notes_missing_layers_and_summaries(tmp_path):
    rows = synthetic_rows({"canonical": 2, "pulp": 2, "llm": 2}, layers=("L4", "L5"), seed=3)
    write_layer(rows, tmp_path, "L4")
    write_layer(rows, tmp_path, "L5", summary=False)
    ev = evaluations.load_evaluations(directory=tmp_path)
    assert ev.missing_layers == ["L6"] and set(ev.rows["layer"]) == {"L4", "L5"}
    assert set(ev.summary["layer"]) == {"L4"}                   # L5 has rows but no summary
    assert ev.backend == "synthetic" and ev.model == "synthetic-known-effects"
    assert ev.notes_markdown().startswith("- **Note:** No rows for layer(s) L6")
    assert ev.description() == f"{len(ev.rows):,} rows; 6 stories; rows made in profile(s) synthetic"
    assert ev.coverage().set_index(["layer", "mode"]).loc[("L4", "content"), "canonical"] == 2
    only_rows = tmp_path / "only_rows"
    only_rows.mkdir()
    write_layer(rows, only_rows, "L5", summary=False)
    ev = evaluations.load_evaluations(["L5"], directory=only_rows)
    assert ev.summary is None and "summary files missing" in ev.notes[0]
    with pytest.raises(scores.SageStatsError, match="run notebooks"):
        evaluations.load_evaluations(directory=tmp_path / "nothing")


def mode_records():
    """Two canonical stories: content R5 all 3.0 and 2.0, title R5 all 4.0 and 3.0 (title - content = +1)."""
    recs = []
    for sid, content, title in (("a", 3.0, 4.0), ("b", 2.0, 3.0)):
        recs += evaluation_records(sid, "L4", "content", {4: [content] * 4, 5: [content] * 4},
                                   validator_blind=[content] * 4)
        recs += evaluation_records(sid, "L4", "title", {4: [title] * 4, 5: [title] * 4},
                                   validator_blind=[title] * 4)
    return rows_from_records(recs)


def test_table09_and_table08_from_rows():
    rows = mode_records()
    t9 = paper_tables.table09_from_rows(rows).set_index("layer")
    assert t9.loc["L4", "content_mean"] == 2.5 and t9.loc["L4", "title_mean"] == 3.5
    assert t9.loc["L4", "difference"] == 1.0 and t9.loc["L4", "paper_content_mean"] == 3.63
    t8 = paper_tables.table08_reliability(rows, None).set_index("metric")
    assert t8.loc["mode_invariance_max_abs_diff", "value"] == 1.0
    assert t8.loc["mode_invariance_max_abs_diff", "paper_value"] == 0.05


def test_paper_values_for_figures_3_and_4():
    assert paper_tables.paper_genre_means(["L4"]) == {"L4": {"canonical": 3.96, "pulp": 3.83, "llm": 2.55}}
    assert paper_tables.paper_cohens_d() == {"L4": 2.68, "L5": 1.68, "L6": 2.40}


def dimension_records():
    """Canonical c1, c2 (content 4 and 5) against llm l1, l2 (content 2 and 3); title mode 3 for all."""
    recs = []
    for sid, cat, content in (("c1", "canonical", 4.0), ("c2", "canonical", 5.0), ("l1", "llm", 2.0),
                              ("l2", "llm", 3.0)):
        recs += evaluation_records(sid, "L5", "content", {5: [content] * 4}, category=cat)
        recs += evaluation_records(sid, "L5", "title", {5: [3.0] * 4}, category=cat)
    return rows_from_records(recs)


@pytest.mark.parametrize("unit, n_a, diff", [("content", 2, 2.0), ("title", 2, 0.0), ("story_mode", 4, 1.0),
                                             ("story", 2, 1.0)])
def test_dimension_discrimination_table_uses_the_genre_unit(unit, n_a, diff):
    table = paper_tables.dimension_discrimination_table(dimension_records(), unit)
    assert set(table["dimension"]) == set(DIMENSIONS["L5"])
    assert (table["n_a"] == n_a).all() and (table["n_b"] == n_a).all()
    assert np.allclose(table["diff"], diff)


def test_unit_counts():
    units = scores.observation_units(scores.story_scores(dimension_records()), "story_mode")
    counts = scores.unit_counts(units)
    assert counts.loc["L5", "canonical"] == 4 and counts.loc["L5", "llm"] == 4
    with pytest.raises(scores.SageStatsError, match="lack column"):
        scores.unit_counts(units.drop(columns="score"))


def test_independence_data_from_the_interim_files(tmp_path):
    rows = synthetic_rows({"canonical": 2, "pulp": 1, "llm": 1}, layers=("L4",), seed=3)
    write_layer(rows, tmp_path, "L4")
    ids = sorted(set(rows["story_id"]))
    feats = pd.DataFrame({"story_id": ids[:3] + ["other"], "category": ["canonical", "canonical", "llm", "pulp"],
                          "l1_mtld": [1.0, 2.0, 3.0, 4.0], "l2_arc_range": 0.5, "l3_embed_spread": np.nan})
    interim.write(feats, "sage_l123_features", tmp_path)
    data = independence.load_independence_data(directory=tmp_path)
    assert data.feature_names == ["l1_mtld", "l2_arc_range", "l3_embed_spread"]
    assert len(data.scores) == 4 and data.scores["L5"].isna().all()   # L5 and L6 not run
    assert sorted(data.joined["story_id"]) == ids[:3]
    assert data.notes == ["No summary for L5, L6: run notebooks 02-04 first; those layers are left out."]
    text = data.description("smoke")
    assert "L4-L6 content-mode scores for 4; both for 3." in text and "**Only 3 stories" in text


def test_independence_helpers_known_answers():
    corr = pd.DataFrame({"n_tests": [3, 3, 3], "reject_fdr_bh": [True, False, False],
                         "reject_bonferroni": [False, False, False], "note": ["", "", ""]})
    assert independence.correlation_summary(corr) == \
        "3 feature x score tests; significant after FDR-BH: 1, after Bonferroni: 0 (alpha = 0.05)."
    none = pd.DataFrame({"n_tests": [0], "reject_fdr_bh": [False], "reject_bonferroni": [False],
                         "note": ["n=1 stories with both values; need >= 4"]})
    assert independence.correlation_summary(none).endswith("need >= 4")
    assert independence.first_note(pd.DataFrame({"note": [None, "", "too few"]})) == "too few"
    assert independence.first_note(pd.DataFrame({"note": ["", ""]})) == ""
    feats = pd.DataFrame({"story_id": list("abcdef"), "category": ["pulp", "canonical", "pulp", "pulp", "canonical",
                                                                   "llm"]})
    assert independence.arc_story_ids(feats, per_category=2) == ["a", "b", "c", "e", "f"]
