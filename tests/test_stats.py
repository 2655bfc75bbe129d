"""The shared statistics floor (judgelab.stats): published known answers, hand-worked values,
scipy / pingouin / krippendorff as references, and every degenerate case giving NaN with its note."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from scipy import stats as sps

from judgelab.stats import agreement, correlation, effects, intervals, reliability, rules, tests

NA = np.nan

# Shrout & Fleiss (1979), "Intraclass correlations: uses in assessing rater reliability",
# Psychol. Bull. 86:420, Table 2 (6 targets x 4 judges) and Table 4 (the six ICCs).
SHROUT_FLEISS = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], float)
SHROUT_FLEISS_TABLE4 = {"ICC1": 0.17, "ICC2": 0.29, "ICC3": 0.71, "ICC1k": 0.44, "ICC2k": 0.62, "ICC3k": 0.91}

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", example C: 4 observers x 12
# units with missing values.
KRIPP_2011 = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NA, NA, NA],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NA, 3],
    [NA, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NA],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NA],
]).T  # units x observers
KRIPP_2011_ALPHA = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}


def long(matrix, keep_nan: bool = False) -> pd.DataFrame:
    """Items x raters matrix -> long ratings (item, rater, score); NaN cells left out unless kept."""
    m = np.asarray(matrix, float)
    rows = [{"item": i, "rater": f"r{j}", "score": m[i, j]} for i in range(m.shape[0]) for j in range(m.shape[1])
            if keep_nan or not np.isnan(m[i, j])]
    return pd.DataFrame(rows, columns=["item", "rater", "score"])


def one(df: pd.DataFrame) -> pd.Series:
    assert len(df) == 1
    return df.iloc[0]


# ----------------------------------------------------------------------------- rules

def test_rule_notes_and_policies():
    assert rules.too_few(2, 3, "items") == "2 items < 3"
    assert rules.nan_dropped(0) == "" and rules.nan_dropped(4) == "NaN dropped: 4"
    assert rules.join("a", "", "b", "a", None) == "a; b"
    assert rules.missing_note(0, "raise", "x") == ("", True)
    assert rules.missing_note(2, "omit", "x") == ("NaN dropped: 2", True)
    assert rules.missing_note(2, "propagate", "x") == ("NaN in input: 2", False)
    with pytest.raises(ValueError, match="x: 2 missing"):
        rules.missing_note(2, "raise", "x")
    with pytest.raises(ValueError, match="nan_policy must be one of"):
        rules.check_policy("drop")


# ----------------------------------------------------------------------------- effects

def test_cohens_d_hand_worked_both_conventions():
    x, y = [3, 4, 5, 6, 7.0], [1, 2, 3, 4, 5.0]
    d = effects.cohens_d(x, y, sd=("pooled", "average")).set_index("sd_convention")["d"]
    assert d["pooled"] == pytest.approx(2 / np.sqrt(2.5)) and d["average"] == pytest.approx(2 / np.sqrt(2.5))
    # unequal sizes: mean 2.5 vs 3, var(x) = 5/3, var(y) = 2
    a, b = [1, 2, 3, 4.0], [2, 4.0]
    d = effects.cohens_d(a, b, sd=("pooled", "average")).set_index("sd_convention")
    assert d.loc["pooled", "d"] == pytest.approx(-0.5 / np.sqrt((3 * 5 / 3 + 1 * 2) / 4))
    assert d.loc["average", "d"] == pytest.approx(-0.5 / np.sqrt((5 / 3 + 2) / 2))
    assert (d["n_x"] == 4).all() and (d["n_y"] == 2).all() and (d["note"] == "").all()


def test_cohens_d_pooled_matches_pingouin():
    rng = np.random.default_rng(1)
    x, y = rng.normal(1, 2, 13), rng.normal(0, 1, 7)
    assert one(effects.cohens_d(x, y))["d"] == pytest.approx(pg.compute_effsize(x, y, eftype="cohen"))


def test_cohens_d_nan_policy_and_degenerate():
    # a NaN in a group is dropped and counted, never turns d into NaN
    r = one(effects.cohens_d([1, 2, NA, 3], [3, 4, 5]))
    assert r["d"] == pytest.approx(-2.0) and r["note"] == "NaN dropped: 1" and r["n_x"] == 3
    r = one(effects.cohens_d([1, 2, NA, 3], [3, 4, 5], nan_policy="propagate"))
    assert np.isnan(r["d"]) and r["note"] == "NaN in input: 1"
    with pytest.raises(ValueError, match="1 missing"):
        effects.cohens_d([1, 2, NA, 3], [3, 4, 5], nan_policy="raise")
    r = one(effects.cohens_d([3.0], [2.0, 2.5]))
    assert np.isnan(r["d"]) and r["note"] == "1 values in x < 2"
    r = one(effects.cohens_d([], []))
    assert np.isnan(r["d"]) and r["note"] == "0 values in x < 2; 0 values in y < 2"
    r = one(effects.cohens_d([3, 3], [4, 4]))
    assert np.isnan(r["d"]) and r["note"] == "zero variance in both groups"
    with pytest.raises(ValueError, match="unknown SD convention"):
        effects.cohens_d([1, 2], [3, 4], sd="hedges")


def test_cohens_d_from_summary():
    assert effects.cohens_d_from_summary(3.0, 1.0, 10, 2.0, 1.0, 10) == pytest.approx(1.0)
    # unequal SDs and sizes: pooled sqrt((9*1 + 4*4) / 13), average sqrt((1 + 4) / 2)
    assert effects.cohens_d_from_summary(3, 1, 10, 2, 2, 5) == pytest.approx(1 / np.sqrt(25 / 13))
    assert effects.cohens_d_from_summary(3, 1, 10, 2, 2, 5, sd="average") == pytest.approx(1 / np.sqrt(2.5))
    assert np.isnan(effects.cohens_d_from_summary(3, 0, 10, 2, 0, 5))


def test_cohens_dz_hand_worked():
    x, y = [5.0, 7.0, 6.0, 9.0], [4.0, 4.0, 5.0, 6.0]  # differences 1, 3, 1, 3: mean 2, SD 2/sqrt(3)
    r = one(effects.cohens_dz(x, y))
    assert r["d_z"] == pytest.approx(2 / (2 / np.sqrt(3))) and r["n"] == 4 and r["mean_diff"] == 2.0
    assert r["d_z"] == pytest.approx(one(tests.paired_ttest(x, y))["t"] / np.sqrt(4))  # t = d_z sqrt(n)
    assert one(effects.cohens_dz([4.3, 4.0], [4.0, 3.7]))["note"] == "constant differences"
    assert one(effects.cohens_dz([1.0, NA], [2.0, 3.0]))["note"] == "1 pairs < 2; NaN dropped: 1"


def test_auc_hand_worked_and_degenerate():
    r = one(effects.auc([3, 4.0], [1, 3.0]))
    assert r["auc"] == pytest.approx(0.875)  # pairs (3,1) 1, (3,3) 1/2, (4,1) 1, (4,3) 1 -> 3.5 / 4
    r = one(effects.auc([3, 4.0, NA], [1, 3.0]))  # NaN never reaches sklearn
    assert r["auc"] == pytest.approx(0.875) and r["note"] == "NaN dropped: 1"
    r = one(effects.auc([3, 4.0], [NA]))
    assert np.isnan(r["auc"]) and r["note"] == "0 values in y < 1; NaN dropped: 1"


# ----------------------------------------------------------------------------- tests

def test_t_tests_match_scipy_and_pingouin():
    x, y = np.array([4.0, 4.5, 3.5, 4.2, 3.8, 4.1]), np.array([2.5, 3.0, 2.2, 2.9])
    st, we = one(tests.ttest(x, y)), one(tests.ttest(x, y, equal_var=False))
    ref_s, ref_w = sps.ttest_ind(x, y), sps.ttest_ind(x, y, equal_var=False)
    assert st["t"] == pytest.approx(ref_s.statistic) and st["p"] == pytest.approx(ref_s.pvalue) and st["df"] == 8
    assert we["t"] == pytest.approx(ref_w.statistic) and we["p"] == pytest.approx(ref_w.pvalue)
    assert we["df"] == pytest.approx(pg.ttest(x, y, correction=True)["dof"].iloc[0])
    assert (st["test"], we["test"]) == ("student", "welch")


def test_t_test_degenerate():
    assert one(tests.ttest([1.0], [1, 2.0]))["note"] == "1 values in x < 2"
    r = one(tests.ttest([2, 2.0], [3, 3.0]))
    assert np.isnan(r["t"]) and r["note"] == "zero variance in both groups"


def test_paired_tests_match_scipy():
    a, b = np.array([3.0, 3.5, 4.0, 2.5, 3.0, 4.1]), np.array([3.2, 3.4, 4.4, 2.5, 3.3, 4.0])
    t = one(tests.paired_ttest(b, a))
    ref = sps.ttest_rel(b, a)
    assert t["t"] == pytest.approx(ref.statistic) and t["p"] == pytest.approx(ref.pvalue) and t["df"] == 5
    assert t["mean_diff"] == pytest.approx(np.mean(b - a))
    w = one(tests.wilcoxon(b, a))
    refw = sps.wilcoxon(b, a)
    assert w["w"] == pytest.approx(refw.statistic) and w["p"] == pytest.approx(refw.pvalue)
    assert w["n"] == 6 and w["n_nonzero"] == 5


def test_paired_tests_degenerate():
    r = one(tests.paired_ttest([4.3, 4.0], [4.0, 3.7]))  # 0.3 twice up to float noise: no variance
    assert np.isnan(r["t"]) and r["note"] == "constant differences"
    r = one(tests.paired_ttest([1, 2.0], [1, 2.0]))
    assert r["note"] == "all differences 0"
    assert one(tests.wilcoxon([1, 2.0], [1, 2.0]))["note"] == "all differences 0"
    r = one(tests.paired_ttest([1.0, NA, 3.0], [1.5, 2.0, NA]))
    assert r["n"] == 1 and r["note"] == "1 pairs < 2; NaN dropped: 2"
    with pytest.raises(ValueError, match="x has 2 values, y 3"):
        tests.paired_ttest([1, 2], [1, 2, 3])


def test_mann_whitney_is_the_auc():
    x, y = [3, 4.0], [1, 3.0]
    u = one(tests.mann_whitney(x, y))
    assert u["u"] / 4 == pytest.approx(one(effects.auc(x, y))["auc"])
    assert u["p"] == pytest.approx(sps.mannwhitneyu(x, y, alternative="two-sided").pvalue)


def test_anova_matches_scipy_and_eta2_by_hand():
    groups = {"a": [4.0, 4.5, 3.5, 4.2], "b": [3.6, 3.9, 3.2], "c": [2.5, 3.0, 2.2, 2.9]}
    data = pd.DataFrame([(g, v) for g, vs in groups.items() for v in vs], columns=["g", "y"])
    r = one(tests.anova(data, "y", "g"))
    ref = sps.f_oneway(*groups.values())
    assert r["F"] == pytest.approx(ref.statistic) and r["p"] == pytest.approx(ref.pvalue)
    assert (r["df_between"], r["df_within"], r["k_groups"], r["n"]) == (2, 8, 3, 11)
    allv = data["y"].to_numpy()
    ss_between = sum(len(v) * (np.mean(v) - allv.mean()) ** 2 for v in groups.values())
    assert r["eta2"] == pytest.approx(ss_between / ((allv - allv.mean()) ** 2).sum())


def test_anova_degenerate():
    assert one(tests.anova(pd.DataFrame({"g": [], "y": []}), "y", "g"))["note"] == "empty table"
    assert one(tests.anova(pd.DataFrame({"g": ["a", "a"], "y": [1.0, 2.0]}), "y", "g"))["note"] == "1 groups < 2"
    assert one(tests.anova(pd.DataFrame({"g": ["a", "b"], "y": [1.0, 2.0]}), "y", "g"))["note"].startswith("no within")
    assert one(tests.anova(pd.DataFrame({"g": list("aabb"), "y": [1.0] * 4}), "y", "g"))["note"] == "constant values"
    r = one(tests.anova(pd.DataFrame({"g": list("aabb"), "y": [1.0, 1, 2, 2]}), "y", "g"))
    assert np.isnan(r["F"]) and r["note"] == "no variance within any group"


def test_fdr_bh_hand_worked():
    # sorted p 0.01, 0.02, 0.04 (m = 3): 3 * 0.01 / 1, 3 * 0.02 / 2, 3 * 0.04 / 3 -> 0.03, 0.03, 0.04
    assert tests.adjust([0.04, NA, 0.01, 0.02], method="fdr_bh") == pytest.approx([0.04, NA, 0.03, 0.03], nan_ok=True)
    assert np.isnan(tests.adjust([NA], method="fdr_bh")).all()


def test_bonferroni():
    p = np.array([0.01, NA, 0.2, 0.6])
    assert tests.adjust(p, method="bonferroni") == pytest.approx([0.03, NA, 0.6, 1.0], nan_ok=True)
    assert tests.adjust(p, 10, "bonferroni") == pytest.approx([0.1, NA, 1.0, 1.0], nan_ok=True)
    assert np.isnan(tests.adjust([NA, NA], method="bonferroni")).all()
    with pytest.raises(ValueError, match="smaller than"):
        tests.adjust(p, 2, "bonferroni")


# ----------------------------------------------------------------------------- reliability

def test_icc_matches_shrout_fleiss_1979_all_six_forms():
    out = reliability.icc(long(SHROUT_FLEISS), "item", "rater", "score", forms=list(SHROUT_FLEISS_TABLE4))
    out = out.set_index("form")
    for form, published in SHROUT_FLEISS_TABLE4.items():
        assert out.loc[form, "icc"] == pytest.approx(published, abs=0.005), form
        assert out.loc[form, "ci_low"] < out.loc[form, "icc"] < out.loc[form, "ci_high"]
    # and the two-way ANOVA formulas written out
    x = SHROUT_FLEISS
    n, k = x.shape
    g = x.mean()
    msr = k * np.sum((x.mean(1) - g) ** 2) / (n - 1)
    msc = n * np.sum((x.mean(0) - g) ** 2) / (k - 1)
    mse = np.sum((x - x.mean(1, keepdims=True) - x.mean(0) + g) ** 2) / ((n - 1) * (k - 1))
    assert out.loc["ICC2", "icc"] == pytest.approx((msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n))
    assert out.loc["ICC2k", "icc"] == pytest.approx((msr - mse) / (msr + (msc - mse) / n))
    assert (out["n_items"] == 6).all() and (out["n_raters"] == 4).all() and (out["note"] == "").all()
    assert out.loc["ICC2", "F"] == pytest.approx(msr / mse)


def test_icc_agrees_with_pingouin_directly():
    ref = pg.intraclass_corr(long(SHROUT_FLEISS), "item", "rater", "score")
    ours = reliability.icc(long(SHROUT_FLEISS), "item", "rater", "score",
                           forms=["ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k"])
    assert sorted(ours["icc"]) == pytest.approx(sorted(ref["ICC"]))


def test_icc_degenerate_inputs_give_nan_with_notes():
    def note(df, **kw):
        r = reliability.icc(df, "item", "rater", "score", **kw)
        assert r["icc"].isna().all()
        return r["note"].iloc[0]

    assert note(long(np.zeros((0, 0)))) == "empty table"
    assert note(long(SHROUT_FLEISS[:, :1])) == "one rater"
    assert note(long(np.full((5, 3), 4.0))) == "constant ratings"
    assert note(long(SHROUT_FLEISS[:2])) == "2 items < 3"
    assert note(long(SHROUT_FLEISS[:1])) == "1 items < 3"
    # one NaN drops its item (complete cases), counted
    m = SHROUT_FLEISS.copy()
    m[0, 1] = NA
    r = reliability.icc(long(m, keep_nan=True), "item", "rater", "score")
    assert r["note"].iloc[0] == "NaN dropped: 1" and (r["n_items"] == 5).all() and r["icc"].notna().all()
    assert note(long(m, keep_nan=True), nan_policy="propagate") == "NaN in input: 1"
    with pytest.raises(ValueError, match="1 missing"):
        reliability.icc(long(m, keep_nan=True), "item", "rater", "score", nan_policy="raise")
    # NaN items dropped down to 2 items: below the rule, both notes kept
    m3 = SHROUT_FLEISS[:3].copy()
    m3[2, 0] = NA
    assert note(long(m3, keep_nan=True)) == "2 items < 3; NaN dropped: 1"


def test_icc_of_identical_raters_is_one():
    base = np.array([2, 9, 5, 7, 3, 8.0])
    r = reliability.icc(long(np.column_stack([base] * 3)), "item", "rater", "score").set_index("form")
    assert r.loc["ICC2", "icc"] == pytest.approx(1.0) and r.loc["ICC2k", "icc"] == pytest.approx(1.0)


def test_icc_bad_input_is_a_clear_error():
    df = long(SHROUT_FLEISS)
    with pytest.raises(ValueError, match="rater 'r0' rated item '0' more than once"):
        reliability.icc(pd.concat([df, df.iloc[:1]]), "item", "rater", "score")
    with pytest.raises(ValueError, match=r"missing column\(s\) \['grade'\]"):
        reliability.icc(df, "item", "rater", "grade")
    with pytest.raises(ValueError, match="unknown ICC form"):
        reliability.icc(df, "item", "rater", "score", forms=["ICC4"])


@pytest.mark.parametrize("level, expected", list(KRIPP_2011_ALPHA.items()))
def test_alpha_matches_krippendorff_2011(level, expected):
    r = one(reliability.krippendorff_alpha(long(KRIPP_2011), "item", "rater", "score", level=level))
    assert r["alpha"] == pytest.approx(expected, abs=0.0005)
    assert r["n_items"] == 11 and r["n_values"] == 40 and r["note"] == ""  # unit 12 has one value


def test_alpha_degenerate_inputs_give_nan_with_notes():
    def note(df):
        r = one(reliability.krippendorff_alpha(df, "item", "rater", "score"))
        assert np.isnan(r["alpha"])
        return r["note"]

    assert note(long(np.zeros((0, 0)))) == "empty table"
    assert note(long(SHROUT_FLEISS[:, :1])) == "one rater"
    assert note(long(np.full((4, 2), 3.0))) == "constant ratings"
    assert note(long(KRIPP_2011[:2])) == "2 items < 3"
    # items with one rating are not pairable: 3 items, only 2 pairable
    m = np.array([[1, 2], [3, NA], [2, 2], [4, NA]], float)
    assert note(long(m)) == "2 items < 3"
    # NaN ratings present in the data are omitted and counted
    r = one(reliability.krippendorff_alpha(long(KRIPP_2011, keep_nan=True), "item", "rater", "score"))
    assert r["alpha"] == pytest.approx(0.849, abs=0.0005) and r["note"] == "NaN dropped: 7"


def test_kendalls_w_identical_opposite_and_monotone():
    r = np.arange(1, 7, dtype=float)
    w = lambda m: one(reliability.kendalls_w(long(m), "item", "rater", "score"))["w"]  # noqa: E731
    assert w(np.column_stack([r, r, r])) == pytest.approx(1.0)
    assert w(np.column_stack([r, r[::-1]])) == pytest.approx(0.0)
    assert w(np.column_stack([r, r ** 2, 10 * r + 3])) == pytest.approx(1.0)  # ranks, not values


def test_kendalls_w_with_ties_matches_friedman_and_pingouin():
    rng = np.random.default_rng(7)
    x = rng.integers(1, 6, size=(12, 4)).astype(float)  # 12 items, 4 raters, many ties
    r = one(reliability.kendalls_w(long(x), "item", "rater", "score"))
    fr = sps.friedmanchisquare(*x)  # items are the treatments, raters the blocks
    n, m = x.shape
    assert r["w"] == pytest.approx(fr.statistic / (m * (n - 1)))
    assert r["chi2"] == pytest.approx(fr.statistic) and r["p"] == pytest.approx(fr.pvalue) and r["df"] == n - 1
    lg = pd.DataFrame(x).rename_axis("item").reset_index().melt(id_vars="item", var_name="rater", value_name="y")
    assert r["w"] == pytest.approx(pg.friedman(data=lg, dv="y", within="item", subject="rater")["W"].iloc[0])
    ranks = np.column_stack([sps.rankdata(c) for c in x.T])
    s = np.sum((ranks.sum(1) - m * (n + 1) / 2) ** 2)
    assert r["w"] > 12 * s / (m ** 2 * (n ** 3 - n))  # the tie correction is doing work


def test_kendalls_w_degenerate():
    note = lambda m: one(reliability.kendalls_w(long(m), "item", "rater", "score"))["note"]  # noqa: E731
    assert note(np.zeros((0, 0))) == "empty table"
    assert note(np.arange(6.0)[:, None]) == "one rater"
    assert note(np.array([[1, 2], [3, 4.0]])) == "2 items < 3"
    assert note(np.full((4, 3), 2.0)) == "constant ratings"
    assert note(np.array([[1, 5], [1, 5], [1, 5.0]])) == "every rater gives every item the same rating"


# ----------------------------------------------------------------------------- agreement

def test_mad_and_pairwise_agreement_known_values():
    m = np.array([[5, 5], [5, 6], [5, 7]], float)
    assert one(agreement.mean_absolute_deviation(long(m), "item", "rater", "score"))["mad"] == pytest.approx(0.5)
    pa = agreement.pairwise_agreement(long(m), "item", "rater", "score").set_index("tolerance")
    assert pa.loc[0.0, "agreement"] == pytest.approx(1 / 3) and pa.loc[1.0, "agreement"] == pytest.approx(2 / 3)
    three = np.array([[4, 4, 6]], float)  # pairs (4,4) exact, (4,6) twice not
    assert one(agreement.pairwise_agreement(long(three), "item", "rater", "score", tolerance=0))["agreement"] == \
        pytest.approx(1 / 3)
    assert one(agreement.mean_absolute_deviation(long(three), "item", "rater", "score"))["mad"] == \
        pytest.approx((2 / 3 + 2 / 3 + 4 / 3) / 3)
    # floating-point noise does not break "within 1"
    assert one(agreement.pairwise_agreement(long([[4.3, 3.3]]), "item", "rater", "score", tolerance=1))[
        "agreement"] == 1.0


def test_mad_item_with_one_rating_does_not_count():
    m = np.array([[5, 5], [5, 6], [5, NA]], float)
    r = one(agreement.mean_absolute_deviation(long(m), "item", "rater", "score"))
    assert r["mad"] == pytest.approx(0.25)  # (0 + 0.5) / 2, not (0 + 0.5 + 0) / 3
    assert r["n_items"] == 2 and r["n_items_excluded"] == 1 and r["note"] == "1 items with one rating not counted"
    r = one(agreement.mean_absolute_deviation(long(m, keep_nan=True), "item", "rater", "score"))
    assert r["mad"] == pytest.approx(0.25) and r["note"].startswith("NaN dropped: 1")
    pa = one(agreement.pairwise_agreement(long(m), "item", "rater", "score", tolerance=0))
    assert pa["n_pairs"] == 2 and pa["agreement"] == pytest.approx(0.5)


def test_agreement_degenerate():
    for fn in (agreement.mean_absolute_deviation, agreement.pairwise_agreement):
        assert fn(long(np.zeros((0, 0))), "item", "rater", "score")["note"].iloc[0] == "empty table"
        assert fn(long(np.array([[1.0], [2.0]])), "item", "rater", "score")["note"].iloc[0] == "one rater"
        r = fn(long(np.array([[1.0, NA], [NA, 2.0]])), "item", "rater", "score")
        value = "mad" if "mad" in r else "agreement"
        assert r[value].isna().all() and r["note"].iloc[0] == "no item has 2 ratings"


# ----------------------------------------------------------------------------- correlation

def test_correlation_matches_scipy_and_pingouin_fisher_ci():
    rng = np.random.default_rng(4)
    x = rng.normal(size=30)
    y = 0.5 * x + rng.normal(size=30)
    for method in ("pearson", "spearman", "kendall"):
        r = one(correlation.correlation(x, y, method=method))
        ref = {"pearson": sps.pearsonr, "spearman": sps.spearmanr, "kendall": sps.kendalltau}[method](x, y)
        assert r["r"] == pytest.approx(ref.statistic) and r["p"] == pytest.approx(ref.pvalue)
        assert r["ci_low"] < r["r"] < r["ci_high"] and r["n"] == 30 and r["ci_method"] == "fisher_z"
    pr = one(correlation.correlation(x, y))
    ci = pg.corr(x, y)
    ci_col = next(c for c in ci.columns if c.startswith("CI95"))
    lo, hi = ci[ci_col].iloc[0]
    assert (pr["ci_low"], pr["ci_high"]) == pytest.approx((lo, hi), abs=0.005)  # pingouin rounds to 2 places
    # Fisher z by hand
    z, se = np.arctanh(pr["r"]), 1 / np.sqrt(27)
    assert pr["ci_low"] == pytest.approx(np.tanh(z - sps.norm.ppf(0.975) * se))


def test_correlation_degenerate_and_nan():
    r = one(correlation.correlation([1, 2.0], [2, 1.0]))
    assert np.isnan(r["r"]) and r["note"] == "2 pairs < 3"
    r = one(correlation.correlation([1, 1, 1.0], [1, 2, 3.0], method="spearman"))
    assert np.isnan(r["r"]) and r["note"] == "constant x"
    r = one(correlation.correlation([1, 2, NA, 4, 5.0], [1, 2, 3, NA, 5.0], method="spearman"))
    assert r["n"] == 3 and r["r"] == pytest.approx(1.0) and r["note"] == "NaN dropped: 2; CI needs 4 pairs"
    four = correlation.correlation([1, 2, 3, 5.0], [2, 1, 4, 3.0], method="pearson")
    assert np.isfinite(one(four)["ci_low"])  # 4 pairs: the smallest n with a Fisher-z CI
    r = one(correlation.correlation([1, 2, 3, 5.0], [2, 1, 4, 3.0], method="kendall"))
    assert np.isfinite(r["r"]) and np.isnan(r["ci_low"]) and r["note"] == "CI needs 5 pairs"
    r = one(correlation.correlation(np.arange(10.0), np.arange(10.0)))
    assert r["r"] == pytest.approx(1.0) and r["ci_low"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="method must be one of"):
        correlation.correlation([1, 2, 3], [1, 2, 3], method="distance")


def bivariate_normal(n: int, r: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    z = rng.multivariate_normal([0, 0], [[1, r], [r, 1]], size=n)
    return z[:, 0], z[:, 1]


# For a bivariate normal with Pearson r: Spearman rho_s = (6/pi) asin(r/2) (Pearson 1907) and
# Kendall tau = (2/pi) asin(r) (Greiner's relation; Kendall 1948).
def true_spearman(r: float) -> float:
    return 6 / np.pi * np.arcsin(r / 2)


def true_kendall(r: float) -> float:
    return 2 / np.pi * np.arcsin(r)


def boot(x, y, **kw) -> pd.DataFrame:
    return correlation.bootstrap_correlation(x, y, **kw).set_index("method")


def test_vectorised_statistics_equal_scipy_with_ties():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 5, size=(50, 17)).astype(float)
    y = (x + rng.integers(-2, 3, size=x.shape)).astype(float)
    r, rho, tau = correlation.pearson_rows(x, y), correlation.spearman_rows(x, y), correlation.kendall_rows(x, y)
    for b in range(len(x)):
        assert r[b] == pytest.approx(sps.pearsonr(x[b], y[b]).statistic, abs=1e-12)
        assert rho[b] == pytest.approx(sps.spearmanr(x[b], y[b]).statistic, abs=1e-12)
        assert tau[b] == pytest.approx(sps.kendalltau(x[b], y[b]).statistic, abs=1e-12)
    big_x, big_y = rng.normal(size=(3, 320)), rng.normal(size=(3, 320))  # the scipy branch (n > 300)
    for a, b, tau_b in zip(big_x, big_y, correlation.kendall_rows(big_x, big_y)):
        assert tau_b == pytest.approx(sps.kendalltau(a, b).statistic, abs=1e-12)
    const = np.ones((1, 5))
    for fn in (correlation.pearson_rows, correlation.spearman_rows, correlation.kendall_rows):
        assert np.isnan(fn(const, np.arange(5.0)[None])[0])


def test_bootstrap_perfect_agreement_has_degenerate_ci_at_one():
    x = np.arange(20.0)
    res = boot(x, 3 * x + 1, n_boot=300, seed=1)
    for name in ("spearman", "kendall"):
        assert res.loc[name, "r"] == 1.0
        assert res.loc[name, "ci_low"] == pytest.approx(1.0) and res.loc[name, "ci_high"] == pytest.approx(1.0)
    res = boot(x, -x, n_boot=300, seed=1)
    assert res.loc["spearman", "r"] == -1.0 and res.loc["kendall", "ci_high"] == pytest.approx(-1.0)


def test_bootstrap_large_sample_recovers_the_population_values():
    r = 0.6
    x, y = bivariate_normal(800, r, seed=7)
    res = boot(x, y, n_boot=400, seed=3)
    for name, truth in (("spearman", true_spearman(r)), ("kendall", true_kendall(r))):
        assert res.loc[name, "ci_low"] < truth < res.loc[name, "ci_high"]
        assert res.loc[name, "ci_high"] - res.loc[name, "ci_low"] < 0.1
        assert res.loc[name, "r"] == pytest.approx(truth, abs=0.05)
    assert res.loc["spearman", "r"] == pytest.approx(sps.spearmanr(x, y).statistic)


def test_bootstrap_ci_agrees_with_scipy_bootstrap():
    x, y = bivariate_normal(50, 0.5, seed=11)
    ours = boot(x, y, n_boot=4000, seed=5, methods=("spearman",))
    ref = sps.bootstrap((x, y), lambda a, b: sps.spearmanr(a, b).statistic, paired=True, vectorized=False,
                        n_resamples=2000, method="percentile", random_state=np.random.default_rng(6))
    assert ours.loc["spearman", "ci_low"] == pytest.approx(ref.confidence_interval.low, abs=0.03)
    assert ours.loc["spearman", "ci_high"] == pytest.approx(ref.confidence_interval.high, abs=0.03)


def test_bootstrap_coverage_of_the_percentile_interval():
    r, n, hits = 0.5, 40, {"spearman": 0, "kendall": 0}
    truth = {"spearman": true_spearman(r), "kendall": true_kendall(r)}
    trials = 120
    for t in range(trials):
        x, y = bivariate_normal(n, r, seed=1000 + t)
        res = boot(x, y, n_boot=300, seed=t)
        for name in hits:
            hits[name] += res.loc[name, "ci_low"] <= truth[name] <= res.loc[name, "ci_high"]
    for name, h in hits.items():
        assert 0.85 <= h / trials <= 0.99, (name, h / trials)


def test_bootstrap_seeded_same_draws_for_every_method_and_small_inputs():
    x, y = bivariate_normal(30, 0.3, seed=2)
    a, b = boot(x, y, n_boot=200, seed=9), boot(x, y, n_boot=200, seed=9)
    pd.testing.assert_frame_equal(a, b)
    alone = boot(x, y, n_boot=200, seed=9, methods=("kendall",))
    assert alone.loc["kendall", "ci_low"] == a.loc["kendall", "ci_low"]  # same resamples with or without spearman
    small = boot([1.0, 2.0], [2.0, 1.0])
    assert (small["n"] == 2).all() and small["r"].isna().all() and small["ci_low"].isna().all()
    assert (small["note"] == "2 pairs < 3").all() and (small["n_boot_valid"] == 0).all()
    nan = boot([1.0, 2.0, NA, 4.0, 5.0], [1.0, 2.0, 3.0, NA, 5.0])
    assert (nan["n"] == 3).all() and nan.loc["spearman", "r"] == 1.0 and nan.loc["spearman", "note"] == "NaN dropped: 2"


# ----------------------------------------------------------------------------- unrounded ICC CIs

ALL_FORMS = ["ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k"]


def near_perfect_pairs(n: int = 9600, seed: int = 3) -> pd.DataFrame:
    """Two raters of n items who agree almost perfectly (ICC ~ 0.9989): pingouin's 2-decimal CI
    is [1.0, 1.0] there, which excludes the estimate."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(3.0, 1.0, n)
    m = np.column_stack([truth + rng.normal(0, 0.0335, n), truth + rng.normal(0, 0.0335, n)])
    return long(m)


def test_icc_interval_contains_its_estimate_with_many_pairs():
    out = reliability.icc(near_perfect_pairs(), "item", "rater", "score", forms=ALL_FORMS).set_index("form")
    assert 0.998 < out.loc["ICC2", "icc"] < 0.9995
    for form in ALL_FORMS:
        assert out.loc[form, "ci_low"] < out.loc[form, "icc"] < out.loc[form, "ci_high"], form
        assert out.loc[form, "ci_high"] < 1.0, form  # a 2-decimal rounding would have made it 1.0


@pytest.mark.parametrize("matrix", [SHROUT_FLEISS, None])
def test_icc_ci_is_pingouins_formula_unrounded(matrix):
    """Our CI rounded to 2 decimals is pingouin's (the reference), on the published example and on
    random data; unrounded it differs from pingouin's by < 0.005."""
    if matrix is None:
        matrix = np.random.default_rng(8).normal(size=(40, 3)) + np.arange(40)[:, None] * 0.05
    ref = pg.intraclass_corr(long(matrix), "item", "rater", "score").set_index("Type")
    ci = next(c for c in ref.columns if c.startswith("CI"))
    ours = reliability.icc(long(matrix), "item", "rater", "score", forms=ALL_FORMS).set_index("form")
    for form, labels in reliability.ICC_FORMS.items():
        label = next(lab for lab in labels if lab in ref.index)
        lo, hi = ref.at[label, ci]
        assert ours.loc[form, "ci_low"] == pytest.approx(lo, abs=0.005 + 1e-12), form
        assert ours.loc[form, "ci_high"] == pytest.approx(hi, abs=0.005 + 1e-12), form


def test_icc_designs_without_item_or_residual_variance_have_notes():
    # raters differing only by an offset, every item alike: no variance between items
    offset = np.column_stack([np.full(6, 3.0), np.full(6, 4.0), np.full(6, 2.0)])
    r = reliability.icc(long(offset), "item", "rater", "score", forms=ALL_FORMS)
    assert r["icc"].isna().all() and r["ci_low"].isna().all()
    assert (r["note"] == reliability.NO_ITEM_VARIANCE).all()
    # every rater gives each item the same rating: ICC = 1 in every form, F infinite, no CI
    base = np.array([2, 9, 5, 7, 3, 8.0])
    agree = reliability.icc(long(np.column_stack([base] * 3)), "item", "rater", "score", forms=ALL_FORMS)
    assert (agree["icc"] == 1.0).all() and np.isinf(agree["F"]).all() and (agree["p"] == 0).all()
    assert agree["ci_low"].isna().all() and (agree["note"] == reliability.RATERS_AGREE).all()
    # the same within the tolerance: one ulp of noise does not make a residual variance
    noisy = np.column_stack([base, base + 4.4e-16, base - 4.4e-16])
    assert (reliability.icc(long(noisy), "item", "rater", "score")["note"] == reliability.RATERS_AGREE).all()


# ----------------------------------------------------------------------------- one tolerance

ULP = 4.4e-16


def test_tolerance_rule_is_relative_to_the_scale():
    assert rules.tolerance([0.2, 0.5]) == rules.REL_TOL           # scale at least 1
    assert rules.tolerance([3.0, -14.0]) == pytest.approx(14e-9)
    assert rules.is_constant([4.0, 4.0 + ULP, 4.0 - 2 * ULP]) and not rules.is_constant([4.0, 4.0 + 1e-6])
    assert rules.is_zero_spread(np.var([4.0, 4.0 + ULP]), rules.tolerance([4.0]))
    snapped = rules.snap(np.array([0.1 + 0.2, 0.3, 4.3, 4.0 + 0.3]))
    assert snapped[0] == snapped[1] and snapped[2] == snapped[3]


def test_groups_constant_within_tolerance_give_nan_not_1e16():
    """Story means whose exact values are 4.0 and 3.0 (floating noise of one ulp) are constant:
    d, t and F are undefined (the documented rule), not 1.7e16."""
    x = 4.0 + np.array([0, 1, -1, 2, 0]) * ULP
    y = 3.0 + np.array([1, 0, 0, -1, 1]) * ULP
    assert x.var() > 0  # the old exact test let these through
    d = effects.cohens_d(x, y, sd=("pooled", "average"))
    assert d["d"].isna().all() and (d["note"] == "zero variance in both groups").all()
    for equal_var in (True, False):
        t = one(tests.ttest(x, y, equal_var=equal_var))
        assert np.isnan(t["t"]) and t["note"] == "zero variance in both groups"
    a = one(tests.anova(pd.DataFrame({"v": np.r_[x, y], "g": ["a"] * 5 + ["b"] * 5}), "v", "g"))
    assert np.isnan(a["F"]) and a["note"] == "no variance within any group"
    dz = one(effects.cohens_dz(x, y))
    assert np.isnan(dz["d_z"]) and dz["note"] == "constant differences"
    r = one(correlation.correlation(x, np.arange(5.0)))
    assert np.isnan(r["r"]) and r["note"] == "constant x"


def test_d_with_one_constant_group_is_finite():
    """A judge giving every random path one score: one group constant, the pooled SD > 0."""
    x = np.full(6, 4.0)
    y = np.array([2.0, 3.0, 2.5, 3.5, 3.0])
    d = effects.cohens_d(x, y, sd=("pooled", "average")).set_index("sd_convention")["d"]
    pooled = np.sqrt((4 * y.var(ddof=1)) / (6 + 5 - 2))
    assert d["pooled"] == pytest.approx((4.0 - y.mean()) / pooled)
    assert d["average"] == pytest.approx((4.0 - y.mean()) / np.sqrt(y.var(ddof=1) / 2))
    assert np.isfinite(one(tests.ttest(x, y, equal_var=False))["t"])


def test_spearman_ties_split_by_one_ulp_are_ties():
    y = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    x = np.array([0.1 + 0.2, 0.3, 4.0 + 0.3, 4.3, 2.0, 1.0])  # two pairs equal to the ulp
    exact = sps.spearmanr(np.round(x, 9), y).statistic
    assert sps.spearmanr(x, y).statistic != pytest.approx(exact, abs=1e-6)  # unsnapped: ties split
    for method, ref in (("spearman", exact), ("kendall", sps.kendalltau(np.round(x, 9), y).statistic)):
        assert one(correlation.correlation(x, y, method=method))["r"] == pytest.approx(ref, abs=1e-15)
        boot = correlation.bootstrap_correlation(x, y, methods=method, n_boot=50).iloc[0]
        assert boot["r"] == pytest.approx(ref, abs=1e-15)
    assert one(effects.auc(x[:3], x[3:]))["auc"] == pytest.approx(
        one(effects.auc(np.round(x[:3], 9), np.round(x[3:], 9)))["auc"])


def test_wilcoxon_and_w_use_the_tolerance():
    x = np.array([4.3, 3.3, 2.3, 1.3])
    y = np.array([4.0, 3.0, 2.0, 1.0])  # differences 0.3 within floating noise
    assert one(tests.paired_ttest(x, y))["note"] == "constant differences"
    w = reliability.kendalls_w(long(np.column_stack([[0.1 + 0.2, 0.3, 1.0], [1.0, 1.0, 2.0]])),
                               "item", "rater", "score")
    assert one(w)["w"] == pytest.approx(1.0)  # rater 1's first two items tie, as rater 2's do


# ----------------------------------------------------------------------------- properties

def random_ratings(seed: int, n: int = 12, k: int = 4) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.round(rng.normal(3, 1, (n, 1)) + rng.normal(0, 0.7, (n, k)), 1)


@pytest.mark.parametrize("seed", range(5))
def test_icc_alpha_w_are_invariant_to_permuting_raters_and_items(seed):
    m = random_ratings(seed)
    rng = np.random.default_rng(100 + seed)
    p = m[rng.permutation(m.shape[0])][:, rng.permutation(m.shape[1])]
    for a, b in ((m, p),):
        ia = reliability.icc(long(a), "item", "rater", "score", forms=ALL_FORMS)
        ib = reliability.icc(long(b), "item", "rater", "score", forms=ALL_FORMS)
        for col in ("icc", "ci_low", "ci_high", "F", "p"):
            assert ia[col].to_numpy() == pytest.approx(ib[col].to_numpy(), rel=1e-10), col
        for level in ALPHA_LEVELS:
            assert one(reliability.krippendorff_alpha(long(a), "item", "rater", "score", level=level))["alpha"] == \
                pytest.approx(one(reliability.krippendorff_alpha(long(b), "item", "rater", "score", level=level))["alpha"])
        assert one(reliability.kendalls_w(long(a), "item", "rater", "score"))["w"] == \
            pytest.approx(one(reliability.kendalls_w(long(b), "item", "rater", "score"))["w"])


ALPHA_LEVELS = reliability.ALPHA_LEVELS


@pytest.mark.parametrize("seed", range(5))
def test_swapping_groups_flips_the_sign_of_d_and_t(seed):
    rng = np.random.default_rng(seed)
    x, y = rng.normal(0.5, 1, 7 + seed), rng.normal(0, 1.5, 9)
    for sd in ("pooled", "average"):
        assert one(effects.cohens_d(x, y, sd=sd))["d"] == pytest.approx(-one(effects.cohens_d(y, x, sd=sd))["d"])
    assert one(tests.ttest(x, y, equal_var=False))["t"] == pytest.approx(-one(tests.ttest(y, x, equal_var=False))["t"])
    assert one(effects.auc(x, y))["auc"] == pytest.approx(1 - one(effects.auc(y, x))["auc"])
    # and d is unchanged by permuting within a group
    assert one(effects.cohens_d(rng.permutation(x), y))["d"] == pytest.approx(one(effects.cohens_d(x, y))["d"])


# ----------------------------------------------------------------------------- families

def test_holm_and_bonferroni_over_a_family_that_does_not_shrink():
    p = np.array([0.01, np.nan, 0.04, 0.03])
    # Holm by hand over m = 4 (the undefined test still counts): sorted 0.01, 0.03, 0.04, [1]
    # -> 4 x 0.01 = 0.04, max(0.04, 3 x 0.03) = 0.09, max(0.09, 2 x 0.04) = 0.09
    assert tests.adjust(p, 4, "holm") == pytest.approx([0.04, np.nan, 0.09, 0.09], nan_ok=True)
    assert tests.adjust(p, 4, "bonferroni") == pytest.approx([0.04, np.nan, 0.16, 0.12], nan_ok=True)
    # over the 3 defined tests only, the family would shrink and the adjustment be too lenient
    assert tests.adjust(p, None, "bonferroni") == pytest.approx([0.03, np.nan, 0.12, 0.09], nan_ok=True)
    with pytest.raises(ValueError, match="smaller than the 3"):
        tests.adjust(p, 2)
    from statsmodels.stats.multitest import multipletests
    q = np.array([0.2, 0.001, 0.03, 0.04, 0.5])
    assert tests.adjust(q, method="holm") == pytest.approx(multipletests(q, method="holm")[1])


# ----------------------------------------------------------------------------- the cluster bootstrap

from judgelab.stats import bootstrap  # noqa: E402


def test_cluster_bootstrap_of_single_row_clusters_agrees_with_scipy():
    x = np.random.default_rng(4).normal(2, 1, 40)
    df = pd.DataFrame({"c": np.arange(40), "v": x})
    ours = bootstrap.cluster_bootstrap(df, lambda f: {"mean": f["v"].mean()}, cluster="c", n_boot=4000, seed=1).iloc[0]
    ref = sps.bootstrap((x,), np.mean, n_resamples=4000, method="percentile", random_state=2).confidence_interval
    assert ours["estimate"] == pytest.approx(x.mean())
    assert ours["ci_low"] == pytest.approx(ref.low, abs=0.04) and ours["ci_high"] == pytest.approx(ref.high, abs=0.04)
    assert ours["n_clusters"] == 40 and ours["n_boot_valid"] == 4000 and ours["ci_low"] < ours["estimate"] < ours["ci_high"]
    assert "cluster bootstrap over c" in ours["ci_method"] and "B=4000, seed=1" in ours["ci_method"]


def test_cluster_bootstrap_resamples_clusters_not_rows():
    """Doubling every row of every cluster adds no information: the CI is the same as with one
    row per cluster (the same draws), where a row bootstrap would shrink it by ~sqrt(2)."""
    x = np.random.default_rng(5).normal(0, 1, 30)
    one_row = pd.DataFrame({"c": np.arange(30), "v": x})
    two_rows = pd.concat([one_row, one_row], ignore_index=True)
    stat = (lambda f: {"mean": f["v"].mean()})
    a = bootstrap.cluster_bootstrap(one_row, stat, cluster="c", n_boot=500, seed=3).iloc[0]
    b = bootstrap.cluster_bootstrap(two_rows, stat, cluster="c", n_boot=500, seed=3).iloc[0]
    assert (a["ci_low"], a["ci_high"]) == pytest.approx((b["ci_low"], b["ci_high"]))


def test_cluster_bootstrap_duplicates_get_their_own_ids_and_strata_keep_sizes():
    df = pd.DataFrame({"story": ["a", "a", "b", "b", "c", "c", "d", "d"], "mode": ["x", "y"] * 4,
                       "cat": ["p"] * 4 + ["q"] * 4, "v": [1.0, 2, 3, 5, 2, 2, 8, 9]})
    seen = []

    def stat(f):
        seen.append((f.groupby("cat")["story"].nunique().to_dict(), f["story"].value_counts().max()))
        return {"n": float(len(f))}

    out = bootstrap.cluster_bootstrap(df, stat, cluster="story", strata="cat", n_boot=30, seed=0).iloc[0]
    assert out["ci_low"] == out["ci_high"] == 8  # every resample has 4 stories of 2 rows
    assert all(counts == {"p": 2, "q": 2} and most == 2 for counts, most in seen[1:])
    with pytest.raises(ValueError, match="spans several 'mode' strata"):
        bootstrap.cluster_bootstrap(df, stat, cluster="story", strata="mode", n_boot=2)


def test_cluster_bootstrap_is_seeded_and_explains_missing_intervals():
    df = pd.DataFrame({"c": [1, 2, 3], "v": [1.0, 3, 2]})  # 3 of the 27 resamples are constant
    stat = (lambda f: {"mean": f["v"].mean(), "sd": f["v"].std() if f["v"].nunique() > 1 else np.nan})
    a = bootstrap.cluster_bootstrap(df, stat, cluster="c", n_boot=200, seed=9)
    b = bootstrap.cluster_bootstrap(df, stat, cluster="c", n_boot=200, seed=9)
    pd.testing.assert_frame_equal(a, b)
    sd = a.set_index("statistic").loc["sd"]
    assert sd["n_boot_valid"] < 200 and "left out" in sd["note"]
    single = bootstrap.cluster_bootstrap(df.iloc[:1], stat, cluster="c", n_boot=10).iloc[0]
    assert np.isnan(single["ci_low"]) and single["note"] == "1 c clusters < 2"
    with pytest.raises(ValueError, match="missing cluster id"):
        bootstrap.cluster_bootstrap(df.assign(c=[1, None, 3]), stat, cluster="c", n_boot=2)


def test_t_and_wilson_intervals_known_values():
    lo, hi = intervals.t_interval([1.0, 2.0, 3.0])
    half = sps.t.ppf(0.975, 2) * 1.0 / np.sqrt(3)
    assert (lo, hi) == pytest.approx((2 - half, 2 + half))
    assert np.isnan(intervals.t_interval([1.0])[0])
    # Wilson 1927: 8 of 10, z = 1.96 -> (0.4902, 0.9433)
    assert intervals.proportion_ci(8, 10)[1:] == pytest.approx((0.4902, 0.9433), abs=1e-4)


@pytest.mark.parametrize("seed", range(4))
def test_interval_alpha_of_two_complete_raters_is_krippendorffs(seed):
    m = random_ratings(seed, n=15, k=2)
    ref = one(reliability.krippendorff_alpha(long(m), "item", "rater", "score", level="interval"))["alpha"]
    assert reliability.interval_alpha_pairs(m[:, 0], m[:, 1]) == pytest.approx(ref, rel=1e-12)
    assert np.isnan(reliability.interval_alpha_pairs([3.0, 3.0, 3.0], [3.0, 3.0, 3.0]))


@pytest.mark.parametrize("seed", range(6))
def test_holm_equals_statsmodels(seed):
    from statsmodels.stats.multitest import multipletests
    p = np.random.default_rng(seed).uniform(0, 0.2, 3 + seed) ** 2
    p[0] = p[-1]  # a tie
    assert tests.adjust(p, method="holm") == pytest.approx(multipletests(p, method="holm")[1], abs=1e-15)
