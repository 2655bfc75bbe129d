"""Notebook 08's steps on a tiny synthetic landscape with known answers: parameter parsing, the
seed loop, the interim files, the baseline's date-rule table and the figures."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from judgelab import interim
from judgelab.narrative.landscape import store
from judgelab.narrative.landscape.coherence import coherence_matrix
from judgelab.narrative.landscape.collections import DocumentCollection
from judgelab.narrative.landscape.graph import critical_coherence
from judgelab.narrative.paths import extraction, figures
from judgelab.narrative.paths import paper_tables as math_tables
from judgelab.narrative.paths.extraction import PATH_COLUMNS
from judgelab.narrative.settings import path_settings
from figure_geometry import text_overlaps

N = 40
SEEDS = (42, 43)


def toy_landscape(n: int = N, seeds=SEEDS) -> dict:
    """What notebook 07's npz holds, for ``n`` documents in 4 topics over ~200 days; each path
    seed gets its own memberships, hence its own coherence matrix and critical value."""
    rng = np.random.default_rng(1)
    labels = np.arange(n) % 4
    emb = rng.normal(size=(n, 6)) + 2 * np.eye(6)[labels]
    dates = np.sort(rng.integers(0, 200, size=n))
    cs, crits, memberships = [], [], []
    for k, _ in enumerate(seeds):
        memb = np.full((n, 4), 0.05 + 0.05 * k)
        memb[np.arange(n), labels] = 1.0
        memb /= memb.sum(axis=1, keepdims=True)
        c = coherence_matrix(emb, memb).astype(np.float32)
        cs.append(c)
        crits.append(critical_coherence(c))
        memberships.append(memb)
    return {"coherence": cs[0], "memberships": memberships[0], "umap2d": emb[:, :2], "critical": crits[0],
            "seeds": np.array(seeds), "labels": labels, "embeddings": emb, "dates": dates,
            "jsd_base": np.e, "main_seed": seeds[0], "path_seeds": np.array(seeds),
            "coherence_by_seed": np.stack(cs), "labels_by_seed": np.stack([labels] * len(seeds)),
            "critical_path_seeds": np.array(crits), "embedding_source": "toy-vectors"}


def extract(land=None, n_pairs=8, strict_dates=True):
    land = land or toy_landscape()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")               # short strata on 40 documents
        return extraction.extract_over_seeds("news", land, [f"t{i}" for i in range(N)], n_pairs,
                                             temporal=True, strict_dates=strict_dates)


# ---------------------------------------------------------------- parameters

def test_path_settings_parse_papermill_strings():
    assert path_settings("smoke", temporal="off").temporal is False
    assert path_settings("smoke", temporal="False").temporal is False
    assert path_settings("smoke", temporal="on").temporal is True
    s = path_settings("smoke", n_pairs="5")
    assert s.n_pairs == 5 and s.pairs_for("news") == 5
    # one date rule for every collection and profile: strict (the inclusive one is a sensitivity row)
    assert all(path_settings(p).strict_dates is True for p in ("smoke", "demo", "paper"))
    assert path_settings("paper").alt_params("vispub") == "16/4" and s.alt_params("news") == "16/4"
    assert s.investigate_lengths is False and path_settings("smoke", investigate_lengths="yes").investigate_lengths
    assert path_settings("smoke", n_pairs="None").pairs_for("news") == 12     # the profile's
    with pytest.raises(ValueError, match="TEMPORAL"):
        path_settings("smoke", temporal="sometimes")
    with pytest.raises(ValueError, match="N_PAIRS"):
        path_settings("smoke", n_pairs="0")


# ---------------------------------------------------------------- the seed loop

def test_extract_over_seeds_one_extraction_per_seed():
    land = toy_landscape()
    got = extract(land)
    assert list(got.paths.columns) == PATH_COLUMNS
    assert sorted(got.paths["seed"].unique()) == list(SEEDS)
    assert list(got.rejections["seed"]) == list(SEEDS) and len(got.rejections) == len(SEEDS)
    assert list(got.baseline_rules["seed"]) == [42, 42, 43, 43]
    np.testing.assert_allclose(got.critical_by_seed, land["critical_path_seeds"])
    for k, seed in enumerate(SEEDS):
        g = got.paths[got.paths.seed == seed]
        mc = g[g.method == "maxcap"].sort_values("pair_id")
        rd = g[g.method == "random"].sort_values("pair_id")
        assert len(mc) == len(rd) == 8
        # the widest path is at least as strong as any chronological path between its endpoints
        assert (mc["min_coherence"].to_numpy() >= rd["min_coherence"].to_numpy() - 1e-7).all()
        # each seed's metrics are read from its own matrix
        c = land["coherence_by_seed"][k]
        p = mc["path"].iloc[0]
        assert mc["min_coherence"].iloc[0] == pytest.approx(min(c[u, v] for u, v in zip(p[:-1], p[1:])))
        assert (mc["min_coherence"] >= land["critical_path_seeds"][k] - 1e-7).all()
    assert got.paths[got.paths.seed == 42]["path"].tolist() != got.paths[got.paths.seed == 43]["path"].tolist()


def test_rejection_row_known_answer():
    row = extraction.rejection_row("news", 7, {"rejected": {"within_short": 2, "cross_far": 0},
                                               "shortfall": {"cross_far": 3, "hub_peripheral": 1},
                                               "weak_link_reference": 0.5})
    assert row == {"collection": "news", "seed": 7, "rejected_within_short": 2, "rejected_cross_far": 0,
                   "shortfall": 4, "weak_link_reference": 0.5}


def fake_refit(land):
    """Stand-in for the UMAP refit (UMAP needs > 49 documents): the second path seed's landscape,
    named as the requested parameter set; records the calls."""
    calls = []

    def refit(embeddings, params, seed, jsd_base="e"):
        calls.append((params, seed, jsd_base))
        return extraction.Refit(params, land["coherence_by_seed"][1], float(land["critical_path_seeds"][1]),
                                land["labels_by_seed"][1], 4)
    return refit, calls


def test_extract_study_and_save_paths_through_interim(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    refit, calls = fake_refit(toy_landscape())
    monkeypatch.setattr(extraction, "refit_landscape", refit)
    with pytest.raises(FileNotFoundError, match="notebook 07"):
        extraction.extract_study(path_settings("smoke"))
    land = toy_landscape()
    docs = pd.DataFrame({"doc": np.arange(N), "title": [f"t{i}" for i in range(N)],
                         "date": pd.Timestamp("2020-01-01") + pd.to_timedelta(land["dates"], unit="D"),
                         "text": ["x"] * N})
    store.save_documents(DocumentCollection("news", docs), land["labels"])
    store.save_landscape("news", **land)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = extraction.extract_study(path_settings("smoke", n_pairs="6"))
    assert study.main_seed == 42 and list(study.collections) == ["news"]
    assert set(study.main["seed"]) == {42} and set(study.seeds["seed"]) == {42, 43}
    assert len(study.main) == 2 * 6 and len(study.seeds) == 2 * 2 * 6
    assert study.main["titles"].iloc[0][0] == f"t{study.main['source'].iloc[0]}"
    # the sensitivity rows: the main seed's pairs, random paths redrawn under the inclusive rule
    other = study.other_rule
    assert set(other["baseline_dates"]) == {"inclusive"} and set(other["seed"]) == {42} and len(other) == 6
    assert sorted(other["pair_id"]) == sorted(study.main[study.main.method == "random"]["pair_id"])
    assert len(study.other_rule_seeds) == 2 * 6
    t1 = math_tables.table01_path_lengths(study.main, study.seeds, None, None, study.other_rule,
                                          study.other_rule_seeds, n_boot=100)
    assert list(t1["baseline_dates"]) == ["n/a (graph path)", "strict", "inclusive"]
    ov = study.overview().iloc[0]
    assert ov["path_seeds"] == [42, 43] and ov["pairs_per_seed"] == 6 and ov["embedding_source"] == "toy-vectors"
    assert ov["params"] == "32/8" and ov["alt_params"] == "16/4" and ov["baseline_dates"] == "strict"
    # the other parameter set: one refit at the main seed and base, the main seed's pairs under it
    assert calls == [("16/4", 42, np.e)]
    alt = study.alt_paths
    assert set(alt["params"]) == {"16/4"} and set(alt["seed"]) == {42} and len(alt) == 2 * 6
    # the fake refit is seed 43's landscape: every max-capacity link clears that landscape's threshold
    assert (alt[alt.method == "maxcap"]["min_coherence"] >= land["critical_path_seeds"][1] - 1e-7).all()
    written = extraction.save_paths(study)
    assert [p.name for p in written] == ["narr_paths.parquet", "narr_paths_seeds.parquet"]
    back = interim.read("narr_paths")
    assert list(back.columns) == PATH_COLUMNS and len(back) == 12
    assert list(back["path"].iloc[0]) == list(study.main["path"].iloc[0])
    assert len(interim.read("narr_paths_seeds")) == 24


# ---------------------------------------------------------------- tables

def test_baseline_rule_table_means_and_used_rule():
    rules = pd.DataFrame({"collection": "news", "seed": [1, 1, 2, 2],
                          "baseline_dates": ["inclusive", "strict"] * 2,
                          "length_gap": [0.0, 1.0, 0.5, 0.5], "random_mean_min_coherence": [.4, .3, .6, .5],
                          "d_min_coherence": [1.0, 2.0, 3.0, 4.0], "auc_min_coherence": [.7, .8, .9, 1.0]})
    t = math_tables.baseline_rule_table(rules, path_settings("smoke")).set_index("baseline_dates")
    assert t.loc["inclusive", "n_seeds"] == 2
    assert t.loc["inclusive", "length_gap"] == pytest.approx(0.25)
    assert t.loc["strict", "random_mean_min_coherence"] == pytest.approx(0.4)
    assert t.loc["strict", "d_min_coherence"] == pytest.approx(3.0)
    assert bool(t.loc["strict", "used"]) and not bool(t.loc["inclusive", "used"])   # one rule: strict
    assert t.loc["inclusive", "role"].startswith("sensitivity") and t.loc["strict", "role"].startswith("main")
    assert (t["paper_length_gap"] == 0.73).all()


def toy_table_paths(seed: int, shift: float) -> pd.DataFrame:
    """Two pairs, known lengths and coherences: maxcap lengths 3, 5; random 2, 4."""
    return pd.DataFrame({"collection": "news", "pair_id": [0, 1, 0, 1], "seed": seed,
                         "method": ["maxcap", "maxcap", "random", "random"], "length": [3, 5, 2, 4],
                         "min_coherence": [.8 + shift, .7 + shift, .5, .4],
                         "mean_coherence": [.9 + shift, .85 + shift, .6, .55]})


def test_tables_1_and_4_one_block_per_parameter_set():
    main, alt = toy_table_paths(42, 0.0), toy_table_paths(42, 0.05).assign(params="16/4")
    seeds = pd.concat([main, toy_table_paths(43, 0.01)])
    t1 = math_tables.table01_path_lengths(main, seeds, alt, {"news": "32/8"})
    assert list(t1["params"]) == ["32/8 (authors' path-comparison notebook, default)"] * 2 + \
        ["16/4 (authors' examples notebook)"] * 2
    maxcap = t1[t1.method == "maxcap"].set_index("params")
    assert (maxcap["mean"] == 4.0).all() and (maxcap["paper_mean"] == 4.70).all()
    assert maxcap["n_seeds"].tolist() == [2, 1]                 # the other set: main seed only
    t4 = math_tables.table04_math_effects(main, seeds, alt, {"news": "32/8"})
    assert t4.groupby("params").size().tolist() == [2, 2]     # min and avg coherence per set
    d_alt = t4[(t4.params.str.startswith("16/4")) & (t4.column == "min_coherence")]["d"].item()
    d_def = t4[(t4.params.str.startswith("32/8")) & (t4.column == "min_coherence")]["d"].item()
    assert d_alt > d_def                                        # the 16/4 toy paths are 0.05 stronger
    only_default = math_tables.table01_path_lengths(main, seeds)
    assert len(only_default) == 2 and only_default["params"].str.startswith("32/8").all()


def test_paper_comparison_sets_authors_critical_only_at_their_parameter_set():
    seeds = pd.concat([toy_table_paths(42, 0.0), toy_table_paths(43, 0.01)])
    crit = {"news": np.array([0.49, 0.50])}
    row = lambda t: t[t.statistic == "critical coherence"].iloc[0]
    default = row(math_tables.paper_comparison(seeds, crit, {"news": "32/8"}))
    assert np.isnan(default["paper_value"]) and "16/4" in default["paper_source"]
    theirs = row(math_tables.paper_comparison(seeds, crit, {"news": "16/4"}))
    assert theirs["paper_value"] == pytest.approx(0.4774725550696371)
    assert theirs["value_mean"] == pytest.approx(0.495)


# ---------------------------------------------------------------- figures

def toy_paths() -> pd.DataFrame:
    rows = []
    for coll in ("news", "vispub"):
        for pid in range(6):
            for method, base in (("maxcap", 0.7), ("random", 0.4)):
                rows.append({"collection": coll, "pair_id": pid, "method": method,
                             "stratum": "within_short" if pid < 3 else "cross_far",
                             "source": pid, "target": pid + 6, "length": 3 + pid % 2 + (method == "maxcap"),
                             "min_coherence": base + 0.02 * pid, "mean_coherence": base + 0.1 + 0.01 * pid,
                             "temporal_span_days": 10 * pid})
    return pd.DataFrame(rows)


def test_coherence_by_method_figure_panels_and_labels():
    fig = figures.coherence_by_method_figure(toy_paths())
    assert len(fig.axes) == 4                                   # 2 collections x (min, mean)
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["news: minimum coherence along the path", "news: average coherence along the path",
                      "vispub: minimum coherence along the path", "vispub: average coherence along the path"]
    ax = fig.axes[0]
    (legend,) = fig.legends                                      # one legend for every panel
    assert [t.get_text() for t in legend.get_texts()] == ["max capacity", "random chronological"]
    assert all(a.get_legend() is None for a in fig.axes)
    assert len(ax.patches) == 2 * 24 and ax.get_xlabel() == "min_coherence"
    # all 6 paths of each method counted
    heights = [p.get_height() for p in ax.patches]
    assert sum(heights[:24]) == 6 and sum(heights[24:]) == 6
    assert text_overlaps(fig) == []


def test_length_vs_min_coherence_one_panel_per_collection():
    fig = figures.length_vs_min_coherence_figure(toy_paths())
    assert [ax.get_title() for ax in fig.axes] == ["news", "vispub"]
    ax = fig.axes[0]
    assert len(ax.collections) == 2 and all(len(c.get_offsets()) == 6 for c in ax.collections)
    assert ax.get_xlabel() == "path length (documents)" and ax.get_ylabel() == "minimum coherence"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["max capacity", "random chronological"]
    assert text_overlaps(fig) == []
    with pytest.raises(ValueError, match="no paths"):
        figures.length_vs_min_coherence_figure(toy_paths().iloc[:0])


def test_endpoints_per_topic_known_answer():
    labels = np.array([0, 0, 1, 1, 1, 2])
    paths = pd.DataFrame({"method": ["maxcap", "maxcap", "random"], "source": [0, 1, 5], "target": [2, 3, 4]})
    docs, touched = figures.endpoints_per_topic(paths, labels)
    assert list(docs) == [2, 3, 1] and list(touched) == [2, 2, 0]


def test_endpoint_coverage_three_panels_per_collection():
    paths = toy_paths()
    labels = np.arange(12) % 3
    lands = {c: {"umap2d": np.arange(24, dtype=float).reshape(12, 2), "labels": labels} for c in ("news", "vispub")}
    fig = figures.endpoint_coverage_figure(paths, lands)
    assert len(fig.axes) == 6
    first = fig.axes[0]
    assert first.get_title() == "news: endpoints in the landscape"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["within_short", "cross_far", "documents",
                                                                  "endpoints"]
    assert len(first.collections) == 3                          # background + one per stratum
    assert fig.axes[1].get_xlabel() == "days between endpoints"
    # sources 0..5 and targets 6..11 touch every topic
    assert fig.axes[2].get_title() == "topics covered: 3 of 3"
    assert text_overlaps(fig) == []
