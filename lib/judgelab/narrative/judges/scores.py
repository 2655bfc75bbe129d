"""The score of a judged narrative: one summary of its K agents, used by every narrative analysis.

A narrative (a path of notebook 08, or a generated one of notebook 10) scores, per prompt mode,
``score_mean`` and ``score_sd`` (ddof = 1) over the agents whose call succeeded, with
``n_agents`` and ``n_failed``. A failed call is counted, never scored; a narrative whose every
agent failed keeps its row (``score_mean`` NaN, ``n_agents`` 0), so the failures show.
"""
from __future__ import annotations

from typing import Sequence

import pandas as pd

NARRATIVE_KEYS: tuple[str, ...] = ("collection", "pair_id", "method")
"""The columns naming one narrative of notebook 08."""

SCORE_KEYS: tuple[str, ...] = NARRATIVE_KEYS + ("mode",)
"""One narrative in one prompt mode: the unit that :func:`narrative_scores` summarises."""

SUMMARY_COLUMNS: tuple[str, ...] = ("score_mean", "score_sd", "n_agents", "n_failed")


def narrative_scores(scores: pd.DataFrame, keys: Sequence[str] = SCORE_KEYS) -> pd.DataFrame:
    """One row per distinct ``keys`` (sorted) of the agent calls in ``scores``: ``score_mean``,
    ``score_sd`` (ddof = 1), ``n_agents``, ``n_failed`` (without ``status``, a score is ok)."""
    missing = [c for c in [*keys, "score"] if c not in scores.columns]
    if missing:
        raise KeyError(f"judge scores lack column(s) {missing}; expected the columns of narr_judge_scores.parquet")
    keys = list(keys)
    status_ok = scores["status"].eq("ok") if "status" in scores.columns else True
    ok = status_ok & scores["score"].notna()
    out = (scores.assign(_ok=ok, _score=scores["score"].where(ok))
                 .groupby(keys, sort=True)
                 .agg(score_mean=("_score", "mean"),
                      score_sd=("_score", lambda s: s.std(ddof=1)),
                      n_agents=("_ok", "sum"),
                      n_calls=("_ok", "size"))
                 .reset_index())
    out["n_agents"] = out["n_agents"].astype(int)
    out["n_failed"] = (out.pop("n_calls") - out["n_agents"]).astype(int)
    out["score_sd"] = out["score_sd"].astype(float)
    return out


def judged_paths(summary: pd.DataFrame, paths: pd.DataFrame,
                 path_cols: Sequence[str] | None = None) -> pd.DataFrame:
    """Score summaries (:func:`narrative_scores`) joined to their paths' ``path_cols`` (default:
    all but ``titles``): one row per narrative in both frames and mode, in the order of ``paths``.
    Each narrative must appear once in ``paths``."""
    keys = list(NARRATIVE_KEYS)
    cols = [c for c in paths.columns if c != "titles"] if path_cols is None else \
        keys + [c for c in path_cols if c in paths.columns and c not in keys]
    dup = paths.duplicated(keys)
    if dup.any():
        first = paths.loc[dup, keys].iloc[0].tolist()
        raise ValueError(f"paths name narrative {first} (collection, pair_id, method) more than once")
    return paths[cols].merge(summary, on=keys, how="inner", validate="one_to_many")

