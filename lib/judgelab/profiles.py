"""Profiles, not edits: every setting of a run is declared in ``profiles.toml`` at the root.

A profile (``smoke``, ``demo``, ``paper``, or a new section such as ``[class]`` with
``inherits = "demo"``) holds one table of knobs per study; :func:`knobs` returns one study's
knobs as the code uses them ("none" -> None, arrays -> tuples). The environment variables are
declared overrides of named settings (``[overrides]``), read only through
:func:`judgelab.settings_file.env` (the floor below, so that paths and the gateway use it too).

``python -m judgelab.profiles show demo`` prints a run's resolved configuration
(:mod:`judgelab.config`), each value with its source; ``python -m judgelab.profiles docs`` writes ``docs/settings.md``.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from judgelab.settings_file import FILE, ProfileError, declared, load, names

DOCS = FILE.parent / "docs" / "settings.md"
NONE = "none"
#: keys of a profile's own table that are not studies
PROFILE_KEYS = ("inherits", "description")


PROFILES = names()


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


def knobs(study: str, name, path: Path = FILE) -> dict[str, Any]:
    """The knobs of ``study`` in profile ``name``, or in a run's resolved configuration
    (:class:`judgelab.config.Config`: the notebook's parameters applied)."""
    if not isinstance(name, str):
        return name.knobs(study)
    return resolved(study, name, path)[0]


# ---------------------------------------------------------------- show and docs

def fmt(value: Any) -> str:
    if value is None:
        return NONE
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple):
        return ", ".join(fmt(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k}={fmt(v)}" for k, v in value.items())
    return str(value)


def _flat(knobs_: dict, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in knobs_.items():
        if key == "collections" and isinstance(value, dict):
            for coll, sub in value.items():
                out.update(_flat(sub, f"{prefix}collections.{coll}."))
        else:
            out[prefix + key] = value
    return out


def show(name: str, path: Path = FILE) -> str:
    """What a run of profile ``name`` gets, each value with its source: every knob, each study's
    judge (backend, model, effort, the key's variable, never the key), the gateway and the paths
    (:meth:`judgelab.config.Config.show`)."""
    from judgelab import config

    return config.resolve(name, path=path).show()


_SECTION = re.compile(r"^\[([\w.]+)\]")
_COMMENTED = re.compile(r"^(\w+)\s*=.*\s#\s(.+)$")


def meanings(path: Path = FILE) -> dict[str, str]:
    """``{"study.knob": comment}``: the first trailing comment of each knob in the file."""
    out: dict[str, str] = {}
    section = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if m := _SECTION.match(line):
            section = m.group(1).split(".", 1)[1] if "." in m.group(1) else None
        elif section and (m := _COMMENTED.match(line)):
            study, _, rest = section.partition(".")
            key = f"{study}.{rest + '.' if rest else ''}{m.group(1)}"
            out.setdefault(key, m.group(2).strip())
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def docs(path: Path = FILE) -> str:
    """``docs/settings.md``: one table of profiles x knobs, one of environment variables."""
    profs = names(path)
    about = meanings(path)
    rows: dict[str, dict[str, Any]] = {}
    for prof in profs:
        for study in studies(prof, path):
            for key, value in _flat(resolved(study, prof, path)[0]).items():
                rows.setdefault(f"{study}.{key}", {})[prof] = value
    out = ["# Settings", "",
           f"Generated from `{path.name}` by `python -m judgelab.profiles docs`; do not edit (a test",
           "checks that it is up to date). `python -m judgelab.profiles show PROFILE` prints one run's",
           "settings with the environment's overrides. `none` means None (default, no limit, skip).", "",
           "## Profiles", ""]
    out += [f"- `{p}`: {load(path)[p].get('description', '')}" for p in profs]
    out += ["", "| knob | " + " | ".join(f"`{p}`" for p in profs) + " | what it does |",
            "| --- |" + " --- |" * (len(profs) + 1)]
    for key, values in rows.items():
        cells = [_cell(fmt(values[p])) if p in values else "" for p in profs]
        meaning = about.get(key) or about.get(re.sub(r"collections\.\w+\.", "collections.news.", key), "")
        out.append(f"| `{key}` | " + " | ".join(cells) + f" | {_cell(meaning)} |")
    out += ["", "## Environment variables", "",
            "Each overrides one named setting; internal ones are set by `judgelab.pipeline` for a",
            "notebook's kernel.", "",
            "| variable | overrides | takes | what it does |", "| --- | --- | --- | --- |"]
    for var, spec in declared(path).items():
        what = ("internal: " if spec.get("internal") else "") + spec["meaning"]
        out.append(f"| `{var}` | `{spec['key']}` | {_cell(spec['type'])} | {_cell(what)} |")
    out += ["", "## Notebook parameters", "",
            "Each notebook's papermill parameters; a parameter with a knob overrides it (None in the",
            "notebook means the profile's value), and the sidecars record every parameter given a value.", "",
            "| notebook | parameter | sets | what it does |", "| --- | --- | --- | --- |"]
    for nb, table in load(path).get("parameters", {}).items():
        for name, spec in table.items():
            sets = f"`{spec['knob']}`" if "knob" in spec else spec.get("reads", "")
            out.append(f"| {nb} | `{name}` | {sets} | {_cell(spec.get('meaning', ''))} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m judgelab.profiles", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("show", help="a run's effective settings").add_argument("profile")
    sub.add_parser("docs", help=f"write {DOCS.relative_to(FILE.parent)}")
    args = parser.parse_args(argv)
    if args.command == "show":
        try:
            print(show(args.profile))
        except ProfileError as exc:
            print(exc, file=sys.stderr)
            return 2
    else:
        DOCS.write_text(docs(), encoding="utf-8")
        print(f"wrote {DOCS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
