"""The settings file, ``profiles.toml`` at the root, and the environment variables it declares.

The lowest floor (it imports nothing of judgelab) and the one module that touches the process's
environment: :func:`env` and :func:`environment` read it (for the resolvers, :mod:`judgelab.config`
and :mod:`judgelab.gateway.settings`; every other module asks them), :func:`exported` and
:func:`export_default` write it (for child processes and third-party libraries that read it
themselves), :func:`child_environment` copies it for a subprocess. ``tests/test_config.py`` fails
when any other module reads or writes the environment. A profile's knobs with its inheritance applied
(:func:`resolved`) are read here too, for :mod:`judgelab.config` (a run's resolved configuration)
and :mod:`judgelab.profiles` (the knobs API, ``show`` and ``docs``).
"""
from __future__ import annotations

import contextlib
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


#: the locations the environment may move (each declared in ``[overrides]``): ``key -> variable``
PATH_VARIABLES = {"output_root": "JUDGELAB_OUTPUT_ROOT", "project_root": "JUDGELAB_PROJECT_ROOT",
                  "data_raw": "JUDGELAB_DATA_RAW", "data_mirror": "DATA_MIRROR",
                  "tiktoken_cache": "TIKTOKEN_CACHE_DIR"}


def path_variable(key: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The location ``key`` of :data:`PATH_VARIABLES` as the environment sets it, None if unset:
    :mod:`judgelab.paths` and :mod:`judgelab.tokens` then use their defaults (here, not in
    :mod:`judgelab.config`, because the gateway that config resolves stands on paths)."""
    return env(PATH_VARIABLES[key], environ)


def child_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's whole environment with ``extra`` on top: what a subprocess is started with."""
    return {**os.environ, **(extra or {})}


@contextlib.contextmanager
def exported(values: Mapping[str, str]):
    """Set ``values`` in this process's environment for the block (a notebook kernel or another
    child inherits them), then restore each variable as it was (unset ones unset again)."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update({k: str(v) for k, v in values.items()})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def export(name: str, value: str) -> None:
    """Set ``name`` for the rest of the process and its children (a variant run's output root)."""
    os.environ[name] = str(value)


def export_default(name: str, value: str) -> str:
    """Set ``name`` unless it is set (for a library that reads it itself: tiktoken, Hugging Face);
    return the value in force."""
    return os.environ.setdefault(name, str(value))


# ---------------------------------------------------------------- profiles and inheritance

NONE = "none"
#: keys of a profile's own table that are not studies
PROFILE_KEYS = ("inherits", "description")


def check(name: str, path: Path = FILE) -> str:
    """Return ``name`` if the settings file declares it; otherwise a ValueError that lists them."""
    if name not in names(path):
        raise ProfileError(f"unknown PROFILE {name!r}; choose one of {', '.join(names(path))} "
                           f"(or add a [{name}] section to {path.name})")
    return name


def _chain(name: str, path: Path) -> list[str]:
    """``name`` and the profiles it inherits from, the root last."""
    chain = [check(name, path)]
    while (parent := load(path)[chain[-1]].get("inherits")) is not None:
        if parent in chain:
            raise ProfileError(f"{path.name}: [{name}] inherits in a circle ({' -> '.join(chain + [parent])})")
        chain.append(check(parent, path))
    return chain


def _merge(base: dict, top: dict, origin: str, sources: dict, prefix: str = "") -> dict:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value, origin, sources, f"{prefix}{key}.")
        else:
            out[key] = value
            sources[prefix + key] = origin
    return out


def _value(value: Any) -> Any:
    if isinstance(value, str) and value == NONE:
        return None
    if isinstance(value, list):
        return tuple(_value(v) for v in value)
    if isinstance(value, dict):
        return {k: _value(v) for k, v in value.items()}
    return value


def resolved(study: str, name: str, path: Path = FILE) -> tuple[dict[str, Any], dict[str, str]]:
    """(knobs, {knob: the profile that set it}) of ``study`` in profile ``name``, inheritance applied."""
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for origin in reversed(_chain(name, path)):
        table = load(path)[origin].get(study)
        if table is not None:
            merged = _merge(merged, table, origin, sources)
    if not merged:
        raise ProfileError(f"{path.name}: profile {name!r} has no [{name}.{study}] table (nor inherits one)")
    return _value(merged), sources


def studies(name: str, path: Path = FILE) -> list[str]:
    """The studies profile ``name`` sets, in file order."""
    found: list[str] = []
    for origin in reversed(_chain(name, path)):
        found += [k for k, v in load(path)[origin].items()
                  if k not in PROFILE_KEYS and isinstance(v, dict) and k not in found]
    return found
