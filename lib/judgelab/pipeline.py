"""Run the numbered notebooks, and know what each one depends on.

``python -m judgelab.pipeline run 01 --profile smoke`` executes ``notebooks/01_*.py`` (jupytext
source -> .ipynb -> papermill) into ``<output root>/results/executed/01_*.ipynb``. The Makefile and
the tests call exactly this.

This module is the one source of the notebook graph; ``python -m judgelab.pipeline makefile``
writes it as make variables that the Makefile includes:

- **upstream notebooks**: the writers (:mod:`judgelab.notebook_files`) of the interim files a
  notebook reads (:data:`DEPENDS`);
- **library files**: the notebook's ``judgelab`` imports followed transitively
  (:mod:`judgelab.imports`), with every package's ``__init__`` on the way, plus the files those
  modules load at run time: ``paths.prompts_dir() / "<folder>"`` in a module's code means every
  file of ``prompts/<folder>/`` (a bare ``prompts_dir()``: all of ``prompts/``), and a data file
  of the module's own folder named as a string (``"prices.csv"`` in ``gateway.ledger``) means it.
  So editing a module only notebook 10 imports re-runs only notebook 10 (and its readers), while
  editing ``paths.py`` re-runs them all.

Parameters: ``run 05 -p CONVERGENCE_THRESHOLD 0.1`` (or ``=0.1``; values read as papermill's
``-p`` reads them) writes to an output root of its own,
``<output root>/results/variants/05_CONVERGENCE_THRESHOLD=0.1/`` (:func:`variant_root`), seeded
with the root's interim files and a link to its LLM cache, so that a changed parameter never
overwrites the main run's outputs; ``--in-place`` writes over them.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from judgelab import imports, paths, profiles, provenance, settings_file
from judgelab.notebook_files import AFTER_TABLES, READS, writers_of
from judgelab.prompting import parse_template


def _depends() -> dict[str, list[str]]:
    """Notebook -> the notebooks that write what it reads (and whose tables it reads)."""
    out = {}
    for nb, names in READS.items():
        ups = {w for name in names for w in writers_of(name)} | set(AFTER_TABLES.get(nb, []))
        for name in names:
            if not writers_of(name):
                raise ValueError(f"notebook_files.READS: notebook {nb} reads {name!r}, which no notebook writes")
        out[nb] = sorted(ups - {nb})
    return out


#: What each notebook reads, as notebook numbers (derived from ``notebook_files.READS`` and ``WRITES``).
DEPENDS: dict[str, list[str]] = _depends()


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


# ---------------------------------------------------------------- library files of a notebook

def _prompt_folders(tree: ast.AST) -> set[str]:
    """Folders of ``prompts/`` a module's code names (``""``: a bare ``prompts_dir()``)."""
    out: set[str] = set()
    divided: set[int] = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and _calls_prompts_dir(node.left)
                and isinstance(node.right, ast.Constant) and isinstance(node.right.value, str)):
            out.add(node.right.value)
            divided.add(id(node.left))
    for node in ast.walk(tree):
        if _calls_prompts_dir(node) and id(node) not in divided:
            out.add("")
    return out


def _calls_prompts_dir(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (isinstance(f, ast.Attribute) and f.attr == "prompts_dir") or (isinstance(f, ast.Name) and f.id == "prompts_dir")


def _data_files(tree: ast.AST, folder: Path) -> set[Path]:
    """Non-Python files of ``folder`` whose name the module's code holds as a string constant."""
    names = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return {p for p in folder.iterdir() if p.is_file() and p.suffix != ".py" and p.name in names}


@dataclass(frozen=True)
class LibraryIndex:
    """The package read once: module files, import graph, and the other files each module loads."""

    files: dict[str, Path]
    graph: dict[str, set[str]]
    loads: dict[str, set[Path]]


def library_index(package_root: Path | None = None, prompts_root: Path | None = None) -> LibraryIndex:
    """Read the package and its prompt files (arguments: a toy package in tests)."""
    package_root = Path(package_root or imports.package_dir())
    prompts_root = Path(prompts_root or paths.prompts_dir())
    files = imports.module_files(package_root, package_root.name)
    graph = imports.import_graph(package_root, package_root.name)
    loads: dict[str, set[Path]] = {}
    for mod, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        loads[mod] = _data_files(tree, path.parent)
        for folder in _prompt_folders(tree):
            loads[mod] |= {p for p in (prompts_root / folder).rglob("*") if p.is_file()}
    return LibraryIndex(files, graph, loads)


def lib_files(source: Path, index: LibraryIndex | None = None) -> list[Path]:
    """Every library file that running the notebook ``source`` uses (module docstring: how)."""
    index = index or library_index()
    text = Path(source).read_text(encoding="utf-8")
    direct = imports.imports_of(text, "__notebook__", set(index.files), where=str(source))
    out: set[Path] = set()
    for mod in imports.closure(direct, index.graph):
        out.add(index.files[mod])
        out |= index.loads[mod]
    return sorted(out)


def makefile_text() -> str:
    """Make variables for every notebook: ``NB_UP_NN`` (upstream notebooks) and ``NB_LIB_NN``
    (library and prompt files), paths relative to the project root; plus an empty rule for each
    listed file so that a deleted file re-plans instead of stopping make (as ``gcc -MP`` does)."""
    root = paths.project_root()
    lines = ["# Generated by `python -m judgelab.pipeline makefile` (the Makefile remakes it): do not edit."]
    every: set[str] = set()
    index = library_index()
    for src in notebook_sources():
        nb = src.name[:2]
        if nb not in DEPENDS:
            raise ValueError(f"{src.name}: add notebook {nb} to judgelab.notebook_files (WRITES and READS)")
        libs = [str(p.resolve().relative_to(root)) for p in lib_files(src, index)]
        every |= set(libs)
        lines.append(f"NB_UP_{nb} := {' '.join(DEPENDS[nb])}")
        lines.append(f"NB_LIB_{nb} := {' '.join(libs)}")
    lines.append("")
    lines += [f"{f}:" for f in sorted(every)]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- running

def _mark_done(source: Path, profile: str) -> None:
    """Stamp for make: notebook done in ``profile``; other profiles' stamps are stale now."""
    stamps = paths.executed_dir() / ".stamps"
    stamps.mkdir(exist_ok=True)
    for other in profiles.PROFILES:
        if other != profile:
            for stale in stamps.glob(f"*.{other}"):
                stale.unlink()
    (stamps / f"{source.name[:2]}.{profile}").touch()


# ---------------------------------------------------------------- progress of a whole make all

PROGRESS_FILE = ".run-progress.json"  # in the stamps folder: when `make notebooks` started, which profile


def _progress_path() -> Path:
    return paths.executed_dir() / ".stamps" / PROGRESS_FILE


def progress_start(profile: str, owner: int | None = None) -> None:
    """`make notebooks` begins: note the time, so that each notebook's end can say where the whole
    run stands (a notebook run alone, ``make nb-05``, prints no such line). ``owner`` is the process
    of the whole run (make's, passed by the Makefile): once it is gone, the note is stale (a run
    killed before its end) and no line is printed from it."""
    f = _progress_path()
    f.parent.mkdir(parents=True, exist_ok=True)
    (f.parent / ".running").mkdir(exist_ok=True)
    for stale in (f.parent / ".running").iterdir():
        stale.unlink()
    f.write_text(json.dumps({"start": time.time(), "profile": profile, "owner": owner}), encoding="utf-8")


def _alive(pid) -> bool:
    """Whether process ``pid`` still exists (None: not recorded, taken as alive)."""
    if pid is None:
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


def _progress_state() -> dict | None:
    """The whole run's note, or None when there is none or its run has ended without removing it
    (killed: its owner process is gone; the stale note and markers are removed then)."""
    f = _progress_path()
    if not f.exists():
        return None
    try:
        state = json.loads(f.read_text(encoding="utf-8"))
    except ValueError:
        return None
    if not _alive(state.get("owner")):
        f.unlink(missing_ok=True)
        for marker in _running_dir().glob("*") if _running_dir().exists() else []:
            marker.unlink(missing_ok=True)
        return None
    return state


def progress_end() -> str | None:
    """`make notebooks` is done: the closing line, and the marker removed."""
    line = progress_line()
    _progress_path().unlink(missing_ok=True)
    return line


def _running_dir() -> Path:
    return paths.executed_dir() / ".stamps" / ".running"


def progress_line() -> str | None:
    """``make all (demo): 7 of 13 notebooks up to date, ...`` during `make notebooks`, else None."""
    state = _progress_state()
    if state is None:
        return None
    stamps = _progress_path().parent
    numbers = [s.name[:2] for s in notebook_sources()]
    done = [n for n in numbers if (stamps / f"{n}.{state['profile']}").exists()]
    # a marker holds its notebook runner's process id: one left by a killed runner is not "running"
    running = sorted(p.name for p in _running_dir().glob("[0-9][0-9]")
                     if _alive(_marker_pid(p))) if _running_dir().exists() else []
    elapsed = int(time.time() - state["start"])
    line = (f"make all ({state['profile']}): {len(done)} of {len(numbers)} notebooks up to date, "
            f"{elapsed // 60} min {elapsed % 60:02d} s since it started")
    return line + (f"; running: {', '.join(running)}" if running else "")


def _marker_pid(marker: Path) -> int | None:
    try:
        return int(marker.read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None


def _note_running(number: str, running: bool) -> None:
    if _progress_state() is None:
        return
    marker = _running_dir() / number
    if running:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(str(os.getpid()), encoding="utf-8")
    else:
        marker.unlink(missing_ok=True)


def notebook_sources() -> list[Path]:
    """Every ``notebooks/NN_name.py`` in number order."""
    return sorted(paths.project_root().glob("notebooks/[0-9][0-9]_*.py"))


def find_notebook(number: str) -> Path:
    number = f"{int(number):02d}"
    hits = [p for p in notebook_sources() if p.name.startswith(number + "_")]
    if not hits:
        raise SystemExit(f"no notebook numbered {number} in {paths.project_root() / 'notebooks'}")
    return hits[0]


_INDEX_MEMO: dict[tuple, LibraryIndex] = {}


def _current_index() -> LibraryIndex:
    """:func:`library_index`, read again only when a library or prompt file changed (by mtime):
    a process that runs many notebooks (``run all``, the notebook tests) parses the package once."""
    files = sorted(Path(imports.package_dir()).rglob("*.py")) + sorted(paths.prompts_dir().rglob("*"))
    stamp = tuple((str(f), f.stat().st_mtime_ns) for f in files if f.is_file())
    if stamp not in _INDEX_MEMO:
        _INDEX_MEMO.clear()
        _INDEX_MEMO[stamp] = library_index()
    return _INDEX_MEMO[stamp]


def prompt_file_versions(files: list[Path]) -> list[str]:
    """The declared versions of prompt files: a folder's ``VERSION`` file (SAGE: ``sage-v2``) or a
    file's front-matter ``version`` (:mod:`judgelab.prompting`); sorted, without repeats."""
    out: set[str] = set()
    for f in map(Path, files):
        if f.name == "VERSION":
            out.add(f.read_text(encoding="utf-8").strip())
        elif f.suffix == ".md" and f.read_text(encoding="utf-8").startswith("---\n"):
            try:
                out.add(parse_template(f.read_text(encoding="utf-8"), f.stem, f).version)
            except ValueError:  # a fragment (SAGE's parts) declares no version of its own
                continue
    return sorted(out)


def prompt_versions(source: Path, index: LibraryIndex | None = None) -> list[str]:
    """Versions of the prompt files the notebook ``source`` reaches (``sage-v2``, ...)."""
    files = lib_files(source, index or _current_index())
    return prompt_file_versions([p for p in files if p.suffix != ".py"])


def run_environment(source: Path) -> dict[str, str]:
    """The kernel's environment for the sidecars: the notebook and its prompt versions."""
    return {provenance.ENV_NOTEBOOK: source.stem, provenance.ENV_PROMPTS: ",".join(prompt_versions(source))}


class ProgressRelay:
    """The file papermill writes a notebook's stderr to, chunk by chunk: it passes on the kernel's
    progress lines (those starting with ``gateway.progress.LOG_MARK``), named by the notebook, and
    drops everything else, which stays in the executed notebook. So `make all`'s log says how far a
    long notebook is without carrying the notebooks' warnings."""

    def __init__(self, notebook: str, out=None):
        from judgelab.gateway.progress import LOG_MARK

        self.notebook, self.mark, self.out = notebook, LOG_MARK, out
        self._pending = ""

    def write(self, text: str) -> None:
        lines = (self._pending + text).split("\n")
        self._pending = lines.pop()
        for line in lines:
            if line.startswith(self.mark):
                out = self.out or sys.stdout
                out.write(f"[judgelab] {self.notebook}: {line[len(self.mark):]}\n")

    def flush(self) -> None:
        (self.out or sys.stdout).flush()


def run_notebook(source: Path, profile: str, parameters: dict | None = None, kernel: str = "python3") -> Path:
    """Execute one notebook source with papermill (environment: :func:`run_environment`); return
    the executed copy's path. The previous call ledger is removed first, so that a notebook making
    no call this time is not credited with the last run's calls. The kernel's progress lines go to
    this process's output as they come (:class:`ProgressRelay`)."""
    import jupytext
    import papermill as pm

    profiles.check(profile)
    for suffix in (".json", ".csv"):
        (provenance.ledger_dir() / f"{source.stem}{suffix}").unlink(missing_ok=True)
    env = run_environment(source)
    nb = jupytext.read(source)
    nb.metadata["kernelspec"] = {"name": kernel, "display_name": "Python 3", "language": "python"}
    out = paths.executed_dir() / f"{source.stem}.ipynb"
    with tempfile.TemporaryDirectory() as tmp:
        src_ipynb = Path(tmp) / f"{source.stem}.ipynb"
        jupytext.write(nb, src_ipynb)
        params = {"PROFILE": profile, **(parameters or {})}
        with settings_file.exported(env):  # the kernel is a child process: it inherits these
            pm.execute_notebook(
                str(src_ipynb), str(out), parameters=params, kernel_name=kernel,
                cwd=str(source.parent), progress_bar=False, log_output=False,
                stderr_file=ProgressRelay(source.stem),
                config=kernel_config(Path(tmp)),
            )
    _mark_done(source, profile)
    return out


#: the kernel's own log (its process's stderr, which is `make all`'s log; a cell's errors and
#: warnings reach the executed notebook, not this log): errors only at CRITICAL. At shutdown
#: jupyter_client always interrupts the kernel first, and a kernel that is still answering a
#: message then logs "ERROR | KeyboardInterrupt caught in kernel.", which means nothing.
KERNEL_LOG_LEVEL = "CRITICAL"


def kernel_config(tmp: Path):
    """The notebook kernel talks to papermill over Unix sockets in ``tmp`` (IPC transport), not
    over TCP on localhost: nothing listens on a port, and the kernel no longer warns, once per
    notebook, that its TCP traffic is unencrypted and "susceptible to eavesdropping". Its own log
    is quiet (:data:`KERNEL_LOG_LEVEL`)."""
    from traitlets.config import Config

    return Config({"KernelManager": {"transport": "ipc", "ip": str(tmp / "kernel")},
                   "NotebookClient": {"extra_arguments": [f"--IPKernelApp.log_level={KERNEL_LOG_LEVEL}"]}})


def param_value(text: str):
    """A command-line value as papermill's CLI reads it: bool/None, int, float, else text."""
    if text in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[text]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_params(items: list[list[str]]) -> dict[str, object]:
    """``-p NAME VALUE`` or ``-p NAME=VALUE`` tokens as a dict (:func:`param_value`)."""
    out: dict[str, object] = {}
    for tokens in items:
        if len(tokens) == 1 and "=" in tokens[0]:
            name, value = tokens[0].split("=", 1)
        elif len(tokens) == 2 and "=" not in tokens[0]:
            name, value = tokens
        else:
            raise SystemExit(f"-p {' '.join(tokens)}: expected -p NAME VALUE or -p NAME=VALUE")
        if not name.isidentifier():
            raise SystemExit(f"-p {' '.join(tokens)}: {name!r} is not a parameter name")
        out[name] = param_value(value)
    return out


def variant_root(numbers: list[str], params: dict[str, str], base: Path | None = None) -> Path:
    """The output root of a run with changed parameters: ``results/variants/<numbers>_<NAME=VALUE,...>``."""
    slug = ",".join(f"{k}={v}" for k, v in sorted(params.items()))
    slug = re.sub(r"[^A-Za-z0-9=.,_+-]+", "-", slug)[:100]
    return (base or paths.output_root()) / "results" / "variants" / f"{'-'.join(numbers)}_{slug}"


def seed_variant(root: Path, base: Path) -> None:
    """Give a variant root what its notebook reads: a copy of the base's interim files (the
    variant's own writes must not reach the base) and a link to the base's LLM cache (calls
    already made are not paid again; new ones are added under their own keys)."""
    interim = base / "results" / "interim"
    if interim.is_dir():
        shutil.copytree(interim, root / "results" / "interim", dirs_exist_ok=True)
    cache, link = base / "results" / "cache", root / "results" / "cache"
    if cache.is_dir() and not link.exists():
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(cache.resolve(), target_is_directory=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m judgelab.pipeline")
    sub = parser.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="execute notebooks by number")
    run.add_argument("numbers", nargs="+", help="notebook numbers, e.g. 01 07, or 'all'")
    run.add_argument("--profile", default="demo", choices=profiles.PROFILES)
    run.add_argument("-p", "--param", action="append", nargs="+", default=[], metavar="NAME VALUE",
                     help="a notebook parameter, -p NAME VALUE or -p NAME=VALUE (True/False/None, "
                          "numbers and text, as papermill reads them); "
                          "the run then writes to results/variants/<numbers>_<parameters>/")
    run.add_argument("--in-place", action="store_true",
                     help="with -p: write to the output root itself, over the main run's outputs")
    prog = sub.add_parser("progress", help="`make notebooks` marks its start and end (progress lines)")
    prog.add_argument("what", choices=("start", "end"))
    prog.add_argument("--owner", type=int, default=None,
                      help="the whole run's process (make's): its note is stale once that process is gone")
    prog.add_argument("--profile", default="demo", choices=profiles.PROFILES)
    sub.add_parser("list", help="list notebooks in order")
    sub.add_parser("makefile", help="print the notebook dependencies as make variables")
    deps = sub.add_parser("deps", help="print one notebook's upstream notebooks and library files")
    deps.add_argument("number")
    args = parser.parse_args(argv)
    if args.cmd == "list":
        for p in notebook_sources():
            print(p.name)
        return 0
    if args.cmd == "progress":
        if args.what == "start":
            progress_start(args.profile, args.owner)
        else:
            line = progress_end()
            if line:
                print(f"[judgelab] {line}", flush=True)
        return 0
    if args.cmd == "makefile":
        sys.stdout.write(makefile_text())
        return 0
    if args.cmd == "deps":
        src = find_notebook(args.number)
        print("upstream:", " ".join(sorted(upstream(src.name[:2]))) or "-")
        for p in lib_files(src):
            print(p.resolve().relative_to(paths.project_root()))
        return 0
    extra = parse_params(args.param)
    sources = notebook_sources() if args.numbers == ["all"] else [find_notebook(n) for n in args.numbers]
    if extra and not args.in_place:
        base = paths.output_root()
        root = variant_root([s.name[:2] for s in sources], extra, base)
        seed_variant(root, base)
        settings_file.export("JUDGELAB_OUTPUT_ROOT", str(root))
        print(f"[judgelab] parameters {extra}: writing to {root} (--in-place: over {base})", flush=True)
    for src in sources:
        print(f"[judgelab] running {src.name} (profile={args.profile})", flush=True)
        _note_running(src.name[:2], True)
        started = time.monotonic()
        try:
            out = run_notebook(src, args.profile, extra)
        finally:
            _note_running(src.name[:2], False)
        took = int(time.monotonic() - started)
        print(f"[judgelab] wrote {out} in {took // 60} min {took % 60:02d} s", flush=True)
        line = progress_line()
        if line:
            print(f"[judgelab] {line}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
