"""The settings file, ``profiles.toml`` at the root, and the environment variables it declares.

The lowest floor (it imports nothing of judgelab), so that :mod:`judgelab.paths` and the gateway
read their variables through :func:`env` too; profiles and their knobs: :mod:`judgelab.profiles`.
"""
from __future__ import annotations

import functools
import os
import tomllib
from pathlib import Path
from typing import Any, Mapping

FILE = Path(__file__).resolve().parents[2] / "profiles.toml"
#: top-level tables of the file that are not profiles
RESERVED = ("overrides", "parameters", "effects")


class ProfileError(ValueError):
    """A profile, study or variable the settings file does not declare, or a malformed file."""


@functools.cache
def load(path: Path = FILE) -> dict[str, Any]:
    """The settings file, parsed (once per process)."""
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"{path}: {exc}") from exc


def names(path: Path = FILE) -> tuple[str, ...]:
    """The profiles the file declares, in file order."""
    return tuple(k for k, v in load(path).items() if k not in RESERVED and isinstance(v, dict))


def declared(path: Path = FILE) -> dict[str, dict[str, Any]]:
    """``{variable: {key, type, meaning[, internal]}}`` of the file's ``[overrides]``."""
    return load(path).get("overrides", {})


def env(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """``name``'s stripped value in ``environ`` (None: the process's environment, read here and
    nowhere else), None if unset or blank; the name must be declared in ``[overrides]``."""
    if name not in declared():
        raise ProfileError(f"{name} is not declared in {FILE.name} [overrides]; declare it there first")
    value = (os.environ if environ is None else environ).get(name)
    return value.strip() if value and value.strip() else None


def environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The declared variables that are set in ``environ`` (None: the process's), stripped: what a
    run's configuration (:func:`judgelab.config.resolve`) reads, once."""
    return {name: value for name in declared() if (value := env(name, environ)) is not None}
