"""Notebook 12's figures (``behaviour_fig_*``), house style (:mod:`judgelab.style`): one legend per
figure, below the panels; a panel without data says why in words."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from judgelab import style

MODE_COLOURS = {"content": style.OKABE_ITO[0], "title": style.OKABE_ITO[1]}
HARDENED_COLOURS = {False: style.OKABE_ITO[5], True: style.OKABE_ITO[2]}
HARDENED_LABELS = {False: "plain prompt", True: "hardened prompt"}


#: each figure's caption by output name (the run adds its judge line)
CAPTIONS = {
    "behaviour_fig_recognition_rates": "Recognition rate by category and mode (Wilson 95% intervals; unit: story); "
                                       "title mode is an echo of the title in the prompt; LLM stories and invented "
                                       "works: false-claim controls.",
    "behaviour_fig_planted_shifts": "Planted instructions: insertion, obedience, contrast and noise per disguise, in "
                                    "fractions of the scale's range (cluster bootstrap 95% over stories / endpoint "
                                    "pairs).",
    "behaviour_fig_sage_length": "SAGE final score against log tokens of the story as sent by layer and mode (unit: "
                                 "story); hollow: texts cut head and tail, left out of the model; title mode: "
                                 "negative control.",
    "behaviour_fig_narr_length": "Narrative judges' mean score against path length by mode (unit: narrative).",
}


def show(run, name: str, fig, judge_line: str):
    """Write and show ``fig`` as ``name`` through ``run`` with its :data:`CAPTIONS` entry."""
    return run.figure(fig, name, CAPTIONS[name], judge_line=judge_line)


def _err(mean, lo, hi) -> np.ndarray:
    """Error-bar lengths from bounds (0 where a bound is NaN: a single unit has no interval)."""
    m, lo, hi = (np.asarray(v, dtype=float) for v in (mean, lo, hi))
    return np.vstack([np.nan_to_num(m - lo), np.nan_to_num(hi - m)]).clip(min=0)


def recognition_rates(rates: pd.DataFrame) -> plt.Figure:
    """Recognition rate by category (bars) and mode (colour), Wilson 95% intervals; the pooled
    human rows (``rate_table``'s "human (canonical + pulp)") are left out: their parts are drawn."""
    rates = rates[~rates["category"].str.startswith("human")]
    fig, axes = style.subplots(1, 1, width=5.2, height=3.4)
    ax = axes[0][0]
    cats = list(dict.fromkeys(rates["category"]))
    modes = list(dict.fromkeys(rates["mode"]))
    width = 0.8 / max(1, len(modes))
    for j, mode in enumerate(modes):
        g = rates[rates["mode"] == mode].set_index("category").reindex(cats)
        x = np.arange(len(cats)) + (j - (len(modes) - 1) / 2) * width
        ax.bar(x, g["recognition_rate"].fillna(0), width=width, color=MODE_COLOURS.get(mode, style.colour(j)),
               label=f"{mode} mode", yerr=_err(g["recognition_rate"].fillna(0), g["recognition_rate_ci_low"],
                                               g["recognition_rate_ci_high"]), capsize=3)
    ax.set_xticks(np.arange(len(cats)), [style.CATEGORY_LABELS.get(c, c) for c in cats])
    ax.set(ylim=(0, 1.05), ylabel="share of stories recognised", xlabel="category")
    style.figure_legend(fig, [ax])
    return fig


def planted_shifts(table: pd.DataFrame) -> plt.Figure:
    """Each estimand of the planted study (insertion, obedience, contrast, seed sd) per disguise, in
    scale units (fraction of the scale's range), plain and hardened, one panel per study; error
    bars: the table's Student t 95% over unit means (none where the table gives none: too few units)."""
    studies = list(dict.fromkeys(table["study"])) or ["none"]
    labels = sorted({f"{e} | {d}" for e, d in zip(table["estimand"], table["disguise"])}) if len(table) else []
    fig, axes = style.subplots(len(studies), 1, width=4.6, height=0.32 * max(4, len(labels)) + 1.4)
    for i, study in enumerate(studies):
        ax = axes[0][i]
        g = table[table["study"] == study]
        if g.empty:
            style.empty_panel(ax, "no planted calls")
            continue
        g = g.assign(label=g["estimand"] + " | " + g["disguise"])
        y = np.arange(len(labels))
        for k, hardened in enumerate(sorted(g["hardened"].unique())):
            h = g[g["hardened"] == hardened].set_index("label").reindex(labels)
            ax.errorbar(h["mean_scale"], y + (k - 0.5) * 0.25, fmt="o", ms=4, capsize=2,
                        xerr=_err(h["mean_scale"], h["ci_low_scale"], h["ci_high_scale"]),
                        color=HARDENED_COLOURS[bool(hardened)], label=HARDENED_LABELS[bool(hardened)])
        ax.axvline(0, color=style.GREY, lw=0.8, ls=":")
        ax.set_yticks(y, labels)
        ax.set(xlabel="effect (fraction of the scale's range)", title=f"{study} judge")
    style.figure_legend(fig, [a for row in axes for a in row])
    return fig


def sage_length(units: pd.DataFrame) -> plt.Figure:
    """SAGE final score against log tokens sent, one panel per layer x mode."""
    keys = sorted(units.groupby(["layer", "mode"]).groups) or [("none", "none")]
    fig, axes = style.subplots(len(keys), 1, width=3.4, height=3.2, sharey=True)
    for i, (layer, mode) in enumerate(keys):
        ax = axes[0][i]
        g = units[(units["layer"] == layer) & (units["mode"] == mode)]
        if g.empty:
            style.empty_panel(ax, "no scored stories")
            continue
        cut = g["cut"].astype(bool) if "cut" in g else pd.Series(False, index=g.index)
        for cat, c in g.groupby("category", sort=False):
            colour, marker = style.CATEGORY_COLOURS.get(cat), style.CATEGORY_MARKERS.get(cat, "o")
            whole = c[~cut.loc[c.index]]
            ax.scatter(whole["log_tokens"], whole["score"], s=18, color=colour, marker=marker,
                       label=style.CATEGORY_LABELS.get(cat, cat))
            cut_c = c[cut.loc[c.index]]   # cut head and tail: left out of the model, drawn hollow
            if len(cut_c):
                ax.scatter(cut_c["log_tokens"], cut_c["score"], s=18, facecolors="none", edgecolors=colour,
                           marker=marker)
        ax.set(xlabel="log story tokens sent", title=f"{layer}, {mode}", ylim=(0.8, 5.2))
    axes[0][0].set_ylabel("final score (1-5)")
    style.figure_legend(fig, [a for row in axes for a in row])
    return fig


def narrative_length(judged: pd.DataFrame) -> plt.Figure:
    """Narrative judges' mean score against path length, one panel per mode, methods by colour."""
    modes = list(dict.fromkeys(judged["mode"])) or ["none"]
    fig, axes = style.subplots(len(modes), 1, width=3.2, height=3.2, sharey=True)
    for i, mode in enumerate(modes):
        ax = axes[0][i]
        g = judged[judged["mode"] == mode]
        if g.empty:
            style.empty_panel(ax, "no judged narratives")
            continue
        for method, m in g.groupby("method", sort=True):
            ax.scatter(m["length"], m["score_mean"], s=18, color=style.METHOD_COLOURS.get(method),
                       label=style.METHOD_LABELS.get(method, method))
        ax.set(xlabel="path length (documents)", title=mode, ylim=(0.5, 10.5))
    axes[0][0].set_ylabel("mean score of the K agents")
    style.figure_legend(fig, [a for row in axes for a in row])
    return fig
