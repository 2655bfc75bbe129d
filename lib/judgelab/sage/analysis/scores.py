"""From the tidy SAGE evaluation rows (one score per story x layer x mode x track x round x
dimension, CONTRIBUTING.md) to the scores the statistics use: final dimension scores, story scores
(the paper's per-evaluation "overall score", the unit of Tables 9-11) and per-round scores.
Failed rows carry no score: dropped here, counted by ``reliability.failure_accounting``.

The story, not the story x mode evaluation, is the independent unit (docs/design.md, principle
12), so every genre test, effect size and cross-layer correlation is reported per analysis
(:data:`ANALYSES`): ``"story"`` (the main rows: the mean of a story's modes), ``"content"`` /
``"title"`` (one mode), and ``"story_x_mode"``, the paper's reading (N = 200 per layer), a labelled
sensitivity row whose p-values count a story's two modes as two stories. Intervals: a seeded
cluster bootstrap over stories (within category where groups are compared; B per profile in
``[<profile>.sage_bootstrap]``), analytic ones where exact for independent units.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

from judgelab import profiles
from judgelab.sage import CATEGORIES, LAYERS, MODES
from judgelab.sage.protocol.schemas import SCALE_NOTE

TRACKS = ("evaluator", "validator_blind", "validator_review")
VALIDATOR_TRACKS = ("validator_blind", "validator_review")
TIERS = ("high", "average", "low")
ROUNDS = (1, 2, 3, 4, 5)

ROW_COLUMNS = (
    "story_id", "category", "tier", "layer", "mode", "track", "round", "dimension", "score",
    "confidence", "evidence_strength", "evidence", "status", "r4_score_changed", "truncated",
    "backend", "model", "template_version", "profile",
)
SUMMARY_COLUMNS = (
    "story_id", "category", "tier", "layer", "mode", "overall_score", "validator_blind_overall",
    "eval_validator_mad", "max_r4_r5_change", "trust_level", "status", "n_repairs", "n_failures",
    "knows_work", "truncated", "backend", "model", "profile",
)
STORY_KEYS = ["story_id", "category", "tier", "layer", "mode"]


TRUNCATION_NOTE = "content-limit texts cut to head + tail: scores are of excerpts"
"""What ``share_truncated`` > 0 means for a table row: the judge read an excerpt."""


class SageStatsError(ValueError):
    """Input that a SAGE statistic cannot use, with a message saying what is wrong and what to do."""


def require_columns(df: pd.DataFrame, columns: Iterable[str], what: str = "rows") -> None:
    """Raise :class:`SageStatsError` naming the missing columns (and the contract that defines them)."""
    if not isinstance(df, pd.DataFrame):
        raise SageStatsError(f"{what}: expected a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise SageStatsError(
            f"{what} lack column(s) {missing}; the schema is in CONTRIBUTING.md (interim files)."
        )


def scored(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows that carry a usable score: status ``ok`` and a finite score (failed rows are never scored)."""
    require_columns(rows, ["status", "score"])
    ok = rows["status"].eq("ok") & np.isfinite(pd.to_numeric(rows["score"], errors="coerce"))
    out = rows.loc[ok].copy()
    out["score"] = out["score"].astype(float)
    return out


def final_scores(rows: pd.DataFrame, track: str = "evaluator", final_round: int = 5) -> pd.DataFrame:
    """Final dimension scores of one track: the evaluator's Round 5 (paper, "Iterative
    Evaluator"); a validator track's single score (``round == 1``)."""
    require_columns(rows, STORY_KEYS + ["track", "round", "dimension", "score", "status"])
    if track not in TRACKS:
        raise SageStatsError(f"unknown track {track!r}; choose one of {', '.join(TRACKS)}")
    rnd = final_round if track == "evaluator" else 1
    sub = scored(rows[(rows["track"] == track) & (rows["round"] == rnd)])
    return sub[STORY_KEYS + ["dimension", "score"]].reset_index(drop=True)


def story_scores(rows: pd.DataFrame, track: str = "evaluator", complete_only: bool = True,
                 final_round: int = 5) -> pd.DataFrame:
    """One score per story x layer x mode: the mean of its final dimension scores; with
    ``complete_only`` an evaluation missing a dimension (a failed reply) gives none."""
    final = final_scores(rows, track, final_round)
    # the number of dimensions a complete evaluation has, per layer, from all rows of that layer
    expected = rows.groupby("layer")["dimension"].nunique()
    g = final.groupby(STORY_KEYS, dropna=False)["score"]
    out = g.agg(score="mean", n_dimensions="count").reset_index()
    if complete_only and len(out):
        out = out[out["n_dimensions"] >= out["layer"].map(expected)]
    return with_truncation(out.reset_index(drop=True), rows)


def evaluation_truncation(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per evaluation: ``truncated`` = True when its content-limit text was cut to head +
    tail (any of its rows says so)."""
    require_columns(rows, STORY_KEYS)
    if "truncated" not in rows.columns:
        return rows[STORY_KEYS].drop_duplicates().assign(truncated=False).reset_index(drop=True)
    flags = rows["truncated"].fillna(False).astype(bool)
    return flags.groupby([rows[k] for k in STORY_KEYS], dropna=False).any().reset_index()


def with_truncation(frame: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (keyed by the story keys) with its evaluation's ``truncated`` flag added."""
    out = frame.drop(columns="truncated", errors="ignore").merge(
        evaluation_truncation(rows), on=STORY_KEYS, how="left")
    out["truncated"] = out["truncated"].fillna(False).astype(bool)
    return out


def share_truncated(units: pd.DataFrame, keys=STORY_KEYS) -> float:
    """Share of the distinct ``keys`` (evaluations) in ``units`` whose content text was truncated
    (NaN without rows or a ``truncated`` column)."""
    if "truncated" not in units.columns or not len(units):
        return np.nan
    keys = [k for k in keys if k in units.columns]
    ev = units.drop_duplicates(keys) if keys else units
    return float(ev["truncated"].fillna(False).astype(bool).mean())


def state_scale_and_truncation(table: pd.DataFrame, note: str = TRUNCATION_NOTE) -> pd.DataFrame:
    """Append ``truncation_note`` (``note`` where ``share_truncated`` > 0) and ``scale``: every SAGE
    table states the scale and whether its scores are of excerpts."""
    out = table.copy()
    if "share_truncated" in out.columns:
        cut = pd.to_numeric(out["share_truncated"], errors="coerce").fillna(0) > 0
        out["truncation_note"] = np.where(cut, note, "")
    out["scale"] = SCALE_NOTE
    return out


def round_scores(rows: pd.DataFrame) -> pd.DataFrame:
    """The evaluator's story score (mean over dimensions) in every round: story keys, round, score."""
    require_columns(rows, STORY_KEYS + ["track", "round", "dimension", "score", "status"])
    sub = scored(rows[rows["track"] == "evaluator"])
    out = sub.groupby(STORY_KEYS + ["round"], dropna=False)["score"].mean().reset_index()
    return with_truncation(out, rows)


def observation_units(scores: pd.DataFrame, unit: str = "story_mode") -> pd.DataFrame:
    """The observation unit of the genre statistics: ``"story_mode"`` (the paper, N = 200 per
    layer), ``"story"`` (a story's modes averaged: independent), ``"content"`` / ``"title"``."""
    require_columns(scores, STORY_KEYS + ["score"], "story scores")
    if unit == "story_mode":
        return scores.copy()
    if unit in MODES:
        return scores[scores["mode"] == unit].copy()
    if unit == "story":
        keys = ["story_id", "category", "tier", "layer"]
        agg = {"score": "mean", **({"truncated": "any"} if "truncated" in scores.columns else {})}
        # a mean of modes that includes an excerpt's score counts as truncated
        out = scores.groupby(keys, dropna=False).agg(agg).reset_index()
        out["mode"] = "mean_of_modes"
        return out
    raise SageStatsError(f"unknown unit {unit!r}; choose story_mode, story, content or title")


ANALYSES = ("story", "content", "title", "story_x_mode")
"""The analyses of every SAGE genre and cross-layer table, main first, the paper's reading last."""
UNIT_LABELS = {
    "story": "story (mean of its modes)",
    "content": "story (content mode only)",
    "title": "story (title mode only)",
    "story_x_mode": "story x mode (the paper's reading; sensitivity: a story's two modes counted as two)",
}
DEFAULT_BOOT = profiles.resolved("sage_bootstrap", "demo")[0]
"""The demo's resamples and seed: the defaults of the table functions."""


def bootstrap_knobs(profile) -> dict:
    """``{"n_boot", "boot_seed"}`` of the run's configuration ``profile`` (:func:`judgelab.config.of`;
    None: the demo values)."""
    from judgelab import config

    return dict(DEFAULT_BOOT) if profile is None else config.of(profile).knobs("sage_bootstrap")


def analysis_units(story_scores: pd.DataFrame, analysis: str) -> pd.DataFrame:
    """The observations of one analysis (module docstring) from the story x mode scores."""
    if analysis not in ANALYSES:
        raise SageStatsError(f"unknown analysis {analysis!r}; choose one of {', '.join(ANALYSES)}")
    unit = {"story": "story", "content": "content", "title": "title", "story_x_mode": "story_mode"}[analysis]
    return observation_units(story_scores, unit)


def label(frame: pd.DataFrame, analysis: str, position: int = 0) -> pd.DataFrame:
    """``frame`` with ``analysis`` and ``unit`` columns inserted at ``position``."""
    out = frame.copy()
    out.insert(position, "unit", UNIT_LABELS[analysis])
    out.insert(position, "analysis", analysis)
    return out


def unit_counts(units: pd.DataFrame) -> pd.DataFrame:
    """Observations per layer (rows) and category (columns), 0 where none: what each test rests on."""
    require_columns(units, ["layer", "category", "score"], "observation units")
    return units.groupby(["layer", "category"]).size().rename("n").unstack(fill_value=0)


def provenance_of(frame: pd.DataFrame) -> tuple[str | None, str | None]:
    """The backend and model that produced a frame's rows ("a+b" when several)."""
    def joined(col):
        if col not in frame.columns:
            return None
        vals = sorted(str(v) for v in frame[col].dropna().unique())
        return "+".join(vals) if vals else None
    return joined("backend"), joined("model")


KNOWN_LEVELS = {"layer": LAYERS, "category": CATEGORIES, "mode": MODES, "tier": TIERS}


def sort_groups(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Sort by the ``by`` columns in their natural order (L4<L5<L6; canonical<pulp<llm; ...)."""
    if df.empty or not by:
        return df.reset_index(drop=True)
    keys = {}
    for col in by:
        if col in KNOWN_LEVELS:
            order = {v: i for i, v in enumerate(KNOWN_LEVELS[col])}
            keys[col] = df[col].map(lambda v: order.get(v, len(order)))
        else:
            keys[col] = df[col].astype(str)
    idx = pd.DataFrame(keys).sort_values(list(keys)).index
    return df.loc[idx].reset_index(drop=True)


def by_columns(by) -> list[str]:
    """``by`` (None, one column or several) as a list of columns."""
    if by is None:
        return []
    return [by] if isinstance(by, str) else list(by)


def iter_groups(df: pd.DataFrame, by: list[str]):
    """Yield ``(key, sub_frame)`` for every group of ``by``, *including expected empty ones*: when
    every ``by`` column has known levels the groups are their product (natural order), so a
    missing layer or category yields an empty frame and a row that says so."""
    if not by:
        yield {}, df
        return
    if all(c in KNOWN_LEVELS for c in by):
        axes = []
        for c in by:
            seen = list(pd.Series(df[c]).dropna().unique()) if c in df else []
            axes.append(list(KNOWN_LEVELS[c]) + [v for v in seen if v not in KNOWN_LEVELS[c]])
        keys = list(pd.MultiIndex.from_product(axes, names=by))
    else:
        keys = list(df.groupby(by, dropna=False, sort=False).groups.keys()) if len(df) else []
        keys = [k if isinstance(k, tuple) else (k,) for k in keys]
    for k in keys:
        key = dict(zip(by, k))
        mask = np.ones(len(df), bool)
        for c, v in key.items():
            mask &= (df[c] == v).to_numpy() if not (isinstance(v, float) and np.isnan(v)) else df[c].isna().to_numpy()
        yield key, df.loc[mask]


def no_rows_note(key: dict) -> str:
    """The message for a group without data, e.g. ``no rows for layer=L5, category=llm``."""
    return "no rows for " + ", ".join(f"{c}={v}" for c, v in key.items()) if key else "no rows"
