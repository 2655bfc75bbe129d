"""Follow-up analyses of notebook 10 (Tables 6–8, sections 5.8–5.9) on synthetic data with known answers."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from judgelab.narrative.analyses import correlations, disagreement, prediction, stability
from judgelab.narrative.analyses.inputs import narrative_table
from judgelab.narrative.judges.scores import narrative_scores
from figure_geometry import text_overlaps


def _synthetic(n_pairs=40, target="linear", seed=0, mode="simple"):
    rng = np.random.default_rng(seed)
    rows = []
    for pid in range(n_pairs):
        for method in ("maxcap", "random"):
            mn = rng.uniform(0.2, 0.8)
            mean = mn + rng.uniform(0.0, 0.2)
            length = int(rng.integers(2, 12))
            if target == "linear":
                score = 1 + 6 * mn + 4 * mean - 0.2 * length
            else:  # depends on min_coherence only, non-linearly
                score = 5 + 4 * np.sin(8 * mn)
            rows.append({"collection": "vispub", "pair_id": pid, "method": method, "mode": mode,
                         "min_coherence": mn, "mean_coherence": mean, "length": length, "score_mean": score})
    return pd.DataFrame(rows)


def test_linear_target_gives_r2_one_for_linear_model():
    t = prediction.predictive_table(_synthetic(), n_estimators=50).set_index("model")
    assert t.loc["linear", "r2_mean"] == pytest.approx(1.0, abs=1e-9)
    assert t.loc["polynomial", "r2_mean"] == pytest.approx(1.0, abs=1e-6)
    assert t.loc["ridge", "r2_mean"] > 0.95
    assert 0.3 < t.loc["random_forest", "r2_mean"] < 1.0
    assert (t["n_folds"] == 5).all() and (t["n"] == 80).all()


def test_single_feature_target_is_the_top_importance_and_its_interval_excludes_the_others():
    """The score depends on minimum coherence alone: its importance and the whole of its pair-bootstrap
    interval sit near 1, the other two features' intervals near 0."""
    imp = prediction.feature_importance_table(_synthetic(target="min_only"), n_estimators=30, n_boot=40)
    assert imp["importance"].sum() == pytest.approx(1.0)
    imp = imp.set_index("feature")
    assert imp.loc["min_coherence", "importance"] > 0.8 and imp.loc["min_coherence", "importance_ci_low"] > 0.6
    assert (imp.loc[["mean_coherence", "length"], "importance_ci_high"] < 0.3).all()
    assert (imp["importance_ci_low"] <= imp["importance_ci_high"]).all()
    assert (imp["n"] == 80).all() and (imp["n_pairs"] == 40).all() and (imp["unit"] == "endpoint pair").all()
    assert "refitted on every resample" in imp["ci_method"].iloc[0]


def test_the_importance_bootstrap_resamples_endpoint_pairs_not_narratives():
    """A pair whose two narratives are identical carries one narrative's information: the pair
    bootstrap's interval on the doubled data is about as wide as a bootstrap of the undoubled
    narratives (resampling rows would make it about 1/sqrt(2) as wide)."""
    rng = np.random.default_rng(3)
    n = 30
    X = rng.normal(size=(n, 3))
    y = X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=n)

    def width(boot):
        return float((np.quantile(boot, 0.975, axis=0) - np.quantile(boot, 0.025, axis=0)).sum())

    doubled = width(prediction.bootstrap_importances(np.repeat(X, 2, axis=0), np.repeat(y, 2),
                                                     np.repeat(np.arange(n), 2), 100, 0, 20))
    single = width(prediction.bootstrap_importances(X, y, np.arange(n), 100, 0, 20))
    assert 0.8 < doubled / single < 1.25


def test_pair_folds_keep_pairs_together():
    pairs = np.repeat(np.arange(10), 2)
    splits = stability.pair_folds(pairs, 5, seed=1)
    assert len(splits) == 5
    tested = np.concatenate([te for _, te in splits])
    assert sorted(tested) == list(range(20))                      # every row tested once
    for tr, te in splits:
        assert not set(pairs[tr]) & set(pairs[te])


def test_narrative_table_joins_scores_complexity_and_span():
    """One row per judged narrative and mode; failures counted, not scored; unjudged paths left out."""
    coords = np.array([[0, 0], [0, 1], [1, 1], [2, 2]], dtype=float)
    paths = pd.DataFrame({"collection": "vispub", "pair_id": [0, 0, 1], "method": ["maxcap", "random", "maxcap"],
                          "path": [[0, 3], [0, 1, 2], [1, 2]], "titles": [["a", "b"], ["a", "b", "c"], ["b", "c"]],
                          "length": [2, 3, 2], "min_coherence": .5, "mean_coherence": .6,
                          "coherence_var": [0.0, 0.1, 0.0], "weak_link_ratio": [0.0, 1.0, 0.0],
                          "temporal_span_days": [365.25, 730.5, 0.0]})
    scores = pd.DataFrame({"collection": "vispub", "pair_id": 0, "method": ["maxcap"] * 3 + ["random"] * 2,
                           "mode": "simple", "agent": [0, 1, 2, 0, 1], "score": [5.0, 7.0, np.nan, 2.0, np.nan],
                           "status": ["ok", "ok", "failed", "ok", "failed"]})
    long = narrative_table(paths, scores, {"vispub": coords}).set_index("method")
    assert len(long) == 2 and "titles" not in long.columns                 # pair 1 was not judged
    assert long.loc["maxcap", "score_mean"] == 6.0 and long.loc["maxcap", "score_sd"] == pytest.approx(math.sqrt(2))
    assert (long.loc["maxcap", "n_agents"], long.loc["maxcap", "n_failed"]) == (2, 1)
    assert np.isnan(long.loc["random", "score_sd"]) and long.loc["random", "n_agents"] == 1
    assert long.loc["maxcap", "path_efficiency"] == pytest.approx(1.0)
    assert long.loc["random", "path_efficiency"] == pytest.approx(math.sqrt(2) / 2)
    assert long.loc["random", "temporal_span"] == pytest.approx(2.0) and long.loc["random", "span_unit"] == "years"


def _agent_scores():
    rows = []
    for pid, agents in [(0, [5, 7]), (1, [3, 3]), (2, [9, 9])]:
        for a, s in enumerate(agents):
            rows.append({"collection": "news", "pair_id": pid, "method": "maxcap", "mode": "cot",
                         "agent": a, "score": float(s), "status": "ok"})
    return pd.DataFrame(rows)


def test_disagreement_by_score_range():
    long = narrative_scores(_agent_scores())
    t = disagreement.disagreement_by_score_range(long).set_index("score_range")
    assert t.loc["5-7", "avg_std"] == pytest.approx(math.sqrt(2))   # mean 6
    assert t.loc["3-5", "avg_std"] == 0.0                           # mean 3
    assert t.loc["9-10", "avg_std"] == 0.0                          # mean 9 (last bin closed)


def test_path_efficiency():
    coords = np.array([[0, 0], [0, 1], [1, 1], [2, 2]], dtype=float)
    assert correlations.path_efficiency([0, 3], coords) == pytest.approx(1.0)
    assert correlations.path_efficiency([0, 1, 2], coords) == pytest.approx(math.sqrt(2) / 2)
    assert correlations.path_efficiency([0, 2, 3], coords) == pytest.approx(1.0)   # collinear steps


def test_complexity_score_orders_paths():
    paths = pd.DataFrame({"collection": "news", "pair_id": [0, 1], "method": "maxcap",
                          "path": [[0, 3], [0, 1, 2]], "coherence_var": [0.0, 0.1], "weak_link_ratio": [0.0, 1.0]})
    coords = np.array([[0, 0], [0, 1], [1, 1], [2, 2]], dtype=float)
    out = correlations.add_complexity(paths, {"news": coords})
    assert out["complexity_score"].iat[1] > out["complexity_score"].iat[0]
    assert out["complexity_score"].sum() == pytest.approx(0.0)          # z-scores centre on 0


def test_temporal_analysis_units_and_sign():
    d = _synthetic(n_pairs=10)
    d["temporal_span_days"] = (1 - d["min_coherence"]) * 365.25 * 10    # longer span -> lower coherence
    t = correlations.temporal_analysis(d).set_index("target")
    assert t.loc["min_coherence", "r"] == pytest.approx(-1.0)
    assert t.loc["min_coherence", "span_unit"] == "years"
    assert correlations.temporal_span(d)["temporal_span"].max() <= 10


def test_cv_stability_on_an_exact_relation():
    d = _synthetic(n_pairs=20)
    d["score_mean"] = 2 + 10 * d["min_coherence"]
    d.loc[d["method"] == "maxcap", "min_coherence"] += 0.0
    per_fold, summary = stability.cv_stability(d, predictors=("min_coherence",))
    assert len(per_fold) == 5 * 2                                       # r and d per fold
    s = summary.set_index("quantity")
    assert s.loc["r_min_coherence", "mean_abs_diff"] == pytest.approx(0.0, abs=1e-12)
    assert s.loc["r_min_coherence", "n_folds"] == 5
    assert "d_maxcap_vs_random" in s.index


def test_evaluation_errors_zero_when_normalised_scales_agree():
    d = pd.DataFrame({"collection": "news", "mode": "simple", "score_mean": [1.0, 5.5, 10.0],
                      "min_coherence": [0.2, 0.5, 0.8]})
    e = disagreement.evaluation_errors(d)
    assert np.allclose(e["error"], 0.0)


def test_correlations_by_group():
    d = _synthetic(n_pairs=10)
    d["score_mean"] = 3 * d["mean_coherence"]
    c = correlations.correlations(d, ["mean_coherence"]).iloc[0]
    assert c["r"] == pytest.approx(1.0) and c["n"] == 20


def test_figure9_panels_draw_one_axis_per_collection():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from judgelab.narrative.analyses import figures as figs

    d = pd.concat([_synthetic(n_pairs=8, mode=m) for m in ("simple", "standard")], ignore_index=True)
    d["temporal_span_days"] = 365.25 * d["length"]
    d["score_sd"], d["complexity_score"] = 0.5, d["length"] - d["length"].mean()
    d = correlations.temporal_span(d)
    t6 = prediction.predictive_table(d, models=("linear",), n_estimators=10)
    t8 = pd.DataFrame({"collection": ["vispub", "vispub", "news", "news"], "mode": ["simple", "standard"] * 2,
                       "mean_sd": [0.2, 0.3, 0.4, 0.5]})
    panels = figs.figure9_panels(t6, t8, d)
    assert [name for name, _, _ in panels] == ["a_predictive", "b_disagreement", "c_temporal", "d_complexity",
                                               "e_errors", "f_methods"]
    for name, fig, caption in panels:
        assert caption.startswith("Fig. 9(" + name[0] + ")")
        data_axes = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
        # one panel per collection present: b draws Table 8's news and vispub, the others vispub only
        assert len(data_axes) == (2 if name == "b_disagreement" else 1)
        assert all(ax.get_title() for ax in data_axes)
        assert text_overlaps(fig) == []
        plt.close(fig)


def test_method_summary_means_by_method():
    d = pd.DataFrame({"collection": "news", "mode": "simple", "method": ["maxcap", "maxcap", "random"],
                      "min_coherence": [.6, .8, .3], "mean_coherence": [.7, .9, .4], "score_mean": [6.0, 8.0, 3.0]})
    s = disagreement.method_summary(d).set_index("method")
    assert s.loc["maxcap", "min_coherence"] == pytest.approx(0.7) and s.loc["maxcap", "n"] == 2
    assert s.loc["maxcap", "score_scaled"] == pytest.approx(0.7) and s.loc["random", "score_scaled"] == pytest.approx(0.3)
