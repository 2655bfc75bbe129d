"""A tqdm progress bar that counts done / cached / failed.

Live when a person watches; in a notebook the pipeline executes (``provenance.ENV_NOTEBOOK``) each
redraw would be stored in the executed notebook, so there it writes plain log lines instead: one
when it closes, and one whenever :data:`LOG_EVERY_S` seconds have passed since the last, each
starting with :data:`LOG_MARK`. The pipeline relays exactly those lines from the notebook's stderr
to its own output (:func:`judgelab.pipeline.run_notebook`), so `make all`'s log shows how far a long
notebook is.
``JUDGELAB_PROGRESS``: ``live`` or ``final``; ``0`` hides it, ``1`` shows it (:func:`setting`).
"""
from __future__ import annotations

import sys
import threading
import time

from tqdm import tqdm

# the gateway reads the environment in its settings module only; the bar's setting is read there too
from judgelab.gateway.settings import ENV_PROGRESS, variable
from judgelab.gateway.settings import progress_setting as setting  # noqa: F401 (the API)
from judgelab.provenance import ENV_NOTEBOOK

#: the start of a progress line in a pipeline notebook's stderr: the lines the pipeline relays
LOG_MARK = "[progress] "
#: at most one line per this many seconds of a fan-out: a demo SAGE evaluation takes ~50 s, so a
#: SAGE notebook logs about one line per evaluation or two, and a 10-minute notebook ~10 lines
LOG_EVERY_S = 60.0

def final_only() -> bool:
    """True when only the bar's last state should be written (see the module docstring)."""
    _, mode = setting()
    if mode is not None:
        return mode == "final"
    return bool(variable(ENV_NOTEBOOK))


class BatchProgress:
    """Thread-safe counters shown as the bar's postfix."""

    def __init__(self, total: int, desc: str, enabled: bool = True, stream=None, every_s: float = LOG_EVERY_S,
                 clock=time.monotonic):
        self.done = self.cached = self.failed = 0
        self.total, self.desc = total, desc
        self._lock = threading.Lock()
        self._final = enabled and final_only()
        self._stream = stream
        self._clock, self._every_s = clock, every_s
        self._start = self._last_line = clock()
        self._closed = False
        self._bar = tqdm(total=total, desc=desc, disable=not enabled or self._final, dynamic_ncols=True,
                         mininterval=0.5, file=stream)

    def update(self, cached: bool, failed: bool, count: int = 1) -> None:
        """``count`` items done alike (all cached, or all failed, or neither)."""
        with self._lock:
            self.done += count
            self.cached += count * int(cached)
            self.failed += count * int(failed)
            self._bar.set_postfix(cached=self.cached, failed=self.failed, refresh=False)
            self._bar.update(count)
            if self._final and self.done < self.total and self._clock() - self._last_line >= self._every_s:
                self._write(self.log_line())

    def log_line(self) -> str:
        """``SAGE L4: 5 of 13 done (0 cached, 0 failed), 4 min 10 s``, marked for the pipeline's relay."""
        took = int(self._clock() - self._start)
        return (f"{LOG_MARK}{self.desc}: {self.done} of {self.total} done ({self.cached} cached, "
                f"{self.failed} failed), {took // 60} min {took % 60:02d} s")

    def _write(self, line: str) -> None:
        out = self._stream or sys.stderr
        out.write(line + "\n")
        out.flush()
        self._last_line = self._clock()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._bar.close()
        if self._final:
            self._write(self.log_line())

    def __enter__(self) -> "BatchProgress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
