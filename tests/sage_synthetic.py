"""Synthetic SAGE evaluation rows with known effects, in the exact interim schema.

A test helper (it lives under ``tests/``, outside the package): every effect the statistics of
notebooks 05-06 should find is a parameter here, so a test can set one and check that the tables
find it. The rows are labelled ``backend="synthetic"``, ``model="synthetic-known-effects"`` so that
nothing made from them can pass for a judge's output.

Generative model (per story s, layer l, mode m, dimension j; all draws from one seeded generator):

    quality_s          ~ N(0, story_sd)                 shared by all layers -> cross-layer correlation
    layer_s,l          ~ N(0, layer_sd)                 layer-specific part
    final  = mean[l][category_s] + tier_offset[tier_s] + quality_s + layer_s,l
             + (mode == "title") * mode_shift[l] + N(0, dimension_sd)      clipped to [1, 5], 0.1 steps
    R5     = final;  R4 = R5 exactly, or R5 +- small_change (< threshold), or, for exactly
             round(nonconverged_share * n) dimensions, R5 +- jump (jump >= threshold)
    R1..R3 = R4 + round_drift * (4 - r) / 3 + noise      (scores settle by Round 4)
    validator_blind  = final + N(0, validator_sd);  validator_review = final + N(0, review_sd)

Exactly ``round(truncated_share * n)`` of the n content-limit evaluations (chosen by the seeded
generator) are flagged ``truncated`` (their text cut to head + tail); title-limit evaluations never.

A share ``failure_rate`` of replies (one track-round of one evaluation) fail: their rows get
``status="failed"`` and ``score=NaN`` (never scored).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from judgelab import interim
from judgelab.sage.analysis.scores import LAYERS, MODES, ROW_COLUMNS, SUMMARY_COLUMNS

DIMENSIONS = {
    "L4": ("IPD", "CVP", "CSP", "CPC"),
    "L5": ("AC", "PI", "EG", "ENC"),
    "L6": ("LP", "MR", "HC", "ME"),
}
#: The schema's evidence strengths (a failed reply has ""), drawn as integers 2-5.
EVIDENCE_LABELS = {2: "absent", 3: "weak", 4: "moderate", 5: "strong"}
SYNTHETIC_BACKEND = "synthetic"
SYNTHETIC_MODEL = "synthetic-known-effects"


@dataclass
class SyntheticEffects:
    """The effects built into synthetic rows (defaults: a clear genre hierarchy, stable rounds)."""

    means: dict = field(default_factory=lambda: {
        "L4": {"canonical": 4.0, "pulp": 3.8, "llm": 2.6},
        "L5": {"canonical": 4.1, "pulp": 4.0, "llm": 3.4},
        "L6": {"canonical": 3.9, "pulp": 3.7, "llm": 2.6},
    })
    tier_offset: dict = field(default_factory=lambda: {"high": 0.3, "average": 0.0, "low": -0.6, "": 0.0})
    story_sd: float = 0.35
    layer_sd: float = 0.2
    dimension_sd: float = 0.25
    mode_shift: dict = field(default_factory=lambda: {"L4": 0.0, "L5": 0.0, "L6": 0.0})
    round_drift: float = 0.4
    small_change: float = 0.1
    nonconverged_share: float = 0.02
    jump: float = 0.5
    validator_sd: float = 0.3
    review_sd: float = 0.15
    failure_rate: float = 0.0
    truncated_share: float = 0.0


def _clip(x: np.ndarray) -> np.ndarray:
    return np.round(np.clip(x, 1.0, 5.0), 1)


def synthetic_stories(n_per_category: dict | None = None) -> pd.DataFrame:
    """Story ids, categories and tiers (LLM stories split 2:1:1 into high / average / low, as 10/5/5)."""
    n_per_category = n_per_category or {"canonical": 50, "pulp": 30, "llm": 20}
    recs = []
    for cat, n in n_per_category.items():
        for i in range(n):
            tier = ""
            if cat == "llm":
                tier = "high" if i < round(n / 2) else ("average" if i < round(3 * n / 4) else "low")
            recs.append({"story_id": f"syn-{cat}-{i + 1:03d}", "category": cat, "tier": tier})
    return pd.DataFrame(recs)


def synthetic_rows(n_per_category: dict | None = None, layers=LAYERS, modes=MODES,
                   effects: SyntheticEffects | None = None, seed: int = 20240601,
                   profile: str = "synthetic") -> pd.DataFrame:
    """Tidy evaluation rows (schema of ``sage_rows_L4.parquet``) with the effects in ``effects``."""
    eff = effects or SyntheticEffects()
    rng = np.random.default_rng(seed)
    stories = synthetic_stories(n_per_category)
    quality = rng.normal(0, eff.story_sd, len(stories))
    # decide which dimensions do not converge: exactly round(share * n) of all evaluator dimensions
    n_dims_total = len(stories) * len(layers) * len(modes) * 4
    n_jump = int(round(eff.nonconverged_share * n_dims_total))
    jump_flags = np.zeros(n_dims_total, bool)
    jump_flags[rng.choice(n_dims_total, n_jump, replace=False)] = True
    cols = {c: [] for c in ("story_id", "category", "tier", "layer", "mode", "track", "round", "dimension",
                            "score", "confidence", "evidence_strength", "status")}
    k = 0
    for layer in layers:
        dims = list(DIMENSIONS[layer])
        layer_part = rng.normal(0, eff.layer_sd, len(stories))
        for mode in modes:
            for si, st in enumerate(stories.itertuples(index=False)):
                mu = (eff.means[layer][st.category] + eff.tier_offset.get(st.tier, 0.0) + quality[si]
                      + layer_part[si] + (eff.mode_shift.get(layer, 0.0) if mode == "title" else 0.0))
                final = _clip(mu + rng.normal(0, eff.dimension_sd, 4))
                jumps = jump_flags[k:k + 4]
                k += 4
                small = rng.choice([-eff.small_change, 0.0, 0.0, eff.small_change], 4)
                # a jump moves R4 towards the middle of the scale, so clipping never shrinks it
                r4 = np.where(jumps, np.where(final < 3, final + eff.jump, final - eff.jump),
                              np.clip(final + small, 1, 5))
                r4 = np.round(r4, 1)
                rounds = {5: final, 4: r4}
                for r in (3, 2, 1):
                    rounds[r] = _clip(r4 + eff.round_drift * (4 - r) / 3 * rng.choice([-1, 1]) * rng.uniform(0.5, 1.5, 4))
                tracks = [("evaluator", r, rounds[r]) for r in (1, 2, 3, 4, 5)]
                tracks.append(("validator_blind", 1, _clip(final + rng.normal(0, eff.validator_sd, 4))))
                tracks.append(("validator_review", 1, _clip(final + rng.normal(0, eff.review_sd, 4))))
                for track, rnd, sc in tracks:
                    failed = rng.random() < eff.failure_rate
                    conf = rng.integers(3, 6, 4).astype(float)
                    evid = rng.integers(2, 6, 4).astype(float)
                    for c, v in (("story_id", st.story_id), ("category", st.category), ("tier", st.tier),
                                 ("layer", layer), ("mode", mode), ("track", track), ("round", rnd),
                                 ("status", "failed" if failed else "ok")):
                        cols[c].extend([v] * 4)
                    cols["dimension"].extend(dims)
                    nan4 = [np.nan] * 4
                    cols["score"].extend(nan4 if failed else list(sc.astype(float)))
                    cols["confidence"].extend(nan4 if failed else list(conf))
                    cols["evidence_strength"].extend([""] * 4 if failed else [EVIDENCE_LABELS[int(e)] for e in evid])
    rows = pd.DataFrame(cols)
    rows["evidence"] = np.where(rows["status"] == "ok", "synthetic evidence", "")
    rows["r4_score_changed"] = False
    rows["truncated"] = _truncation_flags(rows, eff.truncated_share, rng)
    ev = rows["track"] == "evaluator"
    key = ["story_id", "layer", "mode", "dimension"]
    r3 = rows[ev & (rows["round"] == 3)].set_index(key)["score"]
    r4 = rows[ev & (rows["round"] == 4)].set_index(key)["score"]
    changed = (r4 - r3.reindex(r4.index)).abs().gt(0).rename("chg").reset_index()
    rows = rows.merge(changed, on=key, how="left")
    rows["r4_score_changed"] = (rows["chg"].fillna(False).astype(bool) & ev & (rows["round"] == 4))
    rows = rows.drop(columns="chg")
    rows["backend"] = SYNTHETIC_BACKEND
    rows["model"] = SYNTHETIC_MODEL
    rows["template_version"] = "synthetic-v1"
    rows["profile"] = profile
    rows["round"] = rows["round"].astype(int)
    return rows[list(ROW_COLUMNS)]


def _truncation_flags(rows: pd.DataFrame, share: float, rng: np.random.Generator) -> np.ndarray:
    """Per row: True for the rows of exactly ``round(share * n)`` of the n content-mode evaluations."""
    if not 0 <= share <= 1:
        raise ValueError(f"truncated_share must be in [0, 1], got {share}")
    keys = ["story_id", "layer", "mode"]
    content = rows.loc[rows["mode"] == "content", keys].drop_duplicates()
    n_cut = int(round(share * len(content)))
    cut = content.iloc[np.sort(rng.choice(len(content), n_cut, replace=False))] if n_cut else content.iloc[:0]
    return rows[keys].merge(cut.assign(_cut=True), on=keys, how="left")["_cut"].fillna(False).to_numpy(bool)


def synthetic_summary(rows: pd.DataFrame, seed: int = 20240601) -> pd.DataFrame:
    """The per-evaluation summary (schema of ``sage_summary_L4.parquet``) derived from ``rows``."""
    rng = np.random.default_rng(seed + 1)
    keys = ["story_id", "category", "tier", "layer", "mode"]
    ev = rows[rows["track"] == "evaluator"]
    r5 = ev[ev["round"] == 5].set_index(keys + ["dimension"])["score"]
    r4 = ev[ev["round"] == 4].set_index(keys + ["dimension"])["score"]
    vb = rows[rows["track"] == "validator_blind"].set_index(keys + ["dimension"])["score"]
    complete = lambda s: s.mean() if s.notna().all() else np.nan  # noqa: E731
    out = pd.DataFrame({
        "overall_score": r5.groupby(level=keys, sort=False).agg(complete),
        "validator_blind_overall": vb.groupby(level=keys, sort=False).agg(complete),
        "eval_validator_mad": (vb - r5).abs().groupby(level=keys, sort=False).mean(),
        "max_r4_r5_change": (r5 - r4).abs().groupby(level=keys, sort=False).max(),
    })
    failed = rows.assign(f=rows["status"].ne("ok")).groupby(keys + ["track", "round"], sort=False)["f"].any()
    out["n_failures"] = failed.groupby(level=keys, sort=False).sum().astype(int)
    out["truncated"] = rows.groupby(keys, sort=False)["truncated"].any()
    out = out.reset_index()
    mad = out["eval_validator_mad"]
    out["trust_level"] = np.where(mad < 0.5, "high", np.where(mad < 1.0, "medium", "low"))
    out["status"] = np.where(out["n_failures"] > 0, "failed", "ok")
    out["n_repairs"] = rng.poisson(0.1, len(out)).astype(int)
    out["knows_work"] = [(c == "canonical") if m == "title" else None for c, m in zip(out["category"], out["mode"])]
    for col in ("backend", "model", "profile"):
        out[col] = rows[col].iloc[0] if len(rows) else None
    return out[list(SUMMARY_COLUMNS)]


def write_synthetic_interim(directory: str | Path, n_per_category: dict | None = None, layers=LAYERS,
                            effects: SyntheticEffects | None = None, seed: int = 20240601,
                            profile: str = "synthetic") -> list[Path]:
    """Write ``sage_rows_<layer>.parquet`` and ``sage_summary_<layer>.parquet`` for each layer
    through :func:`judgelab.interim.write` (so synthetic rows meet the same contract as real ones)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    rows = synthetic_rows(n_per_category, layers, effects=effects, seed=seed, profile=profile)
    summary = synthetic_summary(rows, seed)
    out = []
    for layer in layers:
        for name, df in (("rows", rows), ("summary", summary)):
            out.append(interim.write(df[df["layer"] == layer].reset_index(drop=True), f"sage_{name}_{layer}", directory))
    return out


def rows_from_records(records, backend: str = SYNTHETIC_BACKEND, model: str = SYNTHETIC_MODEL) -> pd.DataFrame:
    """Schema-complete rows from compact records (hand-worked examples in tests and lessons).

    Each record needs story_id, layer, mode, track, round, dimension, score; category defaults to
    ``canonical``, tier to ``""``, status to ``ok`` (``failed`` when the score is None/NaN, which
    stays NaN). Everything else gets a neutral default.
    """
    df = pd.DataFrame.from_records(list(records))
    defaults = {"category": "canonical", "tier": "", "confidence": 4.0, "evidence_strength": "moderate",
                "evidence": "", "r4_score_changed": False, "truncated": False, "backend": backend,
                "model": model, "template_version": "hand-v1", "profile": "test"}
    for col, val in defaults.items():
        if col not in df.columns:
            df[col] = val
    df["score"] = pd.to_numeric(df["score"], errors="coerce").astype(float)
    if "status" not in df.columns:
        df["status"] = np.where(df["score"].isna(), "failed", "ok")
    df["round"] = df["round"].astype(int)
    return df[list(ROW_COLUMNS)]


def evaluation_records(story_id: str, layer: str, mode: str, rounds: dict, category: str = "canonical",
                       tier: str = "", validator_blind=None, validator_review=None, dimensions=None,
                       truncated: bool = False):
    """Records for one evaluation: ``rounds = {round: [score per dimension]}`` plus validator scores;
    ``truncated`` flags all its rows (the content-limit text was cut to head + tail)."""
    dims = list(dimensions or DIMENSIONS[layer])
    recs = []

    def add(track, rnd, scores):
        for dim, s in zip(dims, scores):
            recs.append({"story_id": story_id, "category": category, "tier": tier, "layer": layer, "mode": mode,
                         "track": track, "round": rnd, "dimension": dim, "score": s, "truncated": truncated})

    for rnd, scores in rounds.items():
        add("evaluator", rnd, scores)
    if validator_blind is not None:
        add("validator_blind", 1, validator_blind)
    if validator_review is not None:
        add("validator_review", 1, validator_review)
    return recs
