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


# For a bivariate normal with Pearson r: Spearman rho_s = (6/pi) asin(r/2) (Pearson 1907) and
# Kendall tau = (2/pi) asin(r) (Greiner's relation; Kendall 1948).
def true_spearman(r: float) -> float:
    return 6 / np.pi * np.arcsin(r / 2)


def true_kendall(r: float) -> float:
    return 2 / np.pi * np.arcsin(r)


def test_vectorised_statistics_equal_scipy_with_ties():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 5, size=(50, 17)).astype(float)
    y = (x + rng.integers(-2, 3, size=x.shape)).astype(float)
    rho, tau = compare.spearman_rows(x, y), compare.kendall_rows(x, y)
    for b in range(len(x)):
        assert rho[b] == pytest.approx(stats.spearmanr(x[b], y[b]).statistic, abs=1e-12)
        assert tau[b] == pytest.approx(stats.kendalltau(x[b], y[b]).statistic, abs=1e-12)
    big_x, big_y = rng.normal(size=(3, 320)), rng.normal(size=(3, 320))  # the scipy branch (n > 300)
    for a, b, tau_b in zip(big_x, big_y, compare.kendall_rows(big_x, big_y)):
        assert tau_b == pytest.approx(stats.kendalltau(a, b).statistic, abs=1e-12)
    const = np.ones((1, 5))
    assert np.isnan(compare.spearman_rows(const, np.arange(5.0)[None])[0])
    assert np.isnan(compare.kendall_rows(const, np.arange(5.0)[None])[0])


def test_perfect_agreement_has_degenerate_ci_at_one():
    x = np.arange(20.0)
    res = compare.bootstrap_rank_correlation(x, 3 * x + 1, n_boot=300, seed=1)
    for name in ("spearman", "kendall"):
        assert res[name] == 1.0 and res[f"{name}_lo"] == pytest.approx(1.0) and res[f"{name}_hi"] == pytest.approx(1.0)
    res = compare.bootstrap_rank_correlation(x, -x, n_boot=300, seed=1)
    assert res["spearman"] == -1.0 and res["kendall_hi"] == pytest.approx(-1.0)


def test_large_sample_recovers_the_population_values():
    r = 0.6
    x, y = bivariate_normal(800, r, seed=7)
    res = compare.bootstrap_rank_correlation(x, y, n_boot=400, seed=3)
    for name, truth in (("spearman", true_spearman(r)), ("kendall", true_kendall(r))):
        assert res[f"{name}_lo"] < truth < res[f"{name}_hi"]
        assert res[f"{name}_hi"] - res[f"{name}_lo"] < 0.1
        assert res[name] == pytest.approx(truth, abs=0.05)
    assert res["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic)


def test_ci_agrees_with_scipy_bootstrap():
    x, y = bivariate_normal(50, 0.5, seed=11)
    ours = compare.bootstrap_rank_correlation(x, y, n_boot=4000, seed=5)
    ref = stats.bootstrap((x, y), lambda a, b: stats.spearmanr(a, b).statistic, paired=True, vectorized=False,
                          n_resamples=2000, method="percentile", random_state=np.random.default_rng(6))
    assert ours["spearman_lo"] == pytest.approx(ref.confidence_interval.low, abs=0.03)
    assert ours["spearman_hi"] == pytest.approx(ref.confidence_interval.high, abs=0.03)


def test_coverage_of_the_percentile_interval():
    r, n, hits = 0.5, 40, {"spearman": 0, "kendall": 0}
    truth = {"spearman": true_spearman(r), "kendall": true_kendall(r)}
    trials = 120
    for t in range(trials):
        x, y = bivariate_normal(n, r, seed=1000 + t)
        res = compare.bootstrap_rank_correlation(x, y, n_boot=300, seed=t)
        for name in hits:
            hits[name] += res[f"{name}_lo"] <= truth[name] <= res[f"{name}_hi"]
    for name, h in hits.items():
        assert 0.85 <= h / trials <= 0.99, (name, h / trials)


def test_seeded_and_too_small_inputs():
    x, y = bivariate_normal(30, 0.3, seed=2)
    a = compare.bootstrap_rank_correlation(x, y, n_boot=200, seed=9)
    b = compare.bootstrap_rank_correlation(x, y, n_boot=200, seed=9)
    assert a == b
    small = compare.bootstrap_rank_correlation([1.0, 2.0], [2.0, 1.0])
    assert small["n"] == 2 and np.isnan(small["spearman"]) and np.isnan(small["kendall_lo"])
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
