"""Notebook 07's steps on small synthetic collections with known answers: parameter parsing, one
fit per seed reused across JSD bases, the tables, the interim files and the figures."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from judgelab.narrative.landscape import build, comparison, figures, store, summaries
from judgelab.narrative.landscape.coherence import coherence_matrix, offdiagonal
from judgelab.narrative.landscape.collections import DocumentCollection
from judgelab.narrative.landscape.graph import critical_coherence
from judgelab.narrative.paths.paper_values import AUTHORS_CRITICAL_NEWS
from judgelab.narrative.landscape.projection import Landscape
from judgelab.narrative.settings import landscape_settings
from figure_geometry import text_overlaps

KNOBS = {"n_neighbors": 5, "min_cluster_size": 3, "embedding": "precomputed"}


def toy_collection(n: int = 24, name: str = "toy", k: int = 3, seed: int = 0) -> DocumentCollection:
    """``n`` documents in ``k`` noisy clusters of 6-d embeddings, one every 10 days."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(k, 6)) * 3
    emb = centres[np.arange(n) % k] + rng.normal(size=(n, 6))
    docs = pd.DataFrame({"doc": np.arange(n), "title": [f"t{i}" for i in range(n)],
                         "date": pd.Timestamp("2020-01-01") + pd.to_timedelta(10 * np.arange(n), unit="D"),
                         "text": [f"text {i}" for i in range(n)]})
    return DocumentCollection(name, docs, emb, "toy-vectors")


def fake_fit(calls: list):
    """A deterministic stand-in for UMAP + HDBSCAN (which need ~50+ documents and a minute of
    numba compilation): topic = document index mod 3, soft memberships that depend on the seed.
    Records every call so the tests can count fits."""
    def fit(embeddings, *, n_neighbors, min_cluster_size, seed):
        calls.append(seed)
        n = len(embeddings)
        labels = np.arange(n) % 3
        memb = np.full((n, 3), 0.1 + 0.01 * (seed % 5))
        memb[np.arange(n), labels] = 1.0
        memb /= memb.sum(axis=1, keepdims=True)
        hl = labels.copy()
        hl[0] = -1                                   # one noise point
        return Landscape(embeddings[:, :2], memb, memb.argmax(axis=1), hl, int(seed), {})
    return fit


@pytest.fixture
def fits(monkeypatch):
    calls: list[int] = []
    monkeypatch.setattr(build, "fit_landscape", fake_fit(calls))
    return calls


def toy_study(collections: dict[str, DocumentCollection], seeds=(42, 43, 44), bases=("e", 2), keep=2,
              knobs=KNOBS):
    settings = replace(landscape_settings("smoke", seed=seeds[0], sensitivity_seeds=len(seeds)),
                       collections=list(collections), jsd_base=bases[0], bases=list(bases))
    built = {}
    for name, col in collections.items():
        b = build.build_collection_landscapes(col, knobs, list(seeds), list(bases), keep=keep)
        b.umap2d = col.embeddings[:, :2]
        built[name] = b
    return build.LandscapeStudy(settings, built)


# ---------------------------------------------------------------- parameters

def test_landscape_settings_parse_papermill_strings():
    s = landscape_settings("smoke", collections="news", jsd_base="2", seed="7", sensitivity_seeds="3")
    assert s.collections == ["news"] and s.seed == 7 and s.seeds == [7, 8, 9]
    assert s.bases == ["2", "e"] and s.jsd_base == "2"
    d = landscape_settings("smoke", collections="None", seed=None, sensitivity_seeds="none")
    assert d.seed == 42 and d.seeds == [42, 43] and d.bases == ["e", 2] and d.collections == ["news"]
    assert d.path_seeds("news") == 2
    with pytest.raises(ValueError, match="vispub"):
        landscape_settings("smoke", collections="news,vispub")
    with pytest.raises(ValueError, match="SEED"):
        landscape_settings("smoke", seed="forty-two")
    with pytest.raises(ValueError, match="jsd_base"):
        landscape_settings("smoke", jsd_base="1")


# ---------------------------------------------------------------- build

def test_one_fit_per_seed_and_every_base_from_it(fits):
    col = toy_collection()
    seeds, bases = [42, 43, 44], ["e", 2]
    built = build.build_collection_landscapes(col, KNOBS, seeds, bases, keep=2)
    assert fits == seeds                                      # never refitted for the second base
    sens = built.sensitivity
    assert len(sens) == len(seeds) * len(bases)
    assert list(sens[["seed", "jsd_base"]].itertuples(index=False, name=None)) == \
        [(42, "e"), (42, "2"), (43, "e"), (43, "2"), (44, "e"), (44, "2")]
    assert list(built.main_by_base) == ["e", "2"] and built.jsd_base == "e" and built.main_seed == 42
    assert sorted(built.path_runs) == [42, 43]
    assert built.path_runs[42] is built.main                  # the same run, not a rebuild
    # the main run is eq. 1 on the fit's memberships, and its critical value the MST bottleneck
    c = coherence_matrix(col.embeddings, built.main.landscape.memberships, math.e)
    np.testing.assert_allclose(built.main.coherence, c)
    assert built.main.critical == pytest.approx(critical_coherence(c))
    # JSD_2 = JSD_e / sqrt(ln 2) >= JSD_e, so every theta and the critical value fall in base 2
    assert np.all(built.main_by_base["2"].coherence <= built.main.coherence + 1e-12)
    crit = sens.set_index(["seed", "jsd_base"])["critical"]
    for s in seeds:
        assert crit[(s, "2")] <= crit[(s, "e")]
    assert sens["noise_share"].iloc[0] == pytest.approx(1 / len(col))
    assert (sens["complete_edges"] == len(col) * (len(col) - 1) // 2).all()


def test_build_needs_a_seed(fits):
    with pytest.raises(ValueError, match="no UMAP seed"):
        build.build_collection_landscapes(toy_collection(), KNOBS, [], ["e"])


# ---------------------------------------------------------------- tables

AUTHORS_KNOBS = {**KNOBS, "n_neighbors": 16, "min_cluster_size": 4}    # their examples notebook
DEFAULT_KNOBS = {**KNOBS, "n_neighbors": 32, "min_cluster_size": 8}    # their path-comparison notebook


def test_critical_table_sets_authors_value_only_beside_a_comparable_landscape(fits):
    cols = {"news": toy_collection(540, "news"), "toy": toy_collection(30, "toy")}
    study = toy_study(cols, knobs=AUTHORS_KNOBS)
    t = comparison.critical_coherence_table(study).set_index(["collection", "jsd_base"])
    sens = study.sensitivity
    news_e = sens[(sens.collection == "news") & (sens.jsd_base == "e")]["critical"]
    assert t.loc[("news", "e"), "n_seeds"] == 3
    assert t.loc[("news", "e"), "mean"] == pytest.approx(news_e.mean())
    assert t.loc[("news", "e"), "sd"] == pytest.approx(news_e.std(ddof=1))
    assert t.loc[("news", "e"), "critical_main_seed"] == pytest.approx(news_e.iloc[0])
    assert t.loc[("news", "e"), "paper_value"] == AUTHORS_CRITICAL_NEWS
    assert t.loc[("news", "e"), "params"] == "16/4 (authors' examples notebook)"
    assert "their machine" in t.loc[("news", "e"), "paper_source"]
    assert np.isnan(t.loc[("news", "2"), "paper_value"]) and t.loc[("news", "2"), "paper_source"] == ""
    assert np.isnan(t.loc[("toy", "e"), "paper_value"])
    assert (t["main_seed"] == 42).all() and (t["embedding"] == "toy-vectors").all()
    assert comparison.authors_reference(study) == AUTHORS_CRITICAL_NEWS
    smoke = toy_study({"news": toy_collection(140, "news")}, knobs=AUTHORS_KNOBS)   # a subset is not comparable
    assert comparison.authors_reference(smoke) is None
    assert comparison.critical_coherence_table(smoke)["paper_value"].isna().all()
    # the default set (32/8) is not the one the authors' value came from: no paper value beside it
    default = toy_study({"news": toy_collection(540, "news")}, knobs=DEFAULT_KNOBS)
    assert comparison.critical_coherence_table(default)["paper_value"].isna().all()
    assert comparison.authors_reference(default) is None


def test_authors_critical_comparison_runs_their_parameters_here(fits, monkeypatch):
    params_seen = []
    real = build.fit_landscape

    def recording_fit(embeddings, *, n_neighbors, min_cluster_size, seed):
        params_seen.append((n_neighbors, min_cluster_size, seed))
        return real(embeddings, n_neighbors=n_neighbors, min_cluster_size=min_cluster_size, seed=seed)
    monkeypatch.setattr(build, "fit_landscape", recording_fit)
    col = toy_collection(540, "news")
    study = toy_study({"news": col}, knobs=DEFAULT_KNOBS)
    params_seen.clear()
    row = comparison.authors_critical_comparison(study).iloc[0]
    # one refit per UMAP seed of the study, at the authors' set
    assert params_seen == [(16, 4, 42), (16, 4, 43), (16, 4, 44)]
    expected = build.build_landscape(col, AUTHORS_KNOBS, 42, "e").critical
    assert row["value"] == pytest.approx(expected) and row["value_source"] == "authors' method run here"
    # over the seeds: one new seed's 95% prediction interval, mean -+ t(2, .975) sd sqrt(1 + 1/3)
    v = np.array([build.build_landscape(col, AUTHORS_KNOBS, s, "e").critical for s in (42, 43, 44)])
    half = 4.302653 * v.std(ddof=1) * np.sqrt(4 / 3)
    assert row["n_seeds"] == 3 and row["seeds_mean"] == pytest.approx(v.mean())
    assert (row["seeds_pi_low"], row["seeds_pi_high"]) == pytest.approx((v.mean() - half, v.mean() + half), rel=1e-6)
    assert row["paper_value"] == AUTHORS_CRITICAL_NEWS and "their machine" in row["paper_source"]
    assert row["difference"] == pytest.approx(expected - AUTHORS_CRITICAL_NEWS)
    assert row["params"] == "16/4 (authors' examples notebook)"
    # already at the authors' set: the main run's value, no refit
    theirs = toy_study({"news": col}, knobs=AUTHORS_KNOBS)
    params_seen.clear()
    assert comparison.authors_method_here(theirs) == pytest.approx(theirs.collections["news"].main_by_base["e"].critical)
    sens = theirs.collections["news"].sensitivity
    assert comparison.authors_method_here(theirs, seed=43) == pytest.approx(
        sens[(sens.seed == 43) & (sens.jsd_base == "e")]["critical"].item())
    assert params_seen == []
    # a subset: computed, but nothing to compare with
    sub = comparison.authors_critical_comparison(toy_study({"news": toy_collection(140, "news")}, knobs=DEFAULT_KNOBS))
    assert np.isnan(sub["paper_value"].item()) and sub["paper_source"].item() == ""
    assert comparison.authors_critical_comparison(toy_study({"toy": toy_collection(30)})).empty


def test_jsd_base_effect_and_sparsity_read_the_kept_runs(fits):
    study = toy_study({"toy": toy_collection(30)})
    before = len(fits)
    eff = summaries.jsd_base_effects(study).set_index("jsd_base")
    sp = summaries.graph_sparsity(study)
    assert len(fits) == before                                  # nothing refitted
    built = study.collections["toy"]
    vals = offdiagonal(built.main.coherence)
    assert eff.loc["e", "theta_min"] == pytest.approx(vals.min())
    assert eff.loc["e", "theta_median"] == pytest.approx(np.median(vals))
    assert eff.loc["e", "critical"] == built.main.critical
    assert eff.loc["e", "spearman_vs_e"] == pytest.approx(1.0)
    assert eff.loc["2", "theta_mean"] < eff.loc["e", "theta_mean"]
    assert eff.loc["2", "critical"] <= eff.loc["e", "critical"]
    row = sp.iloc[0]
    assert len(sp) == 1 and row["n_nodes"] == 30 and row["critical"] == built.main.critical
    assert row["n_edges"] == row["temporal_directed_edges"]
    assert bool(row["weakly_connected"])                        # the critical value keeps it connected


def test_overview_one_row_per_collection(fits):
    study = toy_study({"a": toy_collection(24, "a"), "b": toy_collection(27, "b")})
    ov = study.overview().set_index("collection")
    assert list(ov.index) == ["a", "b"] and ov.loc["b", "n_docs"] == 27
    assert ov.loc["a", "n_topics"] == 3 and ov.loc["a", "path_seeds"] == [42, 43]


# ---------------------------------------------------------------- interim files

def test_save_study_writes_what_notebook_08_reads(fits, tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    study = toy_study({"toy": toy_collection(24)})
    written = store.save_study(study)
    assert [p.name for p in written] == ["narr_documents_toy.parquet", "narr_landscape_toy.npz"]
    assert store.documents_path("toy") == written[0]
    land, docs = store.load_landscape("toy"), store.load_documents("toy")
    built = study.collections["toy"]
    assert land["coherence_by_seed"].shape == (2, 24, 24)
    assert list(land["path_seeds"]) == [42, 43] and list(land["seeds"]) == [42, 43, 44]
    sens_e = built.sensitivity[built.sensitivity.jsd_base == "e"]["critical"].to_numpy()
    np.testing.assert_allclose(land["critical_by_seed"], sens_e)
    assert land["critical"] == pytest.approx(built.main.critical)
    assert int(land["main_seed"]) == 42 and float(land["jsd_base"]) == pytest.approx(math.e)
    assert list(docs["cluster"]) == list(built.main.landscape.labels)


# ---------------------------------------------------------------- figures

def test_critical_by_seed_figure_one_line_per_collection_and_base(fits):
    study = toy_study({"a": toy_collection(24, "a"), "b": toy_collection(27, "b")})
    fig = figures.critical_by_seed_figure(study.sensitivity, reference=0.5)
    (ax,) = fig.axes
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["a, JSD base e", "a, JSD base 2", "b, JSD base e", "b, JSD base 2",
                      "authors' news value (seed 42, ln)"]
    assert len(ax.lines) == 5 and list(ax.lines[0].get_xdata()) == [42, 43, 44]
    assert ax.get_xlabel() == "UMAP seed" and ax.get_ylabel() == "critical coherence"
    assert text_overlaps(fig) == []
    no_ref = figures.critical_by_seed_figure(study.sensitivity)
    assert len(no_ref.axes[0].lines) == 4


def test_coherence_distribution_one_panel_per_collection(fits):
    study = toy_study({"a": toy_collection(24, "a"), "b": toy_collection(27, "b")})
    fig = figures.coherence_distribution_figure(study, bins=10)
    assert len(fig.axes) == 2
    ax = fig.axes[1]
    crit_e = study.collections["b"].main.critical
    assert [t.get_text() for t in ax.get_legend().get_texts()][0] == f"base e: critical {crit_e:.3f}"
    assert len(ax.lines) == 2 and ax.lines[0].get_xdata()[0] == pytest.approx(crit_e)
    assert len(ax.patches) == 2 * 10 and ax.get_title() == "b: pairwise coherence θ (seed 42)"
    assert text_overlaps(fig) == []


def test_landscape_map_one_scatter_per_topic():
    xy = np.arange(20, dtype=float).reshape(10, 2)
    labels = np.array([0, 0, 1, 1, 2, 2, 9, 9, 9, 0])
    fig = figures.landscape_map_figure(xy, labels, "toy: 10 documents")
    (ax,) = fig.axes
    assert len(ax.collections) == 4 and ax.get_title() == "toy: 10 documents"
    assert sum(len(c.get_offsets()) for c in ax.collections) == 10
    assert text_overlaps(fig) == []
    colours, markers = figures.topic_style(np.array([0, 8, 9]))
    assert colours[0] == colours[1] != colours[2] and markers[:2] == ["o", "s"]
    with pytest.raises(ValueError, match="10 positions but 3"):
        figures.landscape_map_figure(xy, labels[:3], "bad")


def test_landscape_maps_one_figure_per_collection(fits):
    study = toy_study({"a": toy_collection(24, "a"), "b": toy_collection(27, "b")})
    maps = figures.landscape_maps(study)
    assert list(maps) == ["a", "b"]
    assert maps["b"].axes[0].get_title() == "b: 27 documents, 3 topics (seed 42)"
