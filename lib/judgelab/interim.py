"""The files notebooks pass to each other (``results/interim/``), written and read in one place.

Every interim table has a name (``corpus``, ``sage_rows_L4``, ``narr_paths``, ...), a parquet file
``<interim_dir>/<name>.parquet`` and a schema (CONTRIBUTING.md, "Interim files"). Notebooks and
library code never call ``to_parquet`` / ``read_parquet`` on these files themselves: they call
:func:`write` and :func:`read`, so that a file that does not match its contract is caught where it
is written and where it is read, with a message naming the file, the column and the fix.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgelab import paths


def path_of(name: str, directory: Path | None = None) -> Path:
    """``<interim_dir>/<name>.parquet`` (or under ``directory``)."""
    return Path(directory or paths.interim_dir()) / f"{name}.parquet"


def write(df: pd.DataFrame, name: str, directory: Path | None = None) -> Path:
    """Write the interim table ``name``; returns its path."""
    out = path_of(name, directory)
    df.to_parquet(out, index=False)
    return out


def read(name: str, directory: Path | None = None) -> pd.DataFrame:
    """Read the interim table ``name``."""
    return pd.read_parquet(path_of(name, directory))
