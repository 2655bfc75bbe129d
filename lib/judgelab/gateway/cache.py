"""The response cache: SQLite in WAL mode, keyed by a sha256 of the canonical request.

The reproducibility artifact: a reviewer handed this file (or its JSONL export) replays every
answer with no key and no model. The key covers all that can change an answer (backend identity,
model, base URL, messages, sampling, seed, replicate, schema, template version), not the tags.
Only successes are answers; a fresh call's failure is kept apart (``failures``) for replay alone,
so a run whose tables hold a failed row replays to the same tables. Each thread has its own
connection and each write is one transaction: a killed run leaves no half-written row. Batch
mode's record of its batches (:class:`BatchJobs`) lives in the same file.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import sqlite3
import threading
import time
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

from judgelab.gateway.schema import schema_json
from judgelab.gateway.types import ChatRequest

CACHE_MODES = ("normal", "replay", "refresh")
_SCHEMA_VERSION = 1

_DDL = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    request_json TEXT NOT NULL,
    text TEXT,
    parsed_json TEXT,
    usage_json TEXT NOT NULL,
    latency_s REAL NOT NULL,
    reported_model TEXT,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    n_repairs INTEGER NOT NULL DEFAULT 0,
    truncated INTEGER NOT NULL DEFAULT 0,
    truncation_note TEXT,
    tags_json TEXT,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS batches (
    batch_id TEXT PRIMARY KEY,
    keys_json TEXT NOT NULL,
    created_at REAL NOT NULL,
    collected_at REAL
);
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT);
CREATE TABLE IF NOT EXISTS failures (
    key TEXT PRIMARY KEY,
    result_json TEXT NOT NULL,
    created_at REAL NOT NULL
);
"""
#: the JSONL export's marker of a recorded failure (a line ``{"recorded_failure": {...}}``)
FAILURE_LINE = "recorded_failure"

_COLUMNS = (
    "key", "request_json", "text", "parsed_json", "usage_json", "latency_s", "reported_model",
    "backend", "model", "n_repairs", "truncated", "truncation_note", "tags_json", "created_at",
)

_LOOKUP_COLUMNS = tuple(c for c in _COLUMNS if c not in ("request_json", "tags_json"))
_INTO_RESPONSES = f"INTO responses ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})"


def canonical_request(identity: dict[str, Any], request: ChatRequest) -> dict[str, Any]:
    """The dict whose canonical JSON is hashed into the cache key (``identity``: the backend's,
    e.g. model, base URL, GGUF size; no tags)."""
    return {
        "identity": identity,
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        "sampling": request.sampling.model_dump(),
        "replicate": request.replicate,
        # the sha256 of the schema's canonical JSON stands for the schema text (same identity,
        # and hashing a short digest instead of the escaped schema keeps cache hits fast)
        "schema_sha256": schema_sha256(request.schema),
        "schema_name": request.schema.__name__ if request.schema is not None else None,
        "template_version": request.template_version,
        "truncation": request.truncation,
    }


@lru_cache(maxsize=512)
def schema_sha256(model) -> str | None:
    """sha256 hex of the model's canonical JSON Schema (None for free text)."""
    text = schema_json(model)
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def _jsonable(value: Any) -> Any:
    """numpy scalars (tags taken from DataFrames) as Python numbers; anything else as text."""
    item = getattr(value, "item", None)
    return item() if callable(item) else str(value)


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no whitespace, so dict key order never changes a hash."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_jsonable)


def request_key(identity: dict[str, Any], request: ChatRequest) -> str:
    """sha256 hex digest of the canonical request."""
    return hashlib.sha256(canonical_json(canonical_request(identity, request)).encode("utf-8")).hexdigest()


class ResponseCache:
    """A thread-safe, process-safe SQLite response cache."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        conn = self._conn()
        with conn:
            conn.executescript(_DDL)
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(_SCHEMA_VERSION),))

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            # isolation_level=None: we open transactions explicitly with ``with conn``.
            conn = sqlite3.connect(self.path, timeout=60.0, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            # NORMAL is durable across process kills in WAL mode (only an OS crash can lose the tail).
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=60000")
            self._local.conn = conn
        return conn

    def get(self, key: str, with_request: bool = False) -> dict[str, Any] | None:
        """The stored row for ``key`` (JSON decoded; request and tags only when asked), or None."""
        cols = _COLUMNS if with_request else _LOOKUP_COLUMNS
        cur = self._conn().execute(f"SELECT {', '.join(cols)} FROM responses WHERE key = ?", (key,))
        row = cur.fetchone()
        return _decode(row, cols) if row else None

    def contains(self, key: str) -> bool:
        cur = self._conn().execute("SELECT 1 FROM responses WHERE key = ?", (key,))
        return cur.fetchone() is not None

    def put(self, entry: dict[str, Any]) -> None:
        """Insert or replace one successful response atomically."""
        row = _encode(entry)
        conn = self._conn()
        with conn:
            conn.execute(f"INSERT OR REPLACE {_INTO_RESPONSES}", [row[c] for c in _COLUMNS])

    def put_failure(self, key: str, result: dict[str, Any]) -> None:
        """Keep a fresh call's failure (the ChatResult's fields, redacted by the caller) for replay."""
        conn = self._conn()
        with conn:
            conn.execute("INSERT OR REPLACE INTO failures (key, result_json, created_at) VALUES (?, ?, ?)",
                         (key, canonical_json(result), time.time()))

    def get_failure(self, key: str) -> dict[str, Any] | None:
        """The recorded failure of ``key`` (None when there is none, or when an answer superseded it)."""
        if self.contains(key):
            return None
        row = self._conn().execute("SELECT result_json FROM failures WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def failures(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """(key, recorded failure) of every failure no answer has superseded, in key order."""
        cur = self._conn().execute("SELECT key, result_json FROM failures WHERE key NOT IN "
                                   "(SELECT key FROM responses) ORDER BY key")
        for key, raw in cur:
            yield key, json.loads(raw)

    def __len__(self) -> int:
        return self._conn().execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def rows(self) -> Iterator[dict[str, Any]]:
        cur = self._conn().execute(f"SELECT {', '.join(_COLUMNS)} FROM responses ORDER BY created_at, key")
        for row in cur:
            yield _decode(row)

    # -- JSONL export / import -------------------------------------------------------------
    def export_jsonl(self, path: str | Path, keys: set[str] | None = None) -> int:
        """Write every entry (or those of ``keys``) as one JSON line in key order, then the recorded
        failures; returns the number of answers. ``.gz``: gzip with no timestamp (same bytes)."""
        path = Path(path)
        lines = [canonical_json(entry) + "\n" for entry in sorted(self.rows(), key=lambda e: e["key"])
                 if keys is None or entry["key"] in keys]
        n_answers = len(lines)
        lines += [canonical_json({FAILURE_LINE: {"key": key, "result": result}}) + "\n"
                  for key, result in self.failures() if keys is None or key in keys]
        data = "".join(lines).encode("utf-8")
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_bytes(gzip.compress(data, mtime=0) if path.suffix == ".gz" else data)
        tmp.replace(path)
        return n_answers

    def import_jsonl(self, path: str | Path, overwrite: bool = False) -> int:
        """Load an :meth:`export_jsonl` file (``.gz`` too); returns the number inserted. A bad line
        raises naming its number."""
        n = 0
        conn = self._conn()
        verb = "INSERT OR REPLACE" if overwrite else "INSERT OR IGNORE"
        opener = gzip.open if Path(path).suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as fh, conn:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                    if FAILURE_LINE in entry:
                        failure = entry[FAILURE_LINE]
                        conn.execute(f"{verb} INTO failures (key, result_json, created_at) VALUES (?, ?, ?)",
                                     (failure["key"], canonical_json(failure["result"]), time.time()))
                        continue
                    row = _encode(entry)
                    values = [row[c] for c in _COLUMNS]
                except (ValueError, KeyError) as exc:
                    raise ValueError(f"{path}: line {lineno} is not a cache entry ({exc})") from exc
                n += conn.execute(f"{verb} {_INTO_RESPONSES}", values).rowcount
        return n

    # -- Batch API bookkeeping ---------------------------------------------------------------
    def add_batch(self, batch_id: str, keys: list[str]) -> None:
        conn = self._conn()
        with conn:
            conn.execute(
                "INSERT OR REPLACE INTO batches VALUES (?, ?, ?, NULL)", (batch_id, json.dumps(keys), time.time())
            )

    def batch_keys(self, batch_id: str) -> list[str] | None:
        row = self._conn().execute("SELECT keys_json FROM batches WHERE batch_id = ?", (batch_id,)).fetchone()
        return json.loads(row[0]) if row else None

    def mark_batch_collected(self, batch_id: str) -> None:
        conn = self._conn()
        with conn:
            conn.execute("UPDATE batches SET collected_at = ? WHERE batch_id = ?", (time.time(), batch_id))

    def stats(self) -> dict[str, Any]:
        """Entry counts by backend and model, and the file size."""
        conn = self._conn()
        by_model = conn.execute(
            "SELECT backend, model, COUNT(*), SUM(latency_s) FROM responses GROUP BY backend, model"
        ).fetchall()
        return {
            "path": str(self.path),
            "entries": len(self),
            "bytes": self.path.stat().st_size if self.path.exists() else 0,
            "by_model": [
                {"backend": b, "model": m, "entries": n, "latency_s_total": round(t or 0.0, 3)}
                for b, m, n, t in by_model
            ],
            "pending_batches": conn.execute("SELECT COUNT(*) FROM batches WHERE collected_at IS NULL").fetchone()[0],
        }

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


# -- batch mode's record of its batches (judgelab.gateway.batch_collector) ----------------------
#: a recorded batch a restarted run may still wait for: not collected, not failed/expired/cancelled
_UNCOLLECTED = "j.collected_at IS NULL AND j.status NOT IN ('cancelled', 'expired', 'failed')"

_JOBS_DDL = """
CREATE TABLE IF NOT EXISTS batch_jobs (
    fingerprint TEXT PRIMARY KEY,
    batch_id TEXT NOT NULL,
    n_requests INTEGER NOT NULL,
    status TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    collected_at REAL
);
"""


def fingerprint(keys: list[str]) -> str:
    """sha256 of the sorted request keys: the same requests give the same batch record."""
    return hashlib.sha256("\n".join(sorted(keys)).encode("ascii")).hexdigest()


class BatchJobs:
    """The ``batch_jobs`` table next to the responses in the cache file (own connection, WAL)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=60.0, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA busy_timeout=60000")
        with self._lock, self._conn:
            self._conn.executescript(_JOBS_DDL)

    def resumable(self, keys: list[str]) -> tuple[str, str] | None:
        """(fingerprint, batch id) of an uncollected live batch holding all ``keys``, or None: the
        batch of exactly these, else one holding more (a run killed while storing its replies)."""
        fp = fingerprint(keys)
        with self._lock:
            rows = self._conn.execute(
                "SELECT j.fingerprint, j.batch_id, b.keys_json FROM batch_jobs j LEFT JOIN batches b "
                f"ON b.batch_id = j.batch_id WHERE {_UNCOLLECTED} "
                "ORDER BY j.fingerprint = ? DESC, j.created_at", (fp,)).fetchall()
        wanted = set(keys)
        for row_fp, batch_id, keys_json in rows:
            if row_fp == fp or (keys_json and wanted <= set(json.loads(keys_json))):
                return row_fp, batch_id
        return None

    def pending_keys(self) -> set[str]:
        """Request keys held by an uncollected live batch (a run stopped while waiting)."""
        with self._lock:
            rows = self._conn.execute("SELECT b.keys_json FROM batch_jobs j JOIN batches b "
                                      f"ON b.batch_id = j.batch_id WHERE {_UNCOLLECTED}").fetchall()
        return {k for (keys_json,) in rows if keys_json for k in json.loads(keys_json)}

    def record(self, fp: str, batch_id: str, n: int) -> None:
        now = time.time()
        with self._lock, self._conn:
            self._conn.execute("INSERT OR REPLACE INTO batch_jobs VALUES (?, ?, ?, 'submitted', ?, ?, NULL)",
                               (fp, batch_id, n, now, now))

    def update(self, fp: str, status: str, collected: bool = False) -> None:
        now = time.time()
        with self._lock, self._conn:
            self._conn.execute("UPDATE batch_jobs SET status = ?, updated_at = ?, collected_at = ? WHERE fingerprint = ?",
                               (status, now, now if collected else None, fp))

    def rows(self) -> list[dict]:
        with self._lock:
            cur = self._conn.execute("SELECT fingerprint, batch_id, n_requests, status, created_at, updated_at, "
                                     "collected_at FROM batch_jobs ORDER BY created_at")
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row)) for row in cur.fetchall()]

    def close(self) -> None:
        self._conn.close()


def _encode(entry: dict[str, Any]) -> dict[str, Any]:
    row = dict(entry)
    for col in ("request", "parsed", "usage", "tags"):
        if col in row:
            row[f"{col}_json"] = None if row[col] is None else canonical_json(row.pop(col))
    row.setdefault("parsed_json", None)
    row.setdefault("tags_json", None)
    row.setdefault("truncation_note", None)
    row.setdefault("n_repairs", 0)
    row["truncated"] = int(bool(row.get("truncated", 0)))
    missing = [c for c in _COLUMNS if c not in row]
    if missing:
        raise KeyError(f"cache entry lacks {missing}")
    return row


def _decode(row: tuple, cols: tuple = _COLUMNS) -> dict[str, Any]:
    entry = dict(zip(cols, row))
    for col in ("request", "parsed", "usage", "tags"):
        if f"{col}_json" in entry:
            raw = entry.pop(f"{col}_json")
            entry[col] = None if raw is None else json.loads(raw)
    entry["truncated"] = bool(entry["truncated"])
    return entry
