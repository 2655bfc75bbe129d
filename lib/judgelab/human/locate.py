"""Where the human-rated data sets are: ``data/raw/`` first, then ``$DATA_MIRROR``.

Both sets are public research data (licences in their folders' README/LICENSE) and are never
copied into the repository. The layout under either root is the mirror's:
``llm_stories/confederacy_of_models/`` and ``llm_stories/art_or_artifice/``.
"""
from __future__ import annotations

from pathlib import Path

from judgelab import paths

DATASET_DIRS: dict[str, str] = {
    "confederacy": "llm_stories/confederacy_of_models",
    "artifice": "llm_stories/art_or_artifice",
}
"""Folder of each data set relative to ``data/raw/`` or to the mirror."""


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
    """The folder holding ``dataset``.

    ``root`` (a folder that directly holds the data set's files) overrides the search. Otherwise
    the first existing folder of :func:`candidates`; if none exists, :class:`DataNotFound` names
    every place looked at and how to provide the data.
    """
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
    """A text file as str: UTF-8 (BOM stripped), else Windows-1252.

    Several Confederacy stories (the human ones, two GPT-4 and the StableLM ones) were saved as
    cp1252 (curly quotes 0x92/0x93, dashes 0x96/0x97); reading them as UTF-8 would fail.
    """
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252")
