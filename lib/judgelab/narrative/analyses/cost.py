"""What each judge mode costs in tokens, seconds and dollars (the Narrative paper, section 5.6, Table 5).

The paper judged 60 VisPub narratives (30 endpoint pairs x max-capacity / random) with one agent
(K = 1) and counted input tokens with tiktoken over "the evaluation prompt and the narrative
content". Here input tokens are counted offline under the judge model's encoding, with the chat
framing of :func:`judgelab.tokens.count_message_tokens`, beside the counts the backend reported
(the gateway's ledger). Times are of fresh calls only: a cache hit costs no model time and is
counted apart (``n_cached``). Dollars come from the gateway's price table, for the judge model and
for the paper's judge (``gpt-4.1``). The paper's "9.3 times longer" is :func:`time_ratio`.

Cost–performance (:func:`cost_performance`): per mode, Δr = r_mode − r_simple of the mean score's
correlation with coherence against the token increase (t_mode − t_simple) / t_simple; the paper's
"7% improvement at 83% increased token usage" (complex vs simple on VisPub) follows from its
Tables 2 and 5 by the same formulas (:func:`paper_cost_performance`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from judgelab import tokens
from judgelab.narrative.judges.prompts import MODES, render
from judgelab.stats import resampling as rs
from judgelab.stats import rules
from judgelab.stats.bootstrap import ci_method_label

REFERENCE_MODEL = "gpt-4.1"
"""The paper's judge model (section 3.3); used to price a sample at the paper's rates."""

NARRATIVE_KEYS = ["collection", "pair_id", "method"]


def cost_collection(paths: pd.DataFrame, preferred: str = "vispub") -> str:
    """The collection the cost sample is drawn from: ``preferred`` (the paper's VisPub) when
    notebook 08 extracted paths there, else the first collection in alphabetical order."""
    present = sorted(paths["collection"].unique())
    if not present:
        raise ValueError("no paths to draw a cost sample from (narr_paths is empty)")
    return preferred if preferred in present else present[0]


@dataclass
class CostSample:
    """A cost measurement: the ``collection`` sampled, the judged ``sample`` of paths, ``calls``
    (:func:`cost_calls`) and their ``split`` into fresh and cached (:func:`fresh_cached_split`)."""

    collection: str
    sample: pd.DataFrame
    calls: pd.DataFrame
    split: pd.DataFrame


def run_cost_sample(gw, paths: pd.DataFrame, *, n_pairs: int, modes: Sequence[str] = MODES, seed: int = 0,
                    max_tokens: int | Mapping[str, int] = 256, reasoning_chars: int = 300,
                    profile: str = "demo") -> CostSample:
    """Judge a seeded sample of ``n_pairs`` endpoint pairs (both their paths) of
    :func:`cost_collection` once (K = 1, the midpoint temperature) in every mode, and read what
    each call cost from the rows these calls added to the gateway's ledger."""
    from judgelab.narrative.judges.run import run_judges, select_pairs

    collection = cost_collection(paths)
    sample = select_pairs(paths[paths["collection"] == collection], n_pairs, seed)
    n_before = len(gw.ledger_frame())
    run_judges(gw, sample, modes=modes, k=1, seed=seed, max_tokens=max_tokens, reasoning_chars=reasoning_chars,
               profile=profile)
    ledger = gw.ledger_frame().iloc[n_before:]
    calls = cost_calls(ledger, prompt_token_table(sample, modes, model=gw.model_name))
    return CostSample(collection, sample, calls, fresh_cached_split(ledger))


def prompt_tokens(system: str, user: str, model: str | None) -> int:
    """Tiktoken count of a two-message chat prompt under ``model``'s encoding, with chat framing."""
    return tokens.count_message_tokens(
        [{"role": "system", "content": system}, {"role": "user", "content": user}], model)


def prompt_token_table(paths: pd.DataFrame, modes: Sequence[str] = MODES, model: str | None = None,
                       reference_model: str = REFERENCE_MODEL,
                       wording: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Every narrative of ``paths`` rendered in every mode, its prompt tokens counted with tiktoken
    under the judge model's (``tiktoken_input``) and the reference model's encodings (``_ref``)."""
    rows = []
    for mode in modes:
        for r in paths.itertuples(index=False):
            noun = (wording or {}).get(str(r.collection), str(r.collection))
            p = render(mode, list(r.titles), noun)
            rows.append({"collection": str(r.collection), "pair_id": str(r.pair_id), "method": str(r.method),
                         "mode": mode, "n_documents": len(r.titles),
                         "tiktoken_input": prompt_tokens(p.system, p.user, model),
                         "tiktoken_input_ref": prompt_tokens(p.system, p.user, reference_model),
                         "encoding": tokens.encoding_name_for(model),
                         "encoding_ref": tokens.encoding_name_for(reference_model)})
    return pd.DataFrame(rows)


def fresh_cached_split(ledger: pd.DataFrame, by: Sequence[str] = ("mode",)) -> pd.DataFrame:
    """Calls per group split into fresh and cached, with their summed latency (s). Columns: *by,
    n_calls, n_fresh, n_cached, fresh_latency_s, cached_latency_s."""
    d = ledger.copy()
    d["cached"] = d["cached"].astype(bool)
    g = d.groupby(list(by))
    out = pd.DataFrame({
        "n_calls": g.size(),
        "n_fresh": g["cached"].apply(lambda s: int((~s).sum())),
        "n_cached": g["cached"].apply(lambda s: int(s.sum())),
        "fresh_latency_s": g.apply(lambda x: float(x.loc[~x["cached"], "latency_s"].sum()), include_groups=False),
        "cached_latency_s": g.apply(lambda x: float(x.loc[x["cached"], "latency_s"].sum()), include_groups=False),
    })
    return out.reset_index()


def cost_calls(ledger: pd.DataFrame, prompts: pd.DataFrame) -> pd.DataFrame:
    """The ledger rows of a cost sample joined to their tiktoken prompt counts, one row per call."""
    led = ledger.copy()
    for c in NARRATIVE_KEYS + ["mode"]:
        led[c] = led[c].astype(str)
    pr = prompts.copy()
    for c in NARRATIVE_KEYS + ["mode"]:
        pr[c] = pr[c].astype(str)
    return led.merge(pr, on=NARRATIVE_KEYS + ["mode"], how="left", validate="many_to_one")


def _mean_sd(s: pd.Series) -> tuple[float, float]:
    s = pd.to_numeric(s, errors="coerce").dropna()
    if s.empty:
        return np.nan, np.nan
    return float(s.mean()), float(s.std(ddof=1)) if len(s) > 1 else np.nan


TIME_RATIO_UNIT = "x (ratio of mean seconds per fresh call)"
MIN_CALLS = 5
"""Fewer fresh calls per mode than this give no ratio interval: a bootstrap of 2-4 latencies
only reshuffles them."""


def time_ratio(seconds: np.ndarray, baseline: np.ndarray, n_boot: int = 2000, seed: int = 0) -> dict:
    """Mean of ``seconds`` over mean of ``baseline`` (fresh calls of two modes) with its 95%
    percentile bootstrap interval, each side's calls resampled on their own (seeded); NaN
    interval with a "too few units" note below :data:`MIN_CALLS` calls on either side."""
    x, y = (np.asarray(v, float)[np.isfinite(np.asarray(v, float))] for v in (seconds, baseline))
    out = {"time_ratio": x.mean() / y.mean() if len(x) and len(y) and y.mean() > 0 else np.nan,
           "time_ratio_ci_low": np.nan, "time_ratio_ci_high": np.nan, "time_ratio_unit": TIME_RATIO_UNIT,
           "ci_method": "time_ratio: " + ci_method_label("fresh call", n_boot, seed, strata="mode"), "note": ""}
    if min(len(x), len(y)) < MIN_CALLS:
        out["note"] = "time_ratio: too few units: " + rules.too_few(min(len(x), len(y)), MIN_CALLS, "fresh calls")
        return out
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = rs.weighted_mean(x, rs.cluster_weights(np.arange(len(x)), n_boot, seed)) / \
            rs.weighted_mean(y, rs.cluster_weights(np.arange(len(y)), n_boot, seed + 1))
    iv = rs.percentile_interval(boot)
    out["time_ratio_ci_low"], out["time_ratio_ci_high"] = iv.low, iv.high
    return out


def cost_table(calls: pd.DataFrame, reference_model: str = REFERENCE_MODEL, prices=None,
               baseline: str = "simple", n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Table 5, one row per mode: mean ± SD (ddof = 1, one call per narrative) of tiktoken and
    reported input tokens (NaN when the backend reported none), output tokens and fresh-call
    seconds, fresh / cached / failed counts, USD per 1,000 narratives at the judge model's and
    ``reference_model``'s prices (``prices``: a :class:`judgelab.gateway.ledger.PriceTable`), and
    :func:`time_ratio` over ``baseline``'s fresh calls (1 without an interval on its own row).

    ``calls``: :func:`cost_calls` output.
    """
    from judgelab.gateway.ledger import PriceTable

    prices = prices or PriceTable.load()
    rows = []
    order = [m for m in MODES if m in set(calls["mode"])] + sorted(set(calls["mode"]) - set(MODES))
    for mode in order:
        g = calls[calls["mode"] == mode]
        cached = g["cached"].astype(bool)
        estimated = g["estimated"].astype(bool) if "estimated" in g else pd.Series(False, index=g.index)
        fresh = g[~cached]
        row = {"collection": ", ".join(sorted(set(map(str, g["collection"])))), "mode": mode, "n_narratives": int(g[NARRATIVE_KEYS].drop_duplicates().shape[0]),
               "n_calls": int(len(g)), "n_fresh": int((~cached).sum()), "n_cached": int(cached.sum()),
               "n_failed": int((g["status"] != "ok").sum()) if "status" in g else 0,
               "encoding": g["encoding"].iloc[0] if "encoding" in g and len(g) else None}
        row["documents_mean"], row["documents_sd"] = _mean_sd(g["n_documents"])
        row["tiktoken_input_mean"], row["tiktoken_input_sd"] = _mean_sd(g["tiktoken_input"])
        rep = g.loc[~estimated, "input_tokens"]
        row["reported_input_mean"], row["reported_input_sd"] = _mean_sd(rep)
        row["output_tokens_mean"], row["output_tokens_sd"] = _mean_sd(g.loc[~estimated, "output_tokens"])
        row["time_s_mean"], row["time_s_sd"] = _mean_sd(fresh["latency_s"])
        row["usd_per_1k"] = float(pd.to_numeric(g["cost_usd"], errors="coerce").mean() * 1000) if "cost_usd" in g else np.nan
        ref_cost = [prices.cost(reference_model, int(ti), int(o) if pd.notna(o) else 0)
                    for ti, o in zip(g["tiktoken_input_ref"], g["output_tokens"])]
        row["usd_per_1k_ref"] = float(np.mean(ref_cost) * 1000) if ref_cost else np.nan
        row["reference_model"] = reference_model
        base = calls.loc[(calls["mode"] == baseline) & ~calls["cached"].astype(bool), "latency_s"]
        row.update(time_ratio(pd.to_numeric(fresh["latency_s"], errors="coerce"),
                              pd.to_numeric(base, errors="coerce"), n_boot, seed))
        if mode == baseline:   # its own ratio is 1 by definition: no interval to report
            row.update(time_ratio_ci_low=np.nan, time_ratio_ci_high=np.nan, note="time_ratio: the baseline mode")
        rows.append(row)
    return pd.DataFrame(rows)


def cost_performance(cost: pd.DataFrame, correlations: pd.DataFrame, r_column: str = "r",
                     tokens_column: str = "tiktoken_input_mean", baseline: str = "simple") -> pd.DataFrame:
    """Correlation gained per extra token relative to ``baseline``, from per-mode mean input
    tokens (``cost``) and Pearson r of the mean score with coherence (``correlations``).

    Columns: mode, tokens, r, token_increase (fraction), r_gain (Δr), r_gain_rel (Δr / r_baseline),
    r_gain_per_100_tokens (100 Δr / Δtokens; NaN for the baseline).
    """
    d = cost[["mode", tokens_column]].merge(correlations[["mode", r_column]], on="mode", how="inner")
    d = d.rename(columns={tokens_column: "tokens", r_column: "r"})
    if baseline not in set(d["mode"]):
        raise ValueError(f"baseline mode {baseline!r} missing from the cost or correlation table")
    base = d.set_index("mode").loc[baseline]
    dt = d["tokens"] - base["tokens"]
    d["token_increase"] = dt / base["tokens"]
    d["r_gain"] = d["r"] - base["r"]
    d["r_gain_rel"] = d["r_gain"] / base["r"] if base["r"] else np.nan
    d["r_gain_per_100_tokens"] = np.where(dt != 0, 100 * d["r_gain"] / dt.where(dt != 0), np.nan)
    return d


def judged_cost_performance(cost: pd.DataFrame, paths: pd.DataFrame, scores: pd.DataFrame, collection: str,
                            r_column: str = "pearson_avg", n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """:func:`cost_performance` of notebook 09's judges on ``collection`` (``r_column`` of
    :func:`judgelab.narrative.judges.validity.correlation_table` against Table 5's tokens), with
    the intervals of :func:`gain_intervals`."""
    from judgelab.narrative.judges.scores import judged_paths, narrative_scores
    from judgelab.narrative.judges.validity import correlation_table

    judged = judged_paths(narrative_scores(scores), paths)
    corr = correlation_table(judged, n_boot=0)
    out = cost_performance(cost, corr[corr["collection"] == collection], r_column=r_column)
    metric = {"pearson_avg": "mean_coherence", "pearson_min": "min_coherence"}.get(r_column, "mean_coherence")
    ci = gain_intervals(judged[judged["collection"] == collection], metric, n_boot=n_boot, seed=seed)
    return out.merge(ci, on="mode", how="left")


def gain_intervals(judged: pd.DataFrame, metric: str = "mean_coherence", baseline: str = "simple",
                   n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per mode, 95% intervals of r (mean score vs ``metric``), of Δr = r_mode − r_baseline and of
    Δr / r_baseline, by one cluster bootstrap over endpoint pairs shared by every mode, so the
    modes are compared on the same resample. Columns: mode, r_ci_low, r_ci_high, r_gain_ci_low,
    r_gain_ci_high, r_gain_rel_ci_low, r_gain_rel_ci_high, unit, ci_method."""
    pairs = np.unique(judged["pair_id"].to_numpy())
    w = rs.cluster_weights(pairs, n_boot, seed)          # one column per pair, sorted as ``pairs``
    boots = {}
    for mode, g in judged.groupby("mode", sort=False):
        cols = np.searchsorted(pairs, g["pair_id"].to_numpy())
        boots[mode] = rs.weighted_pearson(g[metric].to_numpy(float), g["score_mean"].to_numpy(float), w[:, cols])
    base = boots.get(baseline)
    rows = []
    for mode, b in boots.items():
        row = {"mode": mode}
        parts = {"r": b}
        if base is not None:
            with np.errstate(invalid="ignore", divide="ignore"):
                parts.update(r_gain=b - base, r_gain_rel=(b - base) / base)
        for name, v in parts.items():
            iv = rs.percentile_interval(v) if not (name != "r" and mode == baseline) else rs.Interval(np.nan, np.nan, 0, 0)
            row[f"{name}_ci_low"], row[f"{name}_ci_high"] = iv.low, iv.high
        rows.append(row)
    out = pd.DataFrame(rows)
    out["unit"], out["ci_method"] = "endpoint pair", rs.ci_method(n_boot, seed) + "; one resample for every mode"
    return out


def paper_cost_performance(collection: str = "vispub", metric: str = "pearson_avg") -> pd.DataFrame:
    """The same quantities derived from the paper's own Table 2 (r) and Table 5 (tokens), so the
    paper's "7% at 83% more tokens" can be set beside ours. Columns prefixed ``paper_``."""
    from judgelab.narrative.judges.paper_values import PAPER_TABLE2_PEARSON, PAPER_TABLE5_COST

    cost = pd.DataFrame([{"mode": m, "tokens": v["tokens_mean"]} for m, v in PAPER_TABLE5_COST.items()])
    corr = pd.DataFrame([{"mode": m, "r": PAPER_TABLE2_PEARSON[(collection, m)][metric]} for m in PAPER_TABLE5_COST])
    out = cost_performance(cost, corr, tokens_column="tokens")
    return out.rename(columns={c: f"paper_{c}" for c in out.columns if c != "mode"})
