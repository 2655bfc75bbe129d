"""*Art or Artifice* (TTCW): expert Yes/No verdicts on 14 creativity tests for 48 stories.

Source: Chakrabarty, Laban, Agarwal, Muresan & Wu, "Art or Artifice? Large Language Models and
the False Promise of Creativity", CHI 2024 (arXiv:2309.14556); data from
github.com/salesforce/creativity_eval, folder ``Art_or_Artifice/`` (BSD 3-Clause).

48 stories: 12 New Yorker stories (URL only, no text) and 36 LLM stories (12 each by GPT-3.5,
GPT-4 and Claude v1.3) from the same 12 plots; 14 tests x 3 of 11 experts = 2,016 verdicts; the
tests under the four Torrance dimensions; published LLM-judge answers (free text beginning with
Yes/No). In the tidy table a verdict is 1.0 (Yes, the story passes the test) or 0.0; the criterion
is the test's category in snake case, the rater ``expert<idx>``, the source the story id's suffix.
A story's quality score in the paper's sense is the number of tests passed.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from judgelab.human import TIDY_COLUMNS, dataset_dir

DATASET = "artifice"
STORIES_FILE = "stories/ttcw_short_stories.json"
ANNOTATIONS_FILE = "annotations/ttcw_annotations.json"
TESTS_FILE = "tests/ttcw_all_tests.json"
LLM_JUDGE_DIR = "llm_judge_annotations"

VERDICTS: dict[str, float] = {"yes": 1.0, "no": 0.0}
DIMENSIONS: tuple[str, ...] = ("Fluency", "Flexibility", "Originality", "Elaboration")
"""The four Torrance dimensions, in the paper's order."""


class ArtificeFormatError(ValueError):
    """A file of the data set does not have the expected fields or values."""


def slug(text: str) -> str:
    """``"Understandability and Coherence"`` -> ``"understandability_and_coherence"``."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def source_of(story_id: str) -> str:
    """The source of a story id ``<idx>_<source>`` (``GPT3.5``, ``GPT4``, ``Claude``, ``NewYorker``)."""
    idx, sep, source = str(story_id).partition("_")
    if not sep or not idx.isdigit() or not source:
        raise ArtificeFormatError(f"story id {story_id!r} is not '<index>_<source>'")
    return source


def _read_json_list(path: Path, fields: tuple[str, ...]) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, list):
        raise ArtificeFormatError(f"{path}: expected a JSON list of records, got {type(data).__name__}")
    for i, rec in enumerate(data):
        missing = [f for f in fields if f not in rec]
        if missing:
            raise ArtificeFormatError(f"{path}, record {i}: missing field(s) {missing}")
    return data


def load_tests(root: Path | str | None = None) -> pd.DataFrame:
    """The 14 tests: (ttcw_idx, criterion, category, torrance_dimension, question), in order."""
    path = dataset_dir(DATASET, root) / TESTS_FILE
    recs = _read_json_list(path, ("ttcw_idx", "torrance_dimension", "category", "question"))
    out = pd.DataFrame([
        {"ttcw_idx": int(r["ttcw_idx"]), "criterion": slug(r["category"]), "category": r["category"],
         "torrance_dimension": r["torrance_dimension"], "question": r["question"]}
        for r in recs
    ]).sort_values("ttcw_idx", ignore_index=True)
    bad = sorted(set(out["torrance_dimension"]) - set(DIMENSIONS))
    if bad or out["criterion"].duplicated().any():
        raise ArtificeFormatError(f"{path}: unknown dimensions {bad} or duplicated test categories")
    return out


def _verdict(value, where: str) -> float:
    key = str(value).strip().lower()
    if key not in VERDICTS:
        raise ArtificeFormatError(f"{where}: binary_verdict {value!r} is neither Yes nor No")
    return VERDICTS[key]


def load_verdicts(root: Path | str | None = None) -> pd.DataFrame:
    """Every expert verdict, tidy (2,016 rows), ``ttcw_idx`` checked against the tests file."""
    folder = dataset_dir(DATASET, root)
    path = folder / ANNOTATIONS_FILE
    tests = load_tests(folder).set_index("ttcw_idx")
    recs = _read_json_list(path, ("story_id", "expert_idx", "ttcw_idx", "category", "binary_verdict"))
    rows = []
    for i, r in enumerate(recs):
        where = f"{path}, record {i} (story {r['story_id']}, test {r['ttcw_idx']})"
        idx = int(r["ttcw_idx"])
        if idx not in tests.index or tests.at[idx, "category"] != r["category"]:
            raise ArtificeFormatError(f"{where}: test {idx} / category {r['category']!r} not in {TESTS_FILE}")
        rows.append((DATASET, str(r["story_id"]), source_of(r["story_id"]), tests.at[idx, "criterion"],
                     f"expert{int(r['expert_idx'])}", _verdict(r["binary_verdict"], where)))
    out = pd.DataFrame(rows, columns=list(TIDY_COLUMNS))
    dup = out.duplicated(["story", "criterion", "rater"])
    if dup.any():
        first = out[dup].iloc[0]
        raise ArtificeFormatError(f"{path}: expert {first.rater} judged story {first.story} on {first.criterion} twice")
    return out


def load_stories(root: Path | str | None = None, *, with_text_only: bool = True) -> pd.DataFrame:
    """(story, source, title, plot, words, text); ``with_text_only``: no URL-only records."""
    path = dataset_dir(DATASET, root) / STORIES_FILE
    recs = _read_json_list(path, ("story_id", "story_name", "plot", "content"))
    rows = []
    for r in recs:
        text = str(r["content"]).strip()
        has_text = not re.fullmatch(r"https?://\S+", text)
        if with_text_only and not has_text:
            continue
        rows.append({"story": r["story_id"], "source": source_of(r["story_id"]), "title": r["story_name"],
                     "plot": r["plot"], "words": len(text.split()) if has_text else 0,
                     "text": text if has_text else ""})
    return pd.DataFrame(rows)


_JUDGE_ID = re.compile(r"^story_(\d+_[^_]+)_test(\d+)$")
_FIRST_WORD = re.compile(r"^\W*(\w+)")


def published_judges(root: Path | str | None = None) -> list[str]:
    """Names of the published LLM judges (``annotations_<name>.jsonl``), sorted."""
    folder = dataset_dir(DATASET, root) / LLM_JUDGE_DIR
    return sorted(p.stem.removeprefix("annotations_") for p in folder.glob("annotations_*.jsonl"))


def load_published_judge(model: str, root: Path | str | None = None) -> pd.DataFrame:
    """A published LLM judge's verdicts, tidy: first word Yes -> 1.0, No -> 0.0, else NaN."""
    folder = dataset_dir(DATASET, root)
    path = folder / LLM_JUDGE_DIR / f"annotations_{model}.jsonl"
    tests = load_tests(folder).set_index("ttcw_idx")
    rows = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            rec = json.loads(line)
            m = _JUDGE_ID.match(str(rec.get("id", "")))
            if not m or int(m.group(2)) not in tests.index:
                raise ArtificeFormatError(f"{path}, line {n}: id {rec.get('id')!r} is not 'story_<idx>_<source>_test<k>'")
            word = _FIRST_WORD.match(str(rec.get("response") or ""))
            value = VERDICTS.get(word.group(1).lower(), float("nan")) if word else float("nan")
            story = m.group(1)
            rows.append((DATASET, story, source_of(story), tests.at[int(m.group(2)), "criterion"], model, value))
    return pd.DataFrame(rows, columns=list(TIDY_COLUMNS))
