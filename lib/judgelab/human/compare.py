"""A judge against people: rank correlations with bootstrap CIs
(:func:`judgelab.stats.correlation.bootstrap_correlation`), the human ceiling, rankings.

The judge against a story's *mean* rating over its k raters is NOT comparable with a human
ceiling (a rater's correlation with the mean of k - 1 others): a judge exactly as noisy as one
person "beat" that ceiling in 71% of simulations at k = 2 (tests/test_human_compare.py). The
like-for-like comparison (:func:`like_for_like`) puts the judge in a rater's place: with m_{-r}(s)
the mean of the raters other than r on the judged stories r shares with them,

    human_loo = mean_r corr(x_r(s), m_{-r}(s)),    judge_loo = mean_r corr(j(s), m_{-r}(s)),

over the raters with both defined; a judge exchangeable with one rater has judge_loo > human_loo
in half of the samples, and ``loo_gap`` = judge_loo - human_loo (cluster bootstrap over stories).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from judgelab.human.reliability import check_tidy, rating_matrix
from judgelab.stats import rules
from judgelab.stats.bootstrap import cluster_bootstrap
from judgelab.stats.correlation import ROW_STATISTICS, bootstrap_correlation, correlation

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
    """Spearman and Kendall correlation of the complete pairs with seeded percentile-bootstrap CIs,
    one flat record: ``n``; per method the estimate, ``_p`` (two-sided), ``_lo``/``_hi``,
    ``_n_boot_valid``; ``note`` says why everything is NaN."""
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


# ----------------------------------------------------------------------------- like for like

def loo_references(tidy: pd.DataFrame, criterion: str) -> pd.DataFrame:
    """Per rating of a story rated twice or more: the mean of the story's *other* ratings."""
    m = rating_matrix(tidy, criterion)
    total, count = m.sum(axis=1, min_count=1), m.count(axis=1)
    m = m.rename_axis(index="story", columns="rater")
    long = m.reset_index().melt(id_vars="story", var_name="rater", value_name="rating").dropna(subset=["rating"])
    long = long[long["story"].map(count) > 1].copy()
    long["reference"] = (long["story"].map(total) - long["rating"]) / (long["story"].map(count) - 1)
    return long[["rater", "story", "rating", "reference"]].reset_index(drop=True)


def _loo_means(frame: pd.DataFrame, method: str) -> dict[str, float]:
    """human_loo, judge_loo, loo_gap and n_raters of :func:`like_for_like` on one sample."""
    fn = ROW_STATISTICS[method]
    human, judge = [], []
    for _, g in frame.groupby("rater", sort=False):
        if len(g) < rules.MIN_PAIRS:
            continue
        ref = g["reference"].to_numpy(float)
        h = fn(g["rating"].to_numpy(float), ref)[0]
        j = fn(g["judge"].to_numpy(float), ref)[0]
        if np.isfinite(h) and np.isfinite(j):
            human.append(h)
            judge.append(j)
    if not human:
        return {"human_loo": np.nan, "judge_loo": np.nan, "loo_gap": np.nan, "n_raters": 0}
    h, j = float(np.mean(human)), float(np.mean(judge))
    return {"human_loo": h, "judge_loo": j, "loo_gap": j - h, "n_raters": len(human)}


def loo_frame(judge: pd.Series, tidy: pd.DataFrame, criterion: str) -> pd.DataFrame:
    """:func:`loo_references` of the judged stories with the judge's score beside."""
    refs = loo_references(tidy, criterion)
    j = pd.to_numeric(judge, errors="coerce").dropna()
    frame = refs.merge(j.rename("judge"), left_on="story", right_index=True, how="inner")
    for col in ("rating", "reference", "judge"):
        v = frame[col].to_numpy(float)
        frame[col] = rules.snap(v, rules.tolerance(v))
    return frame


def like_for_like(judge: pd.Series, tidy: pd.DataFrame, criterion: str, *, method: str = "spearman",
                  n_boot: int = 2000, ci: float = 0.95, seed: int = 0) -> dict[str, float]:
    """The judge in a rater's place (module docstring): ``human_loo``, ``judge_loo``, ``loo_gap``
    with cluster-bootstrap CIs over stories, ``loo_n_raters``, ``loo_n_stories``, ``loo_note``.
    ``judge``: score per story (NaN = a failed judgement, left out)."""
    frame = loo_frame(judge, tidy, criterion)
    est = _loo_means(frame, method)
    out = {"loo_n_raters": est["n_raters"], "loo_n_stories": int(frame["story"].nunique())}
    if not est["n_raters"]:
        note = "no rater has >= 3 judged stories shared with another rater and both correlations defined"
        return {**out, **{f"{k}{s}": np.nan for k in ("human_loo", "judge_loo", "loo_gap")
                          for s in ("", "_ci_low", "_ci_high")}, "loo_note": note}
    stat = (lambda f: {k: v for k, v in _loo_means(f, method).items() if k != "n_raters"})
    boot = cluster_bootstrap(frame, stat, cluster="story", n_boot=n_boot, ci=ci, seed=seed).set_index("statistic")
    for k in ("human_loo", "judge_loo", "loo_gap"):
        out.update({k: est[k], f"{k}_ci_low": boot.at[k, "ci_low"], f"{k}_ci_high": boot.at[k, "ci_high"]})
    out["loo_ci_method"] = boot["ci_method"].iloc[0]
    out["loo_note"] = rules.join(*boot["note"].unique())
    return out


def judge_vs_human(scores: pd.DataFrame, tidy: pd.DataFrame, ceiling: pd.DataFrame | None = None,
                   mapping: Iterable[CriterionMap] = CRITERION_MAP, *, n_boot: int = 2000,
                   ci: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """One row per mapped comparison present in ``scores`` (dataset, story, measure, score; NaN
    dropped pairwise) against ``tidy`` (the human ratings, derived criteria added): correlations
    with CIs, the like-for-like columns of :func:`like_for_like`, and ``ceiling_spearman`` /
    ``ceiling_kendall`` from ``ceiling`` (:func:`judgelab.human.reliability.reliability_table`, over
    every rated story: context only, not the comparison)."""
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
        story_scores = scores[(scores["dataset"] == m.dataset) & (scores["measure"] == m.measure)]
        sub = tidy[tidy["dataset"] == m.dataset]
        row.update(like_for_like(story_scores.set_index("story")["score"], sub, m.criterion,
                                 n_boot=n_boot, ci=ci, seed=seed))
        row.update({"n_boot": n_boot, "ci": ci, "seed": seed, "unit": "story",
                    "ci_method": f"paired percentile bootstrap over stories (B={n_boot}, seed={seed})"})
        rows.append(row)
    return pd.DataFrame(rows)


def source_rankings(scores: pd.DataFrame, tidy: pd.DataFrame, dataset: str, measure: str,
                    criterion: str) -> pd.DataFrame:
    """Per source: judged stories, mean human and judge score, their ranks (1 = best)."""
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
