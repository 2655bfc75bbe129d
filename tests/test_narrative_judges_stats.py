"""Narrative judges: agreement and validity statistics on data with known answers."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from scipy import stats

from judgelab.narrative.judges import agreement as ag
from judgelab.narrative.judges import scores as js
from judgelab.narrative.judges import validity as va
from judgelab.narrative.judges.paper_tables import merge_table04, table03, with_paper_columns

# Shrout & Fleiss (1979), Table 2: 6 targets rated by 4 judges; they report ICC(2,1) = .29 and
# ICC(2,4) = .62.
SHROUT_FLEISS = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], float)

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C: 4 observers x 12
# units with missing values; interval alpha = 0.849.
KRIPP_2011 = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan, np.nan, np.nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, np.nan, 3],
    [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, np.nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, np.nan],
]).T  # units x observers


def tidy(matrix: np.ndarray, mode: str = "simple", collection: str = "news") -> pd.DataFrame:
    """Items x agents -> tidy judge rows (items alternate maxcap / random)."""
    rows = []
    for i, item in enumerate(np.asarray(matrix, float)):
        for a, s in enumerate(item):
            rows.append({"collection": collection, "pair_id": i // 2, "method": ("maxcap", "random")[i % 2],
                         "mode": mode, "agent": a, "score": s, "status": "failed" if np.isnan(s) else "ok"})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- agreement

def test_identical_agents_give_perfect_agreement():
    base = np.array([2, 9, 5, 7, 3, 8, 6, 4], float)
    m = np.column_stack([base] * 5)
    res = ag.agreement_table(tidy(m)).iloc[0]
    assert res["icc2_1"] == pytest.approx(1.0) and res["icc2_k"] == pytest.approx(1.0)
    assert res["krippendorff_alpha"] == pytest.approx(1.0)
    assert res["kendalls_w"] == pytest.approx(1.0)
    assert res["exact_agreement"] == 1.0 and res["within1_agreement"] == 1.0
    assert res["mean_abs_dev"] == 0.0
    assert res["k_agents"] == 5 and res["n_items"] == 8


def test_an_agent_that_gives_one_score_to_every_item_is_noted_as_degenerate():
    """The cot case of a demo run: agent 1 gave 10 to every narrative, agent 0 varied; the row
    says so (its ICC measures the constant agent's missing spread), and a varied table says nothing."""
    m = np.column_stack([[6, 9, 7, 8], [10, 10, 10, 10]]).astype(float)
    res = ag.agreement_table(tidy(m, mode="cot")).iloc[0]
    assert "degenerate: agent 1 gave 10 to all 4 items" in res["note"]
    assert "agent 0 gave" not in res["note"]
    varied = ag.agreement_table(tidy(SHROUT_FLEISS)).iloc[0]
    assert "degenerate" not in varied["note"]


def test_icc_matches_shrout_fleiss_1979():
    out = ag.agreement_stats(pd.DataFrame(SHROUT_FLEISS))
    assert out["icc2_1"] == pytest.approx(0.29, abs=0.005)
    assert out["icc2_k"] == pytest.approx(0.62, abs=0.005)
    # and the Shrout-Fleiss formula from the two-way ANOVA mean squares, written out
    x = SHROUT_FLEISS; n, k = x.shape; g = x.mean()
    msr = k * np.sum((x.mean(1) - g) ** 2) / (n - 1)
    msc = n * np.sum((x.mean(0) - g) ** 2) / (k - 1)
    mse = np.sum((x - x.mean(1, keepdims=True) - x.mean(0) + g) ** 2) / ((n - 1) * (k - 1))
    assert out["icc2_1"] == pytest.approx((msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n))
    assert out["icc2_k"] == pytest.approx((msr - mse) / (msr + (msc - mse) / n))
    assert out["icc2_1_ci_low"] < out["icc2_1"] < out["icc2_1_ci_high"]
    assert out["n_items_complete"] == 6 and out["note"] == ""


def test_krippendorff_alpha_matches_krippendorff_2011():
    out = ag.agreement_stats(pd.DataFrame(KRIPP_2011))
    assert out["krippendorff_alpha"] == pytest.approx(0.849, abs=0.0005)  # interval, missing values allowed
    assert out["n_items_complete"] == 8  # the ICC and W use the 8 units every observer rated


def test_pairwise_agreement_and_mad_known_values():
    res = ag.agreement_stats(pd.DataFrame([[5, 5], [5, 6], [5, 7]], dtype=float))
    assert res["exact_agreement"] == pytest.approx(1 / 3)
    assert res["within1_agreement"] == pytest.approx(2 / 3)
    assert res["mean_abs_dev"] == pytest.approx(0.5)  # (0 + 0.5 + 1) / 3
    three = ag.agreement_stats(pd.DataFrame([[4, 4, 6]], dtype=float))  # pairs: (4,4) exact, (4,6) twice no
    assert three["exact_agreement"] == pytest.approx(1 / 3)
    assert three["mean_abs_dev"] == pytest.approx((2 / 3 + 2 / 3 + 4 / 3) / 3)


def test_item_with_one_rating_does_not_count_for_mad():
    m = np.array([[5, 5], [5, 6], [5, np.nan]], float)  # the third item's second call failed
    res = ag.agreement_stats(pd.DataFrame(m))
    assert res["mean_abs_dev"] == pytest.approx(0.25)  # (0 + 0.5) / 2, not (0 + 0.5 + 0) / 3
    assert res["exact_agreement"] == pytest.approx(0.5)
    assert "MAD: NaN dropped: 1; 1 items with one rating not counted" in res["note"]


def test_small_samples_follow_the_shared_rule():
    """Two items: ICC, alpha and W are NaN with the rule's note (they used to be computed)."""
    res = ag.agreement_stats(pd.DataFrame([[3, 4, 3], [7, 8, 8]], dtype=float))
    assert np.isnan(res["icc2_1"]) and np.isnan(res["krippendorff_alpha"]) and np.isnan(res["kendalls_w"])
    assert res["note"] == "ICC: 2 items < 3; alpha: 2 items < 3; W: 2 items < 3"
    assert res["exact_agreement"] == pytest.approx(2 / 6)  # agreement still describes the pairs
    const = ag.agreement_stats(pd.DataFrame(np.full((4, 3), 6.0)))
    assert np.isnan(const["icc2_1"]) and "ICC: constant ratings" in const["note"]
    assert const["exact_agreement"] == 1.0 and const["mean_abs_dev"] == 0.0


def test_failed_calls_are_missing_not_scores():
    m = np.array([[5, 5, np.nan], [7, 7, 7], [2, 2, 2], [9, 9, 9], [4, 4, 4]], float)
    t = tidy(m)
    mat = ag.reliability_matrix(t, item_cols=("pair_id", "method"))
    assert mat.isna().sum().sum() == 1 and mat.shape == (5, 3)
    res = ag.agreement_stats(mat)
    assert res["n_items_complete"] == 4 and res["icc2_1"] == pytest.approx(1.0)
    assert res["exact_agreement"] == 1.0  # the failed call is skipped, not a 0


def test_agent_disagreement_sd_and_cov():
    m = np.array([[4, 6], [8, 8]], float)
    d = ag.agent_disagreement(tidy(m)).iloc[0]
    sd = np.std([4, 6], ddof=1)
    assert d["mean_sd"] == pytest.approx(sd / 2)
    assert d["mean_cov"] == pytest.approx((sd / 5) / 2)


# ----------------------------------------------------------------------------- validity

def narratives(n_pairs: int = 20, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Synthetic paths (min/mean coherence) and agent scores that rise with min coherence."""
    rng = np.random.default_rng(seed)
    rows, scores = [], []
    for p in range(n_pairs):
        for method, mu in (("maxcap", 0.7), ("random", 0.45)):
            mn = float(np.clip(rng.normal(mu, 0.08), 0, 1))
            rows.append({"collection": "news", "pair_id": p, "method": method, "length": int(rng.integers(2, 9)),
                         "min_coherence": mn, "mean_coherence": mn + float(rng.uniform(0.02, 0.1))})
            for mode in ("simple", "cot"):
                for a in range(3):
                    scores.append({"collection": "news", "pair_id": p, "method": method, "mode": mode, "agent": a,
                                   "score": float(np.clip(round(2 + 10 * mn + rng.normal(0, 0.5)), 1, 10)),
                                   "status": "ok"})
    return pd.DataFrame(rows), pd.DataFrame(scores)


def test_narrative_means_and_correlations_match_scipy():
    paths, scores = narratives()
    means = js.narrative_scores(scores)
    assert len(means) == 2 * 20 * 2 and (means["n_agents"] == 3).all()
    judged = js.judged_paths(means, paths)
    t2 = va.correlation_table(judged)
    g = judged[judged["mode"] == "simple"]
    row = t2.set_index("mode").loc["simple"]
    r, p = stats.pearsonr(g["min_coherence"], g["score_mean"])
    assert row["pearson_min"] == pytest.approx(r) and row["pearson_p_min"] == pytest.approx(p)
    assert row["spearman_avg"] == pytest.approx(stats.spearmanr(g["mean_coherence"], g["score_mean"])[0])
    assert row["n"] == 40


def test_correlation_of_exact_linear_relation_is_one():
    x = np.linspace(0.3, 0.9, 10)
    judged = pd.DataFrame({"collection": "news", "mode": "simple", "score_mean": 1 + 10 * x,
                           "min_coherence": x, "mean_coherence": -x})
    row = va.correlation_table(judged).iloc[0]
    assert row["pearson_min"] == pytest.approx(1.0) and row["pearson_avg"] == pytest.approx(-1.0)


def test_the_best_mode_leads_by_a_paired_interval_that_excludes_0_when_another_mode_is_noise():
    """One mode scores coherence plus small noise, another pure noise, over the same 30 pairs x 2
    narratives: the first is the best mode, its lead over the noise mode is its r minus the noise
    mode's, and the paired pair-bootstrap interval of that lead lies above 0 (the noise mode's
    row: the same gap, negative)."""
    rng = np.random.default_rng(5)
    pair = np.repeat(np.arange(30), 2)
    coh = rng.uniform(0.2, 0.8, 60)
    rows = [pd.DataFrame({"collection": "vispub", "pair_id": pair, "method": np.tile(["maxcap", "random"], 30),
                          "mode": mode, "score_mean": score, "min_coherence": coh, "mean_coherence": coh})
            for mode, score in (("simple", rng.normal(5, 1, 60)), ("complex", 2 + 8 * coh + rng.normal(0, 0.3, 60)))]
    judged = pd.concat(rows, ignore_index=True)
    t = va.correlation_table(judged, n_boot=500, seed=1).set_index("mode")
    r = {m: stats.pearsonr(g["min_coherence"], g["score_mean"])[0] for m, g in judged.groupby("mode")}
    best = t.loc["complex"]
    assert (t["best_mode_min"] == "complex").all() and (t["runner_up_min"] == "simple").all()
    assert best["pearson_min_lead"] == pytest.approx(r["complex"] - r["simple"])
    assert 0 < best["pearson_min_lead_ci_low"] < best["pearson_min_lead"] < best["pearson_min_lead_ci_high"]
    assert t.loc["simple", "pearson_min_lead"] == pytest.approx(-best["pearson_min_lead"])
    assert t.loc["simple", "pearson_min_lead_ci_high"] < 0
    one = va.correlation_table(judged[judged["mode"] == "simple"], n_boot=50).iloc[0]
    assert np.isnan(one["pearson_min_lead"]) and "fewer than 2 modes" in one["note"]


def test_discrimination_d_known_values_and_nan_dropped():
    x, y = np.array([3, 4, 5, 6, 7.0]), np.array([1, 2, 3, 4, 5.0])
    res = va.discrimination(np.r_[x, y], np.r_[np.ones(5, bool), np.zeros(5, bool)])
    assert res["d"] == pytest.approx(2 / np.sqrt(2.5)) and res["d_avg_sd"] == pytest.approx(2 / np.sqrt(2.5))
    a, b = np.array([1, 2, 3, 4.0]), np.array([0, 0, 6, 6.0, 3, 3])
    res = va.discrimination(np.r_[a, b, np.nan], np.r_[np.ones(4, bool), np.zeros(7, bool)])
    pooled = np.sqrt((3 * a.var(ddof=1) + 5 * b.var(ddof=1)) / 8)
    avg = np.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2)
    assert res["d"] == pytest.approx((a.mean() - b.mean()) / pooled)  # the NaN is dropped, not propagated
    assert res["d_avg_sd"] == pytest.approx((a.mean() - b.mean()) / avg)
    assert res["n_random"] == 6 and res["note"] == "NaN dropped: 1"
    one = va.discrimination(np.array([1.0, 2.0, 3.0]), np.array([True, False, False]))
    assert np.isnan(one["d"]) and one["note"] == "1 values in x < 2" and one["auc"] == 0.0


def test_discrimination_auc_tests_match_sklearn_and_scipy():
    from sklearn.metrics import roc_auc_score

    v = np.array([3, 4, 1, 3.0])
    pos = np.array([True, True, False, False])
    res = va.discrimination(v, pos)
    assert res["auc"] == pytest.approx(0.875)  # (1 + 0.5 + 1 + 1) / 4 by hand
    assert res["auc"] == pytest.approx(roc_auc_score(pos, v))
    assert res["auc"] == pytest.approx(res["mw_u"] / (2 * 2))
    assert res["t_p"] == pytest.approx(stats.ttest_ind(v[pos], v[~pos], equal_var=False).pvalue)
    sep = va.discrimination(np.array([5, 6, 7, 1, 2, 3.0]), np.array([1, 1, 1, 0, 0, 0], bool))
    assert sep["auc"] == 1.0 and sep["d"] == pytest.approx(4.0)


def test_effect_size_table_rows_and_table04_merge():
    paths, scores = narratives()
    judged = js.judged_paths(js.narrative_scores(scores), paths)
    eff = va.effect_size_table(judged, paths)
    assert list(eff["metric"]) == ["Min. coherence", "Avg. coherence", "LLM simple", "LLM CoT"]
    mn = eff.set_index("metric").loc["Min. coherence"]
    m, r = paths[paths.method == "maxcap"], paths[paths.method == "random"]
    assert mn["d"] == pytest.approx(pg.compute_effsize(m["min_coherence"], r["min_coherence"], eftype="cohen"))
    # merging: notebook 08's math rows are kept, an older run's LLM rows replaced
    existing = pd.DataFrame({"collection": ["news", "news", "news"],
                             "metric": ["Min. coherence", "Avg. coherence", "LLM simple"],
                             "d": [1.0, 2.0, -9.0], "paper_d": [1.591, 1.998, 0.568]})
    merged = merge_table04(existing, eff)
    assert list(merged["metric"]) == ["Min. coherence", "Avg. coherence", "LLM simple", "LLM CoT"]
    assert merged.iloc[0]["d"] == 1.0 and list(merged["kind"]) == ["math", "math", "llm", "llm"]
    assert merged.set_index("metric").loc["LLM simple", "d"] == pytest.approx(
        eff.set_index("metric").loc["LLM simple", "d"])
    assert merged.set_index("metric").loc["LLM CoT", "paper_d"] == 0.345  # the cited constant
    assert merged.set_index("metric").loc["LLM CoT", "paper_auc"] == 0.594
    alone = merge_table04(None, eff)  # no notebook 08 table: math rows computed here, paper values beside
    assert list(alone["metric"]) == list(eff["metric"])
    assert alone.iloc[0]["paper_d"] == 1.591 and alone.iloc[0]["d"] == pytest.approx(mn["d"])


def test_paper_columns_sit_beside_the_recomputed_ones():
    df = pd.DataFrame({"collection": ["news", "news", "zzz"], "mode": ["simple", "cot", "simple"],
                       "icc2_1": [0.5, 0.6, 0.7], "exact_agreement": [0.1, 0.2, 0.3]})
    out = table03(df)
    cols = list(out.columns)
    assert cols.index("paper_icc2_1") == cols.index("icc2_1") + 1
    assert out.loc[0, "paper_icc2_1"] == 0.961
    assert np.isnan(out.loc[1, "paper_icc2_1"])  # the paper has no CoT column in Table 3
    assert np.isnan(out.loc[2, "paper_icc2_1"])
    assert "paper_x" in with_paper_columns(df, {("news", "simple"): {"x": 1.0}}).columns


# ----------------------------------------------------------------------------- figures

def test_figure8_panels_draw_one_column_per_collection():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from judgelab.narrative.judges import figures as jf

    paths, scores = narratives(n_pairs=6)
    both = pd.concat([scores, scores.assign(collection="vispub")])
    paths2 = pd.concat([paths, paths.assign(collection="vispub")])
    judged = js.judged_paths(js.narrative_scores(both), paths2)
    effects = va.effect_size_table(judged)
    figs = [jf.judge_vs_coherence(judged), jf.scores_by_mode(judged), jf.mean_scores_by_method(judged),
            jf.agent_agreement(ag.agent_disagreement(both)), jf.effect_sizes(effects),
            jf.correlation_heatmap(judged), jf.p_values(effects)]
    for fig in figs:
        titles = " ".join(ax.get_title() for ax in fig.axes)
        assert "news" in titles and "vispub" in titles
        plt.close(fig)
    assert len(figs[0].axes) == 4  # simple and CoT rows x two collections


def test_the_judges_d_against_the_mathematics_d_over_the_same_pairs():
    """A judge whose score is a rising linear map of the minimum coherence has the same d: the
    difference is 0 and so is every resample's (both d's from the same pairs); a judge that sees
    half the gap has a smaller d, so the difference is negative and its interval holds the truth."""
    import numpy as np
    import pandas as pd

    from judgelab.narrative.judges.validity import d_minus_math
    from judgelab.stats.effects import cohens_d

    rng = np.random.default_rng(3)
    pairs = np.repeat(np.arange(40), 2)
    method = np.tile(["maxcap", "random"], 40)
    coh = rng.normal(0.5, 0.1, 80) + np.where(method == "maxcap", 0.1, 0.0)
    g = pd.DataFrame({"pair_id": pairs, "method": method, "min_coherence": coh, "score_mean": 2 + 10 * coh})
    out = d_minus_math(g, n_boot=200, seed=1)
    assert out["d_minus_min_coherence"] == pytest.approx(0.0, abs=1e-9)
    assert out["d_minus_min_coherence_ci_low"] == pytest.approx(0.0, abs=1e-9) == out["d_minus_min_coherence_ci_high"]
    half = g.assign(score_mean=g["min_coherence"] - np.where(method == "maxcap", 0.05, 0.0))
    out = d_minus_math(half, n_boot=400, seed=1)
    pos = method == "maxcap"
    truth = (cohens_d(half["score_mean"][pos], half["score_mean"][~pos]).iloc[0]["d"]
             - cohens_d(coh[pos], coh[~pos]).iloc[0]["d"])
    assert out["d_minus_min_coherence"] == pytest.approx(truth) and truth < 0
    assert out["d_minus_min_coherence_ci_low"] < truth < out["d_minus_min_coherence_ci_high"] < 0
    assert d_minus_math(g.drop(columns="min_coherence")) == {}
