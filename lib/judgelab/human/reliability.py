"""Inter-rater reliability among the humans: the ceiling a judge can be compared with.

In both data sets each story is rated by a *different* subset of the raters (Confederacy: 5
groups of 13 stories, 2 raters per group; Art or Artifice: 3 of 11 experts per story), so the ICC
is the one-way random-effects model (Shrout & Fleiss case 1) with the k ratings of each story as
its rating "slots"; Krippendorff's alpha uses the full raters x stories matrix, missing cells
allowed; and the leave-one-rater-out correlation (each rater against the mean of the others) is
how well one person agrees with the rest (cf. the "human ceiling" of Chiang & Lee 2023, ACL).
"""
from __future__ import annotations

from typing import Sequence

import pandas as pd

from judgelab.human import TIDY_COLUMNS
from judgelab.stats import rules
from judgelab.stats.correlation import correlation
from judgelab.stats.reliability import ALPHA_LEVELS, icc, krippendorff_alpha


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
    """Append one derived criterion per (story, rater): the ``mean`` (Confederacy: keeps the 0-10
    scale) or ``sum`` (Art or Artifice: tests passed, 0-14) over its criteria. A (story, rater)
    missing any criterion raises ValueError."""
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
    """Add ``slot`` = 1..k among a story's ratings: pingouin's ``raters`` for the one-way ICC."""
    out = tidy.sort_values(["criterion", "story", "rater"]).copy()
    out["slot"] = out.groupby(["criterion", "story"]).cumcount() + 1
    return out


def icc_oneway(tidy: pd.DataFrame, criterion: str) -> dict[str, float | str]:
    """ICC(1), ICC(1,k) with 95% CIs, k, stories and a note (incomplete stories dropped)."""
    sub = slot_table(tidy[tidy["criterion"] == criterion])
    k = int(sub["slot"].max()) if len(sub) else 0
    res = icc(sub, "story", "slot", "value", forms=("ICC1", "ICC1k")).set_index("form")
    out: dict[str, float | str] = {"k": k, "n_stories": int(sub["story"].nunique())}
    for form, key in (("ICC1", "icc1"), ("ICC1k", "icc1k")):
        out.update({key: res.at[form, "icc"], f"{key}_lo": res.at[form, "ci_low"],
                    f"{key}_hi": res.at[form, "ci_high"]})
    out["note"] = res["note"].iloc[0]
    return out


def alpha(tidy: pd.DataFrame, criterion: str, level: str = "interval") -> dict[str, float | str]:
    """Krippendorff's alpha over the raters x stories matrix: ``{"alpha", "note"}``."""
    if level not in ALPHA_LEVELS:
        raise ValueError(f"level must be one of {ALPHA_LEVELS}, not {level!r}")
    res = krippendorff_alpha(tidy[tidy["criterion"] == criterion], "story", "rater", "value", level=level)
    return {"alpha": res["alpha"].iloc[0], "note": res["note"].iloc[0]}


def leave_one_rater_out(tidy: pd.DataFrame, criterion: str, method: str = "spearman") -> pd.DataFrame:
    """(rater, n, corr, note): corr(x_{r,s}, mean_{r' != r} x_{r',s}) over the stories of rater r
    that another rater rated; NaN when fewer than 3 stories or a constant side."""
    m = rating_matrix(tidy, criterion)
    total, count = m.sum(axis=1, min_count=1), m.count(axis=1)
    rows = []
    for rater in m.columns:
        mine = m[rater]
        rated = mine.notna() & (count > 1)
        others = (total[rated] - mine[rated]) / (count[rated] - 1)
        res = correlation(mine[rated].to_numpy(), others.to_numpy(), method=method).iloc[0]
        rows.append({"rater": rater, "n": int(rated.sum()), "corr": res["r"], "note": res["note"]})
    return pd.DataFrame(rows, columns=["rater", "n", "corr", "note"])


def reliability_table(tidy: pd.DataFrame, level: str = "interval",
                      criteria: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per (dataset, criterion): design counts, ICC(1), ICC(1,k), Krippendorff's alpha at
    ``level`` and the leave-one-rater-out Spearman and Kendall correlations (mean, min, max over
    the ``loo_n_raters`` raters with one defined); ``note`` says why a number is NaN."""
    check_tidy(tidy)
    rows = []
    for dataset, d in tidy.groupby("dataset", sort=False):
        for crit in (criteria or list(dict.fromkeys(d["criterion"]))):
            sub = d[d["criterion"] == crit]
            row = {"dataset": dataset, "criterion": crit, "n_raters": int(sub["rater"].nunique()),
                   "n_ratings": int(len(sub))}
            icc_row = icc_oneway(sub, crit)
            alpha_row = alpha(sub, crit, level)
            row.update({k: v for k, v in icc_row.items() if k != "note"})
            row["alpha"] = alpha_row["alpha"]
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
            row["note"] = rules.join(*(f"{name}: {n}" for name, n in (("ICC", icc_row["note"]),
                                                                       ("alpha", alpha_row["note"])) if n))
            rows.append(row)
    return pd.DataFrame(rows)
