"""Wall time of a notebook's calls at the configured concurrency and RPM/TPM limits.

One call takes ``overhead + (input - cached) / prefill + output / decode`` seconds; a
conversation's calls run one after another, conversations ``workers`` at a time, so the wall time
is the largest of ``max(longest conversation, sum / workers)``, ``calls / rpm`` and
``sum(input + max_tokens) / tpm`` minutes (the limiter reserves prompt plus budget). The speeds
(:data:`SPEEDS`, overridable) are assumptions: ``llamacpp`` 400 prompt and 40 generated tokens/s
(the bundled model's measured 5.4 s for 1,000 + 100 tokens on 2 idle cores); remote endpoints
0.6 s per request, 10,000 and 100 tokens/s (providers publish none).
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class Speed:
    overhead_s: float
    prefill_tps: float
    decode_tps: float


SPEEDS = {"llamacpp": Speed(0.05, 400.0, 40.0), "remote": Speed(0.6, 10_000.0, 100.0)}


def speed_for(backend: str) -> Speed:
    return SPEEDS["llamacpp" if backend == "llamacpp" else "remote"]


def wall_seconds(calls: pd.DataFrame, bound: str, workers: int, speed: Speed,
                 rpm: float | None = None, tpm: float | None = None) -> float:
    """Seconds for one notebook's ``calls`` at the ``bound`` sizes; a ``weight`` column scales the
    sums, not the longest conversation."""
    if calls.empty:
        return 0.0
    w = calls["weight"] if "weight" in calls else pd.Series(1.0, index=calls.index)
    fresh = (calls[f"input_{bound}"] - calls[f"cached_{bound}"]).clip(lower=0)
    per_call = speed.overhead_s + fresh / speed.prefill_tps + calls[f"output_{bound}"] / speed.decode_tps
    chains = per_call.groupby([calls["notebook"], calls["layer"], calls["mode"], calls["item"],
                               calls.get("agent", pd.Series(0, index=calls.index)).fillna(0)]).sum()
    bounds = [max(float(chains.max()), float((per_call * w).sum()) / max(1, workers))]
    if rpm:
        bounds.append(float(w.sum()) / rpm * 60.0)
    if tpm:
        bounds.append(float(((calls[f"input_{bound}"] + calls["max_tokens"]) * w).sum()) / tpm * 60.0)
    return max(bounds)


#: the Batch API's completion window, hours (judgelab.gateway.batch_api sends completion_window="24h"):
#: a batch not done by then expires, so it is the longest one wait can last
BATCH_WINDOW_H = 24.0


def _chains(calls: pd.DataFrame) -> pd.core.groupby.DataFrameGroupBy:
    """One group per conversation (a judge call without a layer is its own conversation too)."""
    return calls.groupby([calls["notebook"], calls["layer"], calls["mode"], calls["item"],
                          calls.get("agent", pd.Series(0, index=calls.index)).fillna(0)], dropna=False)


def batch_waits(calls: pd.DataFrame) -> pd.Series:
    """Per notebook, how many batches it submits one after another in Batch mode: its longest
    conversation's steps (a conversation's next call is built from the reply before it, so each of
    its steps waits for the previous batch; SAGE: five evaluator rounds, the blind validator and
    the review, 7)."""
    if calls.empty:
        return pd.Series(dtype=int)
    if {"track", "round"} <= set(calls.columns):
        # a step is a (track, round): two conversations of one story, layer and mode (Table 9's
        # anonymous-author run beside the main one) go in the same batches, not one after the other
        step = calls["track"].astype(str) + ":" + calls["round"].astype(str)
        lengths = _chains(calls.assign(_step=step))["_step"].nunique()
    else:
        lengths = _chains(calls).size()
    return lengths.groupby(level=0).max().astype(int)
