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


@pytest.mark.parametrize("value, shown", [("1", True), ("0", False), ("yes", True), ("no", False), ("ON", True),
                                          ("off", False), ("true", True), ("false", False), ("", True)])
def test_the_documented_switch_is_read_alike_by_the_settings_and_the_bar(monkeypatch, tmp_path, value, shown):
    """``JUDGELAB_PROGRESS`` is documented as a 0/1 switch (and live/final): the gateway's settings
    and the bar both take it; 1 keeps the default drawing (final inside a pipeline notebook)."""
    from judgelab.gateway.settings import resolve

    monkeypatch.setenv(progress.ENV_PROGRESS, value)
    monkeypatch.setenv(ENV_NOTEBOOK, "02_l4_cultural")
    assert resolve(cache_path=tmp_path / "c.sqlite").progress is shown
    assert progress.final_only() is True  # never raises for a documented value
    out = io.StringIO()
    with progress.BatchProgress(2, "judging", enabled=shown, stream=out) as bar:
        bar.update(False, False)
    assert (out.getvalue().count("\n") == 1) is shown


def test_an_undocumented_progress_value_is_named_by_the_settings_too(monkeypatch, tmp_path):
    from judgelab.gateway.errors import ConfigError
    from judgelab.gateway.settings import resolve

    monkeypatch.setenv(progress.ENV_PROGRESS, "sometimes")
    with pytest.raises(ConfigError, match="JUDGELAB_PROGRESS='sometimes'"):
        resolve(cache_path=tmp_path / "c.sqlite")
