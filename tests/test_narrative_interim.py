"""Interim files of notebooks 07/08 and the tables set beside the paper's values."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab.narrative.landscape import store as interim

from judgelab.narrative.paths import paper_tables as math_tables
from judgelab.narrative.landscape.collections import DocumentCollection
from judgelab.narrative.landscape.graph import critical_coherence_prim, critical_coherence_scipy
from judgelab.narrative.paths.paper_values import PAPER_TABLE1, PAPER_TABLE4_MATH
from judgelab.narrative.landscape.build import sparsity_row


def test_landscape_and_documents_roundtrip(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    docs = pd.DataFrame({"doc": [0, 1, 2], "title": list("abc"),
                         "date": pd.to_datetime(["2020-01-01", "2020-01-02", "2020-02-01"]), "text": list("xyz")})
    col = DocumentCollection("toy", docs)
    interim.save_documents(col, np.array([0, 1, 1]))
    c = np.array([[0, .5, .4], [.5, 0, .9], [.4, .9, 0]])
    interim.save_landscape("toy", coherence=c, memberships=np.eye(3)[:, :2], umap2d=np.zeros((3, 2)),
                           critical=0.5, seeds=np.array([42, 43]))
    got = interim.load_landscape("toy")
    assert got["coherence"].dtype == np.float32 and got["critical"] == 0.5
    assert list(interim.load_documents("toy").columns) == ["doc", "title", "date", "text", "cluster"]
    assert interim.landscape_collections() == ["toy"]
    with pytest.raises(KeyError, match="critical"):
        interim.save_landscape("bad", coherence=c, memberships=c, umap2d=c, seeds=[1])
    with pytest.raises(FileNotFoundError, match="notebook 07"):
        interim.load_landscape("absent")


def test_prim_equals_scipy_on_larger_matrices():
    rng = np.random.default_rng(9)
    for n in (50, 200):
        a = rng.random((n, n)).astype(np.float32)
        c = np.triu(a, 1) + np.triu(a, 1).T
        assert critical_coherence_prim(c) == critical_coherence_scipy(c)


def test_sparsity_row_counts():
    c = np.array([[0, .5, .4], [.5, 0, .9], [.4, .9, 0]], np.float32)
    row = sparsity_row(c, 0.5, np.array([0, 1, 1]))
    assert row["complete_edges"] == 3 and row["sparse_edges"] == 2
    assert row["temporal_directed_edges"] == 3            # 0->1, 1->2, 2->1


def _fake_paths(seed_shift=0.0):
    rows = []
    for seed in (1, 2):
        for pid in range(6):
            for method, lo in (("maxcap", 0.7), ("random", 0.5)):
                v = lo + 0.01 * pid + seed_shift * seed
                rows.append({"collection": "news", "pair_id": pid, "method": method, "seed": seed,
                             "length": 3 + pid % 3 + (method == "maxcap"), "min_coherence": v,
                             "mean_coherence": v + 0.1})
    return pd.DataFrame(rows)


def test_tables_carry_paper_values_beside_ours():
    seeds = _fake_paths(0.01)
    main = seeds[seeds.seed == 1]
    t1 = math_tables.table01_path_lengths(main, seeds).set_index("method")
    assert t1.loc["maxcap", "paper_mean"] == PAPER_TABLE1[("news", "maxcap")]["mean"]
    assert t1.loc["maxcap", "mean"] == pytest.approx(main[main.method == "maxcap"]["length"].mean())
    assert t1.loc["maxcap", "n_seeds"] == 2
    t4 = math_tables.table04_math_effects(main, seeds).set_index("metric")
    assert t4.loc["Min. coherence", "paper_d"] == PAPER_TABLE4_MATH[("news", "Min. coherence")]["d"]
    assert t4.loc["Min. coherence", "auc"] == 1.0
    comp = math_tables.paper_comparison(seeds, {"news": np.array([0.44, 0.46])}).set_index("statistic")
    assert comp.loc["critical coherence", "value_mean"] == pytest.approx(0.45)
    assert comp.loc["mean min coherence, random", "paper_value"] == 0.470
    assert comp.loc["length difference max-capacity - random", "value_mean"] == pytest.approx(1.0)

