"""Many SAGE evaluations at once: select stories, prepare inputs, run, and tidy the results.

:func:`run_layer` runs every (story, mode) evaluation of one layer through ``gw.map`` and returns
a :class:`SageRun`: ``rows`` (``sage_rows_<layer>``, CONTRIBUTING.md; a failed reply has
``status="failed"`` and a NaN score, never 0), ``summary`` (one row per evaluation), ``failures``
and ``calls`` (one row per reply with its token usage).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from judgelab import config, interim, params
from judgelab.gateway import Gateway
from judgelab.sage.protocol import leak_check, prompts
from judgelab.sage.protocol.modes import prepare_input
from judgelab.sage.protocol.evaluation import BLIND, EVALUATOR, REVIEW, Call, EvalConfig, EvalItem, Evaluation, evaluate
from judgelab.sage import CATEGORIES, CONTEXT_POLICIES, LAYERS, MODES

ROW_COLUMNS = [
    "story_id", "category", "tier", "layer", "mode", "track", "round", "dimension", "score",
    "confidence", "evidence_strength", "evidence", "status", "r4_score_changed", "truncated",
    "backend", "model", "template_version", "profile",
]
SUMMARY_COLUMNS = [
    "story_id", "category", "tier", "layer", "mode", "overall_score", "validator_blind_overall",
    "eval_validator_mad", "max_r4_r5_change", "trust_level", "status", "n_repairs", "n_failures",
    "knows_work", "truncated", "temperature", "reasoning_effort", "max_tokens", "backend", "model", "profile",
]
FAILURE_COLUMNS = ["story_id", "category", "layer", "mode", "track", "round", "error"]
CALL_COLUMNS = ["story_id", "category", "layer", "mode", "track", "round", "status", "input_tokens",
                "output_tokens", "cached_tokens", "estimated", "latency_s", "cached", "n_repairs",
                "temperature", "reasoning_effort", "max_tokens"]


@dataclass
class SageRun:
    """The tidy results of one layer's run (see module docstring)."""

    layer: str
    profile: str
    rows: pd.DataFrame
    summary: pd.DataFrame
    failures: pd.DataFrame
    calls: pd.DataFrame
    evaluations: list[Evaluation]


# ---------------------------------------------------------------- stories

def select_stories(corpus: pd.DataFrame, per_category: dict[str, int], seed: int,
                   stories: Sequence[str] | None = None) -> pd.DataFrame:
    """The stories of a run: ``stories`` (ids) if given, else ``per_category[c]`` per category,
    drawn with ``seed`` from the stories inside the 2,000–8,000-word range (``in_range``), topped
    up from the others only if a category has too few. LLM stories are drawn across tiers in
    proportion (high first). Order: category, then story_id."""
    if stories is not None:
        missing = sorted(set(stories) - set(corpus["story_id"]))
        if missing:
            raise ValueError(f"story ids not in the corpus: {missing}")
        out = corpus[corpus["story_id"].isin(list(stories))]
        return out.sort_values(["category", "story_id"]).reset_index(drop=True)
    picked = []
    for cat in CATEGORIES:
        n = int(per_category.get(cat, 0))
        if n <= 0:
            continue
        pool = corpus[corpus["category"] == cat].copy()
        if pool.empty:
            continue
        rank_key = pool["story_id"].map(lambda s: _stable_rank(s, seed))
        in_range = pool["in_range"].astype(bool) if "in_range" in pool else pd.Series(True, index=pool.index)
        pool = pool.assign(_out=~in_range, _rank=rank_key)
        if cat == "llm" and "tier" in pool and n < len(pool):
            # cycle through tiers so a small draw still spans quality levels
            pool["_tier_pos"] = pool.sort_values(["_out", "_rank"]).groupby("tier").cumcount()
            order = {"high": 0, "average": 1, "low": 2}
            pool["_tier"] = pool["tier"].map(order).fillna(3)
            pool = pool.sort_values(["_out", "_tier_pos", "_tier", "_rank"])
        else:
            pool = pool.sort_values(["_out", "_rank"])
        picked.append(pool.head(n).drop(columns=[c for c in pool.columns if c.startswith("_")]))
    if not picked:
        return corpus.head(0)
    return pd.concat(picked).sort_values(["category", "story_id"]).reset_index(drop=True)


def _stable_rank(story_id: str, seed: int) -> int:
    """A seeded, platform-independent order (no Python hash randomisation)."""
    import hashlib

    return int(hashlib.sha256(f"{seed}:{story_id}".encode()).hexdigest()[:12], 16)


def build_items(stories: pd.DataFrame, layer: str, modes: Iterable[str], max_text_tokens: int,
                context_policy: str, *, mask_title_in_body: bool = False,
                surnames: frozenset | set = frozenset(),
                count_tokens: Callable[[str], int] | None = None,
                anonymous_author: bool = False) -> list[EvalItem]:
    """One :class:`EvalItem` per story x mode, grouped by story (so that the llama.cpp KV cache
    holds a story's prefix between its evaluations). Texts are prepared, leak-checked against
    ``surnames`` and fitted to the context here, before any call: a text that cannot be sent
    fails loudly. ``count_tokens``: the backend's tokenizer (None: the tokenizer-free estimate)."""
    if layer not in LAYERS:
        raise ValueError(f"unknown layer {layer!r}; choose one of {LAYERS}")
    if context_policy not in CONTEXT_POLICIES:
        raise ValueError(f"unknown context_policy {context_policy!r}; choose one of {CONTEXT_POLICIES}")
    modes = list(modes)
    bad = [m for m in modes if m not in MODES]
    if bad:
        raise ValueError(f"unknown mode {bad[0]!r}; choose from {MODES}")
    items = []
    for s in stories.itertuples(index=False):
        for mode in modes:
            prepared = prepare_input(mode, text=s.text if mode == "content" else None, title=s.title,
                                     author=s.author, max_text_tokens=max_text_tokens,
                                     context_policy=context_policy, story_id=s.story_id,
                                     mask_title_in_body=mask_title_in_body, surnames=surnames,
                                     count_tokens=count_tokens, anonymous_author=anonymous_author)
            tier = getattr(s, "tier", "") or ""
            items.append(EvalItem(s.story_id, s.category, "" if _isna(tier) else str(tier), layer, mode, prepared))
    return items


def _isna(x: Any) -> bool:
    try:
        return bool(pd.isna(x))
    except (TypeError, ValueError):
        return False


# ---------------------------------------------------------------- tidy tables

def _dimension_values(parsed: Any, code: str) -> dict[str, Any]:
    d = getattr(parsed.scores, code)
    return {"score": float(d.score), "confidence": float(d.confidence),
            "evidence_strength": d.evidence_strength, "evidence": d.evidence}


def _scores(call: Call | None) -> dict[str, float] | None:
    if call is None or not call.ok:
        return None
    return {code: float(getattr(call.parsed.scores, code).score)
            for code in type(call.parsed.scores).model_fields}


def evaluation_rows(ev: Evaluation, backend: str, model: str, profile: str) -> list[dict]:
    """Tidy rows of one evaluation: 4 dimensions x (5 evaluator rounds + blind + review)."""
    it = ev.item
    codes = prompts.layer_spec(it.layer).codes
    r3 = _scores(ev.call(EVALUATOR, 3))
    truncated = it.prepared.truncated or any(c.result is not None and c.result.truncated for c in ev.calls)
    out = []
    for c in ev.calls:
        for code in codes:
            row = {"story_id": it.story_id, "category": it.category, "tier": it.tier, "layer": it.layer,
                   "mode": it.mode, "track": c.track, "round": c.round, "dimension": code,
                   "score": math.nan, "confidence": math.nan, "evidence_strength": "", "evidence": "",
                   "status": "ok" if c.ok else "failed", "r4_score_changed": False, "truncated": truncated,
                   "backend": backend, "model": model, "template_version": ev.template_version,
                   "profile": profile}
            if c.ok:
                row.update(_dimension_values(c.parsed, code))
                if c.track == EVALUATOR and c.round == 4 and r3 is not None:
                    row["r4_score_changed"] = bool(row["score"] != r3[code])
            out.append(row)
    return out


def evaluation_summary(ev: Evaluation, backend: str, model: str, profile: str) -> dict:
    """One summary row: ``overall_score = mean_d s_R5(d)``, the blind validator's overall,
    ``eval_validator_mad = mean_d |s_R5(d) - s_blind(d)|``, ``max_r4_r5_change`` (paper: converged
    when < 0.3), trust level, failures, repairs, whether the model knew the work (title mode)."""
    it = ev.item
    r4, r5, blind = _scores(ev.call(EVALUATOR, 4)), _scores(ev.call(EVALUATOR, 5)), _scores(ev.call(BLIND, 1))
    review, r1 = ev.call(REVIEW, 1), ev.call(EVALUATOR, 1)
    codes = prompts.layer_spec(it.layer).codes
    knows = None
    if it.mode == "title" and r1 is not None and r1.ok:
        knows = bool(r1.parsed.knows_work)
    return {
        "story_id": it.story_id, "category": it.category, "tier": it.tier, "layer": it.layer, "mode": it.mode,
        "overall_score": float(np.mean([r5[c] for c in codes])) if r5 else math.nan,
        "validator_blind_overall": float(np.mean([blind[c] for c in codes])) if blind else math.nan,
        "eval_validator_mad": float(np.mean([abs(r5[c] - blind[c]) for c in codes])) if r5 and blind else math.nan,
        "max_r4_r5_change": float(max(abs(r5[c] - r4[c]) for c in codes)) if r5 and r4 else math.nan,
        "trust_level": review.parsed.trust_level if review is not None and review.ok else None,
        "status": "ok" if all(c.ok for c in ev.calls) else "failed",
        "n_repairs": int(sum(c.result.n_repairs for c in ev.calls if c.result is not None)),
        "n_failures": int(sum(not c.ok for c in ev.calls)),
        "knows_work": knows,
        "truncated": bool(it.prepared.truncated or any(c.result is not None and c.result.truncated for c in ev.calls)),
        **_sent(next((c.result for c in ev.calls if c.result is not None), None)),
        "backend": backend, "model": model, "profile": profile,
    }


def _sent(result) -> dict:
    """The sampling as sent (a reasoning model's has no temperature), not as designed."""
    s = getattr(result, "sampling", None)
    return {"temperature": s.temperature if s else None, "reasoning_effort": s.reasoning_effort if s else None,
            "max_tokens": s.max_tokens if s else None}


def tidy(evaluations: list[Evaluation], backend: str, model: str, profile: str):
    """(rows, summary, failures, calls) frames of a list of evaluations, in the contract's columns."""
    rows, summ, fails, calls = [], [], [], []
    for ev in evaluations:
        rows += evaluation_rows(ev, backend, model, profile)
        summ.append(evaluation_summary(ev, backend, model, profile))
        it = ev.item
        for c in ev.calls:
            base = {"story_id": it.story_id, "category": it.category, "layer": it.layer, "mode": it.mode,
                    "track": c.track, "round": c.round}
            if not c.ok:
                fails.append({**base, "error": c.failure})
            r = c.result
            u = r.usage if r is not None else None
            calls.append({**base, "status": "ok" if c.ok else ("failed" if r is not None else "not_run"),
                          "input_tokens": u.input_tokens if u else 0, "output_tokens": u.output_tokens if u else 0,
                          "cached_tokens": u.cached_tokens if u else 0, "estimated": bool(u.estimated) if u else False,
                          "latency_s": r.latency_s if r is not None else 0.0, "cached": bool(r.cached) if r is not None else False,
                          "n_repairs": r.n_repairs if r is not None else 0, **_sent(r)})
    rows_df = pd.DataFrame(rows, columns=ROW_COLUMNS)
    rows_df = rows_df.astype({"round": "int64", "score": "float64", "confidence": "float64",
                              "r4_score_changed": "bool", "truncated": "bool"})
    summ_df = pd.DataFrame(summ, columns=SUMMARY_COLUMNS)
    summ_df["knows_work"] = summ_df["knows_work"].astype("object")
    summ_df = summ_df.astype({"temperature": "float64", "max_tokens": "Int64", "reasoning_effort": "object"})
    return (rows_df, summ_df, pd.DataFrame(fails, columns=FAILURE_COLUMNS),
            pd.DataFrame(calls, columns=CALL_COLUMNS))


# ---------------------------------------------------------------- running

def run_layer(gw: Gateway, corpus: pd.DataFrame, layer: str, profile: config.Config | str = "demo", *,
              stories: Sequence[str] | None = None, modes: Sequence[str] | None = None,
              context_policy: str | None = None, overrides: dict[str, Any] | None = None,
              desc: str | None = None, mask_title_in_body: bool | str | None = None) -> SageRun:
    """Run one layer's evaluations with the ``sage`` knobs of the run's configuration ``profile``
    (:func:`judgelab.config.of`; ``overrides`` and the other arguments applied; None = the
    configuration's) and return the tidy tables. Never raises for a model
    failure; raises for inputs that cannot be sent (a leak, a text over an ``"error"`` budget)."""
    # papermill passes lists, or "a,b" strings from the command line; an empty list means "unset"
    stories = params.as_list(stories, name="STORIES") or None
    modes = params.as_list(modes, name="MODES") or None
    resolved = config.of(profile)
    profile = resolved.profile
    cfg = resolved.knobs("sage")
    cfg.update(overrides or {})
    if context_policy is not None:
        cfg["context_policy"] = context_policy
    if not params.is_unset(mask_title_in_body):
        cfg["mask_title_in_body"] = params.as_bool(mask_title_in_body, name="MASK_TITLE_IN_BODY")
    chosen = select_stories(corpus, cfg["per_category"], cfg["selection_seed"], stories)
    # a surname is distinctive relative to every story of the corpus, not only the ones drawn
    surnames = leak_check.distinctive_surnames(zip(corpus["author"], corpus["text"]))
    items = build_items(chosen, layer, modes or cfg["modes"], cfg["max_text_tokens"], cfg["context_policy"],
                        mask_title_in_body=bool(cfg.get("mask_title_in_body", False)), surnames=surnames,
                        count_tokens=gw.count_tokens, anonymous_author=bool(cfg.get("anonymous_author", False)))
    ecfg = EvalConfig.from_settings(cfg)
    evaluations = gw.map(lambda it: evaluate(gw, it, ecfg), items, concurrency=cfg.get("concurrency"),
                         desc=desc or f"SAGE {layer}")
    rows, summary, failures, calls = tidy(evaluations, gw.backend_name, gw.model_name, profile)
    return SageRun(layer, profile, rows, summary, failures, calls, evaluations)


def write_interim(run: SageRun) -> dict[str, str]:
    """Write ``sage_rows_<layer>`` and ``sage_summary_<layer>``; return their paths."""
    return {kind: str(interim.write(df, f"sage_{kind}_{run.layer}"))
            for kind, df in (("rows", run.rows), ("summary", run.summary))}


def anonymous_rows_name(layer: str) -> str:
    """The interim table of the anonymous-author title run of ``layer`` (Table 9's sensitivity)."""
    return f"sage_rows_anonymous_{layer}"


def run_title_anonymous(gw: Gateway, corpus: pd.DataFrame, layer: str, profile: config.Config | str = "demo", *,
                        stories: Sequence[str] | None = None, overrides: dict[str, Any] | None = None) -> SageRun:
    """Title mode once more with "an unknown author" for every story: Table 9's sensitivity run
    (in title mode the LLM stories are "by" their model, which tells the judge the category)."""
    return run_layer(gw, corpus, layer, profile, stories=stories, modes=["title"],
                     overrides={**(overrides or {}), "anonymous_author": True},
                     desc=f"SAGE {layer} title, anonymous author")


def anonymous_sensitivity_on(knob, layer: str) -> bool:
    """Whether ``layer`` runs the anonymous-author title run: the knob is yes/no for every layer,
    or the layers that run it (the demo: L4 only, one layer's sensitivity rows at a third of the cost)."""
    if isinstance(knob, (list, tuple)):
        return layer in knob
    return bool(knob)


def anonymous_stories(chosen: pd.DataFrame, per_category: dict[str, int] | None) -> list[str]:
    """The stories of the anonymous-author run: every story of ``chosen``, or the first
    ``per_category[c]`` of each category when the profile sizes it (``anonymous_per_category``)."""
    if per_category is None:
        return list(chosen["story_id"])
    ordered = chosen.sort_values(["category", "story_id"])
    return [sid for cat, group in ordered.groupby("category", sort=True)
            for sid in list(group["story_id"])[:int(per_category.get(cat, 0))]]


def write_anonymous_interim(run: SageRun) -> str:
    """Write the anonymous-author title run's rows (:func:`anonymous_rows_name`); return the path."""
    return str(interim.write(run.rows, anonymous_rows_name(run.layer)))


# ---------------------------------------------------------------- what it cost

def token_accounting(calls: pd.DataFrame) -> pd.DataFrame:
    """Input tokens per evaluation: as sent (the whole conversation, story included, in every
    call), reused from the backend's prefix cache, and ``processed = input - cached``, against
    resending every round without reuse (``reuse_ratio``). Cached replies keep their call's usage.
    """
    live = calls[calls["status"] != "not_run"]
    keys = ["story_id", "category", "layer", "mode"]
    g = live.groupby(keys, as_index=False).agg(
        n_calls=("track", "size"), n_from_cache=("cached", "sum"), input_tokens=("input_tokens", "sum"),
        cached_tokens=("cached_tokens", "sum"), output_tokens=("output_tokens", "sum"),
        latency_s=("latency_s", "sum"))
    g["processed_tokens"] = g["input_tokens"] - g["cached_tokens"]
    g["resend_every_round"] = g["input_tokens"]
    g["reuse_ratio"] = g["processed_tokens"] / g["resend_every_round"].where(g["resend_every_round"] > 0)
    return g


def disagreements(rows: pd.DataFrame, threshold: float = 0.5) -> pd.DataFrame:
    """Dimensions where the evaluator's R5 and the blind validator differ by more than
    ``threshold`` (paper, Table 12 note: flagged for review); ``diff`` is validator minus evaluator."""
    ok = rows[rows["status"] == "ok"]
    keys = ["story_id", "category", "layer", "mode", "dimension"]
    ev = ok[(ok["track"] == EVALUATOR) & (ok["round"] == 5)][keys + ["score"]].rename(columns={"score": "evaluator"})
    vb = ok[ok["track"] == BLIND][keys + ["score"]].rename(columns={"score": "validator_blind"})
    both = ev.merge(vb, on=keys)
    both["diff"] = both["validator_blind"] - both["evaluator"]
    return both[both["diff"].abs() > threshold].reset_index(drop=True)
