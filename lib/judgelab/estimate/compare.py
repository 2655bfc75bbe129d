"""An estimate against what a run really did: the gateway's ledger. Per group (a SAGE layer, the
narrative judges, the holistic judge) :func:`compare_ledger` lines up the calls (a run makes fewer
when a round fails), the first-round input tokens, which are estimated exactly, against those the
backend reported (``rel_diff`` = ledger / estimate - 1), and the ledger's cost, batch lines at
their standard price, against the estimate's standard low-high range.
"""
from __future__ import annotations

import math

import pandas as pd

FIRST_ROUND = {("evaluator", 1), ("validator_blind", 1)}
COLUMNS = ["group", "calls_estimate", "calls_ledger", "calls_match", "first_input_estimate", "first_input_ledger",
           "first_input_rel_diff", "usd_low", "usd_high", "usd_ledger", "usd_inside"]


GROUPS = {"narrative": "narrative judges", "human": "holistic judge"}


def _group_estimate(calls: pd.DataFrame) -> pd.Series:
    return pd.Series([f"sage {lay}" if s == "sage" else GROUPS.get(s, s) for s, lay in zip(calls["study"], calls["layer"])],
                     index=calls.index, dtype=object)


def _group_ledger(ledger: pd.DataFrame) -> pd.Series:
    study = ledger.get("study", pd.Series("", index=ledger.index)).fillna("")
    layer = ledger.get("layer", pd.Series("", index=ledger.index)).fillna("")
    return pd.Series([f"sage {lay}" if s == "sage" else GROUPS.get(s, s or "untagged")
                      for s, lay in zip(study, layer)], index=ledger.index)


def _first_round_ledger(ledger: pd.DataFrame) -> pd.Series:
    if "track" not in ledger:
        return pd.Series(True, index=ledger.index)
    rnd = pd.to_numeric(ledger.get("round"), errors="coerce")
    return pd.Series([(t, int(r)) in FIRST_ROUND if isinstance(t, str) and not math.isnan(r) else True
                      for t, r in zip(ledger["track"], rnd)], index=ledger.index)


def standard_cost(ledger: pd.DataFrame) -> pd.Series:
    """The ledger's ``cost_usd`` at the standard price (a batch line divided by its batch share)."""
    cost = pd.to_numeric(ledger["cost_usd"], errors="coerce")
    if "batch_id" not in ledger:
        return cost
    from judgelab.gateway.ledger import PriceTable

    prices = PriceTable.load()

    def share(model, batch_id) -> float:
        price = prices.lookup(str(model)) if isinstance(batch_id, str) and batch_id else None
        return price.batch if price is not None and price.batch else 1.0

    return cost / pd.Series([share(m, b) for m, b in zip(ledger["model"], ledger["batch_id"])], index=ledger.index)


def compare_ledger(calls: pd.DataFrame, ledger: pd.DataFrame) -> pd.DataFrame:
    """One row per group of :attr:`Estimate.calls` and :meth:`Gateway.ledger_frame` rows."""
    if ledger.empty:
        raise ValueError("the ledger has no rows: nothing to compare (was anything run through the gateway?)")
    missing = [c for c in ("input_tokens", "cost_usd") if c not in ledger.columns]
    if missing:
        raise ValueError(f"the ledger lacks column(s) {missing}; expected Gateway.ledger_frame() columns")
    est_group, led_group = _group_estimate(calls), _group_ledger(ledger)
    led_first = _first_round_ledger(ledger)
    standard = standard_cost(ledger)
    rows = []
    for group in sorted(set(est_group) | set(led_group)):
        e, lg = calls[est_group == group], ledger[led_group == group]
        first_e = float(e.loc[e["first_round"].astype(bool), "input_low"].sum()) if len(e) else 0.0
        first_l = float(lg.loc[led_first[lg.index], "input_tokens"].sum())
        lo = float(e["usd_standard_low"].sum(min_count=1)) if len(e) else math.nan
        hi = float(e["usd_standard_high"].sum(min_count=1)) if len(e) else math.nan
        spent = float(standard[lg.index].sum(min_count=1))
        inside = (lo - 1e-12 <= spent <= hi + 1e-12) if not any(math.isnan(x) for x in (lo, hi, spent)) else None
        rows.append({"group": group, "calls_estimate": len(e), "calls_ledger": len(lg),
                     "calls_match": len(e) == len(lg), "first_input_estimate": first_e, "first_input_ledger": first_l,
                     "first_input_rel_diff": first_l / first_e - 1 if first_e else math.nan,
                     "usd_low": lo, "usd_high": hi, "usd_ledger": spent, "usd_inside": inside})
    return pd.DataFrame(rows, columns=COLUMNS)


def speed_from_ledger(ledger: pd.DataFrame):
    """The :class:`~judgelab.estimate.timing.Speed` that best explains a ledger's fresh calls (least
    squares of ``latency_s = overhead + fresh_input / prefill + output / decode``); ValueError for
    fewer than three fresh calls or a fit without positive speeds."""
    import numpy as np

    from judgelab.estimate.timing import Speed

    fresh = ledger[~ledger["cached"].astype(bool)] if "cached" in ledger else ledger
    if len(fresh) < 3:
        raise ValueError(f"speed_from_ledger: {len(fresh)} fresh call(s) in the ledger; need at least 3")
    x = np.column_stack([np.ones(len(fresh)), (fresh["input_tokens"] - fresh["cached_tokens"]).clip(lower=0),
                         fresh["output_tokens"]]).astype(float)
    coef, *_ = np.linalg.lstsq(x, fresh["latency_s"].to_numpy(float), rcond=None)
    if coef[1] <= 0 or coef[2] <= 0:
        raise ValueError(f"speed_from_ledger: the fit gave non-positive seconds per token {coef[1:]}; "
                         "too few or too similar calls")
    return Speed(overhead_s=max(float(coef[0]), 0.0), prefill_tps=1 / float(coef[1]), decode_tps=1 / float(coef[2]))
