"""Figure of notebook 11: the judge against people (``sage_fig_judge_vs_human``)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab import style
from judgelab.human.appendix import OVERALL
from judgelab.human.compare import human_means, paired

MARKERS = {"confederacy": "o", "artifice": "s"}


def plot_judge_vs_human(table: pd.DataFrame, scores: pd.DataFrame, tidy: pd.DataFrame,
                        measure: str = "holistic", title: str | None = None):
    """Left: each judged story's ``measure`` score against its mean human overall rating. Right,
    like for like (:func:`judgelab.human.compare.like_for_like`): ``judge_loo`` with its 95% CI
    (bars) beside ``human_loo`` (open diamonds, the human ceiling on the same stories);
    comparisons without a correlation are listed as such."""
    fig, axes = style.subplots(2, width=5.2, height=max(3.5, 0.38 * len(table) + 1.5),
                               gridspec_kw={"width_ratios": [1, 1.4]})
    ax1, ax2 = axes[0]
    means = human_means(tidy)
    for k, ds in enumerate(scores["dataset"].unique()):
        pair = paired(scores, means, ds, measure, OVERALL[ds][0])
        ax1.scatter(pair["score"], pair["human_mean"], marker=MARKERS.get(ds, "o"), alpha=0.75,
                    color=style.colour(k),
                    label=f"{ds} ({OVERALL[ds][0]}, n={int(pair['score'].notna().sum())})")
    ax1.set_xlabel(f"judge: {measure} score")
    ax1.set_ylabel("mean human rating (overall)")
    ax1.set_title("stories")

    labels = [f"{r.dataset}: {r.measure} ~ {r.criterion}" for r in table.itertuples()]
    y = np.arange(len(table))[::-1]
    like = "judge_loo" in table  # the like-for-like comparison (the judge in a rater's place), else the panel mean
    est, lo, hi = (("judge_loo", "judge_loo_ci_low", "judge_loo_ci_high") if like
                   else ("spearman", "spearman_lo", "spearman_hi"))
    judged = False
    for yi, r in zip(y, table.to_dict("records")):
        if np.isnan(r[est]):
            ax2.text(-1.0, yi, f"no correlation (n={int(r['n'])})", va="center", ha="left",
                     fontsize=style.SMALL_SIZE - 1, color=style.GREY)
            continue
        err = np.nan_to_num([[r[est] - r[lo]], [r[hi] - r[est]]]).clip(min=0)
        ax2.errorbar(r[est], yi, xerr=err, fmt="o", color=style.colour(0), capsize=3, ms=4,
                     label=None if judged else (
                         "judge vs the others' mean (95% CI)" if like
                         else "judge vs mean human rating (95% bootstrap CI)"))
        judged = True
    ceiling = "human_loo" if like else "ceiling_spearman"
    if ceiling in table:
        ax2.scatter(table[ceiling], y, marker="D", facecolors="none", edgecolors=style.OKABE_ITO[5], zorder=3,
                    label="each rater vs the others' mean" if like
                    else "human-human ceiling (mean leave-one-rater-out rho)")
    ax2.axvline(0, color=style.GREY, lw=0.8)
    ax2.set_yticks(y, labels, fontsize=style.SMALL_SIZE - 1)
    ax2.set_xlim(-1.05, 1.05)
    ax2.set_ylim(-0.6, len(table) - 0.4)  # half a row of room: the notes must not sit on the axis
    ax2.set_xlabel("Spearman's rho with the other raters' mean" if like else "Spearman's rho with mean human rating")
    ax2.set_title("judge vs people")
    if title:
        fig.suptitle(title)
    style.figure_legend(fig, [ax1, ax2], where="below", ncol=2)
    return fig
