"""The user's own dated collection as a narrative collection (``make own COLLECTION=<file>``).

A CSV, JSONL or Parquet file with a text column, a date column (any format pandas parses, each row
parsed on its own) and optionally a title column; embeddings are the bundled MiniLM (the profile's
``embedding``) unless the user gives their own: a column holding one vector per row, or a ``.npy``
file (row i = document i). The collection goes into notebook 07 under the name ``own`` (its knobs:
``[<profile>.narrative.collections.own]``) and through 08-09 like the papers' collections.

Bad input stops before any embedding or judge call, every problem listed at once with the file,
row (the line of a CSV / JSONL, counting the header) and field: an unreadable, binary or non-UTF-8
file, a missing column, an empty text, a missing or unparseable date, a vector of the wrong length,
a collection too small for the landscape's UMAP and HDBSCAN settings.
"""
from __future__ import annotations

import inspect
import json
from pathlib import Path

import numpy as np
import pandas as pd

from judgelab.embeddings import is_backend_spec, parse_spec
from judgelab.narrative.landscape.collections import DocumentCollection, load_embeddings
from judgelab.narrative.landscape.projection import fit_landscape
from judgelab.params import InputProblems

NAME = "own"  # the collection's key in profiles.toml and in every narr_* table
FORMATS = {".csv": "CSV", ".jsonl": "JSONL", ".parquet": "Parquet"}
MAX_LISTED = 5  # rows named per problem (then "and N more")
NUL = b"\x00"


class OwnCollectionError(InputProblems):
    """The collection file is wrong; the message lists every problem, with file, row, field and fix."""

    what = "your collection"
    consequence = "nothing was embedded or judged"


def _row_label(path: Path, i: int) -> str:
    """Where data row ``i`` (0-based) is in the file: a CSV's line counts its header."""
    if path.suffix.lower() == ".csv":
        return f"line {i + 2}"
    if path.suffix.lower() == ".jsonl":
        return f"line {i + 1}"
    return f"row {i}"


def _rows(path: Path, mask: np.ndarray, values: pd.Series | None = None) -> str:
    idx = np.flatnonzero(mask)
    shown = [_row_label(path, int(i)) + (f" ({values.iloc[int(i)]!r})" if values is not None else "")
             for i in idx[:MAX_LISTED]]
    more = f" and {len(idx) - MAX_LISTED} more" if len(idx) > MAX_LISTED else ""
    return ", ".join(shown) + more


def read_table(path: Path) -> pd.DataFrame:
    """The file as a table, by suffix; an unreadable, binary or non-UTF-8 text file is an error."""
    kind = FORMATS.get(path.suffix.lower())
    if not path.is_file():
        raise OwnCollectionError([f"{path}: file not found; COLLECTION must name a CSV, JSONL or Parquet file"])
    if kind is None:
        raise OwnCollectionError([f"{path}: unknown format {path.suffix!r}; use .csv, .jsonl or .parquet"])
    if kind == "Parquet":
        try:
            return pd.read_parquet(path)
        except Exception as exc:  # pyarrow raises several kinds for a damaged file
            raise OwnCollectionError([f"{path}: not a readable Parquet file ({exc})"]) from None
    data = path.read_bytes()
    if not data.strip():
        raise OwnCollectionError([f"{path}: empty file"])
    if NUL in data:
        raise OwnCollectionError([f"{path}: binary data (a NUL byte at offset {data.index(NUL)}) in a {kind} "
                                  "file; export the collection as plain-text CSV/JSONL (UTF-8) or as Parquet"])
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise OwnCollectionError([f"{path}: line {line}, byte offset {exc.start}: not UTF-8 ({exc.reason}); "
                                  "re-save the file as UTF-8"]) from None
    if kind == "CSV":
        import io
        try:
            return pd.read_csv(io.StringIO(text))
        except pd.errors.ParserError as exc:
            raise OwnCollectionError([f"{path}: not a readable CSV ({exc})"]) from None
    records = []
    for i, line in enumerate(text.splitlines()):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise OwnCollectionError([f"{path}: line {i + 1}: not JSON ({exc.msg}); one JSON object per line"]) from None
    return pd.DataFrame.from_records(records)


def parse_dates(values: pd.Series) -> pd.Series:
    """Each value parsed on its own (``format="mixed"``: any format pandas reads); NaT where not."""
    as_text = values.astype("string").str.strip()
    # utc=True: a collection mixing dates with and without a time zone still parses (as UTC days)
    parsed = pd.to_datetime(as_text.where(as_text != ""), format="mixed", errors="coerce", utc=True)
    return parsed.dt.tz_localize(None)


def _vectors(raw: pd.DataFrame, column: str, path: Path, problems: list[str]) -> np.ndarray | None:
    """A column of vectors (lists, arrays, or JSON text) as a matrix; problems named per row."""
    cells = raw[column].map(lambda v: json.loads(v) if isinstance(v, str) else v)
    lengths = cells.map(lambda v: len(v) if hasattr(v, "__len__") else -1)
    dim = int(lengths.mode().iloc[0]) if len(lengths) else 0
    bad = (lengths != dim).to_numpy() | (lengths <= 0).to_numpy()
    if bad.any():
        problems.append(f"{path}, field {column!r}: {int(bad.sum())} row(s) without a {dim}-number vector: "
                        f"{_rows(path, bad)}; give every row a vector of the same length")
        return None
    emb = np.asarray(cells.tolist(), dtype=np.float32)
    finite = np.isfinite(emb).all(axis=1)
    if not finite.all():
        problems.append(f"{path}, field {column!r}: non-finite values at {_rows(path, ~finite)}")
        return None
    return emb


def min_documents(knobs: dict) -> int:
    """The fewest documents the landscape can be fitted on: UMAP needs more documents than its
    components + 1 (48, ``projection.fit_landscape``'s default, the paper's) and than
    ``n_neighbors`` + 1; HDBSCAN at least two clusters' worth (2 x ``min_cluster_size``)."""
    components = inspect.signature(fit_landscape).parameters["n_components"].default
    return max(components + 2, int(knobs["n_neighbors"]) + 2, 2 * int(knobs["min_cluster_size"]))


def load(path: Path | str, *, text: str, date: str, title: str | None = None,
         embeddings: str | None = None, knobs: dict | None = None) -> DocumentCollection:
    """The collection in ``path`` (module docstring), in the file's order (``doc`` = data row).
    ``embeddings``: a column name, or a ``.npy`` path (relative to the file's folder); None = the
    profile's embedding backend; a model (``minilm``, ``openai:<model>``, :func:`is_backend_spec`) is
    left to :func:`with_collection`. ``knobs``: the collection's profile knobs (for the size check)."""
    path = Path(path)
    if is_backend_spec(embeddings):
        parse_spec(embeddings)  # a misspelt model setting fails here, before anything is read
        embeddings = None
    raw = read_table(path)
    problems: list[str] = []
    needed = [c for c in (text, date, title) if c]
    if embeddings and not embeddings.endswith(".npy"):
        needed.append(embeddings)
    missing = [c for c in needed if c not in raw.columns]
    if missing:
        raise OwnCollectionError([f"{path}: no column(s) {missing}; it has {list(raw.columns)}; name the "
                                  "columns with TEXT=, DATE=, TITLE= (and EMBEDDINGS=)"])
    texts = raw[text].astype("string").fillna("")
    empty = (texts.str.strip() == "").to_numpy()
    if empty.any():
        problems.append(f"{path}, field {text!r}: empty text at {_rows(path, empty)}; fill or remove those rows")
    dates = parse_dates(raw[date])
    blank = raw[date].astype("string").fillna("").str.strip() == ""
    unparsed = (dates.isna() & ~blank).to_numpy()
    if blank.any():
        problems.append(f"{path}, field {date!r}: missing date at {_rows(path, blank.to_numpy())}; every "
                        "document needs a date (the paths run forward in time)")
    if unparsed.any():
        problems.append(f"{path}, field {date!r}: unparseable date at {_rows(path, unparsed, raw[date])}; "
                        "write dates pandas reads, e.g. 2021-03-14")
    emb, source = None, ""
    if embeddings:
        if embeddings.endswith(".npy"):
            npy = Path(embeddings) if Path(embeddings).is_absolute() else path.parent / embeddings
            try:
                emb = load_embeddings(npy, len(raw))
            except ValueError as exc:
                problems.append(str(exc))
        else:
            emb = _vectors(raw, embeddings, path, problems)
        source = f"precomputed:{embeddings} (your own vectors)"
    if knobs is not None and len(raw) < min_documents(knobs):
        problems.append(f"{path}: {len(raw)} documents, too few for the landscape: UMAP's 48 dimensions, n_neighbors = "
                        f"{knobs['n_neighbors']} and HDBSCAN min_cluster_size = {knobs['min_cluster_size']} need at "
                        f"least {min_documents(knobs)}; add documents (profiles.toml "
                        f"[<profile>.narrative.collections.{NAME}] holds the two settings)")
    if problems:
        raise OwnCollectionError(problems)
    titles = raw[title].astype("string").fillna("").astype(str) if title else texts.str.slice(0, 80).astype(str)
    docs = pd.DataFrame({"doc": np.arange(len(raw)), "title": titles.to_numpy(),
                         "date": dates.to_numpy(), "text": texts.astype(str).to_numpy()})
    return DocumentCollection(NAME, docs, emb, source, {"source": str(path)})


def with_collection(settings, path: Path | str, *, text: str | None = None, date: str | None = None,
                    title: str | None = None, embeddings: str | None = None):
    """Notebook 07's settings with the user's collection loaded (:func:`load`, checked against the
    profile's knobs for ``own``) as its only collection; ``text``/``date`` None: columns ``text``, ``date``."""
    from dataclasses import replace

    col = load(path, text=text or "text", date=date or "date", title=title, embeddings=embeddings,
               knobs=settings.collection_knobs(NAME))
    if is_backend_spec(embeddings):  # EMBEDDINGS=openai:<model> or minilm: this run's embedding setting
        knobs = {**settings.knobs, "collections": {**settings.knobs["collections"],
                                                   NAME: {**settings.collection_knobs(NAME), "embedding": embeddings.strip()}}}
        settings = replace(settings, knobs=knobs)
    return replace(settings, collections=[NAME], sources={NAME: col})
