"""Interim files are checked against their contracts on write and on read (judgelab.contracts).

Each schema accepts a frame made by the study's real writer on tiny data, and rejects a missing
column, a wrong dtype and a bad value with a message naming the file, the column and the fix.
The frames come from the same fixtures the writers' own tests use (fake chat server, toy
landscape), so a writer that drifts from its contract fails here.
"""
from __future__ import annotations

import csv
import hashlib
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import test_narrative_judges_gateway as judges_fixture
import test_narrative_paths_steps as paths_fixture
import test_sage_runner as sage_fixture
from judgelab import contracts, interim
from judgelab.corpus import manifest
from judgelab.gateway import Gateway
from fake_openai_server import FakeChatServer
from judgelab.narrative.judges.run import run_judges
from judgelab.narrative.landscape import store
from judgelab.narrative.landscape.collections import DocumentCollection
from judgelab.sage.layers.features import compute_l123_features
from judgelab.sage.protocol import runner

STORIES = {
    "c1": ("canonical", "The lamp burned low while the old sailor told of the storm. " * 30),
    "p1": ("pulp", "Rex Carter drew his blaster and ran for the airlock, shouting to the crew. " * 30),
}


@pytest.fixture
def out_root(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    return tmp_path


@pytest.fixture(scope="module")
def frames(tmp_path_factory) -> dict[str, pd.DataFrame]:
    """One frame per contract, each made by the writer that makes it for the notebooks."""
    tmp = tmp_path_factory.mktemp("writers")
    mp = pytest.MonkeyPatch()
    mp.setenv("JUDGELAB_DATA_RAW", str(tmp / "raw"))
    try:
        corpus = manifest.load_corpus(_tiny_manifest(tmp), acquire=False)
        features = compute_l123_features(corpus, embed=False)
    finally:
        mp.undo()
    sage = sage_fixture.run(tmp, sage_fixture.scripted)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        paths = paths_fixture.extract().paths
    with FakeChatServer(judges_fixture.scripted) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp / "cache.sqlite", progress=False)
        scores = run_judges(gw, judges_fixture.paths_frame(), k=2, seed=1, max_tokens=64, profile="smoke")
    land = paths_fixture.toy_landscape()
    docs = pd.DataFrame({"doc": np.arange(len(land["labels"])), "title": [f"t{i}" for i in land["labels"]],
                         "date": pd.Timestamp("2020-01-01") + pd.to_timedelta(land["dates"], unit="D"),
                         "text": ["x"] * len(land["labels"])})
    documents = docs.assign(cluster=land["labels"])
    return {
        "corpus": corpus, "sage_l123_features": features,
        "sage_rows_L5": sage.rows, "sage_summary_L5": sage.summary,
        # the anonymous-author title run writes the rows of its title evaluations (runner.run_title_anonymous)
        "sage_rows_anonymous_L5": sage.rows[sage.rows["mode"] == "title"].reset_index(drop=True),
        "narr_documents_toy": documents, "narr_paths": paths[paths["seed"] == paths["seed"].min()],
        "narr_paths_seeds": paths, "narr_judge_scores": scores,
    }


def _tiny_manifest(tmp):
    """Two stories acquired into a temporary data/raw, and their manifest (test_corpus's layout)."""
    header = list(manifest.REQUIRED) + ["text_sha256", "extract_start", "extract_end"]
    rows = []
    for sid, (category, body) in STORIES.items():
        data = body.encode()
        raw = tmp / "raw" / "stories" / f"{sid}.txt"
        raw.parent.mkdir(parents=True, exist_ok=True)
        raw.write_bytes(data)
        rows.append({"story_id": sid, "category": category, "title": sid.upper(), "author": "A. Writer",
                     "year": "1931", "tier": "", "words": "0", "sha256": hashlib.sha256(data).hexdigest(),
                     "raw_path": f"stories/{sid}.txt", "mirror_path": f"stories/{sid}.txt"})
    path = tmp / "stories.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=header)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in header})
    return path


# What each contract must reject: (missing column, (column, wrong-dtype value, message),
# (column, bad value, message)). Messages are regexes of the part after "<file>: ".
CASES = {
    "corpus": ("words", ("in_range", "yes", r"column 'in_range' has 'yes'; expected True/False"),
               ("category", "poetry", r"column 'category' has 'poetry' \(allowed: canonical, pulp, llm\)")),
    "sage_l123_features": ("category", ("l1_mtld", "high", r"column 'l1_mtld' has 'high'; expected numbers"),
                           ("category", "opera", r"column 'category' has 'opera' \(allowed: canonical, pulp, llm\)")),
    "sage_rows_L5": ("track", ("round", "one", r"column 'round' has 'one'; expected numbers"),
                     ("track", "judge", r"column 'track' has 'judge' \(allowed: evaluator, validator_blind, "
                                        r"validator_review\)")),
    "sage_rows_anonymous_L5": ("score", ("confidence", "sure", r"column 'confidence' has 'sure'; expected numbers"),
                               ("mode", "content", r"column 'mode' has 'content' \(allowed: title\)")),
    "sage_summary_L5": ("overall_score", ("n_repairs", 1.5, r"column 'n_repairs' has 1\.5; expected whole numbers"),
                        ("trust_level", "total", r"column 'trust_level' has 'total' \(allowed: high, medium, low\)")),
    "narr_documents_toy": ("date", ("cluster", "a", r"column 'cluster' has 'a'; expected numbers"),
                           ("cluster", -2, r"column 'cluster' has -2 in row\(s\) 0 \(allowed: >= -1\)")),
    "narr_paths": ("method", ("pair_id", "x", r"column 'pair_id' has 'x'; expected numbers"),
                   ("method", "maxcap2", r"column 'method' has 'maxcap2' \(allowed: maxcap, random\)")),
    "narr_paths_seeds": ("length", ("min_coherence", "low", r"column 'min_coherence' has 'low'; expected numbers"),
                         ("stratum", "diagonal", r"column 'stratum' has 'diagonal' \(allowed: within_short, ")),
    "narr_judge_scores": ("status", ("cached", "True", r"column 'cached' has 'True'; expected True/False"),
                          ("mode", "fancy", r"column 'mode' has 'fancy' \(allowed: simple, cot, standard, complex\)")),
}
def _with(df: pd.DataFrame, column: str, value) -> pd.DataFrame:
    """``df`` with ``value`` in the first row of ``column`` (the rest untouched)."""
    out = df.copy().reset_index(drop=True)
    out[column] = out[column].astype(object)
    out.at[0, column] = value
    return out


WRITER = {"corpus": "01", "sage_l123_features": "01", "sage_rows_L5": "03", "sage_summary_L5": "03",
          "sage_rows_anonymous_L5": "03",
          "narr_documents_toy": "07", "narr_paths": "08", "narr_paths_seeds": "08", "narr_judge_scores": "09"}


def test_every_contract_has_cases():
    assert {contracts.contract_for(n).pattern for n in CASES} == {c.pattern for c in contracts.CONTRACTS}


@pytest.mark.parametrize("name", sorted(CASES))
def test_real_writer_frame_passes_write_and_read(frames, out_root, name):
    df = frames[name]
    assert len(df) > 0
    path = interim.write(df, name)
    assert path == out_root / "results" / "interim" / f"{name}.parquet"
    back = interim.read(name)
    assert list(back.columns) == list(df.columns) and len(back) == len(df)


@pytest.mark.parametrize("name", sorted(CASES))
def test_missing_column_is_named(frames, out_root, name):
    missing = CASES[name][0]
    path = interim.path_of(name)
    with pytest.raises(contracts.ContractError) as err:
        interim.write(frames[name].drop(columns=[missing]), name)
    msg = str(err.value)
    assert msg.startswith(f"{path}: ") and f"column {missing!r} is missing" in msg
    assert f"notebook {WRITER[name]}" in msg and "mend the writer" in msg
    assert not path.exists()                                 # nothing written when the check fails


@pytest.mark.parametrize("name", sorted(CASES))
def test_wrong_dtype_is_named(frames, out_root, name):
    column, value, expected = CASES[name][1]
    df = _with(frames[name], column, value)
    with pytest.raises(contracts.ContractError, match=re.escape(f"{interim.path_of(name)}: ") + expected):
        interim.write(df, name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_value_on_disk_is_caught_on_read_with_the_fix(frames, out_root, name):
    column, value, expected = CASES[name][2]
    df = _with(frames[name], column, value)
    path = interim.path_of(name)
    df.to_parquet(path, index=False)                         # a stale or hand-made file
    fix = re.escape(f"; re-run notebook {WRITER[name]} (`make nb-{WRITER[name]}`) with this PROFILE and output root")
    with pytest.raises(contracts.ContractError, match=re.escape(f"{path}: ") + expected + ".*" + fix + "$"):
        interim.read(name)


def test_the_message_of_the_brief(frames, out_root):
    df = frames["narr_paths"].copy()
    df.loc[df.index[0], "method"] = "maxcap2"
    df.to_parquet(interim.path_of("narr_paths"), index=False)
    with pytest.raises(contracts.ContractError) as err:
        interim.read("narr_paths")
    assert str(err.value) == (f"{interim.path_of('narr_paths')}: column 'method' has 'maxcap2' (allowed: maxcap, "
                              "random); re-run notebook 08 (`make nb-08`) with this PROFILE and output root")


def test_rules_across_columns(frames, out_root):
    rows = frames["sage_rows_L5"].copy()
    blind = rows.index[rows["track"] == "validator_blind"][0]
    rows.loc[blind, "round"] = 2
    failed = rows.index[rows["track"] == "evaluator"][0]
    rows.loc[failed, "status"] = "failed"                    # a failed reply that kept its score
    with pytest.raises(contracts.ContractError) as err:
        interim.write(rows, "sage_rows_L5")
    msg = str(err.value)
    assert "2 problems" in msg
    assert f"columns 'track', 'round': a validator track has round 1: broken in row(s) {blind}" in msg
    assert f"columns 'status', 'score': a failed reply has score NaN, never a value: broken in row(s) {failed}" in msg
    paths = frames["narr_paths"].copy()
    paths.at[paths.index[0], "path"] = list(paths["path"].iloc[0])[::-1]
    with pytest.raises(contracts.ContractError, match="a path starts at source and ends at target: broken in row"):
        interim.write(paths, "narr_paths")


def test_layer_comes_from_the_name_and_ranges_hold(frames, out_root):
    with pytest.raises(contracts.ContractError, match=r"column 'layer' has 'L5' \(allowed: L4\)"):
        interim.write(frames["sage_rows_L5"], "sage_rows_L4")
    rows = frames["sage_rows_L5"].copy()
    rows.loc[rows.index[0], "score"] = 6.0
    with pytest.raises(contracts.ContractError, match=r"column 'score' has 6\.0 in row\(s\) 0 \(allowed: 1\.0 to 5\.0\)"):
        interim.write(rows, "sage_rows_L5")
    scores = frames["narr_judge_scores"].copy()
    scores.loc[scores.index[0], "score"] = 11.0
    with pytest.raises(contracts.ContractError, match=r"column 'score' has 11\.0 in row\(s\) 0 \(allowed: 1\.0 to 10\.0\)"):
        interim.write(scores, "narr_judge_scores")


def test_harmless_coercion_only(frames, out_root):
    scores = frames["narr_judge_scores"].copy()
    scores["agent"] = scores["agent"].astype(float)          # 0.0, 1.0: whole numbers, cast back
    scores["latency_s"] = 1                                  # integers where floats belong
    back = interim.read(interim.write(scores, "narr_judge_scores").stem)
    assert back["agent"].dtype == np.int64 and back["latency_s"].dtype == np.float64
    scores["agent"] = scores["agent"] + 0.5                  # never truncated to an integer
    with pytest.raises(contracts.ContractError, match=r"column 'agent' has 0\.5, 1\.5; expected whole numbers"):
        interim.write(scores, "narr_judge_scores")


def test_missing_file_and_unknown_name(out_root):
    with pytest.raises(interim.InterimFileMissing, match=r"narr_judge_scores\.parquet missing; re-run notebook 09"):
        interim.read("narr_judge_scores")
    with pytest.raises(FileNotFoundError):                   # callers that catch the builtin still do
        interim.read("corpus")
    with pytest.raises(contracts.ContractError, match="'narr_thing' has no contract"):
        interim.write(pd.DataFrame({"a": [1]}), "narr_thing")


def test_empty_frame_from_the_runner_passes(out_root):
    rows, summary, _, _ = runner.tidy([], "b", "m", "smoke")
    assert len(interim.read(interim.write(rows, "sage_rows_L4").stem)) == 0
    assert len(interim.read(interim.write(summary, "sage_summary_L4").stem)) == 0


# ---------------------------------------------------------------- the landscape npz

def test_landscape_npz_checked_on_save_and_load(out_root):
    land = paths_fixture.toy_landscape()
    store.save_landscape("toy", **land)
    assert set(store.load_landscape("toy")) == set(land)
    with pytest.raises(contracts.ContractError, match=r"narr_landscape_bad\.npz: array 'umap2d' has shape \(39, 2\), "
                                                      r"expected 40 x 2 \(n=40 documents\); the code that builds it"):
        store.save_landscape("bad", **{**land, "umap2d": land["umap2d"][1:]})
    partial = {k: v for k, v in land.items() if k != "labels_by_seed"}
    with pytest.raises(KeyError, match=r"array\(s\) 'labels_by_seed' missing"):
        store.save_landscape("bad", **partial)
    assert not store.landscape_path("bad").exists()
    np.savez(store.landscape_path("toy"), **{**land, "coherence_by_seed": land["coherence_by_seed"][:, :5]})
    with pytest.raises(contracts.ContractError, match=r"array 'coherence_by_seed' has shape \(2, 5, 40\), expected "
                                                      r"2 x 40 x 40 .*re-run notebook 07 \(`make nb-07`\)"):
        store.load_landscape("toy")


def test_documents_go_through_the_contract(out_root):
    docs = pd.DataFrame({"doc": [0, 1], "title": ["a", "b"], "date": pd.to_datetime(["2020-01-01", "2020-02-01"]),
                         "text": ["x", "y"]})
    store.save_documents(DocumentCollection("toy", docs), np.array([0, -1]))
    assert store.load_documents("toy")["cluster"].tolist() == [0, -1]
    with pytest.raises(contracts.ContractError, match=r"column 'date' has .*which is not datetimes"):
        store.save_documents(DocumentCollection("toy", docs.assign(date=["2020-01-01", "x"])), np.array([0, 1]))


def test_results_rows_keep_their_values(frames, out_root):
    """What is written is what is read: values survive the round trip unchanged."""
    df = frames["narr_judge_scores"]
    back = interim.read(interim.write(df, "narr_judge_scores").stem)
    pd.testing.assert_series_equal(back["score"], df["score"].reset_index(drop=True), check_names=True)
    assert back["status"].tolist() == df["status"].tolist()


def test_sage_summary_records_truncation_like_the_rows(out_root, tmp_path):
    # a 20-token budget cuts both stories' content text to head + tail; title mode sends no text
    run = sage_fixture.run(tmp_path, sage_fixture.scripted, overrides={"max_text_tokens": 20})
    summary = interim.read(interim.write(run.summary, "sage_summary_L5").stem).set_index(["story_id", "mode"])
    flags = run.rows.groupby(["story_id", "mode"])["truncated"].any()
    assert summary["truncated"].to_dict() == flags.to_dict()
    assert summary["truncated"].to_dict() == {("a", "content"): True, ("b", "content"): True,
                                              ("a", "title"): False, ("b", "title"): False}
    with pytest.raises(contracts.ContractError, match="truncated"):
        interim.write(run.summary.drop(columns="truncated"), "sage_summary_L5")


def test_notebook_10_inputs_load_what_07_to_09_wrote(frames, out_root):
    from judgelab.narrative.analyses import inputs

    with pytest.raises(interim.InterimFileMissing, match=r"narr_paths\.parquet missing.*notebook 08"):
        inputs.load()
    for name in ("narr_paths", "narr_judge_scores"):
        interim.write(frames[name], name)
    (collection,) = frames["narr_paths"]["collection"].unique()
    land = paths_fixture.toy_landscape()
    store.save_landscape(collection, **land)
    docs = frames["narr_documents_toy"].drop(columns="cluster").sample(frac=1, random_state=0)  # any order
    store.save_documents(DocumentCollection(collection, docs), land["labels"][docs["doc"].to_numpy()])
    got = inputs.load()
    assert got.collections == [collection] and len(got.paths) == len(frames["narr_paths"])
    assert got.titles[collection] == [f"t{i}" for i in land["labels"]]  # document order restored
    assert got.coherence[collection].shape == (40, 40) and got.umap2d[collection].shape == (40, 2)
    agents = frames["narr_judge_scores"].groupby("collection")["agent"].nunique().to_dict()
    assert f"agents per collection: {agents}" in got.summary()
