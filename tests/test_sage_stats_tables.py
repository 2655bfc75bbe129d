"""Synthetic rows with known effects, the paper-table builders, interim loading and the figures."""
import numpy as np
import pandas as pd
import pingouin as pg
import pytest

from judgelab.sage.analysis import genre

from judgelab.sage.analysis import evaluations as interim

from judgelab.sage.analysis import paper_figures

from judgelab.sage.analysis import paper_tables

from judgelab.sage.analysis import reliability

from judgelab.sage.analysis import scores
from judgelab.sage.analysis import paper_values as pv
from judgelab.sage.protocol.schemas import SCALE_NOTE
from sage_synthetic import (
    SyntheticEffects, evaluation_records, rows_from_records, synthetic_rows, synthetic_summary,
    write_synthetic_interim,
)

SMALL = {"canonical": 12, "pulp": 8, "llm": 8}


@pytest.fixture(scope="module")
def syn():
    rows = synthetic_rows(SMALL, seed=5)
    return rows, synthetic_summary(rows, seed=5)


def test_synthetic_rows_follow_the_schema(syn):
    rows, summary = syn
    assert list(rows.columns) == list(scores.ROW_COLUMNS)
    assert list(summary.columns) == list(scores.SUMMARY_COLUMNS)
    n_stories = sum(SMALL.values())
    # 3 layers x 2 modes x (5 evaluator rounds + 2 validator tracks) x 4 dimensions per story
    assert len(rows) == n_stories * 3 * 2 * 7 * 4
    assert rows["score"].between(1, 5).all() and (rows["status"] == "ok").all()
    assert set(rows.loc[rows["category"] == "llm", "tier"]) == {"high", "average", "low"}
    assert len(summary) == n_stories * 3 * 2
    again = synthetic_rows(SMALL, seed=5)
    pd.testing.assert_frame_equal(rows, again)  # seeded


def test_synthetic_known_convergence_and_effects(syn):
    rows, _ = syn
    eff = SyntheticEffects()
    n_dims = sum(SMALL.values()) * 3 * 2 * 4
    n_jump = int(round(eff.nonconverged_share * n_dims))
    conv = reliability.convergence_rate(rows, by=None).iloc[0]
    assert conv["n_converged"] == n_dims - n_jump  # jumps are >= 0.5, the rest <= 0.1
    story = scores.story_scores(rows)
    means = story.groupby(["layer", "category"])["score"].mean()
    for layer in scores.LAYERS:
        assert means[(layer, "canonical")] > means[(layer, "llm")] + 0.5


def test_synthetic_mode_shift_is_recovered():
    eff = SyntheticEffects(mode_shift={"L4": 0.6, "L5": 0.0, "L6": 0.0}, dimension_sd=0.1)
    rows = synthetic_rows({"canonical": 10, "pulp": 10, "llm": 10}, effects=eff, seed=2)
    mi = reliability.mode_invariance(scores.story_scores(rows)).set_index("layer")
    assert mi.loc["L4", "difference"] == pytest.approx(0.6, abs=0.12)
    assert mi.loc["L4", "p_t"] < 1e-6
    assert abs(mi.loc["L5", "difference"]) < 0.1


def test_synthetic_failures_are_never_scored():
    rows = synthetic_rows({"canonical": 3, "pulp": 0, "llm": 0}, effects=SyntheticEffects(failure_rate=0.2), seed=1)
    failed = rows["status"] == "failed"
    assert failed.any() and rows.loc[failed, "score"].isna().all()
    fa = reliability.failure_accounting(rows, by=None).iloc[0]
    assert fa["n_failed_rows"] == failed.sum() and fa["n_failed_rows_scored"] == 0


def test_table11_puts_paper_values_beside_and_agrees_with_genre(syn):
    rows, _ = syn
    units = scores.story_scores(rows)
    t = paper_tables.table11_genre_comparison(units, analyses=("story_x_mode",), n_boot=20)  # the paper's reading
    assert list(t["layer"]) == ["L4", "L5", "L6", "average"]
    cols = list(t.columns)
    # the paper's value right after the statistic and its interval (X, X_ci_low, X_ci_high, paper_X)
    assert cols.index("paper_mean_canonical") == cols.index("mean_canonical") + 3
    assert cols.index("mean_canonical_ci_high") == cols.index("mean_canonical") + 2
    assert cols.index("paper_d_canonical_llm_sqrt_mean_var") == cols.index("d_canonical_llm_sqrt_mean_var") + 3
    l4 = t.set_index("layer").loc["L4"]
    assert l4["paper_mean_canonical"] == pv.TABLE11["L4"]["mean_canonical"].value
    x = units.query("layer == 'L4' and category == 'canonical'")["score"]
    y = units.query("layer == 'L4' and category == 'llm'")["score"]
    assert l4["d_canonical_llm_pooled_sd"] == pytest.approx(pg.compute_effsize(x, y, eftype="cohen"))
    assert l4["mean_canonical"] == pytest.approx(x.mean())
    avg = t.set_index("layer").loc["average"]
    per_story = units.groupby(["story_id", "mode", "category"])["score"].mean()
    assert avg["mean_llm"] == pytest.approx(per_story.xs("llm", level="category").mean())


def test_paper_d_check_identifies_the_papers_convention():
    d = paper_tables.paper_d_check().set_index("layer")
    # d recomputed from the paper's rounded means and SDs: within rounding of the printed d
    assert (d["d_from_paper_means_sqrt_mean_var"] - d["paper_d"]).abs().max() < 0.02
    assert (d["d_from_paper_means_pooled_sd"] - d["paper_d"]).abs().max() > 0.1


def test_table08_09_10_on_synthetic(syn):
    rows, summary = syn
    story = scores.story_scores(rows)
    modes = reliability.mode_invariance(story)
    t8 = paper_tables.table08_reliability(rows, summary, modes, n_boot=20)
    m = t8.set_index(["metric", "track"])
    assert m.loc[("total_evaluations", ""), "value"] == sum(SMALL.values()) * 6
    assert m.loc[("total_evaluations", ""), "paper_value"] == 600
    assert m.loc[("peer_agreement", "validator_review"), "value"] >= m.loc[("peer_agreement", "validator_blind"), "value"]
    assert m.loc[("peer_agreement", "validator_blind"), "paper_qualifier"] == ">"
    t9 = paper_tables.table09_mode_invariance(modes)
    assert list(t9["layer"]) == ["L4", "L5", "L6", "overall", reliability.POOLED_OVERALL]
    assert t9.set_index("layer").loc["overall", "paper_content_mean"] == pv.TABLE9["overall"]["content_mean"].value
    t10 = paper_tables.table10_cross_layer(story, n_boot=20)
    t10 = t10[t10["analysis"] == "story_x_mode"]
    assert list(t10["layer_pair"]) == ["L4 x L5", "L4 x L6", "L5 x L6"]
    assert (t10["pearson_r"] > 0.3).all()  # a shared story factor makes layers correlate
    assert list(t10["paper_pearson_r"]) == [0.649, 0.683, 0.680]


def test_tables_in_a_smoke_sized_run_explain_instead_of_crashing():
    # the smoke profile: one canonical story, one layer, both modes
    recs = []
    for mode in ("content", "title"):
        recs += evaluation_records("s1", "L4", mode, {r: [3.0, 3.5, 4.0, 2.5] for r in range(1, 6)},
                                   validator_blind=[3.0, 3.0, 4.0, 3.0], validator_review=[3.0, 3.5, 4.0, 2.5])
    rows = rows_from_records(recs)
    story = scores.story_scores(rows)
    modes = reliability.mode_invariance(story)
    t8 = paper_tables.table08_reliability(rows, None, modes, n_boot=20)
    assert t8.set_index(["metric", "track"]).loc[("convergence_rate", ""), "value"] == 1.0
    t9 = paper_tables.table09_mode_invariance(modes).set_index("layer")
    assert t9.loc["L4", "note"] == "1 pairs < 2"
    assert "no rows for layer=L5" in t9.loc["L5", "note"]
    t10 = paper_tables.table10_cross_layer(story, n_boot=20)
    assert t10["note"].str.len().gt(0).all() and t10["pearson_r"].isna().all()
    t11 = paper_tables.table11_genre_comparison(story, analyses=("story",), n_boot=20).set_index("layer")
    assert "no llm scores" in t11.loc["L4", "note"] and np.isnan(t11.loc["L4", "d_canonical_llm_pooled_sd"])
    tiers = genre.llm_tiers(story)
    assert "no LLM-generated story" in tiers["note"].iloc[0]
    msgs = interim.coverage_messages(rows, ["L5", "L6"])
    assert any("L5, L6" in m for m in msgs) and any("pulp, llm" in m for m in msgs)
    # figures draw, with words where there is no data
    traj = reliability.round_trajectories(rows)
    fig2 = paper_figures.plot_round_trajectories(traj)
    assert [t.get_text() for t in fig2.axes[1].texts] == ["no evaluator rows for L5"]
    fig3 = paper_figures.plot_genre_means(genre.genre_descriptives(story))
    assert "Pulp (no scores)" in [t.get_text() for t in fig3.axes[0].get_legend().get_texts()]
    fig4 = paper_figures.plot_effect_sizes(genre.genre_pairwise(story))
    assert fig4.axes[0].texts[0].get_text().startswith("d not computable")
    for fig in (fig2, fig3, fig4):
        paper_figures.plt.close(fig)


def test_interim_round_trip(tmp_path):
    paths = write_synthetic_interim(tmp_path, {"canonical": 2, "pulp": 2, "llm": 2}, layers=("L4", "L6"), seed=3)
    assert len(paths) == 4
    rows, missing = interim.load_rows(directory=tmp_path)
    assert missing == ["L5"] and set(rows["layer"]) == {"L4", "L6"}
    summary, _ = interim.load_summaries(directory=tmp_path)
    assert len(summary) == 6 * 2 * 2
    assert scores.provenance_of(rows) == ("synthetic", "synthetic-known-effects")
    with pytest.raises(scores.SageStatsError, match="run notebooks"):
        interim.load_rows(directory=tmp_path / "empty")


def test_story_scores_complete_only():
    recs = evaluation_records("s1", "L4", "content", {5: [3.0, 4.0, None, 5.0]}) + \
        evaluation_records("s2", "L4", "content", {5: [3.0, 4.0, 2.0, 5.0]})
    rows = rows_from_records(recs)
    full = scores.story_scores(rows)
    assert list(full["story_id"]) == ["s2"] and full["score"].iloc[0] == pytest.approx(3.5)
    partial = scores.story_scores(rows, complete_only=False).set_index("story_id")
    assert partial.loc["s1", "score"] == pytest.approx(4.0) and partial.loc["s1", "n_dimensions"] == 3


def test_breakdowns_and_observation_units(syn):
    rows, _ = syn
    conv = reliability.convergence_breakdown(rows)
    overall = reliability.convergence_rate(rows, by=None).iloc[0]
    assert conv.set_index("grouping").loc["all", "convergence_rate"] == overall["convergence_rate"]
    by_layer = conv[conv["grouping"] == "layer"]
    assert list(by_layer["group"]) == ["L4", "L5", "L6"]
    ag = reliability.agreement_breakdown(rows)
    assert set(ag["track"]) == {"validator_blind", "validator_review"}
    blind_all = ag[(ag["track"] == "validator_blind") & (ag["layer"] == "all")].iloc[0]
    assert blind_all["mad"] == pytest.approx(reliability.track_agreement(rows, by=None).iloc[0]["mad"])
    story = scores.story_scores(rows)
    per_story = scores.observation_units(story, "story")
    assert len(per_story) == len(story) / 2
    one = per_story.iloc[0]
    both = story[(story["story_id"] == one["story_id"]) & (story["layer"] == one["layer"])]["score"]
    assert one["score"] == pytest.approx(both.mean())
    assert set(scores.observation_units(story, "title")["mode"]) == {"title"}
    with pytest.raises(scores.SageStatsError, match="unknown unit"):
        scores.observation_units(story, "chapter")


def test_paper_values_are_cited_and_unique():
    tables = {"table08": {"": pv.TABLE8}, "table09": pv.TABLE9,
              "table10": {"x".join(k): v for k, v in pv.TABLE10.items()}, "table11": pv.TABLE11}
    rows = [("table11", layer, "cohens_d_canonical_llm", v.source) for layer, v in pv.COHENS_D_CANONICAL_LLM.items()]
    rows += [(name, key, stat, v.source) for name, blocks in tables.items()
             for key, stats in blocks.items() for stat, v in stats.items()]
    f = pd.DataFrame(rows, columns=["table", "key", "statistic", "source"])
    assert set(f["table"]) == {"table08", "table09", "table10", "table11"}
    assert not f.duplicated(["table", "key", "statistic"]).any()
    assert f["source"].str.len().gt(0).all()
    # Table 11's "average" row is the mean of its layer rows (a consistency check of the constants)
    for cat in scores.CATEGORIES:
        layer_means = [pv.TABLE11[l][f"mean_{cat}"].value for l in scores.LAYERS]
        assert np.mean(layer_means) == pytest.approx(pv.TABLE11["average"][f"mean_{cat}"].value, abs=0.006)


def test_coverage_counts_stories():
    recs = evaluation_records("a", "L4", "content", {5: [3, 3, 3, 3]}) + \
        evaluation_records("b", "L4", "content", {5: [3, 3, 3, 3]}, category="llm", tier="low")
    cov = interim.coverage(rows_from_records(recs))
    assert len(cov) == 3 * 2
    l4c = cov[(cov["layer"] == "L4") & (cov["mode"] == "content")].iloc[0]
    assert (l4c["canonical"], l4c["pulp"], l4c["llm"]) == (1, 0, 1)


# ----------------------------------------------------------------------------- scale and truncation

def test_synthetic_truncation_knob_gives_a_known_share():
    rows = synthetic_rows(SMALL, effects=SyntheticEffects(truncated_share=0.25), seed=4)
    summary = synthetic_summary(rows, seed=4)
    n_content = sum(SMALL.values()) * 3                       # stories x layers, content mode
    per_eval = summary.groupby("mode")["truncated"].sum()
    assert per_eval["content"] == round(0.25 * n_content) and per_eval["title"] == 0
    assert scores.share_truncated(scores.story_scores(rows)) == pytest.approx(round(0.25 * n_content) / (2 * n_content))
    # the summary's flag is the rows' flag; without the knob nothing is truncated (and rows are as before)
    flags = rows.groupby(["story_id", "layer", "mode"])["truncated"].any()
    assert (summary.set_index(["story_id", "layer", "mode"])["truncated"] == flags.reindex(
        summary.set_index(["story_id", "layer", "mode"]).index)).all()
    base = synthetic_rows(SMALL, seed=4)
    assert not base["truncated"].any()
    pd.testing.assert_frame_equal(base.drop(columns="truncated"), rows.drop(columns="truncated"))


def two_of_four_truncated():
    """L4 and L5, both modes, two canonical stories: content-mode s1 is truncated in both layers, so
    2 of the 4 content evaluations (and 2 of 8 evaluations) rest on excerpts."""
    recs = []
    for layer, base in (("L4", 3.0), ("L5", 4.0)):
        for sid, shift in (("s1", 0.0), ("s2", 0.5)):
            for mode in ("content", "title"):
                sc = [base + shift] * 4
                recs += evaluation_records(sid, layer, mode, {4: sc, 5: sc}, validator_blind=sc,
                                           truncated=(sid == "s1" and mode == "content"))
    return rows_from_records(recs)


def test_tables_carry_share_truncated_and_the_scale():
    rows = two_of_four_truncated()
    story = scores.story_scores(rows)
    t8 = paper_tables.table08_reliability(rows, None, n_boot=20).set_index(["metric", "track"])
    assert t8.loc[("share_truncated", ""), "value"] == pytest.approx(0.25)
    assert t8.loc[("convergence_rate_layer_mean", ""), "value"] == 1.0
    assert t8.loc[("mode_invariance_max_abs_diff", ""), "share_truncated"] == pytest.approx(0.5)
    t9 = paper_tables.table09_from_rows(rows).set_index("layer")
    assert t9.loc["L4", "share_truncated"] == pytest.approx(0.5)
    assert t9.loc["L4", "truncation_note"].startswith("content scores come from excerpts")
    assert t9.loc["L6", "truncation_note"] == ""                        # no rows, nothing cut
    t10 = paper_tables.table10_cross_layer(story, analyses=("story_x_mode",), n_boot=20).set_index("layer_pair")
    assert t10.loc["L4 x L5", "share_truncated"] == pytest.approx(0.25)  # 2 of the 8 evaluations paired
    t11 = paper_tables.table11_genre_comparison(story, analyses=("story_x_mode",), n_boot=20).set_index("layer")
    assert t11.loc["L4", "share_truncated"] == pytest.approx(0.25)
    assert t11.loc["average", "share_truncated"] == pytest.approx(0.25)  # s1's content average includes excerpts
    content = paper_tables.table11_genre_comparison(story, analyses=("content",), n_boot=20).set_index("layer")
    assert content.loc["L4", "share_truncated"] == pytest.approx(0.5)
    assert content.loc["L4", "truncation_note"] == scores.TRUNCATION_NOTE
    dims = paper_tables.dimension_discrimination_table(rows, "content")
    assert dims["share_truncated"].eq(0.5).all()
    tables = [t8, t9, t10, t11, dims, reliability.convergence_breakdown(rows), reliability.agreement_breakdown(rows),
              reliability.failure_accounting(rows), reliability.round_trajectories(rows),
              genre.genre_pairwise(story), genre.llm_tiers(story)]
    for t in tables:
        assert t["scale"].eq(SCALE_NOTE).all() and "1.0–5.0" in SCALE_NOTE


def test_untruncated_tables_leave_the_note_empty(syn):
    rows, _ = syn
    t9 = paper_tables.table09_from_rows(rows)
    assert t9["share_truncated"].eq(0).all() and t9["truncation_note"].eq("").all()


def test_table09_anonymous_rows_pair_the_same_content_scores_with_the_anonymous_titles():
    """Content 3.0 / 3.5 (s1, s2); title as printed 3.2 / 3.7 (+0.2); title with an unknown author
    2.8 / 3.1 (-0.2, -0.4): the sensitivity rows give difference -0.3 over the same stories."""
    recs, anon = [], []
    for sid, content, printed, unknown in (("s1", 3.0, 3.2, 2.8), ("s2", 3.5, 3.7, 3.1)):
        for mode, v in (("content", content), ("title", printed)):
            recs += evaluation_records(sid, "L4", mode, {4: [v] * 4, 5: [v] * 4}, validator_blind=[v] * 4)
        anon += evaluation_records(sid, "L4", "title", {4: [unknown] * 4, 5: [unknown] * 4},
                                   validator_blind=[unknown] * 4)
    t9 = paper_tables.table09_from_rows(rows_from_records(recs), anonymous_rows=rows_from_records(anon))
    main = t9[t9["title_author"] == paper_tables.TITLE_AUTHOR_AS_PRINTED].set_index("layer")
    sens = t9[t9["title_author"] == paper_tables.TITLE_AUTHOR_ANONYMOUS].set_index("layer")
    assert main.loc["L4", "difference"] == pytest.approx(0.2)
    assert sens.loc["L4", "difference"] == pytest.approx(-0.3)
    assert sens.loc["L4", "content_mean"] == pytest.approx(main.loc["L4", "content_mean"]) == pytest.approx(3.25)
    assert sens.loc["L4", "title_mean"] == pytest.approx(2.95) and sens.loc["L4", "n_pairs"] == 2
    assert sens["mc_family"].str.startswith("sensitivity, title with an unknown author").all()
    assert not main["mc_family"].str.contains("sensitivity, title").any()
    assert sens["title_author_note"].str.contains("an unknown author").all()
    assert main["title_author_note"].str.contains("generating model").all()
    assert sens["paper_difference"].isna().all() and main.loc["L4", "paper_difference"] == pytest.approx(0.02)
    # without the sensitivity run the table is the main comparison alone
    alone = paper_tables.table09_from_rows(rows_from_records(recs))
    assert alone["title_author"].eq(paper_tables.TITLE_AUTHOR_AS_PRINTED).all() and len(alone) == len(main)


def test_table09_sensitivity_in_one_layer_pairs_that_layer_only_and_says_the_others_did_not_run():
    """The main run in L4 and L5, the anonymous-author run in L4 only (the demo's setting): the
    sensitivity's L4 row pairs L4's content scores (3.0, 3.5) with the unknown-author titles (2.8,
    3.1), its overall row is L4's, and the L5 row says it was not run instead of "0 pairs"."""
    recs, anon = [], []
    for sid, content, unknown in (("s1", 3.0, 2.8), ("s2", 3.5, 3.1)):
        for layer in ("L4", "L5"):
            for mode in ("content", "title"):
                recs += evaluation_records(sid, layer, mode, {4: [content] * 4, 5: [content] * 4},
                                           validator_blind=[content] * 4)
        anon += evaluation_records(sid, "L4", "title", {4: [unknown] * 4, 5: [unknown] * 4},
                                   validator_blind=[unknown] * 4)
    t9 = paper_tables.table09_from_rows(rows_from_records(recs), anonymous_rows=rows_from_records(anon))
    sens = t9[t9["title_author"] == paper_tables.TITLE_AUTHOR_ANONYMOUS].set_index("layer")
    assert sens.loc["L4", "difference"] == pytest.approx(-0.3) and sens.loc["L4", "n_pairs"] == 2
    assert sens.loc["overall", "difference"] == pytest.approx(-0.3)
    assert sens.loc["overall", "n_pairs"] == 2 and sens.loc["overall", "n_unpaired"] == 0
    assert sens.loc["L5", "n_pairs"] == 0 and sens.loc["L5", "n_unpaired"] == 0
    assert sens.loc["L5", "note"].startswith("not run for this layer")
    assert not str(sens.loc["L4", "note"]).startswith("not run")


def test_table11_compares_layers_as_differences_with_a_story_bootstrap():
    """Canonical stories score 1..5 + c and LLM stories 1..5 in each layer and mode (c = 3, 1, 2 in
    L4, L5, L6), pulp 3: each d is c / sd(1..5), so L4's d exceeds L5's by 2 / sd(1..5) and L6's by
    1 / sd(1..5), and the layer means are known; the story bootstrap's intervals hold them."""
    c = {"L4": 3.0, "L5": 1.0, "L6": 2.0}
    rows = []
    for layer, shift in c.items():
        for i, v in enumerate([1.0, 2.0, 3.0, 4.0, 5.0]):
            for mode in ("content", "title"):
                rows += [{"story_id": f"c{i}", "category": "canonical", "layer": layer, "mode": mode, "score": v + shift},
                         {"story_id": f"l{i}", "category": "llm", "layer": layer, "mode": mode, "score": v},
                         {"story_id": f"p{i}", "category": "pulp", "layer": layer, "mode": mode, "score": 3.0}]
    units = pd.DataFrame(rows).assign(tier="")
    t = paper_tables.table11_genre_comparison(units, analyses=("story",), n_boot=200).set_index("layer")
    sd = np.std([1, 2, 3, 4, 5], ddof=1)
    assert t.loc["L4", "d_canonical_llm_minus_L5"] == pytest.approx(2 / sd)
    assert t.loc["L6", "d_canonical_llm_minus_L5"] == pytest.approx(1 / sd)
    assert t.loc["L5", "d_canonical_llm_minus_L5"] == pytest.approx(0.0)
    means = {lay: np.mean([v + s for v in range(1, 6)] + list(range(1, 6)) + [3.0] * 5) for lay, s in c.items()}
    assert t.loc["L5", "mean_all"] == pytest.approx(means["L5"])
    assert t.loc["L6", "mean_all_minus_L4"] == pytest.approx(means["L6"] - means["L4"]) == pytest.approx(-1 / 3)
    lo, hi = t.loc["L4", ["d_canonical_llm_minus_L5_ci_low", "d_canonical_llm_minus_L5_ci_high"]]
    assert lo <= 2 / sd <= hi
    assert t.loc["L4", "paper_d_canonical_llm_minus_L5"] == pytest.approx(2.68 - 1.68)
    assert t.loc["L6", "paper_mean_all_minus_L4"] == pytest.approx(3.59 - 3.64)
