"""The corpus manifest (``data/corpus/stories.csv``), the corpus table built from it, and
``make data`` (``python -m judgelab.corpus.manifest``: acquire every story and external file).

Validation fails with a message that names the manifest row (its line in the CSV), the field and
the fix, for: unknown category, duplicate id, missing file, checksum mismatch, empty text and
undecodable bytes.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from judgelab import paths
from judgelab.corpus.acquire import (
    AcquisitionError, Outcome, _missing_message, acquire_file, acquire_story,
    read_external_manifest, sha256_bytes,
)
from judgelab.corpus.text import clean_story, count_words, decode_bytes

CATEGORIES = ("canonical", "pulp", "llm")
TIERS = ("high", "average", "low", "")
WORD_RANGE = (2000, 8000)  # the SAGE paper's stated story length
REQUIRED = (
    "story_id", "category", "title", "author", "year", "translator", "model", "tier",
    "words", "sha256", "raw_path", "mirror_path", "record", "source_url",
)
CORPUS_COLUMNS = [
    "story_id", "category", "title", "author", "year", "translator", "model", "tier",
    "words", "in_range", "text",
]


class ManifestError(ValueError):
    """A manifest row is wrong; the message names the file, the line and the fix."""


def manifest_path() -> Path:
    return paths.corpus_dir() / "stories.csv"


def _where(path: Path, i: int) -> str:
    return f"{path}, line {i + 2}"  # +1 for the header, +1 for 1-based lines


def read_manifest(path: Path | None = None) -> pd.DataFrame:
    """Read and check the manifest's structure: columns, categories, tiers, unique ids."""
    path = Path(path or manifest_path())
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise ManifestError(f"{path}: missing column(s) {', '.join(missing)}; the header must include {', '.join(REQUIRED)}")
    seen: dict[str, int] = {}
    for i, row in df.iterrows():
        where = _where(path, i)
        if not row["story_id"].strip():
            raise ManifestError(f"{where}: empty story_id; give every story a unique id")
        if row["category"] not in CATEGORIES:
            raise ManifestError(
                f"{where} (story_id={row['story_id']}): unknown category {row['category']!r}; "
                f"use one of {', '.join(CATEGORIES)}")
        if row["tier"] not in TIERS:
            raise ManifestError(
                f"{where} (story_id={row['story_id']}): unknown tier {row['tier']!r}; use high, average, low or leave empty")
        if row["story_id"] in seen:
            raise ManifestError(
                f"{where}: duplicate story_id {row['story_id']!r} (first on line {seen[row['story_id']] + 2}); "
                "ids must be unique: rename one")
        seen[row["story_id"]] = i
    return df


def read_story(row: dict, where: str, acquire: bool = True) -> str:
    """The cleaned text of one manifest row, checked against its sha256."""
    raw = paths.data_raw() / row["raw_path"]
    if not raw.exists() and acquire:
        acquire_story(row, paths.data_mirror(), allow_download=False)
    if not raw.exists():
        raise ManifestError(
            f"{where} (story_id={row['story_id']}): file missing: {raw}; run `make data` "
            "(with DATA_MIRROR set) or copy the text there")
    data = raw.read_bytes()
    got = sha256_bytes(data)
    if got != row["sha256"]:
        raise ManifestError(
            f"{where} (story_id={row['story_id']}): checksum mismatch for {raw}: sha256 {got}, manifest says "
            f"{row['sha256']}; delete the file and run `make data` again, or fix the manifest if the text was meant to change")
    text = clean_story(decode_bytes(data, f"{where} (story_id={row['story_id']}): {raw}"))
    if not text.strip():
        raise ManifestError(f"{where} (story_id={row['story_id']}): {raw} is empty after cleaning; re-acquire it")
    return text


def load_corpus(path: Path | None = None, acquire: bool = True) -> pd.DataFrame:
    """The corpus table (CONTRIBUTING.md schema): one row per story, with cleaned text and word counts."""
    path = Path(path or manifest_path())
    df = read_manifest(path)
    records = []
    for i, row in df.iterrows():
        text = read_story(row.to_dict(), _where(path, i), acquire=acquire)
        words = count_words(text)
        records.append({
            "story_id": row["story_id"], "category": row["category"], "title": row["title"],
            "author": row["author"], "year": pd.to_numeric(row["year"], errors="coerce"),
            "translator": row["translator"], "model": row["model"], "tier": row["tier"],
            "words": words, "in_range": WORD_RANGE[0] <= words <= WORD_RANGE[1], "text": text,
        })
    out = pd.DataFrame.from_records(records, columns=CORPUS_COLUMNS)
    out["year"] = out["year"].astype("Int64")
    return out


def range_exceptions(corpus: pd.DataFrame) -> pd.DataFrame:
    """Stories outside the 2,000–8,000-word range: reported, never dropped silently."""
    out = corpus.loc[~corpus["in_range"], ["story_id", "category", "title", "author", "words"]].copy()
    out["limit"] = [f"< {WORD_RANGE[0]}" if w < WORD_RANGE[0] else f"> {WORD_RANGE[1]}" for w in out["words"]]
    return out.sort_values(["category", "words"]).reset_index(drop=True)


def shortfall(corpus: pd.DataFrame, design: dict[str, int] | None = None) -> pd.DataFrame:
    """Stories per category against the study design (50 canonical, 30 pulp, 20 LLM)."""
    design = design or {"canonical": 50, "pulp": 30, "llm": 20}
    have = corpus["category"].value_counts()
    rows = [{"category": c, "design": n, "have": int(have.get(c, 0)),
             "in_range": int(corpus.loc[corpus["category"] == c, "in_range"].sum())} for c, n in design.items()]
    out = pd.DataFrame(rows)
    out["shortfall"] = (out["design"] - out["have"]).clip(lower=0)
    return out


def acquire_all(allow_download: bool = True, verbose: bool = True) -> list[Outcome]:
    """Acquire every story and external file; raise one AcquisitionError listing all that are missing."""
    mirror = paths.data_mirror()
    outcomes = [acquire_story(r, mirror, allow_download) for r in read_manifest().to_dict("records")]
    outcomes += [acquire_file(e, mirror, allow_download) for e in read_external_manifest()]
    missing = [o for o in outcomes if not o.ok]
    if verbose:
        origins: dict[str, int] = {}
        for o in outcomes:
            if o.ok:
                origins[o.origin] = origins.get(o.origin, 0) + 1
        print(f"acquired {len(outcomes) - len(missing)}/{len(outcomes)} files "
              + ", ".join(f"{n} from {k}" for k, n in sorted(origins.items())))
    if missing:
        raise AcquisitionError(_missing_message(missing))
    return outcomes


def main() -> int:
    try:
        acquire_all()
    except AcquisitionError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
