"""Judge-vs-human correlations with bootstrap CIs on synthetic data with known answers."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from judgelab.human import compare
from judgelab.human.compare import CriterionMap
from judgelab.human.reliability import reliability_table


def bivariate_normal(n: int, r: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    z = rng.multivariate_normal([0, 0], [[1, r], [r, 1]], size=n)
    return z[:, 0], z[:, 1]


def test_perfect_agreement_has_degenerate_ci_at_one():
    x = np.arange(20.0)
    res = compare.bootstrap_rank_correlation(x, 3 * x + 1, n_boot=300, seed=1)
    for name in ("spearman", "kendall"):
        assert res[name] == 1.0 and res[f"{name}_lo"] == pytest.approx(1.0) and res[f"{name}_hi"] == pytest.approx(1.0)
    res = compare.bootstrap_rank_correlation(x, -x, n_boot=300, seed=1)
    assert res["spearman"] == -1.0 and res["kendall_hi"] == pytest.approx(-1.0)


def test_record_matches_the_shared_bootstrap():
    """The flat record is judgelab.stats.correlation.bootstrap_correlation laid out by name (the
    bootstrap's own known-answer tests -- population values, scipy's bootstrap, coverage -- are
    in tests/test_stats.py)."""
    from judgelab.stats.correlation import bootstrap_correlation

    x, y = bivariate_normal(40, 0.5, seed=11)
    rec = compare.bootstrap_rank_correlation(x, y, n_boot=300, seed=5)
    rows = bootstrap_correlation(x, y, n_boot=300, seed=5).set_index("method")
    for name in ("spearman", "kendall"):
        assert rec[name] == rows.loc[name, "r"] and rec[f"{name}_p"] == rows.loc[name, "p"]
        assert (rec[f"{name}_lo"], rec[f"{name}_hi"]) == (rows.loc[name, "ci_low"], rows.loc[name, "ci_high"])
    assert rec["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic)


def test_seeded_and_too_small_inputs():
    x, y = bivariate_normal(30, 0.3, seed=2)
    a = compare.bootstrap_rank_correlation(x, y, n_boot=200, seed=9)
    b = compare.bootstrap_rank_correlation(x, y, n_boot=200, seed=9)
    assert a == b
    small = compare.bootstrap_rank_correlation([1.0, 2.0], [2.0, 1.0])
    assert small["n"] == 2 and np.isnan(small["spearman"]) and np.isnan(small["kendall_lo"])
    assert small["note"] == "2 pairs < 3" and small["spearman_n_boot_valid"] == 0
    nan = compare.bootstrap_rank_correlation([1.0, 2.0, np.nan, 4.0, 5.0], [1.0, 2.0, 3.0, np.nan, 5.0])
    assert nan["n"] == 3 and nan["spearman"] == 1.0


def synthetic_panel(n_stories=30, seed=0):
    """Two raters per story from a latent quality; sources s0..s4 with increasing quality."""
    rng = np.random.default_rng(seed)
    rows, latent = [], {}
    for i in range(n_stories):
        source = f"m{i % 5}"
        q = i % 5 + rng.normal(0, 0.3)
        latent[f"st{i:02d}"] = q
        for r in range(2):
            rows.append(("syn", f"st{i:02d}", source, "overall", f"g{i % 3}_r{r}", q + rng.normal(0, 0.5)))
    tidy = pd.DataFrame(rows, columns=["dataset", "story", "source", "criterion", "rater", "value"])
    return tidy, latent


def test_judge_vs_human_table_and_ceiling():
    tidy, latent = synthetic_panel()
    means = tidy.groupby("story")["value"].mean()
    scores = pd.DataFrame({"dataset": "syn", "story": list(means.index), "measure": "oracle",
                           "score": means.to_numpy()})
    scores.loc[0, "score"] = np.nan  # one failed judgement
    mapping = [CriterionMap("syn", "oracle", "overall", "judge = panel mean")]
    ceiling = reliability_table(tidy)
    tab = compare.judge_vs_human(scores, tidy, ceiling, mapping, n_boot=200, seed=1)
    row = tab.iloc[0]
    assert row["n"] == 29 and row["n_scored"] == 29 and row["n_failed"] == 1
    assert row["spearman"] == pytest.approx(1.0) and row["kendall"] == pytest.approx(1.0)
    assert row["ceiling_spearman"] == pytest.approx(ceiling.iloc[0]["loo_spearman_mean"])
    assert row["ceiling_spearman"] < row["spearman"]


def test_source_rankings_known_order():
    tidy, _ = synthetic_panel()
    means = tidy.groupby("story")["value"].mean()
    # a judge that ranks sources in reverse: score = -(source index)
    src = tidy.drop_duplicates("story").set_index("story")["source"]
    scores = pd.DataFrame({"dataset": "syn", "story": list(means.index), "measure": "rev",
                           "score": [-float(src[s][1:]) for s in means.index]})
    rk = compare.source_rankings(scores, tidy, "syn", "rev", "overall")
    assert rk["source"].tolist() == ["m4", "m3", "m2", "m1", "m0"]
    assert rk["human_rank"].tolist() == [1, 2, 3, 4, 5] and rk["judge_rank"].tolist() == [5, 4, 3, 2, 1]
    assert (rk["n_stories"] == 6).all()
    agree = compare.ranking_agreement(rk)
    assert agree == {"n_sources": 5, "spearman": pytest.approx(-1.0), "kendall": pytest.approx(-1.0)}


def test_judge_scores_are_checked():
    tidy, _ = synthetic_panel()
    bad = pd.DataFrame({"dataset": ["syn", "syn"], "story": ["st00", "st00"], "measure": ["x", "x"], "score": [1, 2]})
    with pytest.raises(ValueError, match="story st00 of syn has two x scores"):
        compare.judge_vs_human(bad, tidy)
    with pytest.raises(ValueError, match="missing column"):
        compare.judge_vs_human(bad.drop(columns="score"), tidy)


# ----------------------------------------------------------------------------- like for like

def panel(n_groups: int, per_group: int, k: int, rng, noise: float = 1.0):
    """Each group of stories has its own k raters (the appendix's designs); rating = quality +
    noise; a judge exactly as noisy as one rater."""
    rows, judge = [], {}
    for g in range(n_groups):
        for i in range(per_group):
            story = f"g{g}s{i}"
            q = rng.normal()
            judge[story] = q + rng.normal(0, noise)
            for r in range(k):
                rows.append(("syn", story, "src", "overall", f"g{g}r{r}", q + rng.normal(0, noise)))
    tidy = pd.DataFrame(rows, columns=["dataset", "story", "source", "criterion", "rater", "value"])
    return tidy, pd.Series(judge)


@pytest.mark.parametrize("design", [(5, 13, 2), (4, 11, 3)], ids=["k=2 (Confederacy)", "k=3 (Art or Artifice)"])
def test_a_judge_as_noisy_as_one_human_beats_the_like_for_like_ceiling_half_the_time(design):
    n_sims = 300
    rng = np.random.default_rng(26)
    wins, old_wins = 0, 0
    for _ in range(n_sims):
        tidy, judge = panel(*design, rng)
        res = compare._loo_means(compare.loo_frame(judge, tidy, "overall"), "spearman")
        assert res["n_raters"] == design[0] * design[2]
        wins += res["judge_loo"] > res["human_loo"]
        # the old comparison: judge vs the mean of all k raters, against the same ceiling
        means = tidy.groupby("story")["value"].mean()
        old_wins += stats.spearmanr(judge[means.index], means).statistic > res["human_loo"]
    se = np.sqrt(0.25 / n_sims)
    assert abs(wins / n_sims - 0.5) < 3 * se, wins / n_sims          # about half, within binomial error
    assert old_wins / n_sims > 0.5 + 3 * se, old_wins / n_sims       # the old construction favoured the judge


def test_like_for_like_hand_worked_and_in_the_table():
    # one group of 4 stories, 2 raters: each rater's reference is the other rater
    tidy = pd.DataFrame({"dataset": "syn", "story": [f"s{i}" for i in range(4)] * 2, "source": "x",
                         "criterion": "overall", "rater": ["a"] * 4 + ["b"] * 4,
                         "value": [1.0, 2, 3, 4, 1, 3, 2, 4]})
    judge = pd.Series({"s0": 1.0, "s1": 2.0, "s2": 3.0, "s3": 4.0})
    res = compare.like_for_like(judge, tidy, "overall", n_boot=200, seed=0)
    rho_ab = stats.spearmanr([1, 2, 3, 4], [1, 3, 2, 4]).statistic
    # human: rho(a, b) twice; judge: rho(j, b) (a left out) and rho(j, a) = 1 (b left out)
    assert res["human_loo"] == pytest.approx(rho_ab)
    assert res["judge_loo"] == pytest.approx((rho_ab + 1.0) / 2)
    assert res["loo_gap"] == pytest.approx(res["judge_loo"] - res["human_loo"])
    assert res["loo_n_raters"] == 2 and res["loo_n_stories"] == 4
    assert res["loo_gap_ci_low"] <= res["loo_gap"] <= res["loo_gap_ci_high"]
    assert "cluster bootstrap over story" in res["loo_ci_method"]
    # too few shared stories: NaN with a note
    short = compare.like_for_like(judge.iloc[:2], tidy, "overall", n_boot=10)
    assert np.isnan(short["judge_loo"]) and "no rater has >= 3 judged stories" in short["loo_note"]
    scores = pd.DataFrame({"dataset": "syn", "story": judge.index, "measure": "j", "score": judge.to_numpy()})
    tab = compare.judge_vs_human(scores, tidy, reliability_table(tidy),
                                 [CriterionMap("syn", "j", "overall", "test")], n_boot=100)
    assert tab.iloc[0]["judge_loo"] == pytest.approx(res["judge_loo"]) and tab.iloc[0]["unit"] == "story"
