"""*A Confederacy of Models*: 65 stories rated by 10 people on 10 criteria.

Source: Gómez-Rodríguez & Williams, Findings of EMNLP 2023 (arXiv:2310.08433); data from
github.com/komoku/confederacy-of-models (CC BY-SA 4.0). Every story answers one prompt (Ignatius J.
Reilly against a pterodactyl, in the style of John Kennedy Toole); 60 are by 12 LLMs (5 each), 5 by
human writers. Layout of ``rating/RatersSheet-WithResults.xlsx`` (checked by the loader):

- sheet "Rater's Sheet Unsorted": one row per story: anonymised code (A), model label (B), group
  (C, 1-5; 5 groups of 13 stories, one of each source), then three blocks of 10 rubric columns
  headed by the rubric descriptions: the group's two raters (``g<group>_r<1|2>``, 10 raters in
  all) and their averages (formulas, checked against the mean of the two).
- sheet "Deanonymization": code -> (model short name, number).
- ``anonymization/mapping-grouped.csv``: story file name -> ``<code>.txt``.

Ratings are integers on the rubric's 0–10 scale ("out of 10"; a few zeros occur).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from judgelab.human import TIDY_COLUMNS, dataset_dir, read_text_lenient

DATASET = "confederacy"
RATINGS_FILE = "rating/RatersSheet-WithResults.xlsx"
RATINGS_SHEET = "Rater's Sheet Unsorted"
DEANON_SHEET = "Deanonymization"
MAPPING_FILE = "anonymization/mapping-grouped.csv"
STORIES_DIR = "corpus-full"

CRITERIA: dict[str, str] = {
    "readability": "Readability",
    "narrative_elements": "Narrative elts.",
    "structural_elements": "Structural elts.",
    "plot_logic": "Plot logic",
    "creativity": "Creativity",
    "jkt_style": "JKT style",
    "epic_genre": "Epic genre",
    "combat": "Combat",
    "accurate_characters": "Acc. characters",
    "humor": "Humor",
}
"""The 10 rubric items in sheet order: tidy name -> the sheet's description."""

SOURCES: tuple[str, ...] = (
    "alpaca-13b", "bard", "bing-creative", "chatgpt-free", "chatgpt-gpt4", "claude12",
    "dolly-v2-12b", "gpt4all-j", "koala-13b", "OA_SFT_Llama_30B", "stablelm-tuned-alpha-7b",
    "vicuna-13b", "human",
)
"""The 12 LLMs (named as in the data set's README and file names) and ``human``."""

N_GROUPS = 5
RATERS_PER_GROUP = 2
SCALE = (0, 10)


class ConfederacyFormatError(ValueError):
    """The ratings workbook or the mapping does not have the expected layout or values."""


def source_of(story: str) -> str:
    """The source (LLM name or ``human``) of a story file name or stem, by its prefix."""
    stem = Path(story).stem
    for src in sorted(SOURCES, key=len, reverse=True):
        if stem.startswith(src):
            return src
    raise ConfederacyFormatError(f"{story}: file name matches none of the sources {', '.join(SOURCES)}")


def _code(value) -> str:
    """An anonymised code as text (Excel stores all-digit codes such as 2477 as numbers)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def load_mapping(root: Path | str | None = None) -> pd.DataFrame:
    """``anonymization/mapping-grouped.csv`` as (code, story, source, file), one row per story."""
    folder = dataset_dir(DATASET, root)
    path = folder / MAPPING_FILE
    raw = pd.read_csv(path, dtype=str)
    expected = {"Original", "Anonymized"}
    if not expected <= set(raw.columns):
        raise ConfederacyFormatError(f"{path}: expected columns {sorted(expected)}, found {list(raw.columns)}")
    rows = []
    for i, rec in raw.iterrows():
        orig, anon = str(rec["Original"]).strip(), str(rec["Anonymized"]).strip()
        if not anon.endswith(".txt") or not orig.endswith(".txt"):
            raise ConfederacyFormatError(f"{path}, row {i + 2}: expected '<story>.txt,<code>.txt', got {orig!r},{anon!r}")
        rows.append({"code": anon[:-4], "story": orig[:-4], "source": source_of(orig), "file": orig})
    out = pd.DataFrame(rows)
    dup = out["code"][out["code"].duplicated()].tolist()
    if dup:
        raise ConfederacyFormatError(f"{path}: codes appear more than once: {dup}")
    return out


def load_deanonymisation(root: Path | str | None = None) -> pd.DataFrame:
    """The workbook's "Deanonymization" sheet as (code, label, number), one row per story."""
    path = dataset_dir(DATASET, root) / RATINGS_FILE
    sheet = pd.read_excel(path, sheet_name=DEANON_SHEET, header=None, engine="openpyxl")
    rows = []
    for i, rec in sheet.iterrows():
        cells = [c for c in rec.tolist() if not (isinstance(c, float) and math.isnan(c))]
        if len(cells) != 3:
            if cells:
                raise ConfederacyFormatError(f"{path}, sheet {DEANON_SHEET!r}, row {i + 1}: expected label, number, code; got {cells}")
            continue
        label, number, code = cells
        rows.append({"code": _code(code), "label": str(label).strip(), "number": int(number)})
    return pd.DataFrame(rows)


def _find_cells(sheet: pd.DataFrame, text: str) -> list[tuple[int, int]]:
    hits = np.argwhere(sheet.astype(str).apply(lambda col: col.str.strip()).to_numpy() == text)
    return [(int(r), int(c)) for r, c in hits]


def _rubric_blocks(sheet: pd.DataFrame, path: Path) -> tuple[int, list[int]]:
    """Row of the rubric descriptions and the first column of each 10-criterion block."""
    first = CRITERIA[next(iter(CRITERIA))]
    hits = _find_cells(sheet, first)
    rows = {r for r, _ in hits}
    if len(rows) != 1 or len(hits) != RATERS_PER_GROUP + 1:
        raise ConfederacyFormatError(
            f"{path}, sheet {RATINGS_SHEET!r}: expected one header row with {RATERS_PER_GROUP + 1} blocks "
            f"starting {first!r} (two raters + averages), found at {[(r + 1, c + 1) for r, c in hits]}"
        )
    header_row = rows.pop()
    starts = sorted(c for _, c in hits)
    labels = list(CRITERIA.values())
    for start in starts:
        got = [str(v).strip() for v in sheet.iloc[header_row, start:start + len(labels)]]
        if got != labels:
            raise ConfederacyFormatError(
                f"{path}, sheet {RATINGS_SHEET!r}, row {header_row + 1}, column {start + 1}: rubric header {got} != {labels}"
            )
    return header_row, starts


def load_ratings(root: Path | str | None = None, *, check_averages: bool = True) -> pd.DataFrame:
    """Every single human rating, tidy (65 stories x 10 criteria x 2 raters = 1,300 rows);
    ``story`` is the file stem in ``corpus-full/``, as in :func:`load_stories`. The codes are
    resolved with ``mapping-grouped.csv`` and cross-checked against the "Deanonymization" sheet and
    the model labels; a disagreement (or, with ``check_averages``, an averages block that is not
    the raters' mean) raises :class:`ConfederacyFormatError` naming file, sheet and row."""
    folder = dataset_dir(DATASET, root)
    path = folder / RATINGS_FILE
    mapping = load_mapping(folder).set_index("code")
    deanon = load_deanonymisation(folder).set_index("code")
    if set(deanon.index) != set(mapping.index):
        raise ConfederacyFormatError(
            f"{path}, sheet {DEANON_SHEET!r} and {folder / MAPPING_FILE} list different codes: "
            f"only in sheet {sorted(set(deanon.index) - set(mapping.index))}, "
            f"only in mapping {sorted(set(mapping.index) - set(deanon.index))}"
        )
    sheet = pd.read_excel(path, sheet_name=RATINGS_SHEET, header=None, engine="openpyxl")
    header_row, starts = _rubric_blocks(sheet, path)
    rater_starts, avg_start = starts[:RATERS_PER_GROUP], starts[RATERS_PER_GROUP]
    names = list(CRITERIA)
    rows, seen = [], set()
    for r in range(header_row + 1, len(sheet)):
        code = _code(sheet.iat[r, 0])
        if code not in mapping.index:
            continue
        where = f"{path}, sheet {RATINGS_SHEET!r}, row {r + 1} (code {code})"
        if code in seen:
            raise ConfederacyFormatError(f"{where}: code rated twice")
        seen.add(code)
        story, source = mapping.at[code, "story"], mapping.at[code, "source"]
        label, dlabel = str(sheet.iat[r, 1]).strip().lower(), deanon.at[code, "label"].lower()
        for lab, what in ((label, "sheet label"), (dlabel, "Deanonymization label")):
            if not story.lower().startswith(lab):
                raise ConfederacyFormatError(f"{where}: {what} {lab!r} does not match story file {story!r}")
        group = int(sheet.iat[r, 2])
        if group != int(deanon.at[code, "number"]) or not 1 <= group <= N_GROUPS:
            raise ConfederacyFormatError(
                f"{where}: group {group} differs from the Deanonymization number {deanon.at[code, 'number']}"
            )
        block_values = []
        for slot, start in enumerate(rater_starts, start=1):
            values = []
            for j, crit in enumerate(names):
                v = sheet.iat[r, start + j]
                try:
                    v = float(v)
                except (TypeError, ValueError):
                    v = math.nan
                if math.isnan(v) or not SCALE[0] <= v <= SCALE[1]:
                    raise ConfederacyFormatError(
                        f"{where}, column {start + j + 1} ({crit}, rater {slot}): rating {sheet.iat[r, start + j]!r} "
                        f"is not a number in {SCALE[0]}..{SCALE[1]}"
                    )
                values.append(v)
                rows.append((DATASET, story, source, crit, f"g{group}_r{slot}", v))
            block_values.append(values)
        if check_averages:
            avg = np.asarray(sheet.iloc[r, avg_start:avg_start + len(names)], dtype=float)
            mean = np.mean(block_values, axis=0)
            if not np.allclose(avg, mean):
                raise ConfederacyFormatError(
                    f"{where}: averages block {avg.tolist()} != mean of the two raters {mean.tolist()}"
                )
    missing = sorted(set(mapping.index) - seen)
    if missing:
        raise ConfederacyFormatError(f"{path}, sheet {RATINGS_SHEET!r}: no ratings for codes {missing}")
    return pd.DataFrame(rows, columns=list(TIDY_COLUMNS))


def load_stories(root: Path | str | None = None) -> pd.DataFrame:
    """The 65 rated stories: (story, source, code, group, words, text), in mapping order."""
    folder = dataset_dir(DATASET, root)
    mapping = load_mapping(folder)
    deanon = load_deanonymisation(folder).set_index("code")
    rows = []
    for rec in mapping.itertuples():
        path = folder / STORIES_DIR / rec.file
        if not path.is_file():
            raise FileNotFoundError(f"{folder / MAPPING_FILE}: story file {path} (code {rec.code}) is missing")
        text = read_text_lenient(path).strip()
        rows.append({
            "story": rec.story, "source": rec.source, "code": rec.code,
            "group": int(deanon.at[rec.code, "number"]), "words": len(text.split()), "text": text,
        })
    return pd.DataFrame(rows)
