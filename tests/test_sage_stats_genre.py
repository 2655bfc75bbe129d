"""Known-answer tests of judgelab.sage.analysis.genre (descriptives, t-tests, ANOVA + Bonferroni, Cohen's d,
cross-layer correlation, dimensions, LLM tiers) against hand-worked examples and scipy/pingouin."""
import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from scipy import stats

from judgelab.sage.analysis import genre


def units(data: dict, layer="L4", mode="content", tiers=None):
    """{category: [scores]} -> story scores of one layer."""
    recs = []
    for cat, vals in data.items():
        for i, v in enumerate(vals):
            recs.append({"story_id": f"{cat}{i}", "category": cat,
                         "tier": (tiers or {}).get(f"{cat}{i}", ""), "layer": layer, "mode": mode, "score": v})
    return pd.DataFrame(recs)


CANON = [4.0, 4.5, 3.5, 4.2, 3.8, 4.1]
PULP = [3.6, 3.9, 3.2, 4.0, 3.5]
LLM = [2.5, 3.0, 2.2, 2.9]


# ----------------------------------------------------------------------------- Cohen's d

def d_of(a, b):
    """Both d conventions of one canonical-vs-LLM comparison, through genre_pairwise."""
    out = genre.genre_pairwise(units({"canonical": a, "llm": b}), by="layer", pairs=(("canonical", "llm"),))
    return out[out["layer"] == "L4"].iloc[0]


def test_cohens_d_hand_worked():
    r = d_of([1, 2, 3], [3, 4, 5])
    assert r["d_pooled_sd"] == pytest.approx(-2.0) and r["d_sqrt_mean_var"] == pytest.approx(-2.0)
    # unequal sizes: the conventions differ. var(x) = 5/3, var(y) = 2
    r = d_of([1, 2, 3, 4], [2, 4])
    assert r["d_pooled_sd"] == pytest.approx(-0.5 / np.sqrt((3 * 5 / 3 + 1 * 2) / 4))
    assert r["d_sqrt_mean_var"] == pytest.approx(-0.5 / np.sqrt((5 / 3 + 2) / 2))


def test_cohens_d_pooled_matches_pingouin():
    assert d_of(CANON, LLM)["d_pooled_sd"] == pytest.approx(pg.compute_effsize(CANON, LLM, eftype="cohen"))


def test_cohens_d_edge_cases():
    r = d_of([3.0], [2.0, 2.5])
    assert np.isnan(r["d_pooled_sd"]) and r["note"] == "1 values in x < 2"  # x = group_a
    r = d_of([3, 3], [3, 3])
    assert np.isnan(r["d_pooled_sd"]) and r["note"] == "zero variance in both groups"
    assert d_of([1, 2, np.nan, 3], [3, 4, 5])["d_pooled_sd"] == pytest.approx(-2.0)  # missing values dropped


# ----------------------------------------------------------------------------- pairwise, ANOVA

def test_pairwise_matches_scipy_pingouin_and_bonferroni():
    sc = units({"canonical": CANON, "pulp": PULP, "llm": LLM})
    out = genre.genre_pairwise(sc, by="layer")
    r = out[(out["group_a"] == "canonical") & (out["group_b"] == "llm")].iloc[0]
    st = stats.ttest_ind(CANON, LLM)
    we = stats.ttest_ind(CANON, LLM, equal_var=False)
    assert r["t_student"] == pytest.approx(st.statistic) and r["p_student"] == pytest.approx(st.pvalue)
    assert r["t_welch"] == pytest.approx(we.statistic) and r["p_welch"] == pytest.approx(we.pvalue)
    assert r["df_welch"] == pytest.approx(pg.ttest(CANON, LLM, correction=True)["dof"].iloc[0])
    assert r["diff"] == pytest.approx(np.mean(CANON) - np.mean(LLM))
    assert r["relative_gap"] == pytest.approx((np.mean(CANON) - np.mean(LLM)) / np.mean(CANON))
    assert r["p_bonferroni"] == pytest.approx(min(1.0, 3 * st.pvalue))
    ref = pg.pairwise_tests(data=sc, dv="score", between="category", padjust="bonf", correction=False)
    ref = ref.set_index(["A", "B"])
    assert out[out["layer"] != "L4"]["note"].str.startswith("no rows for layer=").all()
    for _, row in out[out["layer"] == "L4"].iterrows():
        key = (row["group_a"], row["group_b"]) if (row["group_a"], row["group_b"]) in ref.index \
            else (row["group_b"], row["group_a"])
        p_corr = "p_corr" if "p_corr" in ref.columns else "p-corr"  # renamed in pingouin 0.7
        assert row["p_bonferroni"] == pytest.approx(ref.loc[key, p_corr])


def test_anova_matches_scipy():
    sc = units({"canonical": CANON, "pulp": PULP, "llm": LLM})
    r = genre.genre_anova(sc, by="layer")
    l4 = r[r["layer"] == "L4"].iloc[0]
    f = stats.f_oneway(CANON, PULP, LLM)
    assert l4["F"] == pytest.approx(f.statistic) and l4["p"] == pytest.approx(f.pvalue)
    assert (l4["df_between"], l4["df_within"]) == (2, len(CANON) + len(PULP) + len(LLM) - 3)
    allv = np.array(CANON + PULP + LLM)
    ss_between = sum(len(g) * (np.mean(g) - allv.mean()) ** 2 for g in (CANON, PULP, LLM))
    assert l4["eta2"] == pytest.approx(ss_between / ((allv - allv.mean()) ** 2).sum())
    assert r[r["layer"] == "L5"]["note"].str.contains("no rows").all()


def test_genre_edge_cases_give_messages():
    # an empty category
    sc = units({"canonical": CANON, "pulp": PULP})
    desc = genre.genre_descriptives(sc, by="layer")
    llm = desc[(desc["layer"] == "L4") & (desc["category"] == "llm")].iloc[0]
    assert llm["n"] == 0 and "no scores for category=llm" in llm["note"]
    pw = genre.genre_pairwise(sc, by="layer")
    cl = pw[(pw["group_a"] == "canonical") & (pw["group_b"] == "llm")].iloc[0]
    assert np.isnan(cl["t_student"]) and "no scores for category=llm" in cl["note"]
    # the family is the 3 planned pairs even when a category is missing: it does not shrink
    cp = pw[(pw["group_a"] == "canonical") & (pw["group_b"] == "pulp")].iloc[0]
    assert cp["p_bonferroni"] == pytest.approx(min(1.0, 3 * cp["p_student"]))
    assert cp["p_holm"] == pytest.approx(min(1.0, 3 * cp["p_student"]))  # the only defined test, ranked first
    assert cp["mc_family"] == "the 3 pairs of each layer group"
    # all scores equal
    same = units({"canonical": [3.0, 3.0], "pulp": [3.0, 3.0], "llm": [3.0, 3.0]})
    a = genre.genre_anova(same, by="layer")
    assert a[a["layer"] == "L4"].iloc[0]["note"] == "constant values"
    p = genre.genre_pairwise(same, by="layer").query("layer == 'L4'")
    assert (p["note"] == "zero variance in both groups").all() and p["d_pooled_sd"].isna().all()
    # one story per category (the smoke profile)
    one = units({"canonical": [3.5]})
    d1 = genre.genre_descriptives(one, by="layer")
    assert "one score" in d1[(d1["layer"] == "L4") & (d1["category"] == "canonical")].iloc[0]["note"]
    a1 = genre.genre_anova(one, by="layer")
    assert a1[a1["layer"] == "L4"].iloc[0]["note"] == "1 groups < 2"
    # missing values are ignored, not propagated
    nan = units({"canonical": CANON + [np.nan], "pulp": PULP, "llm": LLM})
    assert genre.genre_descriptives(nan, by="layer").query("layer == 'L4' and category == 'canonical'")["n"].iloc[0] == 6


def test_with_layer_average():
    sc = pd.concat([units({"canonical": [4.0, 3.0]}, layer=l) for l in ("L4", "L5", "L6")], ignore_index=True)
    sc.loc[sc["layer"] == "L5", "score"] += 0.6
    sc = sc[~((sc["layer"] == "L6") & (sc["story_id"] == "canonical1"))]  # story 1 lacks L6
    avg = genre.with_layer_average(sc)
    a = avg[avg["layer"] == "average"]
    assert list(a["story_id"]) == ["canonical0"]
    assert a["score"].iloc[0] == pytest.approx((4.0 + 4.6 + 4.0) / 3)


# ----------------------------------------------------------------------------- cross-layer

def test_cross_layer_matches_scipy_and_edge_cases():
    rng = np.random.default_rng(0)
    base = rng.normal(3.5, 0.5, 20)
    frames = []
    for layer, noise in (("L4", 0.2), ("L5", 0.3), ("L6", 0.4)):
        sc = units({"canonical": list(base + rng.normal(0, noise, 20))}, layer=layer)
        frames.append(sc)
    allsc = pd.concat(frames, ignore_index=True)
    out = genre.cross_layer_correlation(allsc)
    assert list(zip(out["layer_a"], out["layer_b"])) == [("L4", "L5"), ("L4", "L6"), ("L5", "L6")]
    a, b = frames[0]["score"], frames[2]["score"]
    r = out.iloc[1]
    assert r["pearson_r"] == pytest.approx(stats.pearsonr(a, b).statistic)
    assert r["p_pearson"] == pytest.approx(stats.pearsonr(a, b).pvalue)
    assert r["spearman_rho"] == pytest.approx(stats.spearmanr(a, b).statistic)
    assert r["n"] == 20
    # constant layer, too few observations, missing layer
    const = allsc.copy()
    const.loc[const["layer"] == "L5", "score"] = 3.0
    o = genre.cross_layer_correlation(const)
    assert o.iloc[0]["note"] == "constant y" and np.isnan(o.iloc[0]["pearson_r"])  # y = layer_b = L5
    few = allsc[allsc["story_id"].isin(["canonical0", "canonical1"])]
    assert (genre.cross_layer_correlation(few)["note"] == "2 pairs < 3").all()
    o = genre.cross_layer_correlation(allsc[allsc["layer"] != "L6"])
    assert "no scores for L6" in o.iloc[1]["note"]


# ----------------------------------------------------------------------------- dimensions, tiers

def test_dimension_discrimination_bonferroni_over_dimensions():
    recs = []
    for j, (dim, gap) in enumerate((("A", 1.0), ("B", 0.2))):
        for cat, shift in (("canonical", gap), ("llm", 0.0)):
            for i, v in enumerate([3.0, 3.4, 2.8, 3.2]):
                recs.append({"story_id": f"{cat}{i}", "category": cat, "layer": "L4", "mode": "content",
                             "dimension": dim, "score": v + shift + 0.05 * j * i})
    df = pd.DataFrame(recs)
    out = genre.dimension_discrimination(df)
    assert list(out["dimension"]) == ["A", "B"]  # sorted by d, largest first
    a = out.iloc[0]
    x = df.query("dimension == 'A' and category == 'canonical'")["score"]
    y = df.query("dimension == 'A' and category == 'llm'")["score"]
    assert a["p_bonferroni"] == pytest.approx(min(1, 2 * stats.ttest_ind(x, y).pvalue))
    assert a["d_pooled_sd"] == pytest.approx(pg.compute_effsize(x, y, eftype="cohen"))


def test_llm_tiers():
    tiers = {"llm0": "high", "llm1": "high", "llm2": "average", "llm3": "average", "llm4": "low", "llm5": "low"}
    vals = [3.8, 3.6, 3.2, 3.0, 2.4, 2.6]
    sc = units({"llm": vals, "canonical": [4.0, 4.1]}, tiers=tiers)
    out = genre.llm_tiers(sc, by="layer")
    l4 = out[out["layer"] == "L4"].iloc[0]
    assert l4["mean_high"] == pytest.approx(3.7) and l4["mean_low"] == pytest.approx(2.5)
    assert l4["diff_high_low"] == pytest.approx(1.2)
    rank = [3, 3, 2, 2, 1, 1]
    assert l4["spearman_rho_tier"] == pytest.approx(stats.spearmanr(rank, vals).statistic)
    f = stats.f_oneway([3.8, 3.6], [3.2, 3.0], [2.4, 2.6])
    assert l4["F"] == pytest.approx(f.statistic) and l4["p_anova"] == pytest.approx(f.pvalue)
    none = genre.llm_tiers(units({"canonical": [4.0, 4.1]}), by="layer")
    assert "no LLM-generated story" in none["note"].iloc[0]
