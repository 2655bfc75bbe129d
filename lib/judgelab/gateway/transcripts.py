"""Transcripts: one JSON line per fresh conversation, for audit.

Each line holds the request's tags and key, every message sent (repair turns included), every
raw reply, the parsed object or the error, usage and timing. Written under
``paths.cache_dir()/transcripts/``. Any occurrence of the configured key is replaced before a
line is written (:func:`judgelab.gateway.redact.redact`).
"""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from judgelab.gateway.redact import MIN_SECRET_LEN, redact


class TranscriptLog:
    """Append-only JSONL file, opened on the first write (thread-safe)."""

    def __init__(self, folder: str | Path, label: str, secrets: list[str] | None = None):
        stamp = time.strftime("%Y%m%d-%H%M%S")
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in label)
        self.path = Path(folder) / f"{stamp}_{safe}_{os.getpid()}.jsonl"
        self._secrets = tuple(s for s in (secrets or []) if s and len(s) >= MIN_SECRET_LEN)
        self._lock = threading.Lock()
        self._fh = None

    def write(self, record: dict[str, Any]) -> None:
        # redacted as text, after json.dumps, so that objects turned into strings are covered too
        line = redact(json.dumps(record, ensure_ascii=False, default=str), self._secrets)
        with self._lock:
            if self._fh is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fh = open(self.path, "a", encoding="utf-8")
            self._fh.write(line + "\n")
            self._fh.flush()

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                self._fh.close()
                self._fh = None
