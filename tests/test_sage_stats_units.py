"""Units and intervals of SAGE: the story as the unit, intervals on every headline number of Tables 8-11,
multiple-comparison families, and the boundaries (agreement at exactly 0.5)."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from judgelab.sage.analysis import genre, paper_figures, paper_tables, reliability, scores
from sage_synthetic import (
    SyntheticEffects, evaluation_records, rows_from_records, synthetic_rows, synthetic_summary,
)
from judgelab.stats.tests import adjust

SMALL = {"canonical": 10, "pulp": 8, "llm": 8}
B = 120  # bootstrap resamples in these tests: enough to check shapes and containment


@pytest.fixture(scope="module")
def syn():
    rows = synthetic_rows(SMALL, seed=5)
    return rows, synthetic_summary(rows, seed=5), scores.story_scores(rows)


# --------------------------------------------------------------------------- boundaries

def test_agreement_at_exactly_half_a_point_does_not_count():
    """Scores have one decimal: 3.6 - 4.1 (= -0.49999999999999956 in floating point) is a difference
    of exactly 0.5, and the rule is |diff| < 0.5: it does not agree (with ``<=``, or without the
    tolerance, it would). 3.7 - 4.1 and 4.5 - 4.1 (0.4) do."""
    recs = evaluation_records("s1", "L4", "content", {4: [4.1] * 4, 5: [4.1] * 4},
                              validator_blind=[3.6, 4.6, 3.7, 4.5])
    assert abs(3.6 - 4.1) < 0.5  # the float difference alone would count as agreement
    ag = reliability.track_agreement(rows_from_records(recs), by=None).iloc[0]
    assert ag["agreement_rate"] == pytest.approx(0.5)
    assert ag["mad"] == pytest.approx((0.5 + 0.5 + 0.4 + 0.4) / 4)


def test_convergence_at_exactly_the_threshold_does_not_count():
    recs = evaluation_records("s1", "L4", "content", {4: [4.0, 4.0, 3.2, 1.0], 5: [4.3, 3.7, 3.5, 1.2]})
    items = reliability.convergence_items(rows_from_records(recs))
    assert items["converged"].tolist() == [False, False, False, True]  # 0.3 is not < 0.3


# --------------------------------------------------------------------------- Table 11

def test_table11_has_every_analysis_with_its_unit_family_and_intervals(syn):
    _, _, story = syn
    t = paper_tables.table11_genre_comparison(story, n_boot=B)
    assert list(t["analysis"].unique()) == list(scores.ANALYSES)
    assert (t.groupby("analysis").size() == 4).all()
    assert t.loc[t["analysis"] == "story_x_mode", "unit"].str.contains("sensitivity").all()
    main = t[t["analysis"] == "story"].set_index("layer")
    # the story's mean of modes is the unit: n = stories, the mean = the mean of the story means
    l4 = story[story["layer"] == "L4"].groupby(["story_id", "category"])["score"].mean()
    assert main.loc["L4", "n_canonical"] == SMALL["canonical"]
    assert main.loc["L4", "mean_llm"] == pytest.approx(l4.xs("llm", level="category").mean())
    x, y = l4.xs("canonical", level="category"), l4.xs("llm", level="category")
    assert main.loc["L4", "p_canonical_llm"] == pytest.approx(stats.ttest_ind(x, y).pvalue)
    assert main.loc["L4", "p_canonical_llm_welch"] == pytest.approx(stats.ttest_ind(x, y, equal_var=False).pvalue)
    # the paper's pooled reading: twice the observations
    pooled = t[t["analysis"] == "story_x_mode"].set_index("layer")
    assert pooled.loc["L4", "n_canonical"] == 2 * SMALL["canonical"]
    # intervals contain their estimates, for every statistic with one
    for col in [c[:-7] for c in t.columns if c.endswith("_ci_low")]:
        ok = t[[col, f"{col}_ci_low", f"{col}_ci_high"]].dropna()
        assert len(ok), col
        assert (ok[f"{col}_ci_low"] <= ok[col] + 1e-12).all() and (ok[col] <= ok[f"{col}_ci_high"] + 1e-12).all(), col
    assert t["ci_method"].str.contains("cluster bootstrap over story").all()
    assert t["ci_method"].str.contains("within category").all()
    # Holm and Bonferroni over the 12 Student tests of an analysis
    flat = main[[f"p_{tag}" for tag in paper_tables.PAIR_TAGS]].to_numpy().ravel()
    holm = adjust(flat, 12, "holm").reshape(4, 3)
    assert main["p_canonical_llm_holm"].to_numpy() == pytest.approx(holm[:, 1])
    assert main["p_pulp_llm_bonferroni"].to_numpy() == pytest.approx(np.minimum(1, 12 * main["p_pulp_llm"]))
    assert main["p_anova_holm"].to_numpy() == pytest.approx(adjust(main["p_anova"], 4, "holm"))
    assert main["mc_family"].str.startswith("Table 11 / story: 12 pairwise Student t").all()
    assert "not conditioned on the one-way ANOVA" in main["post_hoc"].iloc[0]


def test_table11_family_does_not_shrink_when_a_category_is_missing(syn):
    _, _, story = syn
    no_llm = story[story["category"] != "llm"]
    t = paper_tables.table11_genre_comparison(no_llm, analyses=("story",), n_boot=20).set_index("layer")
    assert t["p_canonical_llm"].isna().all()
    assert t["p_canonical_pulp_bonferroni"].to_numpy() == pytest.approx(np.minimum(1, 12 * t["p_canonical_pulp"]))
    assert "no llm scores" in t.loc["L4", "note"]


def test_mixed_model_recovers_a_planted_category_gap():
    rows = synthetic_rows({"canonical": 14, "pulp": 14, "llm": 14}, seed=2)
    story = scores.story_scores(rows)
    mm = genre.genre_mixed_model(story).set_index(["layer", "contrast"])
    eff = SyntheticEffects().means
    for layer in ("L4", "L6"):
        r = mm.loc[(layer, "canonical - llm")]
        assert r["diff_ci_low"] < r["diff"] < r["diff_ci_high"] and r["p"] < 1e-3
        assert abs(r["diff"] - (eff[layer]["canonical"] - eff[layer]["llm"])) < 0.5
        # the fixed effect of category equals the difference of the story means when every story has both modes
        sm = story[story["layer"] == layer].groupby(["story_id", "category"])["score"].mean()
        gap = sm.xs("canonical", level="category").mean() - sm.xs("llm", level="category").mean()
        assert r["diff"] == pytest.approx(gap, abs=1e-6)
    assert mm["p_holm"].notna().all() and mm["mc_family"].iloc[0].startswith("mixed model: 6 contrasts")


def test_figures_3_and_4_draw_the_table_intervals(syn):
    _, _, story = syn
    t = paper_tables.table11_genre_comparison(story, analyses=("story",), n_boot=B)
    desc = paper_tables.figure3_means(t)
    assert len(desc) == 9 and desc["mean_ci_low"].le(desc["mean"]).all()
    fig3 = paper_figures.plot_genre_means(desc)
    assert "95% CI" in fig3.axes[0].get_ylabel()
    eff = paper_tables.figure4_effects(t)
    assert eff["d_pooled_sd_ci_low"].lt(eff["d_pooled_sd"]).all()
    fig4 = paper_figures.plot_effect_sizes(eff)
    assert "95% CI" in [x.get_text() for x in fig4.axes[0].get_legend().get_texts()]
    for fig in (fig3, fig4):
        paper_figures.plt.close(fig)


# --------------------------------------------------------------------------- Table 10

def test_table10_story_units_fisher_and_pooled_bootstrap(syn):
    _, _, story = syn
    t = paper_tables.table10_cross_layer(story, n_boot=B)
    assert list(t["analysis"].unique()) == list(scores.ANALYSES)
    main = t[t["analysis"] == "story"].set_index("layer_pair")
    n = sum(SMALL.values())
    assert (main["n"] == n).all() and (main["n_stories"] == n).all()
    sm = story.groupby(["story_id", "layer"])["score"].mean().unstack()
    r = stats.pearsonr(sm["L4"], sm["L5"])
    assert main.loc["L4 x L5", "pearson_r"] == pytest.approx(r.statistic)
    lo, hi = r.confidence_interval()  # scipy's Fisher-z interval
    assert (main.loc["L4 x L5", "pearson_r_ci_low"], main.loc["L4 x L5", "pearson_r_ci_high"]) == pytest.approx((lo, hi))
    assert main["p_pearson_holm"].to_numpy() == pytest.approx(adjust(main["p_pearson"], 3, "holm"))
    pooled = t[t["analysis"] == "story_x_mode"]
    assert (pooled["n"] == 2 * n).all() and (pooled["n_stories"] == n).all()
    assert pooled["ci_method"].str.contains("cluster bootstrap over story").all()
    assert (pooled["pearson_r_ci_low"] < pooled["pearson_r"]).all() and (pooled["pearson_r"] < pooled["pearson_r_ci_high"]).all()


# --------------------------------------------------------------------------- Table 9

def test_table9_overall_is_story_level_and_the_pooled_row_is_labelled(syn):
    _, _, story = syn
    m = reliability.mode_invariance(story).set_index("layer")
    assert list(m.index) == ["L4", "L5", "L6", "overall", reliability.POOLED_OVERALL]
    wide = story.pivot_table(index=["story_id", "layer"], columns="mode", values="score")
    per_story = (wide["title"] - wide["content"]).groupby("story_id").mean()
    assert m.loc["overall", "n_pairs"] == len(per_story)
    assert m.loc["overall", "difference"] == pytest.approx(per_story.mean())
    assert m.loc["overall", "p_t"] == pytest.approx(stats.ttest_1samp(per_story, 0).pvalue)
    lo, hi = stats.ttest_1samp(per_story, 0).confidence_interval()
    assert (m.loc["overall", "difference_ci_low"], m.loc["overall", "difference_ci_high"]) == pytest.approx((lo, hi))
    assert m.loc[reliability.POOLED_OVERALL, "n_pairs"] == 3 * len(per_story)
    assert "sensitivity" in m.loc[reliability.POOLED_OVERALL, "unit"]
    main = m.drop(index=reliability.POOLED_OVERALL)
    assert main["p_t_holm"].to_numpy() == pytest.approx(adjust(main["p_t"], 4, "holm"))
    t9 = paper_tables.table09_mode_invariance(reliability.mode_invariance(story)).set_index("layer")
    assert t9.loc[reliability.POOLED_OVERALL, "paper_content_mean"] == t9.loc["overall", "paper_content_mean"]


# --------------------------------------------------------------------------- Table 8 and Figure 2

def test_table8_rates_have_cluster_bootstrap_intervals(syn):
    rows, summary, _ = syn
    t = paper_tables.table08_reliability(rows, summary, n_boot=B).set_index(["metric", "track"])
    for key in [("convergence_rate", ""), ("convergence_rate_layer_mean", ""), ("parsing_success", ""),
                ("success_rate", ""), ("peer_agreement", "validator_blind"), ("mean_irr_difference", "validator_review"),
                ("krippendorff_alpha_interval", "validator_blind"), ("mode_invariance_max_abs_diff", ""),
                ("icc2_absolute_agreement", "validator_blind")]:
        r = t.loc[key]
        assert r["value_ci_low"] <= r["value"] + 1e-12 and r["value"] <= r["value_ci_high"] + 1e-12, key
    assert "cluster bootstrap over story" in t.loc[("convergence_rate", ""), "ci_method"]
    assert t.loc[("icc2_absolute_agreement", "validator_blind"), "ci_method"].startswith("F-based")
    assert np.isnan(t.loc[("total_evaluations", ""), "value_ci_low"])
    assert t["mc_family"].str.startswith("none").all()


def test_round_trajectories_bootstrap_interval(syn):
    rows, _, _ = syn
    traj = reliability.round_trajectories(rows, n_boot=B)
    assert (traj["mean_ci_low"] <= traj["mean"]).all() and (traj["mean"] <= traj["mean_ci_high"]).all()
    fig = paper_figures.plot_round_trajectories(traj)
    assert "95% CI" in fig.axes[0].get_ylabel()
    paper_figures.plt.close(fig)


def test_fast_bootstrap_statistics_equal_the_table_functions(syn):
    _, _, story = syn
    sc = genre.with_layer_average(scores.analysis_units(story, "story"))
    st = genre.genre_point_statistics(sc)
    pw = genre.genre_pairwise(sc, by="layer")
    desc = genre.genre_descriptives(sc, by="layer")
    for r in pw.itertuples():
        tag = f"{r.group_a}_{r.group_b}"
        for col in ("diff", "relative_gap", "d_pooled_sd", "d_sqrt_mean_var"):
            assert st[f"{r.layer}|{col}_{tag}"] == pytest.approx(getattr(r, col), rel=1e-12), (r.layer, col, tag)
    for r in desc.itertuples():
        assert st[f"{r.layer}|mean_{r.category}"] == pytest.approx(r.mean, rel=1e-12)
