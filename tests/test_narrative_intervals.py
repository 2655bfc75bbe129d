"""Units and intervals of the narrative study: the random baseline's date rule read literally (strict main,
inclusive sensitivity rows in Tables 1 and 4), the endpoint pair as the unit, a 95% interval on
every headline number, Holm / Bonferroni per table family, and d when one group is constant."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from judgelab.narrative.judges import agreement as ag
from judgelab.narrative.judges import scores as js
from judgelab.narrative.judges import validity as va
from judgelab.narrative.paths import paper_tables as math_tables
from judgelab.narrative.paths.baseline import baseline_candidates, random_baselines, random_chronological_path
from judgelab.narrative.paths.comparison import length_difference, method_effects


# ---------------------------------------------------------------- the date rule on a hand-made collection

DATES = np.array([0, 0, 0, 1, 1, 2, 2, 3])
"""Documents 0-7 on days 0, 0, 0, 1, 1, 2, 2, 3."""


def test_strict_excludes_same_date_documents_inclusive_includes_them():
    # endpoints 1 (day 0) and 6 (day 2): strictly between = the day-1 documents only
    assert list(baseline_candidates(1, 6, DATES)) == [3, 4]
    # inclusive adds the endpoints' own days (0, 2 on day 0; 5 on day 2)
    assert list(baseline_candidates(1, 6, DATES, strict=False)) == [0, 2, 3, 4, 5]
    rng = np.random.default_rng(0)
    path = random_chronological_path(1, 6, DATES, length_mean=20, length_sd=0, rng=rng)
    assert path == [1, 3, 4, 6]                   # every strict candidate, in date (then index) order
    assert all(DATES[1] < DATES[x] < DATES[6] for x in path[1:-1])


def test_no_document_strictly_between_gives_the_direct_step():
    # same-day endpoints (0 and 2, day 0): nothing strictly between, the inclusive rule has 1
    assert list(baseline_candidates(0, 2, DATES)) == []
    assert list(baseline_candidates(0, 2, DATES, strict=False)) == [1]
    for seed in range(5):                          # whatever length is drawn, the path is [s, t]
        rng = np.random.default_rng(seed)
        assert random_chronological_path(0, 2, DATES, length_mean=6, length_sd=2, rng=rng) == [0, 2]
    # consecutive days (4 on day 1, 5 on day 2): nothing strictly between either
    assert list(baseline_candidates(4, 5, DATES)) == []
    assert random_chronological_path(4, 5, DATES, 5.0, 0.0, np.random.default_rng(1)) == [4, 5]
    out = random_baselines([(0, 2), (0, 2)], DATES, np.array([4, 6]), seed=3, strict=False)
    assert out == [[0, 1, 2], [0, 1, 2]]          # inclusive: the one same-day candidate is used
    with pytest.raises(ValueError, match="orient pairs chronologically"):
        baseline_candidates(7, 0, DATES)


# ---------------------------------------------------------------- Tables 1 and 4: both rules

def toy_pairs(n_pairs: int = 6, seed: int = 42, shift: float = 0.0) -> pd.DataFrame:
    """n_pairs pairs: maxcap lengths 4, 5, 4, 5, ...; strict random 2, 3, 2, 3, ...; coherences known."""
    rows = []
    for p in range(n_pairs):
        rows.append({"collection": "news", "pair_id": p, "seed": seed, "method": "maxcap", "length": 4 + p % 2,
                     "min_coherence": 0.8 + 0.01 * p + shift, "mean_coherence": 0.85 + 0.01 * p + shift})
        rows.append({"collection": "news", "pair_id": p, "seed": seed, "method": "random", "length": 2 + p % 2,
                     "min_coherence": 0.5 + 0.02 * p, "mean_coherence": 0.6 + 0.015 * p})
    return pd.DataFrame(rows)


def inclusive_of(paths: pd.DataFrame) -> pd.DataFrame:
    """The sensitivity rows: random paths one document longer and weaker by 0.1 (known answers)."""
    rd = paths[paths.method == "random"].copy()
    rd["length"] += 1
    rd["min_coherence"] -= 0.1
    rd["mean_coherence"] -= 0.1
    return rd.assign(baseline_dates="inclusive")


def test_table1_has_a_strict_main_row_and_an_inclusive_sensitivity_row():
    main = toy_pairs()
    seeds = pd.concat([main, toy_pairs(seed=43, shift=0.01)])
    other_seeds = pd.concat([inclusive_of(main), inclusive_of(toy_pairs(seed=43))])
    t1 = math_tables.table01_path_lengths(main, seeds, None, {"news": "32/8"}, inclusive_of(main), other_seeds,
                                          n_boot=500, seed=1)
    assert list(t1["method"]) == ["maxcap", "random", "random"]
    assert list(t1["baseline_dates"]) == ["n/a (graph path)", "strict", "inclusive"]
    assert t1["role"].iloc[1] == "main rule" and t1["role"].iloc[2].startswith("sensitivity")
    rows = t1.set_index("baseline_dates")
    # gaps by hand: maxcap mean 4.5; strict random 2.5 -> 2.0; inclusive 3.5 -> 1.0 (every pair alike)
    assert rows.loc["strict", "gap"] == pytest.approx(2.0) and rows.loc["inclusive", "gap"] == pytest.approx(1.0)
    assert rows.loc["strict", "mean"] == pytest.approx(2.5) and rows.loc["inclusive", "mean"] == pytest.approx(3.5)
    assert rows.loc["inclusive", "n_seeds"] == 2 and rows.loc["inclusive", "mean_seed_mean"] == pytest.approx(3.5)
    # the paper's Table 1 sits beside the main rule only
    assert rows.loc["strict", "paper_mean"] == 3.97 and np.isnan(rows.loc["inclusive", "paper_mean"])
    # intervals contain their estimates; constant paired differences: the gap's interval is a point
    for X in ("mean", "gap"):
        ok = t1[X].notna()
        assert (t1.loc[ok, f"{X}_ci_low"] <= t1.loc[ok, X] + 1e-12).all()
        assert (t1.loc[ok, X] <= t1.loc[ok, f"{X}_ci_high"] + 1e-12).all()
    assert rows.loc["strict", "gap_ci_low"] == pytest.approx(2.0) and rows.loc["strict", "gap_ci_high"] == pytest.approx(2.0)
    assert (t1["unit"] == "endpoint pair").all() and t1["ci_method"].str.contains("cluster bootstrap").all()
    assert rows.loc["strict", "mc_family"] != rows.loc["inclusive", "mc_family"]    # one family per role


def test_table4_both_rules_with_intervals_and_one_family_per_role():
    main = toy_pairs()
    seeds = pd.concat([main, toy_pairs(seed=43, shift=0.01)])
    other_seeds = pd.concat([inclusive_of(main), inclusive_of(toy_pairs(seed=43))])
    t4 = math_tables.table04_math_effects(main, seeds, None, {"news": "32/8"}, inclusive_of(main), other_seeds,
                                          n_boot=500, seed=1)
    assert list(zip(t4["baseline_dates"], t4["column"])) == [
        ("strict", "min_coherence"), ("strict", "mean_coherence"),
        ("inclusive", "min_coherence"), ("inclusive", "mean_coherence")]
    s = t4.set_index(["baseline_dates", "column"])
    # inclusive random paths are 0.1 weaker: the same SDs, a larger d
    mc = main[main.method == "maxcap"]["min_coherence"]
    rd = main[main.method == "random"]["min_coherence"]
    pooled = np.sqrt((mc.var() + rd.var()) / 2)
    assert s.loc[("strict", "min_coherence"), "d"] == pytest.approx((mc.mean() - rd.mean()) / pooled)
    assert s.loc[("inclusive", "min_coherence"), "d"] == pytest.approx((mc.mean() - rd.mean() + 0.1) / pooled)
    assert (t4["auc"] == 1.0).all()
    assert s.loc[("strict", "min_coherence"), "paper_d"] == 1.591 and np.isnan(s.loc[("inclusive", "min_coherence"), "paper_d"])
    for X in ("d", "auc", "mean_maxcap", "mean_random"):
        assert (t4[f"{X}_ci_low"] <= t4[X] + 1e-12).all() and (t4[X] <= t4[f"{X}_ci_high"] + 1e-12).all()
    # Holm / Bonferroni within each role's family (2 paired tests each), by statsmodels
    for _, g in t4.groupby("mc_family"):
        assert len(g) == 2
        np.testing.assert_allclose(g["p_holm"], multipletests(g["p"], method="holm")[1])
        np.testing.assert_allclose(g["p_bonferroni"], np.minimum(1, 2 * g["p"]))
    assert (t4["test"] == "paired t over endpoint pairs").all() and (t4["unit"] == "endpoint pair").all()


# ---------------------------------------------------------------- the endpoint pair as the unit

def test_length_gap_is_paired_over_pairs_not_welch():
    # a large pair effect shared by both paths: paired test sees the constant +1, Welch drowns it
    rng = np.random.default_rng(0)
    base = rng.integers(2, 20, size=12)
    noise = np.array([0, 1] * 6)
    paths = pd.DataFrame({"collection": "c", "pair_id": list(range(12)) * 2,
                          "method": ["maxcap"] * 12 + ["random"] * 12,
                          "length": np.r_[base + 1 + noise, base + noise]})
    row = length_difference(paths, n_boot=200).iloc[0]
    assert row["difference"] == pytest.approx(1.0) and row["n_pairs"] == 12
    assert row["p_welch"] > 0.3                       # as if independent: nothing to see
    # differences all exactly 1: the paired t-test is undefined (constant differences), noted
    assert np.isnan(row["p_value"]) and "constant differences" in row["note"]


def test_planted_d_is_recovered_within_the_pair_bootstrap_interval():
    rng = np.random.default_rng(11)
    n = 300
    pair = rng.normal(0, 0.05, n)                      # shared by both paths of a pair
    mc = 0.6 + pair + rng.normal(0, 0.1, n)
    rd = 0.5 + pair + rng.normal(0, 0.1, n)
    true_d = 0.1 / np.sqrt(0.05 ** 2 + 0.1 ** 2)      # marginal SD of each method
    paths = pd.DataFrame({"collection": "c", "pair_id": np.r_[np.arange(n), np.arange(n)],
                          "method": ["maxcap"] * n + ["random"] * n,
                          "min_coherence": np.r_[mc, rd], "mean_coherence": np.r_[mc, rd] + 0.01})
    row = method_effects(paths, n_boot=1000, seed=3).set_index("column").loc["min_coherence"]
    assert row["d_ci_low"] < true_d < row["d_ci_high"]
    assert row["d_ci_low"] < row["d"] < row["d_ci_high"]
    assert row["n_pairs"] == n and row["p"] < 1e-6


# ---------------------------------------------------------------- d when one group is constant

def judged_frame(n_pairs: int = 8) -> pd.DataFrame:
    """A judge that gives every random path the same score (3) and max-capacity paths 5..8."""
    rows = []
    for p in range(n_pairs):
        for method, mn in (("maxcap", 0.7 + 0.01 * p), ("random", 0.4 + 0.02 * p)):
            for a in range(2):
                rows.append({"collection": "news", "pair_id": p, "method": method, "mode": "simple", "agent": a,
                             "score": 3.0 if method == "random" else 5.0 + p % 4, "status": "ok"})
    scores = pd.DataFrame(rows)
    paths = pd.DataFrame([{"collection": "news", "pair_id": p, "method": m, "length": 3,
                           "min_coherence": 0.7 + 0.01 * p if m == "maxcap" else 0.4 + 0.02 * p,
                           "mean_coherence": 0.75 + 0.01 * p if m == "maxcap" else 0.45 + 0.02 * p}
                          for p in range(n_pairs) for m in ("maxcap", "random")])
    return js.judged_paths(js.narrative_scores(scores), paths)


def test_d_is_defined_when_the_judge_gives_every_random_path_one_score():
    eff = va.effect_size_table(judged_frame(), n_boot=300, seed=0).set_index("metric").loc["LLM simple"]
    mc = np.array([5.0, 6, 7, 8, 5, 6, 7, 8])
    # pooled SD: sqrt((7 var(mc) + 7 * 0) / 14); d = (6.5 - 3) / that
    s = np.sqrt(7 * mc.var(ddof=1) / 14)
    assert eff["d"] == pytest.approx(3.5 / s)
    assert np.isfinite(eff["d_ci_low"]) and eff["d_ci_low"] <= eff["d"] <= eff["d_ci_high"]
    assert eff["auc"] == 1.0 and eff["note"] == ""


# ---------------------------------------------------------------- Table 2: intervals and families

def test_table2_intervals_contain_r_and_holm_bonferroni_cover_the_whole_table():
    rng = np.random.default_rng(5)
    rows = []
    for mode in ("simple", "cot", "standard"):
        for p in range(30):
            for m in ("maxcap", "random"):
                mn = rng.uniform(0.3, 0.9)
                rows.append({"collection": "news", "mode": mode, "pair_id": p, "method": m, "min_coherence": mn,
                             "mean_coherence": mn + rng.normal(0, 0.05),
                             "score_mean": 1 + 9 * mn + rng.normal(0, 1.5 if mode != "standard" else 20)})
    t2 = va.correlation_table(pd.DataFrame(rows), n_boot=1000, seed=2)
    for m in ("min", "avg"):
        assert (t2[f"pearson_{m}_ci_low"] <= t2[f"pearson_{m}"]).all()
        assert (t2[f"pearson_{m}"] <= t2[f"pearson_{m}_ci_high"]).all()
    flat = t2[["pearson_p_boot_min", "pearson_p_boot_avg"]].to_numpy().ravel()
    np.testing.assert_allclose(t2[["p_holm_min", "p_holm_avg"]].to_numpy().ravel(),
                               multipletests(flat, method="holm")[1])
    np.testing.assert_allclose(t2[["p_bonferroni_min", "p_bonferroni_avg"]].to_numpy().ravel(),
                               np.minimum(1, 6 * flat))
    s = t2.set_index("mode")
    assert s.loc["simple", "p_holm_min"] < 0.01 and s.loc["standard", "p_holm_min"] > 0.05   # planted vs noise
    assert s.loc["simple", "n_pairs"] == 30 and s.loc["simple", "n"] == 60
    assert (t2["unit"] == "endpoint pair").all() and t2["mc_family"].nunique() == 1


# ---------------------------------------------------------------- Tables 3 and 8: intervals over pairs

def agent_scores(n_pairs: int = 15, k: int = 3, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(n_pairs):
        for m in ("maxcap", "random"):
            true = rng.uniform(2, 9)
            for a in range(k):
                rows.append({"collection": "news", "mode": "simple", "pair_id": p, "method": m, "agent": a,
                             "score": float(np.clip(round(true + rng.normal(0, 1)), 1, 10)), "status": "ok"})
    return pd.DataFrame(rows)


def test_table3_icc_interval_contains_its_estimate_and_is_seeded():
    t3 = ag.agreement_table(agent_scores(), n_boot=500, seed=4).iloc[0]
    for X in ("icc2_1", "icc2_k", "mean_abs_dev", "exact_agreement", "within1_agreement"):
        assert t3[f"{X}_ci_low"] <= t3[X] <= t3[f"{X}_ci_high"], X
    assert t3["icc2_1_ci_low_f"] <= t3["icc2_1"] <= t3["icc2_1_ci_high_f"]    # the F interval beside it
    assert t3["n_pairs"] == 15 and t3["unit"] == "endpoint pair"
    again = ag.agreement_table(agent_scores(), n_boot=500, seed=4).iloc[0]
    assert again["icc2_1_ci_low"] == t3["icc2_1_ci_low"]


def test_table8_mean_sd_interval_keeps_a_pair_whole():
    # pair 0's two narratives disagree (SD 2 each), every other narrative agrees (SD 0)
    rows = []
    for p in range(5):
        for m in ("maxcap", "random"):
            for a, s in enumerate((4.0, 8.0) if p == 0 else (6.0, 6.0)):
                rows.append({"collection": "news", "mode": "simple", "pair_id": p, "method": m, "agent": a,
                             "score": s, "status": "ok"})
    d = ag.agent_disagreement(pd.DataFrame(rows), n_boot=2000, seed=0).iloc[0]
    sd = np.std([4, 8], ddof=1)
    assert d["mean_sd"] == pytest.approx(sd / 5)
    # a resample holds pair 0 c times (c = 0..5), both narratives together: mean SD = c sd / 5
    assert d["mean_sd_ci_low"] == pytest.approx(0.0) and d["mean_sd_ci_high"] in (pytest.approx(2 * sd / 5),
                                                                                pytest.approx(3 * sd / 5))


def test_two_pairs_give_no_interval_and_the_note_says_why():
    t3 = ag.agreement_table(agent_scores(n_pairs=2), n_boot=200, seed=0).iloc[0]
    assert np.isfinite(t3["icc2_1"]) or "ICC" in t3["note"]
    if np.isfinite(t3["icc2_1"]):
        assert np.isnan(t3["icc2_1_ci_low"]) and "icc2_1: no interval, undefined on" in t3["note"]
        assert "(2 endpoint pairs)" in t3["note"]
    eff = va.effect_size_table(judged_frame(n_pairs=2), n_boot=200, seed=0).set_index("metric").loc["LLM simple"]
    # with one pair drawn twice (half the resamples) each group has two equal values: d undefined
    assert np.isfinite(eff["d"]) and np.isnan(eff["d_ci_low"]) and "d: no interval" in eff["note"]
