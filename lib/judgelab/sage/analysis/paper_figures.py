"""The SAGE paper's Figures 2-4, drawn from the statistics tables (matplotlib, print-readable).

(Per-layer figures that notebooks 02-04 show live in :mod:`judgelab.sage.report`.)
House style from :mod:`judgelab.style`: Okabe-Ito colours, and categories also differ by marker,
line style and hatching, so the figures survive greyscale printing; legends sit outside the data
area. A panel without data says so in words.
"""
from __future__ import annotations

import matplotlib.pyplot as plt  # noqa: F401  (callers close figures through it)
import numpy as np
import pandas as pd

from judgelab import style
from judgelab.sage.analysis.scores import CATEGORIES, LAYERS

COLORS = style.CATEGORY_COLOURS
MARKERS = style.CATEGORY_MARKERS
LINESTYLES = style.CATEGORY_LINESTYLES
HATCHES = style.CATEGORY_HATCHES
LABELS = style.CATEGORY_LABELS
LAYER_TITLES = {"L4": "L4 Cultural", "L5": "L5 Emotional", "L6": "L6 Existential", "average": "Average"}


def _yerr(frame: pd.DataFrame, value: str, fallback: str | None = None) -> np.ndarray:
    """Asymmetric error bars from ``<value>_ci_low`` / ``<value>_ci_high`` (the 95% CI), or the
    symmetric ``fallback`` column (SD, SEM) when the frame has no CI; NaN draws no bar."""
    v = frame[value].to_numpy(float)
    if f"{value}_ci_low" in frame:
        lo, hi = frame[f"{value}_ci_low"].to_numpy(float), frame[f"{value}_ci_high"].to_numpy(float)
        return np.nan_to_num(np.vstack([v - lo, hi - v]).clip(min=0))
    return np.nan_to_num(frame[fallback].to_numpy(float)) if fallback else np.zeros_like(v)


def _bar_label(frame: pd.DataFrame, value: str, fallback: str) -> str:
    return "95% CI" if f"{value}_ci_low" in frame else fallback


def plot_round_trajectories(traj: pd.DataFrame, layers=LAYERS, categories=CATEGORIES):
    """Figure 2: mean score per round and category (+- the 95% CI, else the SEM), one panel per
    layer, from :func:`~judgelab.sage.analysis.reliability.round_trajectories`."""
    fig, axes = style.subplots(len(layers), width=3.0, height=3.3, sharey=True)
    axes = axes[0]
    for ax, layer in zip(axes, layers):
        sub = traj[traj["layer"] == layer] if len(traj) else traj
        drawn = 0
        for cat in categories:
            c = sub[sub["category"] == cat].sort_values("round") if len(sub) else sub
            if c.empty:
                continue
            ax.errorbar(c["round"], c["mean"], yerr=_yerr(c, "mean", "sem"), color=COLORS[cat],
                        marker=MARKERS[cat], linestyle=LINESTYLES[cat], capsize=3, lw=1.6, ms=5,
                        label=f"{LABELS[cat]} (n={int(c['n'].max())})")
            drawn += 1
        if not drawn:
            style.empty_panel(ax, f"no evaluator rows for {layer}")
        ax.set_title(LAYER_TITLES.get(layer, layer))
        ax.set_xticks([1, 2, 3, 4, 5])
        ax.set_xlabel("round")
        ax.set_ylim(1, 5)
        ax.grid(axis="y")
    axes[0].set_ylabel(f"mean score (1-5), +- {_bar_label(traj, 'mean', 'SEM')}")
    # one legend for all panels, under them: inside a panel it would cover the lines
    style.figure_legend(fig, axes, where="below", ncol=len(categories))
    return fig


def plot_genre_means(desc: pd.DataFrame, paper_means: dict | None = None, layers=LAYERS,
                     categories=CATEGORIES):
    """Figure 3: mean score per category and layer (error bars: the 95% CI, else the SD) from
    :func:`~judgelab.sage.analysis.paper_tables.figure3_means`; paper means as white diamonds."""
    fig, axes = style.subplots(width=6.2, height=3.6)
    ax = axes[0][0]
    width = 0.8 / len(categories)
    x = np.arange(len(layers))
    for i, cat in enumerate(categories):
        means, errs, ns = [], [], []
        for layer in layers:
            r = desc[(desc["layer"] == layer) & (desc["category"] == cat)] if len(desc) else desc
            means.append(float(r["mean"].iloc[0]) if len(r) else np.nan)
            errs.append(_yerr(r.iloc[:1], "mean", "sd")[..., 0] if len(r) else np.zeros(2))
            ns.append(int(r["n"].iloc[0]) if len(r) and pd.notna(r["n"].iloc[0]) else 0)
        errs = np.column_stack([np.broadcast_to(np.atleast_1d(e), (2,)) for e in errs])
        pos = x - 0.4 + width * (i + 0.5)
        label = LABELS[cat] + ("" if any(ns) else " (no scores)")
        ax.bar(pos, np.nan_to_num(means), width * 0.9, color=COLORS[cat], edgecolor="black",
               hatch=HATCHES[cat], label=label, alpha=0.9)
        ax.errorbar(pos, means, yerr=errs, fmt="none", ecolor="black", capsize=3, lw=1)
        if paper_means:
            pm = [paper_means.get(layer, {}).get(cat) for layer in layers]
            pm = [np.nan if v is None else v for v in pm]
            ax.plot(pos, pm, linestyle="none", marker="D", mfc="white", mec="black", ms=6,
                    label="paper (Table 11)" if i == len(categories) - 1 else None)
    if not desc["n"].fillna(0).gt(0).any() if len(desc) else True:
        style.empty_panel(ax, "no scores to compare")
    ax.set_xticks(x)
    ax.set_xticklabels([LAYER_TITLES.get(l, l) for l in layers])
    ax.set_ylim(0, 5.4)
    ax.set_ylabel(f"mean score (1-5), error bar = {_bar_label(desc, 'mean', 'SD')}")
    ax.grid(axis="y")
    style.legend_right(ax)
    return fig


def plot_effect_sizes(pairwise: pd.DataFrame, paper_d: dict | None = None, layers=LAYERS,
                      pair=("canonical", "llm"), threshold: float = 0.8):
    """Figure 4: Cohen's d per layer in both SD conventions (error bars: the 95% CI where given)
    with the d = 0.8 line, from :func:`~judgelab.sage.analysis.paper_tables.figure4_effects`."""
    conv = {"d_pooled_sd": ("pooled SD", style.OKABE_ITO[0], ""),
            "d_sqrt_mean_var": ("sqrt((s1²+s2²)/2)", style.OKABE_ITO[3], "//")}
    fig, axes = style.subplots(width=6.0, height=3.6)
    ax = axes[0][0]
    x = np.arange(len(layers))
    sub = pairwise[(pairwise["group_a"] == pair[0]) & (pairwise["group_b"] == pair[1])] if len(pairwise) else pairwise
    any_value = False
    for i, (col, (label, color, hatch)) in enumerate(conv.items()):
        rows = pd.concat([sub[sub["layer"] == l].iloc[:1] if len(sub) and (sub["layer"] == l).any()
                          else pd.DataFrame({col: [np.nan]}) for l in layers], ignore_index=True)
        vals = rows[col].to_numpy(float)
        any_value |= bool(np.isfinite(vals).any())
        ax.bar(x - 0.2 + 0.4 * i, np.nan_to_num(vals), 0.36, color=color, edgecolor="black", hatch=hatch,
               label=f"d, {label}")
        if f"{col}_ci_low" in rows:
            ax.errorbar(x - 0.2 + 0.4 * i, vals, yerr=_yerr(rows, col), fmt="none", ecolor="black", capsize=3,
                        lw=1, label="95% CI" if i == 0 else None)
    if paper_d:
        ax.plot(x + 0.2, [paper_d.get(l, np.nan) for l in layers], linestyle="none", marker="D",
                mfc="white", mec="black", ms=7, label="paper d (Table 11 notes)")
    ax.axhline(threshold, color=style.OKABE_ITO[5], linestyle="--", lw=1.3, label=f"large effect (d = {threshold:g})")
    if not any_value:
        style.empty_panel(ax, f"d not computable: needs >= 2 {LABELS[pair[0]]} and\n>= 2 {LABELS[pair[1]]} "
                              "scores per layer")
    ax.set_xticks(x)
    ax.set_xticklabels([LAYER_TITLES.get(l, l) for l in layers])
    ax.set_ylabel(f"Cohen's d, {LABELS[pair[0]]} vs {LABELS[pair[1]]}")
    ax.grid(axis="y")
    style.legend_right(ax)
    return fig
