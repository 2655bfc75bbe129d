"""Document collections for narrative extraction: news (Narrative Trails), VisPub, any CSV.

A :class:`DocumentCollection` is a table ``docs`` (``doc`` = the row of the embedding matrix,
``title``, ``date``, ``text``) with, optionally, the embedding matrix aligned row by row. Files are
looked up in ``paths.data_raw()``, then in the mirror (docs/design.md, "Data").

- news: German, Keith & North, "Narrative Trails", Text2Story@ECIR 2025: ``text_data.csv`` and
  the authors' text-embedding-3-small vectors (540 x 1536, row i = CSV row i).
- vispub: IEEE VIS papers (vispubdata), ``vispub.csv``; a paper's date is 1 January of its year
  (paper section 4.2: "the publication year for temporal ordering").
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from judgelab import paths
from judgelab.embeddings import EmbeddingFileError, load_vectors

NEWS_DIR = Path("narrative") / "news"
NEWS_CSV = "text_data.csv"
NEWS_EMBEDDINGS = "embeddings_text-embedding-3-small.npy"
VISPUB_DIR = Path("vispub")
VISPUB_CSV = "vispub.csv"


class CollectionError(ValueError):
    """A collection file is missing or malformed; the message names the file, row and field."""


@dataclass
class DocumentCollection:
    """Documents (``doc, title, date, text``) and, optionally, their embeddings (row = ``doc``)."""

    name: str
    docs: pd.DataFrame
    embeddings: np.ndarray | None = None
    embedding_source: str = ""
    meta: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.docs)

    @property
    def dates(self) -> np.ndarray:
        """Dates as int64 days since 1970-01-01 (for the temporal constraint)."""
        return days_since_epoch(self.docs["date"])

    def subset(self, rows) -> "DocumentCollection":
        """The collection restricted to ``rows`` (positions), renumbered 0..k-1."""
        rows = np.asarray(rows, dtype=int)
        docs = self.docs.iloc[rows].reset_index(drop=True)
        docs["doc"] = np.arange(len(docs))
        emb = None if self.embeddings is None else self.embeddings[rows]
        return DocumentCollection(self.name, docs, emb, self.embedding_source,
                                  {**self.meta, "subset_of": len(self.docs)})

    def every_kth(self, size: int | None) -> "DocumentCollection":
        """About ``size`` documents spread evenly over the collection (keeps its time span)."""
        if size is None or size >= len(self):
            return self
        rows = np.unique(np.linspace(0, len(self) - 1, int(size)).round().astype(int))
        return self.subset(rows)


def days_since_epoch(dates: pd.Series) -> np.ndarray:
    """Whole days since 1970-01-01 of a datetime Series (int64)."""
    values = pd.to_datetime(dates).values.astype("datetime64[D]")
    return values.astype(np.int64)


def locate(relative: Path | str) -> Path:
    """``data/raw/<relative>`` if it exists, else ``$DATA_MIRROR/<relative>``; clear error if neither."""
    relative = Path(relative)
    tried = [paths.data_raw() / relative]
    mirror = paths.data_mirror()
    if mirror is not None:
        tried.append(mirror / relative)
    for candidate in tried:
        if candidate.exists():
            return candidate
    raise CollectionError(
        f"{relative} not found; looked in: {', '.join(str(t) for t in tried)}"
        + ("" if mirror is not None else " (set DATA_MIRROR to the shared mirror, e.g. ../shared/mirror)")
    )


def _require_columns(df: pd.DataFrame, columns, source: Path) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise CollectionError(f"{source}: missing column(s) {missing}; has {list(df.columns)}")


def _parse_dates(values: pd.Series, source: Path, column: str, fmt: str | None) -> pd.Series:
    parsed = pd.to_datetime(values, format=fmt, errors="coerce")
    bad = parsed.isna() & values.notna()
    bad |= values.isna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise CollectionError(
            f"{source}: row {row + 2} (data row {row}), field {column!r}: cannot parse date "
            f"{values.iloc[row]!r}" + (f" with format {fmt!r}" if fmt else "")
        )
    return parsed


def _check_texts(texts: pd.Series, source: Path, column: str) -> None:
    empty = texts.isna() | (texts.astype(str).str.strip() == "")
    if empty.any():
        row = int(np.flatnonzero(empty.to_numpy())[0])
        raise CollectionError(f"{source}: row {row + 2} (data row {row}), field {column!r}: empty text")


def load_embeddings(path: Path | str, n_rows: int) -> np.ndarray:
    """A ``.npy`` matrix with one row per document (:func:`judgelab.embeddings.load_vectors`),
    its problems raised as :class:`CollectionError`."""
    try:
        return load_vectors(path, n_rows)
    except EmbeddingFileError as err:
        raise CollectionError(str(err)) from None


def load_csv(
    path: Path | str, *, name: str, text_column: str = "text", date_column: str = "date",
    title_column: str | None = None, date_format: str | None = None,
    embeddings_path: Path | str | None = None,
) -> DocumentCollection:
    """A collection from any CSV with a text and a date column, in the file's order (row i of the
    optional ``.npy`` is document i); without a title column, the text's first 80 characters."""
    path = Path(path)
    if not path.exists():
        raise CollectionError(f"{path}: file not found")
    raw = pd.read_csv(path)
    needed = [text_column, date_column] + ([title_column] if title_column else [])
    _require_columns(raw, needed, path)
    _check_texts(raw[text_column], path, text_column)
    dates = _parse_dates(raw[date_column], path, date_column, date_format)
    texts = raw[text_column].astype(str)
    titles = raw[title_column].fillna("").astype(str) if title_column else texts.str.slice(0, 80)
    docs = pd.DataFrame({"doc": np.arange(len(raw)), "title": titles.to_numpy(),
                         "date": dates.to_numpy(), "text": texts.to_numpy()})
    emb = load_embeddings(embeddings_path, len(docs)) if embeddings_path is not None else None
    source = f"precomputed:{Path(embeddings_path).name}" if embeddings_path is not None else ""
    return DocumentCollection(name, docs, emb, source, {"source": str(path)})


def load_news(with_embeddings: bool = True) -> DocumentCollection:
    """The Narrative Trails news collection (540 articles, 2016-2021) with the authors' embeddings."""
    csv = locate(NEWS_DIR / NEWS_CSV)
    emb = locate(NEWS_DIR / NEWS_EMBEDDINGS) if with_embeddings else None
    col = load_csv(csv, name="news", text_column="full_text", date_column="date",
                   title_column="title", date_format="%m/%d/%y", embeddings_path=emb)
    if with_embeddings:
        col.embedding_source = "precomputed:text-embedding-3-small (authors' vectors)"
    return col


def load_vispub(year_range: tuple[int, int] | None = (1990, 2022)) -> DocumentCollection:
    """IEEE VIS papers with a non-empty abstract; text = title + abstract; date = 1 January of Year."""
    csv = locate(VISPUB_DIR / VISPUB_CSV)
    raw = pd.read_csv(csv)
    _require_columns(raw, ["Year", "Title", "Abstract"], csv)
    years = pd.to_numeric(raw["Year"], errors="coerce")
    if years.isna().any():
        row = int(np.flatnonzero(years.isna().to_numpy())[0])
        raise CollectionError(f"{csv}: row {row + 2}, field 'Year': not a year: {raw['Year'].iloc[row]!r}")
    keep = raw["Abstract"].fillna("").astype(str).str.strip() != ""
    if year_range is not None:
        keep &= years.between(*year_range)
    raw, years = raw[keep].reset_index(drop=True), years[keep].reset_index(drop=True)
    order = np.lexsort((np.arange(len(raw)), years.to_numpy()))  # stable chronological order
    raw, years = raw.iloc[order].reset_index(drop=True), years.iloc[order].reset_index(drop=True)
    titles = raw["Title"].fillna("").astype(str)
    docs = pd.DataFrame({
        "doc": np.arange(len(raw)), "title": titles.to_numpy(),
        "date": pd.to_datetime(years.astype(int).astype(str) + "-01-01").to_numpy(),
        "text": (titles + ". " + raw["Abstract"].astype(str).str.strip()).to_numpy(),
    })
    return DocumentCollection("vispub", docs, None, "", {"source": str(csv), "year_range": year_range})


def load_collection(name: str, year_range=None) -> DocumentCollection:
    """``news`` or ``vispub`` by name; ``year_range`` (the profile's knob) filters VisPub only."""
    if name == "news":
        if year_range is not None:  # a knob that would do nothing: refuse it by name
            raise CollectionError(f"year_range {year_range!r} applies to vispub only; the news collection "
                                  "(2016-2021) is used whole: remove it from profiles.toml's news collection")
        return load_news()
    if name == "vispub":
        return load_vispub(year_range or (1990, 2022))
    raise CollectionError(f"unknown collection {name!r}; known: news, vispub (or use load_csv)")
