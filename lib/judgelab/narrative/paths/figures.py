"""Figures of the extracted paths (notebook 08): Figure 8 (a, b, h) and Figure 1 of the paper.

Each function takes the tidy ``narr_paths`` rows of one seed (and, for the endpoint coverage,
notebook 07's landscape arrays) and returns a matplotlib Figure in the house style
(:mod:`judgelab.style`: palette, constrained layout, one legend below the panels), one row or
column of panels per collection; the notebook saves it with :func:`judgelab.reporting.save_figure`,
which places the caption.
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from judgelab import style
from judgelab.narrative.landscape.figures import landscape_map_figure
from judgelab.narrative.paths.endpoints import STRATA

METHODS = ("maxcap", "random")
COHERENCE_PANELS = {"min_coherence": "minimum", "mean_coherence": "average"}


def _collections(paths: pd.DataFrame) -> list[str]:
    if paths.empty:
        raise ValueError("no paths to plot")
    return list(dict.fromkeys(paths["collection"]))


def _strata(paths: pd.DataFrame) -> list[str]:
    """Strata present, in the paper's order (so each keeps its colour across panels)."""
    present = set(paths["stratum"])
    return [s for s in STRATA if s in present] + sorted(present - set(STRATA))


def coherence_by_method_figure(paths: pd.DataFrame, bins: int = 24) -> plt.Figure:
    """Figure 8 (a, b): histograms of each path's minimum and average coherence by method, one row
    per collection; both methods share the bins of a panel."""
    names = _collections(paths)
    fig, axes = style.subplots(len(COHERENCE_PANELS), len(names), width=5.0, height=3.4)
    for row, name in zip(axes, names):
        g = paths[paths["collection"] == name]
        for ax, (col, label) in zip(row, COHERENCE_PANELS.items()):
            edges = np.linspace(g[col].min(), g[col].max(), bins + 1)
            for method in METHODS:
                ax.hist(g.loc[g["method"] == method, col], bins=edges, alpha=0.6,
                        color=style.METHOD_COLOURS[method], label=style.METHOD_LABELS[method])
            ax.set_title(f"{name}: {label} coherence along the path")
            ax.set_xlabel(col)
            ax.set_ylabel("paths")
    style.figure_legend(fig)
    return fig


def length_vs_min_coherence_figure(paths: pd.DataFrame) -> plt.Figure:
    """Figure 8 (h): path length (documents) against minimum coherence, by method; one panel per
    collection."""
    names = _collections(paths)
    fig, axes = style.subplots(len(names), width=5.5, height=3.8)
    for ax, name in zip(axes[0], names):
        g = paths[paths["collection"] == name]
        for method in METHODS:
            gm = g[g["method"] == method]
            ax.scatter(gm["length"], gm["min_coherence"], s=12, alpha=0.6,
                       color=style.METHOD_COLOURS[method], label=style.METHOD_LABELS[method])
        ax.set_xlabel("path length (documents)")
        ax.set_ylabel("minimum coherence")
        ax.set_title(name)
    style.figure_legend(fig)
    return fig


def endpoints_per_topic(paths: pd.DataFrame, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(documents per topic, endpoint occurrences per topic) of the max-capacity pairs; a document
    that ends several pairs counts once per pair end."""
    labels = np.asarray(labels, dtype=int)
    pairs = paths[paths["method"] == "maxcap"]
    ends = np.r_[pairs["source"].to_numpy(int), pairs["target"].to_numpy(int)]
    docs = np.bincount(labels, minlength=labels.max() + 1)
    return docs, np.bincount(labels[ends], minlength=len(docs))


def endpoint_coverage_figure(paths: pd.DataFrame, landscapes: dict[str, dict]) -> plt.Figure:
    """Figure 1: per collection, the endpoints on the 2-D landscape by stratum, the days between
    endpoints by stratum, and endpoints beside documents per topic (notebook 07's ``landscapes``)."""
    names = _collections(paths)
    fig, axes = style.subplots(3, len(names), width=5.0, height=4.2)
    for row, name in zip(axes, names):
        xy, labels = landscapes[name]["umap2d"], landscapes[name]["labels"]
        g = paths[(paths["collection"] == name) & (paths["method"] == "maxcap")]
        row[0].scatter(xy[:, 0], xy[:, 1], s=4, color="lightgrey")
        for i, stratum in enumerate(_strata(g)):
            gs = g[g["stratum"] == stratum]
            ends = np.r_[gs["source"].to_numpy(int), gs["target"].to_numpy(int)]
            colour = style.colour(i)
            row[0].scatter(xy[ends, 0], xy[ends, 1], s=14, color=colour, label=stratum)
            row[1].hist(gs["temporal_span_days"], bins=20, alpha=0.5, color=colour, label=stratum)
        row[0].set_title(f"{name}: endpoints in the landscape")
        row[0].set_xticks([])
        row[0].set_yticks([])
        row[1].set_xlabel("days between endpoints")
        row[1].set_ylabel("pairs")
        row[1].set_title("temporal span by stratum")
        docs, touched = endpoints_per_topic(g, labels)
        topics = np.arange(len(docs))
        row[2].bar(topics, docs, color="lightgrey", label="documents")
        row[2].bar(topics, touched, color=style.colour(0), label="endpoints")
        row[2].set_xlabel("topic")
        row[2].xaxis.set_major_locator(MaxNLocator(integer=True))
        row[2].set_ylabel("count")
        row[2].set_title(f"topics covered: {(touched > 0).sum()} of {len(docs)}")
    style.figure_legend(fig)
    return fig


def example_pair(paths: pd.DataFrame) -> int:
    """The endpoint pair drawn on the static landscape: the longest max-capacity path (the most to
    see), ties broken by the higher minimum coherence, then the smaller pair id (deterministic)."""
    maxcap = paths[paths["method"] == "maxcap"]
    if maxcap.empty:
        raise ValueError("no max-capacity path to draw")
    best = maxcap.sort_values(["length", "min_coherence", "pair_id"], ascending=[False, False, True])
    return int(best["pair_id"].iloc[0])


def landscape_narrative_figure(paths: pd.DataFrame, landscape: dict, collection: str) -> plt.Figure:
    """The 2-D landscape of notebook 07 with one example narrative (:func:`example_pair`) of one
    collection's main-seed ``paths``: the max-capacity path (solid) and its random twin (dashed),
    labelled with their minimum and average coherence."""
    g = paths[paths["collection"] == collection]
    xy = np.asarray(landscape["umap2d"])
    fig = landscape_map_figure(xy, landscape["labels"], f"{collection}: an example narrative in the landscape")
    ax = fig.axes[0]
    for dots in ax.collections:  # the topics stay readable but recede: the paths use the same palette
        dots.set_alpha(0.3)
    pair = example_pair(g)
    for method in METHODS:
        row = g[(g["pair_id"] == pair) & (g["method"] == method)]
        if row.empty:
            continue
        r = row.iloc[0]
        at = xy[np.asarray(r["path"], dtype=int)]
        ax.plot(at[:, 0], at[:, 1], color=style.METHOD_COLOURS[method], lw=2 if method == "maxcap" else 1.5,
                ls="-" if method == "maxcap" else "--", marker="o", markersize=5, markerfacecolor="white",
                label=f"{style.METHOD_LABELS[method]}: {len(at)} documents, min {r['min_coherence']:.2f}, "
                      f"avg {r['mean_coherence']:.2f}")
    ax.set_title(f"{collection}: pair {pair} ({g.loc[g['pair_id'] == pair, 'stratum'].iloc[0]}) in the landscape")
    style.legend_below(ax)
    return fig


def landscape_narrative_figures(paths: pd.DataFrame, landscapes: dict[str, dict]) -> dict[str, plt.Figure]:
    """:func:`landscape_narrative_figure` of every collection that has paths, keyed by collection."""
    return {name: landscape_narrative_figure(paths, land, name) for name, land in landscapes.items()
            if (paths["collection"] == name).any()}
