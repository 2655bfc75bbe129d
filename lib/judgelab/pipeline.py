"""Run the numbered notebooks: jupytext source -> .ipynb -> papermill -> executed copy.

``python -m judgelab.pipeline run 01 --profile smoke`` executes ``notebooks/01_*.py`` into
``<output root>/results/executed/01_*.ipynb``. The Makefile and the tests call exactly this.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from . import paths, profiles


# What each notebook reads (DESIGN.md's table); the Makefile carries the same list.
DEPENDS = {
    "01": [], "02": ["01"], "03": ["01"], "04": ["01"], "05": ["02", "03", "04"],
    "06": ["01", "02", "03", "04"], "07": [], "08": ["07"], "09": ["08"], "10": ["07", "08", "09"],
    "11": [],
}


def upstream(number: str) -> set[str]:
    """Every notebook that ``number`` depends on, directly or not."""
    seen: set[str] = set()
    todo = list(DEPENDS.get(number, []))
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo.extend(DEPENDS.get(n, []))
    return seen


def _mark_done(source: Path, profile: str) -> None:
    """Stamp for make: this notebook ran with this profile; stamps of other profiles are stale now
    (the interim files they describe were just overwritten)."""
    stamps = paths.executed_dir() / ".stamps"
    stamps.mkdir(exist_ok=True)
    for other in profiles.PROFILES:
        if other != profile:
            for stale in stamps.glob(f"*.{other}"):
                stale.unlink()
    (stamps / f"{source.name[:2]}.{profile}").touch()


def notebook_sources() -> list[Path]:
    """Every ``notebooks/NN_name.py`` in number order."""
    return sorted(paths.project_root().glob("notebooks/[0-9][0-9]_*.py"))


def find_notebook(number: str) -> Path:
    number = f"{int(number):02d}"
    hits = [p for p in notebook_sources() if p.name.startswith(number + "_")]
    if not hits:
        raise SystemExit(f"no notebook numbered {number} in {paths.project_root() / 'notebooks'}")
    return hits[0]


def run_notebook(source: Path, profile: str, parameters: dict | None = None, kernel: str = "python3") -> Path:
    """Execute one notebook source with papermill; return the executed copy's path."""
    import jupytext
    import papermill as pm

    profiles.check(profile)
    nb = jupytext.read(source)
    nb.metadata["kernelspec"] = {"name": kernel, "display_name": "Python 3", "language": "python"}
    out = paths.executed_dir() / f"{source.stem}.ipynb"
    with tempfile.TemporaryDirectory() as tmp:
        src_ipynb = Path(tmp) / f"{source.stem}.ipynb"
        jupytext.write(nb, src_ipynb)
        params = {"PROFILE": profile, **(parameters or {})}
        pm.execute_notebook(
            str(src_ipynb), str(out), parameters=params, kernel_name=kernel,
            cwd=str(source.parent), progress_bar=False, log_output=False,
        )
    _mark_done(source, profile)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m judgelab.pipeline")
    sub = parser.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="execute notebooks by number")
    run.add_argument("numbers", nargs="+", help="notebook numbers, e.g. 01 07, or 'all'")
    run.add_argument("--profile", default="demo", choices=profiles.PROFILES)
    run.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                     help="extra papermill parameter (string value)")
    sub.add_parser("list", help="list notebooks in order")
    args = parser.parse_args(argv)
    if args.cmd == "list":
        for p in notebook_sources():
            print(p.name)
        return 0
    extra = dict(kv.split("=", 1) for kv in args.param)
    sources = notebook_sources() if args.numbers == ["all"] else [find_notebook(n) for n in args.numbers]
    for src in sources:
        print(f"[judgelab] running {src.name} (profile={args.profile})", flush=True)
        out = run_notebook(src, args.profile, extra)
        print(f"[judgelab] wrote {out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
