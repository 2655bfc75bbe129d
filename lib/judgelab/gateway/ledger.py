"""The token and cost ledger (one row per ``Gateway.chat`` call) and the transcript log.

Prices: ``prices.csv`` beside this module, or any CSV ``model,input,cached_input,output
[,context_window][,batch]`` in USD per million tokens (``batch``: the share the Batch API bills).
A model is priced by the longest name that prefixes it; an unknown model costs NaN, never a guess.
``cost_usd`` is what the call costs made fresh, at its billed rate (a Batch API line at the batch
rate); ``spent_usd`` what this run paid (0 for a cache hit).
"""
from __future__ import annotations

import csv
import json
import math
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgelab.gateway.redact import MIN_SECRET_LEN, redact
from judgelab.gateway.types import ChatResult

if TYPE_CHECKING:  # pandas is imported when a frame is asked for, not by every worker process
    import pandas as pd

DEFAULT_PRICES = Path(__file__).with_name("prices.csv")


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    cached_input: float
    output: float
    context_window: int | None = None
    #: share of the price billed through the Batch API (None: no batch discount)
    batch: float | None = None


class PriceTable:
    """Prices by model name, read from a CSV file (``#`` lines are comments)."""

    def __init__(self, rows: dict[str, Price]):
        self.rows = rows
        self._memo: dict[str, Price | None] = {}

    @classmethod
    def load(cls, path: str | Path | None = None) -> "PriceTable":
        path = Path(path) if path else DEFAULT_PRICES
        rows: dict[str, Price] = {}
        with open(path, encoding="utf-8") as fh:
            lines = [ln for ln in fh if ln.strip() and not ln.lstrip().startswith("#")]
        for lineno, rec in enumerate(csv.DictReader(lines), 2):
            try:
                ctx = (rec.get("context_window") or "").strip()
                share = (rec.get("batch") or "").strip()
                rows[rec["model"].strip().lower()] = Price(
                    input=float(rec["input"]),
                    cached_input=float(rec.get("cached_input") or rec["input"]),
                    output=float(rec["output"]),
                    context_window=int(ctx) if ctx else None,
                    batch=float(share) if share else None,
                )
            except (KeyError, ValueError, TypeError) as exc:
                raise ValueError(f"{path}: bad price row {rec!r} ({exc})") from exc
        return cls(rows)

    def lookup(self, model: str) -> Price | None:
        """The price row whose name is the longest prefix of ``model`` (case-insensitive)."""
        if model in self._memo:
            return self._memo[model]
        name = model.lower().split("/")[-1]
        best = None
        for key in self.rows:
            if name.startswith(key) and (best is None or len(key) > len(best)):
                best = key
        self._memo[model] = self.rows[best] if best else None
        return self._memo[model]

    def cost(self, model: str, input_tokens: int, output_tokens: int, cached_tokens: int = 0,
             batch: bool = False) -> float:
        """USD for one call; cached prompt tokens at the cached-input price; ``batch``: the whole at
        the table's Batch API share (OpenAI: half). NaN if unpriced."""
        price = self.lookup(model)
        if price is None:
            return math.nan
        fresh_in = max(input_tokens - cached_tokens, 0)
        usd = (fresh_in * price.input + cached_tokens * price.cached_input + output_tokens * price.output) / 1e6
        return usd * price.batch if batch and price.batch is not None else usd


class Ledger:
    """Thread-safe list of per-call rows, exported as a DataFrame."""

    def __init__(self, prices: PriceTable, secrets: tuple[str, ...] = ()):
        self.prices = prices
        self.secrets = secrets  # redacted from every row (tags may carry anything)
        self._rows: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def record(self, result: ChatResult) -> float:
        """Add ``result``'s row; returns what this run spent on it (USD; 0 for a cache hit)."""
        u = result.usage
        # a fresh line the Batch API answered is billed at the batch rate; a cache hit costs what
        # the call would cost made fresh, and this run spends nothing on it
        batch_id = result.batch_id or (result.tags.get("batch_id") if not result.cached else None)
        cost = self.prices.cost(result.model, u.input_tokens, u.output_tokens, u.cached_tokens,
                                batch=batch_id is not None)
        row = {
            **{f"{k}": v for k, v in result.tags.items()},
            "key": result.key,
            "status": result.status,
            "backend": result.backend,
            "model": result.model,
            "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens,
            "cached_tokens": u.cached_tokens,
            "estimated": u.estimated,
            "latency_s": result.latency_s,
            "cost_usd": cost,
            "spent_usd": 0.0 if result.cached else cost,
            "cached": result.cached,
            "n_repairs": result.n_repairs,
            "n_attempts": result.n_attempts,
            "truncated": result.truncated,
            "clipped": len(result.clipped),
        }
        if batch_id is not None:
            row["batch_id"] = batch_id
        row = redact(row, self.secrets)
        with self._lock:
            self._rows.append(row)
        return row["spent_usd"]

    def frame(self) -> "pd.DataFrame":
        import pandas as pd

        with self._lock:
            return pd.DataFrame(list(self._rows))


class TranscriptLog:
    """One JSON line per fresh conversation, for audit: tags and key, every message sent (repair
    turns included), every raw reply, the parsed object or the error, usage and timing.
    Append-only, opened on the first write, thread-safe; the configured key is replaced."""

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
