"""Notebook 14's specification grid on a tiny synthetic landscape: one fit per (embedding,
parameter set, seed) reused across the other choices, the main specification equal to notebook
08's Tables 1 and 4 (computed by notebook 08's own functions on the same inputs), each claim's
verdict by the register's rule, and the robust / fragile label."""
from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from judgelab.claims import register, verdicts
from judgelab.narrative.analyses import robustness as rb
from judgelab.narrative.landscape.coherence import coherence_matrix
from judgelab.narrative.landscape.graph import critical_coherence
from judgelab.narrative.landscape.projection import Landscape
from judgelab.narrative.paths import extraction
from judgelab.narrative.paths import paper_tables as math_tables

N, N_PAIRS, N_BOOT = 40, 10, 200


def toy(n: int = N):
    """``n`` documents in 4 topics over ~200 days, 6-d embeddings (as notebook 08's tests)."""
    rng = np.random.default_rng(1)
    labels = np.arange(n) % 4
    emb = rng.normal(size=(n, 6)) + 2 * np.eye(6)[labels]
    dates = np.sort(rng.integers(0, 200, size=n))
    return emb, dates, labels


def memberships(labels: np.ndarray, seed: int, params: str) -> np.ndarray:
    """Soft memberships that depend on the seed and the parameter set (a stand-in for HDBSCAN)."""
    memb = np.full((len(labels), 4), 0.05 + 0.02 * (seed % 3) + (0.03 if params == "16/4" else 0.0))
    memb[np.arange(len(labels)), labels] = 1.0
    return memb / memb.sum(axis=1, keepdims=True)


def counting_fit(calls: list, labels: np.ndarray):
    """A deterministic stand-in for UMAP + HDBSCAN that records every call."""
    def fit(embeddings, *, n_neighbors, min_cluster_size, seed):
        calls.append((round(float(embeddings[0, 0]), 6), n_neighbors, min_cluster_size, seed))
        params = f"{n_neighbors}/{min_cluster_size}"
        memb = memberships(labels, seed, params)
        return Landscape(embeddings[:, :2], memb, memb.argmax(axis=1), labels, int(seed), {})
    return fit


def settings(**values) -> rb.GridSettings:
    main = {"embedding": "precomputed", "params": "32/8", "seed": 42, "jsd_base": "e", "strata": "ours",
            "baseline_dates": "strict"}
    vals = {d: (main[d],) for d in rb.DIMENSIONS}
    vals.update({k: tuple(v) for k, v in values.items()})
    return rb.GridSettings("smoke", "news", vals, main, N_PAIRS, N_BOOT)


def run(grid: rb.GridSettings, calls: list | None = None, second_embedding: bool = False):
    emb, dates, labels = toy()
    embs = {"precomputed": emb}
    if second_embedding:
        embs["minilm"] = emb[:, ::-1] + 0.5          # another geometry of the same documents
    inputs = rb.GridInputs("news", dates, [f"t{i}" for i in range(N)], embs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")               # short strata on 40 documents
        return rb.run_grid(inputs, grid, fit=counting_fit(calls if calls is not None else [], labels))


def test_one_fit_per_embedding_parameter_set_and_seed_reused_across_the_other_choices():
    calls: list = []
    grid = settings(embedding=["precomputed", "minilm"], params=["32/8", "16/4"], seed=[42, 43],
                    jsd_base=["e", "2"], strata=["ours", "uniform"], baseline_dates=["strict", "inclusive"])
    grid = replace(grid, n_boot=10)                   # intervals are not this test's subject
    res = run(grid, calls, second_embedding=True)
    assert grid.n_specifications == 64 and len(res.specifications) == 64
    assert res.specifications["spec_id"].is_unique
    # 2 embeddings x 2 parameter sets x 2 seeds: the JSD base, the strata and the date rule reuse the fit
    assert len(calls) == res.n_fits == 8 and len(set(calls)) == 8
    specs = res.specifications
    assert specs["main"].sum() == 1 and specs.iloc[0]["main"]            # the main specification first
    # the base changes the critical coherence, not the fit; a fit shared by both bases and rules
    one = specs[(specs.embedding == "precomputed") & (specs.params == "32/8") & (specs.seed == 42)]
    assert one.groupby("jsd_base")["critical"].nunique().eq(1).all() and one["critical"].nunique() == 2
    # the date rule redraws only the random paths: the same max-capacity paths under both rules
    a, b = (res.paths[s] for s in one[(one.jsd_base == "e") & (one.strata == "ours")]["spec_id"])
    mc = lambda p: p[p.method == "maxcap"][["pair_id", "length", "min_coherence"]].reset_index(drop=True)
    pd.testing.assert_frame_equal(mc(a), mc(b))
    assert not a[a.method == "random"]["path"].reset_index(drop=True).equals(b[b.method == "random"]["path"].reset_index(drop=True))
    assert set(res.paths[specs[specs.strata == "uniform"]["spec_id"].iloc[0]]["stratum"]) == {"all"}
    # defensible: neither MiniLM nor uniform endpoints (the paper's design is neither)
    assert (specs["defensible"] == ((specs.embedding == "precomputed") & (specs.strata != "uniform"))).all()


def test_main_specification_equals_notebook_08_tables_for_every_news_claim(monkeypatch):
    """Notebook 07/08's own calls on the same inputs: 07's coherence and critical value from the
    fit, 08's extract_over_seeds and Tables 1 and 4 (main rows and the inclusive sensitivity row)."""
    emb, dates, labels = toy()
    memb = memberships(labels, 42, "32/8")
    c = coherence_matrix(emb, memb).astype(np.float32)
    land = {"path_seeds": np.array([42]), "coherence_by_seed": c[None], "critical_path_seeds": np.array([critical_coherence(c)]),
            "labels_by_seed": labels[None], "dates": dates, "embeddings": emb}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = extraction.extract_over_seeds("news", land, [f"t{i}" for i in range(N)], N_PAIRS)
    t1 = math_tables.table01_path_lengths(study.paths, study.paths, None, {"news": "32/8"}, study.other_rule,
                                         study.other_rule, n_boot=N_BOOT, seed=42)
    t4 = math_tables.table04_math_effects(study.paths, study.paths, None, {"news": "32/8"}, study.other_rule,
                                         study.other_rule, n_boot=N_BOOT, seed=42)
    res = run(settings(baseline_dates=["strict", "inclusive"]))
    # 10 pairs are fewer than the claims' minimum of 30: as the scorecard, no rule is applied
    blocked = rb.claim_estimates(res)
    assert (blocked["verdict"] == verdicts.NOT_COMPARABLE).all()
    assert blocked["reason"].str.contains("below the claim's minimum of 30").all()
    # in the paper profile that is the only difference: the JSD base and the parameter set are the
    # grid's own choices (judged under each), the temporal rule the paper's; nothing "not recorded"
    paper = rb.claim_estimates(run(replace(settings(jsd_base=["e", "2"], params=["32/8", "16/4"]), profile="paper")))
    assert paper["reason"].str.fullmatch(r"design differs: \d+ units \(\w+\) below the claim's minimum of 30").all()
    monkeypatch.setattr(rb.design, "differences", lambda *a, **k: [])   # the rules themselves, below
    est = rb.claim_estimates(res)
    claims = {c.id: c for c in rb.news_math_claims()}
    assert {"narr-math-d-min-news", "narr-math-auc-avg-news", "narr-math-length-gap-news",
            "narr-math-length-maxcap-news", "narr-math-min-coherence-random-news"} <= set(claims)
    for rule in ("strict", "inclusive"):
        mine = est[est.baseline_dates == rule].set_index("claim_id")
        assert mine["main"].all() == (rule == "strict")
        for cid, c in claims.items():
            t = t1 if c.table == "narr_table01_path_lengths" else t4
            row = t[(t.baseline_dates.isin([rule, "n/a (graph path)"]))]
            for key, want in c.where.items():
                if key in ("column", "method"):
                    row = row[row[key] == want]
            if "method" in c.where and c.where["method"] == "maxcap":
                row = row[row.role == "max-capacity"]
            (r,) = row.to_dict("records")
            assert mine.loc[cid, "estimate"] == pytest.approx(r[c.column], rel=1e-12), cid
            assert mine.loc[cid, "ci_low"] == pytest.approx(r[c.ci_low_column], rel=1e-12), cid
            assert mine.loc[cid, "ci_high"] == pytest.approx(r[c.ci_high_column], rel=1e-12), cid
            if c.p_column:
                assert mine.loc[cid, "p"] == pytest.approx(r[c.p_column], rel=1e-12), cid
            # the verdict is the register's rule on those numbers
            again = verdicts.decide(c.rule, paper_value=c.paper_value(), estimate=r[c.column],
                                    ci_low=r[c.ci_low_column], ci_high=r[c.ci_high_column],
                                    p=r[c.p_column] if c.p_column else None)
            assert mine.loc[cid, "verdict"] == again.verdict, cid


def estimates_frame() -> pd.DataFrame:
    """Four defensible specifications and one that is not, for three claims, with known verdicts."""
    R, N_, I = verdicts.REPRODUCED, verdicts.NOT_REPRODUCED, verdicts.INCONCLUSIVE
    rows = []
    C = verdicts.NOT_COMPARABLE
    table = {"robust": [R, R, R, R, N_], "fragile": [R, N_, R, I, R], "wide": [I, I, I, I, R],
             "subset": [C, C, C, C, R], "never": [N_, I, N_, I, R], "partly": [R, I, R, R, N_]}
    for cid, vs in table.items():
        for k, v in enumerate(vs):
            rows.append({"claim_id": cid, "label": cid, "defensible": k < 4, "main": k == 0, "verdict": v,
                         "estimate": 1.0 + k, "paper_value": 1.5})
    return pd.DataFrame(rows)


def test_robust_only_when_every_defensible_specification_reproduces():
    t = rb.claims_robustness(estimates_frame()).set_index("claim_id")
    assert t.loc["robust", "robustness"] == rb.ROBUST and t.loc["robust", "share_reproduced"] == 1.0
    assert t.loc["fragile", "robustness"] == rb.FRAGILE and t.loc["fragile", "share_reproduced"] == 0.5
    assert t.loc["wide", "robustness"] == rb.TOO_WIDE and t.loc["wide", "n_inconclusive"] == 4
    assert t.loc["subset", "robustness"] == rb.NOT_COMPARABLE
    assert t.loc["never", "robustness"] == rb.NEVER
    # reproduced where decided but one interval too wide: not robust, and no evidence of fragility
    assert t.loc["partly", "robustness"] == rb.TOO_WIDE and t.loc["partly", "share_reproduced"] == 0.75
    # the non-defensible fifth specification counts nowhere: neither in n nor in the range
    assert (t["n_specifications"] == 4).all() and (t["n_specifications_shown"] == 5).all()
    assert (t["estimate_min"] == 1.0).all() and (t["estimate_max"] == 4.0).all()
    assert (t["main_estimate"] == 1.0).all()
    # every column the scorecard shows (claims.scorecard.with_robustness) is in the table
    from judgelab.claims.scorecard import ROBUSTNESS_COLUMNS
    assert set(ROBUSTNESS_COLUMNS) <= set(t.reset_index().columns)


def test_grid_settings_put_the_profiles_main_choices_first_and_name_a_bad_value(monkeypatch):
    g = rb.grid_settings("demo")
    assert {d: g.values[d][0] for d in rb.DIMENSIONS} == g.main
    assert g.main == {"embedding": "precomputed", "params": "32/8", "seed": 42, "jsd_base": "e",
                      "strata": "ours", "baseline_dates": "strict"}
    assert g.specifications()[0] == g.main and len(g.specifications()) == g.n_specifications
    assert rb.grid_settings("paper").n_specifications > g.n_specifications
    import dataclasses

    from judgelab import config

    cfg = config.resolve("demo")  # a configuration whose robustness grid lists an undefended base
    bad = dataclasses.replace(cfg, settings={**cfg.settings, "robustness.jsd_bases": config.Setting(("e", 10), "test")})
    with pytest.raises(ValueError, match=r"profiles.toml \[<profile>.robustness\] jsd_base: 10"):
        rb.grid_settings(bad)


def test_path_length_note_counts_edges_as_documents_minus_one_and_judges_by_the_claims_rule():
    """Known answer: a mean of 5.7 documents [5.6, 5.8] is outside 4.70 ± 0.5 (not reproduced);
    as edges, 4.7 [4.6, 4.8], inside (reproduced)."""
    from types import SimpleNamespace

    est = pd.DataFrame([{"claim_id": "narr-math-length-maxcap-news", "spec_id": s, "main": s == "a",
                         "estimate": e, "ci_low": e - 0.1, "ci_high": e + 0.1, "ci_method": "toy"}
                        for s, e in (("a", 5.7), ("b", 6.5))])
    paths = {s: pd.DataFrame({"method": ["maxcap", "maxcap", "random"], "length": [2 + k, 7, 3]})
             for k, s in enumerate("ab")}
    result = SimpleNamespace(settings=SimpleNamespace(collection="news"), paths=paths)
    note = rb.path_length_note(result, est).set_index(["claim_id", "reading"])
    docs = note.loc[("narr-math-length-maxcap-news", rb.LENGTH_READINGS["documents"][0])]
    edges = note.loc[("narr-math-length-maxcap-news", rb.LENGTH_READINGS["edges"][0])]
    assert docs["n_reproduced"] == 0 and docs["reproduced_by"] == "none"
    assert edges["n_reproduced"] == 1 and edges["reproduced_by"] == "a"
    assert edges["main_estimate"] == pytest.approx(4.7) and edges["main_ci_high"] == pytest.approx(4.8)
    assert docs["shortest_path"] == 2 and edges["shortest_path"] == 1 and docs["paper_min"] == 2
    assert docs["paper_value"] == pytest.approx(4.70)


def test_embedding_effect_pairs_specifications_that_differ_only_in_the_embedding():
    rows = []
    for emb, shift in (("precomputed", 0.0), ("minilm", -0.5)):
        for base, e in (("e", 1.6), ("2", 1.2)):
            rows.append({"claim_id": "c", "label": "c", "embedding": emb, "params": "32/8", "seed": 42,
                         "jsd_base": base, "strata": "ours", "baseline_dates": "strict",
                         "main": emb == "precomputed" and base == "e", "estimate": e + shift,
                         "ci_low": e + shift - 0.2, "ci_high": e + shift + 0.2, "paper_value": 1.591,
                         "verdict": "reproduced" if emb == "precomputed" else ("not reproduced" if base == "e" else "reproduced")})
    out = rb.embedding_effect(pd.DataFrame(rows)).iloc[0]
    assert out["n_pairs_of_specifications"] == 2
    assert out["difference_mean"] == pytest.approx(-0.5) and out["difference_min"] == pytest.approx(-0.5)
    assert out["same_verdict_share"] == 0.5
    assert out["main_precomputed"] == pytest.approx(1.6) and out["main_minilm"] == pytest.approx(1.1)
    assert out["main_minilm_verdict"] == "not reproduced"
    assert rb.embedding_effect(pd.DataFrame(rows[:2])).empty          # one embedding: nothing to pair


def test_specification_curve_sorts_estimates_marks_choices_and_the_main_specification():
    from figure_geometry import text_overlaps
    from judgelab.narrative.analyses.figures import specification_curve_figure

    rows = []
    for k, (base, rule) in enumerate([("e", "strict"), ("e", "inclusive"), ("2", "strict"), ("2", "inclusive")]):
        for cid, e in (("d", 1.0 + 0.3 * ((3 * k) % 4)), ("auc", 0.8)):
            rows.append({"claim_id": cid, "label": cid, "family": "f", "rule": "value", "spec_id": str(k),
                         "embedding": "precomputed", "params": "32/8", "seed": 42, "jsd_base": base,
                         "strata": "ours", "baseline_dates": rule, "main": k == 1, "defensible": k != 3,
                         "estimate": e, "ci_low": e - 0.1, "ci_high": e + 0.1, "paper_value": 1.5,
                         "margin": 0.5, "verdict": "reproduced" if e > 1.0 else "inconclusive"})
    est = pd.DataFrame(rows)
    fig = specification_curve_figure(est, ["d", "auc"], rb.CHOICES, rb.DIMENSIONS)
    top, bottom = fig.axes[0], fig.axes[2]
    ys = np.concatenate([line.get_ydata() for line in top.lines if len(line.get_xdata()) and line.get_linestyle() == "None"])
    xs = np.concatenate([line.get_xdata() for line in top.lines if len(line.get_xdata()) and line.get_linestyle() == "None"])
    assert list(ys[np.argsort(xs)]) == sorted(est[est.claim_id == "d"]["estimate"])   # sorted by estimate
    # the choice matrix: one row per value of the two dimensions that vary, 4 marks per dimension
    assert [t.get_text() for t in bottom.get_yticklabels()] == ["JSD ln", "JSD log2", "between: strict",
                                                                "between: inclusive"]
    assert sum(len(line.get_xdata()) for line in bottom.lines) == 8
    # the main specification (estimate 1.9, the highest) is highlighted in the last column
    (span,) = bottom.patches
    assert span.get_x() == pytest.approx(2.5)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "inconclusive (not the paper's design)" in labels and "paper's value" in labels
    assert text_overlaps(fig) == []


# ---------------------------------------------------------------- SAGE: the unit and the test

def sage_story_scores():
    from judgelab.sage.analysis import scores
    from sage_synthetic import synthetic_rows

    rows = synthetic_rows({"canonical": 8, "pulp": 8, "llm": 8}, seed=3)
    return scores.story_scores(rows)


def test_sage_genre_findings_under_each_unit_and_test_match_scipy_on_the_same_units():
    from scipy import stats as sps
    from judgelab.sage.analysis import robustness as srb

    story = sage_story_scores()
    t = srb.genre_under_choices(story)
    assert set(t["unit"]) == {"story", "story_x_mode", "content", "title", "story (random intercept)"}
    assert set(t["test"]) == {"welch", "mann-whitney", "mixed model"}
    assert set(t["mode_pooling"]) == {"pooled: a story's modes averaged", "pooled: both modes as rows",
                                      "content mode only", "title mode only", "pooled: modes as repeated measures"}
    # reference: scipy on the story means (a story's two modes averaged), on the story x mode rows
    # and on each mode alone; Welch's interval from its textbook formula (se, Welch-Satterthwaite df)
    l4 = story[story.layer == "L4"]
    means = l4.groupby(["story_id", "category"])["score"].mean().reset_index()
    for unit, obs in (("story", means), ("story_x_mode", l4), ("content", l4[l4["mode"] == "content"]),
                      ("title", l4[l4["mode"] == "title"])):
        x, y = (obs.loc[obs.category == c, "score"].to_numpy() for c in ("canonical", "llm"))
        row = t[(t.layer == "L4") & (t.contrast == "canonical - llm") & (t.unit == unit)].set_index("test")
        assert row.loc["welch", "p"] == pytest.approx(sps.ttest_ind(x, y, equal_var=False).pvalue, rel=1e-9)
        assert row.loc["mann-whitney", "p"] == pytest.approx(sps.mannwhitneyu(x, y).pvalue, rel=1e-9)
        assert row.loc["welch", "diff"] == pytest.approx(x.mean() - y.mean())
        assert row.loc["welch", "n_a"] == (16 if unit == "story_x_mode" else 8)   # the paper's rows count a story twice
        a, b = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
        df = (a + b) ** 2 / (a ** 2 / (len(x) - 1) + b ** 2 / (len(y) - 1))
        half = sps.t.ppf(0.975, df) * np.sqrt(a + b)
        assert (row.loc["welch", "ci_low"], row.loc["welch", "ci_high"]) == pytest.approx(
            (x.mean() - y.mean() - half, x.mean() - y.mean() + half), rel=1e-9)
        assert np.isnan(row.loc["mann-whitney", "ci_low"])
    # the synthetic canonical - LLM gap (1.4 points in L4) is found under every analysis
    stab = srb.finding_stability(t).set_index("finding")
    assert stab.loc["genre: canonical - llm, L4", "stability"] == "same under every analysis"
    assert stab.loc["genre: canonical - llm, L4", "main_conclusion"] == "a > b"
    assert stab.loc["genre: canonical - llm, L4", "main_analysis"] == "story, welch"


def test_sage_mode_findings_and_a_finding_that_depends_on_the_analysis():
    from judgelab.sage.analysis import robustness as srb

    m = srb.mode_under_choices(sage_story_scores())
    assert set(m["layer"]) == {"L4", "L5", "L6", "overall"}
    overall = m[m.layer == "overall"]
    assert list(zip(overall["unit"], overall["test"])) == [("story", "paired t"), ("story", "wilcoxon"),
                                                           ("story x layer (pooled)", "paired t"),
                                                           ("story x layer (pooled)", "wilcoxon")]
    assert srb.conclusion(0.3, 0.01) == "a > b" and srb.conclusion(-0.3, 0.01) == "a < b"
    assert srb.conclusion(0.3, 0.05) == "no difference detected" and srb.conclusion(0.3, np.nan) == "undefined"
    hand = pd.DataFrame({"finding": ["f"] * 3 + ["g"] * 2, "unit": ["story", "story", "pooled", "story", "story"],
                         "test": ["welch", "mw", "welch", "welch", "mw"],
                         "conclusion": ["no difference detected", "no difference detected", "a > b",
                                        "a > b", "undefined"]})
    s = srb.finding_stability(hand).set_index("finding")
    assert s.loc["f", "stability"] == "depends on the analysis" and s.loc["f", "n_same_conclusion"] == 2
    assert s.loc["g", "stability"] == "same under every analysis" and s.loc["g", "n_defined"] == 1


def test_sage_verdict_per_analysis_is_each_claims_rule_on_that_analysis_interval():
    """A planted finding whose verdict depends on mode pooling: canonical - LLM in L4 inside the
    claim's margin when the modes are pooled, beyond it in the title mode alone; the value rule
    written out here (reproduced: the interval inside [v - m, v + m]; not reproduced: wholly
    outside; else inconclusive)."""
    from judgelab.sage.analysis import robustness as srb

    register_claims = register.load()
    claim = next(c for c in register_claims if c.id == "sage-gap-canonical-llm-L4")
    v, m = claim.paper_value(), claim.margin
    nan = float("nan")
    planted = pd.DataFrame([
        {"unit": "story", "test": "welch", "diff": v, "ci_low": v - m / 2, "ci_high": v + m / 2},      # inside
        {"unit": "title", "test": "welch", "diff": v + 3 * m, "ci_low": v + 2 * m, "ci_high": v + 4 * m},  # beyond
        {"unit": "content", "test": "welch", "diff": v, "ci_low": v - 2 * m, "ci_high": v + 2 * m},    # too wide
        {"unit": "story", "test": "mann-whitney", "diff": v, "ci_low": nan, "ci_high": nan},
    ]).assign(layer="L4", contrast="canonical - llm", p=0.01, conclusion="a > b", finding="genre: canonical - llm, L4")
    planted["mode_pooling"] = planted["unit"].map(srb.MODE_POOLING)

    def by_hand(lo, hi):
        if not (np.isfinite(lo) and np.isfinite(hi)):
            return ""
        if v - m <= lo and hi <= v + m:
            return verdicts.REPRODUCED
        return verdicts.NOT_REPRODUCED if lo > v + m or hi < v - m else verdicts.INCONCLUSIVE

    # the paper's design as notebooks 05-06 record it (SAGE Table 5's 50 / 30 / 20 stories, effort medium)
    paper_design = {"story_count.canonical": "50", "story_count.pulp": "30", "story_count.llm": "20",
                    "reasoning_effort": "medium"}
    paper = srb.analysis_verdicts(planted, "openai", "gpt-5-mini", "paper", register_claims, choices=paper_design)
    # fewer stories than the paper's: every claim about the finding is not comparable, the count named
    fewer = srb.analysis_verdicts(planted, "openai", "gpt-5-mini", "paper", register_claims,
                                  choices={**paper_design, "story_count.llm": "6"})
    assert (fewer["verdict"] == verdicts.NOT_COMPARABLE).all() and fewer["reason"].str.contains("story_count.llm").all()
    mine = paper[paper["claim_id"] == claim.id]
    assert len(mine) == 4 and set(paper["claim_id"]) == {claim.id}      # only the claims about this finding
    assert mine["rule_verdict"].tolist() == [by_hand(lo, hi) for lo, hi in zip(planted["ci_low"], planted["ci_high"])]
    assert mine["rule_verdict"].tolist()[:3] == [verdicts.REPRODUCED, verdicts.NOT_REPRODUCED, verdicts.INCONCLUSIVE]
    assert mine["verdict"].tolist() == [verdicts.REPRODUCED, verdicts.NOT_REPRODUCED, verdicts.INCONCLUSIVE,
                                        verdicts.INCONCLUSIVE]
    assert mine["reason"].iloc[3] == srb.RANK_TEST
    assert mine["mode_pooling"].tolist()[:2] == ["pooled: a story's modes averaged", "title mode only"]
    # the embedded model's scores: not testable, the rule's verdict shown beside for looking at
    small = srb.analysis_verdicts(planted, "llamacpp", "smollm2-135m-instruct", "demo", register_claims)
    assert (small["verdict"] == verdicts.NOT_TESTABLE).all() and small["embedded_judge"].all()
    assert small["rule_verdict"].tolist() == mine["rule_verdict"].tolist()
    assert small["reason"].str.contains("embedded small model").all()
    # the paper's judge in the demo profile: not comparable, the profile named
    demo = srb.analysis_verdicts(planted, "openai", "gpt-5-mini", "demo", register_claims)
    assert (demo["verdict"] == verdicts.NOT_COMPARABLE).all() and demo["reason"].str.contains("profile demo").all()
    # on real findings every genre gap and mode claim of the register is matched to its finding
    story = sage_story_scores()
    table = pd.concat([srb.genre_under_choices(story, units=("story",), tests=("welch",), mixed=False),
                       srb.mode_under_choices(story)], ignore_index=True)
    ids = set(srb.analysis_verdicts(table, "openai", "gpt-5-mini", "paper", register_claims)["claim_id"])
    assert {"sage-gap-canonical-llm-average", "sage-canonical-gt-pulp-L5", "sage-mode-invariance-L6",
            "sage-mode-invariance-overall"} <= ids


def test_label_error_rates_match_the_normal_tail_at_known_truth():
    """One specification, its 95% interval of known se, a value rule of margin m: it is *robust*
    when the whole interval sits inside the band, i.e. |z + shift| <= m/se - 1.96 for a truth
    ``shift`` se from the paper's value; the normal distribution gives each rate (an independent
    formula). Three independent specifications at the edge: robust with P = 0.025^3 (about 0);
    fully shared estimates behave as one specification."""
    from scipy.stats import norm

    claim = {c.id: c for c in rb.news_math_claims()}["narr-math-auc-min-news"]   # margin 0.05
    se, m = 0.01, claim.margin
    z95 = norm.ppf(0.975)                                  # the 95% interval's half-width in se
    inner = m / se - z95                                                             # 3.04
    one = rb.label_rates(claim, se, k=1, rhos=(0.0,), n_sim=40000, seed=1).set_index(["truth", "label"])["share"]
    assert one[("at the paper's value", rb.ROBUST)] == pytest.approx(2 * norm.cdf(inner) - 1, abs=0.002)
    assert one[("at the margin's edge", rb.ROBUST)] == pytest.approx(norm.cdf(-z95) - norm.cdf(-m / se - inner), abs=0.003)
    # twice the margin away: not reproduced when the interval clears the band's edge
    assert one[("twice the margin away", rb.NEVER)] == pytest.approx(norm.sf(-(m / se) + z95), abs=0.002)
    three = rb.label_rates(claim, se, k=3, rhos=(0.0, 1.0), n_sim=20000, seed=2).set_index(["rho", "truth", "label"])["share"]
    assert three[(0.0, "at the margin's edge", rb.ROBUST)] < 0.001
    assert three[(1.0, "at the margin's edge", rb.ROBUST)] == pytest.approx(0.025, abs=0.004)
    breaks, names = rb.verdict_regions(claim, se)
    assert names == ["not reproduced", "inconclusive", "reproduced", "inconclusive", "not reproduced"]
    pv = claim.paper_value()
    assert breaks == pytest.approx([pv - m - z95 * se, pv - inner * se, pv + inner * se, pv + m + z95 * se], abs=1e-9)
