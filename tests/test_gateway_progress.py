"""The gateway's progress bar: live for a person, one final line in a notebook run by the pipeline."""
from __future__ import annotations

import io

import pytest

from judgelab.gateway import progress
from judgelab.provenance import ENV_NOTEBOOK


def _run(n: int, stream) -> progress.BatchProgress:
    with progress.BatchProgress(n, "judging", stream=stream) as bar:
        for i in range(n):
            bar.update(cached=i % 2 == 0, failed=i == n - 1)
    return bar


def test_pipeline_run_writes_one_final_line(monkeypatch):
    monkeypatch.delenv(progress.ENV_PROGRESS, raising=False)
    monkeypatch.setenv(ENV_NOTEBOOK, "02_l4_cultural")
    out = io.StringIO()
    bar = _run(5, out)
    text = out.getvalue()
    assert "\r" not in text and text.count("\n") == 1
    assert text.startswith("judging: 100%") and "5/5" in text and "cached=3, failed=1" in text
    assert (bar.done, bar.cached, bar.failed) == (5, 3, 1)


def test_live_bar_redraws_for_a_person(monkeypatch):
    monkeypatch.delenv(ENV_NOTEBOOK, raising=False)
    monkeypatch.delenv(progress.ENV_PROGRESS, raising=False)
    out = io.StringIO()
    _run(3, out)
    assert "\r" in out.getvalue() and "3/3" in out.getvalue()


def test_explicit_setting_wins_and_bad_values_are_named(monkeypatch):
    monkeypatch.setenv(ENV_NOTEBOOK, "09_judge_modes")
    monkeypatch.setenv(progress.ENV_PROGRESS, "live")
    assert progress.final_only() is False
    monkeypatch.setenv(progress.ENV_PROGRESS, "sometimes")
    with pytest.raises(ValueError, match="JUDGELAB_PROGRESS='sometimes'"):
        progress.final_only()


def test_disabled_bar_writes_nothing(monkeypatch):
    monkeypatch.setenv(ENV_NOTEBOOK, "02_l4_cultural")
    out = io.StringIO()
    with progress.BatchProgress(2, "quiet", enabled=False, stream=out) as bar:
        bar.update(False, False)
    assert out.getvalue() == ""
