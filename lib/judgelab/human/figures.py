"""Figure of notebook 11: the judge against people (``sage_fig_judge_vs_human``)."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg", force=False)
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from judgelab.human.appendix import OVERALL  # noqa: E402
from judgelab.human.compare import human_means, paired  # noqa: E402

MARKERS = {"confederacy": "o", "artifice": "s"}


def plot_judge_vs_human(table: pd.DataFrame, scores: pd.DataFrame, tidy: pd.DataFrame,
                        measure: str = "holistic", title: str | None = None):
    """Two panels. Left: each judged story's ``measure`` score against its mean human overall
    rating (per data set). Right: Spearman's rho of every comparison with its bootstrap CI
    (bars), and the human-human ceiling (mean leave-one-rater-out rho, open diamonds);
    comparisons without a correlation (n < 3 or a constant side) are listed as such.
    """
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, max(3.5, 0.38 * len(table) + 1.5)),
                                   gridspec_kw={"width_ratios": [1, 1.4]})
    means = human_means(tidy)
    for ds in scores["dataset"].unique():
        pair = paired(scores, means, ds, measure, OVERALL[ds][0])
        ax1.scatter(pair["score"], pair["human_mean"], marker=MARKERS.get(ds, "o"), alpha=0.75,
                    label=f"{ds} ({OVERALL[ds][0]}, n={int(pair['score'].notna().sum())})")
    ax1.set_xlabel(f"judge: {measure} score")
    ax1.set_ylabel("mean human rating (overall)")
    ax1.set_title("stories")
    ax1.legend(fontsize=7, loc="best")

    labels = [f"{r.dataset}: {r.measure} ~ {r.criterion}" for r in table.itertuples()]
    y = np.arange(len(table))[::-1]
    for yi, r in zip(y, table.itertuples()):
        if np.isnan(r.spearman):
            ax2.text(-1.0, yi, f"no correlation (n={int(r.n)})", va="center", ha="left", fontsize=7, color="#777777")
            continue
        ax2.errorbar(r.spearman, yi, xerr=[[r.spearman - r.spearman_lo], [r.spearman_hi - r.spearman]],
                     fmt="o", color="C0", capsize=3, ms=4)
    if "ceiling_spearman" in table:
        ax2.scatter(table["ceiling_spearman"], y, marker="D", facecolors="none", edgecolors="C3", zorder=3)
    ax2.axvline(0, color="#999999", lw=0.8)
    ax2.set_yticks(y, labels, fontsize=7)
    ax2.set_xlim(-1.05, 1.05)
    ax2.set_xlabel("Spearman's rho with mean human rating (95% bootstrap CI)")
    ax2.set_title("judge vs people (red diamond: human-human ceiling, mean leave-one-rater-out rho)", fontsize=8)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.08, 1, 0.97))  # room for the caption that save_figure adds below
    return fig
