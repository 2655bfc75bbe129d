"""Inter-rater reliability among the humans: the ceiling a judge can be compared with.

All functions take the tidy table of :mod:`judgelab.human` (dataset, story, source, criterion,
rater, value) and return DataFrames with named columns.

Designs. In both data sets each story is rated by a *different* subset of the raters
(Confederacy: 5 groups of 13 stories, 2 raters per group; Art or Artifice: 3 of 11 experts per
story), so:

- the intraclass correlation is the one-way random-effects model, Shrout & Fleiss (1979) case 1:
  ICC(1) = (MS_between - MS_within) / (MS_between + (k - 1) MS_within) for a single rating and
  ICC(1,k) = (MS_between - MS_within) / MS_between for the mean of the k ratings of a story
  (McGraw & Wong 1996, "ICC1"/"ICC1k"). It is computed by :func:`pingouin.intraclass_corr` with
  the k ratings of each story as its rating "slots" (the raters sorted by name);
- Krippendorff's alpha, alpha = 1 - D_o / D_e (observed over expected disagreement;
  Krippendorff 2004, *Content Analysis*, ch. 11; Hayes & Krippendorff 2007), is computed by
  :func:`krippendorff.alpha` on the full raters x stories matrix, missing cells allowed;
- the leave-one-rater-out correlation (:func:`leave_one_rater_out`) correlates each rater with
  the mean of the other raters over the stories they share; its mean over raters is how well one
  person agrees with the rest of the panel — the human-human ceiling that a judge's correlation
  with the panel mean is set against (cf. the "human ceiling" of Chiang & Lee 2023, "Can Large
  Language Models Be an Alternative to Human Evaluations?", ACL).
"""
from __future__ import annotations

from typing import Sequence

import krippendorff
import numpy as np
import pandas as pd
import pingouin as pg
from scipy import stats

from . import TIDY_COLUMNS

ALPHA_LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")


def check_tidy(tidy: pd.DataFrame, what: str = "ratings") -> pd.DataFrame:
    """Raise a ValueError naming the missing columns or duplicated ratings; return ``tidy``."""
    missing = [c for c in TIDY_COLUMNS if c not in tidy.columns]
    if missing:
        raise ValueError(f"{what}: missing column(s) {missing}; expected {list(TIDY_COLUMNS)}")
    dup = tidy.duplicated(["dataset", "story", "criterion", "rater"])
    if dup.any():
        r = tidy[dup].iloc[0]
        raise ValueError(f"{what}: rater {r.rater} rated story {r.story} on {r.criterion} more than once")
    return tidy


def add_overall(tidy: pd.DataFrame, name: str = "overall", how: str = "mean") -> pd.DataFrame:
    """Append one derived criterion per (story, rater): the ``mean`` or ``sum`` over its criteria.

    Confederacy's "Total" is the sum of the 10 rubric items; its ``mean`` keeps the 0–10 scale.
    For Art or Artifice the ``sum`` of the 0/1 verdicts is the number of tests passed (0–14), the
    paper's per-story quality score. A (story, rater) missing any criterion raises ValueError.
    """
    check_tidy(tidy)
    if how not in ("mean", "sum"):
        raise ValueError(f"how must be 'mean' or 'sum', not {how!r}")
    base = tidy[tidy["criterion"] != name]
    n_crit = base.groupby("dataset")["criterion"].nunique()
    keys = ["dataset", "story", "source", "rater"]
    agg = base.groupby(keys, sort=False)["value"].agg([how, "count"]).reset_index()
    short = agg[agg["count"] != agg["dataset"].map(n_crit)]
    if len(short):
        r = short.iloc[0]
        raise ValueError(f"{r.dataset}: rater {r.rater} rated story {r.story} on {r['count']} of "
                         f"{n_crit[r.dataset]} criteria; cannot form {name!r}")
    agg = agg.rename(columns={how: "value"}).assign(criterion=name)
    return pd.concat([base, agg[list(TIDY_COLUMNS)]], ignore_index=True)


def rating_matrix(tidy: pd.DataFrame, criterion: str) -> pd.DataFrame:
    """Stories x raters matrix of one criterion (NaN where a rater did not rate a story)."""
    sub = tidy[tidy["criterion"] == criterion]
    if sub.empty:
        raise ValueError(f"no ratings for criterion {criterion!r}")
    return sub.pivot(index="story", columns="rater", values="value")


def slot_table(tidy: pd.DataFrame) -> pd.DataFrame:
    """Add ``slot`` = 1..k: the position of each rating among its story's ratings (raters sorted).

    In a design where each story has its own raters, the slots play the part of pingouin's
    ``raters`` column for the one-way ICC (whose value does not depend on slot order).
    """
    out = tidy.sort_values(["criterion", "story", "rater"]).copy()
    out["slot"] = out.groupby(["criterion", "story"]).cumcount() + 1
    return out


def icc_oneway(tidy: pd.DataFrame, criterion: str) -> dict[str, float]:
    """ICC(1) and ICC(1,k) of one criterion with 95% CIs (pingouin), plus k and the story count.

    Stories with fewer than k ratings are dropped by pingouin (``nan_policy="omit"``).
    """
    sub = slot_table(tidy[tidy["criterion"] == criterion])
    k = int(sub.groupby("story")["slot"].max().max())
    res = pg.intraclass_corr(data=sub, targets="story", raters="slot", ratings="value",
                             nan_policy="omit").set_index("Type")
    ci_col = next(c for c in res.columns if c.startswith("CI95"))  # "CI95%" before pingouin 0.7
    out = {"k": k, "n_stories": int(sub["story"].nunique())}
    # pingouin >= 0.7 labels the one-way forms ICC(1,1)/ICC(1,k); earlier versions ICC1/ICC1k
    for types, key in ((("ICC(1,1)", "ICC1"), "icc1"), (("ICC(1,k)", "ICC1k"), "icc1k")):
        typ = next(t for t in types if t in res.index)
        lo, hi = res.at[typ, ci_col]
        out.update({key: float(res.at[typ, "ICC"]), f"{key}_lo": float(lo), f"{key}_hi": float(hi)})
    return out


def alpha(tidy: pd.DataFrame, criterion: str, level: str = "interval") -> float:
    """Krippendorff's alpha of one criterion over the raters x stories matrix (missing allowed)."""
    if level not in ALPHA_LEVELS:
        raise ValueError(f"level must be one of {ALPHA_LEVELS}, not {level!r}")
    m = rating_matrix(tidy, criterion)
    return float(krippendorff.alpha(reliability_data=m.T.to_numpy(dtype=float), level_of_measurement=level))


def rank_corr(x: np.ndarray, y: np.ndarray, method: str = "spearman") -> float:
    """Spearman's rho or Kendall's tau-b (scipy); NaN when fewer than 3 pairs or a constant side."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y = x[ok], y[ok]
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    if method == "spearman":
        return float(stats.spearmanr(x, y).statistic)
    if method == "kendall":
        return float(stats.kendalltau(x, y).statistic)
    raise ValueError(f"method must be 'spearman' or 'kendall', not {method!r}")


def leave_one_rater_out(tidy: pd.DataFrame, criterion: str, method: str = "spearman") -> pd.DataFrame:
    """Each rater against the mean of the other raters of the same stories.

    For rater r with stories S_r: corr(x_{r,s}, mean_{r' != r} x_{r',s}) over s in S_r (stories
    with no other rating are skipped). Returns (rater, n, corr); corr is NaN when fewer than 3
    stories or a constant side.
    """
    m = rating_matrix(tidy, criterion)
    total, count = m.sum(axis=1, min_count=1), m.count(axis=1)
    rows = []
    for rater in m.columns:
        mine = m[rater]
        rated = mine.notna() & (count > 1)
        others = (total[rated] - mine[rated]) / (count[rated] - 1)
        rows.append({"rater": rater, "n": int(rated.sum()),
                     "corr": rank_corr(mine[rated].to_numpy(), others.to_numpy(), method)})
    return pd.DataFrame(rows)


def reliability_table(tidy: pd.DataFrame, level: str = "interval",
                      criteria: Sequence[str] | None = None) -> pd.DataFrame:
    """Per criterion: design counts, ICC(1), ICC(1,k), Krippendorff's alpha and the
    leave-one-rater-out Spearman and Kendall correlations (mean, min, max over the raters with
    a defined correlation; ``loo_n_raters`` of them, the smallest on ``loo_min_stories`` stories).

    One row per (dataset, criterion); ``level`` is the alpha's level of measurement (``interval``
    for the 0–10 Confederacy ratings, ``nominal`` for the Yes/No TTCW verdicts).
    """
    check_tidy(tidy)
    rows = []
    for dataset, d in tidy.groupby("dataset", sort=False):
        for crit in (criteria or list(dict.fromkeys(d["criterion"]))):
            sub = d[d["criterion"] == crit]
            row = {"dataset": dataset, "criterion": crit, "n_raters": int(sub["rater"].nunique()),
                   "n_ratings": int(len(sub))}
            row.update(icc_oneway(sub, crit))
            row["alpha"] = alpha(sub, crit, level)
            row["alpha_level"] = level
            for method in ("spearman", "kendall"):
                per_rater = leave_one_rater_out(sub, crit, method)
                loo = per_rater["corr"]
                if method == "spearman":
                    row["loo_n_raters"] = int(loo.notna().sum())
                    row["loo_min_stories"] = int(per_rater.loc[loo.notna(), "n"].min()) if loo.notna().any() else 0
                row[f"loo_{method}_mean"] = float(loo.mean())
                row[f"loo_{method}_min"] = float(loo.min())
                row[f"loo_{method}_max"] = float(loo.max())
            rows.append(row)
    return pd.DataFrame(rows)
