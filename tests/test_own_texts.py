"""Your own texts (``make own``): a folder of stories and a dated collection, built here.

The loaders' every bad input gives its named error (file, line or row, field) before anything is
run; the end-to-end tests run the same numbered notebooks on a story folder (01, then 02 on a fake
OpenAI-compatible judge: no model, no network beyond 127.0.0.1) and on a collection (07, 08).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgelab import contracts
from judgelab.corpus import own_stories
from judgelab.corpus.own_stories import OwnTextError, genre_statistics_decision, load_folder
from judgelab.narrative.landscape import own_collection
from judgelab.narrative.landscape.collections import days_since_epoch
from judgelab.narrative.landscape.own_collection import OwnCollectionError

PROSE = ("The lamp burned low while the river kept its own counsel below the mill. "
         "She counted the boats, and none of them came home before the frost. ")


def story(words: int = 120, seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    vocab = PROSE.split()
    body = " ".join(rng.choice(vocab, size=words))
    return f"{body}.\n\nThen the morning came, and with it a letter.\n"


def folder_with(tmp_path: Path, files: dict[str, bytes | str], meta: str | None = None) -> Path:
    d = tmp_path / "stories"
    d.mkdir(exist_ok=True)
    for name, content in files.items():
        (d / name).write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    if meta is not None:
        (d / "stories.csv").write_text(meta, encoding="utf-8")
    return d


# ---------------------------------------------------------------- a folder of stories

def test_folder_becomes_the_corpus_table_with_metadata_and_skipped_files(tmp_path):
    d = folder_with(tmp_path, {"harbour.txt": story(seed=1), "frost.md": story(seed=2), "moth.txt": story(seed=3),
                               "cover.pdf": b"%PDF-1.4 ...", ".DS_Store": b"\x00\x01"},
                    meta="story_id,title,author,year,category\n"
                         "harbour,The Harbour,A. Writer,1923,canonical\nmoth,,,,llm\n")
    own = load_folder(d, default_category="pulp")
    corpus = own.corpus.set_index("story_id")
    contracts.check(own.corpus, "corpus", d, when="write")  # the schema notebooks 02-06 read
    assert sorted(corpus.index) == ["frost", "harbour", "moth"]
    assert corpus.loc["harbour", ["title", "author", "year", "category"]].tolist() == ["The Harbour", "A. Writer", 1923, "canonical"]
    # no category given: the profile's default, and the files table says where each came from
    assert corpus.loc["frost", "category"] == "pulp" and corpus.loc["moth", "category"] == "llm"
    files = own.files.set_index("story_id")
    assert files.loc["frost", "category_from"].startswith("default_category")
    assert files.loc["moth", "category_from"] == "stories.csv"
    assert corpus.loc["frost", "title"] == "frost" and pd.isna(corpus.loc["frost", "year"])
    assert corpus.loc["harbour", "words"] == len(corpus.loc["harbour", "text"].split())
    # nothing dropped silently: the two files that are not stories are listed with the reason
    assert sorted(own.skipped["file"]) == [".DS_Store", "cover.pdf"]
    assert own.skipped.set_index("file").loc["cover.pdf", "reason"].startswith("not a story: suffix .pdf")


BAD_INPUTS = {
    # name: (files, stories.csv, what the message must say)
    "empty file": ({"a.txt": story(), "b.txt": "  \n\n"}, None, r"b\.txt: empty file"),
    "binary file": ({"a.txt": story(), "b.txt": b"PK\x03\x04\x00\x00word document"}, None,
                    r"b\.txt: binary file \(a NUL byte at offset 4\)"),
    "non-UTF-8": ({"a.txt": story(), "b.txt": "Caf\u00e9 au lait\nline two".encode("latin-1")}, None,
                  r"b\.txt: line 1, byte offset 3: not UTF-8"),
    "duplicate file id": ({"a.txt": story(), "a.md": story(seed=5)}, None, r"a\.txt: duplicate story id 'a' \(also a\.md\)"),
    "duplicate csv id": ({"a.txt": story()}, "story_id,title\na,One\na,Two\n",
                         r"stories\.csv, line 3, field story_id: duplicate id 'a' \(first on line 2\)"),
    "unknown category": ({"a.txt": story()}, "story_id,category\na,mystery\n",
                         r"stories\.csv, line 2 \(story_id=a\), field category: unknown category 'mystery'"),
    "unparseable year": ({"a.txt": story()}, "story_id,year\na,c. 1900\n",
                         r"stories\.csv, line 2 \(story_id=a\), field year: 'c\. 1900' is not a year"),
    "row without a file": ({"a.txt": story()}, "story_id,title\na,One\nb,Two\n", r"story_id 'b' has no file b\.txt or b\.md"),
    "unknown column": ({"a.txt": story()}, "story_id,genre\na,x\n", r"unknown column\(s\) \['genre'\]"),
    "no stories": ({"notes.docx": b"x"}, None, r"no \.txt or \.md files"),
    "comma in an id": ({"a,b.txt": story()}, None, r"a,b\.txt: the story id 'a,b' holds a comma"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_every_bad_story_input_is_named_before_anything_runs(tmp_path, case):
    files, meta, message = BAD_INPUTS[case]
    d = folder_with(tmp_path, files, meta)
    with pytest.raises(OwnTextError, match=message) as err:
        load_folder(d, default_category="canonical")
    assert "nothing was sent to a judge" in str(err.value)


def test_every_problem_is_listed_at_once_and_too_long_only_when_the_judge_reads_whole(tmp_path):
    d = folder_with(tmp_path, {"long.txt": story(words=300), "short.txt": story(words=20), "e.txt": ""})
    count = lambda text: len(text.split())  # a stand-in tokenizer: the rule, not tiktoken, is tested
    with pytest.raises(OwnTextError) as err:
        load_folder(d, default_category="canonical", max_tokens=100, count_tokens=count)
    assert len(err.value.problems) == 2
    assert any("long.txt: 309 tokens, more than the judge reads whole (100" in p for p in err.value.problems)
    assert any("e.txt: empty file" in p for p in err.value.problems)
    (d / "e.txt").unlink()
    assert len(load_folder(d, default_category="canonical").corpus) == 2  # head_tail: no limit


def test_make_own_stops_on_a_bad_folder_before_any_notebook(tmp_path, monkeypatch, capsys):
    from judgelab import own_texts

    d = folder_with(tmp_path, {"a.txt": story(), "b.txt": b"\xff\xfe binary-ish \x00"})
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path / "root"))
    ran = []
    monkeypatch.setattr(own_texts.pipeline, "run_notebook", lambda *a, **k: ran.append(a))
    assert own_texts.main(["stories", str(d)]) == 2
    assert "b.txt: binary file" in capsys.readouterr().err
    assert ran == [] and not (tmp_path / "root" / "results" / "own").exists()


@pytest.mark.parametrize("categories, runs_06", [(["canonical", "canonical", "llm", "llm"], True),
                                                 (["canonical", "canonical", "canonical", "llm"], False)])
def test_make_own_runs_genre_statistics_only_when_two_categories_have_enough(tmp_path, monkeypatch, categories, runs_06):
    from judgelab import own_texts

    meta = "story_id,category\n" + "".join(f"s{i},{c}\n" for i, c in enumerate(categories))
    d = folder_with(tmp_path, {f"s{i}.txt": story(seed=i) for i in range(4)}, meta)
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path / "root"))
    ran = []
    monkeypatch.setattr(own_texts.pipeline, "run_notebook", lambda source, profile, params: ran.append((source.name[:2], params)))
    monkeypatch.setattr(own_texts.runrecord, "write", lambda profile: "record")
    own_texts.run_stories(d, "x", "own")
    assert [n for n, _ in ran] == ["01", "02", "03", "04", "05"] + (["06"] if runs_06 else [])
    # each notebook gets the parameters it declares: 01 the folder, 02-04 every story's id
    given = dict(ran)
    assert given["01"] == {"STORY_FOLDER": str(d.resolve())} and given["05"] == {}
    assert all(given[n] == {"STORIES": "s0,s1,s2,s3"} for n in ("02", "03", "04"))


def test_estimate_runs_notebook_01_only_then_prices_02_04_in_the_own_root(tmp_path, monkeypatch):
    from judgelab import own_texts

    d = folder_with(tmp_path, {"a.txt": story(), "b.txt": story(seed=1)})
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path / "root"))
    ran, priced = [], []
    monkeypatch.setattr(own_texts.pipeline, "run_notebook", lambda source, profile, params: ran.append(source.name[:2]))
    monkeypatch.setattr(own_texts.runrecord, "write", lambda profile: "record")
    monkeypatch.setattr(own_texts.subprocess, "run", lambda cmd, check, env: priced.append((cmd, env["JUDGELAB_OUTPUT_ROOT"])))
    root = own_texts.run_stories(d, "mine", "own", estimate=True)
    assert ran == ["01"]
    assert priced == [([own_texts.sys.executable, "-m", "judgelab.estimate", "--profile", "own", "--notebooks", "02,03,04"],
                       str(root))]


def test_a_parameter_no_notebook_declares_stops_the_run(tmp_path):
    from judgelab import own_texts

    with pytest.raises(ValueError, match=r"\['STORY_FOLDR'\] are declared by none of \['01_corpus.py'\]"):
        own_texts._run(["01"], "own", {"STORY_FOLDR": "x"}, tmp_path)


def test_genre_statistics_need_two_categories_with_enough_stories():
    corpus = pd.DataFrame({"category": ["canonical"] * 3 + ["llm"]})
    ok, reason = genre_statistics_decision(corpus, 2)
    assert not ok and "only 1 category has at least 2 stories (canonical: 3, llm: 1)" in reason
    ok, reason = genre_statistics_decision(pd.DataFrame({"category": ["canonical"] * 2 + ["llm"] * 2}), 2)
    assert ok and "canonical, llm" in reason
    assert not genre_statistics_decision(pd.DataFrame({"category": ["canonical"] * 5}), 2)[0]


# ---------------------------------------------------------------- a dated collection

def collection_frame(n: int = 12) -> pd.DataFrame:
    dates = pd.date_range("2020-01-01", periods=n, freq="7D")
    return pd.DataFrame({"body": [f"Report {i}: {story(words=30, seed=i)}" for i in range(n)],
                         "when": dates.strftime("%Y-%m-%d"), "headline": [f"Story {i}" for i in range(n)]})


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_collection_reads_csv_jsonl_parquet_alike(tmp_path, fmt):
    frame = collection_frame()
    path = tmp_path / f"docs.{fmt}"
    {"csv": lambda: frame.to_csv(path, index=False),
     "jsonl": lambda: frame.to_json(path, orient="records", lines=True),
     "parquet": lambda: frame.to_parquet(path)}[fmt]()
    col = own_collection.load(path, text="body", date="when", title="headline")
    assert col.name == "own" and list(col.docs.columns) == ["doc", "title", "date", "text"]
    assert col.docs["title"].tolist() == frame["headline"].tolist()
    first = (pd.Timestamp("2020-01-01") - pd.Timestamp("1970-01-01")).days
    assert list(col.dates) == [first + 7 * i for i in range(len(frame))]
    assert col.embeddings is None  # the profile's backend embeds it in notebook 07


def test_dates_in_mixed_formats_are_parsed_row_by_row(tmp_path):
    frame = collection_frame(4)
    frame["when"] = ["2021-03-14", "14 March 2021", "03/15/2021", "2021-03-16T10:00:00+02:00"]
    path = tmp_path / "mixed.csv"
    frame.to_csv(path, index=False)
    col = own_collection.load(path, text="body", date="when")
    expected = [pd.Timestamp(s) for s in ("2021-03-14", "2021-03-14", "2021-03-15", "2021-03-16 08:00")]
    assert list(col.docs["date"]) == expected
    assert list(days_since_epoch(col.docs["date"])) == [18700, 18700, 18701, 18702]


def test_own_vectors_from_a_column_or_a_npy_file(tmp_path):
    frame = collection_frame(5)
    vectors = np.arange(15, dtype=np.float32).reshape(5, 3)
    frame["vec"] = [json.dumps(v.tolist()) for v in vectors]
    path = tmp_path / "docs.csv"
    frame.to_csv(path, index=False)
    np.save(tmp_path / "docs.npy", vectors[::-1])
    assert np.array_equal(own_collection.load(path, text="body", date="when", embeddings="vec").embeddings, vectors)
    col = own_collection.load(path, text="body", date="when", embeddings="docs.npy")
    assert np.array_equal(col.embeddings, vectors[::-1]) and col.embedding_source.startswith("precomputed")


def _write(tmp_path, frame, name="docs.csv") -> Path:
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def test_every_bad_collection_input_is_named(tmp_path):
    knobs = {"n_neighbors": 15, "min_cluster_size": 5}
    frame = collection_frame()
    frame.loc[3, "when"] = ""
    frame.loc[5, "when"] = "the day after"
    frame.loc[7, "body"] = "   "
    with pytest.raises(OwnCollectionError) as err:
        own_collection.load(_write(tmp_path, frame), text="body", date="when", knobs=knobs)
    text = str(err.value)
    assert "field 'when': missing date at line 5;" in text
    assert "field 'when': unparseable date at line 7 ('the day after')" in text
    assert "field 'body': empty text at line 9;" in text
    assert "12 documents, too few for the landscape" in text and "need at least 50" in text
    assert "nothing was embedded or judged" in text
    with pytest.raises(OwnCollectionError, match=r"no column\(s\) \['content'\]; it has \['body', 'when', 'headline'\]"):
        own_collection.load(_write(tmp_path, collection_frame()), text="content", date="when")
    frame = collection_frame(3)
    frame["vec"] = ["[1, 2]", "[3, 4]", "[5]"]
    with pytest.raises(OwnCollectionError, match=r"field 'vec': 1 row\(s\) without a 2-number vector: line 4"):
        own_collection.load(_write(tmp_path, frame), text="body", date="when", embeddings="vec")
    bad = tmp_path / "latin.csv"
    bad.write_bytes("body,when\nCaf\u00e9,2020-01-01\n".encode("latin-1"))
    with pytest.raises(OwnCollectionError, match=r"latin\.csv: line 2, byte offset 13: not UTF-8"):
        own_collection.load(bad, text="body", date="when")
    binary = tmp_path / "x.csv"
    binary.write_bytes(b"body,when\n\x00\x01,2020\n")
    with pytest.raises(OwnCollectionError, match=r"x\.csv: binary data \(a NUL byte at offset 10\)"):
        own_collection.load(binary, text="body", date="when")
    with pytest.raises(OwnCollectionError, match=r"unknown format '\.xlsx'"):
        (tmp_path / "a.xlsx").write_bytes(b"x")
        own_collection.load(tmp_path / "a.xlsx", text="body", date="when")


def test_smallest_collection_follows_umap_and_hdbscan_settings():
    # UMAP needs n > 48 components + 1 and n > n_neighbors + 1; HDBSCAN two clusters of min_cluster_size
    assert own_collection.min_documents({"n_neighbors": 15, "min_cluster_size": 5}) == 50
    assert own_collection.min_documents({"n_neighbors": 60, "min_cluster_size": 8}) == 62
    assert own_collection.min_documents({"n_neighbors": 4, "min_cluster_size": 30}) == 60



# ---------------------------------------------------------------- end to end, through the notebooks

@pytest.mark.notebooks
@pytest.mark.timeout(900)
def test_story_folder_runs_through_notebooks_01_02_on_every_story(tmp_path, monkeypatch):
    """`make own STORIES=`: notebook 01 reads the folder, 02 judges every story (on the local fake
    OpenAI-compatible server: schema-valid replies, no model), all under results/own/<name>/."""
    from fake_openai_server import FakeChatServer
    from judgelab import interim, own_texts, provenance

    # three canonical stories and one LLM story: the profile's draw (two per category) would miss one
    d = folder_with(tmp_path, {f"s{i}.txt": story(words=90, seed=i) for i in range(4)} | {"cover.pdf": b"%PDF"},
                    meta="story_id,title,author,category\ns0,First,A. Author,canonical\ns3,Fourth,,llm\n")
    base = tmp_path / "root"
    for var, value in {"JUDGELAB_OUTPUT_ROOT": str(base), "JUDGELAB_BACKEND": "openai-compatible",
                       "JUDGELAB_MODEL": "fake-model", "JUDGELAB_PROGRESS": "0", "JUDGELAB_API_KEY": "sk-test-own"}.items():
        monkeypatch.setenv(var, value)
    monkeypatch.delenv("JUDGELAB_CACHE_PATH", raising=False)
    with FakeChatServer() as srv:
        monkeypatch.setenv("JUDGELAB_BASE_URL", srv.base_url)
        root = own_texts.run_stories(d, "mine", "own", numbers=("01", "02"))
        assert srv.n_calls > 0
    assert root == base / "results" / "own" / "mine"
    tables = root / "results" / "tables"
    assert pd.read_csv(tables / "sage_own_stories.csv")["story_id"].tolist() == ["s0", "s1", "s2", "s3"]
    assert pd.read_csv(tables / "sage_own_skipped.csv")["file"].tolist() == ["cover.pdf"]
    decision = pd.read_csv(tables / "sage_own_genre_decision.csv").iloc[0]
    assert not decision["genre_statistics"] and "only 1 category has at least 2 stories" in decision["reason"]
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(root))
    assert interim.read("corpus")["story_id"].tolist() == ["s0", "s1", "s2", "s3"]
    judged = interim.read("sage_summary_L4")
    assert sorted(set(zip(judged["story_id"], judged["mode"]))) == [(f"s{i}", m) for i in range(4) for m in ("content", "title")]
    assert (judged["status"] == "ok").all() and set(judged["model"]) == {"fake-model"}
    side = provenance.read_sidecar(tables / "sage_own_stories.csv")
    assert side["profile"] == "own" and side["notebook"] == "01_corpus"
    assert (root / "results" / "runs" / "latest.json").exists()
    assert not (base / "results" / "tables").exists()  # the papers' outputs are never touched


def clustered_collection(tmp_path: Path, n: int = 60) -> Path:
    """``n`` dated documents in three topics: texts, dates and (own) vectors in a CSV + .npy."""
    rng = np.random.default_rng(7)
    topic = np.arange(n) % 3
    centres = rng.normal(size=(3, 24)) * 4
    vectors = (centres[topic] + rng.normal(size=(n, 24))).astype(np.float32)
    frame = pd.DataFrame({"body": [f"Topic {t} report {i}. {story(words=25, seed=i)}" for i, t in enumerate(topic)],
                          "published": pd.date_range("2019-01-01", periods=n, freq="5D").strftime("%d %B %Y"),
                          "headline": [f"Report {i}" for i in range(n)]})
    path = tmp_path / "archive.csv"
    frame.to_csv(path, index=False)
    np.save(tmp_path / "archive.npy", vectors)
    return path


@pytest.mark.notebooks
@pytest.mark.timeout(900)
def test_collection_runs_through_notebooks_07_08(tmp_path, monkeypatch):
    """`make own COLLECTION=... ENDPOINTS=`: notebook 07 builds the landscape of the user's file with
    the user's vectors, 08 extracts max-capacity and random paths between the pairs the user names
    and writes the explorer. The collection is above DENSE_LIMIT, so both take the sparse
    nearest-neighbour route (a large collection's; the dense route runs in the papers' notebooks),
    and every output says so. One run of 08, with named pairs: its stratified sample (no ENDPOINTS)
    is the smoke run's own route through the same `extract_study` (tests/test_notebooks.py)."""
    from judgelab import interim, own_texts

    path = clustered_collection(tmp_path)
    # the pairs named in a CSV beside the collection (by title, one given later-first, and by number)
    (tmp_path / "pairs.csv").write_text("source,target\nReport 50,Report 2\n5,40\n", encoding="utf-8")
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path / "root"))
    root = own_texts.run_collection(path, None, text="body", date="published", title="headline",
                                    embeddings="archive.npy", endpoints="pairs.csv", profile="own",
                                    numbers=("07", "08"), extra={"SENSITIVITY_SEEDS": 1, "DENSE_LIMIT": 40})
    assert root == tmp_path / "root" / "results" / "own" / "archive"
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(root))
    docs = interim.read("narr_documents_own")
    source = pd.read_csv(path)
    assert docs["title"].tolist() == source["headline"].tolist()
    assert list(docs["date"]) == list(pd.to_datetime(source["published"], format="%d %B %Y"))
    critical = pd.read_csv(root / "results" / "tables" / "narr_critical_coherence.csv")
    assert set(critical["collection"]) == {"own"} and critical["embedding"].str.contains("archive.npy").all()
    # 60 documents > DENSE_LIMIT 40: the sparse route in both notebooks, named in tables and sidecars
    seeds_table = pd.read_csv(root / "results" / "tables" / "narr_critical_coherence_seeds.csv")
    assert set(seeds_table["route"]) == {"sparse"} and set(seeds_table["knn_k"]) == {32}
    assert not (root / "results" / "interim" / "narr_landscape_own.npz").exists() or \
        "coherence" not in np.load(root / "results" / "interim" / "narr_landscape_own.npz").files
    assert critical["paper_value"].isna().all()
    named = interim.read("narr_paths")
    assert set(named["collection"]) == {"own"} and set(named["method"]) == {"maxcap", "random"}
    assert set(named["stratum"]) == {"named"}
    assert (root / "figures" / "narr_explorer_own.html").exists()
    for table in ("narr_critical_coherence_seeds", "narr_table01_path_lengths"):
        side = json.loads((root / "results" / "tables" / f"{table}.provenance.json").read_text(encoding="utf-8"))
        assert any(c.startswith("landscape_route.own=sparse: coherence only between each document and its 32 nearest")
                   for c in side["choices"]), side["choices"]
    # `make site`: the run in a section of its own, with no paper column
    from judgelab.site.build import build_site

    site = build_site(tmp_path / "root", tmp_path / "site").out
    assert 'href="own/archive/index.html"' in (site / "index.html").read_text(encoding="utf-8")
    page = (site / "own" / "archive" / "tables" / "narr_critical_coherence.html").read_text(encoding="utf-8")
    assert "critical_main_seed" in page and "paper_value" not in page and "paper_source" not in page
    # the named pairs: each matched, the later-first one turned
    status = pd.read_csv(root / "results" / "tables" / "narr_own_endpoints.csv")
    assert status[["source", "target", "turned"]].values.tolist() == [[2, 50, True], [5, 40, False]]
    ends = named[named["method"] == "maxcap"].set_index("pair_id")[["source", "target"]]
    expected = status[status["seeds_without_path"] == 0].set_index("pair_id")[["source", "target"]]
    assert ends.loc[expected.index].values.tolist() == expected.values.tolist() and len(expected) >= 1


# ---------------------------------------------------------------- endpoint pairs the user names

def _documents(n: int = 6) -> pd.DataFrame:
    titles = [f"Report {i}" for i in range(n)]
    titles[4] = titles[2]  # one title held twice
    return pd.DataFrame({"doc": np.arange(n), "title": titles,
                         "date": pd.date_range("2020-01-01", periods=n, freq="D")})


def test_named_endpoints_match_numbers_and_titles_and_run_forward_in_time(tmp_path):
    from judgelab.narrative.paths import named_endpoints

    docs = _documents()
    inline = named_endpoints.load("0 -> Report 3;  report 5 -> 1", docs)
    assert inline[["source", "target"]].values.tolist() == [[0, 3], [1, 5]]
    assert inline["turned"].tolist() == [False, True] and inline["where"].tolist() == ["ENDPOINTS, pair 1", "ENDPOINTS, pair 2"]
    (tmp_path / "pairs.csv").write_text("source,target\nReport 1,Report 5\n", encoding="utf-8")
    # a CSV named relative to the collection file is found beside it
    from_file = named_endpoints.load("pairs.csv", docs, beside=tmp_path / "archive.csv")
    assert from_file[["source", "target"]].values.tolist() == [[1, 5]] and "pairs.csv, line 2" in from_file["where"][0]


def test_every_bad_named_endpoint_is_named_with_file_line_and_field(tmp_path):
    from judgelab.narrative.paths import named_endpoints
    from judgelab.narrative.paths.named_endpoints import EndpointError

    (tmp_path / "pairs.csv").write_text("source,target\n0,1\n9,Report 1\nNo such story,Report 2\n3,3\n"
                                        "1,0\n,2\n", encoding="utf-8")
    with pytest.raises(EndpointError) as err:
        named_endpoints.load(str(tmp_path / "pairs.csv"), _documents())
    assert any(p.endswith("line 7, field source: empty; name a document by its number or title") for p in err.value.problems)
    with pytest.raises(EndpointError) as err:
        (tmp_path / "pairs.csv").write_text("source,target\n0,1\n9,Report 1\nNo such story,Report 2\n3,3\n1,0\n",
                                            encoding="utf-8")
        named_endpoints.load(str(tmp_path / "pairs.csv"), _documents())
    text = str(err.value)
    assert "pairs.csv, line 3, field source: no document number 9 (the collection has 6, numbered 0 to 5)" in text
    assert "pairs.csv, line 4, field source: no document titled 'No such story'" in text
    assert "pairs.csv, line 4, field target: title 'Report 2' is shared by documents 2, 4" in text
    assert "pairs.csv, line 5: source and target are the same document (3)" in text
    assert "pairs.csv, line 6: the same pair as" in text and "line 2 (0, 1)" in text
    assert len(err.value.problems) == 5 and "nothing was embedded or judged" in text
    with pytest.raises(EndpointError, match=r"ENDPOINTS, pair 2 \('3 to 4'\): write it as 'source -> target'"):
        named_endpoints.parse("0 -> 1; 3 to 4")
    with pytest.raises(EndpointError, match=r"ENDPOINTS=gone\.csv: file not found"):
        named_endpoints.parse("gone.csv", beside=tmp_path / "archive.csv")
    (tmp_path / "bad.csv").write_text("from,to\n0,1\n", encoding="utf-8")
    with pytest.raises(EndpointError, match=r"bad\.csv: no column\(s\) \['source', 'target'\]"):
        named_endpoints.parse(str(tmp_path / "bad.csv"))


def test_named_pairs_replace_the_stratified_sample_and_pairs_without_a_path_are_listed():
    """On a chain graph (coherence high between neighbours in time only) the named pairs are the
    paths' endpoints, one pair with no forward path is counted and listed, not dropped."""
    from judgelab.narrative.paths import extraction, named_endpoints

    n = 8
    c = np.full((n, n), 0.1)
    for i in range(n - 1):
        c[i, i + 1] = c[i + 1, i] = 0.9
    c[3, 4] = c[4, 3] = 0.05          # the chain broken between 3 and 4: 0-3 and 4-7 are its two parts
    np.fill_diagonal(c, 1.0)
    dates = np.arange(n) * 10
    docs = pd.DataFrame({"doc": np.arange(n), "title": [f"d{i}" for i in range(n)],
                         "date": pd.to_datetime(dates, unit="D")})
    named = named_endpoints.load("0 -> 3; d7 -> d4; 1 -> 6", docs)
    paths = extraction.extract_narratives("own", c, 0.9, dates, docs["title"], np.zeros(n, int),
                                          np.eye(n), n_pairs=99, seed=1, named=named)
    mc = paths[paths["method"] == "maxcap"].set_index("pair_id")
    assert set(paths["stratum"]) == {"named"} and sorted(mc.index) == [0, 1]
    assert mc.loc[0, "path"] == [0, 1, 2, 3] and mc.loc[1, "path"] == [4, 5, 6, 7]  # turned round: 4 before 7
    assert paths.attrs["rejected"] == {"named": 1}
    status = named_endpoints.path_status(named, paths)
    assert status["maxcap_length_seed1"].isna().tolist() == [False, False, True]
    assert status["maxcap_length_seed1"].iloc[:2].tolist() == [4, 4]
    assert status["seeds_without_path"].tolist() == [0, 0, 1]
    contracts.check(paths, "narr_paths", "test", when="write")


def test_make_own_stops_on_bad_endpoints_before_any_notebook(tmp_path, monkeypatch, capfd):
    from judgelab import own_texts

    path = clustered_collection(tmp_path)
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path / "root"))
    ran = []
    monkeypatch.setattr(own_texts.pipeline, "run_notebook", lambda *a, **k: ran.append(a))
    code = own_texts.main(["collection", str(path), "--text", "body", "--date", "published", "--title", "headline",
                           "--embeddings", "archive.npy", "--endpoints", "Report 1 -> Report 99"])
    assert code == 2 and "ENDPOINTS, pair 1, field target: no document titled 'Report 99'" in capfd.readouterr().err
    assert ran == [] and not (tmp_path / "root" / "results" / "own").exists()


# ---------------------------------------------------------------- EMBEDDINGS=openai:<model>

def test_openai_embedding_route_priced_first_retried_cached_and_checked(tmp_path, monkeypatch):
    """`make own COLLECTION=... EMBEDDINGS=openai:text-embedding-3-small`: ESTIMATE=1 prices the
    texts the cache lacks (tiktoken counted here independently, at OpenAI's $0.02 per million); the
    embedding goes through notebook 07's own preparation to the fake server, survives a 500, sends
    no OpenAI key to a local host; a rerun pays nothing; an empty reply stops at its one call."""
    import tiktoken
    from fake_openai_server import FakeChatServer, Fault
    from judgelab import own_texts
    from judgelab.embeddings import EmbeddingCache
    from judgelab.narrative.landscape import build
    from judgelab.narrative.settings import landscape_settings

    path = clustered_collection(tmp_path)
    spec = "openai:text-embedding-3-small"
    base = tmp_path / "root"
    for var, value in {"JUDGELAB_OUTPUT_ROOT": str(base), "OPENAI_API_KEY": "sk-openai-must-stay-home"}.items():
        monkeypatch.setenv(var, value)
    for var in ("JUDGELAB_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    texts = pd.read_csv(path)["body"].tolist()
    enc = tiktoken.get_encoding("cl100k_base")
    tokens = sum(len(enc.encode(t)) for t in texts)
    args = ["collection", str(path), "--text", "body", "--date", "published", "--embeddings", spec, "--estimate"]

    def priced():
        assert own_texts.main(args) == 0
        return pd.read_csv(base / "results" / "own" / "archive" / "results" / "estimate" / "own_embeddings.csv").iloc[0]

    first = priced()
    assert (first["to_embed"], first["cached"], first["calls"], first["input_tokens"]) == (60, 0, 1, tokens)
    assert first["usd_standard"] == pytest.approx(tokens * 0.02 / 1e6) and first["usd_batch"] == pytest.approx(tokens * 0.01 / 1e6)
    assert not (base / "results" / "own" / "archive" / "results" / "cache").exists()  # the estimate made nothing

    root = own_texts.own_root("archive")
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(root))  # as make own runs notebook 07
    def embed():  # notebook 07's first cells: the collection read afresh, then embedded
        settings = own_collection.with_collection(landscape_settings("own", collections="own"), path, text="body",
                                                  date="published", embeddings=spec)
        assert settings.choices()["embedding.own"] == spec
        return build.prepare_collection("own", settings.collection_knobs("own"), settings.sources["own"],
                                        settings.embedding_url)  # as build_landscapes passes them

    expected = np.array([[len(t), t.count("a"), 1.0] for t in texts], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    with FakeChatServer(embeddings=[Fault.server_error(500)]) as srv:
        monkeypatch.setenv("JUDGELAB_BASE_URL", srv.base_url)
        col = embed()
        assert srv.count("/v1/embeddings") == 2 and srv.embedding_calls[-1]["model"] == "text-embedding-3-small"
        assert np.allclose(col.embeddings, expected, atol=1e-6) and col.embedding_source == spec
        assert set(srv.authorizations) == {"Bearer no-key"}  # the OpenAI key goes to OpenAI only
        embed()
        assert srv.count("/v1/embeddings") == 2  # the rerun: every text from the cache
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(base))
    again = priced()
    assert (again["to_embed"], again["cached"], again["calls"], again["usd_standard"]) == (0, 60, 0, 0)

    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path / "fresh"))
    usage = {"prompt_tokens": 0, "total_tokens": 0}
    empty = {"object": "list", "data": [], "model": "text-embedding-3-small", "usage": usage}
    short = {**empty, "data": [{"object": "embedding", "index": 0, "embedding": [1.0, 0.0, 1.0]}]}
    with FakeChatServer(embeddings=[empty, short]) as srv:
        monkeypatch.setenv("JUDGELAB_BASE_URL", srv.base_url)
        with pytest.raises(ValueError, match="No embedding data received"):  # the openai client's own check
            embed()
        assert srv.count("/v1/embeddings") == 1
        with pytest.raises(RuntimeError, match=r"openai:text-embedding-3-small, call 1 \(60 texts\): 1 vectors returned"):
            embed()
        assert srv.count("/v1/embeddings") == 2
    assert EmbeddingCache(tmp_path / "fresh" / "results" / "cache" / "embeddings.sqlite").count() == 0


def test_an_invalid_embedding_reply_is_refused_whole():
    from judgelab.embeddings import checked_reply

    assert checked_reply("m", [[1, 2], [3, 4]], 2, 1).shape == (2, 2)
    for vectors, message in (([[1, 2]], r"1 vectors returned for 2 texts"), ([[1, 2], [3]], r"vectors of length\(s\) \[1, 2\]"),
                             ([[], []], r"vectors of length\(s\) \[0\]"), ([[1, 2], [float("nan"), 0]], r"non-finite values in vector\(s\) \[1\]")):
        with pytest.raises(RuntimeError, match=r"m, call 4 \(2 texts\): " + message):
            checked_reply("m", vectors, 2, 4)


# ---------------------------------------------------------------- scale: the nearest-neighbour route

def _small_landscape(n: int = 150, seed: int = 3):
    """Clustered embeddings, soft topic memberships and dates (no UMAP needed for the graph)."""
    rng = np.random.default_rng(seed)
    topic = rng.integers(0, 4, n)
    emb = rng.normal(size=(4, 16))[topic] * 2 + rng.normal(size=(n, 16))
    memb = rng.dirichlet(np.full(4, 0.3), n)
    memb[np.arange(n), topic] += 2
    return emb, memb / memb.sum(axis=1, keepdims=True), rng.integers(0, 60, n)


def test_knn_route_is_the_exact_graph_when_every_neighbour_is_a_candidate_and_never_above_it_otherwise():
    from judgelab.narrative.landscape.coherence import coherence, coherence_matrix
    from judgelab.narrative.landscape.graph import critical_coherence, sparse_edges
    from judgelab.narrative.landscape.knn_graph import knn_coherence_graph
    from judgelab.narrative.paths.widest import widest_path, widest_path_sparse

    emb, memb, dates = _small_landscape()
    n = len(emb)
    c = coherence_matrix(emb, memb)
    tau = critical_coherence(c)
    full = knn_coherence_graph(emb, memb, k=n - 1, dates=dates)
    assert full.exact_neighbours and full.components == 1 and full.candidate_edges == n * (n - 1) // 2
    assert full.critical == pytest.approx(tau, abs=1e-6)
    # the same edges as the dense graph (an edge within float32 rounding of tau may go either way)
    u, v, w = sparse_edges(c, tau, dates)
    dense = {(a, b) for a, b, x in zip(u, v, w) if abs(x - tau) > 1e-6}
    knn = full.graph.tocoo()
    ours = {(a, b) for a, b, x in zip(knn.row, knn.col, knn.data) if abs(x - tau) > 1e-6}
    assert ours == dense
    # theta on an edge is eq. 1 as the per-pair reference (scipy's jensenshannon) computes it
    for a, b in list(ours)[:5]:
        assert full.graph[a, b] == pytest.approx(coherence(emb[a], emb[b], memb[a], memb[b]), abs=1e-6)
    for s, t in [(int(np.argmin(dates)), int(np.argmax(dates))), (3, 40), (10, 99)]:
        if dates[s] > dates[t]:
            s, t = t, s
        exact = widest_path(c, s, t, threshold=tau, dates=dates)
        assert widest_path_sparse(full.graph, s, t, dates=dates)[0] == exact[0]
    # fewer candidates: a subgraph, so its critical value is never above the exact one
    few = knn_coherence_graph(emb, memb, k=6, dates=dates)
    assert few.candidate_edges < n * 6 and few.critical <= tau + 1e-6
    part = few.graph.tocoo()
    assert np.allclose(part.data, c[part.row, part.col], atol=1e-6)  # every kept edge has its exact theta


def test_sparse_route_paths_are_the_dense_routes_when_every_neighbour_is_a_candidate():
    """Notebook 08 on the sparse route (the nearest-neighbour graph, theta computed per pair, the
    degrees from the graph) with k = n - 1 samples the same endpoints and extracts the same
    max-capacity and random paths as on the dense matrix; at a small k it runs on the same code."""
    from judgelab.narrative.landscape.coherence import coherence_matrix
    from judgelab.narrative.landscape.graph import critical_coherence
    from judgelab.narrative.landscape.knn_graph import knn_coherence_graph
    from judgelab.narrative.paths.extraction import PairCoherence, extract_narratives

    emb, memb, dates = _small_landscape()
    n = len(emb)
    labels = memb.argmax(axis=1)
    titles = [f"d{i}" for i in range(n)]
    c = coherence_matrix(emb, memb)
    dense = extract_narratives("own", c, critical_coherence(c), dates, titles, labels, emb, n_pairs=10, seed=5)
    full = knn_coherence_graph(emb, memb, k=n - 1)
    sparse = extract_narratives("own", PairCoherence(emb, memb, np.e), full.critical, dates, titles, labels, emb,
                                n_pairs=10, seed=5, graph=full.graph)
    cols = ["pair_id", "stratum", "method", "source", "target", "length"]
    assert len(dense) == 20
    assert sparse[cols].equals(dense[cols])
    assert sparse["path"].tolist() == dense["path"].tolist()
    assert np.allclose(sparse["min_coherence"], dense["min_coherence"], atol=1e-6)
    few = knn_coherence_graph(emb, memb, k=8)
    small = extract_narratives("own", PairCoherence(emb, memb, np.e), few.critical, dates, titles, labels, emb,
                               n_pairs=10, seed=5, graph=few.graph)
    edges = few.graph.tocoo()
    present = set(zip(edges.row.tolist(), edges.col.tolist()))
    for path in small.loc[small["method"] == "maxcap", "path"]:   # every step an edge of the sparse graph
        assert all((a, b) in present for a, b in zip(path[:-1], path[1:]))


def test_every_list_every_problem_error_is_one_type_with_its_own_words():
    """Stories, collection and endpoint pairs raise one error type (the floor's InputProblems),
    each message a count, what was not done, then one line per problem."""
    from judgelab.narrative.paths.named_endpoints import EndpointError
    from judgelab.params import InputProblems

    for cls, head in ((OwnTextError, "2 problem(s) with your stories; nothing was sent to a judge:"),
                      (OwnCollectionError, "2 problem(s) with your collection; nothing was embedded or judged:"),
                      (EndpointError, "2 problem(s) with ENDPOINTS; nothing was embedded or judged:")):
        err = cls(["a.txt: empty file", "b.txt: binary file"])
        assert isinstance(err, InputProblems) and isinstance(err, ValueError)
        assert str(err) == f"{head}\n- a.txt: empty file\n- b.txt: binary file"
        assert err.problems == ["a.txt: empty file", "b.txt: binary file"]


def test_large_collection_generator_writes_a_collection_make_own_reads(tmp_path):
    """benchmarks/large_collection.py: n rows of real VisPub text, unique titles, dates within each
    paper's year, and a unit-norm .npy of n rows that the collection loader accepts as its vectors
    (the pool's MiniLM vectors are given here, so no model runs)."""
    import importlib.util

    from judgelab.narrative.landscape.collections import load_vispub

    spec = importlib.util.spec_from_file_location(
        "large_collection", Path(__file__).resolve().parents[1] / "benchmarks" / "large_collection.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    pool = load_vispub().docs.iloc[:12]
    np.save(tmp_path / "pool_minilm_12.npy", np.random.default_rng(0).normal(size=(12, 384)).astype(np.float32))
    csv, npy = gen.build(300, 12, tmp_path)
    frame, vectors = pd.read_csv(csv), np.load(npy)
    assert len(frame) == 300 and frame["title"].is_unique and vectors.shape == (300, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    assert set(frame["text"]) <= set(pool["text"])
    source = pool.set_index("text")["date"]
    years = pd.to_datetime(frame["date"]).dt.year.to_numpy()
    assert (years == pd.to_datetime(source.loc[frame["text"]].to_numpy()).year).all()
    col = own_collection.load(csv, text="text", date="date", title="title", embeddings=npy.name)
    assert len(col) == 300 and col.embeddings.shape == (300, 384)


def test_large_collection_generator_spliced_texts_are_distinct_halves_of_two_abstracts(tmp_path):
    """``--texts spliced``: n distinct texts, each the first half (by sentences) of one pool
    abstract and the second half of another, dated in the first one's year; no vectors written."""
    import importlib.util

    from judgelab.narrative.landscape.collections import load_vispub

    spec = importlib.util.spec_from_file_location(
        "large_collection", Path(__file__).resolve().parents[1] / "benchmarks" / "large_collection.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    pool = load_vispub().docs.iloc[:12]
    csv, npy = gen.build(100, 12, tmp_path, texts="spliced")
    frame = pd.read_csv(csv)
    assert npy is None and not list(tmp_path.glob("*.npy"))
    assert len(frame) == 100 and frame["text"].is_unique and frame["title"].is_unique
    firsts = {gen.halves(t)[0]: i for i, t in enumerate(pool["text"])}
    seconds = {gen.halves(t)[1] for t in pool["text"]}
    for text, date in zip(frame["text"], frame["date"]):
        head = next(h for h in firsts if text.startswith(h + " ") or text == h)
        assert text[len(head):].strip() in seconds
        assert pd.Timestamp(date).year == pd.Timestamp(pool["date"].iloc[firsts[head]]).year
    with pytest.raises(ValueError, match="raise --pool"):
        gen.build(200, 12, tmp_path, texts="spliced")                 # 12 abstracts give 132 ordered pairs
