"""The record of a run as a whole, and what changed between two runs.

``python -m judgelab.runrecord write --profile demo`` (the last step of ``make notebooks``) writes
``results/runs/<UTC timestamp>_<profile>.json`` and a copy ``results/runs/latest.json`` under the
output root. ``python -m judgelab.runrecord diff A.json B.json`` lists what differs between two
records (exit status 1 when something does, 0 when nothing does, as ``diff`` does).

A record is one JSON object: ``created_at`` (UTC), ``profile``, ``git_commit``, ``git_dirty``;
``judges`` (every ``<backend>:<model>`` of the sidecars and ledgers; ``backend``/``model`` when
there is exactly one); ``packages`` (installed versions of everything pinned in
``requirements.lock`` and ``requirements-extra.txt``); ``data`` and ``outputs`` (``{path:
sha256}`` under ``data/`` and the output root's tables, interim files and figures; sidecars left
out, as they carry their writing time and hold their output's sha256 anyway); ``settings`` (the
judge settings of ``make``'s environment and the base URL's host: never a key); ``notebooks``
(make's stamps for this profile); ``calls`` (per notebook, its last run's ledger summary) and
``calls_total``.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import re
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from judgelab import config, paths, profiles, provenance
from judgelab.corpus.acquire import sha256_file

LOCK_FILES = ("requirements.lock", "requirements-extra.txt")
OUTPUT_DIRS = ("results/tables", "results/interim", "figures")
DATA_DIRS = ("data",)
#: Ledger counts summed into ``calls_total`` and compared by :func:`diff`.
COUNTS = ("calls", "fresh", "cached", "failed", "input_tokens", "output_tokens", "cached_tokens",
          "cost_usd", "spent_usd")
_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*==\s*([^\s;#]+)")


def runs_dir() -> Path:
    d = paths.output_root() / "results" / "runs"
    d.mkdir(parents=True, exist_ok=True)
    return d


def pinned_packages(files: list[Path]) -> list[str]:
    """Names pinned ``name==version`` in requirement files (comments and options skipped)."""
    names: list[str] = []
    for f in files:
        if not f.exists():
            continue
        for line in f.read_text(encoding="utf-8").splitlines():
            m = _REQ.match(line)
            if m and m.group(1) not in names:
                names.append(m.group(1))
    return sorted(names, key=str.lower)


def package_versions(names: list[str]) -> dict[str, str | None]:
    """Installed version of each package (None when it is not installed)."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def file_hashes(base: Path, folders, skip=lambda p: False) -> dict[str, str]:
    """``{path relative to base: sha256}`` of every file under ``base/<folder>`` (sorted)."""
    out: dict[str, str] = {}
    for folder in folders:
        root = base / folder
        if not root.is_dir():
            continue
        for f in sorted(root.rglob("*")):
            if f.is_file() and not skip(f) and "__pycache__" not in f.parts:
                out[f.relative_to(base).as_posix()] = sha256_file(f)
    return out


def _is_sidecar(p: Path) -> bool:
    return p.name.endswith(".provenance.json")


def ledgers(folder: Path | None = None) -> dict[str, dict[str, Any]]:
    """The per-notebook ledger summaries (``results/runs/ledgers/<notebook>.json``), by notebook."""
    folder = folder or provenance.ledger_dir()
    out = {}
    for f in sorted(folder.glob("*.json")):
        try:
            out[f.stem] = json.loads(f.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{f}: not valid JSON ({exc}); delete it and re-run notebook {f.stem}") from None
    return out


def total_calls(per_notebook: dict[str, dict[str, Any]]) -> dict[str, float]:
    """Sums of :data:`COUNTS` over notebooks (USD rounded to 1e-6)."""
    out = {}
    for key in COUNTS:
        value = sum(rec.get(key, 0) or 0 for rec in per_notebook.values())
        out[key] = round(value, 6) if key.endswith("_usd") else int(value)
    return out


def judges_named(root: Path, calls: dict[str, dict[str, Any]]) -> list[str]:
    """Every judge a sidecar names or a ledger counted (``none`` left out)."""
    found: set[str] = set()
    for folder in ("results/tables", "figures"):
        for side in sorted((root / folder).glob("*.provenance.json")):
            try:
                judge = json.loads(side.read_text(encoding="utf-8")).get("judge")
            except json.JSONDecodeError as exc:
                raise ValueError(f"{side}: not valid JSON ({exc})") from None
            if judge and judge != "none":
                found.add(judge)
    for rec in calls.values():
        found |= set(rec.get("judges", []))
    return sorted(found)


#: the variables a record names, each with the gateway setting it sets in the resolved configuration
SETTINGS = {"JUDGELAB_BACKEND": "backend", "JUDGELAB_MODEL": "model", "JUDGELAB_CACHE_MODE": "cache_mode",
            "JUDGELAB_BATCH": "batch"}


def judge_settings(cfg: config.Config) -> dict[str, Any]:
    """The judge's settings the environment gave the run's resolved configuration ``cfg`` (module
    docstring; None: not set there), the base URL as a host only."""
    def given(field: str, *variables: str):
        s = cfg.gateway[field]
        return s.value if s.source in {f"environment {v}" for v in variables} else None

    out = {name: given(field, name) for name, field in SETTINGS.items()}
    out["base_url_host"] = provenance.url_host(given("base_url", "JUDGELAB_BASE_URL", "OPENAI_BASE_URL"))
    return out


def stamped_notebooks(root: Path, profile: str) -> list[str]:
    stamps = root / "results" / "executed" / ".stamps"
    return sorted(p.stem for p in stamps.glob(f"*.{profile}")) if stamps.is_dir() else []


def build(profile: str, now: _dt.datetime | None = None) -> dict[str, Any]:
    """The run record of the output root as it stands (module docstring)."""
    profiles.check(profile)
    root, project = paths.output_root(), paths.project_root()
    now = now or _dt.datetime.now(_dt.timezone.utc)
    commit, dirty = provenance.git_state()
    calls = ledgers()
    judges = judges_named(root, calls)
    one = judges[0].split(":", 1) if len(judges) == 1 else [None, None]
    return {
        "created_at": now.isoformat(timespec="seconds"),
        "profile": profile,
        "git_commit": commit,
        "git_dirty": dirty,
        "judges": judges,
        "backend": one[0],
        "model": one[1],
        "packages": package_versions(pinned_packages([project / f for f in LOCK_FILES])),
        "data": file_hashes(project, DATA_DIRS),
        "outputs": file_hashes(root, OUTPUT_DIRS, skip=_is_sidecar),
        "settings": judge_settings(config.resolve(profile)),  # the environment read once, by the resolver
        "notebooks": stamped_notebooks(root, profile),
        "calls": calls,
        "calls_total": total_calls(calls),
    }


def write(profile: str, now: _dt.datetime | None = None) -> Path:
    """Write the record to ``results/runs/<timestamp>_<profile>.json`` and ``latest.json``."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    record = build(profile, now)
    text = json.dumps(record, indent=1, sort_keys=False) + "\n"
    out = runs_dir() / f"{now.strftime('%Y%m%dT%H%M%SZ')}_{profile}.json"
    out.write_text(text, encoding="utf-8")
    (runs_dir() / "latest.json").write_text(text, encoding="utf-8")
    return out


def read(path: Path) -> dict[str, Any]:
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no run record there (make writes results/runs/*.json)") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not a run record, invalid JSON ({exc})") from None


def _mapping_diff(section: str, a: dict, b: dict) -> list[str]:
    lines = []
    for key in sorted(set(a) | set(b)):
        if key not in a:
            lines.append(f"{section}: added {key}")
        elif key not in b:
            lines.append(f"{section}: removed {key}")
        elif a[key] != b[key]:
            if section in ("outputs", "data"):
                lines.append(f"{section}: changed {key}")
            else:
                lines.append(f"{section}: {key} {a[key]} -> {b[key]}")
    return lines


def diff(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """What differs from record ``a`` to record ``b``, one line each: commit, profile, judges,
    outputs and data (added, removed, changed sha256), package versions, and call counts (per
    notebook and in total)."""
    lines = []
    for key in ("profile", "git_commit", "git_dirty", "judges"):
        if a.get(key) != b.get(key):
            lines.append(f"{key}: {a.get(key)} -> {b.get(key)}")
    for section in ("settings", "outputs", "data", "packages"):
        lines += _mapping_diff(section, a.get(section, {}), b.get(section, {}))
    calls_a, calls_b = a.get("calls", {}), b.get("calls", {})
    for nb in sorted(set(calls_a) | set(calls_b)):
        ra, rb = calls_a.get(nb, {}), calls_b.get(nb, {})
        for key in COUNTS:
            if ra.get(key, 0) != rb.get(key, 0):
                lines.append(f"calls: {nb} {key} {ra.get(key, 0)} -> {rb.get(key, 0)}")
    ta, tb = a.get("calls_total", {}), b.get("calls_total", {})
    for key in COUNTS:
        if ta.get(key, 0) != tb.get(key, 0):
            lines.append(f"calls_total: {key} {ta.get(key, 0)} -> {tb.get(key, 0)}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m judgelab.runrecord", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write", help="write the run record of the output root")
    w.add_argument("--profile", required=True, choices=profiles.PROFILES)
    d = sub.add_parser("diff", help="list what changed between two run records")
    d.add_argument("a")
    d.add_argument("b")
    args = parser.parse_args(argv)
    if args.cmd == "write":
        out = write(args.profile)
        rec = read(out)
        print(f"[judgelab] run record {out} ({len(rec['outputs'])} outputs, "
              f"{rec['calls_total']['calls']} calls, {rec['calls_total']['spent_usd']} USD spent)")
        return 0
    lines = diff(read(args.a), read(args.b))
    print("\n".join(lines) if lines else "no differences")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
