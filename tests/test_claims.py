"""The claims scorecard: verdict rules on hand-made inputs, the intervals against reference
implementations, the power simulation against statsmodels' analytic t-test power, the register's
entries, the run's design against the paper's, the scorecard against hand-made tables with
provenance sidecars, and runs with known answers (a smoke run decides nothing; a run at the
paper's design decides what its truth says)."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.power import TTestIndPower
from statsmodels.stats.proportion import proportion_confint

from judgelab.claims import design, intervals, power, register, scorecard
from judgelab.claims.verdicts import (INCONCLUSIVE, NOT_COMPARABLE, NOT_REPRODUCED, NOT_RUN, NOT_TESTABLE,
                                      REPRODUCED, VERDICTS, decide, expected_by_chance)


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
    assert verdict(above, None, 0.921, 0.915, 0.927).verdict == REPRODUCED      # precise, within the margin
    assert verdict(above, None, 0.86, 0.84, 0.89).verdict == NOT_REPRODUCED
    v = verdict(above, None, 0.91, 0.85, 0.97)
    assert v.verdict == INCONCLUSIVE and v.decisive_width == pytest.approx(0.02)
    below = {"type": "below", "bound": 0.7, "margin": 0.05}                       # threshold 0.75
    assert verdict(below, None, 0.65, 0.60, 0.74).verdict == REPRODUCED
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
    # a precise null: no effect of 0.1 or more on the claimed side
    v = verdict(rule, 0.13, 0.01, -0.04, 0.06, p=0.6)
    assert v.verdict == NOT_REPRODUCED and "0.1 or more" in v.reason
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
    est, lo, hi = intervals.icc(x)
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
    * ``ci_columns: fallback`` / ``none``: the table has no CI columns for the claim's column (else the
      register should say ``table``); a fallback claim names the inputs its interval is computed from.
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
        assert has_ci == (c.ci_columns == "table"), f"claim {c.id}: ci_columns {c.ci_columns}, CI columns in {c.table}: {has_ci}"
        assert bool(c.inputs) or c.ci_columns != "fallback", f"claim {c.id}: a fallback interval needs inputs"
        specs = _input_columns(c.inputs) + _input_columns((c.power or {}).get("run_sd", {}))
        for table, col, where in specs:
            other = set(pd.read_csv(tables / f"{table or c.table}.csv", nrows=0).columns)
            assert col in other and set(where) <= other, f"claim {c.id}: input column {col} not in {table or c.table}"
        if "tidy" in c.inputs:
            from judgelab import interim

            df = interim.read(c.inputs["tidy"]["name"], tables.parent / "interim")
            assert {c.inputs["tidy"]["value"], *c.inputs["tidy"]["where"]} <= set(df.columns), c.id
    assert pending == []   # narr-simple-vs-complex now reads r_gain_rel (issue 26), as its reciprocal


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
