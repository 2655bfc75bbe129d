"""Figure 8 of the narrative judge paper (panels c, d, f, g, i–l), one function per panel group.

Each function takes the tidy frames of :mod:`judgelab.narrative.judges.validity` /
:mod:`judgelab.narrative.judges.agreement` and returns a matplotlib Figure with one column of axes per
collection; notebook 09 saves them as ``narr_fig08_<what>``. Panels (a, b, e, h) — coherence and
length of the paths alone — belong to notebook 08.
"""
from __future__ import annotations

from typing import Sequence

import matplotlib

matplotlib.use("Agg", force=False)
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from judgelab.narrative.judges.prompts import MODES  # noqa: E402
from judgelab.narrative.judges.validity import correlation_matrix, llm_metric_name  # noqa: E402

METHOD_COLORS = {"maxcap": "#1f77b4", "random": "#ff7f0e"}
METHOD_LABELS = {"maxcap": "max capacity", "random": "random chronological"}
CAPTION_RECT = (0, 0.1, 1, 1)
"""tight_layout area: the bottom tenth stays free for the caption that reporting.save_figure adds."""


def _collections(df: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(df["collection"]))


def _grid(n_rows: int, n_cols: int, w: float = 4.6, h: float = 3.4):
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(w * n_cols, h * n_rows), squeeze=False)
    return fig, axes


def _modes_present(df: pd.DataFrame, modes: Sequence[str] = MODES) -> list[str]:
    have = set(df["mode"])
    return [m for m in modes if m in have]


def judge_vs_coherence(judged: pd.DataFrame, modes: Sequence[str] = ("simple", "cot"),
                       metric: str = "min_coherence") -> plt.Figure:
    """Panels (c, d): minimum coherence vs mean LLM score, error bars = SD over the K agents."""
    colls = _collections(judged)
    modes = [m for m in modes if m in set(judged["mode"])] or _modes_present(judged)[:1]
    fig, axes = _grid(len(modes), len(colls))
    for i, mode in enumerate(modes):
        for j, coll in enumerate(colls):
            ax = axes[i][j]
            g = judged[(judged["collection"] == coll) & (judged["mode"] == mode)]
            for method, gm in g.groupby("method"):
                ax.errorbar(gm[metric], gm["score_mean"], yerr=gm["score_sd"].fillna(0), fmt="o", ms=4,
                            alpha=0.7, capsize=2, color=METHOD_COLORS.get(method),
                            label=METHOD_LABELS.get(method, method))
            ax.set(xlabel=metric.replace("_", " "), ylabel=f"{llm_metric_name(mode)} score (mean of K)",
                   title=f"{coll}: {llm_metric_name(mode)}", ylim=(0.5, 10.5))
            ax.legend(fontsize=7)
    fig.tight_layout(rect=CAPTION_RECT)
    return fig


def scores_by_mode(judged: pd.DataFrame) -> plt.Figure:
    """Panel (f): box plots of the mean LLM score per mode, split by path method."""
    colls = _collections(judged)
    fig, axes = _grid(1, len(colls))
    for j, coll in enumerate(colls):
        g = judged[judged["collection"] == coll]
        sns.boxplot(data=g, x="mode", y="score_mean", hue="method", order=_modes_present(g),
                    palette=METHOD_COLORS, ax=axes[0][j])
        axes[0][j].set(title=coll, xlabel="prompt mode", ylabel="mean LLM score", ylim=(0.5, 10.5))
    fig.tight_layout(rect=CAPTION_RECT)
    return fig


def agent_agreement(disagreement: pd.DataFrame) -> plt.Figure:
    """Panel (g): mean SD and coefficient of variation across the K agents, per mode."""
    colls = _collections(disagreement)
    fig, axes = _grid(1, len(colls))
    for j, coll in enumerate(colls):
        g = disagreement[disagreement["collection"] == coll].set_index("mode")
        g = g.reindex(_modes_present(g.reset_index()))
        x = np.arange(len(g))
        ax = axes[0][j]
        ax.bar(x - 0.2, g["mean_sd"], 0.4, label="mean SD")
        ax.bar(x + 0.2, g["mean_cov"], 0.4, label="mean CoV")
        ax.set_xticks(x, g.index)
        ax.set(title=f"{coll}: agreement across K agents", ylabel="value")
        ax.legend(fontsize=7)
    fig.tight_layout(rect=CAPTION_RECT)
    return fig


def effect_sizes(effects: pd.DataFrame) -> plt.Figure:
    """Panel (i): Cohen's d (pooled SD) per metric, with small/medium/large reference lines."""
    colls = _collections(effects)
    fig, axes = _grid(1, len(colls))
    for j, coll in enumerate(colls):
        g = effects[effects["collection"] == coll]
        ax = axes[0][j]
        ax.bar(g["metric"], g["d"], color=["#7f7f7f" if k == "math" else "#2ca02c" for k in g["kind"]])
        for ref, name in ((0.2, "small"), (0.5, "medium"), (0.8, "large")):
            ax.axhline(ref, ls="--", lw=0.8, color="k", alpha=0.5)
            ax.text(len(g) - 0.5, ref, name, fontsize=6, va="bottom", ha="right")
        ax.set(title=f"{coll}: max capacity vs random", ylabel="Cohen's d (pooled SD)")
        ax.tick_params(axis="x", rotation=40, labelsize=7)
    fig.tight_layout(rect=CAPTION_RECT)
    return fig


def correlation_heatmap(judged: pd.DataFrame) -> plt.Figure:
    """Panel (j): Pearson correlations among coherence metrics and each mode's mean LLM score."""
    colls = _collections(judged)
    fig, axes = _grid(1, len(colls), w=5.6, h=4.6)
    for j, coll in enumerate(colls):
        corr = correlation_matrix(judged, coll)
        sns.heatmap(corr, annot=True, fmt=".2f", vmin=-1, vmax=1, cmap="RdBu_r", ax=axes[0][j],
                    annot_kws={"fontsize": 6}, cbar=j == len(colls) - 1)
        axes[0][j].set_title(coll)
        axes[0][j].tick_params(labelsize=7)
    fig.tight_layout(rect=CAPTION_RECT)
    return fig


def mean_scores_by_method(judged: pd.DataFrame) -> plt.Figure:
    """Panel (k): mean LLM score per mode and path method (error bars: SD over narratives)."""
    colls = _collections(judged)
    fig, axes = _grid(1, len(colls))
    for j, coll in enumerate(colls):
        g = judged[judged["collection"] == coll]
        modes = _modes_present(g)
        stats_ = g.groupby(["mode", "method"])["score_mean"].agg(["mean", "std"])
        x = np.arange(len(modes))
        ax = axes[0][j]
        methods = sorted(set(g["method"]))
        width = 0.8 / max(len(methods), 1)
        for i, method in enumerate(methods):
            vals = stats_.xs(method, level="method").reindex(modes)
            ax.bar(x + (i - (len(methods) - 1) / 2) * width, vals["mean"], width, yerr=vals["std"].fillna(0),
                   capsize=2, color=METHOD_COLORS.get(method), label=METHOD_LABELS.get(method, method))
        ax.set_xticks(x, modes)
        ax.set(title=coll, ylabel="mean LLM score", ylim=(0, 10.5))
        ax.legend(fontsize=7)
    fig.tight_layout(rect=CAPTION_RECT)
    return fig


def p_values(effects: pd.DataFrame) -> plt.Figure:
    """Panel (l): p-values of Welch's t-test and the Mann–Whitney U test per metric (log scale),
    with reference lines at alpha = 0.05 and 0.01."""
    colls = _collections(effects)
    fig, axes = _grid(1, len(colls))
    for j, coll in enumerate(colls):
        g = effects[effects["collection"] == coll]
        x = np.arange(len(g))
        ax = axes[0][j]
        floor = 1e-300  # keep p = 0 (underflow) drawable on a log axis
        ax.bar(x - 0.2, np.clip(g["t_p"].to_numpy(float), floor, None), 0.4, label="t-test (Welch)")
        ax.bar(x + 0.2, np.clip(g["mw_p"].to_numpy(float), floor, None), 0.4, label="Mann–Whitney U")
        ax.axhline(0.05, ls="--", color="r", lw=0.8, label="α = 0.05")
        ax.axhline(0.01, ls=":", color="r", lw=0.8, label="α = 0.01")
        ax.set_yscale("log")
        ax.set_xticks(x, g["metric"])
        ax.tick_params(axis="x", rotation=40, labelsize=7)
        ax.set(title=coll, ylabel="p-value")
        ax.legend(fontsize=6, loc="lower left", framealpha=0.8)
    fig.tight_layout(rect=CAPTION_RECT)
    return fig
