"""Judges against people: human-rated story sets and the comparison of a judge with them
(appendix notebook ``11_judge_vs_human``).

The data sets are *A Confederacy of Models* (:mod:`~judgelab.human.confederacy`) and *Art or
Artifice* (:mod:`~judgelab.human.artifice`), public research data (licences in their folders'
README/LICENSE) never copied into the repository: they are read from ``data/raw/`` first, then
``$DATA_MIRROR``. Every loader returns the same tidy table, one row per single human rating::

    dataset, story, source, criterion, rater, value
"""
from __future__ import annotations

from pathlib import Path

from judgelab import paths

TIDY_COLUMNS: tuple[str, ...] = ("dataset", "story", "source", "criterion", "rater", "value")

DATASET_DIRS: dict[str, str] = {
    "confederacy": "llm_stories/confederacy_of_models",
    "artifice": "llm_stories/art_or_artifice",
}
"""Folder of each data set relative to ``data/raw/`` or to the mirror."""

DATASETS: tuple[str, ...] = tuple(DATASET_DIRS)


class DataNotFound(FileNotFoundError):
    """A data set is neither under ``data/raw/`` nor under ``$DATA_MIRROR``."""


def candidates(dataset: str) -> list[Path]:
    """The folders searched for ``dataset``, in order: ``data/raw/<rel>``, ``$DATA_MIRROR/<rel>``."""
    if dataset not in DATASET_DIRS:
        raise ValueError(f"unknown data set {dataset!r}; choose one of {', '.join(DATASET_DIRS)}")
    rel = DATASET_DIRS[dataset]
    out = [paths.data_raw() / rel]
    mirror = paths.data_mirror()
    if mirror is not None:
        out.append(mirror / rel)
    return out


def dataset_dir(dataset: str, root: Path | str | None = None) -> Path:
    """The folder holding ``dataset``: ``root`` (a folder directly holding its files) if given,
    else the first existing folder of :func:`candidates`; :class:`DataNotFound` names every place
    looked at and how to provide the data."""
    if root is not None:
        root = Path(root)
        if not root.is_dir():
            raise DataNotFound(f"{dataset}: folder {root} does not exist")
        return root
    tried = candidates(dataset)
    for folder in tried:
        if folder.is_dir():
            return folder
    hint = "" if paths.data_mirror() else " ($DATA_MIRROR is not set)"
    raise DataNotFound(
        f"{dataset}: not found in " + ", ".join(str(p) for p in tried) + hint
        + f". Put the files under data/raw/{DATASET_DIRS[dataset]}/ or set DATA_MIRROR to a mirror "
        "that holds them (e.g. DATA_MIRROR=../shared/mirror)."
    )


def read_text_lenient(path: Path) -> str:
    """A text file as str: UTF-8 (BOM stripped), else Windows-1252 (several Confederacy stories
    were saved as cp1252: curly quotes 0x92/0x93, dashes 0x96/0x97)."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252")
