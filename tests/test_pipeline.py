"""The notebook pipeline's bookkeeping (one source of notebook dependencies), the profiles and the
provenance labels."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import time

import pytest

from judgelab import notebook_files, paths, pipeline, profiles, reporting

ROOT = paths.project_root()


def test_upstream_notebooks_come_from_what_each_reads_and_writes():
    """docs/design.md's table, derived from notebook_files.READS and WRITES (the one source)."""
    assert pipeline.DEPENDS == {
        "01": [], "02": ["01"], "03": ["01"], "04": ["01"], "05": ["02", "03", "04"],
        "06": ["01", "02", "03", "04"], "07": [], "08": ["07"], "09": ["08"], "10": ["07", "08", "09"],
        "11": [], "12": ["01", "02", "08", "09"], "13": ["05", "06", "07", "08", "09", "10", "14"],
        "14": ["02", "03", "04", "07"],
    }
    assert pipeline.writers_of("narr_documents_news") == ["07"] and pipeline.writers_of("sage_rows_L5") == ["03"]
    assert pipeline.writers_of("sage_summary_L*") == ["02", "03", "04"]


def test_a_read_that_no_notebook_writes_is_an_error(monkeypatch):
    monkeypatch.setitem(notebook_files.READS, "09", ["narr_paths", "narr_pathz"])
    with pytest.raises(ValueError, match="notebook 09 reads 'narr_pathz', which no notebook writes"):
        pipeline._depends()


def test_the_makefile_keeps_no_second_list():
    text = (ROOT / "Makefile").read_text()
    assert not re.search(r"^DEPS_\d\d", text, re.M), "the Makefile must take dependencies from judgelab.pipeline"
    assert "judgelab.pipeline makefile" in text and "NB_LIB_$(1)" in text and "NB_UP_$(1)" in text


def test_every_notebook_has_a_dependency_entry_and_a_parameters_cell():
    for src in pipeline.notebook_sources():
        assert src.name[:2] in pipeline.DEPENDS, f"{src.name}: add it to judgelab.notebook_files (WRITES, READS)"
        body = src.read_text()
        assert '# %% tags=["parameters"]' in body, f"{src.name}: no parameters cell"
        assert re.search(r'^PROFILE = "demo"$', body, re.M), f"{src.name}: PROFILE must default to demo"


def test_upstream_is_transitive():
    assert pipeline.upstream("10") == {"07", "08", "09"}
    assert pipeline.upstream("05") == {"01", "02", "03", "04"}


def test_stamps_of_other_profiles_go_stale(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    src = tmp_path / "07_x.py"
    pipeline._mark_done(src, "demo")
    pipeline._mark_done(tmp_path / "08_y.py", "demo")
    pipeline._mark_done(src, "smoke")
    stamps = sorted(p.name for p in (tmp_path / "results" / "executed" / ".stamps").iterdir())
    assert stamps == ["07.smoke"]


def test_unknown_profile_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown PROFILE 'full'; choose one of smoke, demo, paper"):
        profiles.check("full")


def test_small_model_is_labelled_in_captions():
    cap = reporting.caption_line("demo", "llamacpp", "SmolLM2-135M-Instruct-Q8_0.gguf")
    assert "EMBEDDED SmolLM2-135M" in cap and "not the papers' findings" in cap
    assert "EMBEDDED" not in reporting.caption_line("paper", "openai", "gpt-5-mini")
    assert "Warning" in reporting.model_banner("llamacpp", "smollm2-135m-instruct")


# ---------------------------------------------------------------- library files per notebook

def _rel(files) -> set[str]:
    return {str(p.resolve().relative_to(ROOT)) for p in files}


@pytest.fixture(scope="module")
def lib_by_notebook() -> dict[str, set[str]]:
    index = pipeline.library_index()
    return {src.name[:2]: _rel(pipeline.lib_files(src, index)) for src in pipeline.notebook_sources()}


def test_notebook_10_uses_the_analyses_and_02_does_not(lib_by_notebook):
    ten, two = lib_by_notebook["10"], lib_by_notebook["02"]
    analyses = {f for f in ten if f.startswith("lib/judgelab/narrative/analyses/") and not f.endswith("__init__.py")}
    assert analyses, "notebook 10 imports narrative.analyses modules"
    assert not any(f.startswith("lib/judgelab/narrative/") for f in two)
    assert "lib/judgelab/sage/protocol/prompts.py" in two and "prompts/sage/rubric.md" in two
    assert not any(f.startswith("prompts/narrative/") for f in two)
    assert "prompts/narrative/judge_cot.md" in lib_by_notebook["09"]
    assert "prompts/human/holistic.md" in lib_by_notebook["11"]
    assert "lib/judgelab/gateway/prices.csv" in ten         # named by gateway.ledger as its price table
    assert "lib/judgelab/paths.py" in two and "lib/judgelab/__init__.py" in two


def test_transitive_resolution_on_a_toy_package(tmp_path):
    pkg, prompts = tmp_path / "judgelab", tmp_path / "prompts"
    files = {
        "__init__.py": "",
        "a.py": "from judgelab import b\n",
        "b.py": "def f():\n    from judgelab.sub import c\n    return c\n",
        "sub/__init__.py": "",
        "sub/c.py": ("from judgelab import paths\nfrom pathlib import Path\n"
                     "TABLE = Path(__file__).with_name('table.csv')\n"
                     "def folder():\n    return paths.prompts_dir() / 'toy'\n"),
        "sub/table.csv": "x\n1\n",
        "sub/other.csv": "never named\n",
        "paths.py": "",
        "unused.py": "import judgelab.a\n",
        "typed.py": "",
        "main_only.py": "",
        "d.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from judgelab import typed\n"
                 "if __name__ == '__main__':\n    from judgelab import main_only\n"),
    }
    for name, body in files.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(body)
    for name in ("toy/one.md", "toy/deep/two.md", "other/three.md"):
        (prompts / name).parent.mkdir(parents=True, exist_ok=True)
        (prompts / name).write_text("x")
    nb = tmp_path / "05_toy.py"
    nb.write_text("# %%\nimport pandas as pd\nfrom judgelab.a import something\nimport judgelab.d\n")
    got = {str(p.relative_to(tmp_path)) for p in pipeline.lib_files(nb, pipeline.library_index(pkg, prompts))}
    assert got == {"judgelab/__init__.py", "judgelab/a.py", "judgelab/b.py", "judgelab/sub/__init__.py",
                   "judgelab/sub/c.py", "judgelab/sub/table.csv", "judgelab/paths.py", "judgelab/d.py",
                   "prompts/toy/one.md", "prompts/toy/deep/two.md"}


def test_generated_makefile_lists_every_notebook():
    text = pipeline.makefile_text()
    assert "NB_UP_10 := 07 08 09" in text and re.search(r"^NB_UP_01 :=\s*$", text, re.M)
    for src in pipeline.notebook_sources():
        assert re.search(rf"^NB_LIB_{src.name[:2]} := .*lib/judgelab/paths\.py", text, re.M)
    assert re.search(r"^lib/judgelab/paths\.py:$", text, re.M)   # a deleted file re-plans, never stops make


def _planned(tmp_path, what_if: str | None) -> list[str]:
    """Notebooks that `make -n notebook-stamps` would run (what `make notebooks` runs in a sub-make,
    which make's -W does not reach), in number order, with every stamp up to date, after
    ``what_if`` changed (-W: "pretend this file was just modified")."""
    stamps = tmp_path / "results" / "executed" / ".stamps"
    stamps.mkdir(parents=True, exist_ok=True)
    future = time.time() + 24 * 3600                     # newer than every source, whatever its mtime
    for src in pipeline.notebook_sources():
        (stamps / f"{src.name[:2]}.smoke").touch()
        os.utime(stamps / f"{src.name[:2]}.smoke", (future, future))
    cmd = ["make", "-n", "notebook-stamps", "PROFILE=smoke", f"JUDGELAB_OUTPUT_ROOT={tmp_path}"]
    if what_if:
        cmd += ["-W", what_if]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return sorted(re.findall(r"judgelab\.pipeline run (\d\d) ", out.stdout))


@pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")
def test_make_reruns_only_the_notebooks_that_use_a_changed_module(tmp_path, lib_by_notebook):
    only_ten = sorted(f for f in lib_by_notebook["10"] if f.endswith(".py")
                      and all(f not in files for nb, files in lib_by_notebook.items() if nb != "10"))
    assert only_ten, "some module is used by notebook 10 alone"
    # a changed module re-runs the notebooks that use it and those downstream of them (13 reads 10's tables)
    def downstream(nbs):
        return sorted(set(nbs) | {nb for nb in pipeline.DEPENDS if pipeline.upstream(nb) & set(nbs)})

    assert _planned(tmp_path, only_ten[0]) == downstream(["10"]) == ["10", "13"]
    assert _planned(tmp_path, None) == []
    sage_stats = "lib/judgelab/sage/analysis/reliability.py"
    assert _planned(tmp_path, sage_stats) == downstream([nb for nb, f in lib_by_notebook.items() if sage_stats in f])
    assert _planned(tmp_path, "lib/judgelab/paths.py") == sorted(lib_by_notebook)   # the floor: all of them
    assert (tmp_path / "results" / ".notebook-deps.mk").exists()


def _make_plan(tmp_path, *args: str, env: dict | None = None) -> str:
    """`make -n` output (commands printed, none run) for an empty output root."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUDGELAB_")} | (env or {})
    out = subprocess.run(["make", "-n", *args, "PROFILE=smoke", f"JUDGELAB_OUTPUT_ROOT={tmp_path}"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")
def test_make_runs_two_notebooks_at_a_time_with_half_the_cores_each(tmp_path):
    plan = _make_plan(tmp_path, "notebooks", "NPROC=2")
    assert "-j2 notebook-stamps" in plan
    runs = [ln for ln in plan.splitlines() if "judgelab.pipeline run" in ln]
    order = [re.search(r"run (\d\d) ", ln).group(1) for ln in runs]
    # every notebook once; make starts them in the Makefile's order, upstream notebooks first
    assert sorted(order) == [src.name[:2] for src in pipeline.notebook_sources()]
    assert order[:3] == ["01", "11", "02"]
    for nb, ups in pipeline.DEPENDS.items():
        assert all(order.index(u) < order.index(nb) for u in ups), nb
    for ln in runs:  # one thread each for llama.cpp, torch/OpenMP, BLAS and numba, unless set already
        for var in ("JUDGELAB_LLAMA_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                    "NUMBA_NUM_THREADS"):
            assert f"{var}=${{{var}:-1}}" in ln
    eight = _make_plan(tmp_path, "notebooks", "NPROC=8")
    assert "-j2 notebook-stamps" in eight and "JUDGELAB_LLAMA_THREADS=${JUDGELAB_LLAMA_THREADS:-4}" in eight
    # one notebook alone (make nb-NN) keeps every core
    alone = _make_plan(tmp_path, "nb-07", "NPROC=2")
    assert "run 07 " in alone and "JUDGELAB_LLAMA_THREADS=${JUDGELAB_LLAMA_THREADS:-2}" in alone


@pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")
def test_in_two_slots_02_takes_the_slot_01_frees(tmp_path):
    """Run the real make -j2 over stand-in notebooks (each logs its start, sleeps, writes its stamp):
    01 is short and 11 long, so the slot 01 frees is the first to go; it must go to 02 (the head
    of the critical path 01 -> 02 -> 04), not to 07, which reads no notebook and would otherwise be
    queued first."""
    log = tmp_path / "started.log"
    fake = tmp_path / "fake_python"
    fake.write_text(f"""#!/bin/bash
# called as: <python> -m judgelab.pipeline run NN --profile P
echo "$4" >> {log}
case "$4" in 01) sleep 1 ;; 11) sleep 3 ;; *) sleep 0.2 ;; esac
mkdir -p "$JUDGELAB_OUTPUT_ROOT/results/executed/.stamps" && touch "$JUDGELAB_OUTPUT_ROOT/results/executed/.stamps/$4.$6"
""")
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUDGELAB_")} | {"JUDGELAB_OUTPUT_ROOT": str(tmp_path)}
    out = subprocess.run(["make", "-j2", "--no-print-directory", "notebook-stamps", "PROFILE=smoke", f"PY={fake}",
                          f"JUDGELAB_OUTPUT_ROOT={tmp_path}"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    started = log.read_text().split()
    assert sorted(started) == [src.name[:2] for src in pipeline.notebook_sources()]
    assert started[:2] in (["01", "11"], ["11", "01"])
    assert started.index("02") < started.index("07"), started


@pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")
@pytest.mark.parametrize("env", [{"JUDGELAB_BACKEND": "openai"}, {"JUDGELAB_BASE_URL": "http://127.0.0.1:8080/v1"},
                                 {"NB_JOBS": "1"}])
def test_an_api_backend_or_nb_jobs_1_runs_one_notebook_at_a_time_with_every_core(tmp_path, env):
    plan = _make_plan(tmp_path, "notebooks", "NPROC=2", env=env)
    assert "-j1 notebook-stamps" in plan and "JUDGELAB_LLAMA_THREADS=${JUDGELAB_LLAMA_THREADS:-2}" in plan


def test_the_notebook_kernel_logs_nothing_below_critical_to_make_s_log(tmp_path, monkeypatch):
    """At shutdown jupyter_client interrupts the kernel, and a kernel caught answering a message
    logs "ERROR | KeyboardInterrupt caught in kernel." to its stderr, which is `make all`'s log.
    The kernel runs at log level CRITICAL: read back from inside a real kernel."""
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path / "root"))
    seen = tmp_path / "level.txt"
    source = tmp_path / "98_probe.py"
    source.write_text(f"""# %% tags=["parameters"]
PROFILE = "smoke"

# %%
from ipykernel.kernelapp import IPKernelApp
open({str(seen)!r}, "w").write(str(IPKernelApp.instance().log_level))
""")
    pipeline.run_notebook(source, "smoke")
    assert int(seen.read_text()) == 50  # logging.CRITICAL; the kernel's default is 30 (WARNING)


def test_a_killed_runs_progress_note_is_not_read_as_a_running_one(tmp_path, monkeypatch):
    """`make notebooks` killed before its end leaves its note and a notebook's marker behind; a later
    notebook run alone must not print "make all ...: running 02" from them. The note names make's
    process (the Makefile passes $PPID): gone, the note is stale and removed; a marker names its
    runner's process, likewise."""
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    gone = subprocess.Popen(["true"])
    gone.wait()  # a process id that no longer exists (as a killed make's)
    pipeline.progress_start("smoke", owner=gone.pid)
    assert pipeline.progress_line() is None
    assert not pipeline._progress_path().exists()

    pipeline.progress_start("smoke", owner=os.getpid())  # a live run: its line, with what runs
    pipeline._note_running("02", True)
    (pipeline._running_dir() / "03").write_text(str(gone.pid))  # a runner killed mid-notebook
    line = pipeline.progress_line()
    assert line.startswith("make all (smoke): 0 of ") and line.endswith("running: 02")
    pipeline._note_running("02", False)
    assert "running" not in pipeline.progress_line()
    assert pipeline.progress_end().startswith("make all (smoke)")


def test_the_makefile_names_its_process_as_the_runs_owner():
    assert re.search(r"pipeline progress start --profile \$\(PROFILE\) --owner \$\$PPID", (ROOT / "Makefile").read_text())
