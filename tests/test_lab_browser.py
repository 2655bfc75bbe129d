"""`make lab`: JupyterLab opens notebooks/NN_*.py as notebooks, not in the text editor.

The project ships JupyterLab's settings override (``jupyter/lab/settings/overrides.json``: the
document manager's default viewer for Python files is jupytext's notebook) and ``make setup``
installs it where JupyterLab in the venv reads it. Here a real JupyterLab starts on a free port
with that settings folder and empty user settings, headless Chromium (the system's, as in
tests/test_site_browser.py) double-clicks a notebook source in the file browser, and the test
finds the notebook's cells.
"""
from __future__ import annotations

import json
import os
import re
import shutil
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


@pytest.fixture
def lab(tmp_path):
    port, token = _free_port(), "judgelab-test-token"
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"),
           "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "user-settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"), "PYTHONPATH": str(ROOT / "lib")}
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", f"--port={port}", "--ip=127.0.0.1",
           f"--ServerApp.token={token}", f"--ServerApp.root_dir={ROOT}",
           f"--LabApp.app_settings_dir={OVERRIDES.parent}"]
    log = open(tmp_path / "lab.log", "w")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_for(f"http://127.0.0.1:{port}/api/status?token={token}", proc)
        yield f"http://127.0.0.1:{port}", token
    finally:
        proc.terminate()
        try:  # the server waits for the kernel the browser opened; nothing of it is tested after this
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
        log.close()


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
            assert "CONVERGENCE_THRESHOLD = 0.3" in text and "# %%" not in text  # code cells, not the percent source
            assert page.locator(".jp-FileEditor").count() == 0
            from judgelab import paths

            shots = paths.output_root() / "results" / "screenshots"
            shots.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(shots / "lab_notebook.png"))
        finally:
            browser.close()
