"""A judge panel: the same notebooks run once per judge, each into its own output root.

``python -m judgelab.panel run 09 --panel panel.toml`` (a TOML file of ``[[member]]`` tables,
docs/panel.md) runs notebook 09 once per member with the gateway's settings set to the member's and
``JUDGELAB_OUTPUT_ROOT=<output root>/results/panel/<name>/``.

A host only receives its own member's key: every key variable is removed from a member's
environment, then its own key is put where the gateway reads it for its host; the per-study models
are removed too, as they would replace the member's. Interim files of notebooks that call no model
(01, 07, 08) are copied from the output root; a judge's notebook's must be the member's own.
``results/panel/panel.json`` lists the members (:func:`members`, :func:`stack`).
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import asdict, dataclass
from fnmatch import fnmatch
from pathlib import Path

import pandas as pd

from judgelab import interim, paths, profiles, settings_file
from judgelab.gateway.errors import ConfigError
from judgelab.gateway.settings import OPENAI_KEY_VAR, OTHER_KEY_VAR, api_key_for, normalize_backend
from judgelab.study_models import NOTEBOOK_STUDY, PAPER_JUDGES
from judgelab.notebook_files import READS, writers_of

#: settings of the parent's environment a member must not inherit (they would choose another judge)
JUDGE_VARS = ("JUDGELAB_BACKEND", "JUDGELAB_MODEL", "JUDGELAB_BASE_URL", "OPENAI_BASE_URL", "JUDGELAB_CACHE_PATH",
              *(f"JUDGELAB_{study.upper()}_MODEL" for study in PAPER_JUDGES))
MANIFEST = "panel.json"


@dataclass(frozen=True)
class Member:
    name: str
    backend: str
    model: str | None = None
    base_url: str | None = None
    key_env: str | None = None
    family: str | None = None


def read_panel(path: str | Path) -> list[Member]:
    """The members of a panel file (module docstring); a clear error names the file and member."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SystemExit(f"{path}: cannot read the panel file ({exc})") from exc
    rows = data.get("member")
    if not isinstance(rows, list) or not rows:
        raise SystemExit(f"{path}: no [[member]] tables")
    out = []
    for i, row in enumerate(rows, 1):
        where = f"{path}, member {i}"
        unknown = set(row) - set(Member.__dataclass_fields__)
        if unknown:
            raise SystemExit(f"{where}: unknown field(s) {sorted(unknown)}; allowed: {list(Member.__dataclass_fields__)}")
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", str(row.get("name", ""))):
            raise SystemExit(f"{where}: 'name' must be letters, digits, '.', '_' or '-' (it names a folder)")
        if "backend" not in row:
            raise SystemExit(f"{where} ({row['name']}): 'backend' is required")
        try:
            backend = normalize_backend(str(row["backend"]))
        except ConfigError as exc:
            raise SystemExit(f"{where} ({row['name']}): {exc}") from exc
        if backend == "openai-compatible" and not row.get("base_url"):
            raise SystemExit(f"{where} ({row['name']}): an openai-compatible member needs 'base_url'")
        out.append(Member(**{**row, "backend": backend}))
    names = [m.name for m in out]
    if len(set(names)) < len(names):
        raise SystemExit(f"{path}: member names repeat: {names}")
    return out


def member_root(name: str, base: Path | None = None) -> Path:
    return (base or paths.output_root()) / "results" / "panel" / name


def member_env(member: Member, panel: list[Member], parent: dict[str, str], base: Path | None = None) -> dict[str, str]:
    """The environment of ``member``'s run (module docstring): its judge, its root, its key only."""
    drop = {*JUDGE_VARS, OPENAI_KEY_VAR, OTHER_KEY_VAR, *(m.key_env for m in panel if m.key_env)}
    env = {k: v for k, v in parent.items() if k not in drop}
    env.update({"JUDGELAB_BACKEND": member.backend, "JUDGELAB_OUTPUT_ROOT": str(member_root(member.name, base))})
    env.update({k: v for k, v in (("JUDGELAB_MODEL", member.model), ("JUDGELAB_BASE_URL", member.base_url)) if v})
    if member.key_env:
        key = parent.get(member.key_env)
        if not key:
            raise SystemExit(f"panel member {member.name}: its key variable {member.key_env} is not set")
        env[api_key_for(member.base_url)[1]] = key
    return env


def seed_member(root: Path, numbers: list[str], base: Path) -> None:
    """Copy in the interim files no judge wrote; check a judge's are the member's own."""
    src, dst = base / "results" / "interim", root / "results" / "interim"
    dst.mkdir(parents=True, exist_ok=True)
    for name in sorted({n for nb in numbers for n in READS[nb]}):
        writers = writers_of(name)
        if set(writers) <= set(numbers):
            continue  # the member writes it in this run
        files = [f for f in (src.iterdir() if src.is_dir() else []) if fnmatch(f.stem, name)]
        if any(w in NOTEBOOK_STUDY for w in writers):
            if not any(fnmatch(f.stem, name) for f in dst.iterdir()):
                raise SystemExit(f"panel member {root.name} has no {name} of its own: run the panel on notebook "
                                 f"{'/'.join(writers)} first (another judge's would be read as this member's)")
            continue
        if not files:
            raise SystemExit(f"{src}: no {name} for the panel's notebooks: run notebook {'/'.join(writers)} first")
        for f in files:
            shutil.copy2(f, dst / f.name)


def run(panel_file: str | Path, numbers: list[str], profile: str) -> list[Member]:
    """Run ``numbers`` for every member (module docstring); stops at the first member that fails."""
    profiles.check(profile)
    panel, base = read_panel(panel_file), paths.output_root()
    numbers = sorted(f"{int(n):02d}" for n in numbers)
    for m in panel:
        root = member_root(m.name, base)
        seed_member(root, numbers, base)
        print(f"[judgelab] panel member {m.name} ({m.backend}, {m.model or 'default model'}) -> {root}", flush=True)
        cmd = [sys.executable, "-m", "judgelab.pipeline", "run", *numbers, "--profile", profile]
        if subprocess.run(cmd, env=member_env(m, panel, settings_file.child_environment(), base), cwd=paths.project_root()).returncode:
            raise SystemExit(f"panel member {m.name}: notebook run failed (its output root: {root})")
    (base / "results" / "panel" / MANIFEST).write_text(
        json.dumps([asdict(m) for m in panel], indent=2), encoding="utf-8")
    return panel


def members(base: Path | None = None) -> list[Member]:
    """The members of the last panel run under the output root ([] when none ran)."""
    f = (base or paths.output_root()) / "results" / "panel" / MANIFEST
    return [Member(**m) for m in json.loads(f.read_text(encoding="utf-8"))] if f.exists() else []


def stack(names: list[str], base: Path | None = None) -> pd.DataFrame:
    """The interim tables ``names`` of every member, one frame with ``judge``, ``judge_family``."""
    parts = []
    for m in members(base):
        directory = member_root(m.name, base) / "results" / "interim"
        for name in names:
            if interim.exists(name, directory):
                parts.append(interim.read(name, directory).assign(judge=m.name, judge_family=m.family))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m judgelab.panel", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run notebooks once per panel member")
    r.add_argument("numbers", nargs="+")
    r.add_argument("--panel", required=True, help="the panel file (TOML)")
    r.add_argument("--profile", default="demo", choices=profiles.PROFILES)
    args = ap.parse_args(argv)
    run(args.panel, args.numbers, args.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
