"""Known-answer tests of path metrics, the random baseline, endpoint sampling and effect sizes."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from judgelab.narrative.paths.baseline import (baseline_candidates, random_baselines,
                                         random_chronological_path)
from judgelab.narrative.paths.comparison import length_difference, method_effects, path_length_table
from judgelab.narrative.paths.endpoints import (STRATA, candidate_pools, orient, sample_endpoints,
                                          stratum_quotas)
from judgelab.narrative.paths.extraction import PATH_COLUMNS, extract_narratives
from judgelab.narrative.paths.metrics import path_metrics


def test_path_metrics_hand_computed():
    c = np.zeros((4, 4))
    c[0, 1], c[1, 2], c[2, 3] = 0.8, 0.5, 0.2
    dates = np.array([0, 10, 20, 45])
    m = path_metrics([0, 1, 2, 3], c, dates, weak_reference=0.6)
    assert m["length"] == 4
    assert m["min_coherence"] == pytest.approx(0.2)
    assert m["mean_coherence"] == pytest.approx(0.5)
    assert m["reliability"] == pytest.approx((0.8 * 0.5 * 0.2) ** (1 / 3))
    assert m["temporal_span_days"] == 45
    assert m["coherence_var"] == pytest.approx(np.var([0.8, 0.5, 0.2]))
    assert m["weak_link_ratio"] == pytest.approx(2 / 3)


def test_random_baseline_is_seeded_and_chronological():
    rng = np.random.default_rng(5)
    dates = np.sort(rng.integers(0, 100, size=60))
    pairs = [(0, 59), (3, 40), (10, 11), (20, 55)]
    a = random_baselines(pairs, dates, np.array([4, 6, 5, 3]), seed=7)
    b = random_baselines(pairs, dates, np.array([4, 6, 5, 3]), seed=7)
    c = random_baselines(pairs, dates, np.array([4, 6, 5, 3]), seed=8)
    assert a == b and a != c
    for (s, t), path in zip(pairs, a):
        assert path[0] == s and path[-1] == t and len(set(path)) == len(path)
        assert all(dates[u] <= dates[v] for u, v in zip(path[:-1], path[1:]))
        inner = path[1:-1]
        assert all(dates[s] <= dates[x] <= dates[t] for x in inner)


def test_random_baseline_length_clipped_to_what_exists():
    dates = np.array([0, 1, 2, 3, 50])
    rng = np.random.default_rng(0)
    path = random_chronological_path(0, 3, dates, length_mean=30, length_sd=0, rng=rng)
    assert path == [0, 1, 2, 3]                       # only 2 documents in between
    path = random_chronological_path(0, 3, dates, length_mean=-5, length_sd=0, rng=rng)
    assert path == [0, 3]
    assert list(baseline_candidates(0, 4, dates)) == [1, 2, 3]
    with pytest.raises(ValueError, match="chronologically"):
        baseline_candidates(4, 0, dates)


def test_random_baseline_length_distribution_follows_normal():
    dates = np.arange(400)
    lengths = np.array([3, 5, 7, 5, 4, 6])
    paths = random_baselines([(0, 399)] * 2000, dates, lengths, seed=1, pair_ids=list(range(2000)))
    got = np.array([len(p) for p in paths])
    assert got.mean() == pytest.approx(lengths.mean(), abs=0.15)
    assert got.std(ddof=1) == pytest.approx(lengths.std(ddof=1), abs=0.15)


def test_stratum_quotas_follow_paper_proportions():
    assert stratum_quotas(200) == {"within_short": 40, "within_long": 40, "cross_close": 40,
                                   "cross_far": 40, "hub_peripheral": 20, "spatial_extremes": 20}
    assert stratum_quotas(100)["hub_peripheral"] == 10
    q = stratum_quotas(12)
    assert sum(q.values()) == 12 and all(v >= 1 for v in q.values())


def _toy_collection(n=80, seed=3):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 4, size=n)
    dates = np.sort(rng.integers(0, 300, size=n))
    emb = rng.normal(size=(n, 6)) + labels[:, None]
    c = rng.random((n, n)).astype(np.float32) * 0.5 + 0.5
    c = np.triu(c, 1)
    c = c + c.T
    return labels, dates, emb, c


def test_candidate_pools_definitions():
    labels, dates, emb, c = _toy_collection()
    deg = np.arange(len(labels))
    pools = candidate_pools(labels, dates, deg, emb)
    assert list(pools) == list(STRATA)
    for name, (s, t) in pools.items():
        assert len(s) > 0, name
        assert np.all((dates[s] < dates[t]) | ((dates[s] == dates[t]) & (s < t)))
    s, t = pools["within_short"]
    assert np.all(labels[s] == labels[t])
    s, t = pools["cross_far"]
    assert np.all(labels[s] != labels[t])
    short = np.abs(dates[pools["within_short"][0]] - dates[pools["within_short"][1]]).max()
    long_ = np.abs(dates[pools["within_long"][0]] - dates[pools["within_long"][1]]).min()
    assert short <= long_


def test_sample_endpoints_proportions_and_rejection():
    labels, dates, emb, c = _toy_collection()
    pools = candidate_pools(labels, dates, np.arange(len(labels)), emb)

    def path_fn(s, t):       # pairs with an odd source have "no path"
        return None if s % 2 else [s, t]

    out = sample_endpoints(pools, 50, path_fn, seed=11)
    counts = out["stratum"].value_counts().to_dict()
    assert counts == stratum_quotas(50)
    assert (out["source"] % 2 == 0).all()
    assert not out.duplicated(["source", "target"]).any()
    assert sum(out.attrs["rejected"].values()) > 0
    again = sample_endpoints(pools, 50, path_fn, seed=11)
    assert out[["source", "target"]].equals(again[["source", "target"]])


def test_sample_endpoints_records_shortfall():
    pools = {k: (np.array([0]), np.array([1])) for k in STRATA}
    with pytest.warns(UserWarning, match="pairs"):
        out = sample_endpoints(pools, 20, lambda s, t: [s, t], seed=0)
    assert len(out) == 1 and sum(out.attrs["shortfall"].values()) == 19


def test_extract_narratives_schema_and_semantics():
    labels, dates, emb, c = _toy_collection(n=60)
    out = extract_narratives("toy", c, 0.6, dates, [f"t{i}" for i in range(60)], labels, emb,
                             n_pairs=10, seed=4)
    assert list(out.columns) == PATH_COLUMNS
    mc, rd = out[out.method == "maxcap"], out[out.method == "random"]
    assert len(mc) == len(rd) == 10
    assert (mc["min_coherence"].to_numpy() >= 0.6).all()
    for rec in out.itertuples():
        assert rec.path[0] == rec.source and rec.path[-1] == rec.target
        assert all(dates[u] <= dates[v] for u, v in zip(rec.path[:-1], rec.path[1:]))
        assert rec.length == len(rec.path) and rec.titles[0] == f"t{rec.source}"
    # the max-capacity path is at least as strong as the random one on the same endpoints
    assert (mc["min_coherence"].to_numpy() >= rd["min_coherence"].to_numpy() - 1e-12).all()


def test_cohens_d_and_auc_known_values():
    df = pd.DataFrame({"collection": "c", "method": ["maxcap"] * 3 + ["random"] * 3, "pair_id": [0, 1, 2] * 2,
                       "min_coherence": [.9, .8, .7, .6, .75, .5], "mean_coherence": [2.0, 4.0, 6.0, 1.0, 2.0, 3.0],
                       "length": [2, 3, 4, 2, 2, 5]})
    eff = method_effects(df).set_index("column")
    # mean coherence: means 4 and 2; pooled SD = sqrt((2*4 + 2*1)/4) = sqrt(2.5) = the average SD (n1 = n2)
    assert eff.loc["mean_coherence", "d"] == pytest.approx(2 / math.sqrt(2.5))
    assert eff.loc["mean_coherence", "d_avg_sd"] == pytest.approx(2 / math.sqrt(2.5))
    assert eff.loc["min_coherence", "auc"] == pytest.approx(8 / 9)   # 8 of 9 pairs ordered right
    assert eff.loc["mean_coherence", "auc"] == pytest.approx(7.5 / 9)      # the tie (2, 2) counts 1/2
    t1 = path_length_table(df).set_index("method")
    assert t1.loc["maxcap", "mean"] == 3 and t1.loc["random", "max"] == 5


def test_method_effects_drop_a_missing_metric_value():
    """One NaN metric value is dropped and counted: d stays defined and sklearn never sees NaN."""
    df = pd.DataFrame({"collection": "c", "method": ["maxcap"] * 4 + ["random"] * 3, "pair_id": [0, 1, 2, 3, 0, 1, 2],
                       "min_coherence": [.9, .8, .7, np.nan, .6, .75, .5],
                       "mean_coherence": [2.0, 4.0, 6.0, 5.0, 1.0, 2.0, 3.0], "length": [2, 3, 4, 3, 2, 2, 5]})
    eff = method_effects(df).set_index("column")
    mc, rd = np.array([.9, .8, .7]), np.array([.6, .75, .5])
    pooled = math.sqrt((2 * mc.var(ddof=1) + 2 * rd.var(ddof=1)) / 4)
    assert eff.loc["min_coherence", "d"] == pytest.approx((mc.mean() - rd.mean()) / pooled)
    assert eff.loc["min_coherence", "auc"] == pytest.approx(8 / 9)
    assert eff.loc["min_coherence", "note"].startswith("NaN dropped: 1")
    assert eff.loc["mean_coherence", "note"].startswith("NaN dropped: 1")   # pair 3 has no random path
    diff = length_difference(df).iloc[0]
    # the paired gap over the 3 pairs with both paths: lengths (2, 3, 4) - (2, 2, 5) = (0, 1, -1)
    assert diff["difference"] == pytest.approx(0.0) and diff["n_pairs"] == 3 and 0 <= diff["p_value"] <= 1
    assert "1 pairs without both paths" in diff["note"]


def test_random_baseline_strict_dates_excludes_endpoint_days():
    dates = np.array([0, 0, 1, 2, 2, 3])
    assert list(baseline_candidates(1, 4, dates)) == [2]                     # strict: the main rule
    assert list(baseline_candidates(1, 4, dates, strict=False)) == [0, 2, 3]   # inclusive: sensitivity
    rng = np.random.default_rng(0)
    path = random_chronological_path(1, 4, dates, length_mean=10, length_sd=0, rng=rng)
    assert path == [1, 2, 4]                     # L clipped to 2 + #candidates: what exists


def test_baseline_rule_sensitivity_reproduces_the_used_rule():
    from judgelab.narrative.paths.extraction import baseline_rule_sensitivity, other_rule_randoms
    labels, dates, emb, c = _toy_collection(n=60)
    dates = dates // 20                                   # many shared dates
    titles = [str(i) for i in range(60)]
    out = extract_narratives("toy", c, 0.6, dates, titles, labels, emb, n_pairs=10, seed=4)
    other = other_rule_randoms(out, c, dates, titles)
    assert set(other["baseline_dates"]) == {"inclusive"} and list(other.columns[:-1]) == PATH_COLUMNS
    rules = baseline_rule_sensitivity(out, other).set_index("baseline_dates")
    rd = out[out.method == "random"]
    assert rules.loc["strict", "random_mean_min_coherence"] == pytest.approx(rd["min_coherence"].mean())
    assert rules.loc["inclusive", "random_mean_min_coherence"] == pytest.approx(other["min_coherence"].mean())
    assert set(rules.index) == {"strict", "inclusive"}
    # the same seed redrawn inclusively: the inclusive extraction's random paths, exactly
    incl = extract_narratives("toy", c, 0.6, dates, titles, labels, emb, n_pairs=10, seed=4, strict_dates=False)
    assert other.sort_values("pair_id")["path"].tolist() == incl[incl.method == "random"].sort_values("pair_id")["path"].tolist()
    # strict intermediates never share an endpoint's date; inclusive ones may
    for rec in out[out.method == "random"].itertuples():
        assert all(dates[rec.source] < dates[x] < dates[rec.target] for x in rec.path[1:-1])
