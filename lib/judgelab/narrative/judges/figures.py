"""Figure 8 of the narrative judge paper (panels c, d, f, g, i–l), one function per panel group.

Each function takes the tidy frames of :mod:`judgelab.narrative.judges.validity` /
:mod:`judgelab.narrative.judges.agreement` and returns a matplotlib Figure with one column of axes per
collection; notebook 09 saves them as ``narr_fig08_<what>``. Panels (a, b, e, h) — coherence and
length of the paths alone — belong to notebook 08.

House style (:mod:`judgelab.style`): path methods keep their colours in every figure, and one
legend per figure sits under the panels, off the data; captions are placed by
:func:`judgelab.reporting.save_figure`.
"""
from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from judgelab import style
from judgelab.narrative.judges.prompts import MODES
from judgelab.narrative.judges.validity import correlation_matrix, llm_metric_name

METHOD_COLORS = style.METHOD_COLOURS
METHOD_LABELS = style.METHOD_LABELS
PANEL_W, PANEL_H = 4.6, 3.4
KIND_COLOURS = {"math": style.GREY, "llm": style.OKABE_ITO[2]}
"""Effect-size bars: coherence metrics grey, LLM scores green."""
EFFECT_SIZE_REFERENCES = ((0.2, "small", ":"), (0.5, "medium", "--"), (0.8, "large", "-."))
"""Cohen's (1988) conventional thresholds for d, drawn as reference lines."""


def _collections(df: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(df["collection"]))


def _modes_present(df: pd.DataFrame, modes: Sequence[str] = MODES) -> list[str]:
    have = set(df["mode"])
    return [m for m in modes if m in have]


def judge_vs_coherence(judged: pd.DataFrame, modes: Sequence[str] = ("simple", "cot"),
                       metric: str = "min_coherence") -> plt.Figure:
    """Panels (c, d): minimum coherence vs mean LLM score, error bars = SD over the K agents."""
    colls = _collections(judged)
    modes = [m for m in modes if m in set(judged["mode"])] or _modes_present(judged)[:1]
    fig, axes = style.subplots(len(colls), len(modes), width=PANEL_W, height=PANEL_H)
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
    style.figure_legend(fig, where="below")
    return fig


def scores_by_mode(judged: pd.DataFrame) -> plt.Figure:
    """Panel (f): box plots of the mean LLM score per mode, split by path method."""
    colls = _collections(judged)
    fig, axes = style.subplots(len(colls), width=PANEL_W, height=PANEL_H)
    for j, coll in enumerate(colls):
        g = judged[judged["collection"] == coll]
        sns.boxplot(data=g, x="mode", y="score_mean", hue="method", order=_modes_present(g),
                    palette=METHOD_COLORS, ax=axes[0][j], legend=False)
        axes[0][j].set(title=coll, xlabel="prompt mode", ylabel="mean LLM score", ylim=(0.5, 10.5))
    methods = [m for m in METHOD_COLORS if m in set(judged["method"])]
    fig.legend([Patch(facecolor=METHOD_COLORS[m], edgecolor="0.2") for m in methods],
               [METHOD_LABELS.get(m, m) for m in methods], loc="outside lower center", ncol=max(1, len(methods)))
    return fig


def _yerr(g: pd.DataFrame, col: str):
    """Asymmetric error bars from ``col_ci_low`` / ``col_ci_high`` (None when absent)."""
    lo, hi = f"{col}_ci_low", f"{col}_ci_high"
    if lo not in g.columns or hi not in g.columns:
        return None
    v = g[col].to_numpy(float)
    return np.vstack([np.clip(v - g[lo].to_numpy(float), 0, None), np.clip(g[hi].to_numpy(float) - v, 0, None)])


def agent_agreement(disagreement: pd.DataFrame) -> plt.Figure:
    """Panel (g): mean SD and coefficient of variation across the K agents, per mode (error bars:
    95% intervals when the table has them, :func:`judgelab.narrative.judges.agreement.agent_disagreement`)."""
    colls = _collections(disagreement)
    fig, axes = style.subplots(len(colls), width=PANEL_W, height=PANEL_H)
    for j, coll in enumerate(colls):
        g = disagreement[disagreement["collection"] == coll].set_index("mode")
        g = g.reindex(_modes_present(g.reset_index()))
        x = np.arange(len(g))
        ax = axes[0][j]
        ax.bar(x - 0.2, g["mean_sd"], 0.4, color=style.colour(0), label="mean SD", yerr=_yerr(g, "mean_sd"), capsize=2)
        ax.bar(x + 0.2, g["mean_cov"], 0.4, color=style.colour(1), hatch="//", label="mean CoV",
               yerr=_yerr(g, "mean_cov"), capsize=2)
        ax.set_xticks(x, g.index)
        ax.set(title=f"{coll}: agreement across K agents", ylabel="value")
    style.figure_legend(fig, where="below")
    return fig


def effect_sizes(effects: pd.DataFrame) -> plt.Figure:
    """Panel (i): Cohen's d (pooled SD) per metric, with small/medium/large reference lines and the
    95% pair-bootstrap interval of d as error bars (when ``effects`` has ``d_ci_low`` / ``d_ci_high``)."""
    colls = _collections(effects)
    fig, axes = style.subplots(len(colls), width=PANEL_W, height=PANEL_H)
    for j, coll in enumerate(colls):
        g = effects[effects["collection"] == coll]
        ax = axes[0][j]
        ax.bar(g["metric"], g["d"], color=[KIND_COLOURS["math"] if k == "math" else KIND_COLOURS["llm"]
                                           for k in g["kind"]], yerr=_yerr(g, "d"), capsize=2)
        for ref, name, ls in EFFECT_SIZE_REFERENCES:
            ax.axhline(ref, ls=ls, lw=0.8, color="k", alpha=0.6)
        ax.set(title=f"{coll}: max capacity vs random", ylabel="Cohen's d (pooled SD)")
        ax.tick_params(axis="x", rotation=40, labelsize=7)
    # reference lines named in the legend: labels written beside the lines collide when d is large
    handles = [Patch(color=KIND_COLOURS["math"]), Patch(color=KIND_COLOURS["llm"])] + [
        Line2D([], [], ls=ls, lw=0.8, color="k", alpha=0.6) for _, _, ls in EFFECT_SIZE_REFERENCES]
    labels = ["coherence metric", "LLM score"] + [f"{name} (d = {ref:g})" for ref, name, _ in EFFECT_SIZE_REFERENCES]
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels))
    return fig


def correlation_heatmap(judged: pd.DataFrame) -> plt.Figure:
    """Panel (j): Pearson correlations among coherence metrics and each mode's mean LLM score."""
    colls = _collections(judged)
    fig, axes = style.subplots(len(colls), width=5.6, height=4.6)
    for j, coll in enumerate(colls):
        corr = correlation_matrix(judged, coll)
        sns.heatmap(corr, annot=True, fmt=".2f", vmin=-1, vmax=1, cmap="RdBu_r", ax=axes[0][j],
                    annot_kws={"fontsize": 6}, cbar=j == len(colls) - 1)
        axes[0][j].set_title(coll)
        axes[0][j].tick_params(labelsize=7)
    return fig


def mean_scores_by_method(judged: pd.DataFrame, effects: pd.DataFrame | None = None) -> plt.Figure:
    """Panel (k): mean LLM score per mode and path method. Error bars: the 95% pair-bootstrap
    intervals of the means from ``effects`` (:func:`judgelab.narrative.judges.validity.effect_size_table`)
    when given, else the SD over narratives."""
    colls = _collections(judged)
    fig, axes = style.subplots(len(colls), width=PANEL_W, height=PANEL_H)
    for j, coll in enumerate(colls):
        g = judged[judged["collection"] == coll]
        modes = _modes_present(g)
        stats_ = g.groupby(["mode", "method"])["score_mean"].agg(["mean", "std"])
        x = np.arange(len(modes))
        ax = axes[0][j]
        methods = sorted(set(g["method"]))
        width = 0.8 / max(len(methods), 1)
        ci = None
        if effects is not None:
            ci = effects[(effects["collection"] == coll) & (effects["kind"] == "llm")].set_index("column").reindex(modes)
        for i, method in enumerate(methods):
            vals = stats_.xs(method, level="method").reindex(modes)
            err = vals["std"].fillna(0).to_numpy()
            if ci is not None and f"mean_{method}_ci_low" in ci.columns:
                v = vals["mean"].to_numpy(float)
                err = np.nan_to_num(np.vstack([v - ci[f"mean_{method}_ci_low"].to_numpy(float),
                                               ci[f"mean_{method}_ci_high"].to_numpy(float) - v]).clip(0))
            ax.bar(x + (i - (len(methods) - 1) / 2) * width, vals["mean"], width, yerr=err,
                   capsize=2, color=METHOD_COLORS.get(method), label=METHOD_LABELS.get(method, method))
        ax.set_xticks(x, modes)
        ax.set(title=coll, ylabel="mean LLM score", ylim=(0, 10.5))
    style.figure_legend(fig, where="below")
    return fig


def p_values(effects: pd.DataFrame) -> plt.Figure:
    """Panel (l): p-values of Welch's t-test and the Mann–Whitney U test per metric (log scale),
    with reference lines at alpha = 0.05 and 0.01."""
    colls = _collections(effects)
    fig, axes = style.subplots(len(colls), width=PANEL_W, height=PANEL_H)
    for j, coll in enumerate(colls):
        g = effects[effects["collection"] == coll]
        x = np.arange(len(g))
        ax = axes[0][j]
        floor = 1e-300  # keep p = 0 (underflow) drawable on a log axis
        ax.bar(x - 0.2, np.clip(g["t_p"].to_numpy(float), floor, None), 0.4, color=style.colour(0),
               label="t-test (Welch)")
        ax.bar(x + 0.2, np.clip(g["mw_p"].to_numpy(float), floor, None), 0.4, color=style.colour(1),
               hatch="//", label="Mann–Whitney U")
        ax.axhline(0.05, ls="--", color=style.OKABE_ITO[5], lw=0.8, label="α = 0.05")
        ax.axhline(0.01, ls=":", color=style.OKABE_ITO[5], lw=0.8, label="α = 0.01")
        ax.set_yscale("log")
        ax.set_xticks(x, g["metric"])
        ax.tick_params(axis="x", rotation=40, labelsize=7)
        ax.set(title=coll, ylabel="p-value")
    style.figure_legend(fig, where="below")
    return fig
