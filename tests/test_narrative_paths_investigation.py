"""Known-answer tests of the Narrative Trails comparisons: the one baseline date rule, the
parameter sets, and the path-length investigation (one factor at a time)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from judgelab import profiles
from judgelab.narrative.landscape.coherence import coherence_matrix
from judgelab.narrative.landscape.graph import critical_coherence, temporal_mask
from judgelab.narrative.landscape.projection import Landscape
from judgelab.narrative.paths import length_investigation as li
from judgelab.narrative.paths import extraction
from judgelab.narrative.paths.baseline import baseline_candidates
from judgelab.narrative.paths.widest import widest_path
from judgelab.narrative.settings import (BASELINE_DATES, CRITICAL_PARAMS, DEFAULT_PARAMS,
                                         PARAM_SETS, params_key, params_label)


# ---------------------------------------------------------------- the baseline's date rule

def test_inclusive_rule_gives_the_random_path_the_max_capacity_candidates_strict_excludes_endpoint_days():
    # hand-built dates: the endpoints 1 (day 0) and 5 (day 2) share their days with 0, 2 and 4, 6
    dates = np.array([0, 0, 0, 1, 2, 2, 3])
    s, t = 1, 5
    # the documents a max-capacity path from s to t may pass through under the graph's rule
    # (date_u <= date_v, same day allowed): reachable from s and reaching t in time
    allowed = temporal_mask(dates)
    graph_candidates = [v for v in range(len(dates)) if v not in (s, t) and allowed[s, v] and allowed[v, t]]
    assert graph_candidates == [0, 2, 3, 4]                      # by hand: days 0, 0, 1, 2
    assert list(baseline_candidates(s, t, dates, strict=False)) == graph_candidates   # the sensitivity row
    assert list(baseline_candidates(s, t, dates)) == [3]           # the main rule: strictly between


def test_one_date_rule_for_every_profile_and_collection():
    assert BASELINE_DATES == "strict"
    for knobs in (profiles.knobs("narrative", p) for p in profiles.PROFILES):
        assert knobs["baseline_dates"] == "strict"
        assert all("baseline_strict_dates" not in c for c in knobs["collections"].values())


# ---------------------------------------------------------------- parameter sets

def test_parameter_sets_by_provenance():
    assert DEFAULT_PARAMS == "32/8" and CRITICAL_PARAMS == "16/4"
    assert (PARAM_SETS["32/8"]["n_neighbors"], PARAM_SETS["32/8"]["min_cluster_size"]) == (32, 8)
    assert (PARAM_SETS["16/4"]["n_neighbors"], PARAM_SETS["16/4"]["min_cluster_size"]) == (16, 4)
    assert params_key(32, 8) == "32/8" and params_key(5, 3) == "5/3"
    assert params_label("32/8") == "32/8 (authors' path-comparison notebook, default)"
    assert params_label("16/4") == "16/4 (authors' examples notebook)" and params_label("5/3") == "5/3"
    for knobs in (profiles.knobs("narrative", p) for p in profiles.PROFILES):
        for c in knobs["collections"].values():
            assert params_key(c["n_neighbors"], c["min_cluster_size"]) == "32/8" and c["alt_params"] == "16/4"
    with pytest.raises(ValueError, match="unknown parameter set"):
        extraction.refit_landscape(np.zeros((60, 4)), "8/2", 42)


def fake_fit(embeddings, *, n_neighbors, min_cluster_size, seed):
    """Deterministic stand-in for UMAP + HDBSCAN: min_cluster_size topics by document index."""
    n, k = len(embeddings), int(min_cluster_size)
    labels = np.arange(n) % k
    memb = np.full((n, k), 0.1)
    memb[np.arange(n), labels] = 1.0
    memb /= memb.sum(axis=1, keepdims=True)
    return Landscape(embeddings[:, :2], memb, labels, labels, int(seed), {})


def test_refit_landscape_is_eq1_on_the_named_set(monkeypatch):
    monkeypatch.setattr(extraction, "fit_landscape", fake_fit)
    emb = np.random.default_rng(0).normal(size=(30, 6))
    r = extraction.refit_landscape(emb, "16/4", 42, 2)
    assert r.params == "16/4" and r.n_topics == 4 and list(r.labels[:5]) == [0, 1, 2, 3, 0]
    c = coherence_matrix(emb, fake_fit(emb, n_neighbors=16, min_cluster_size=4, seed=42).memberships, 2.0)
    np.testing.assert_allclose(r.coherence, c)
    assert r.critical == pytest.approx(critical_coherence(c))


# ---------------------------------------------------------------- path-length investigation

def test_strict_same_day_removes_only_same_day_edges_known_path():
    dates = np.array([0, 0, 1, 2])
    c = np.zeros((4, 4))
    for u, v, w in ((0, 1, .9), (1, 2, .9), (2, 3, .9), (0, 3, .5)):
        c[u, v] = c[v, u] = w
    assert widest_path(c, 0, 3, threshold=0.5, dates=dates)[0] == [0, 1, 2, 3]
    strict = li.strict_same_day(c, dates)
    assert strict[0, 1] == strict[1, 0] == -np.inf and c[0, 1] == 0.9          # a copy
    np.testing.assert_array_equal(strict[2:, 2:], c[2:, 2:])
    assert widest_path(strict, 0, 3, threshold=0.5, dates=dates)[0] == [0, 3]


def test_uniform_pool_holds_every_pair_oriented_in_time():
    src, tgt = li.uniform_pool(4, np.array([3, 1, 2, 1]))["all"]
    assert sorted(zip(src.tolist(), tgt.tolist())) == [(1, 0), (1, 2), (1, 3), (2, 0), (3, 0), (3, 2)]


def toy_inputs(n: int = 64):
    rng = np.random.default_rng(3)
    emb = rng.normal(size=(n, 6)) + 2 * np.eye(6)[np.arange(n) % 4]
    dates = np.sort(rng.integers(0, 20, size=n))                   # many shared days
    return emb, dates


def test_path_length_investigation_one_factor_at_a_time(monkeypatch):
    monkeypatch.setattr(li, "fit_landscape", fake_fit)
    emb, dates = toy_inputs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                             # short strata on 64 documents
        t = li.path_length_investigation(emb, dates, n_pairs=10, seed=5, paper_mean=4.70)
        memb = fake_fit(emb, n_neighbors=32, min_cluster_size=8, seed=5).memberships
        c = coherence_matrix(emb, memb, math.e)
        crit = critical_coherence(c)
        labels = np.arange(len(emb)) % 8
        default = li.maxcap_lengths(c, crit, dates, labels, emb, 10, 5)
        strict = li.maxcap_lengths(li.strict_same_day(c, dates), crit, dates, labels, emb, 10, 5)
    assert list(t["factor"]) == ["default", "parameter set", "JSD base", "graph temporal rule", "time cut-off",
                                 "degree cut-off", "spatial cut-off", "strata"]
    assert t["setting"].iloc[1] == "16/4" and t["setting"].iloc[2] == "2"
    assert t["mean_length"].iloc[0] == pytest.approx(default["length"].mean())
    assert t["mean_length"].iloc[3] == pytest.approx(strict["length"].mean())
    np.testing.assert_allclose(t["difference"], t["mean_length"] - t["mean_length"].iloc[0])
    assert t["difference"].iloc[0] == 0 and (t["paper_mean"] == 4.70).all()
    assert (t["n_pairs"] <= 10).all() and (t["mean_length"] >= 2).all()
    assert np.isnan(t["mean_within_short"].iloc[-1])                # no strata: no per-stratum means
    assert default["stratum"].isin(["within_short", "within_long", "cross_close", "cross_far",
                                    "hub_peripheral", "spatial_extremes"]).all()
