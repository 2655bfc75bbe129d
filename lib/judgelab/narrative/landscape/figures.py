"""Figures of the coherence landscape (notebook 07), from what :mod:`judgelab.narrative.landscape.build`
built (nothing is refitted), in the house style (:mod:`judgelab.style`)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from judgelab import style
from judgelab.narrative.landscape.build import LandscapeStudy

TOPIC_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
"""Topic k gets palette colour k mod 8 and marker k div 8: 64 distinguishable topics with a
colour-blind-safe palette of 8."""


def critical_by_seed_figure(sensitivity: pd.DataFrame, reference: float | None = None) -> plt.Figure:
    """Critical coherence against the UMAP seed, one line per (collection, JSD base); a dashed
    line at the authors' news value when ``reference`` is given."""
    fig, axes = style.subplots(1, width=6.5, height=3.8)
    ax = axes[0, 0]
    groups = sensitivity.groupby(["collection", "jsd_base"], sort=False)
    for i, ((coll, base), g) in enumerate(groups):
        ax.plot(g["seed"], g["critical"], marker="o", color=style.colour(i), label=f"{coll}, JSD base {base}")
    if reference is not None:
        ax.axhline(reference, color=style.GREY, ls="--", lw=1, label="authors' news value (seed 42, ln)")
    ax.set_xlabel("UMAP seed")
    ax.set_ylabel("critical coherence")
    ax.set_title("Critical coherence across UMAP seeds")
    style.legend_right(ax)
    return fig


def coherence_distribution_figure(study: LandscapeStudy, bins: int = 80) -> plt.Figure:
    """One panel per collection: the main seed's off-diagonal coherence θ in every JSD base
    (density histograms) with each base's critical coherence as a dashed line of its colour."""
    names = list(study.collections)
    fig, axes = style.subplots(len(names), width=5.5, height=3.6)
    for ax, name in zip(axes[0], names):
        built = study.collections[name]
        for i, (base, run) in enumerate(built.main_by_base.items()):
            colour = style.colour(i)
            ax.hist(run.pair_values(built.collection.embeddings), bins=bins, alpha=0.5, density=True, color=colour,
                    label=f"base {base}: critical {run.critical:.3f}")
            ax.axvline(run.critical, ls="--", lw=1, color=colour)
        ax.set_title(f"{name}: pairwise coherence θ (seed {built.main_seed})")
        ax.set_xlabel("θ")
        ax.set_ylabel("density")
        style.legend_right(ax)
    return fig


def topic_style(labels: np.ndarray) -> tuple[list[str], list[str]]:
    """Colour and marker of each topic label (see :data:`TOPIC_MARKERS`)."""
    labels = np.asarray(labels, dtype=int)
    colours = [style.colour(k) for k in labels]
    markers = [TOPIC_MARKERS[(k // len(style.OKABE_ITO)) % len(TOPIC_MARKERS)] for k in labels]
    return colours, markers


def landscape_map_figure(xy: np.ndarray, labels: np.ndarray, title: str) -> plt.Figure:
    """The 2-D landscape: one point per document at its 2-D UMAP position, one colour + marker per
    topic (HDBSCAN argmax label)."""
    xy, labels = np.asarray(xy), np.asarray(labels, dtype=int)
    if len(xy) != len(labels):
        raise ValueError(f"{len(xy)} positions but {len(labels)} topic labels")
    fig, axes = style.subplots(1, width=6.0, height=5.0)
    ax = axes[0, 0]
    for topic in np.unique(labels):
        at = labels == topic
        colours, markers = topic_style(np.array([topic]))
        ax.scatter(xy[at, 0], xy[at, 1], s=10, color=colours[0], marker=markers[0], linewidths=0)
    ax.set_title(title)
    ax.set_xticks([])
    ax.set_yticks([])
    return fig


def landscape_maps(study: LandscapeStudy) -> dict[str, plt.Figure]:
    """:func:`landscape_map_figure` of every collection's main landscape, keyed by collection."""
    out = {}
    for name, built in study.collections.items():
        land = built.main.landscape
        out[name] = landscape_map_figure(
            built.umap2d, land.labels,
            f"{name}: {len(built.collection)} documents, {land.n_topics} topics (seed {built.main_seed})")
    return out
