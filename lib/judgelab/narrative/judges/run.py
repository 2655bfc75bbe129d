"""Run the K-agent narrative judges through the gateway (the Narrative paper, sections 3.3–3.4).

For each narrative (a path of notebook 08), each prompt mode and each of K agents, one chat
request goes to :meth:`judgelab.gateway.Gateway.run_batch`. The agents differ in temperature
(spread evenly over 0.3–0.7, as in the paper) and seed, and each carries its own replicate index,
so every (narrative, mode, agent) is its own cache entry. A failed call stays a row with
``status="failed"`` and ``score=NaN``: it is reported, never scored. The sampling columns of
``narr_judge_scores`` are as sent, not as designed (temperature NaN when none was sent).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from judgelab.narrative.judges.prompts import MODES, check_mode, render
from judgelab.narrative.judges.schemas import (DEFAULT_EXPLANATION_CHARS, DEFAULT_REASONING_CHARS, SCORE_FIELDS, judge_schema,
                            overall_score)

SCORE_COLUMNS: tuple[str, ...] = (
    "collection", "pair_id", "method", "mode", "agent", "temperature", "top_p", "reasoning_effort", "max_tokens",
    "seed", "score", "status",
    "input_tokens", "output_tokens", "latency_s", "cached", "backend", "model", "profile",
)
"""Columns of ``narr_judge_scores.parquet`` in contract order (CONTRIBUTING.md)."""


@dataclass(frozen=True)
class Agent:
    """One of the K judge agents: its index (the request's replicate), temperature (None: none
    sent, the seed-only design), seed."""

    agent: int
    temperature: float | None
    seed: int


def agent_spread(k: int, temperature_range: tuple[float, float] = (0.3, 0.7), base_seed: int = 0,
                 design: str = "temperature") -> list[Agent]:
    """K agents with temperatures evenly spaced over ``temperature_range`` (one agent: the
    midpoint; ``seed-only``: none) and seeds ``base_seed + j`` for agent j = 0..K-1."""
    if int(k) < 1:
        raise ValueError(f"K must be >= 1, got {k}")
    lo, hi = temperature_range
    temps = [(lo + hi) / 2.0] if k == 1 else np.linspace(lo, hi, int(k)).tolist()
    seed_only = design == "seed-only"
    return [Agent(agent=j, temperature=None if seed_only else round(float(t), 6), seed=int(base_seed) + j)
            for j, t in enumerate(temps)]


def check_design(gw, agents_by_collection: Mapping[str, Sequence[Agent]]) -> None:
    """Refuse, before any call, agents that set a temperature on a judge that is sent none (a
    reasoning model on OpenAI): they would differ by seed only, under recorded temperatures."""
    from judgelab.gateway.errors import ConfigError

    temps = sorted({a.temperature for ags in agents_by_collection.values() for a in ags if a.temperature is not None})
    if temps and getattr(gw, "rejects_temperature", False):
        raise ConfigError(
            f"the narrative judges' agents differ in temperature ({', '.join(f'{t:g}' for t in temps)}), but "
            f"{gw.model_name} on {gw.backend_name} accepts no temperature: the agents would be identical but for "
            "their seed while the tables recorded temperatures that never ran. Either judge with a non-reasoning "
            "model (JUDGELAB_NARRATIVE_MODEL=gpt-4.1, the paper's) or state the seed-only design "
            "(JUDGELAB_NARRATIVE_AGENTS=seed-only: no temperature sent, agents differ by seed)")


def select_pairs(paths: pd.DataFrame, n_pairs: int | None, seed: int) -> pd.DataFrame:
    """Both paths of ``n_pairs`` seeded endpoint pairs per collection (all when None) among pairs
    that have a max-capacity and a random path, sorted by collection, pair_id, method."""
    out = []
    for coll, g in paths.groupby("collection", sort=True):
        both = g.groupby("pair_id")["method"].nunique()
        pairs = np.sort(both[both >= 2].index.to_numpy())
        if n_pairs is not None and n_pairs < len(pairs):
            rng = np.random.default_rng(seed)
            pairs = np.sort(rng.choice(pairs, size=int(n_pairs), replace=False))
        out.append(g[g["pair_id"].isin(pairs)])
    if not out:
        return paths.iloc[0:0]
    return pd.concat(out).sort_values(["collection", "pair_id", "method"]).reset_index(drop=True)


def token_budget(max_tokens: int | Mapping[str, int], mode: str, explanations: bool = False) -> int:
    """The output budget of one call: the profile's ``max_tokens`` for ``mode``, plus, when
    explanations are requested, room for each explanation field at its ``maxLength`` (counted
    generously as one token per 3 characters, plus 8 tokens for the key)."""
    base = int(max_tokens[mode]) if isinstance(max_tokens, Mapping) else int(max_tokens)
    if not explanations:
        return base
    n_fields = 1 if mode in ("simple", "cot") else len(SCORE_FIELDS[mode])
    return base + n_fields * (-(-DEFAULT_EXPLANATION_CHARS // 3) + 8)


def build_requests(
    paths: pd.DataFrame,
    agents_by_collection: Mapping[str, Sequence[Agent]],
    modes: Sequence[str] = MODES,
    *,
    max_tokens: int | Mapping[str, int] = 256,
    explanations: bool = False,
    reasoning_chars: int = DEFAULT_REASONING_CHARS,
    wording: Mapping[str, str] | None = None,
) -> tuple[list[dict], list]:
    """``(meta, requests)``: one ChatRequest per (narrative, mode, agent) and its metadata row.

    ``paths`` needs collection, pair_id, method and titles (path order); ``wording`` maps a
    collection to the noun phrase of the prompt. ``replicate`` (the agent) and
    ``template_version`` make every agent and every prompt revision its own cache entry.
    """
    from judgelab.gateway import ChatRequest, Message, Sampling

    meta, reqs = [], []
    for mode in modes:
        check_mode(mode)
        schema = judge_schema(mode, explanations=explanations, reasoning_chars=reasoning_chars)
        for row in paths.itertuples(index=False):
            coll = str(row.collection)
            noun = (wording or {}).get(coll, coll)
            prompt = render(mode, list(row.titles), noun, explanations=explanations)
            for ag in agents_by_collection[coll]:
                reqs.append(ChatRequest(
                    messages=[Message(role="system", content=prompt.system),
                              Message(role="user", content=prompt.user)],
                    schema=schema,
                    sampling=Sampling(temperature=ag.temperature, top_p=None, seed=ag.seed,
                                      max_tokens=token_budget(max_tokens, mode, explanations), reasoning_effort=None),
                    replicate=ag.agent,
                    template_version=prompt.template_version,
                    tags={"study": "narrative", "notebook": "09", "collection": coll,
                          "pair_id": str(row.pair_id), "method": str(row.method), "mode": mode,
                          "agent": str(ag.agent)},
                    truncation=None,
                ))
                meta.append({"collection": coll, "pair_id": row.pair_id, "method": str(row.method),
                             "mode": mode, "agent": ag.agent, "temperature": ag.temperature, "top_p": None,
                             "reasoning_effort": None, "max_tokens": reqs[-1].sampling.max_tokens, "seed": ag.seed})
    return meta, reqs


def result_row(meta: dict, res, profile: str, sent=None) -> dict:
    """One tidy row from a request's metadata and its gateway result, with the sampling as sent
    (``sent``, else ``res.sampling``, else the design's)."""
    ok = res.status == "ok" and res.parsed is not None
    usage = res.usage
    sent = sent if sent is not None else getattr(res, "sampling", None)
    sampling = {"temperature": sent.temperature, "top_p": sent.top_p, "reasoning_effort": sent.reasoning_effort,
                "max_tokens": sent.max_tokens} if sent is not None else {}
    return {
        **meta, **sampling,
        "score": overall_score(meta["mode"], res.parsed) if ok else float("nan"),
        "status": "ok" if ok else "failed",
        "input_tokens": getattr(usage, "input_tokens", None),
        "output_tokens": getattr(usage, "output_tokens", None),
        "latency_s": res.latency_s,
        "cached": bool(res.cached),
        "backend": res.backend,
        "model": res.model,
        "profile": profile,
    }


def tidy_scores(rows: list[dict]) -> pd.DataFrame:
    """Rows -> the contract frame with stable dtypes (columns in :data:`SCORE_COLUMNS` order)."""
    df = pd.DataFrame(rows, columns=list(SCORE_COLUMNS))
    for col in ("agent", "seed", "max_tokens"):
        df[col] = df[col].astype("int64")
    for col in ("temperature", "top_p", "score", "latency_s"):
        df[col] = df[col].astype("float64")
    for col in ("input_tokens", "output_tokens"):
        df[col] = df[col].astype("Int64")
    df["reasoning_effort"] = df["reasoning_effort"].astype("object")
    df["cached"] = df["cached"].astype(bool)
    return df


def run_judges(
    gw,
    paths: pd.DataFrame,
    *,
    modes: Sequence[str] = MODES,
    k: int | None = None,
    temperature_range: tuple[float, float] = (0.3, 0.7),
    seed: int = 0,
    max_tokens: int | Mapping[str, int] = 256,
    explanations: bool = False,
    reasoning_chars: int = DEFAULT_REASONING_CHARS,
    wording: Mapping[str, str] | None = None,
    profile: str = "demo",
    concurrency: int | None = None,
    agent_design: str | None = None,
) -> pd.DataFrame:
    """Judge every path in every mode with K agents (``k`` None: the paper's K per collection,
    :func:`judgelab.narrative.settings.k_for`); the tidy scores frame. ``agent_design`` None reads
    ``JUDGELAB_NARRATIVE_AGENTS`` (:func:`judgelab.study_models.agent_design`)."""
    from judgelab import study_models
    from judgelab.narrative.settings import k_for

    design = study_models.agent_design(agent_design)
    agents = {c: agent_spread(k_for(c, k), temperature_range, seed, design) for c in paths["collection"].unique()}
    check_design(gw, agents)
    meta, reqs = build_requests(paths, agents, modes, max_tokens=max_tokens, explanations=explanations,
                                reasoning_chars=reasoning_chars, wording=wording)
    sent = [gw.as_sent(r).sampling for r in reqs] if hasattr(gw, "as_sent") else [None] * len(reqs)
    results = gw.run_batch(reqs, concurrency=concurrency, desc="narrative judges")
    return tidy_scores([result_row(m, r, profile, s) for m, r, s in zip(meta, results, sent)])


# --------------------------------------------------------------------------- what the notebook shows

def agents_table(collections, k: int | None, temperature_range: tuple[float, float] = (0.3, 0.7),
                 base_seed: int = 0, agent_design: str | None = None) -> pd.DataFrame:
    """The K agents of each collection (as :func:`run_judges` spreads them): collection, agent,
    temperature, seed."""
    from judgelab import study_models
    from judgelab.narrative.settings import k_for

    design = study_models.agent_design(agent_design)
    rows = [{"collection": c, "agent": a.agent, "temperature": a.temperature, "seed": a.seed}
            for c in collections for a in agent_spread(k_for(c, k), temperature_range, base_seed, design)]
    return pd.DataFrame(rows, columns=["collection", "agent", "temperature", "seed"])


def prompt_preview(titles: Sequence[str], collection: str, modes: Sequence[str] = MODES,
                   explanations: bool = False) -> str:
    """Markdown of each mode's prompt for one narrative as the judge sees it, headed by the mode
    and its template version."""
    parts = []
    for mode in modes:
        p = render(mode, list(titles), collection, explanations=explanations)
        parts.append(f"**{mode}** (`{p.template_version}`)\n\n```text\n{p.system}\n\n{p.user}\n```")
    return "\n\n".join(parts)


def call_summary(scores: pd.DataFrame) -> pd.DataFrame:
    """Calls per collection, mode and status: mean score, and sums of tokens in and out, cache
    hits and seconds."""
    return (scores.groupby(["collection", "mode", "status"])
                  .agg(calls=("score", "size"), score_mean=("score", "mean"), input_tokens=("input_tokens", "sum"),
                       output_tokens=("output_tokens", "sum"), cached=("cached", "sum"), latency_s=("latency_s", "sum"))
                  .reset_index())


def ledger_by_mode(ledger: pd.DataFrame) -> pd.DataFrame:
    """Mean and sum of input tokens, output tokens and seconds per judge mode, from the gateway's
    ledger; empty when no call was made."""
    cols = ["input_tokens", "output_tokens", "latency_s"]
    if ledger.empty or "mode" not in ledger.columns:
        return pd.DataFrame(columns=pd.MultiIndex.from_product([cols, ["mean", "sum"]]))
    return ledger.groupby("mode")[cols].agg(["mean", "sum"])
