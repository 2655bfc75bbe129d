"""A tqdm progress bar that counts done / cached / failed."""
from __future__ import annotations

import threading

from tqdm import tqdm


class BatchProgress:
    """Thread-safe counters shown as the bar's postfix."""

    def __init__(self, total: int, desc: str, enabled: bool = True):
        self.done = self.cached = self.failed = 0
        self._lock = threading.Lock()
        self._bar = tqdm(total=total, desc=desc, disable=not enabled, dynamic_ncols=True, mininterval=0.5)

    def update(self, cached: bool, failed: bool) -> None:
        with self._lock:
            self.done += 1
            self.cached += int(cached)
            self.failed += int(failed)
            self._bar.set_postfix(cached=self.cached, failed=self.failed, refresh=False)
            self._bar.update(1)

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> "BatchProgress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
