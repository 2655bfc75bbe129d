"""judgelab.stats.resampling: weighted statistics equal the statistic of the replicated data
(brute force against the floor's implementations), the cluster bootstrap keeps clusters whole,
intervals contain their estimates and recover a planted effect, Holm/Bonferroni by hand."""
import numpy as np
import pandas as pd
import pytest

from judgelab.stats import resampling as rs
from judgelab.stats.correlation import correlation
from judgelab.stats.effects import auc, cohens_d
from judgelab.stats.reliability import icc
from judgelab.stats.tests import adjust


def test_cluster_weights_keep_a_cluster_whole_and_sum_to_the_rows():
    clusters = np.array([0, 0, 1, 1, 2, 2])
    w = rs.cluster_weights(clusters, n_boot=50, seed=1)
    assert w.shape == (50, 6)
    assert (w[:, 0] == w[:, 1]).all() and (w[:, 4] == w[:, 5]).all()
    assert (w.sum(axis=1) == 6).all()           # G clusters of 2 rows drawn -> 6 rows
    assert np.array_equal(w, rs.cluster_weights(clusters, n_boot=50, seed=1))   # seeded


def _replicate(x, w):
    return np.repeat(np.asarray(x, float), w)


def test_weighted_d_auc_pearson_equal_the_replicated_data():
    rng = np.random.default_rng(0)
    x, y = rng.normal(1, 1, 7).round(1), rng.normal(0, 2, 7).round(1)
    w = rng.integers(0, 3, size=(5, 7))
    w[:, :3] = np.maximum(w[:, :3], 1)
    d = rs.weighted_cohens_d(x, w, y, w)
    a = rs.weighted_auc(x, w, y, w)
    r = rs.weighted_pearson(x, y, w)
    for b in range(5):
        xb, yb = _replicate(x, w[b]), _replicate(y, w[b])
        assert d[b] == pytest.approx(cohens_d(xb, yb)["d"].item(), abs=1e-12)
        assert a[b] == pytest.approx(auc(xb, yb)["auc"].item(), abs=1e-12)
        assert r[b] == pytest.approx(correlation(xb, yb)["r"].item(), abs=1e-12)


def test_auc_hand_worked_with_ties():
    # x = [1, 2], y = [1, 0]: pairs (1>1? tie 0.5), (1>0: 1), (2>1: 1), (2>0: 1) -> 3.5 / 4
    one = np.ones((1, 2), int)
    assert rs.weighted_auc(np.array([1.0, 2.0]), one, np.array([1.0, 0.0]), one)[0] == pytest.approx(0.875)


def test_d_is_finite_when_only_one_group_is_constant_and_nan_when_both_are():
    one = np.ones((1, 4), int)
    const, spread = np.array([3.0, 3, 3, 3]), np.array([5.0, 6, 7, 8])
    # pooled SD = sqrt((0 + 3 * var(spread)) / 6), var = 5/3 -> s = sqrt(5/6); d = (6.5 - 3) / s
    assert rs.weighted_cohens_d(spread, one, const, one)[0] == pytest.approx(3.5 / np.sqrt(5 / 6))
    # exact means 4.0 and 3.0 from non-representable sums: both constant -> NaN, not 1e16
    a, b = np.full(4, 0.1 * 3) * 40 / 3, np.full(4, 3.0)
    assert np.isnan(rs.weighted_cohens_d(a, one, b, one)[0])


def test_weighted_icc_equals_the_floor_on_replicated_items():
    rng = np.random.default_rng(3)
    m = rng.integers(1, 10, size=(6, 3)).astype(float)
    w = np.array([[1, 1, 1, 1, 1, 1], [2, 0, 1, 1, 2, 0], [0, 3, 1, 1, 0, 1]])
    i1, ik = rs.weighted_icc2(m, w)
    for b in range(3):
        rep = np.repeat(m, w[b], axis=0)
        long = pd.DataFrame(rep).rename_axis("item").reset_index().melt(id_vars="item", var_name="rater",
                                                                       value_name="score")
        ref = icc(long, "item", "rater", "score", forms=("ICC2", "ICC2k")).set_index("form")["icc"]
        assert i1[b] == pytest.approx(ref["ICC2"], abs=1e-12)
        assert ik[b] == pytest.approx(ref["ICC2k"], abs=1e-12)


def test_planted_difference_is_recovered_by_the_pair_bootstrap_interval():
    rng = np.random.default_rng(7)
    n = 200
    pair_effect = rng.normal(0, 1, n)            # shared by both paths of a pair
    x = pair_effect + 1.0 + rng.normal(0, 0.5, n)
    y = pair_effect + rng.normal(0, 0.5, n)
    w = rs.cluster_weights(np.arange(n), n_boot=2000, seed=0)
    est = rs.weighted_mean(x - y, np.ones((1, n), int))[0]
    iv = rs.percentile_interval(rs.weighted_mean(x - y, w))
    assert iv.low < 1.0 < iv.high                 # the planted difference
    assert iv.low < est < iv.high                 # and its own estimate
    assert iv.n_boot_valid == 2000
    # the paired interval is much narrower than the interval ignoring the pairing would be
    assert iv.high - iv.low < 0.25


def test_interval_is_nan_when_the_statistic_is_mostly_undefined():
    iv = rs.percentile_interval(np.r_[np.full(60, np.nan), np.arange(40.0)])
    assert np.isnan(iv.low) and iv.n_boot_valid == 40


def test_adjust_p_holm_and_bonferroni_by_hand_with_nan():
    p = [0.01, 0.04, np.nan, 0.03]
    holm, bonf = adjust(p, len(p), "holm"), adjust(p, len(p), "bonferroni")
    # the family is all 4 tests (the undefined one enters as p = 1, so the family never shrinks):
    # sorted 0.01, 0.03, 0.04, 1 -> Holm 4*0.01 = 0.04, max(0.04, 3*0.03) = 0.09, max(0.09, 2*0.04) = 0.09
    assert holm[[0, 3, 1]] == pytest.approx([0.04, 0.09, 0.09])
    assert bonf[[0, 3, 1]] == pytest.approx([0.04, 0.12, 0.16])
    assert np.isnan(holm[2]) and np.isnan(bonf[2])
