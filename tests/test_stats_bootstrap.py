"""The floor's one bootstrap (``judgelab.stats.bootstrap.bootstrap``): each old entry point gives the
numbers it gave before at a fixed seed (references written here from scipy / numpy, not from the
code under test), and the one NaN rule (no interval when fewer than half the resamples are valid)
changes exactly the results it should.
"""
import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from judgelab.stats import bootstrap as boot
from judgelab.stats import correlation, intervals, resampling

SEED, B = 11, 400


def test_mean_ci_and_diff_ci_are_scipys_percentile_bootstrap():
    rng = np.random.default_rng(0)
    x, y = rng.normal(3, 1, 25), rng.normal(2, 2, 17)
    ref = sps.bootstrap((x,), np.mean, n_resamples=B, method="percentile",
                        random_state=np.random.default_rng(SEED)).confidence_interval
    assert intervals.mean_ci(x, n_boot=B, seed=SEED)[1:] == pytest.approx((ref.low, ref.high), rel=1e-12)
    ref = sps.bootstrap((x, y), lambda u, v, axis: u.mean(axis) - v.mean(axis), n_resamples=B, vectorized=True,
                        method="percentile", random_state=np.random.default_rng(SEED)).confidence_interval
    assert intervals.diff_ci(x, y, n_boot=B, seed=SEED)[1:] == pytest.approx((ref.low, ref.high), rel=1e-12)


def _cluster_reference(data, stat, cluster, strata, n_boot, seed, ci=0.95):
    """The cluster bootstrap as it was written before the one entry point: a loop over resamples,
    clusters drawn with ``rng.choice`` within each stratum, percentiles of the finite values."""
    ids = sorted(data[cluster].unique())
    first = data.groupby(cluster)[strata].first()
    groups = {s: np.array([i for i, c in enumerate(ids) if first[c] == s]) for s in pd.unique(first.loc[ids])}
    rng = np.random.default_rng(seed)
    vals = []
    for _ in range(n_boot):
        draw = np.concatenate([rng.choice(m, size=len(m), replace=True) for m in groups.values()])
        frame = pd.concat([data[data[cluster] == ids[c]].assign(**{cluster: j}) for j, c in enumerate(draw)])
        vals.append(stat(frame))
    vals = np.array(vals)
    ok = vals[np.isfinite(vals)]
    return np.percentile(ok, [100 * (1 - ci) / 2, 100 * (1 + ci) / 2]), len(ok)


def test_cluster_bootstrap_gives_the_loop_reference():
    rng = np.random.default_rng(1)
    data = pd.DataFrame({"story": np.repeat(np.arange(12), 2), "cat": np.repeat(["a", "b"] * 6, 2),
                         "score": rng.normal(size=24)})
    stat = lambda f: f.loc[f["cat"] == "a", "score"].mean() - f.loc[f["cat"] == "b", "score"].mean()  # noqa: E731
    (lo, hi), n_ok = _cluster_reference(data, stat, "story", "cat", 60, SEED)
    row = boot.cluster_bootstrap(data, lambda f: {"gap": stat(f)}, cluster="story", strata="cat", n_boot=60,
                                 seed=SEED).iloc[0]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((lo, hi), rel=1e-12)
    assert row["n_boot_valid"] == n_ok == 60 and row["note"] == ""


def test_bootstrap_correlation_gives_scipys_statistics_on_the_same_draws():
    rng = np.random.default_rng(2)
    x = rng.normal(size=30)
    y = x + rng.normal(size=30)
    draws = np.random.default_rng(SEED)
    idx = np.concatenate([draws.integers(0, 30, size=(min(150, B - s), 30)) for s in range(0, B, 150)])
    for method, fn in (("spearman", sps.spearmanr), ("kendall", sps.kendalltau), ("pearson", sps.pearsonr)):
        ref = np.percentile([fn(x[i], y[i]).statistic for i in idx], [2.5, 97.5])
        row = correlation.bootstrap_correlation(x, y, methods=method, n_boot=B, seed=SEED, batch=150).iloc[0]
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(tuple(ref), rel=1e-9), method


def test_weights_method_is_the_bootstrap_of_rows_repeated_by_their_weights():
    rng = np.random.default_rng(3)
    ids = np.repeat(np.arange(15), 3)
    x = rng.normal(size=len(ids))
    out = boot.bootstrap(ids, lambda w: resampling.weighted_mean(x, w), method="weights", n_boot=B, seed=SEED).iloc[0]
    w = resampling.cluster_weights(ids, n_boot=B, seed=SEED)
    brute = [np.repeat(x, wb).mean() for wb in w]  # the data with each row repeated w times
    assert (out["ci_low"], out["ci_high"]) == pytest.approx(tuple(np.quantile(brute, [0.025, 0.975])), rel=1e-12)
    assert out["estimate"] == pytest.approx(x.mean())
    assert resampling.percentile_interval is boot.percentile_ci


# --------------------------------------------------------------------------- the one NaN rule

def _two_lone_points(n=10):
    """x and y each constant but for one unit (different ones): a resample has a correlation only if
    it draws both, which about 4 in 10 resamples do, fewer than half."""
    return np.r_[np.zeros(n - 1), 1.0], np.r_[1.0, np.zeros(n - 1)]


def test_the_nan_rule_refuses_an_interval_from_a_minority_of_resamples():
    """The named change: bootstrap_correlation and cluster_bootstrap used to report the percentiles
    of however few valid resamples there were; now fewer than half valid gives NaN and a note."""
    x, y = _two_lone_points()
    row = correlation.bootstrap_correlation(x, y, methods="pearson", n_boot=B, seed=SEED).iloc[0]
    assert 0.3 * B < row["n_boot_valid"] < 0.5 * B
    assert np.isnan(row["ci_low"]) and np.isnan(row["ci_high"]) and "at least half valid" in row["note"]
    assert np.isfinite(row["r"])

    frame = pd.DataFrame({"unit": np.arange(10), "x": x, "y": y})
    stat = lambda f: {"r": f["x"].corr(f["y"]) if f["x"].std() > 0 and f["y"].std() > 0 else np.nan}  # noqa: E731
    out = boot.cluster_bootstrap(frame, stat, cluster="unit", n_boot=B, seed=SEED).iloc[0]
    assert 0.3 * B < out["n_boot_valid"] < 0.5 * B and np.isnan(out["ci_low"]) and "at least half" in out["note"]

    # one lone point only: ~65% of resamples valid, the interval stands
    row = correlation.bootstrap_correlation(np.r_[np.zeros(9), 1.0], np.arange(10.0), methods="pearson",
                                            n_boot=B, seed=SEED).iloc[0]
    assert 0.5 * B < row["n_boot_valid"] < B and np.isfinite(row["ci_low"]) and row["note"] == ""


def test_every_engine_shares_the_rule():
    """The same values under each scheme: the rule, not the engine, decides."""
    values = np.r_[np.arange(10.0), np.full(11, np.nan)]
    assert np.isnan(boot.percentile_ci(values).low)
    assert np.isfinite(boot.percentile_ci(values[:-1]).low)  # 10 of 20: half is enough
    assert np.isnan(resampling.bootstrap_p(values)) and np.isfinite(resampling.bootstrap_p(values[:-1]))
    ids = np.arange(21)
    out = boot.bootstrap(ids, lambda w: np.where(np.arange(len(w)) % 2 == 0, 1.0, np.nan), method="weights",
                         n_boot=21).iloc[0]
    assert np.isfinite(out["ci_low"])  # 11 of 21 valid
    out = boot.bootstrap(ids, lambda w: np.where(np.arange(len(w)) % 2 == 1, 1.0, np.nan) if len(w) > 1
                         else np.ones(1), method="weights", n_boot=21).iloc[0]
    assert np.isnan(out["ci_low"]) and "at least half" in out["note"]  # 10 of 21


def test_bad_method_is_named():
    with pytest.raises(ValueError, match="method must be one of"):
        boot.bootstrap(([1.0, 2.0],), np.mean, method="bca")


# --------------------------------------------------------------------------- summary-number intervals

def test_summary_number_intervals_cover_the_truth_at_the_scorecards_designs():
    """Coverage at known truth of the floor's vectorised intervals (the scorecard's and its power
    simulation's), 4,000 simulated data sets each, at designs the scorecard meets: 12 and 9 stories
    (t, pooled t), 30 pairs (Fisher z), 20 items x 3 judges (ICC(2,1), Satterthwaite), 40 + 40
    (d, Hanley-McNeil AUC: normal approximations). The exact intervals must hold 95% within four
    binomial SEs; the approximations within [0.93, 0.97]."""
    from judgelab.stats import effects, reliability

    rng = np.random.default_rng(7)
    s = 4000
    se = 4 * np.sqrt(0.95 * 0.05 / s)

    def covered(lo, hi, truth):
        return float(np.mean((lo <= truth) & (truth <= hi)))

    a = rng.normal(1.0, 2.0, (s, 12))
    _, lo, hi = intervals.t_interval_from_summary(a.mean(1), a.std(1, ddof=1), 12)
    assert abs(covered(lo, hi, 1.0) - 0.95) < se
    b = rng.normal(0.0, 2.0, (s, 9))
    _, lo, hi, p = intervals.pooled_t_from_summary(a.mean(1), a.std(1, ddof=1), 12, b.mean(1), b.std(1, ddof=1), 9)
    assert abs(covered(lo, hi, 1.0) - 0.95) < se
    assert np.all((p < 0.05) == ((lo > 0) | (hi < 0)))  # the p and the interval tell one story

    rho = 0.5
    x = rng.standard_normal((s, 30))
    y = rho * x + np.sqrt(1 - rho ** 2) * rng.standard_normal((s, 30))
    lo, hi = correlation.fisher_z_ci(correlation.pearson_rows(x, y), 30)
    assert abs(covered(lo, hi, rho) - 0.95) < se

    target, judge, error = (rng.normal(0, sd, shape) for sd, shape in
                            ((1.0, (s, 20, 1)), (0.5, (s, 1, 3)), (0.8, (s, 20, 3))))
    _, lo, hi = reliability.icc2_1(target + judge + error)
    assert abs(covered(lo, hi, 1.0 / (1.0 + 0.25 + 0.64)) - 0.95) < se

    g1, g2 = rng.normal(0.5, 1.0, (s, 40)), rng.normal(0.0, 1.0, (s, 40))
    d = effects.cohens_d_from_summary(g1.mean(1), g1.std(1, ddof=1), 40, g2.mean(1), g2.std(1, ddof=1), 40)
    _, lo, hi = effects.cohens_d_ci(d, 40, 40)
    assert 0.93 <= covered(lo, hi, 0.5) <= 0.97
    auc = (g1[:, :, None] > g2[:, None, :]).mean(axis=(1, 2))
    _, lo, hi = effects.auc_ci(auc, 40, 40)
    assert 0.93 <= covered(lo, hi, sps.norm.cdf(0.5 / np.sqrt(2))) <= 0.97
