"""docs/teaching.md: every exercise says where its changed run writes, asks a question, and runs;
its "Look at" file comes out different from the main run's. The exercises are read from the page
itself, so the page and the test cannot drift.

Each command ``make nb-NN ARGS="-p ..."`` (the demo's, on the page) runs here as the Makefile's
recipe does, in the smoke profile (``python -m judgelab.pipeline run NN --profile smoke ARGS``, its
``main`` called in this process), on a copy of the smoke run's output root (the session's,
``$JUDGELAB_OUTPUT_ROOT``): it writes to its own variant root inside the copy, and the file it
names is compared with the same file of the main run. The copy's response cache holds the smoke run's replies (replay mode), so an exercise never
calls the model.

The smoke run judges one canonical story, which leaves the SAGE statistics (notebooks 05 and 06)
no genres to compare and almost no rounds to converge. For those exercises the copy's SAGE
evaluations are synthetic rows with known effects (``tests/sage_synthetic.py``: 8 / 6 / 4 stories
per category, some dimensions not converged, validator noise), written where notebooks 02-04 write
theirs; the main run of 05 and 06 is made again on them, in the copy, before the variants.

The copy is made once per test session, whichever worker asks first (a file lock; the other waits
and uses it): each exercise is its own xdist group (tests/conftest.py) so that both workers take
them, and a copy per worker or per group would run notebooks 05 and 06 again each time.
"""
from __future__ import annotations

import contextlib
import fcntl
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import traceback
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "teaching.md"
COMMAND = re.compile(r'^Run: `make nb-(\d\d) ARGS="([^"]+)"`$', re.M)
LOOK = re.compile(r"^Look at: `(results/variants/[^`]+/results/tables/([\w.]+\.csv))`\s+beside `results/tables/([\w.]+\.csv)`",
                  re.M)
ASK = re.compile(r"^Ask: .+?\?", re.M | re.S)
#: the SAGE statistics notebooks, whose exercises run on synthetic evaluations
SAGE_STATS = ("05", "06")


def exercises() -> list[tuple[str, str, str, str, str]]:
    """(title, notebook, ARGS, the variant's file, the main run's file) per exercise, in the page's order."""
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("\n## Exercises\n", 1)[1].split("\n## ", 1)[0]
    out = []
    for block in re.split(r"^### ", section, flags=re.M)[1:]:
        title = block.splitlines()[0]
        run, look = COMMAND.search(block), LOOK.search(block)
        assert run and look, f"docs/teaching.md, exercise {title!r}: needs a 'Run:' line with ARGS and a " \
                             "'Look at: `<variant file>` beside `<main file>`' line"
        assert look.group(2) == look.group(3), f"{title}: compares {look.group(2)} with {look.group(3)}"
        assert ASK.search(block), f"docs/teaching.md, exercise {title!r}: needs an 'Ask: ...?' question"
        out.append((title, run.group(1), run.group(2), look.group(1), f"results/tables/{look.group(3)}"))
    return out


def _params(args: str) -> dict[str, str]:
    from judgelab import pipeline

    argv = shlex.split(args)
    return pipeline.parse_params([argv[i + 1:i + 3] for i, a in enumerate(argv) if a == "-p"])


def test_every_exercise_names_the_folder_its_command_writes_and_a_notebook_that_exists():
    """The page's "Look at" path is the variant root the command prints (judgelab.pipeline.variant_root),
    relative to the project root, so a reader finds the file where the run says it went."""
    from judgelab import pipeline

    found = exercises()
    assert 8 <= len(found) <= 12
    sources = {p.name[:2] for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py")}
    assert {nb for _, nb, *_ in found} <= sources
    for title, nb, args, look, main in found:
        params = _params(args)
        assert params, f"{title}: no -p NAME VALUE in ARGS"
        expected = pipeline.variant_root([nb], params, Path(".")) / main
        assert Path(look) == expected, f"{title}: the command writes {expected}, the page says {look}"


def _run(root: Path, notebook: str, argv: list[str]) -> subprocess.CompletedProcess:
    """The Makefile's recipe, ``python -m judgelab.pipeline run NN --profile smoke ARGS``, through
    the same ``pipeline.main`` in this process (its notebook's kernel is a child process, as under
    make): a new interpreter per exercise only imported papermill and judgelab again, about 2 s of
    CPU each. Its environment is restored afterwards (a variant run exports its output root)."""
    from judgelab import pipeline

    command = ["run", notebook, "--profile", "smoke", *argv]
    out, err, code = io.StringIO(), "", 0
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out):
        for name, value in {"JUDGELAB_OUTPUT_ROOT": str(root), "PYTHONPATH": str(ROOT / "lib"),
                            "JUDGELAB_CACHE_MODE": "replay"}.items():
            mp.setenv(name, value)
        mp.chdir(ROOT)
        try:
            code = pipeline.main(command)
        except (Exception, SystemExit) as exc:  # a failed run is reported, as its exit code and log were
            code, err = 1, "".join(traceback.format_exception(exc))
    return subprocess.CompletedProcess(command, code, out.getvalue(), err)


def _synthetic_evaluations(root: Path) -> None:
    """SAGE evaluations with genres and unconverged rounds in place of the smoke run's."""
    sys.path.insert(0, str(Path(__file__).parent))
    from sage_synthetic import SyntheticEffects, synthetic_rows, synthetic_summary

    from judgelab import interim

    rows = synthetic_rows({"canonical": 8, "pulp": 6, "llm": 4}, effects=SyntheticEffects(nonconverged_share=0.1),
                          seed=47)
    rows = rows.assign(evidence_strength=rows["evidence_strength"].where(rows["status"] == "ok", ""))
    summary = synthetic_summary(rows)
    directory = root / "results" / "interim"
    for old in directory.glob("sage_anonymous_*"):
        old.unlink()
    for layer in ("L4", "L5", "L6"):
        interim.write(rows[rows["layer"] == layer].reset_index(drop=True), f"sage_rows_{layer}", directory)
        interim.write(summary[summary["layer"] == layer].reset_index(drop=True), f"sage_summary_{layer}", directory)


#: beside the copy: one line per time it was made (the exercises check there is one); in it: why it failed
BUILDS, FAILED = ".teaching-builds", ".teaching-failed"


def _make_copy(root: Path, copy: Path) -> None:
    with open(copy.parent / BUILDS, "a") as fh:  # beside the copy, in the folder every worker shares
        fh.write(f"{os.getpid()}\n")
    shutil.copytree(root, copy, symlinks=True, ignore=shutil.ignore_patterns("variants", "screenshots", "site"))
    if any(nb in SAGE_STATS for _, nb, *_ in exercises()):
        _synthetic_evaluations(copy)
        for nb in SAGE_STATS:
            done = _run(copy, nb, [])
            if done.returncode != 0:
                (copy / FAILED).write_text(f"notebook {nb} on synthetic evaluations: {done.stderr[-3000:]}")
                return


@pytest.fixture(scope="session")
def smoke_copy(tmp_path_factory):
    """A copy of the smoke run's output root, its SAGE statistics remade on synthetic evaluations:
    made once per session in the workers' shared temporary folder (as conftest's ``smoke_root``)."""
    from conftest import WORKER

    root = os.environ.get("JUDGELAB_OUTPUT_ROOT")
    if not root or not (Path(root) / "results" / "executed").is_dir():
        pytest.skip("no smoke run to start from: run with tests/test_notebooks.py (or set JUDGELAB_OUTPUT_ROOT "
                    "to the output root of a smoke run)")
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if WORKER else base) / "teaching"
    shared.mkdir(exist_ok=True)
    copy = shared / "root"
    with open(shared / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (shared / BUILDS).exists():
            shutil.rmtree(copy, ignore_errors=True)
            _make_copy(Path(root), copy)
    if (copy / FAILED).exists():
        pytest.fail((copy / FAILED).read_text())
    return copy


@pytest.mark.parametrize("title, notebook, args, look, main", exercises(), ids=[e[0] for e in exercises()])
# run on the smoke run's outputs, so after it (tests/conftest.py); the page's own check above reads
# the page alone and runs among the unit tests (marked late, it waited for every notebook)
@pytest.mark.notebooks
@pytest.mark.after_notebooks
def test_the_exercise_runs_and_changes_what_it_names(smoke_copy, title, notebook, args, look, main):
    builds = (smoke_copy.parent / BUILDS).read_text().split()
    assert len(builds) == 1, f"the exercises' copy of the smoke run was made {len(builds)} times (processes {builds})"
    done = _run(smoke_copy, notebook, shlex.split(args))
    assert done.returncode == 0, f"{title}: {done.stderr[-3000:]}"
    if notebook == "09":  # its judges' fan-out: the kernel's progress line reaches the command's output
        assert "[judgelab] 09_judge_modes: narrative judges: " in done.stdout, \
            f"{title}: no progress line of the judges relayed to the log:\n{done.stdout[-2000:]}"
    variant = smoke_copy / look
    assert str(variant.parent.parent.parent) in done.stdout, f"{title}: the command did not print {variant.parent.parent.parent}"
    assert variant.is_file(), f"{title}: {look} not written"
    assert any((variant.parent.parent / "executed").glob(f"{notebook}_*.ipynb")), f"{title}: no executed notebook"
    ours, theirs = pd.read_csv(variant), pd.read_csv(smoke_copy / main)
    assert not ours.equals(theirs), f"{title}: {look} is the main run's {main}: the exercise changes nothing there"
