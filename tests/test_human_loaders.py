"""Loaders of the human-rated sets on the real mirrored files (counts as their READMEs state)."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from judgelab import paths
from judgelab.human import TIDY_COLUMNS, artifice, confederacy
from judgelab.human import DataNotFound, dataset_dir

MIRROR = paths.data_mirror()
needs_mirror = pytest.mark.skipif(
    MIRROR is None or not (MIRROR / "llm_stories").is_dir(),
    reason="DATA_MIRROR is unset or lacks llm_stories/ (set DATA_MIRROR=../shared/mirror to run the loader tests)",
)


@pytest.fixture(scope="module")
def conf_dir() -> Path:
    return dataset_dir("confederacy")


@pytest.fixture(scope="module")
def conf_ratings(conf_dir):
    return confederacy.load_ratings(conf_dir)


@pytest.fixture(scope="module")
def art_dir() -> Path:
    return dataset_dir("artifice")


@pytest.fixture(scope="module")
def art_verdicts(art_dir):
    return artifice.load_verdicts(art_dir)


# ----------------------------------------------------------------------------- Confederacy

@needs_mirror
def test_confederacy_counts_as_readme(conf_ratings):
    r = conf_ratings
    assert list(r.columns) == list(TIDY_COLUMNS)
    # README: 65 stories (60 by 12 LLMs, 5 each, + 5 human), 10 raters, 10 criteria.
    assert r["story"].nunique() == 65
    per_source = r.groupby("source")["story"].nunique()
    assert len(per_source) == 13 and (per_source == 5).all()
    assert set(per_source.index) - {"human"} == set(confederacy.SOURCES) - {"human"}
    assert r["rater"].nunique() == 10
    assert r["criterion"].nunique() == 10 and list(dict.fromkeys(r["criterion"])) == list(confederacy.CRITERIA)
    assert len(r) == 65 * 10 * 2
    # design: every story rated by 2 raters; every rater rates the 13 stories of one group
    assert (r.groupby("story")["rater"].nunique() == 2).all()
    assert (r.groupby("rater")["story"].nunique() == 13).all()
    assert r["value"].between(0, 10).all()
    assert np.array_equal(r["value"], np.round(r["value"]))


@needs_mirror
def test_confederacy_stories_join_and_word_counts(conf_dir, conf_ratings):
    s = confederacy.load_stories(conf_dir)
    assert len(s) == 65 and set(s["story"]) == set(conf_ratings["story"])
    llm = s[s["source"] != "human"]
    # README: the 60 rated LLM stories have min 59, median 328, max 1,223 words; one has >= 1,000.
    assert (llm["words"].min(), llm["words"].max()) == (59, 1223)
    assert llm["words"].median() == pytest.approx(328, abs=0.5)  # 327.5 for 60 stories, README rounds
    assert int((llm["words"] >= 1000).sum()) == 1
    gpt4 = s[s["source"] == "chatgpt-gpt4"]["words"]
    human = s[s["source"] == "human"]["words"]
    assert (gpt4.min(), gpt4.max()) == (807, 997)
    assert (human.min(), human.max()) == (695, 1189)
    # cp1252 files decoded: curly apostrophes, no replacement characters
    assert not s["text"].str.contains("\ufffd").any()


@needs_mirror
def test_confederacy_codes_resolve_consistently(conf_dir):
    m = confederacy.load_mapping(conf_dir)
    d = confederacy.load_deanonymisation(conf_dir)
    assert len(m) == len(d) == 65 and set(m["code"]) == set(d["code"])
    assert "2477" in set(d["code"])  # an all-digit code stored as a number in the workbook


@needs_mirror
def test_confederacy_bad_rating_names_row_and_column(conf_dir, tmp_path):
    import openpyxl

    copy = tmp_path / "conf"
    shutil.copytree(conf_dir / "anonymization", copy / "anonymization")
    (copy / "rating").mkdir()
    wb = openpyxl.load_workbook(conf_dir / confederacy.RATINGS_FILE)
    ws = wb[confederacy.RATINGS_SHEET]
    row = next(r for r in range(1, ws.max_row + 1) if str(ws.cell(r, 1).value) == "9189")
    ws.cell(row, 5).value = 11  # readability of rater 1, out of the 0-10 scale
    wb.save(copy / confederacy.RATINGS_FILE)
    with pytest.raises(confederacy.ConfederacyFormatError) as err:
        confederacy.load_ratings(copy, check_averages=False)
    msg = str(err.value)
    assert f"row {row}" in msg and "column 5" in msg and "readability" in msg and "9189" in msg


@needs_mirror
def test_confederacy_mislabelled_mapping_is_an_error(conf_dir, tmp_path):
    copy = tmp_path / "conf"
    shutil.copytree(conf_dir / "rating", copy / "rating")
    (copy / "anonymization").mkdir()
    text = (conf_dir / confederacy.MAPPING_FILE).read_text()
    swapped = text.replace("alpaca-13b-2023-04-07-temp07-1.txt,9189.txt", "bard-2023-04-11-1.txt,9189.txt", 1)
    swapped = swapped.replace("bard-2023-04-11-1.txt,EE4I.txt", "alpaca-13b-2023-04-07-temp07-1.txt,EE4I.txt", 1)
    (copy / confederacy.MAPPING_FILE).write_text(swapped)
    with pytest.raises(confederacy.ConfederacyFormatError, match="9189.*does not match story file"):
        confederacy.load_ratings(copy)


def test_missing_data_names_where_it_looked(monkeypatch, tmp_path):
    monkeypatch.setenv("JUDGELAB_DATA_RAW", str(tmp_path / "raw"))
    monkeypatch.setenv("DATA_MIRROR", str(tmp_path / "nowhere"))
    with pytest.raises(DataNotFound, match="confederacy_of_models"):
        dataset_dir("confederacy")


# ----------------------------------------------------------------------------- Art or Artifice

@needs_mirror
def test_artifice_counts_as_readme(art_verdicts, art_dir):
    v = art_verdicts
    assert list(v.columns) == list(TIDY_COLUMNS)
    # README: 2,016 judgements = 48 stories x 14 tests x 3 experts, 11 experts in all.
    assert len(v) == 2016
    assert v["story"].nunique() == 48 and v["criterion"].nunique() == 14
    assert v["rater"].nunique() == 11
    assert (v.groupby("story")["rater"].nunique() == 3).all()
    assert set(v["value"]) == {0.0, 1.0}
    assert v.groupby("source")["story"].nunique().to_dict() == {"Claude": 12, "GPT3.5": 12, "GPT4": 12, "NewYorker": 12}
    tests = artifice.load_tests(art_dir)
    assert len(tests) == 14 and tests.groupby("torrance_dimension").size().to_dict() == {
        "Elaboration": 3, "Flexibility": 3, "Fluency": 5, "Originality": 3}


@needs_mirror
def test_artifice_stories_and_word_counts(art_dir):
    s = artifice.load_stories(art_dir)
    assert len(s) == 36 and "NewYorker" not in set(s["source"])
    # README word counts (whitespace tokens): min / median / max per model
    want = {"GPT3.5": (1126, 1626, 2455), "GPT4": (1074, 1479, 2398), "Claude": (831, 1338, 1541)}
    for source, (lo, med, hi) in want.items():
        w = s[s["source"] == source]["words"]
        assert len(w) == 12 and (w.min(), w.max()) == (lo, hi)
        assert w.median() == pytest.approx(med, abs=0.5)
    assert int((s["words"] >= 1500).sum()) == 16
    assert len(artifice.load_stories(art_dir, with_text_only=False)) == 48


@needs_mirror
def test_artifice_published_judges(art_dir):
    names = artifice.published_judges(art_dir)
    assert names == ["cgpt", "claude3-opus", "claudev13", "claudev2", "claudev21", "gemini-pro", "gpt4"]
    g = artifice.load_published_judge("gpt4", art_dir)
    assert list(g.columns) == list(TIDY_COLUMNS) and len(g) == 672 and g["value"].notna().all()
    gem = artifice.load_published_judge("gemini-pro", art_dir)
    assert len(gem) == 658 and gem["value"].isna().sum() > 0  # refusals stay visible as NaN


@needs_mirror
def test_artifice_bad_verdict_names_record(art_dir, tmp_path):
    import json

    copy = tmp_path / "art"
    shutil.copytree(art_dir / "tests", copy / "tests")
    (copy / "annotations").mkdir()
    recs = json.loads((art_dir / artifice.ANNOTATIONS_FILE).read_text())
    recs[5]["binary_verdict"] = "Maybe"
    (copy / artifice.ANNOTATIONS_FILE).write_text(json.dumps(recs))
    with pytest.raises(artifice.ArtificeFormatError, match=r"record 5 .*'Maybe'"):
        artifice.load_verdicts(copy)
