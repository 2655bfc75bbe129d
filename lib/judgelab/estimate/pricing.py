"""Token bounds per call and their price: standard, with prompt caching, and through the Batch API
(the gateway's :class:`~judgelab.gateway.ledger.PriceTable`; an unknown model is NaN, not a guess).

Bounds of one call (``<what>_low``, ``_typical``, ``_high``): input after minimal replies /
halfway / after schema-capped replies (first rounds exact); the cached share alike; output the
minimal reply / the capped reply plus, for a reasoning model, an assumed reasoning spend
(:data:`TYPICAL_REASONING`) / the budget as sent. Budgets and efforts are the gateway's own
(:func:`with_sent_sampling`); :func:`budget_warnings` names budgets that cannot hold the reply.
"""
from __future__ import annotations

import math

import pandas as pd

from judgelab.gateway.ledger import PriceTable
from judgelab.gateway.reasoning import ReasoningPolicy, reasoning_applies, sent_sampling
from judgelab.gateway.types import Sampling

BOUNDS = ("low", "typical", "high")
#: Assumed reasoning tokens per call by ``reasoning_effort`` for the typical bound (not measured:
#: OpenAI documents no figure; the high bound, the budget as sent, holds whatever the model
#: spends). No effort sent means the API's default, medium.
TYPICAL_REASONING = {"minimal": 0, "low": 256, "medium": 1024, "high": 4096}
TYPICAL_REASONING[None] = TYPICAL_REASONING["medium"]


def with_sent_sampling(calls: pd.DataFrame, backend: str, model: str, policy: ReasoningPolicy | None = None) -> pd.DataFrame:
    """``calls`` with ``max_tokens``/``reasoning_effort`` as sent to ``model`` (the designed ones as
    ``*_design``) and a ``reasoning`` flag."""
    c = calls.copy()
    c["max_tokens_design"], c["reasoning_effort_design"] = c["max_tokens"], c["reasoning_effort"]
    sent = [sent_sampling(Sampling(max_tokens=int(m), reasoning_effort=e if isinstance(e, str) else None),
                          backend, model, policy)
            for m, e in zip(c["max_tokens"], c["reasoning_effort"])]
    c["max_tokens"] = [s.max_tokens for s in sent]
    c["reasoning_effort"] = [s.reasoning_effort for s in sent]
    c["reasoning"] = reasoning_applies(backend, model)
    return c


def add_bounds(calls: pd.DataFrame, reasoning: bool | None = None) -> pd.DataFrame:
    """``calls`` with input/cached/output low, typical and high columns (``reasoning`` None: the
    calls' own ``reasoning`` column, see :func:`with_sent_sampling`)."""
    c = calls.copy()
    c["input_low"], c["input_high"] = c["input_min"], c["input_max"]
    c["input_typical"] = c["input_typical"] if "input_typical" in c else (c["input_min"] + c["input_max"]) / 2
    c["input_typical"] = c["input_typical"].fillna((c["input_min"] + c["input_max"]) / 2).round()
    c["cached_low"], c["cached_high"] = c["cached_min"], c["cached_max"]
    c["cached_typical"] = ((c["cached_min"] + c["cached_max"]) / 2).round()
    flags = c["reasoning"].astype(bool) if reasoning is None else pd.Series(bool(reasoning), index=c.index)
    effort = c["reasoning_effort"].map(lambda e: e if isinstance(e, str) else None)
    c["reasoning_typical"] = [TYPICAL_REASONING.get(e, TYPICAL_REASONING[None]) if r else 0
                              for e, r in zip(effort, flags)]
    c["output_low"] = c["reply_min"].clip(upper=c["max_tokens"])
    c["output_typical"] = (c["reply_max"] + c["reasoning_typical"]).clip(upper=c["max_tokens"])
    c["output_high"] = c["max_tokens"]
    return c


def budget_warnings(calls: pd.DataFrame) -> list[str]:
    """One line per notebook whose budgets as sent cannot hold the typical reasoning plus the
    capped reply."""
    short = calls[calls["reply_max"] + calls["reasoning_typical"] > calls["max_tokens"]]
    out = []
    for nb, g in short.groupby("notebook", sort=True):
        out.append(f"notebook {nb}: {len(g)} of {int((calls['notebook'] == nb).sum())} calls have a budget "
                   f"(max tokens as sent, e.g. {int(g['max_tokens'].iloc[0])}) below the typical reasoning "
                   f"({int(g['reasoning_typical'].iloc[0])} at effort {g['reasoning_effort'].iloc[0]}) plus the "
                   f"capped reply ({int(g['reply_max'].iloc[0])}): they would come back cut or empty")
    return out


def add_costs(calls: pd.DataFrame, model: str, prices: PriceTable | None = None) -> pd.DataFrame:
    """``calls`` (with bounds) plus ``usd_<standard|cached|batch>_<bound>`` per call.

    standard: every prompt token at the input price; cached: the cached share at the
    cached-input price; batch: the standard price times the table's Batch share (none: 1)."""
    price = (prices or PriceTable.load()).lookup(model)
    share = price.batch if price is not None and price.batch is not None else 1.0
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
