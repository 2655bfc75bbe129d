"""Known-answer tests of notebook 12's studies: a simulated judge with planted behaviour
(``tests/simulated_judge.py``) answers through the gateway on the fake server, and each study must
recover what was planted within its interval, and report nothing when nothing was planted. The
error rates are checked on the analysis functions themselves over many simulated data sets at the
profiles' designs (vectorised where the function allows, seconds in all)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from judgelab.behaviour import length, planted, recognition, self_preference
from simulated_judge import Truth, judge_gateway, story_in  # noqa: F401 (a fixture)

WORDS = ("river mill stone lantern orchard widow cart harbour winter letter sister candle ledger bridge "
         "storm garden clock shepherd violin kettle meadow soldier tailor chapel").split()


def _story(i: int, paragraphs: int = 6, words: int = 40) -> str:
    rng = np.random.default_rng(i)
    return "\n\n".join(" ".join(rng.choice(WORDS, words)) + f" tale{i}para{p}." for p in range(paragraphs))


def _items(n: int, layer: str = "L4"):
    from judgelab.sage.protocol.evaluation import EvalItem
    from judgelab.sage.protocol.modes import prepare_input

    return [EvalItem(f"s{i}", "canonical", "", layer, "content",
                     prepare_input("content", text=_story(i), title=f"Tale {i}", author="Ann Example",
                                   max_text_tokens=10_000)) for i in range(n)]


def _planted_run(gw, truth_units: int, seeds: int, ids=("raise-plain-start", "lower-plain-start")):
    from judgelab.sage.protocol.evaluation import EvalConfig

    meta, reqs = planted.sage_requests(_items(truth_units), EvalConfig(), planted.family(list(ids)),
                                       harden_too=True, seeds=seeds)
    return planted.run(gw, meta, reqs, "test"), len(reqs)


# ---------------------------------------------------------------- planted instructions, end to end

def test_planted_study_recovers_the_planted_judge_through_the_gateway(judge_gateway):
    """Obedience 0.8, insertion 0.3, hardened obedience 0.2, seed noise 0.2 (SAGE points): every
    estimate's interval holds its planted value; the noise floor is the seed noise of one contrast
    (sqrt(2 / R) 0.2); the hardening effect |0.8| - |0.2| = 0.6 is recovered."""
    truth = Truth(obedience=0.8, insertion=0.3, hardened_obedience=0.2, seed_sd=0.2, item_sd=0.4)
    gw, judge = judge_gateway(truth)
    results, n = _planted_run(gw, 12, seeds=2)
    assert judge.n == n and (results["status"] == "ok").all()
    eff, tabs = planted.tables(results, {})
    shifts = tabs["behaviour_planted_shifts"].set_index(["hardened", "estimand"])
    want = {(False, "obedience (raise)"): 0.8, (False, "obedience (lower)"): 0.8, (False, "insertion"): 0.3,
            (False, "contrast (raise - lower)"): 1.6, (True, "obedience (raise)"): 0.2}
    for key, value in want.items():
        row = shifts.loc[key]
        assert row["n_units"] == 12 and row["n_seeds"] == 2
        assert row["ci_low"] <= value <= row["ci_high"], (key, row["ci_low"], row["ci_high"])
        if not key[0]:
            assert row["p_holm"] < 0.05
    floor = float(shifts["noise_floor"].iloc[0])
    assert 0.5 * 0.2 < floor < 2.0 * 0.2   # sqrt(2 mean(sd^2) / 2) with sd 0.2 (rounded to 0.1 steps)
    hard = tabs["behaviour_planted_hardening"].set_index("estimand").loc["obedience (raise)"]
    assert hard["hardening_effect_ci_low"] <= 0.6 <= hard["hardening_effect_ci_high"]
    assert hard["direction_plain"] == "follows"


def test_hardening_is_recovered_per_attack_and_a_leaked_token_undoes_it(judge_gateway):
    """A judge that obeys 0.8 plain and 0.2 hardened, unless the escape carries the fence's own
    (leaked) token: the hardening effect (change in |obedience|) is 0.6 on the plain attack and on
    the guessed-token escape, 0 on the leaked one."""
    gw, _ = judge_gateway(Truth(obedience=0.8, hardened_obedience=0.2, seed_sd=0.2, item_sd=0.4))
    results, _ = _planted_run(gw, 10, seeds=2, ids=("raise-plain-start", "raise-fence-start", "raise-leaked-start"))
    hard = planted.tables(results, {})[1]["behaviour_planted_hardening"].set_index("disguise")
    for disguise, effect in (("plain", 0.6), ("fence", 0.6), ("leaked", 0.0)):
        row = hard.loc[disguise]
        assert row["hardening_effect_ci_low"] <= effect <= row["hardening_effect_ci_high"], (disguise, row)
    assert hard.loc["leaked", "held_out"] and not hard.loc["plain", "held_out"]
    assert hard.loc["fence", "hardening_effect_ci_low"] > 0


def test_planted_study_reports_no_obedience_from_a_judge_without_it(judge_gateway):
    """The same design against a judge that reacts to any insertion (0.5) but obeys nothing: no
    obedience row is significant and each interval holds 0, while the insertion is found."""
    gw, _ = judge_gateway(Truth(obedience=0.0, insertion=0.5, seed_sd=0.3, item_sd=0.4))
    results, _ = _planted_run(gw, 12, seeds=2)
    shifts = planted.tables(results, {})[1]["behaviour_planted_shifts"].set_index(["hardened", "estimand"])
    for hardened in (False, True):
        for est in ("obedience (raise)", "obedience (lower)", "contrast (raise - lower)"):
            row = shifts.loc[(hardened, est)]
            assert row["ci_low"] <= 0 <= row["ci_high"] and row["p"] > 0.05, (hardened, est)
    ins = shifts.loc[(False, "insertion")]
    assert ins["ci_low"] <= 0.5 <= ins["ci_high"] and ins["ci_low"] > 0


def test_every_arm_is_sent_at_the_same_seeds():
    from judgelab.sage.protocol.evaluation import EvalConfig

    meta, reqs = planted.sage_requests(_items(1), EvalConfig(), planted.family(["raise-plain-start"]),
                                       harden_too=False, seeds=3)
    seeds = pd.DataFrame(meta).assign(seed=[r.sampling.seed for r in reqs])
    per_arm = seeds.groupby("perturbation")["seed"].apply(lambda s: sorted(s))
    assert len(per_arm) == 3 and all(v == [7, 8, 9] for v in per_arm)


# ---------------------------------------------------------------- the estimator's error rates

def _t_coverage(n: int, draw, sims: int, rng) -> float:
    """Coverage of Student's t 95% interval of a mean at n units (an independent formula)."""
    x, mu = draw(rng, (sims, n))
    m, s = x.mean(1), x.std(1, ddof=1)
    half = stats.t.ppf(0.975, n - 1) * s / np.sqrt(n)
    return float(np.mean(np.abs(m - mu) <= half))


def _normal(rng, shape):
    return rng.normal(0.0, 1.0, shape), 0.0


def _rounded_skewed(rng, shape):
    # differences of a judge's rounded scores: mostly 0, an instruction sometimes followed by 1 or 2
    values = np.array([-1.0, 0.0, 0.0, 0.0, 1.0, 2.0])
    return rng.choice(values, size=shape), values.mean()


def test_no_interval_below_the_units_where_it_covers():
    """Student t over unit means covers within 2 points of 95% from MIN_UNITS on (normal and
    rounded skewed differences), not just below it; the percentile bootstrap at MIN_UNITS does not
    (why the behaviour tables use t). Below MIN_UNITS unit_mean gives no interval and says so."""
    rng = np.random.default_rng(45)
    for draw in (_normal, _rounded_skewed):
        for n in (planted.MIN_UNITS, 20, 30):
            assert _t_coverage(n, draw, 6000, rng) >= 0.93, (draw.__name__, n)
    assert _t_coverage(6, _rounded_skewed, 6000, rng) < 0.93      # below the threshold it fails
    x = rng.normal(0.0, 1.0, (3000, planted.MIN_UNITS))
    w = rng.multinomial(planted.MIN_UNITS, np.full(planted.MIN_UNITS, 1 / planted.MIN_UNITS), size=1000)
    boot = x @ w.T / planted.MIN_UNITS
    lo, hi = np.quantile(boot, [0.025, 0.975], axis=1)
    assert np.mean((lo <= 0) & (0 <= hi)) < 0.93                   # the percentile bootstrap under-covers
    for n in (1, 2, planted.MIN_UNITS - 1):
        out = planted.unit_mean(rng.normal(size=n), np.arange(n))
        assert np.isnan(out["ci_low"]) and out["note"].startswith(f"too few units ({n})")
    flat = planted.unit_mean([0.0, 1.0, 1.0, 0.0] * 5, np.repeat(np.arange(10), 2))
    assert np.isnan(flat["ci_low"]) and "no variation" in flat["note"]   # equal unit means: a note, no 0-width


def test_two_sample_intervals_only_from_the_group_size_where_they_cover():
    """The two-sample percentile bootstrap of a difference of means (recognition's contrasts) covers
    within 2 points of 95% from MIN_PER_GROUP stories per group (normal data, 4,000 runs: >= 93%
    less 2 Monte-Carlo SE), not at 5; below it diff_with_note gives no interval and says so."""
    rng = np.random.default_rng(12)
    floor = 0.93 - 2 * np.sqrt(0.05 * 0.95 / 4000)

    def coverage(n, sims=4000, boots=800):
        a, b = rng.normal(0, 1, (sims, n)), rng.normal(0, 1, (sims, n))
        wa = rng.multinomial(n, np.full(n, 1 / n), size=boots)
        wb = rng.multinomial(n, np.full(n, 1 / n), size=boots)
        d = a @ wa.T / n - b @ wb.T / n
        lo, hi = np.quantile(d, [0.025, 0.975], axis=1)
        return float(np.mean((lo <= 0) & (0 <= hi)))

    assert coverage(recognition.MIN_PER_GROUP) >= floor and coverage(30) >= floor
    assert coverage(5) < 0.90
    few = recognition.diff_with_note(rng.normal(size=19), rng.normal(size=20), 300, 0, ("human", "control"))
    assert np.isnan(few["ci_low"]) and few["note"].startswith("too few units (19 human)")


@pytest.mark.parametrize("planted_value", [0.0, 0.5])
def test_obedience_rates_at_the_paper_design(planted_value):
    """At the paper's SAGE design (30 stories, 3 seeds; heterogeneous obedience, seed noise): the
    interval of effect_table's function holds the planted obedience in >= 93% (less 2 Monte-Carlo
    SE) of 400 simulated runs and, with nothing planted, the t-test rejects in <= 5% (+ 2 MC SE)."""
    rng = np.random.default_rng(45)
    sims, n, r = 400, 30, 3
    per_item = planted_value + rng.normal(0, 0.3, (sims, n, 1)) + rng.normal(0, 0.4, (sims, n, r)) \
        - rng.normal(0, 0.4, (sims, n, r))
    values = np.round(per_item * 10) / 10          # SAGE's 0.1 steps
    units = np.repeat(np.arange(n), r)
    cover, reject = 0, 0
    for s in range(sims):
        v = values[s].ravel()
        m = planted.unit_mean(v, units)
        cover += m["ci_low"] <= planted_value <= m["ci_high"]
        reject += planted._p_units(v, units)[0] < 0.05
    se = np.sqrt(0.05 * 0.95 / sims)
    assert cover / sims >= 0.93 - 2 * se
    if planted_value == 0.0:
        assert reject / sims <= 0.05 + 2 * se
    else:
        assert reject / sims >= 0.8


# ---------------------------------------------------------------- recognition

def _probe_frame(rng, n_human, n_control, p_true, p_false, control="llm", mode="content"):
    """A probe table as :func:`recognition.tidy` writes it, from the simulated judge's rule."""
    rows = []
    for cat, n in (("canonical", n_human), (control, n_control)):
        u = rng.random(n)
        known = (u < p_true) if cat == "canonical" else np.zeros(n, bool)
        false = ~known & (rng.random(n) < p_false)
        for k, f in zip(known, false):
            rows.append({"category": cat, "mode": mode, "claimed": bool(k or f), "recognised": bool(k),
                         "status": "ok"})
    return pd.DataFrame(rows)


def test_recognition_compares_one_criterion_on_both_sides():
    """A judge that claims every work and knows none: on the claim criterion humans and controls
    both claim 1.0 (excess 0), on the title-named one both 0 (excess 0); never 'human 0 against
    false claims 1'."""
    rng = np.random.default_rng(1)
    probe = _probe_frame(rng, 8, 4, 0.0, 1.0)
    out = recognition.claim_contrast(probe, n_boot=300, seed=1).set_index(["mode", "criterion"])
    assert out.loc[("content", "claim"), "human_rate"] == 1.0 == out.loc[("content", "claim"), "control_rate"]
    assert out.loc[("content", "claim"), "excess_over_control"] == 0.0
    assert out.loc[("content", "title named"), "excess_over_control"] == 0.0


@pytest.mark.parametrize("p_true", [0.0, 0.4])
def test_recognition_rates_at_the_paper_design(p_true):
    """80 human stories against 20 LLM ones, false claims at 0.2 in both: with ``p_true`` known, the
    title-named excess's interval holds it in >= 90% of 200 runs (percentile bootstrap of two
    proportions); the claim excess (true claims beyond the false ones: p_true (1 - 0.2)) likewise,
    and with nothing known it excludes 0 in <= 5% (+ 2 MC SE)."""
    rng = np.random.default_rng(3)
    sims, named_hits, claim_hits, fp = 200, 0, 0, 0
    for s in range(sims):
        out = recognition.claim_contrast(_probe_frame(rng, 80, 20, p_true, 0.2), n_boot=250, seed=s)
        out = out.set_index(["mode", "criterion"])
        named, claim = out.loc[("content", "title named")], out.loc[("content", "claim")]
        named_hits += named["ci_low"] <= p_true <= named["ci_high"]
        claim_hits += claim["ci_low"] <= p_true * 0.8 <= claim["ci_high"]
        fp += not (claim["ci_low"] <= 0 <= claim["ci_high"])
    if p_true == 0.0:
        assert fp / sims <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / sims)
    else:
        assert named_hits / sims >= 0.90 and claim_hits / sims >= 0.90


def _pooled_coverage(rng, design, skewed: bool, sims: int = 3000, boots: int = 600, delta: float = 0.3) -> float:
    """Coverage of the pooled within-category contrast's interval, written apart from the library:
    per category (n stories, k recognised; the recognition fixed) scores = category mean + ``delta``
    if recognised + an error (normal, or gamma with skewness 1 rounded to SAGE's 0.1 steps); the
    statistic is the stories-weighted mean over categories having both groups of the difference of
    group means; stories resampled within category (multinomial weights, B = ``boots``); a resample
    where a category lacks a group leaves it out, as the statistic does."""
    num, den = np.zeros((sims, boots)), np.zeros(boots)
    for n, k in design:
        r = np.r_[np.ones(k), np.zeros(n - k)]
        mu = rng.normal(0, 0.5)
        err = np.round((rng.gamma(4, 0.5, (sims, n)) - 2) * 10) / 10 if skewed else rng.normal(0, 1, (sims, n))
        y = mu + delta * r + err
        w = rng.multinomial(n, np.full(n, 1 / n), size=boots).astype(float)
        c_yes, c_no = w @ r, w @ (1 - r)
        both = (c_yes > 0) & (c_no > 0)
        m_yes = (y * r) @ w.T / np.maximum(c_yes, 1)
        m_no = (y * (1 - r)) @ w.T / np.maximum(c_no, 1)
        num += np.where(both, (m_yes - m_no) * n, 0.0)
        den += np.where(both, n, 0.0)
    valid = den > 0                                  # the same resamples for every run
    lo, hi = np.quantile(num[:, valid] / den[valid], [0.025, 0.975], axis=1)
    return float(np.mean((lo <= delta) & (delta <= hi)))


def _paper_split(k: int) -> list[tuple[int, int]]:
    """The paper's human stories (50 canonical, 30 pulp) with ``k`` recognised, three in four canonical."""
    canon = round(0.75 * k)
    return [(50, canon), (30, k - canon)]


def test_pooled_recognition_contrast_has_an_interval_only_where_it_covers():
    """At the paper's design the stratified bootstrap of the pooled within-category contrast covers
    within 2 points of 95% (less 2 Monte-Carlo SE, 3,000 runs) from MIN_POOLED recognised stories on,
    for normal and for skewed rounded scores, and not at 5 (the gate has teeth); scores_by_recognition
    gives the interval at MIN_POOLED stories a group and none, with its note, one story below."""
    rng = np.random.default_rng(2025)
    floor = 0.93 - 2 * np.sqrt(0.05 * 0.95 / 3000)
    n = recognition.MIN_POOLED
    for skewed in (False, True):
        assert _pooled_coverage(rng, _paper_split(n), skewed) >= floor, (skewed, n)
        assert _pooled_coverage(rng, _paper_split(5), skewed) < 0.90, skewed
    for k, shown in ((n, True), (n - 1, False)):
        split = _paper_split(k)
        rows = [{"story_id": f"{cat}{i}", "category": cat, "recognised": i < rec,
                 "score": 3.0 + 0.5 * (i < rec) + rng.normal(0, 0.5)}
                for (size, rec), cat in zip(split, ("canonical", "pulp")) for i in range(size)]
        frame = pd.DataFrame(rows)
        probe = frame.assign(mode="content", status="ok")[["story_id", "mode", "status", "recognised"]]
        summ = frame.assign(layer="L4", mode="content").rename(columns={"score": "overall_score"})
        out = recognition.scores_by_recognition(probe, summ, n_boot=150, seed=0)
        pooled = out[(out["category"] == "within category (pooled)") & (out["statistic"] == "content")].iloc[0]
        assert pooled["n_recognised"] == k and np.isfinite(pooled["diff"])
        if shown:
            assert pooled["ci_low"] < pooled["diff"] < pooled["ci_high"] and not pooled["note"]
        else:
            assert np.isnan(pooled["ci_low"]) and pooled["note"].startswith(f"too few units ({k} recognised")


def test_recognition_probe_through_the_gateway_counts_true_and_false_claims(judge_gateway):
    """The judge knows two works (their marker phrase in the text) and claims 30% of the others:
    the probe's rows name the known titles; no LLM story is 'title named'."""
    from judgelab.sage.protocol.evaluation import EvalItem
    from judgelab.sage.protocol.modes import prepare_input

    known = {"tale0para0": "Tale 0", "tale1para0": "Tale 1"}
    gw, _ = judge_gateway(Truth(known=known, true_claim=1.0, false_claim=0.3))
    items = [EvalItem(f"s{i}", "canonical" if i < 4 else "llm", "", "L4", "content",
                      prepare_input("content", text=_story(i), title=f"Tale {i}", author="Ann Example",
                                    max_text_tokens=10_000)) for i in range(10)]
    stories = pd.DataFrame({"story_id": [f"s{i}" for i in range(10)], "title": [f"Tale {i}" for i in range(10)],
                            "author": "Ann Example"})
    knobs = {"guess_chars": 40, "temperature": 0.0, "seed": 7, "recognition_max_tokens": 96, "reasoning_effort": None}
    probe = recognition.run_probe(gw, items, knobs, stories, "test")
    rec = probe.set_index("story_id")
    assert rec.loc["s0", "recognised"] and rec.loc["s1", "recognised"]
    assert not probe.loc[probe["category"] == "llm", "recognised"].any()
    assert probe["claimed"].sum() >= 2


# ---------------------------------------------------------------- length, end to end

@pytest.mark.parametrize("slope", [0.0, 0.6])
def test_length_intervention_recovers_the_planted_slope(judge_gateway, slope):
    """A judge whose score rises by ``slope`` per unit log story token: the within-story slope's
    interval holds it (and holds 0 for a judge without it); the tokens are the story's as sent."""
    from judgelab.sage.protocol.evaluation import EvalConfig

    gw, _ = judge_gateway(Truth(length_slope=slope, seed_sd=0.15, item_sd=0.3, centre=0.5),
                          story_of=story_in)
    calls = length.run_intervention(gw, _items(10), EvalConfig(), [0.5, 1.5], "test", seeds=2)
    assert (calls["status"] == "ok").all() and calls["seed_index"].nunique() == 2
    table = length.intervention_table(calls, 0.1)
    row = table[table["estimand"].str.startswith("within-story slope")].iloc[0]
    assert row["ci_low"] <= slope <= row["ci_high"], (row["ci_low"], row["ci_high"])
    if slope:
        assert row["ci_low"] > 0
    half = table[table["fraction"] == 0.5].iloc[0]
    assert half["n_units"] == 10 and half["n_seeds"] == 2


@pytest.mark.parametrize("slope", [0.0, 0.5])
def test_observational_length_model_recovers_the_slope_on_the_story_as_sent(judge_gateway, slope):
    """24 stories of 80-1,200 words, the 4 longest cut head and tail by SAGE's preparation (a
    1,100-token budget), scored once by a judge whose score rises by ``slope`` per unit log story
    token: the observational model on the story's tokens as sent (not the whole message's) holds
    the planted slope in its interval, leaves the cut texts out and counts them; where every text
    is cut there is no model, and the note says the tokens measure the cut."""
    from judgelab.sage.protocol.evaluation import EvalConfig, EvalItem
    from judgelab.sage.protocol.modes import prepare_input

    gw, _ = judge_gateway(Truth(length_slope=slope, seed_sd=0.1, item_sd=0.2, centre=3.0 - 6 * slope),
                          story_of=story_in)
    paragraphs = np.r_[np.linspace(2, 22, 20).round().astype(int), [40, 45, 50, 55]]
    items = [EvalItem(f"s{i}", ("canonical", "pulp")[i % 2], "", "L4", "content",
                      prepare_input("content", text=_story(i, int(p)), title=f"Tale {i}", author="Ann Example",
                                    max_text_tokens=1100, count_tokens=gw.count_tokens))
             for i, p in enumerate(paragraphs)]
    assert sum(it.prepared.truncated for it in items) == 4
    calls = length.run_intervention(gw, items, EvalConfig(), [], "test")
    assert (calls["status"] == "ok").all() and len(calls) == 24
    summaries = calls.assign(mode="content").rename(columns={"score": "overall_score"})
    units = length.story_units(summaries, length.sent_tokens(items))
    row = length.sage_length_models(units).iloc[0]
    assert (row["n"], row["n_cut"]) == (20, 4) and row["note"].startswith("4 of 24 stories cut head and tail")
    assert row["slope_log_tokens_ci_low"] <= slope <= row["slope_log_tokens_ci_high"], row
    if slope:
        assert row["slope_log_tokens_ci_low"] > 0.5 * slope
    every = length.sage_length_models(units.assign(cut=True)).iloc[0]
    assert np.isnan(every["slope_log_tokens"]) and every["note"].startswith("every text (24) was cut")


# ---------------------------------------------------------------- self-preference under realistic errors

def _set_contrasts(rng, sims: int, n_sets: int, sp: float) -> np.ndarray:
    """(sims, n_sets) matched-set contrasts D_m of a panel: per set one story by the judged family and
    one by a family off the panel, sharing the set's prompt (clustered); two judges of the family
    (leniency +-0.1) add ``sp`` to their own family's story, two others (+-0.2) do not; every score
    is rounded to SAGE's 0.1 steps and clipped to 1-5 near the ceiling (skewed errors)."""
    shape = (sims, n_sets)
    prompt = rng.normal(0, 0.4, shape)
    quality = {w: 4.2 + prompt + rng.normal(0, 0.3, shape) for w in ("own", "off")}

    def score(q, lenient, bonus):
        return np.clip(np.round(q + lenient + bonus + rng.normal(0, 0.6, shape), 1), 1, 5)

    u = {w: np.mean([score(quality[w], b, sp if w == "own" else 0.0) for b in (0.1, -0.1)], axis=0)
         - np.mean([score(quality[w], b, 0.0) for b in (0.2, -0.2)], axis=0) for w in quality}
    return u["own"] - u["off"]


def test_self_preference_interval_coverage_under_clustered_skewed_errors():
    """At the panel's sizes (3, 5, 8 matched sets) with clustered, rounded, ceiling-clipped scores,
    did_interval holds the true difference-in-differences (its expectation under the clipping, by
    brute force over 10^6 sets) in >= 93% of 3,000 runs; the percentile bootstrap over sets fails
    the same check (the test has teeth)."""
    rng = np.random.default_rng(8)
    sp = 0.5
    truth = float(_set_contrasts(rng, 1_000_000, 1, sp).mean())   # below 0.5: the ceiling clips it
    assert 0.2 < truth < sp
    sims = 3000
    for n_sets in (3, 5, 8):
        d = _set_contrasts(rng, sims, n_sets, sp)
        cover = [lo <= truth <= hi for lo, hi in (self_preference.did_interval(row)[1:3] for row in d)]
        assert np.mean(cover) >= 0.93, (n_sets, np.mean(cover))
        if n_sets == 5:
            w = rng.multinomial(n_sets, np.full(n_sets, 1 / n_sets), size=1000)
            lo, hi = np.quantile(d @ w.T / n_sets, [0.025, 0.975], axis=1)
            assert np.mean((lo <= truth) & (truth <= hi)) < 0.93
