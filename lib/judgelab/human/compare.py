"""A judge against people: rank correlations with bootstrap CIs, the human ceiling, rankings.

Statistics

- Spearman's rho: the Pearson correlation of the ranks (average ranks for ties).
- Kendall's tau-b: tau_b = sum_{i<j} sgn(x_i - x_j) sgn(y_i - y_j) /
  sqrt(sum_{i<j} sgn(x_i - x_j)^2 * sum_{i<j} sgn(y_i - y_j)^2)  (Kendall 1945, ties corrected).
  Point estimates and p-values come from :func:`scipy.stats.spearmanr` / :func:`scipy.stats.kendalltau`
  (through :mod:`judgelab.stats.correlation`).
- Confidence intervals: the seeded paired percentile bootstrap (Efron & Tibshirani 1993, ch. 13):
  resample the n (judge, human) pairs with replacement B times, recompute the statistic, and
  take the (1 - ci)/2 and (1 + ci)/2 quantiles. Resamples in which one side is constant have no
  correlation; they are dropped and counted (``n_boot_valid``). All of it is
  :func:`judgelab.stats.correlation.bootstrap_correlation`; this module lays its rows out as the
  appendix's tables.

The human side of each pair is the *mean* rating of a story over its raters. The human-human
ceiling is the mean leave-one-rater-out correlation of :mod:`judgelab.human.reliability`: how well
one person agrees with the rest of the panel. A judge whose correlation with the panel mean
reaches it agrees with people about as well as people agree with each other.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from judgelab.human.reliability import check_tidy
from judgelab.stats.correlation import bootstrap_correlation, correlation

JUDGE_SCORE_COLUMNS: tuple[str, ...] = ("dataset", "story", "measure", "score")
"""Columns of a judge-score table: one score per (dataset, story, judge measure)."""


@dataclass(frozen=True)
class CriterionMap:
    """One comparison that makes sense: a judge measure against a human criterion, and why."""

    dataset: str
    measure: str
    criterion: str
    rationale: str


CRITERION_MAP: tuple[CriterionMap, ...] = (
    # A Confederacy of Models: 10 rubric items rated 0-10; "overall" = their mean per rater.
    CriterionMap("confederacy", "holistic", "overall", "overall quality vs mean of the 10 rubric items"),
    CriterionMap("confederacy", "holistic", "readability", "overall quality vs fluency"),
    CriterionMap("confederacy", "holistic", "plot_logic", "overall quality vs coherence (plot logic)"),
    CriterionMap("confederacy", "holistic", "creativity", "overall quality vs originality (creativity)"),
    CriterionMap("confederacy", "holistic", "jkt_style", "overall quality vs style (John Kennedy Toole)"),
    CriterionMap("confederacy", "sage_l5_overall", "overall", "L5 overall vs mean of the 10 rubric items"),
    CriterionMap("confederacy", "sage_l5_enc", "plot_logic", "emotional-narrative coherence vs plot logic"),
    CriterionMap("confederacy", "sage_l5_pi", "accurate_characters", "psychological interiority vs faithful characters"),
    # Art or Artifice: 14 Yes/No tests; "tests_passed" = number passed per expert (0-14).
    CriterionMap("artifice", "holistic", "tests_passed", "overall quality vs number of TTCW tests passed"),
    CriterionMap("artifice", "holistic", "understandability_and_coherence", "overall quality vs coherence test"),
    CriterionMap("artifice", "holistic", "originality_in_thought", "overall quality vs originality test"),
    CriterionMap("artifice", "sage_l5_overall", "tests_passed", "L5 overall vs number of TTCW tests passed"),
    CriterionMap("artifice", "sage_l5_ac", "emotional_flexibility", "affective complexity vs emotional flexibility"),
    CriterionMap("artifice", "sage_l5_pi", "character_development", "psychological interiority vs character development"),
    CriterionMap("artifice", "sage_l5_enc", "understandability_and_coherence", "emotional-narrative coherence vs coherence test"),
)
"""The judge-measure / human-criterion pairs reported by notebook 11 (edit here to add one)."""


# ----------------------------------------------------------------------------- statistics

RANK_METHODS = ("spearman", "kendall")


def bootstrap_rank_correlation(x: Sequence[float], y: Sequence[float], *, n_boot: int = 2000,
                               ci: float = 0.95, seed: int = 0, batch: int = 500) -> dict[str, float]:
    """Spearman and Kendall correlation of paired data with seeded percentile-bootstrap CIs
    (:func:`judgelab.stats.correlation.bootstrap_correlation`), as one flat record.

    Pairs with a missing side are dropped. Returns ``n``, and for each of ``spearman`` and
    ``kendall``: the estimate, ``_p`` (scipy's two-sided p-value), ``_lo``/``_hi`` (the CI) and
    ``_n_boot_valid``; ``note`` says why everything is NaN (fewer than 3 pairs, a constant side).
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-D and of equal length, got {x.shape} and {y.shape}")
    res = bootstrap_correlation(x, y, methods=RANK_METHODS, n_boot=n_boot, ci=ci, seed=seed,
                                batch=batch).set_index("method")
    out: dict[str, float] = {"n": int(res["n"].iloc[0])}
    for name in RANK_METHODS:
        r = res.loc[name]
        out.update({name: r["r"], f"{name}_p": r["p"], f"{name}_lo": r["ci_low"], f"{name}_hi": r["ci_high"],
                    f"{name}_n_boot_valid": int(r["n_boot_valid"])})
    out["note"] = res["note"].iloc[0]
    return out


# ----------------------------------------------------------------------------- tables

def human_means(tidy: pd.DataFrame) -> pd.DataFrame:
    """Mean human rating per (dataset, story, source, criterion), with the number of ratings."""
    check_tidy(tidy)
    return (tidy.groupby(["dataset", "story", "source", "criterion"], sort=False)["value"]
            .agg(human_mean="mean", n_ratings="count").reset_index())


def check_judge_scores(scores: pd.DataFrame) -> pd.DataFrame:
    """Raise a ValueError naming missing columns or duplicated (dataset, story, measure)."""
    missing = [c for c in JUDGE_SCORE_COLUMNS if c not in scores.columns]
    if missing:
        raise ValueError(f"judge scores: missing column(s) {missing}; expected {list(JUDGE_SCORE_COLUMNS)}")
    dup = scores.duplicated(["dataset", "story", "measure"])
    if dup.any():
        r = scores[dup].iloc[0]
        raise ValueError(f"judge scores: story {r.story} of {r.dataset} has two {r.measure} scores")
    return scores


def paired(scores: pd.DataFrame, means: pd.DataFrame, dataset: str, measure: str, criterion: str) -> pd.DataFrame:
    """(story, source, score, human_mean) of one comparison, stories with a judge score only."""
    j = scores[(scores["dataset"] == dataset) & (scores["measure"] == measure)][["story", "score"]]
    h = means[(means["dataset"] == dataset) & (means["criterion"] == criterion)][["story", "source", "human_mean"]]
    return j.merge(h, on="story", how="inner")


def judge_vs_human(scores: pd.DataFrame, tidy: pd.DataFrame, ceiling: pd.DataFrame | None = None,
                   mapping: Iterable[CriterionMap] = CRITERION_MAP, *, n_boot: int = 2000,
                   ci: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """One row per mapped comparison present in ``scores``: correlations with CIs and the ceiling.

    ``scores``: (dataset, story, measure, score), NaN for a failed judgement (dropped pairwise).
    ``tidy``: the human ratings (with any derived criteria such as ``overall`` already added).
    ``ceiling``: :func:`judgelab.human.reliability.reliability_table` output; its
    ``loo_spearman_mean`` / ``loo_kendall_mean`` become ``ceiling_spearman`` / ``ceiling_kendall``.
    """
    check_judge_scores(scores)
    means = human_means(tidy)
    rows = []
    for m in mapping:
        if not ((scores["dataset"] == m.dataset) & (scores["measure"] == m.measure)).any():
            continue
        if not ((means["dataset"] == m.dataset) & (means["criterion"] == m.criterion)).any():
            raise ValueError(f"{m.dataset}: no human criterion {m.criterion!r} for judge measure {m.measure!r}")
        pair = paired(scores, means, m.dataset, m.measure, m.criterion)
        res = bootstrap_rank_correlation(pair["score"], pair["human_mean"], n_boot=n_boot, ci=ci, seed=seed)
        row = {"dataset": m.dataset, "measure": m.measure, "criterion": m.criterion,
               "rationale": m.rationale, "n_scored": int(pair["score"].notna().sum()),
               "n_failed": int(pair["score"].isna().sum()), **res}
        if ceiling is not None:
            c = ceiling[(ceiling["dataset"] == m.dataset) & (ceiling["criterion"] == m.criterion)]
            for stat in ("spearman", "kendall"):
                row[f"ceiling_{stat}"] = float(c[f"loo_{stat}_mean"].iloc[0]) if len(c) else np.nan
        row.update({"n_boot": n_boot, "ci": ci, "seed": seed})
        rows.append(row)
    return pd.DataFrame(rows)


def source_rankings(scores: pd.DataFrame, tidy: pd.DataFrame, dataset: str, measure: str,
                    criterion: str) -> pd.DataFrame:
    """Sources (models, humans) ranked by people and by the judge, over the judged stories.

    One row per source: number of judged stories, mean human rating and mean judge score over
    them, and the two ranks (1 = best; ties get the average rank).
    """
    pair = paired(check_judge_scores(scores), human_means(tidy), dataset, measure, criterion)
    out = (pair.groupby("source")
           .agg(n_stories=("story", "size"), human_mean=("human_mean", "mean"), judge_mean=("score", "mean"))
           .reset_index())
    out["human_rank"] = out["human_mean"].rank(ascending=False, method="average")
    out["judge_rank"] = out["judge_mean"].rank(ascending=False, method="average")
    out.insert(0, "criterion", criterion)
    out.insert(0, "measure", measure)
    out.insert(0, "dataset", dataset)
    return out.sort_values("human_rank", ignore_index=True)


def ranking_agreement(rankings: pd.DataFrame) -> dict[str, float]:
    """Spearman and Kendall between the people's and the judge's source means (NaN if < 3 sources)."""
    x, y = rankings["human_mean"], rankings["judge_mean"]
    return {"n_sources": int(len(rankings)),
            **{m: correlation(x, y, method=m)["r"].item() for m in RANK_METHODS}}
