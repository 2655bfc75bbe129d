"""`make lab`: JupyterLab starts for every user and opens notebooks/NN_*.py as notebooks.

The project ships JupyterLab's settings override (``jupyter/lab/settings/overrides.json``: the
document manager's default viewer for Python files is jupytext's notebook, and no news pop-up)
and ``make setup`` installs it where JupyterLab in the venv reads it. Here the Makefile's own
recipe (``make lab``, setup taken as done, ``LAB_ARGS`` for a free port, no browser, a token and
that settings folder) starts a real JupyterLab with empty user settings: as root too, which
Jupyter refuses without ``--allow-root``. The server must answer, open a notebook source as a
notebook over HTTP and serve the news setting off; headless Chromium (the system's, as in
tests/test_site_browser.py) double-clicks a notebook source in the file browser, and the test
finds the notebook's cells.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OVERRIDES = ROOT / "jupyter" / "lab" / "settings" / "overrides.json"
NOTEBOOK = "05_reliability.py"
CHROMIUM = os.environ.get("JUDGELAB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def test_the_override_makes_jupytext_the_default_viewer_of_python_files():
    settings = json.loads(OVERRIDES.read_text(encoding="utf-8"))
    assert settings["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]["python"] == "Jupytext Notebook"


def test_make_setup_installs_it_where_jupyterlab_in_the_venv_reads_it():
    from jupyterlab.commands import get_app_dir

    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    target = re.search(r"^LAB_OVERRIDES\s*:=\s*\$\(VENV\)/(\S+)$", make, re.M).group(1)
    assert (Path(sys.prefix) / target).resolve() == (Path(get_app_dir()) / "settings" / "overrides.json").resolve()
    assert re.search(r"^setup: .*\$\(LAB_OVERRIDES\)", make, re.M)
    assert re.search(r"^\$\(LAB_OVERRIDES\): jupyter/lab/settings/overrides.json", make, re.M)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(url: str, proc: subprocess.Popen, timeout: float = 180) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"jupyter lab did not answer {url} within {timeout:.0f} s")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab started by `make lab` (its setup prerequisite taken as done: -o setup; VENV: the
    environment running the tests), with empty user settings and the project's overrides."""
    tmp_path = tmp_path_factory.mktemp("lab")
    port, token = _free_port(), "judgelab-test-token"
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"),
           "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "user-settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"), "PYTHONPATH": str(ROOT / "lib")}
    lab_args = (f"--no-browser --port={port} --ip=127.0.0.1 --ServerApp.token={token} "
                f"--LabApp.app_settings_dir={OVERRIDES.parent}")
    cmd = ["make", "--no-print-directory", "-o", "setup", "lab", f"VENV={sys.prefix}", f"LAB_ARGS={lab_args}"]
    log = open(tmp_path / "lab.log", "w")
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        try:
            _wait_for(f"http://127.0.0.1:{port}/api/status?token={token}", proc)
        except (RuntimeError, TimeoutError) as exc:
            raise AssertionError(f"make lab: {exc}\n{(tmp_path / 'lab.log').read_text()[-2000:]}") from None
        yield f"http://127.0.0.1:{port}", token
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # make and the jupyter it started (its own session)
        try:  # the server waits for the kernel the browser opened; nothing of it is tested after this
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        log.close()


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=60) as r:
        return json.loads(r.read())


def test_make_lab_starts_opens_a_notebook_source_as_a_notebook_and_fetches_no_news(lab):
    base, token = lab
    doc = _get(f"{base}/api/contents/notebooks/{NOTEBOOK}?type=notebook&content=1&token={token}")
    assert doc["type"] == "notebook"
    sources = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in doc["content"]["cells"]]
    assert len(sources) >= 5 and any("CONVERGENCE_THRESHOLD = None" in s for s in sources)
    news = _get(f"{base}/lab/api/settings/@jupyterlab/apputils-extension:notification?token={token}")
    # an override replaces the schema's default (no user setting here): "false" is JupyterLab's "Never"
    assert news["schema"]["properties"]["fetchNews"]["default"] == "false", sorted(news)


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (`make setup` as root installs "
                                              "Debian's chromium)")
def test_a_double_click_opens_a_notebook_source_as_a_notebook(lab):
    from playwright import sync_api

    base, token = lab
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(120_000)
            page.goto(f"{base}/lab/tree/notebooks?token={token}", wait_until="domcontentloaded")
            item = page.locator(".jp-DirListing-item", has_text=NOTEBOOK).first
            item.wait_for()
            item.dblclick()
            page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell")
            page.wait_for_function("document.querySelectorAll('.jp-NotebookPanel .jp-Notebook .jp-Cell').length >= 5")
            n_cells = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").count()
            text = page.locator(".jp-NotebookPanel .jp-Notebook").first.inner_text()
            assert n_cells >= 5, f"{NOTEBOOK} opened with {n_cells} cells"
            assert "CONVERGENCE_THRESHOLD = None" in text and "# %%" not in text  # code cells, not the percent source
            assert page.locator(".jp-FileEditor").count() == 0
            from judgelab import paths

            shots = paths.output_root() / "results" / "screenshots"
            shots.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(shots / "lab_notebook.png"))
        finally:
            browser.close()
