"""Profiles, not edits: every setting of a run is declared in ``profiles.toml`` at the root.

A profile (``smoke``, ``demo``, ``paper``, or a new section such as ``[class]`` with
``inherits = "demo"``) holds one table of knobs per study; :func:`knobs` returns one study's
knobs as the code uses them ("none" -> None, arrays -> tuples). The environment variables are
declared overrides of named settings (``[overrides]``), read only through
:mod:`judgelab.settings_file` (the floor below, which also applies a profile's ``inherits``:
:func:`resolved`, :func:`studies`, :func:`check`, re-exported here).

``python -m judgelab.profiles show demo`` prints a run's resolved configuration
(:mod:`judgelab.config`), each value with its source; ``python -m judgelab.profiles docs``
writes ``docs/settings.md``.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from judgelab import config
from judgelab.config import fmt
from judgelab.settings_file import (FILE, NONE, ProfileError, check, declared, load, names,  # noqa: F401 (the API)
                                     resolved, studies)

DOCS = FILE.parent / "docs" / "settings.md"


PROFILES = names()


def knobs(study: str, name, path: Path = FILE) -> dict[str, Any]:
    """The knobs of ``study`` in profile ``name``, or in a run's resolved configuration
    (:class:`judgelab.config.Config`: the notebook's parameters applied)."""
    if not isinstance(name, str):
        return name.knobs(study)
    return resolved(study, name, path)[0]


# ---------------------------------------------------------------- show and docs

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
