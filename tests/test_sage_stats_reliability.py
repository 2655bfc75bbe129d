"""Known-answer tests of judgelab.sage.analysis.reliability (convergence, agreement, mode invariance,
failures, trajectories) against hand-worked examples and scipy / pingouin / krippendorff."""
import numpy as np
import pandas as pd
import pingouin as pg
import krippendorff
import pytest
from scipy import stats

from judgelab.sage.analysis import reliability as rel
from judgelab.sage.analysis.scores import SageStatsError, story_scores
from sage_synthetic import evaluation_records, rows_from_records


def one_eval(r4, r5, vb=None, vr=None, story="s1", layer="L4", mode="content", category="canonical"):
    rounds = {1: r4, 2: r4, 3: r4, 4: r4, 5: r5}
    return evaluation_records(story, layer, mode, rounds, category=category,
                              validator_blind=vb, validator_review=vr)


# ----------------------------------------------------------------------------- convergence

def test_convergence_hand_worked():
    # changes R4 -> R5: 0.2, 0.3 (4.3 - 4.0 is 0.2999... in floats: must count as 0.3), 0.5, 0.0
    rows = rows_from_records(one_eval([3.0, 4.0, 2.0, 4.0], [3.2, 4.3, 2.5, 4.0]))
    out = rel.convergence_rate(rows, by="layer", threshold=0.3)
    l4 = out[out["layer"] == "L4"].iloc[0]
    assert l4["n_paired"] == 4 and l4["n_converged"] == 2
    assert l4["convergence_rate"] == pytest.approx(0.5)
    assert l4["rate_exact_zero"] == pytest.approx(0.25)
    assert l4["mean_abs_change"] == pytest.approx((0.2 + 0.3 + 0.5 + 0.0) / 4)
    # the threshold is a parameter
    wider = rel.convergence_rate(rows, by=None, threshold=0.35).iloc[0]
    assert wider["convergence_rate"] == pytest.approx(0.75)


def test_convergence_missing_layers_and_failed_round_are_reported():
    recs = one_eval([3.0, 4.0, 2.0, 4.0], [3.1, 4.0, 2.0, None])  # R5 of the 4th dimension failed
    rows = rows_from_records(recs)
    out = rel.convergence_rate(rows, by="layer")
    l4 = out[out["layer"] == "L4"].iloc[0]
    assert (l4["n_items"], l4["n_paired"], l4["n_unpaired"]) == (4, 3, 1)
    assert l4["convergence_rate"] == pytest.approx(1.0)
    assert "without R4/R5 pair" in l4["note"]
    for layer in ("L5", "L6"):  # no rows: a row with a message, not a crash and not silence
        r = out[out["layer"] == layer].iloc[0]
        assert np.isnan(r["convergence_rate"]) and f"layer={layer}" in r["note"]


def test_convergence_by_several_groups_counts_items():
    recs = one_eval([3, 3, 3, 3], [3, 3, 3, 3]) + one_eval([3, 3, 3, 3], [4, 4, 4, 4], story="s2", category="pulp")
    rows = rows_from_records(recs)
    by_dim = rel.convergence_rate(rows, by=["category", "dimension"])  # observed groups
    canon = by_dim[by_dim["category"] == "canonical"]
    assert (canon["convergence_rate"] == 1.0).all() and len(canon) == 4
    assert (by_dim[by_dim["category"] == "pulp"]["convergence_rate"] == 0.0).all()
    out = rel.convergence_rate(rows, by=["category", "mode"])  # known levels: every combination
    assert len(out) == 3 * 2
    llm = out[out["category"] == "llm"]
    assert llm["note"].str.startswith("no rows for category=llm").all() and llm["convergence_rate"].isna().all()
    assert out.query("category == 'pulp' and mode == 'content'")["n_items"].iloc[0] == 4


def test_convergence_threshold_must_be_positive():
    rows = rows_from_records(one_eval([3, 3, 3, 3], [3, 3, 3, 3]))
    with pytest.raises(SageStatsError, match="threshold"):
        rel.convergence_rate(rows, threshold=0)


def test_missing_column_is_a_clear_error():
    rows = rows_from_records(one_eval([3, 3, 3, 3], [3, 3, 3, 3])).drop(columns="round")
    with pytest.raises(SageStatsError, match="round"):
        rel.convergence_rate(rows)


# ----------------------------------------------------------------------------- agreement

def test_agreement_hand_worked_both_tracks():
    recs = one_eval([3, 4, 2, 5], [3, 4, 2, 5], vb=[3.4, 4.6, 2.0, 4.0], vr=[3.0, 4.0, 2.1, 5.0])
    rows = rows_from_records(recs)
    blind = rel.track_agreement(rows, "validator_blind", by=None).iloc[0]
    # diffs 0.4, 0.6, 0.0, -1.0
    assert blind["mad"] == pytest.approx(0.5)
    assert blind["agreement_rate"] == pytest.approx(0.5)
    assert blind["mean_diff"] == pytest.approx(0.0)
    review = rel.track_agreement(rows, "validator_review", by=None).iloc[0]
    assert review["mad"] == pytest.approx(0.025)
    assert review["agreement_rate"] == pytest.approx(1.0)


def _agreement_rows(seed=3, n=12):
    rng = np.random.default_rng(seed)
    recs = []
    for i in range(n):
        ev = np.round(rng.uniform(1, 5, 4), 1)
        vb = np.round(np.clip(ev + rng.normal(0, 0.6, 4), 1, 5), 1)
        recs += one_eval(list(ev), list(ev), vb=list(vb), story=f"s{i}")
    return rows_from_records(recs)


def _icc21(x):
    """ICC(2,1) from the two-way ANOVA mean squares (Shrout & Fleiss 1979), x: items x raters."""
    n, k = x.shape
    gm = x.mean()
    msr = k * ((x.mean(1) - gm) ** 2).sum() / (n - 1)
    msc = n * ((x.mean(0) - gm) ** 2).sum() / (k - 1)
    sse = ((x - x.mean(1, keepdims=True) - x.mean(0, keepdims=True) + gm) ** 2).sum()
    mse = sse / ((n - 1) * (k - 1))
    return (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)


def _alpha_interval(a, b):
    """Krippendorff's alpha, interval metric, two coders, no missing values (pairable-values form)."""
    values = np.concatenate([a, b])
    n = len(values)
    d_o = (2 * (a - b) ** 2).sum()  # ordered pairs within each unit, m_u - 1 = 1
    d_e = ((values[:, None] - values[None, :]) ** 2).sum()
    return 1 - (n - 1) * d_o / d_e


def test_icc_and_alpha_match_hand_formulas_and_references():
    rows = _agreement_rows()
    out = rel.track_reliability(rows, "validator_blind", by=None).iloc[0]
    pairs = rel.track_pairs(rows, "validator_blind")
    x = pairs[["evaluator", "validator"]].to_numpy(float)
    assert out["icc2"] == pytest.approx(_icc21(x), abs=1e-10)
    long = pd.DataFrame({"item": np.repeat(np.arange(len(x)), 2), "rater": np.tile(["e", "v"], len(x)),
                         "score": x.ravel()})
    ref = pg.intraclass_corr(long, "item", "rater", "score").set_index("Type")
    c1 = "ICC(C,1)" if "ICC(C,1)" in ref.index else "ICC3"  # pingouin >= 0.7 / older
    assert out["icc3"] == pytest.approx(ref.loc[c1, "ICC"])
    assert out["krippendorff_alpha"] == pytest.approx(_alpha_interval(x[:, 0], x[:, 1]), abs=1e-10)
    assert out["krippendorff_alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=x.T, level_of_measurement="interval"))
    assert out["n_pairs"] == len(x) and out["note"] == ""


def test_icc_alpha_edge_cases_give_messages():
    same = rows_from_records(one_eval([3, 3, 3, 3], [3, 3, 3, 3], vb=[3, 3, 3, 3])
                             + one_eval([3, 3, 3, 3], [3, 3, 3, 3], vb=[3, 3, 3, 3], story="s2"))
    r = rel.track_reliability(same, by=None).iloc[0]
    assert np.isnan(r["icc2"]) and np.isnan(r["krippendorff_alpha"])
    assert r["note"] == "constant ratings"
    no_validator = rows_from_records(one_eval([3, 3, 3, 3], [3, 3, 3, 3]))
    r = rel.track_reliability(no_validator, by=None).iloc[0]
    assert r["n_pairs"] == 0 and "no dimension scored by both" in r["note"]
    a = rel.track_agreement(no_validator, by=None).iloc[0]
    assert np.isnan(a["mad"]) and "no dimension scored by both" in a["note"]


def test_icc_and_alpha_need_three_items():
    """The shared rule (judgelab.stats.rules): 3 items suffice (the SAGE code required 5), 2 do not."""
    rows = rows_from_records(evaluation_records("s1", "L4", "content", {5: [2, 3, 4]}, validator_blind=[2, 3, 5],
                                                dimensions=["a", "b", "c"]))
    r = rel.track_reliability(rows, by=None).iloc[0]
    assert np.isfinite(r["icc2"]) and np.isfinite(r["krippendorff_alpha"]) and r["note"] == ""
    two = rows_from_records(evaluation_records("s1", "L4", "content", {5: [2, 3]}, validator_blind=[2, 4],
                                               dimensions=["a", "b"]))
    r = rel.track_reliability(two, by=None).iloc[0]
    assert np.isnan(r["icc2"]) and np.isnan(r["krippendorff_alpha"]) and r["note"] == "2 items < 3"


# ----------------------------------------------------------------------------- mode invariance

def _mode_scores(content, title, layer="L4"):
    recs = []
    for i, (c, t) in enumerate(zip(content, title)):
        for mode, s in (("content", c), ("title", t)):
            if s is None:
                continue
            recs.append({"story_id": f"s{i}", "category": "canonical", "tier": "", "layer": layer,
                         "mode": mode, "score": s, "n_dimensions": 4})
    return pd.DataFrame(recs)


def test_mode_invariance_hand_worked_and_scipy():
    content, title = [3.0, 3.5, 4.0, 2.5, 3.0], [3.2, 3.4, 4.4, 2.5, 3.3]
    out = rel.mode_invariance(_mode_scores(content, title))
    l4 = out[out["layer"] == "L4"].iloc[0]
    d = np.array(title) - np.array(content)
    assert l4["n_pairs"] == 5
    assert l4["difference"] == pytest.approx(d.mean())
    assert l4["content_mean"] == pytest.approx(np.mean(content))
    t_hand = d.mean() / (d.std(ddof=1) / np.sqrt(len(d)))
    assert l4["t"] == pytest.approx(t_hand)
    assert l4["p_t"] == pytest.approx(stats.ttest_rel(title, content).pvalue)
    w = stats.wilcoxon(title, content)
    assert l4["wilcoxon_w"] == pytest.approx(w.statistic) and l4["p_wilcoxon"] == pytest.approx(w.pvalue)
    overall = out[out["layer"] == "overall"].iloc[0]
    assert overall["difference"] == pytest.approx(d.mean())
    assert out[out["layer"] == "L5"]["note"].str.contains("no rows").all()


def test_mode_invariance_edge_cases():
    same = rel.mode_invariance(_mode_scores([3.0, 4.0, 2.0], [3.0, 4.0, 2.0]))
    r = same[same["layer"] == "L4"].iloc[0]
    assert r["difference"] == 0 and np.isnan(r["t"]) and r["note"] == "all differences 0"
    shift = rel.mode_invariance(_mode_scores([3.0, 4.0, 2.0], [3.5, 4.5, 2.5]))
    r = shift[shift["layer"] == "L4"].iloc[0]
    assert np.isnan(r["t"]) and "constant differences" in r["note"] and np.isfinite(r["wilcoxon_w"])
    single = rel.mode_invariance(_mode_scores([3.0, 4.0], [3.5, None]))
    r = single[single["layer"] == "L4"].iloc[0]
    assert r["n_pairs"] == 1 and r["n_unpaired"] == 1 and r["note"] == "1 pairs < 2"
    only_content = rel.mode_invariance(_mode_scores([3.0, 4.0], [None, None]))
    r = only_content[only_content["layer"] == "L4"].iloc[0]
    assert r["n_pairs"] == 0 and np.isnan(r["difference"])


# ----------------------------------------------------------------------------- failures

def test_failure_accounting_counts_and_contract_check():
    recs = one_eval([3, 3, 3, 3], [3, None, None, None], vb=[3, 3, 3, 3])
    rows = rows_from_records(recs)
    out = rel.failure_accounting(rows, by=None).iloc[0]
    # replies: 5 evaluator rounds + 1 validator = 6, one failed
    assert out["n_replies"] == 6 and out["reply_success_rate"] == pytest.approx(5 / 6)
    assert out["n_failed_rows"] == 3 and out["n_failed_rows_scored"] == 0
    assert out["n_evaluations"] == 1 and out["n_evaluations_with_failure"] == 1
    # a failed row that carries a score breaks the contract and is reported
    rows.loc[rows["status"] == "failed", "score"] = 0.0
    bad = rel.failure_accounting(rows, by=None).iloc[0]
    assert bad["n_failed_rows_scored"] == 3 and "never scored" in bad["note"]
    # ... and is not scored by the statistics
    assert story_scores(rows).empty


def test_failure_accounting_with_summary():
    rows = rows_from_records(one_eval([3, 3, 3, 3], [3, 3, 3, 3]) + one_eval([3, 3, 3, 3], [3, 3, 3, 3], mode="title"))
    summary = pd.DataFrame({"layer": ["L4", "L4"], "mode": ["content", "title"], "status": ["ok", "failed"],
                            "n_repairs": [2, 1], "n_failures": [0, 3]})
    out = rel.failure_accounting(rows, summary, by="layer")
    l4 = out[out["layer"] == "L4"].iloc[0]
    assert l4["success_rate"] == pytest.approx(0.5) and l4["n_repairs"] == 3 and l4["n_failures"] == 3


# ----------------------------------------------------------------------------- trajectories

def test_round_trajectories_means():
    recs = evaluation_records("s1", "L4", "content", {r: [r, r, r, r] for r in range(1, 6)}) + \
        evaluation_records("s2", "L4", "content", {r: [r + 1] * 4 for r in range(1, 6)})
    out = rel.round_trajectories(rows_from_records(recs))
    assert list(out["round"]) == [1, 2, 3, 4, 5]
    assert list(out["mean"]) == pytest.approx([1.5, 2.5, 3.5, 4.5, 5.5])
    assert out["sd"].iloc[0] == pytest.approx(np.std([1, 2], ddof=1))
    assert out["sem"].iloc[0] == pytest.approx(np.std([1, 2], ddof=1) / np.sqrt(2))


# ----------------------------------------------------------------------------- layer mean, truncation

def test_layer_mean_converges_where_no_dimension_does():
    # s1: every dimension moves 0.4 (+, -, +, -): no dimension converges, the layer mean moves 0
    # s2: every dimension moves +0.3 (not < 0.3): neither converges; the mean moves 0.3
    # s3: R5 of one dimension failed: its dimensions pair 3 of 4, its layer mean is unpaired
    recs = (one_eval([3.0, 3.0, 3.0, 3.0], [3.4, 2.6, 3.4, 2.6], story="s1")
            + one_eval([3.0, 4.0, 2.0, 4.0], [3.3, 4.3, 2.3, 4.3], story="s2")
            + one_eval([3.0, 3.0, 3.0, 3.0], [3.0, 3.0, 3.0, None], story="s3"))
    rows = rows_from_records(recs)
    items = rel.layer_mean_convergence_items(rows).set_index("story_id")
    assert items.loc["s1", "change"] == 0 and bool(items.loc["s1", "converged"])
    assert items.loc["s2", "change"] == pytest.approx(0.3) and not bool(items.loc["s2", "converged"])
    assert pd.isna(items.loc["s3", "converged"]) and items.loc["s3", "n_paired_dimensions"] == 3
    out = rel.convergence_rate(rows, by=None).iloc[0]
    assert out["n_paired"] == 11 and out["n_converged"] == 3          # only s3's three unchanged dims
    assert (out["n_evaluations_paired"], out["n_evaluations_converged"]) == (2, 1)
    assert out["layer_mean_convergence_rate"] == pytest.approx(0.5)
    assert out["layer_mean_rate_exact_zero"] == pytest.approx(0.5)
    # per dimension a layer mean is not defined
    by_dim = rel.convergence_rate(rows, by=["layer", "dimension"])
    assert by_dim["layer_mean_convergence_rate"].isna().all()


def truncation_rows():
    """Four content evaluations in L4, two of them truncated; s4 (truncated) has only rounds 4-5, so a
    share of rows (32 of 80 rows are truncated here) differs from the share of evaluations."""
    recs = []
    for sid, cut in (("s1", True), ("s2", False), ("s3", False)):
        recs += evaluation_records(sid, "L4", "content", {r: [3.0, 3.0, 3.0, 3.0] for r in range(1, 6)},
                                   validator_blind=[3.0, 3.0, 3.0, 3.0], truncated=cut)
    recs += evaluation_records("s4", "L4", "content", {4: [3.0] * 4, 5: [3.5] * 4}, truncated=True)
    return rows_from_records(recs)


def test_share_truncated_counts_evaluations_not_rows():
    rows = truncation_rows()
    assert rows["truncated"].mean() != pytest.approx(0.5)              # rows would mislead
    assert rel.failure_accounting(rows, by=None).iloc[0]["share_truncated"] == pytest.approx(0.5)
    conv = rel.convergence_rate(rows, by=None).iloc[0]
    assert conv["share_truncated"] == pytest.approx(0.5)
    assert rel.track_agreement(rows, by=None).iloc[0]["share_truncated"] == pytest.approx(1 / 3)  # s4 has no validator
    traj = rel.round_trajectories(rows, by=None).set_index("round")
    assert traj.loc[1, "share_truncated"] == pytest.approx(1 / 3) and traj.loc[5, "share_truncated"] == pytest.approx(0.5)
    assert traj["truncation_note"].str.contains("excerpts").all()


def test_mode_invariance_share_is_of_the_content_evaluations():
    recs = []
    for sid, cut in (("s1", True), ("s2", False)):
        recs += one_eval([3.0] * 4, [3.0] * 4, story=sid, mode="title")
        recs += evaluation_records(sid, "L4", "content", {4: [3.0] * 4, 5: [2.0] * 4}, truncated=cut)
    mi = rel.mode_invariance(story_scores(rows_from_records(recs))).set_index("layer")
    assert mi.loc["L4", "share_truncated"] == pytest.approx(0.5)
    assert mi.loc["overall", "share_truncated"] == pytest.approx(0.5)
    assert np.isnan(mi.loc["L5", "share_truncated"])
