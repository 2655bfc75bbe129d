"""docs/teaching.md: every exercise's command runs in the smoke profile and writes the file it says
to look at. The exercises are read from the page itself, so the page and the test cannot drift.

Each command ``make nb-NN PROFILE=smoke [ARGS="..."]`` runs as the Makefile's recipe does
(``python -m judgelab.pipeline run NN --profile smoke ARGS``), on a copy of the smoke run's output
root (the session's, ``$JUDGELAB_OUTPUT_ROOT``, as for the site's tests): a command with ``-p``
writes to its own variant root inside the copy. A command without ``-p`` is the smoke run's own
command for that notebook, so its outputs are read from the smoke run rather than made again. The
copy's response cache holds the smoke run's replies (replay mode), so an exercise never calls the model.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "teaching.md"
COMMAND = re.compile(r'^Run: `make nb-(\d\d) PROFILE=smoke(?: ARGS="([^"]*)")?`$', re.M)
LOOK = re.compile(r"^Look at: `(results/tables/[\w.]+\.csv)`", re.M)

pytestmark = [pytest.mark.notebooks, pytest.mark.after_notebooks]


def exercises() -> list[tuple[str, str, str, str]]:
    """(title, notebook, ARGS, file to look at) per exercise, in the page's order."""
    out = []
    for block in re.split(r"^### ", PAGE.read_text(encoding="utf-8"), flags=re.M)[1:]:
        title = block.splitlines()[0]
        run, look = COMMAND.search(block), LOOK.search(block)
        assert run and look, f"docs/teaching.md, exercise {title!r}: needs a 'Run:' and a 'Look at:' line"
        out.append((title, run.group(1), run.group(2) or "", look.group(1)))
    return out


def test_the_page_has_eight_to_twelve_exercises_each_on_a_notebook_that_exists():
    found = exercises()
    assert 8 <= len(found) <= 12
    sources = {p.name[:2] for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py")}
    assert {nb for _, nb, _, _ in found} <= sources


@pytest.fixture(scope="module")
def smoke_copy(tmp_path_factory):
    root = os.environ.get("JUDGELAB_OUTPUT_ROOT")
    if not root or not (Path(root) / "results" / "executed").is_dir():
        pytest.skip("no smoke run to start from: run with tests/test_notebooks.py (or set JUDGELAB_OUTPUT_ROOT "
                    "to the output root of a smoke run)")
    copy = tmp_path_factory.mktemp("teaching") / "root"
    shutil.copytree(root, copy, symlinks=True, ignore=shutil.ignore_patterns("variants", "screenshots", "site"))
    return copy


@pytest.mark.parametrize("title, notebook, args, look", exercises(), ids=[e[0] for e in exercises()])
def test_the_exercise_runs_in_smoke_and_writes_what_it_names(smoke_copy, title, notebook, args, look):
    from judgelab import pipeline

    argv = shlex.split(args)
    if not argv:
        # the command is exactly what the smoke run executed (the same notebook, the same profile,
        # no parameter): its outputs are that run's, so they are checked there instead of re-running it
        smoke = Path(os.environ["JUDGELAB_OUTPUT_ROOT"])
        assert (smoke / look).is_file(), f"{title}: the smoke run wrote no {look}"
        assert any((smoke / "results" / "executed").glob(f"{notebook}_*.ipynb")), f"{title}: no executed notebook"
        return
    params = pipeline.parse_params([argv[i + 1:i + 3] for i, a in enumerate(argv) if a == "-p"])
    # the copy's response cache holds the smoke run's replies (the committed replay file): an
    # exercise's LLM calls are answered from it, and one it lacks fails as a replay miss
    env = {**os.environ, "JUDGELAB_OUTPUT_ROOT": str(smoke_copy), "PYTHONPATH": str(ROOT / "lib"),
           "JUDGELAB_CACHE_MODE": "replay"}
    done = subprocess.run([sys.executable, "-m", "judgelab.pipeline", "run", notebook, "--profile", "smoke", *argv],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{title}: {done.stderr[-3000:]}"
    where = pipeline.variant_root([notebook], params, smoke_copy) if params else smoke_copy
    assert (where / look).is_file(), f"{title}: {look} not written under {where}"
    assert any((where / "results" / "executed").glob(f"{notebook}_*.ipynb")), f"{title}: no executed notebook"
