"""A tqdm progress bar that counts done / cached / failed.

Live when a person watches; in a notebook the pipeline executes (``provenance.ENV_NOTEBOOK``) each
redraw would be stored in the executed notebook, so there it writes one final line when it closes.
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


def final_only() -> bool:
    """True when only the bar's last state should be written (see the module docstring)."""
    _, mode = setting()
    if mode is not None:
        return mode == "final"
    return bool(variable(ENV_NOTEBOOK))


class BatchProgress:
    """Thread-safe counters shown as the bar's postfix."""

    def __init__(self, total: int, desc: str, enabled: bool = True, stream=None):
        self.done = self.cached = self.failed = 0
        self.total, self.desc = total, desc
        self._lock = threading.Lock()
        self._final = enabled and final_only()
        self._stream = stream
        self._start = time.monotonic()
        self._closed = False
        self._bar = tqdm(total=total, desc=desc, disable=not enabled or self._final, dynamic_ncols=True,
                         mininterval=0.5, file=stream)

    def update(self, cached: bool, failed: bool) -> None:
        with self._lock:
            self.done += 1
            self.cached += int(cached)
            self.failed += int(failed)
            self._bar.set_postfix(cached=self.cached, failed=self.failed, refresh=False)
            self._bar.update(1)

    def final_line(self) -> str:
        """The bar as tqdm would draw it now, on one line (no carriage returns)."""
        return tqdm.format_meter(self.done, self.total, time.monotonic() - self._start, prefix=self.desc,
                                 postfix=f"cached={self.cached}, failed={self.failed}", ncols=100)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._bar.close()
        if self._final:
            out = self._stream or sys.stderr
            out.write(self.final_line() + "\n")
            out.flush()

    def __enter__(self) -> "BatchProgress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
