"""The files notebooks pass to each other (``results/interim/``), written and read in one place.

Every interim table has a name (``corpus``, ``sage_rows_L4``, ``narr_paths``, ...), a parquet file
``<interim_dir>/<name>.parquet`` and a schema (CONTRIBUTING.md, "Interim files";
:mod:`judgelab.contracts`). Notebooks and library code never call ``to_parquet`` /
``read_parquet`` on these files themselves: they call :func:`write` and :func:`read`, so that a
file that does not match its contract is caught where it is written and where it is read, with a
:class:`~judgelab.contracts.ContractError` naming the file, the column and the fix. Both return
the frame as the contract types it (integers as floats where floats belong, and so on).
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgelab import contracts, paths
from judgelab.contracts import ContractError, InterimFileMissing

__all__ = ["ContractError", "InterimFileMissing", "path_of", "write", "read", "exists"]


def path_of(name: str, directory: Path | None = None) -> Path:
    """``<interim_dir>/<name>.parquet`` (or under ``directory``)."""
    return Path(directory or paths.interim_dir()) / f"{name}.parquet"


def exists(name: str, directory: Path | None = None) -> bool:
    return path_of(name, directory).exists()


def write(df: pd.DataFrame, name: str, directory: Path | None = None) -> Path:
    """Check ``df`` against the contract of ``name``, then write it; returns the file's path.

    Nothing is written when the check fails, so a broken table never replaces a good one.
    """
    out = path_of(name, directory)
    checked = contracts.check(df, name, out, when="write")
    out.parent.mkdir(parents=True, exist_ok=True)
    checked.to_parquet(out, index=False)
    return out


def read(name: str, directory: Path | None = None) -> pd.DataFrame:
    """Read the interim table ``name`` and check it against its contract."""
    path = path_of(name, directory)
    if not path.exists():
        raise InterimFileMissing(f"{path} missing; {contracts.fix_for(name, 'read')}")
    return contracts.check(pd.read_parquet(path), name, path, when="read")
