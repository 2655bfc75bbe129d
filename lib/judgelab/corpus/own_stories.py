"""A folder of the user's own stories as a SAGE corpus table (``make own STORIES=<folder>``).

Every ``.txt`` / ``.md`` file of the folder is one story, its id the file name without suffix. An
optional ``stories.csv`` beside them gives any subset of ``story_id, title, author, year,
category`` (``story_id`` links a row to its file). The result has the corpus table's columns
(CONTRIBUTING.md, ``corpus.parquet``), so notebooks 01-06 run on it unchanged.

Bad input stops the run before any call to a judge, with every problem listed at once, each naming
the file (and the ``stories.csv`` line), the field and what to do: an empty file, a binary file,
bytes that are not UTF-8, two files or rows with one id, a ``stories.csv`` row without a file, an
unknown category, a year that is not a whole number, a text longer than the judge may read whole.
Files that are not stories (other suffixes, hidden files) are never dropped silently: they are
listed in the ``skipped`` table with the reason.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd

from judgelab.corpus.manifest import CATEGORIES, CORPUS_COLUMNS, WORD_RANGE
from judgelab.corpus.text import clean_story, count_words
from judgelab.params import InputProblems

SUFFIXES = (".txt", ".md")
NUL = b"\x00"
METADATA_FILE = "stories.csv"
METADATA_COLUMNS = ("story_id", "title", "author", "year", "category")
# The SAGE analyses (genre tables, Cohen's d canonical vs LLM) are defined on the paper's three
# categories; a fourth name would fall out of every table, so it is refused, not mapped.
CATEGORY_HELP = "canonical (published human prose), pulp (genre magazine prose) or llm (written by a model)"


class OwnTextError(InputProblems):
    """The folder or its ``stories.csv`` is wrong; the message lists every problem with its fix."""

    what = "your stories"
    consequence = "nothing was sent to a judge"


@dataclass
class OwnStories:
    """``corpus``: the corpus table; ``files``: one row per story (file, bytes, sha256, where
    the category came from); ``skipped``: files of the folder that are not stories, with why;
    ``genre_decision``: whether notebook 06 runs, and why (one row, set by :func:`open_folder`)."""

    corpus: pd.DataFrame
    files: pd.DataFrame
    skipped: pd.DataFrame
    genre_decision: pd.DataFrame | None = None


def _decode(path: Path, data: bytes) -> tuple[str | None, str | None]:
    """The text, or the problem: empty, binary (NUL bytes) or not UTF-8 (BOM allowed)."""
    if not data.strip():
        return None, f"{path}: empty file; put the story's text in it or remove the file"
    if NUL in data:
        return None, (f"{path}: binary file (a NUL byte at offset {data.index(NUL)}); save the story "
                      "as plain text (.txt or .md), not as a word-processor or PDF file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        return None, (f"{path}: line {line}, byte offset {exc.start}: not UTF-8 ({exc.reason}); re-save "
                      "the file as UTF-8 (most editors: 'Save with encoding')")
    if not clean_story(text).strip():
        return None, f"{path}: no text left after cleaning (only whitespace or markup); check the file"
    return text, None


def read_metadata(folder: Path, problems: list[str]) -> pd.DataFrame:
    """``stories.csv`` (any subset of :data:`METADATA_COLUMNS`), one row per story id; problems
    are appended to ``problems`` with the file, line and field."""
    path = folder / METADATA_FILE
    if not path.exists():
        return pd.DataFrame(columns=list(METADATA_COLUMNS))
    try:
        meta = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    except (UnicodeDecodeError, pd.errors.ParserError) as exc:
        problems.append(f"{path}: cannot be read as a UTF-8 CSV ({exc}); save it as CSV UTF-8")
        return pd.DataFrame(columns=list(METADATA_COLUMNS))
    unknown = [c for c in meta.columns if c not in METADATA_COLUMNS]
    if unknown:
        problems.append(f"{path}: unknown column(s) {unknown}; use any of {', '.join(METADATA_COLUMNS)}")
    if "story_id" not in meta.columns:
        problems.append(f"{path}: no story_id column; it links each row to its file (the file name without .txt/.md)")
        return pd.DataFrame(columns=list(METADATA_COLUMNS))
    for col in METADATA_COLUMNS:
        if col not in meta.columns:
            meta[col] = ""
    seen: dict[str, int] = {}
    for i, row in meta.iterrows():
        where, sid = f"{path}, line {i + 2}", row["story_id"].strip()
        if not sid:
            problems.append(f"{where}, field story_id: empty; give the file name without .txt/.md")
            continue
        if sid in seen:
            problems.append(f"{where}, field story_id: duplicate id {sid!r} (first on line {seen[sid] + 2}); "
                            "keep one row per story")
        seen.setdefault(sid, i)
        if row["category"].strip() and row["category"].strip() not in CATEGORIES:
            problems.append(f"{where} (story_id={sid}), field category: unknown category {row['category']!r}; "
                            f"use {CATEGORY_HELP}, or leave it empty")
        if row["year"].strip() and not row["year"].strip().lstrip("-").isdigit():
            problems.append(f"{where} (story_id={sid}), field year: {row['year']!r} is not a year; "
                            "write a whole number such as 1923, or leave it empty")
    meta["story_id"] = meta["story_id"].str.strip()
    return meta.drop_duplicates("story_id").set_index("story_id", drop=False)


def load_folder(folder: Path | str, *, default_category: str,
                max_tokens: int | None = None, count_tokens: Callable[[str], int] | None = None) -> OwnStories:
    """The stories of ``folder`` (module docstring). ``default_category`` is the category of a story
    ``stories.csv`` gives none (from the profile, ``[<profile>.own_texts]``); ``max_tokens``: when
    the judge must read every text whole (``context_policy = "error"``), the most tokens a text may
    have, counted with ``count_tokens``. Raises :class:`OwnTextError` listing every problem."""
    folder = Path(folder)
    if not folder.is_dir():
        raise OwnTextError([f"{folder}: not a folder; STORIES must name a folder of .txt/.md files"])
    if default_category not in CATEGORIES:
        raise OwnTextError([f"default_category {default_category!r} (profiles.toml, own_texts): use {CATEGORY_HELP}"])
    problems: list[str] = []
    meta = read_metadata(folder, problems)
    skipped, stories, first_file = [], [], {}
    for path in sorted(folder.iterdir()):
        if path.name == METADATA_FILE:
            continue
        if path.name.startswith(".") or path.is_dir() or path.suffix.lower() not in SUFFIXES:
            kind = "hidden file" if path.name.startswith(".") else "folder" if path.is_dir() else f"suffix {path.suffix or '(none)'}"
            skipped.append({"file": path.name, "reason": f"not a story: {kind}; stories are .txt or .md files"})
            continue
        sid = path.stem
        if "," in sid:  # notebooks 02-04 take the story ids as comma-separated text
            problems.append(f"{path}: the story id {sid!r} holds a comma; rename the file without one")
            continue
        if sid in first_file:
            problems.append(f"{path}: duplicate story id {sid!r} (also {first_file[sid].name}); rename one file")
            continue
        first_file[sid] = path
        data = path.read_bytes()
        text, problem = _decode(path, data)
        if problem:
            problems.append(problem)
            continue
        text = clean_story(text)
        if max_tokens is not None and count_tokens is not None:
            n = count_tokens(text)
            if n > max_tokens:
                problems.append(f"{path}: {n:,} tokens, more than the judge reads whole ({max_tokens:,}, "
                                "[sage] max_text_tokens with context_policy = \"error\"); shorten the story, "
                                "or set context_policy = \"head_tail\" to send its head and tail (marked truncated)")
                continue
        stories.append((sid, path, data, text))
    orphans = sorted(set(meta.index) - set(first_file))
    for sid in orphans:
        problems.append(f"{folder / METADATA_FILE}: story_id {sid!r} has no file {sid}.txt or {sid}.md in "
                        f"{folder}; add the file or remove the row")
    if not stories and not problems:
        problems.append(f"{folder}: no .txt or .md files; put one story per file in the folder")
    if problems:
        raise OwnTextError(problems)
    return _tables(stories, meta, default_category, skipped)


def _tables(stories, meta: pd.DataFrame, default_category: str, skipped: list[dict]) -> OwnStories:
    records, files = [], []
    for sid, path, data, text in stories:
        row = meta.loc[sid] if sid in meta.index else None
        given = (lambda col: (row[col].strip() if row is not None else ""))
        category = given("category") or default_category
        words = count_words(text)
        records.append({
            "story_id": sid, "category": category, "title": given("title") or sid.replace("_", " "),
            "author": given("author"), "year": pd.to_numeric(given("year") or None, errors="coerce"),
            "translator": "", "model": "", "tier": "", "words": words,
            "in_range": WORD_RANGE[0] <= words <= WORD_RANGE[1], "text": text,
        })
        files.append({"story_id": sid, "file": path.name, "bytes": len(data),
                      "sha256": hashlib.sha256(data).hexdigest(), "words": words, "category": category,
                      "category_from": METADATA_FILE if given("category") else "default_category (profiles.toml)",
                      "title_from": METADATA_FILE if given("title") else "file name"})
    corpus = pd.DataFrame.from_records(records, columns=CORPUS_COLUMNS)
    corpus["year"] = corpus["year"].astype("Int64")
    return OwnStories(corpus, pd.DataFrame(files), pd.DataFrame(skipped, columns=["file", "reason"]))


def open_folder(folder: Path | str, profile) -> OwnStories:
    """:func:`load_folder` with the run's configuration (``profile``, :func:`judgelab.config.of`):
    ``[<profile>.own_texts]`` (the default
    category, the stories a category needs for genre statistics) and ``[<profile>.sage]`` (a text
    is too long only when ``context_policy = "error"``: then it must fit ``max_text_tokens``,
    counted with tiktoken's encoding of the configured model, ``judgelab.tokens``)."""
    from judgelab import config, tokens

    cfg = config.of(profile)
    own, sage = cfg.knobs("own_texts"), cfg.knobs("sage")
    whole = sage["context_policy"] == "error"
    model = cfg.judges["sage"].model.value  # the model the SAGE notebooks will call
    out = load_folder(folder, default_category=own["default_category"],
                      max_tokens=int(sage["max_text_tokens"]) if whole else None,
                      count_tokens=(lambda t: tokens.count_tokens(t, model)) if whole else None)
    ok, reason = genre_statistics_decision(out.corpus, int(own["min_per_category"]))
    out.genre_decision = pd.DataFrame([{"genre_statistics": ok, "reason": reason,
                                        "min_per_category": int(own["min_per_category"])}])
    return out


def surface_audit_decision(corpus: pd.DataFrame, folds: int = 5) -> tuple[bool, str]:
    """Whether notebook 01's surface-cue audit (LLM vs human, ``folds``-fold stratified CV) can run."""
    n_llm = int((corpus["category"] == "llm").sum())
    n_human = len(corpus) - n_llm
    if min(n_llm, n_human) >= folds:
        return True, ""
    return False, (f"surface-cue audit not run: its {folds}-fold cross-validation needs at least {folds} LLM and "
                   f"{folds} human stories; your folder has {n_llm} LLM and {n_human} human stories")


def genre_statistics_decision(corpus: pd.DataFrame, min_per_category: int) -> tuple[bool, str]:
    """Whether notebook 06's genre statistics can run: at least two categories with at least
    ``min_per_category`` stories each. Returns (run?, the reason in words)."""
    counts = corpus["category"].value_counts()
    enough = sorted(c for c, n in counts.items() if n >= min_per_category)
    have = ", ".join(f"{c}: {int(n)}" for c, n in sorted(counts.items()))
    if len(enough) >= 2:
        return True, f"categories with at least {min_per_category} stories: {', '.join(enough)} ({have})"
    return False, (f"genre statistics not computed: they compare categories, and only {len(enough)} "
                   f"categor{'y has' if len(enough) == 1 else 'ies have'} at least {min_per_category} stories "
                   f"({have}); give at least {min_per_category} stories each to two categories in stories.csv")
