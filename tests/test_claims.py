"""The claims scorecard: verdict rules on hand-made inputs, the intervals against reference
implementations, the power simulation against statsmodels' analytic t-test power, the register's
entries, the run's design against the paper's, the scorecard against hand-made tables with
provenance sidecars, and runs with known answers (a smoke run decides nothing; a run at the
paper's design decides what its truth says)."""
from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.power import TTestIndPower, TTestPower
from statsmodels.stats.proportion import proportion_confint

from judgelab.claims import design, intervals, power, register, scorecard
from judgelab.stats import resampling as rs
from judgelab.claims.verdicts import (INCONCLUSIVE, NOT_COMPARABLE, NOT_REPRODUCED, NOT_RUN, NOT_TESTABLE,
                                      REPRODUCED, REPRODUCED_WITHIN, VERDICTS, decide, expected_by_chance)


def verdict(rule, paper=None, est=None, lo=None, hi=None, p=None):
    return decide(rule, paper_value=paper, estimate=est, ci_low=lo, ci_high=hi, p=p)


# ----------------------------------------------------------------------------- verdict rules

def test_value_rule_reproduced_inside_the_margin_not_reproduced_beyond_it():
    rule = {"type": "value", "margin": 0.02}
    assert verdict(rule, 0.988, 0.98, 0.97, 0.995).verdict == REPRODUCED          # inside [0.968, 1.008]
    v = verdict(rule, 0.988, 0.90, 0.85, 0.95)
    assert v.verdict == NOT_REPRODUCED and v.ci_width == pytest.approx(0.10)      # excludes by more than 0.02
    # excluding the paper's value by less than the margin is not a refutation
    assert verdict(rule, 0.988, 0.965, 0.955, 0.975).verdict == INCONCLUSIVE


def test_an_interval_that_holds_zero_never_reproduces_a_gap():
    # a canonical - pulp gap of 0.13 with margin 0.1: an interval [-0.02, 0.24] is no reproduction
    v = verdict({"type": "value", "margin": 0.1}, 0.13, 0.11, -0.02, 0.24)
    assert v.verdict == INCONCLUSIVE
    # the width that would decide: 2 (m - |est - paper|) = 2 (0.1 - 0.02) = 0.16, stated in the reason
    assert v.decisive_width == pytest.approx(0.16) and "0.16" in v.reason


def test_no_interval_is_inconclusive_with_too_few_units():
    v = verdict({"type": "value", "margin": 0.1}, 0.5, 0.4, math.nan, math.nan)
    assert v.verdict == INCONCLUSIVE and math.isinf(v.ci_width) and "too few units" in v.reason
    assert v.decisive_width == pytest.approx(0.0)     # |0.4 - 0.5| = the margin: the estimate sits on the edge


def test_bounds_above_and_below_with_their_margin():
    above = {"type": "above", "bound": 0.92, "margin": 0.02}                      # threshold 0.90
    assert verdict(above, None, 0.96, 0.93, 0.98).verdict == REPRODUCED
    # precise, reaching the bound, within the margin: its own verdict, not "reproduced"
    assert verdict(above, None, 0.921, 0.915, 0.927).verdict == REPRODUCED_WITHIN
    assert verdict(above, None, 0.86, 0.84, 0.89).verdict == NOT_REPRODUCED
    v = verdict(above, None, 0.91, 0.85, 0.97)
    assert v.verdict == INCONCLUSIVE and v.decisive_width == pytest.approx(0.02)
    below = {"type": "below", "bound": 0.7, "margin": 0.05}                       # threshold 0.75
    assert verdict(below, None, 0.65, 0.60, 0.69).verdict == REPRODUCED
    assert verdict(below, None, 0.65, 0.60, 0.74).verdict == REPRODUCED_WITHIN
    assert verdict(below, None, 0.85, 0.80, 0.90).verdict == NOT_REPRODUCED
    assert verdict(below, None, 0.72, 0.60, 0.80).verdict == INCONCLUSIVE


def test_equivalence_margin():
    rule = {"type": "equivalence", "margin": 0.1}
    assert verdict(rule, 0.02, 0.01, -0.03, 0.04).verdict == REPRODUCED
    assert verdict(rule, 0.02, 0.20, 0.15, 0.30).verdict == NOT_REPRODUCED
    assert verdict(rule, 0.02, 0.02, -0.15, 0.19).verdict == INCONCLUSIVE


def test_direction_uses_the_papers_alpha_and_tells_a_precise_null_from_a_wide_interval():
    rule = {"type": "direction", "sign": 1, "alpha": 0.001, "margin": 0.1}
    assert verdict(rule, 0.13, 0.2, 0.1, 0.3, p=0.0004).verdict == REPRODUCED
    assert verdict(rule, 0.13, 0.2, 0.05, 0.35, p=0.004).verdict == INCONCLUSIVE  # p < .05 but not < .001
    assert verdict(rule, 0.13, -0.2, -0.3, -0.1, p=0.0001).verdict == NOT_REPRODUCED  # the other way round
    # a precise null: no effect of 0.1 or more on the claimed side at the paper's alpha (99.9%)
    v = verdict(rule, 0.13, -0.01, -0.02, 0.0, p=0.6)
    assert v.verdict == NOT_REPRODUCED and "0.1 or more" in v.reason
    # an estimate on the claimed side is never a refutation, however precise
    assert verdict(rule, 0.13, 0.01, 0.0, 0.02, p=0.6).verdict == INCONCLUSIVE
    # without a p-value the CI must exclude 0 on the claimed side
    neg = {"type": "direction", "sign": -1, "margin": 0.2}
    assert verdict(neg, None, -0.5, -0.9, -0.1).verdict == REPRODUCED
    v = verdict(neg, None, -0.5, -0.9, 0.1)
    assert v.verdict == INCONCLUSIVE and v.decisive_width == pytest.approx(1.0)   # 2 x 0.5 would exclude 0


def test_bad_rules_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="rule type"):
        verdict({"type": "roughly", "margin": 1}, 1, 1, 0, 2)
    with pytest.raises(ValueError, match="margin"):
        verdict({"type": "equivalence"}, 0, 0, -1, 1)
    with pytest.raises(ValueError, match="positive margin"):
        verdict({"type": "value", "margin": 0}, 0, 0, -1, 1)
    with pytest.raises(ValueError, match="CI low"):
        verdict({"type": "value", "margin": 1}, 1, 1, 2, 0)


def test_expected_by_chance_is_five_in_a_hundred_decided_verdicts():
    assert expected_by_chance(73) == pytest.approx(3.65)
    assert expected_by_chance(0) == 0


# ----------------------------------------------------------------------------- intervals

def test_wilson_interval_matches_statsmodels():
    est, lo, hi = intervals.proportion(37, 50)
    ref = proportion_confint(37, 50, alpha=0.05, method="wilson")
    assert est == pytest.approx(0.74) and (lo, hi) == pytest.approx(ref)


def test_student_and_pooled_intervals_match_scipy():
    rng = np.random.default_rng(3)
    a, b = rng.normal(1, 1, 12), rng.normal(0, 2, 9)
    est, lo, hi, p = intervals.mean_diff(a.mean(), a.std(ddof=1), 12, b.mean(), b.std(ddof=1), 9)
    res = stats.ttest_ind(a, b)
    ci = res.confidence_interval()
    assert p == pytest.approx(res.pvalue) and (lo, hi) == pytest.approx((ci.low, ci.high))
    est, lo, hi = intervals.mean(a.mean(), a.std(ddof=1), 12)
    ci1 = stats.ttest_1samp(a, 0).confidence_interval()
    assert (lo, hi) == pytest.approx((ci1.low, ci1.high))


def test_fisher_interval_matches_the_stats_floor():
    from judgelab.stats.correlation import fisher_ci

    assert intervals.correlation(0.65, 200)[1:] == pytest.approx(fisher_ci(0.65, 200))


def test_icc_from_anova_matches_pingouin_icc1():
    import pingouin as pg

    rng = np.random.default_rng(5)
    x = rng.normal(0, 1, (30, 1)) + rng.normal(0, 0.5, (30, 4))
    long = pd.DataFrame([(i, j, x[i, j]) for i in range(30) for j in range(4)], columns=["t", "r", "s"])
    ref = pg.intraclass_corr(long, targets="t", raters="r", ratings="s").set_index("Type").loc["ICC(1,1)"]
    est, lo, hi = intervals.icc_from_f(ref["F"], 30, 4)
    assert est == pytest.approx(ref["ICC"]) and (lo, hi) == pytest.approx(tuple(ref["CI95"]), abs=0.01)


# ----------------------------------------------------------------------------- power

def test_simulated_power_recovers_the_analytic_two_sample_t_power_at_d_08():
    analytic = TTestIndPower()
    truth = {"delta": 0.8, "sd_a": 1.0, "sd_b": 1.0, "share_a": 0.5}
    rule = {"type": "direction", "sign": 1, "alpha": 0.05, "margin": 0.0}
    for n_per_group in (10, 26):
        expected = analytic.power(effect_size=0.8, nobs1=n_per_group, alpha=0.05, ratio=1.0)
        n_sim = 4000
        got = power.power_at("mean_diff", truth, rule, None, 2 * n_per_group, n_sim=n_sim, seed=11)
        mc_se = math.sqrt(expected * (1 - expected) / n_sim)
        assert abs(got - expected) < 4 * mc_se, (n_per_group, got, expected)


def test_the_n_for_80_percent_power_is_the_analytic_one_within_monte_carlo_error():
    analytic = math.ceil(TTestIndPower().solve_power(effect_size=0.8, power=0.8, alpha=0.05))  # 26 per group
    got = power.n_required("mean_diff", {"delta": 0.8, "sd_a": 1.0, "sd_b": 1.0, "share_a": 0.5},
                           {"type": "direction", "sign": 1, "alpha": 0.05, "margin": 0.0}, None, n_sim=2000, seed=5)
    assert abs(got / 2 - analytic) <= 3, (got, analytic)


def test_power_is_unreachable_when_the_rule_can_never_be_met():
    # a correlation of 0.75 can never be shown to lie below 0.7
    got = power.n_required("correlation", {"r": 0.75}, {"type": "below", "bound": 0.7, "margin": 0.0}, None,
                           n_sim=100, n_max=256, seed=1)
    assert math.isinf(got)


def test_simulated_paired_power_is_the_analytic_paired_t_power_and_beats_independent_groups():
    """Units with two scores correlated rho = 0.5 (a story's two modes): the paired t interval of
    the difference excludes 0 as often as the paired t-test's power says (effect delta / SD of the
    differences, SD(diff) = sd sqrt(2 (1 - rho))), more often than two independent groups would."""
    delta, sd, rho, n, n_sim = 0.3, 1.0, 0.5, 40, 4000
    rule = {"type": "direction", "sign": 1, "alpha": 0.05, "margin": 0.0}
    got = power.power_at("paired_diff", {"mean": delta, "sd": sd, "rho": rho}, rule, None, n, n_sim=n_sim, seed=8)
    paired = TTestPower().power(effect_size=delta / (sd * math.sqrt(2 * (1 - rho))), nobs=n, alpha=0.05)
    independent = TTestIndPower().power(effect_size=delta / sd, nobs1=n, ratio=1.0, alpha=0.05)
    assert got == pytest.approx(paired, abs=4 * math.sqrt(paired * (1 - paired) / n_sim))
    assert got > independent + 0.1        # 0.59 against 0.32 here
    at_zero = power.power_at("paired_diff", {"mean": delta, "sd": sd, "rho": 0.0}, rule, None, n, n_sim=n_sim, seed=8)
    assert at_zero < got


def test_the_pair_bootstrap_d_covers_the_true_d_and_gains_from_the_pairing():
    """Endpoint pairs (a max-capacity and a random path, correlated rho) through Table 4's cluster
    bootstrap over pairs: the interval covers the true d about 95% of the time, and a positive
    within-pair correlation narrows it (the pairs' shared part cancels in the difference)."""
    rng = np.random.default_rng(21)
    sims = power.simulate("cohens_d", {"d": 0.8, "rho": 0.5}, 120, 600, rng, resample="pair")
    cover = np.mean((sims["lo"] < 0.8) & (0.8 < sims["hi"]))
    assert cover == pytest.approx(0.95, abs=0.035)
    w_paired = np.mean(sims["hi"] - sims["lo"])
    indep = power.simulate("cohens_d", {"d": 0.8, "rho": 0.0}, 120, 600, rng, resample="pair")
    assert w_paired < 0.85 * np.mean(indep["hi"] - indep["lo"])


def test_clustered_dimension_scores_widen_the_story_bootstrap_by_the_design_effect():
    """24 scores per story with intra-story correlation 0.2: the story bootstrap's interval is
    wider than a Wilson interval over all scores by about sqrt(1 + 23 x 0.2), the design effect."""
    truth = {"p": 0.7, "per_story": 24, "icc": 0.2}
    sims = power.simulate("proportion", truth, 100, 400, np.random.default_rng(2), resample="story")
    _, wl, wh = intervals.proportion(0.7 * 2400, 2400)
    ratio = np.mean(sims["hi"] - sims["lo"]) / (wh - wl)
    assert ratio == pytest.approx(math.sqrt(1 + 23 * 0.2), rel=0.1)


def test_stacked_weighted_statistics_equal_the_per_data_set_ones():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(5, 12)), rng.normal(size=(5, 9))
    wx, wy = rs.cluster_weights(np.arange(12), 50, 1), rs.cluster_weights(np.arange(9), 50, 2)
    np.testing.assert_allclose(rs.weighted_mean(x, wx), np.array([rs.weighted_mean(r, wx) for r in x]))
    np.testing.assert_allclose(rs.weighted_cohens_d(x, wx, y, wy),
                               np.array([rs.weighted_cohens_d(a, wx, b, wy) for a, b in zip(x, y)]))


def test_power_reads_the_papers_spread_or_a_stated_assumption_never_the_runs():
    c = BY_ID["sage-mode-invariance-L4"]
    assert "rho" in c.power["assume"] and c.power["assumption"]
    rec = scorecard.claim_power(c, c.paper_value(), KNOBS)
    assert np.isfinite(rec["n_80_paper"]) and "rho = 0" in rec["power_note"]
    assert not any("run_sd" in (x.power or {}) for x in CLAIMS)


def test_power_simulation_is_seeded():
    args = ("correlation", {"r": 0.6}, {"type": "above", "bound": 0.3, "margin": 0.0}, None, 30)
    assert power.power_at(*args, n_sim=300, seed=4) == power.power_at(*args, n_sim=300, seed=4)


# ----------------------------------------------------------------------------- the register

CLAIMS = register.load()


def test_the_register_loads_and_every_paper_reference_resolves():
    assert len(CLAIMS) >= 30
    assert {c.study for c in CLAIMS} == {"sage", "narrative"}
    assert len({c.id for c in CLAIMS}) == len(CLAIMS)
    for c in CLAIMS:
        if c.paper:
            assert np.isfinite(c.paper_value()), c.id
    # the numbers come from the transcribed constants, never retyped
    by_id = {c.id: c for c in CLAIMS}
    from judgelab.sage.analysis import paper_values as spv
    assert by_id["sage-convergence"].paper_value() == spv.TABLE8["convergence_rate"].value


def test_deterministic_and_llm_claims_are_both_registered():
    assert any(not c.llm for c in CLAIMS) and any(c.llm for c in CLAIMS)
    assert all(c.llm for c in CLAIMS if c.study == "sage")   # every SAGE number is an LLM's judgement


def test_a_bad_register_entry_names_the_claim_and_field(tmp_path):
    good = {"id": "x", "study": "sage", "label": "x", "wording": "w", "location": "l", "statistic": "s",
            "kind": "mean", "unit": "story", "table": "t", "column": "c", "rule": {"type": "value"},
            "llm": True, "notebook": "05", "function": "m:f", "family": "f",
            "paper": {"ref": "judgelab.sage.analysis.paper_values:TABLE8", "keys": ["convergence_rate"]}}
    import yaml

    families = {"f": {"margin": 0.02, "reason": "why", "depends_on": ["judge_model"]},
                "rel": {"margin": {"relative": 0.25}, "reason": "why"}}

    def load(entry, fams=families, fixed="2026-12-03"):
        f = tmp_path / "c.yaml"
        f.write_text(yaml.safe_dump({"fixed": fixed, "families": fams, "claims": [entry]}))
        return register.load(f)

    (c,) = load(good)
    assert c.paper_value() == pytest.approx(0.988) and c.margin == 0.02 and c.depends_on == ("judge_model",)
    assert c.fixed == "2026-12-03" and c.margin_reason == "why"
    assert load({**good, "family": "rel"})[0].margin == pytest.approx(0.25 * 0.988)   # a quarter of the paper's
    with pytest.raises(register.RegisterError, match="family 'nope' not in"):
        load({**good, "family": "nope"})
    with pytest.raises(register.RegisterError, match="margin comes from the claim's family"):
        load({**good, "rule": {"type": "value", "max_ci_width": 0.4}})
    with pytest.raises(register.RegisterError, match="family f: needs margin and reason"):
        load(good, fams={"f": {"margin": 0.1}})
    with pytest.raises(register.RegisterError, match="depends_on .* not among"):
        load(good, fams={"f": {"margin": 0.1, "reason": "r", "depends_on": ["the weather"]}})
    with pytest.raises(register.RegisterError, match="fixed"):
        load(good, fixed="")
    with pytest.raises(register.RegisterError, match="claim x: missing field.*table"):
        load({k: v for k, v in good.items() if k != "table"})
    with pytest.raises(register.RegisterError, match="claim x: paper.ref .* has no key 'nope'"):
        load({**good, "paper": {"ref": good["paper"]["ref"], "keys": ["nope"]}})
    with pytest.raises(register.RegisterError, match="claim x: kind"):
        load({**good, "kind": "vibes"})


# ----------------------------------------------------------------------------- the scorecard on hand-made tables

KNOBS = {"power_simulations": 200, "power_n_max": 2000, "power_seed": 1}


def _claim(**kw):
    base = dict(id="c", study="narrative", label="c", wording="w", location="l", statistic="s", kind="correlation",
                unit="pair", table="t", column="r", rule={"type": "value", "margin": 0.15}, llm=False, notebook="09",
                function="m:f", paper={"ref": "judgelab.narrative.judges.paper_values:PAPER_OOD_CORRELATION",
                                       "keys": ["r"]}, inputs={"n": "n"}, where={"collection": "news"})
    base.update(kw)
    return register.Claim(**base)


def _write(tmp_path, df, embedded, name="t"):
    df.to_csv(tmp_path / f"{name}.csv", index=False)
    side = {"judge": "llamacpp:smollm2" if embedded else "openai:gpt-4.1", "embedded_small_model": embedded}
    (tmp_path / f"{name}.provenance.json").write_text(json.dumps(side))


def test_scorecard_reads_the_row_computes_the_fallback_ci_and_decides(tmp_path):
    _write(tmp_path, pd.DataFrame({"collection": ["news", "vispub"], "r": [0.70, 0.1], "n": [200, 10]}), embedded=True)
    rec = scorecard.evaluate(_claim(), tmp_path, KNOBS)
    lo, hi = (float(v) for v in intervals.correlation(0.70, 200)[1:])
    assert rec["estimate"] == 0.70 and (rec["ci_low"], rec["ci_high"]) == pytest.approx((lo, hi))
    assert rec["ci_source"] == "scorecard fallback" and rec["verdict"] == REPRODUCED   # within 0.729 ± 0.15
    # the same numbers from an LLM claim of the embedded judge: not testable, with the n a live run needs
    rec = scorecard.evaluate(_claim(llm=True, power={"truth": {"r": "paper"}, "unit": "narratives"}), tmp_path, KNOBS)
    assert rec["verdict"] == NOT_TESTABLE and rec["judge"] == "llamacpp:smollm2"
    assert 4 <= rec["n_80_paper"] < 2000


def test_scorecard_prefers_the_tables_own_interval_columns(tmp_path):
    df = pd.DataFrame({"collection": ["news"], "r": [0.70], "n": [200], "r_ci_low": [0.1], "r_ci_high": [0.2],
                       "ci_method": ["bootstrap over pairs"]})
    _write(tmp_path, df, embedded=False)
    rec = scorecard.evaluate(_claim(), tmp_path, KNOBS)
    assert rec["ci_source"] == "table" and rec["ci_method"] == "bootstrap over pairs"
    assert rec["verdict"] == NOT_REPRODUCED


def test_scorecard_keeps_a_tables_empty_interval_and_says_none_where_no_interval_exists(tmp_path):
    # the table carries the interval columns but leaves this row's empty (one cluster): no fallback
    df = pd.DataFrame({"collection": ["news"], "r": [0.70], "n": [200], "r_ci_low": [np.nan], "r_ci_high": [np.nan],
                       "ci_method": ["cluster bootstrap (1 cluster < 2)"]})
    _write(tmp_path, df, embedded=False)
    rec = scorecard.evaluate(_claim(), tmp_path, KNOBS)
    assert rec["ci_source"] == "table" and np.isnan(rec["ci_low"]) and rec["verdict"] == INCONCLUSIVE
    # no interval columns and no inputs: nothing computed, and the scorecard says so
    _write(tmp_path, pd.DataFrame({"collection": ["news"], "r": [0.70]}), embedded=False)
    rec = scorecard.evaluate(_claim(inputs={}), tmp_path, KNOBS)
    assert rec["ci_source"] == scorecard.NO_INTERVAL and rec["verdict"] == INCONCLUSIVE
    assert rec["reason"] == "t.csv gives a point estimate only, with no interval to test it by"


def test_table7s_interval_is_shown_but_never_decides_an_importance_claim(tmp_path):
    """Table 7's pair bootstrap misses the population's importance far more than 5% of the time at
    the paper's 100 VisPub pairs (docs/claims.md): a registered importance claim reads no interval,
    even one tight around the paper's value, and says why; its operating characteristics are
    inconclusive at every truth."""
    c = replace(next(c for c in register.load() if c.id == "narr-importance-min-vispub"), depends_on=())
    pv = c.paper_value()
    df = pd.DataFrame({"collection": ["vispub"], "mode": ["standard"], "feature": ["min_coherence"],
                       "importance": [pv], "importance_ci_low": [pv - 0.01], "importance_ci_high": [pv + 0.01],
                       "n": [200], "n_pairs": [100], "ci_method": ["pair bootstrap"]})
    _write(tmp_path, df, embedded=False, name=c.table)
    rec = scorecard.evaluate(c, tmp_path, KNOBS)
    assert rec["verdict"] == INCONCLUSIVE and rec["n"] == 100
    assert rec["reason"].startswith("no valid interval to test it by") and "coverage" in rec["reason"]
    # the same row read as a table interval would be decided: the rule is not what holds it back
    assert scorecard.evaluate(replace(c, ci_columns="table"), tmp_path, KNOBS)["verdict"] == REPRODUCED
    ops = scorecard.operating_table([c], n_sim=10)
    assert len(ops) >= 3 and (ops[INCONCLUSIVE] == 1.0).all() and (ops["error"] == 0.0).all()


def test_reciprocal_maps_the_interval_end_to_end_and_refuses_one_through_zero():
    # r_gain_rel = r_complex / r_simple - 1 = 0.25 in [0.0, 0.6]: r_simple / r_complex = 0.8 in [1/1.6, 1/1.0]
    est, lo, hi, why = scorecard.reciprocal(0.25, 0.0, 0.6, offset=1.0)
    assert (est, lo, hi) == pytest.approx((0.8, 0.625, 1.0)) and "swapped" in why
    est, lo, hi, why = scorecard.reciprocal(0.25, -1.5, 0.6, offset=1.0)   # 1 + x spans 0: unbounded
    assert est == pytest.approx(0.8) and np.isnan(lo) and np.isnan(hi) and "contains 0" in why
    assert np.isnan(scorecard.reciprocal(0.25, np.nan, np.nan, 1.0)[1])


def test_scorecard_reads_a_reciprocal_claim_from_the_tables_interval(tmp_path):
    df = pd.DataFrame({"mode": ["complex"], "r_gain_rel": [0.25], "r_gain_rel_ci_low": [0.0],
                       "r_gain_rel_ci_high": [0.6], "ci_method": ["pair bootstrap"]})
    _write(tmp_path, df, embedded=False)
    c = _claim(column="r_gain_rel", kind="ratio", where={"mode": "complex"}, inputs={}, offset=1.0, reciprocal=True,
               rule={"type": "above", "bound": 0.6, "margin": 0.0}, paper=None)
    rec = scorecard.evaluate(c, tmp_path, KNOBS)
    assert (rec["estimate"], rec["ci_low"], rec["ci_high"]) == pytest.approx((0.8, 0.625, 1.0))
    assert rec["ci_source"] == "table" and rec["ci_method"].startswith("pair bootstrap; reciprocal")
    assert rec["verdict"] == REPRODUCED                                        # 0.625 > 0.6
    with pytest.raises(register.RegisterError, match="reciprocal .* no fallback inputs"):
        register._check({**c.__dict__, "inputs": {"n": "n"}, "paper": {"ref": "judgelab.narrative.judges."
                                                                         "paper_values:PAPER_OOD_CORRELATION",
                                                                         "keys": ["r"]}}, 0)


def test_scorecard_says_not_run_for_a_missing_table_and_names_bad_filters(tmp_path):
    assert scorecard.evaluate(_claim(), tmp_path, KNOBS)["verdict"] == scorecard.NOT_RUN
    _write(tmp_path, pd.DataFrame({"collection": ["news", "news"], "r": [0.7, 0.6], "n": [9, 9]}), embedded=False)
    with pytest.raises(register.RegisterError, match="claim c: where .* picks 2 rows of t.csv"):
        scorecard.evaluate(_claim(), tmp_path, KNOBS)
    with pytest.raises(register.RegisterError, match="no column 'rho'"):
        scorecard.evaluate(_claim(column="rho"), tmp_path, KNOBS)


# ----------------------------------------------------------------------------- the register against a smoke run

def _smoke_tables():
    import os
    from pathlib import Path

    root = os.environ.get("JUDGELAB_OUTPUT_ROOT")
    tables = Path(root) / "results" / "tables" if root else None
    if tables is None or not (tables / "sage_table08_reliability.csv").exists():
        pytest.skip("no smoke run's tables under $JUDGELAB_OUTPUT_ROOT")
    return tables


def _input_columns(spec) -> list[tuple[str | None, str, dict]]:
    """(table or None for the claim's own, column, where) of every column a claim's inputs name."""
    out = []
    for v in spec.values():
        if isinstance(v, str):
            out.append((None, v, {}))
        elif isinstance(v, dict) and "column" in v:
            out.append((v.get("table"), v["column"], v.get("where", {})))
    return out


@pytest.mark.after_notebooks
def test_the_register_names_only_tables_and_columns_that_a_smoke_run_writes():
    """Every claim's table exists after the smoke run with its filter columns and its column, and
    every column its fallback interval and power read. Expectations kept explicit:

    * ``column_pending`` claims: the column may be absent; the table must exist (none is pending now);
    * ``ci_columns: table``: the table's own CI columns must exist (the scorecard reads them);
    * ``ci_columns: analytic``: the table has CI columns, and the inputs the verdict's interval reads;
    * ``ci_columns: fallback`` / ``none``: the table has no CI columns for the claim's column (else the
      register should say ``table``), except a ``none`` claim whose note gives the simulated coverage
      that keeps the verdict from reading them (Table 7); a fallback claim names the inputs its
      interval is computed from.
    """
    tables = _smoke_tables()
    pending = []
    for c in CLAIMS:
        csv = tables / f"{c.table}.csv"
        assert csv.exists(), f"claim {c.id}: {csv.name} not written by the smoke run"
        cols = set(pd.read_csv(csv, nrows=0).columns)
        assert set(c.where) <= cols, f"claim {c.id}: where names {sorted(set(c.where) - cols)} not in {c.table}"
        if c.column_pending:
            pending.append(c.id)
        else:
            assert c.column in cols, f"claim {c.id}: column {c.column} not in {c.table}"
        has_ci = {c.ci_low_column, c.ci_high_column} <= cols
        if c.ci_columns == "none" and has_ci:   # an interval the verdict must not read: the note says why
            assert "coverage" in c.note, f"claim {c.id}: {c.table} has an interval; the note must say why it is not read"
        else:
            assert has_ci == (c.ci_columns in ("table", "analytic")), \
                f"claim {c.id}: ci_columns {c.ci_columns}, CI columns in {c.table}: {has_ci}"
        assert bool(c.inputs) or c.ci_columns not in ("fallback", "analytic"), f"claim {c.id}: its interval needs inputs"
        assert c.units_column is None or c.units_column in cols, f"claim {c.id}: units_column {c.units_column} not in {c.table}"
        specs = _input_columns(c.inputs)
        for table, col, where in specs:
            other = set(pd.read_csv(tables / f"{table or c.table}.csv", nrows=0).columns)
            assert col in other and set(where) <= other, f"claim {c.id}: input column {col} not in {table or c.table}"
        if "tidy" in c.inputs:
            from judgelab import interim

            df = interim.read(c.inputs["tidy"]["name"], tables.parent / "interim")
            assert {c.inputs["tidy"]["value"], *c.inputs["tidy"]["where"]} <= set(df.columns), c.id
    assert pending == []   # narr-simple-vs-complex reads r_gain_rel, as its reciprocal


# ----------------------------------------------------------------------------- the figure

def test_the_scorecard_figure_standardises_each_claim_and_lets_no_text_collide(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from judgelab import reporting
    from judgelab.claims import figure

    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    rules = {"a": {"type": "value", "margin": 0.2}, "b": {"type": "above", "bound": 0.92, "margin": 0.02},
             "c": {"type": "equivalence", "margin": 0.05}, "d": {"type": "value", "margin": 2.0}}
    card = pd.DataFrame({
        "claim_id": list("abcd"), "label": ["SAGE: a rather long claim label to wrap", "NT: ICC > 0.92", "mode", "NT: d"],
        "verdict": [REPRODUCED, NOT_TESTABLE, INCONCLUSIVE, NOT_REPRODUCED],
        "paper_value": [0.5, 0.961, 0.02, 2.0], "estimate": [0.55, 0.2, 0.0, 9.0],
        "ci_low": [0.45, -0.1, -0.5, 8.0], "ci_high": [0.65, 0.5, 0.5, 10.0]})
    z = figure.standardised(card, rules).set_index("claim_id")
    # in units of each claim's margin: a: (0.55 - 0.5) / 0.2; b: a bound is the reference;
    # c: "no effect" is centred on 0, scale its margin 0.05; d: (9 - 2) / 2
    assert z.loc["a", "z_estimate"] == pytest.approx(0.25) and z.loc["a", "z_paper_value"] == 0
    assert z.loc["b", "reference"] == pytest.approx(0.92) and z.loc["b", "scale"] == pytest.approx(0.02)
    assert z.loc["c", "reference"] == 0 and z.loc["c", "scale"] == pytest.approx(0.05)
    assert z.loc["d", "z_estimate"] == pytest.approx(3.5)                      # drawn clipped at the edge
    fig = figure.plot_scorecard(card, rules)
    reporting.save_figure(fig, "claims_fig_test", caption="a caption " * 30)
    layout = json.loads((tmp_path / "figures" / "claims_fig_test.layout.json").read_text())
    assert layout["overlaps"] == [] and layout["above_caption"] == []
    (ax,) = [a for a in fig.axes if a.get_yticklabels() and a.get_yticklabels()[0].get_text().startswith("SAGE")]
    (right,) = ax.child_axes
    words = [t.get_text() for t in right.get_yticklabels()]
    assert words == list(card["verdict"])                      # the verdicts in words, top row first
    colours = [matplotlib.colors.to_hex(t.get_color()) for t in right.get_yticklabels()]
    assert colours == [figure.VERDICT_STYLE[v][0].lower() for v in card["verdict"]]
    # the tick labels on each side do not collide with one another (at 200 dpi)
    fig.canvas.draw()
    for labels in (ax.get_yticklabels(), right.get_yticklabels()):
        boxes = [t.get_window_extent() for t in labels]
        assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


# ----------------------------------------------------------------------------- the run's design against the paper's

PAPER_CHOICES = ["jsd_base=e", "temporal=True", "parameter_set.news=32/8", "parameter_set.vispub=32/8"]
# the paper's stated design as notebooks 05-06 and 09-10 record it (SAGE Table 5; NT section 3.4.3,
# 200 news and 100 VisPub endpoint pairs; GPT-5-mini at medium effort, GPT-4.1 without reasoning)
SAGE_PAPER = ["story_count.canonical=50", "story_count.pulp=30", "story_count.llm=20", "reasoning_effort=medium",
              "convergence_threshold=0.3"]
JUDGES_PAPER = ["k_agents.news=5", "k_agents.vispub=3", "pairs_judged.news=200", "pairs_judged.vispub=100",
                "reasoning_effort=none"]


def _sidecar(profile, model=None, embedded=False, choices=None, dirty=False, changed=None):
    """A sidecar as the notebooks write it: the run's analysis choices (by default the paper's:
    07-08's and those of the study whose paper judge ``model`` is, SAGE's for gpt-5-mini)."""
    if choices is None:
        choices = [*PAPER_CHOICES, *(SAGE_PAPER if str(model).startswith("gpt-5-mini") else JUDGES_PAPER)]
    return {"profile": profile, "model": model, "judge": f"x:{model}" if model else "none",
            "embedded_small_model": embedded, "choices": list(choices), "git_dirty": dirty,
            "git_changed": list(changed or [])}


BY_ID = {c.id: c for c in CLAIMS}


def test_design_differences_name_each_dependency():
    math_news = BY_ID["narr-math-d-min-news"]
    assert design.differences(math_news, _sidecar("paper"), units=200) == []
    assert design.differences(math_news, _sidecar("demo"), units=60) == []          # the whole collection, 60 pairs
    smoke = design.differences(math_news, _sidecar("smoke"), units=12)
    assert any("subset of about 140" in d for d in smoke) and any("below the claim's minimum of 30" in d for d in smoke)
    # VisPub is embedded with MiniLM in every profile (the paper: text-embedding-3-small)
    assert any("all-MiniLM-L6-v2" in d for d in design.differences(BY_ID["narr-math-d-min-vispub"],
                                                                   _sidecar("paper"), units=100))
    assert any("no vispub collection" in d for d in design.differences(BY_ID["narr-math-d-min-vispub"],
                                                                        _sidecar("demo"), units=100))
    # the OOD study's one landscape embeds both collections with MiniLM
    assert any("joint" in d for d in design.differences(BY_ID["narr-ood-coherence-alternating"], _sidecar("paper"), 30))
    # SAGE: the paper's judge (or a dated snapshot of it) in the paper profile, nothing else
    conv = BY_ID["sage-convergence"]
    assert design.differences(conv, _sidecar("paper", "gpt-5-mini", choices=SAGE_PAPER)) == []
    assert design.differences(conv, _sidecar("paper", "gpt-5-mini-2025-08-07", choices=SAGE_PAPER)) == []
    assert design.differences(conv, _sidecar("paper", "gpt-4.1", choices=SAGE_PAPER)) == ["judge gpt-4.1, not the paper's gpt-5-mini"]
    assert design.differences(conv, _sidecar("demo", "gpt-5-mini", choices=SAGE_PAPER)) == ["profile demo, not paper (the paper's design)"]
    assert design.differences(conv, None) == ["the run's design is unknown (no provenance sidecar)"]


def test_a_run_whose_analysis_choice_differs_from_the_papers_is_not_comparable():
    c = BY_ID["narr-math-d-min-news"]
    assert design.differences(c, _sidecar("demo"), units=60) == []
    jsd2 = design.differences(c, _sidecar("demo", choices=["jsd_base=2", *PAPER_CHOICES[1:]]), units=60)
    assert jsd2 == ["JSD base 2, not the paper's e"]
    stored = ["jsd_base=2.71828", *PAPER_CHOICES[1:]]                 # notebook 08 records the stored base
    assert design.differences(c, _sidecar("demo", choices=stored), units=60) == []
    other_set = design.differences(c, _sidecar("demo", choices=[*PAPER_CHOICES[:2], "parameter_set.news=16/4"]), 60)
    assert other_set == ["news: parameter set 16/4, not the paper's 32/8"]
    no_time = design.differences(c, _sidecar("demo", choices=["jsd_base=e", "temporal=False"]), units=60)
    assert len(no_time) == 1 and no_time[0].startswith("temporal rule False")
    assert "not recorded" in design.differences(c, _sidecar("demo", choices=[]), units=60)[0]
    # SAGE's claims depend on none of the narrative choices
    assert design.differences(BY_ID["sage-convergence"], _sidecar("paper", "gpt-5-mini", choices=SAGE_PAPER, dirty=True)) == []


def test_a_run_with_other_k_stories_or_effort_is_not_comparable_for_exactly_the_claims_that_depend_on_them():
    """K = 2 agents on news where the paper used 5: every news claim of the judges' families is not
    comparable, and no other claim changes (VisPub's, the cost claims', SAGE's, the mathematics')."""
    paper = [*PAPER_CHOICES, *SAGE_PAPER, *JUDGES_PAPER]
    k2 = [c if c != "k_agents.news=5" else "k_agents.news=2" for c in paper]

    def diffs(choices):
        """Each claim's differences, its study's sidecar holding ``choices`` (SAGE's or the judges')."""
        out = {}
        for c in CLAIMS:
            model, own, other = {"sage": ("gpt-5-mini", SAGE_PAPER, JUDGES_PAPER),
                                 "narrative": ("gpt-4.1", JUDGES_PAPER, SAGE_PAPER)}[c.study]
            mine = [x for x in choices if x not in other or x in own]
            out[c.id] = design.differences(c, _sidecar("paper", model, choices=mine), units=1e6)
        return out
    before, after = diffs(paper), diffs(k2)
    changed = {i for i in before if before[i] != after[i]}
    expected = {c.id for c in CLAIMS if "k_agents" in c.depends_on and "news" in c.claim_collections}
    assert changed == expected and len(expected) >= 20
    assert all(after[i][-1] == "k_agents.news = 2, not the paper's 5" for i in changed)
    # each other recorded choice, the same way: 10 canonical stories, SAGE at low effort, a threshold of 0.5
    for old, new, dep in (("story_count.canonical=50", "story_count.canonical=10", "story_count"),
                          ("reasoning_effort=medium", "reasoning_effort=low", "story_count"),   # SAGE's effort
                          ("convergence_threshold=0.3", "convergence_threshold=0.5", "convergence_threshold"),
                          ("pairs_judged.vispub=100", "pairs_judged.vispub=40", "pairs_judged")):
        other = diffs([c if c != old else new for c in paper])
        moved = {i for i in before if before[i] != other[i]}
        want = {c.id for c in CLAIMS if dep in c.depends_on
                and (dep != "pairs_judged" or "vispub" in c.claim_collections)
                and (dep != "story_count" or c.study == "sage")}
        assert moved == want and want, (old, sorted(moved ^ want)[:5])
    # a choice the run did not record is not comparable either, and says so
    missing = diffs([c for c in paper if not c.startswith("k_agents.news")])
    assert all("k_agents.news is not recorded" in missing[i][-1] for i in expected)


def test_a_dirty_tree_notes_the_row_unless_it_touches_the_claims_code(tmp_path):
    c = BY_ID["narr-math-d-min-news"]
    elsewhere = _sidecar("demo", dirty=True, changed=["lib/judgelab/sage/protocol/prompts.py", "docs/teaching.md",
                                                      "lib/judgelab/claims/claims.yaml"])
    assert design.differences(c, elsewhere, units=60) == []
    assert design.notes(c, elsewhere) == ["run from uncommitted changes: lib/judgelab/sage/protocol/prompts.py, "
                                          "docs/teaching.md, lib/judgelab/claims/claims.yaml (none in the code this "
                                          "claim depends on)"]
    for path in ("lib/judgelab/narrative/paths/extraction.py", "lib/judgelab/narrative/landscape/graph.py",
                 "lib/judgelab/stats/effects.py", "notebooks/08_path_extraction.py"):
        touched = design.differences(c, _sidecar("demo", dirty=True, changed=[path, "docs/x.md"]), units=60)
        assert touched == [f"written from uncommitted changes to the code this claim depends on ({path}): no commit holds it"]
        assert design.notes(c, _sidecar("demo", dirty=True, changed=[path])) == []
    assert design.notes(c, _sidecar("demo")) == []                       # a clean tree: nothing to say
    # the scorecard row: verdict as on a clean tree, the note beside it
    tables = tmp_path / "tables"
    tables.mkdir()
    row = {"collection": "news", "method": "max_capacity", "params": "32/8", "baseline_dates": "strict",
           "n": 200, "min_coherence_d": 1.9, "min_coherence_d_ci_low": 1.6, "min_coherence_d_ci_high": 2.2}
    pd.DataFrame([row]).to_csv(tables / f"{c.table}.csv", index=False)
    side = {**elsewhere, "profile": "paper"}
    (tables / f"{c.table}.provenance.json").write_text(json.dumps(side))
    knobs = {"power_simulations": 20, "power_n_max": 50, "power_seed": 0}
    own = replace(c, where={"collection": "news"}, column="min_coherence_d", units_column="n", power=None,
                  ci_columns="table", ci_low=None, ci_high=None, p_column=None, n_units="n", inputs={}, other_reading={})
    dirty = scorecard.evaluate(own, tables, knobs)
    (tables / f"{c.table}.provenance.json").write_text(json.dumps({**side, "git_dirty": False, "git_changed": []}))
    clean = scorecard.evaluate(own, tables, knobs)
    assert dirty["verdict"] == clean["verdict"] and dirty["verdict"] not in ("not comparable",)
    assert "run from uncommitted changes" in dirty["run_note"] and dirty["run_note"] in dirty["reason"]
    assert clean["run_note"] == ""


def test_notebooks_07_and_08_record_their_analysis_choices_in_every_sidecar():
    from judgelab.narrative.settings import landscape_settings, path_settings
    from judgelab.run import Run

    land = landscape_settings("demo", jsd_base=2).choices()
    assert land["jsd_base"] == "2" and land["parameter_set.news"] == "32/8" and land["embedding.news"] == "precomputed"
    paths_ = path_settings("demo", n_pairs=12, temporal="off").choices({"news": math.e}, {"news": "16/4"})
    assert paths_["temporal"] == "False" and paths_["n_pairs.news"] == "12" and paths_["date_rule"] == "strict"
    assert paths_["parameter_set.news"] == "16/4" and float(paths_["jsd_base"]) == pytest.approx(math.e, rel=1e-5)
    run = Run("07_coherence_graph", "demo")
    run.choose(land)
    assert "jsd_base=2" in run.context()["choices"] and "parameter_set.news=32/8" in run.context()["choices"]
    assert design.recorded_choices(run.context())["jsd_base"] == "2"


def test_the_joint_landscape_is_embedded_with_minilm_as_the_design_module_says():
    import inspect as _inspect

    from judgelab.narrative.analyses import joint_collection

    assert "MiniLMEmbeddings" in _inspect.getsource(joint_collection.embed_jointly if hasattr(joint_collection, "embed_jointly")
                                                    else joint_collection)
    assert design.JOINT_EMBEDDING == "all-MiniLM-L6-v2"


def test_every_family_states_a_margin_with_a_reason_and_every_claim_depends_on_something():
    assert all(c.margin > 0 or c.rule["type"] in ("above", "below", "direction") for c in CLAIMS)
    assert all(c.margin_reason and c.fixed for c in CLAIMS)
    assert all(c.depends_on for c in CLAIMS)
    assert all("judge_model" in c.depends_on for c in CLAIMS if c.study == "sage")
    assert not any("max_ci_width" in c.rule for c in CLAIMS)


# ----------------------------------------------------------------------------- runs with known answers
#
# One synthetic table per claim, with the row its ``where`` picks, its column and interval set to a
# chosen truth, and a provenance sidecar of a chosen design; read by the scorecard itself.

PAPER_JUDGE = {"sage": "gpt-5-mini", "narrative": "gpt-4.1"}
CHEAP = {"power_simulations": 10, "power_n_max": 20, "power_seed": 1}


def _target(claim, truth: str) -> tuple[float, float, float, float]:
    """(estimate, ci_low, ci_high, p) on the claim's own scale for ``truth``: "true" (well inside
    what the rule reproduces), "false" (well outside), "unclear" (an interval too wide to tell)."""
    r, m = claim.rule, claim.margin
    kind = r["type"]
    if kind in ("value", "equivalence"):
        c = 0.0 if kind == "equivalence" else claim.paper_value()
        est = {"true": c, "false": c + 3 * m, "unclear": c + m}[truth]
        if claim.kind == "proportion" and est > 1:   # a share above 1 has no data: the other side
            est = {"true": c, "false": c - 3 * m, "unclear": c - m}[truth]
        half = m / 4 if truth != "unclear" else 2 * m
        return est, est - half, est + half, math.nan
    if kind in ("above", "below"):
        s = 1 if kind == "above" else -1
        step = max(m, 0.02)
        t = r["bound"] - s * m
        est = {"true": t + s * 2 * step, "false": t - s * 2 * step, "unclear": t}[truth]
        half = step / 2 if truth != "unclear" else 2 * step
        return est, est - half, est + half, math.nan
    s = r["sign"]
    step = max(m, 0.1)
    x, half, p = {"true": (2 * step, step / 2, 1e-9), "false": (-2 * step, step / 2, 1e-9),
                  "unclear": (step / 2, 2 * step, 0.5)}[truth]
    est = s * x
    return est, est - half, est + half, p


def _synthetic_table(tmp_path, claim, truth, sidecar):
    est, lo, hi, p = _target(claim, truth)
    if claim.reciprocal:   # the table holds x with 1 / (x + offset) the claim's statistic
        est, lo, hi = 1 / est - claim.offset, 1 / hi - claim.offset, 1 / lo - claim.offset
    row = {k: str(v).replace("*", "") for k, v in claim.where.items()}
    row.update({claim.column: est, claim.ci_low_column: lo, claim.ci_high_column: hi, "ci_method": "synthetic"})
    if claim.p_column:
        row[claim.p_column] = p
    named = [v for v in claim.inputs.values() if isinstance(v, str)]
    named += [claim.units_column] if claim.units_column else []
    for col in named:   # a design's counts (200 pairs, 100 stories) and spreads
        row.setdefault(col, 0.3 if "sd" in col else 200.0)
    rows = [row]
    # an analytic interval reads the counts, not the table's interval: counts that make it as narrow
    count = 20000.0 if claim.ci_columns == "analytic" else 200.0
    for spec in claim.inputs.values():   # a count read from another row of the same table (the story rows)
        if isinstance(spec, dict) and "column" in spec and "table" not in spec and spec.get("where"):
            other = {k: str(v) for k, v in spec["where"].items()}
            if all(str(row.get(k)) == v for k, v in other.items()):
                row.setdefault(spec["column"], count)
                continue
            match = next((r for r in rows[1:] if all(str(r.get(k)) == v for k, v in other.items())), None)
            if match is None:
                match = {**{k: v for k, v in row.items() if k in claim.where}, **other}
                rows.append(match)
            match[spec["column"]] = count
    pd.DataFrame(rows).to_csv(tmp_path / f"{claim.table}.csv", index=False)
    (tmp_path / f"{claim.table}.provenance.json").write_text(json.dumps(sidecar))


def _run(tmp_path, claim, truth, sidecar):
    folder = tmp_path / f"{claim.id}-{truth}"
    folder.mkdir()
    _synthetic_table(folder, claim, truth, sidecar)
    return scorecard.evaluate(claim, folder, CHEAP)


@pytest.mark.parametrize("judge", ["embedded", "paper"])
def test_a_smoke_profile_run_decides_no_claim(tmp_path, judge):
    """Whatever the numbers and whoever the judge: a smoke run's design is not the paper's."""
    got = {}
    for c in CLAIMS:
        model = "smollm2-135m" if judge == "embedded" else PAPER_JUDGE[c.study]
        side = _sidecar("smoke", model if c.llm else None, embedded=judge == "embedded" and c.llm)
        for truth in ("true", "false"):
            got[c.id, truth] = _run(tmp_path, c, truth, side)["verdict"]
    assert set(got.values()) <= {NOT_COMPARABLE, NOT_TESTABLE, NOT_RUN}, \
        {k: v for k, v in got.items() if v not in (NOT_COMPARABLE, NOT_TESTABLE, NOT_RUN)}
    if judge == "embedded":
        assert all(got[c.id, "true"] == NOT_TESTABLE for c in CLAIMS if c.llm)
    assert all(got[c.id, "true"] == NOT_COMPARABLE for c in CLAIMS if not c.llm)


def test_a_run_at_the_papers_design_decides_what_its_truth_says(tmp_path):
    """The paper profile with the paper's judge: each claim reproduced when true, not reproduced
    when false, inconclusive when its interval is too wide; not comparable only where this
    compendium's design is not the paper's (the MiniLM embeddings of VisPub and the OOD landscape)."""
    expect = {"true": REPRODUCED, "false": NOT_REPRODUCED, "unclear": INCONCLUSIVE}
    comparable = 0
    for c in CLAIMS:
        side = _sidecar("paper", PAPER_JUDGE[c.study] if c.llm else None)
        for truth, wanted in expect.items():
            rec = _run(tmp_path, c, truth, side)
            if rec["verdict"] == NOT_COMPARABLE:
                assert "all-MiniLM-L6-v2" in rec["reason"], (c.id, rec["reason"])
                continue
            comparable += truth == "true"
            assert rec["verdict"] == wanted, (c.id, truth, rec["reason"])
            assert rec["margin"] == c.margin
            if wanted == INCONCLUSIVE:
                assert rec["decisive_width"] >= 0, c.id
    assert comparable >= 45   # every SAGE claim and the news claims


def test_a_run_of_another_judge_or_a_demo_run_is_not_comparable_for_sage(tmp_path):
    c = BY_ID["sage-convergence"]
    assert _run(tmp_path, c, "true", _sidecar("paper", "gpt-4.1"))["verdict"] == NOT_COMPARABLE
    rec = _run(tmp_path, c, "false", _sidecar("demo", "gpt-5-mini"))
    assert rec["verdict"] == NOT_COMPARABLE and "profile demo" in rec["reason"]
    assert "n_80_run" not in rec      # power never reads a run's spread


# ----------------------------------------------------------------------------- simulated data with a set truth
#
# Units drawn at the paper's design (SAGE: 50 canonical, 30 pulp, 20 LLM stories; news: 200
# endpoint pairs; K = 5 agents) from a set truth, through the register's own rule for the claim.

def _shares(claim, kind, truth, n, n_sim=2000, seed=3):
    sims = power.simulate(kind, truth, n, n_sim, np.random.default_rng(seed))
    out = [decide(claim.rule, paper_value=claim.paper_value(), estimate=float(e), ci_low=float(lo), ci_high=float(hi),
                  p=None if np.isnan(p) else float(p)).verdict
           for e, lo, hi, p in zip(sims["est"], sims["lo"], sims["hi"], sims["p"])]
    return {v: out.count(v) / n_sim for v in (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE)}


def test_simulated_layer_means_at_the_papers_design():
    c = BY_ID["sage-mean-canonical-L4"]                      # 3.96 (SD 0.41), margin 0.1
    v, sd = c.paper_value(), 0.41
    # at the paper's 50 stories a mean's t interval (about 0.23 wide) almost never fits the 0.2-wide band
    assert _shares(c, "mean", {"mean": v, "sd": sd}, 50)[INCONCLUSIVE] > 0.97
    assert _shares(c, "mean", {"mean": v, "sd": sd}, 400)[REPRODUCED] > 0.98          # true, at 400 stories (P = 0.996)
    assert _shares(c, "mean", {"mean": v + 1.0, "sd": sd}, 50)[NOT_REPRODUCED] > 0.99  # false
    # the truth on the margin's edge: a 95% interval misses it by chance 2.5% of the time on each
    # side, so 2.5% reproduced, 2.5% not reproduced, 95% inconclusive (the rate the page states)
    edge = _shares(c, "mean", {"mean": v + c.margin, "sd": sd}, 400, n_sim=4000)
    assert edge[REPRODUCED] == pytest.approx(0.025, abs=0.01) and edge[NOT_REPRODUCED] == pytest.approx(0.025, abs=0.01)
    assert edge[INCONCLUSIVE] == pytest.approx(0.95, abs=0.015)


def test_simulated_genre_direction_at_the_papers_design_matches_the_analytic_power():
    """Canonical > pulp, L6 (0.27, SDs 0.57 / 0.56, 50 + 30 stories) at the paper's α = 0.001:
    the share reproduced is the two-sample t-test's power; a tiny effect is inconclusive."""
    c = BY_ID["sage-canonical-gt-pulp-L6"]
    truth = {"delta": c.paper_value(), "sd_a": 0.57, "sd_b": 0.56, "share_a": 50 / 80}
    got = _shares(c, "mean_diff", truth, 80, n_sim=4000)
    d = c.paper_value() / math.sqrt((49 * 0.57 ** 2 + 29 * 0.56 ** 2) / 78)
    analytic = TTestIndPower().power(effect_size=d, nobs1=50, ratio=30 / 50, alpha=c.rule["alpha"])
    assert got[REPRODUCED] == pytest.approx(analytic, abs=4 * math.sqrt(analytic * (1 - analytic) / 4000) + 0.005)
    assert got[REPRODUCED] < 0.2           # the paper's own design rarely shows p < 0.001 for this gap
    tiny = _shares(c, "mean_diff", {**truth, "delta": c.margin / 4}, 80)
    assert tiny[INCONCLUSIVE] > 0.9        # neither shown nor excluded at 80 stories
    false = _shares(c, "mean_diff", {**truth, "delta": -0.3}, 80)
    # refuted when the paper's-alpha (99.9%) interval excludes every gap of t = min(m, the paper's 0.27)
    sp = math.sqrt((49 * 0.57 ** 2 + 29 * 0.56 ** 2) / 78) * math.sqrt(1 / 50 + 1 / 30)
    ref = stats.t.cdf((c.margin - (-0.3)) / sp - stats.t.ppf(1 - c.rule["alpha"] / 2, 78), 78)
    assert false[NOT_REPRODUCED] == pytest.approx(ref, abs=0.06) and false[REPRODUCED] == 0


def test_simulated_icc_bound_and_math_effect_size_at_the_papers_design():
    icc = BY_ID["narr-icc-news-simple"]                       # > 0.92 with margin 0.02, 200 narratives x 5 agents
    assert _shares(icc, "icc", {"icc": icc.paper_value(), "k": 5}, 200, n_sim=500)[REPRODUCED] > 0.95
    assert _shares(icc, "icc", {"icc": 0.80, "k": 5}, 200, n_sim=500)[NOT_REPRODUCED] > 0.95
    d = BY_ID["narr-math-d-min-news"]                         # 1.591 with margin 0.5, 200 + 200 paths
    # reproduced when |d_hat - d| <= m - 1.96 se: the normal approximation's share
    se = math.sqrt(400 / (200 * 200) + d.paper_value() ** 2 / (2 * 400))
    expected = 2 * stats.norm.cdf((d.margin - intervals.Z95 * se) / se) - 1
    got = _shares(d, "cohens_d", {"d": d.paper_value(), "share_a": 0.5}, 400)[REPRODUCED]
    assert got == pytest.approx(expected, abs=0.03) and got > 0.9
    assert _shares(d, "cohens_d", {"d": 0.6, "share_a": 0.5}, 400)[NOT_REPRODUCED] > 0.95   # a medium effect, not 1.6
    edge = _shares(d, "cohens_d", {"d": d.paper_value() + d.margin, "share_a": 0.5}, 400)
    assert edge[INCONCLUSIVE] > 0.9


def test_the_scorecard_computes_no_t_interval_on_two_values(tmp_path):
    """Two latencies give no interval (a Student t on n = 2 spans hundreds of seconds): too few units."""
    c = _claim(kind="mean", column="time_s_mean", inputs={"sd": "time_s_sd", "n": "n_fresh"}, where={"mode": "cot"},
               rule={"type": "value", "margin": 1.5}, paper={"ref": "judgelab.narrative.judges.paper_values:"
                                                                    "PAPER_TABLE5_COST", "keys": ["cot", "time_s_mean"]})
    for n, decided in ((2, False), (4, False), (5, True)):
        _write(tmp_path, pd.DataFrame({"mode": ["cot"], "time_s_mean": [6.0], "time_s_sd": [0.1], "n_fresh": [n]}),
               embedded=False)
        rec = scorecard.evaluate(c, tmp_path, KNOBS)
        assert np.isfinite(rec["ci_low"]) == decided, n
        if not decided:
            assert rec["verdict"] == INCONCLUSIVE and "too few units" in rec["reason"]
            assert "too few units for an interval (fewer than 5 per group)" in rec["ci_method"]


def test_the_papers_own_table11_cannot_give_its_all_p_below_0001():
    """Table 11's means, SDs and 50 / 30 stories give the canonical - pulp t-tests p = 0.16, 0.10,
    0.04 (L4, L5, L6): the paper's own numbers leave its 'all p < 0.001' inconclusive."""
    from judgelab.claims import scorecard

    got = {layer: scorecard.paper_check(BY_ID[f"sage-canonical-gt-pulp-{layer}"]) for layer in ("L4", "L5", "L6")}
    for layer, p in (("L4", 0.16), ("L5", 0.10), ("L6", 0.04)):
        assert f"p = {p:.2g}" in got[layer]["paper_check"], got[layer]
        assert got[layer]["paper_check_verdict"] == INCONCLUSIVE
    # the same check by hand for L4: pooled SD over 78 df
    sp = math.sqrt((49 * 0.41 ** 2 + 29 * 0.36 ** 2) / 78)
    p_l4 = 2 * stats.t.sf(0.13 / (sp * math.sqrt(1 / 50 + 1 / 30)), 78)
    assert f"p = {p_l4:.2g}" in got["L4"]["paper_check"]
    # the canonical - LLM d of L4 (2.68, 50 / 20 stories) is well away from 0 but its interval is
    # wider than the d margin allows: inconclusive as a value at the paper's own design
    d = scorecard.paper_check(BY_ID["sage-d-canonical-llm-L4"])
    assert d["paper_check_verdict"] == INCONCLUSIVE and d["paper_check"].startswith("normal interval")
    assert scorecard.paper_check(BY_ID["narr-math-d-min-news"]) == scorecard.PAPER_CHECK_EMPTY   # no group sizes cited


# ----------------------------------------------------------------------------- the register's quotations
#
# The papers' texts are not part of the compendium (their licences are theirs): point
# JUDGELAB_PAPER_TEXTS at a folder with a plain-text copy of each, found by its title line.

PAPER_TITLES = {"sage": "SAGE: Hierarchical LLM-Based Literary Evaluation",
                "narrative": "LLM-as-a-Judge Approaches as Proxies for Mathematical Coherence in Narrative Extraction"}
#: LaTeX left in a paper's text extraction, as the register writes it
_TEX = {r"\pm": "±", r"\Delta": "Δ", r"\delta": "δ", r"\rho": "ρ", r"\alpha": "α", r"\times": "×", r"\%": "%"}


def _normalised(text: str) -> str:
    """Text compared without case, spacing, math delimiters or typographic quotes and dashes."""
    import re
    import unicodedata

    text = unicodedata.normalize("NFKC", text)
    for tex, char in _TEX.items():
        text = text.replace(tex, char)
    text = text.translate(str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "−": "-", "–": "-", "—": "-",
                                         "$": None, "\\": None, "{": None, "}": None}))
    return re.sub(r"\s+", "", text).lower()


def _paper_texts() -> dict[str, str]:
    import os
    from pathlib import Path

    # the papers' texts beside the repository (CI: $(repo)/../shared/papers), else the variable's folder
    repo = Path(__file__).resolve().parents[1]
    candidates = [os.environ.get("JUDGELAB_PAPER_TEXTS"), repo.parent / "shared" / "papers",
                  repo.parent.parent / "shared" / "papers"]   # a worktree under <root>/wt/<name>
    folder = next((Path(c) for c in candidates if c and Path(c).is_dir()), None)
    if folder is None:
        pytest.skip(f"the papers' texts are not beside the repository ({repo.parent / 'shared' / 'papers'}) "
                    "and JUDGELAB_PAPER_TEXTS is not set")
    found = {}
    for f in sorted(Path(folder).glob("*.txt")):
        head = f.read_text(encoding="utf-8", errors="replace")[:400]
        for study, title in PAPER_TITLES.items():
            if title in head:
                found[study] = _normalised(f.read_text(encoding="utf-8", errors="replace"))
    missing = set(PAPER_TITLES) - set(found)
    if missing:
        pytest.skip(f"no text of {', '.join(sorted(missing))} in {folder}")
    return found


def test_every_quotation_of_the_register_is_in_its_paper():
    """Each claim's ``wording`` is the paper's own words: every part of it between '...' appears
    in the paper's text (spacing, case, math delimiters and typographic marks aside)."""
    import re

    texts = _paper_texts()
    missing = {}
    for c in CLAIMS:
        parts = [p.strip(" .;,") for p in re.split(r"\.\.\.|…", c.wording)]
        absent = [p for p in parts if p and _normalised(p) not in texts[c.study]]
        if absent:
            missing[c.id] = absent
    assert not missing, missing


def test_the_register_cites_the_papers_by_name_not_by_a_path():
    text = register.REGISTER.read_text(encoding="utf-8")
    assert "../" not in text and "/work/" not in text and "papers/00" not in text
    assert all(c.location.startswith(("SAGE,", "NT,")) for c in CLAIMS)


def test_icc2_1_and_its_interval_match_pingouin_icc2():
    import pingouin as pg

    rng = np.random.default_rng(8)
    x = rng.normal(0, 1, (25, 1)) + rng.normal(0, 0.4, (1, 4)) + rng.normal(0, 0.5, (25, 4))  # raters offset
    long = pd.DataFrame([(i, j, x[i, j]) for i in range(25) for j in range(4)], columns=["t", "r", "s"])
    ref = pg.intraclass_corr(long, targets="t", raters="r", ratings="s").set_index("Type").loc["ICC(A,1)"]
    est, lo, hi = intervals.icc2_1(x)
    assert est == pytest.approx(ref["ICC"]) and (lo, hi) == pytest.approx(tuple(ref["CI95"]), abs=0.01)
    # vectorised over simulated runs, as the power simulation calls it
    many = intervals.icc2_1(np.stack([x, x]))
    assert many[0].shape == (2,) and many[0][1] == pytest.approx(est)


def test_the_icc_power_simulation_reads_icc2_1_with_rater_offsets():
    """ICC(2,1) counts the raters' offsets as disagreement: with offsets of 10% of the variance the
    estimate stays on the truth (ICC(1) would not separate them); McGraw and Wong's interval covers
    about 95% with small offsets and undercovers with large ones from only 5 raters (their variance
    rests on 4 degrees of freedom), which the power estimate inherits."""
    def run(share):
        sims = power.simulate("icc", {"icc": 0.8, "k": 5, "rater_share": share}, 200, 400, np.random.default_rng(2))
        return np.mean(sims["est"]), np.mean((sims["lo"] <= 0.8) & (0.8 <= sims["hi"]))

    est, cover = run(0.0)
    assert est == pytest.approx(0.8, abs=0.01) and cover == pytest.approx(0.95, abs=0.03)
    est, cover = run(0.1)
    assert est == pytest.approx(0.8, abs=0.015) and 0.75 < cover < 0.92


def test_the_paper_check_says_where_a_paper_contradicts_its_own_table():
    """NT's conclusion says ICC > 0.96; its own Table 3 has 0.924 for the standard mode."""
    from judgelab.claims import scorecard

    std = scorecard.paper_check(BY_ID["narr-icc-above-0.96-news-standard"])
    assert std["paper_check_verdict"] == scorecard.PAPER_FAILS and "0.924" in std["paper_check"]
    simple = scorecard.paper_check(BY_ID["narr-icc-above-0.96-news-simple"])          # 0.961
    assert simple["paper_check_verdict"] == scorecard.PAPER_MEETS


def test_a_claim_that_cites_only_its_bound_has_no_paper_check():
    from judgelab.claims import scorecard

    assert scorecard.paper_check(BY_ID["sage-peer-agreement"]) == scorecard.PAPER_CHECK_EMPTY       # "> 94%", no value of its own


def test_a_demo_run_on_the_embedded_model_decides_only_the_news_mathematics(tmp_path):
    """The demo profile: the whole news collection, 60 endpoint pairs, the authors' embeddings; the
    embedded judge. Only the mathematics of the news collection is decided."""
    decided = set()
    for c in CLAIMS:
        side = _sidecar("demo", "smollm2-135m" if c.llm else None, embedded=c.llm)
        for truth, wanted in (("true", REPRODUCED), ("false", NOT_REPRODUCED)):
            rec = _run(tmp_path, c, truth, {**side})
            if rec["verdict"] in (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE):
                assert rec["verdict"] == wanted, (c.id, truth, rec["reason"])
                decided.add(c.id)
            else:
                assert rec["verdict"] == (NOT_TESTABLE if c.llm else NOT_COMPARABLE), (c.id, rec["reason"])
    news_math = {c.id for c in CLAIMS if not c.llm and c.claim_collections == ("news",)}   # paths and landscape
    assert decided == news_math and len(news_math) == 10


def test_every_claims_function_exists():
    import importlib

    for c in CLAIMS:
        module, _, name = c.function.partition(":")
        assert callable(getattr(importlib.import_module(module), name, None)), (c.id, c.function)


def test_the_run_that_would_decide_scales_the_units_the_claim_counts():
    """The paper's 50 canonical + 30 pulp stories scaled to 160: 100 + 60; a news claim's 200 pairs
    (400 narratives) scaled to 800 narratives: 400 pairs; n_paper beside n_80 in the claim's units."""
    gap = BY_ID["sage-gap-canonical-pulp-L6"]
    assert scorecard.paper_units(gap) == [("sage", "canonical", 50.0), ("sage", "pulp", 30.0)]
    assert scorecard.run_sizes(gap, 160) == {"sage": {"canonical": 100, "pulp": 60}, "narrative": {}}
    news = BY_ID["narr-llm-d-news-simple"]
    assert scorecard.run_sizes(news, 800) == {"sage": {}, "narrative": {"news": 400}}
    assert scorecard.claim_power(news, news.paper_value(), KNOBS)["n_paper"] == 400
    assert scorecard.run_sizes(gap, math.inf) is None


def test_an_r_claim_reads_the_papers_story_x_mode_rows_and_shows_the_story_means_beside(tmp_path):
    c = BY_ID["sage-r-L4-L5"]
    assert c.where["analysis"] == "story_x_mode" and c.other_reading == {"analysis": "story"}
    rows = [{"analysis": a, "layer_pair": "L4 x L5", "pearson_r": r, "pearson_r_ci_low": r - 0.02,
             "pearson_r_ci_high": r + 0.02, "n": n} for a, r, n in (("story_x_mode", 0.66, 200), ("story", 0.5, 100))]
    pd.DataFrame(rows).to_csv(tmp_path / f"{c.table}.csv", index=False)
    (tmp_path / f"{c.table}.provenance.json").write_text(json.dumps(_sidecar("paper", "gpt-5-mini")))
    rec = scorecard.evaluate(c, tmp_path, CHEAP)
    assert rec["estimate"] == 0.66 and rec["verdict"] == REPRODUCED          # the paper's 0.649, within the margin 0.15
    assert (rec["other_reading"], rec["other_estimate"], rec["other_ci_low"]) == ("analysis story", 0.5, 0.48)


def test_the_register_read_is_identified_and_another_register_is_labelled_on_every_row(tmp_path):
    import hashlib
    import shutil

    ours = register.identity()
    assert ours.committed_register and ours.sha256 == hashlib.sha256(register.REGISTER.read_bytes()).hexdigest()
    other = tmp_path / "wider.yaml"
    shutil.copy(register.REGISTER, other)
    ident = register.identity(other)
    assert not ident.committed_register and ident.commit is None and "OTHER REGISTER" in ident.label
    claim = BY_ID["narr-math-d-min-news"]
    card = scorecard.scorecard([claim], tmp_path, {"power_simulations": 10, "power_n_max": 50, "power_seed": 0},
                               register_identity=ident)
    assert card["register"].str.contains("OTHER REGISTER").all() and card["reason"].str.startswith("[another").all()
    # a change after the fixed date without a dated entry of its reason is refused
    text = other.read_text().replace('  - date: "2026-12-05"\n', '  - date: "2026-12-01"\n', 1)
    other.write_text(text)
    with pytest.raises(register.RegisterError, match="predates fixed"):
        register.load(other)


def test_the_first_screen_names_the_judge_counts_what_is_decided_and_puts_it_first():
    card = pd.DataFrame({
        "claim_id": ["a", "b", "c", "d", "e"], "study": ["sage"] * 5,
        "verdict": [NOT_TESTABLE, NOT_COMPARABLE, REPRODUCED, NOT_RUN, REPRODUCED_WITHIN],
        "judge": ["llamacpp:smollm2-135m"] * 2 + ["none"] * 3, "embedded_judge": [True, True, False, False, False],
        "design_differences": ["", "profile demo, not paper (the paper's design)", "", "", ""]})
    text = scorecard.first_screen(card)
    assert text.startswith("**Warning: this run's judge is the embedded small model (llamacpp:smollm2-135m)")
    assert "decides 2 of 5 claims" in text and "1 not testable by this judge" in text
    assert "profile demo, not paper" in text
    assert list(scorecard.decided_first(card)["claim_id"]) == ["c", "e", "b", "a", "d"]


def test_n_counts_the_claims_unit_not_its_paths(tmp_path):
    c = BY_ID["narr-math-d-min-news"]
    row = {**{k: str(v).replace("*", "") for k, v in c.where.items()}, c.column: 1.5, c.ci_low_column: 1.2,
           c.ci_high_column: 1.8, "n_maxcap": 60, "n_random": 60}
    pd.DataFrame([row]).to_csv(tmp_path / f"{c.table}.csv", index=False)
    (tmp_path / f"{c.table}.provenance.json").write_text(json.dumps(_sidecar("demo")))
    rec = scorecard.evaluate(c, tmp_path, CHEAP)
    assert rec["n"] == 60          # 60 endpoint pairs, each with a max-capacity and a random path


def test_no_margin_is_wider_than_the_smallest_difference_the_paper_concludes_from():
    """A category's mean against the paper's gaps between categories (Table 11), an OOD kind's
    mean score against the difference between the kinds the paper calls significant."""
    from judgelab.narrative.judges.paper_values import PAPER_OOD
    from judgelab.sage.analysis.paper_values import TABLE11

    gaps = [abs(TABLE11[layer][a].value - TABLE11[layer][b].value) for layer in ("L4", "L5", "L6")
            for a, b in (("mean_canonical", "mean_pulp"), ("mean_pulp", "mean_llm"))]
    means = [c for c in CLAIMS if c.family == "sage-layer-mean"]
    assert means and all(c.margin < min(gaps) for c in means)
    ood = abs(PAPER_OOD["alternating"]["score_mean"] - PAPER_OOD["random_mixed"]["score_mean"])
    scores = [c for c in CLAIMS if c.family == "narr-ood-score"]
    assert scores and all(c.margin < ood for c in scores)


def test_a_claim_is_priced_on_the_notebooks_it_reads_and_nothing_is_built_when_none_needs_it():
    from judgelab.estimate import decide as pricing

    assert pricing.notebooks_of(BY_ID["sage-gap-canonical-pulp-L6"]) == ["04"]     # L6 is notebook 04
    assert pricing.notebooks_of(BY_ID["narr-llm-d-news-simple"]) == ["09"]
    enough = pd.DataFrame({"claim_id": ["sage-gap-canonical-pulp-L6"], "n_80_paper": [40.0], "n_paper": [80.0],
                           "power_unit": ["story"]})
    table, measured = pricing.price_to_decide(CLAIMS, enough)
    assert table.empty and measured is None
