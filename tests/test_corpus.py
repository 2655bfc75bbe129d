"""The story loader, the manifest's validation errors and the acquisition order, on fixtures made here."""
from __future__ import annotations

import csv
import functools
import hashlib
import http.server
import threading
from pathlib import Path

import pytest

from judgelab.corpus import acquire, manifest, text

HEADER = list(manifest.REQUIRED) + ["text_sha256", "extract_start", "extract_end"]
STORY = ("THE TEST STORY\n\nby A. WRITER\n\nIt was a dark night, and the  wind\nwas loud.\r\n\r\n"
         "“Who’s there?” she asked.\n\n\n\nNobody answered. The end.\n")


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


@pytest.fixture
def env(tmp_path, monkeypatch):
    raw, mirror = tmp_path / "raw", tmp_path / "mirror"
    raw.mkdir(), mirror.mkdir()
    monkeypatch.setenv("JUDGELAB_DATA_RAW", str(raw))
    monkeypatch.setenv("DATA_MIRROR", str(mirror))
    return tmp_path


def write_manifest(path: Path, rows: list[dict]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=HEADER)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in HEADER})
    return path


def story_row(story_id="s1", data=STORY.encode(), category="pulp", **kw) -> dict:
    row = {"story_id": story_id, "category": category, "title": "The Test Story", "author": "A. Writer",
           "year": "1931", "translator": "", "model": "", "tier": "", "words": "0", "sha256": sha(data),
           "raw_path": f"stories/{story_id}.txt", "mirror_path": f"stories/{story_id}.txt",
           "record": "", "source_url": ""}
    row.update(kw)
    return row


def put_mirror(env: Path, row: dict, data: bytes) -> None:
    p = env / "mirror" / row["mirror_path"]
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)


# ------------------------------------------------------------------ text cleaning

def test_gutenberg_header_and_licence_are_stripped():
    book = ("The Project Gutenberg eBook of Tales\n\nLicence blah\n"
            "*** START OF THE PROJECT GUTENBERG EBOOK TALES ***\n\nStory body here.\n\n"
            "*** END OF THE PROJECT GUTENBERG EBOOK TALES ***\n\nSection 5. General Information ...")
    assert text.clean_story(book) == "Story body here."


def test_normalise_keeps_paragraphs_and_joins_wrapped_lines():
    out = text.normalise(STORY)
    assert text.paragraphs(out) == ["THE TEST STORY", "by A. WRITER", "It was a dark night, and the wind was loud.",
                                    "“Who’s there?” she asked.", "Nobody answered. The end."]


def test_normalise_is_stable_under_whitespace_and_unicode_forms():
    decomposed = "Cafe\u0301 ﬁne\u00a0day"  # combining accent, fi ligature, no-break space
    assert text.normalise(decomposed) == "Café fine day"
    assert text.normalise(text.normalise(STORY)) == text.normalise(STORY)


def test_count_words_counts_contractions_and_hyphenated_words_once():
    assert text.count_words("Don't stop -- the half-sentient lichens, 3 of them!") == 8


# ------------------------------------------------------------------ loading

def test_load_corpus_reads_cleans_and_flags_range(env):
    row = story_row()
    put_mirror(env, row, STORY.encode())
    m = write_manifest(env / "stories.csv", [row])
    corpus = manifest.load_corpus(m)
    assert list(corpus.columns) == manifest.CORPUS_COLUMNS
    rec = corpus.iloc[0]
    assert rec["words"] == text.count_words(text.normalise(STORY))
    assert not rec["in_range"]  # a tiny story is outside 2,000-8,000 and is kept, flagged
    assert manifest.range_exceptions(corpus)["limit"].tolist() == ["< 2000"]
    assert (env / "raw" / row["raw_path"]).exists()  # acquired from the mirror into data/raw


@pytest.mark.parametrize("field,value,needle", [
    ("category", "novel", "unknown category 'novel'"),
    ("tier", "great", "unknown tier 'great'"),
])
def test_manifest_rejects_bad_values_naming_line_and_fix(env, field, value, needle):
    m = write_manifest(env / "stories.csv", [story_row(), story_row("s2", **{field: value})])
    with pytest.raises(manifest.ManifestError) as exc:
        manifest.read_manifest(m)
    assert "line 3" in str(exc.value) and needle in str(exc.value) and "s2" in str(exc.value)


def test_duplicate_id_names_both_lines(env):
    m = write_manifest(env / "stories.csv", [story_row(), story_row()])
    with pytest.raises(manifest.ManifestError, match=r"line 3: duplicate story_id 's1' \(first on line 2\)"):
        manifest.read_manifest(m)


def test_missing_file_says_how_to_provide_it(env):
    m = write_manifest(env / "stories.csv", [story_row()])
    with pytest.raises(manifest.ManifestError, match=r"line 2 \(story_id=s1\): file missing: .*make data"):
        manifest.load_corpus(m)


def test_checksum_mismatch(env):
    row = story_row()
    (env / "raw" / "stories").mkdir(parents=True)
    (env / "raw" / row["raw_path"]).write_bytes(b"tampered text")
    put_mirror(env, row, b"also wrong")
    m = write_manifest(env / "stories.csv", [row])
    with pytest.raises(manifest.ManifestError, match=r"checksum mismatch .* manifest says " + row["sha256"]):
        manifest.load_corpus(m)


def test_empty_text(env):
    data = b"   \n\n  \n"
    row = story_row(data=data)
    put_mirror(env, row, data)
    with pytest.raises(manifest.ManifestError, match="is empty after cleaning"):
        manifest.load_corpus(write_manifest(env / "stories.csv", [row]))


def test_undecodable_bytes_name_file_and_offset(env):
    data = b"Good start \xff\xfe bad bytes"
    row = story_row(data=data)
    put_mirror(env, row, data)
    with pytest.raises(ValueError, match=r"s1.*offset 11 are not valid UTF-8"):
        manifest.load_corpus(write_manifest(env / "stories.csv", [row]))


def test_missing_column(env):
    p = env / "bad.csv"
    p.write_text("story_id,category\ns1,pulp\n")
    with pytest.raises(manifest.ManifestError, match="missing column"):
        manifest.read_manifest(p)


# ------------------------------------------------------------------ acquisition order

def test_raw_file_wins_over_mirror(env):
    row = story_row()
    (env / "raw" / "stories").mkdir(parents=True)
    (env / "raw" / row["raw_path"]).write_bytes(STORY.encode())
    out = acquire.acquire_story(row, env / "mirror")
    assert out.ok and out.origin == "raw"


def test_jsonl_record_is_extracted_from_the_mirror(env):
    import json
    story = "Chapter 1\n\nA robot dreamed."
    (env / "mirror" / "llm").mkdir()
    with open(env / "mirror" / "llm" / "set.jsonl", "w") as fh:
        fh.write(json.dumps({"model": "m1", "iteration": 0, "story_text": "other"}) + "\n")
        fh.write(json.dumps({"model": "m1", "iteration": 1, "story_text": story}) + "\n")
    row = story_row(data=story.encode(), mirror_path="llm/set.jsonl", record="model=m1|iteration=1")
    out = acquire.acquire_story(row, env / "mirror")
    assert out.ok and out.origin == "mirror"
    assert (env / "raw" / row["raw_path"]).read_text() == story


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def local_site(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield site, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_download_cuts_the_story_out_of_a_whole_book(env, local_site):
    site, base = local_site
    story = text.normalise(STORY)
    book = ("*** START OF THE PROJECT GUTENBERG EBOOK X ***\n\nOTHER STORY\n\nSomething else.\n\n"
            + STORY.replace("the  wind\n", "the\nwind ") + "\n\nNEXT STORY\n\nMore.\n*** END OF THE PROJECT GUTENBERG EBOOK X ***\n")
    (site / "book.txt").write_text(book)
    words = story.split()
    row = story_row(data=story.encode(), source_url=f"{base}/book.txt",
                    extract_start=" ".join(words[:5]), extract_end=" ".join(words[-4:]),
                    text_sha256=sha(story.encode()))
    out = acquire.acquire_story(row, mirror=None)
    assert out.ok and out.origin == "url", out.problems
    assert (env / "raw" / row["raw_path"]).read_text() == story


def test_external_file_checked_download_and_missing_report(env, local_site):
    site, base = local_site
    (site / "f.csv").write_bytes(b"a,b\n1,2\n")
    good = {"key": "f", "raw_path": "ext/f.csv", "mirror_path": "ext/f.csv", "url": f"{base}/f.csv",
            "convert": "", "sha256": sha(b"a,b\n1,2\n")}
    assert acquire.acquire_file(good, env / "mirror").origin == "url"
    bad = dict(good, key="g", raw_path="ext/g.csv", sha256="0" * 64)
    out = acquire.acquire_file(bad, env / "mirror")
    assert not out.ok
    msg = acquire._missing_message([out])
    assert "g:" in msg and "expected " + "0" * 64 in msg and "DATA_MIRROR" in msg


def test_committed_manifest_is_valid_and_matches_the_design():
    df = manifest.read_manifest()
    counts = df["category"].value_counts().to_dict()
    assert counts == {"canonical": 50, "pulp": 30, "llm": 20}
    llm = df[df["category"] == "llm"]
    assert llm["tier"].value_counts().to_dict() == {"high": 10, "average": 5, "low": 5}
