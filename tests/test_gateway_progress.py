"""The gateway's progress bar: live for a person; in a notebook run by the pipeline, marked log lines
(one at the end, one per ``LOG_EVERY_S`` at most while it works) that the pipeline relays to its log."""
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
    assert text.startswith(progress.LOG_MARK + "judging: 5 of 5 done (3 cached, 1 failed), 0 min 0")
    assert (bar.done, bar.cached, bar.failed) == (5, 3, 1)


def test_a_long_fan_out_logs_at_most_one_line_per_interval(monkeypatch):
    """Items done at 10, 70, 80, 100, 200 and 205 s with a 60 s interval: a line at 70 s and at 200 s
    (60 s after the last line, not after the last item), then the closing line; none per item."""
    monkeypatch.delenv(progress.ENV_PROGRESS, raising=False)
    monkeypatch.setenv(ENV_NOTEBOOK, "02_l4_cultural")
    now = [0.0]
    out = io.StringIO()
    with progress.BatchProgress(7, "SAGE L4", stream=out, every_s=60, clock=lambda: now[0]) as bar:
        for t in (10, 70, 80, 100, 200, 205):
            now[0] = t
            bar.update(cached=False, failed=False)
        now[0] = 250
        bar.update(cached=True, failed=False)
    assert out.getvalue().splitlines() == [
        "[progress] SAGE L4: 2 of 7 done (0 cached, 0 failed), 1 min 10 s",
        "[progress] SAGE L4: 5 of 7 done (0 cached, 0 failed), 3 min 20 s",
        "[progress] SAGE L4: 7 of 7 done (1 cached, 0 failed), 4 min 10 s",
    ]


def test_the_pipeline_relays_only_marked_lines_named_by_their_notebook():
    """papermill hands the relay the kernel's stderr in chunks that split lines anywhere; warnings and
    other stderr text stay out of the log."""
    from judgelab.pipeline import ProgressRelay

    out = io.StringIO()
    relay = ProgressRelay("02_l4_cultural", out)
    for chunk in ("UserWarning: something\n[prog", "ress] SAGE L4: 1 of 3 done (0 cached, 0 failed), 1 min 02 s\n",
                  "  warnings.warn(x)\nnot [progress] at the start\n[progress] SAGE L4: 3 of 3 ", "done"):
        relay.write(chunk)
    relay.write(" (0 cached, 0 failed), 2 min 00 s\n")
    assert out.getvalue().splitlines() == [
        "[judgelab] 02_l4_cultural: SAGE L4: 1 of 3 done (0 cached, 0 failed), 1 min 02 s",
        "[judgelab] 02_l4_cultural: SAGE L4: 3 of 3 done (0 cached, 0 failed), 2 min 00 s",
    ]


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
