"""Where the compendium reads committed inputs and writes generated outputs.

All generated files live under one output root (the project root, or ``$JUDGELAB_OUTPUT_ROOT``)
so that a smoke run in the tests never overwrites a demo run. The variables are read by the
settings file's reader (:func:`judgelab.settings_file.path_variable`), not here.
"""
from __future__ import annotations

from pathlib import Path

from judgelab.settings_file import path_variable


def project_root() -> Path:
    """The repository root: ``$JUDGELAB_PROJECT_ROOT``, else :func:`found_root`."""
    env = path_variable("project_root")
    return Path(env).resolve() if env else found_root()


def found_root() -> Path:
    """The folder above this file holding ``pyproject.toml`` and ``lib/`` (else the working directory)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").exists() and (parent / "lib").is_dir():
            return parent
    return Path.cwd()


def output_root() -> Path:
    env = path_variable("output_root")
    return Path(env).resolve() if env else project_root()


def _ensure(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def tables_dir() -> Path:
    return _ensure(output_root() / "results" / "tables")


def figures_dir() -> Path:
    return _ensure(output_root() / "figures")


def interim_dir() -> Path:
    return _ensure(output_root() / "results" / "interim")


def cache_dir() -> Path:
    return _ensure(output_root() / "results" / "cache")


def executed_dir() -> Path:
    return _ensure(output_root() / "results" / "executed")


def bench_dir() -> Path:
    return _ensure(output_root() / "results" / "bench")


def data_raw() -> Path:
    """Acquired third-party files: ``$JUDGELAB_DATA_RAW`` or ``<project>/data/raw``."""
    env = path_variable("data_raw")
    return _ensure(Path(env).resolve() if env else project_root() / "data" / "raw")


def data_mirror() -> Path | None:
    """The local mirror directory named by ``$DATA_MIRROR`` (relative to the project root), or None."""
    env = path_variable("data_mirror")
    if not env:
        return None
    p = Path(env)
    if not p.is_absolute():
        p = (project_root() / p) if not p.exists() else p
    return p.resolve()


def prompts_dir() -> Path:
    return project_root() / "prompts"


def corpus_dir() -> Path:
    return project_root() / "data" / "corpus"
