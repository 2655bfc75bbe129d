"""The files notebooks pass to each other (``results/interim/``), written and read in one place.

Every interim table has a name, a parquet file ``<interim_dir>/<name>.parquet`` and a contract
(:mod:`judgelab.contracts`). Nothing else calls ``to_parquet`` / ``read_parquet`` on these files:
:func:`write` and :func:`read` catch a file that breaks its contract where it is written and where
it is read, and return the frame as the contract types it.
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
    """Check ``df`` against its contract, then write it (never over a good file on failure)."""
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
