"""Token bounds per call and their price: standard, with prompt caching, and through the Batch API.

Prices come from the gateway's table (:class:`judgelab.gateway.ledger.PriceTable`, ``prices.csv``);
its ``batch`` column is the share of the standard price paid through the Batch API (0.5 for
OpenAI). A model the table does not know is priced NaN, never guessed.

Bounds of one call (columns ``<what>_low``, ``_typical``, ``_high``):

* input: the request after minimal replies / halfway / after schema-capped replies (first-round
  requests are exact: all three equal; narrative requests: the path-size bounds);
* cached: the same for the prompt-cache share (see :mod:`judgelab.estimate.sage`);
* output: the minimal reply / the schema-capped reply plus, for reasoning models, an assumed
  reasoning allowance (:data:`REASONING_ALLOWANCE`, billed as output, never resent) / the
  request's ``max_tokens``, the hard cap (it includes reasoning tokens).
"""
from __future__ import annotations

import csv
import math
from pathlib import Path

import pandas as pd

from judgelab.gateway.ledger import DEFAULT_PRICES, PriceTable

BOUNDS = ("low", "typical", "high")
#: Assumed reasoning tokens per call by ``reasoning_effort`` for the typical bound (not measured:
#: OpenAI documents no figure; the high bound, ``max_tokens``, holds whatever the model spends).
REASONING_ALLOWANCE = {None: 0, "minimal": 0, "low": 256, "medium": 1024, "high": 4096}


def batch_shares(path: str | Path | None = None) -> dict[str, float]:
    """Model name -> share of the price paid through the Batch API (rows with a ``batch`` value)."""
    path = Path(path) if path else DEFAULT_PRICES
    with open(path, encoding="utf-8") as fh:
        lines = [ln for ln in fh if ln.strip() and not ln.lstrip().startswith("#")]
    out = {}
    for rec in csv.DictReader(lines):
        value = (rec.get("batch") or "").strip()
        if value:
            out[rec["model"].strip().lower()] = float(value)
    return out


def batch_share(model: str, shares: dict[str, float]) -> float:
    """The share for ``model`` by the price table's longest-prefix rule (1.0 = no discount)."""
    name = model.lower().split("/")[-1]
    keys = [k for k in shares if name.startswith(k)]
    return shares[max(keys, key=len)] if keys else 1.0


def add_bounds(calls: pd.DataFrame, reasoning: bool) -> pd.DataFrame:
    """``calls`` with input/cached/output low, typical and high columns."""
    c = calls.copy()
    c["input_low"], c["input_high"] = c["input_min"], c["input_max"]
    c["input_typical"] = c["input_typical"] if "input_typical" in c else (c["input_min"] + c["input_max"]) / 2
    c["input_typical"] = c["input_typical"].fillna((c["input_min"] + c["input_max"]) / 2).round()
    c["cached_low"], c["cached_high"] = c["cached_min"], c["cached_max"]
    c["cached_typical"] = ((c["cached_min"] + c["cached_max"]) / 2).round()
    allowance = c["reasoning_effort"].map(lambda e: REASONING_ALLOWANCE.get(e, 0) if reasoning else 0)
    c["output_low"] = c["reply_min"].clip(upper=c["max_tokens"])
    c["output_typical"] = (c["reply_max"] + allowance).clip(upper=c["max_tokens"])
    c["output_high"] = c["max_tokens"]
    return c


def add_costs(calls: pd.DataFrame, model: str, prices: PriceTable | None = None,
              shares: dict[str, float] | None = None) -> pd.DataFrame:
    """``calls`` (with bounds) plus ``usd_<standard|cached|batch>_<bound>`` per call.

    standard: every prompt token at the input price; cached: the cached share at the
    cached-input price; batch: the standard price times the Batch share."""
    prices = prices or PriceTable.load()
    share = batch_share(model, shares if shares is not None else batch_shares())
    price = prices.lookup(model)
    c = calls.copy()
    for b in BOUNDS:
        if price is None:
            for kind in ("standard", "cached", "batch"):
                c[f"usd_{kind}_{b}"] = math.nan
            continue
        inp, cached, out = c[f"input_{b}"], c[f"cached_{b}"].clip(upper=c[f"input_{b}"]), c[f"output_{b}"]
        c[f"usd_standard_{b}"] = (inp * price.input + out * price.output) / 1e6
        c[f"usd_cached_{b}"] = ((inp - cached) * price.input + cached * price.cached_input + out * price.output) / 1e6
        c[f"usd_batch_{b}"] = c[f"usd_standard_{b}"] * share
    return c
