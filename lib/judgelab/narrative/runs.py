"""Notebook 07's steps as functions: prepare a collection, build its landscape, seed sensitivity.

Each step is one call so that the notebook only loads, calls and shows.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .coherence import coherence_matrix
from .collections import DocumentCollection, load_collection
from .embeddings import embed_collection
from .graph import critical_coherence, sparse_edges
from .landscape import Landscape, fit_landscape
from .settings import log_base


def prepare_collection(name: str, knobs: dict) -> DocumentCollection:
    """Load a collection, embed it with the configured backend, keep the profile's subset."""
    col = load_collection(name, knobs.get("year_range"))
    col = col.every_kth(knobs.get("subset"))
    return embed_collection(col, knobs["embedding"])


@dataclass
class LandscapeRun:
    """One seed's landscape, coherence matrix and critical coherence."""

    landscape: Landscape
    coherence: np.ndarray
    critical: float
    jsd_base: float


def build_landscape(col: DocumentCollection, knobs: dict, seed: int, jsd_base="e",
                    landscape: Landscape | None = None) -> LandscapeRun:
    """UMAP + HDBSCAN (seeded) -> coherence matrix (JSD base) -> critical coherence."""
    if landscape is None:
        landscape = fit_landscape(col.embeddings, n_neighbors=knobs["n_neighbors"],
                                  min_cluster_size=knobs["min_cluster_size"], seed=seed)
    base = log_base(jsd_base)
    c = coherence_matrix(col.embeddings, landscape.memberships, base)
    return LandscapeRun(landscape, c, critical_coherence(c), base)


def sparsity_row(c: np.ndarray, critical: float, dates: np.ndarray | None) -> dict:
    """Edges of the complete graph, of the thresholded graph, and with the temporal rule."""
    n = c.shape[0]
    undirected = int(((c >= critical).sum() - (np.diag(c) >= critical).sum()) // 2)
    directed = len(sparse_edges(c, critical, dates)[0]) if dates is not None else 2 * undirected
    return {"n_docs": n, "complete_edges": n * (n - 1) // 2, "sparse_edges": undirected,
            "sparse_share": undirected / (n * (n - 1) / 2), "temporal_directed_edges": directed}


def seed_sensitivity(col: DocumentCollection, knobs: dict, seeds: list[int], bases=("e", 2),
                     keep: int = 0) -> tuple[pd.DataFrame, dict[int, LandscapeRun]]:
    """Critical coherence over UMAP seeds and JSD bases; returns the table and the first ``keep``
    seeds' runs in the first base (reused by notebook 08 to average over seeds)."""
    rows, runs = [], {}
    for k, seed in enumerate(seeds):
        land = None
        for b, base in enumerate(bases):
            run = build_landscape(col, knobs, seed, base, landscape=land)
            land = run.landscape
            rows.append({"collection": col.name, "seed": seed, "jsd_base": str(base),
                         "critical": run.critical, "n_topics": land.n_topics,
                         "noise_share": float((land.hdbscan_labels < 0).mean()),
                         **sparsity_row(run.coherence, run.critical, col.dates)})
            if b == 0 and k < keep:
                runs[seed] = run
    return pd.DataFrame(rows), runs


def critical_summary(sens: pd.DataFrame) -> pd.DataFrame:
    """Mean, SD, min and max of the critical coherence over seeds, per collection and JSD base."""
    g = sens.groupby(["collection", "jsd_base"], sort=False)["critical"]
    return g.agg(n_seeds="count", mean="mean", sd="std", min="min", max="max").reset_index()


def jsd_base_effect(col: DocumentCollection, knobs: dict, landscape: Landscape, bases=("e", 2)) -> pd.DataFrame:
    """What the JSD log base changes on one landscape: the coherence distribution, the critical
    value, the sparse graph, and how much the two bases agree on which pairs are most coherent."""
    from scipy.stats import spearmanr

    from .coherence import offdiagonal

    rows, values = [], {}
    for base in bases:
        run = build_landscape(col, knobs, landscape.seed, base, landscape=landscape)
        vals = offdiagonal(run.coherence)
        values[str(base)] = vals
        rows.append({"collection": col.name, "seed": landscape.seed, "jsd_base": str(base),
                     "critical": run.critical, "theta_min": float(vals.min()), "theta_median": float(np.median(vals)),
                     "theta_mean": float(vals.mean()), "share_theta_below_0.05": float((vals < 0.05).mean()),
                     **sparsity_row(run.coherence, run.critical, col.dates)})
    out = pd.DataFrame(rows)
    keys = list(values)
    sub = np.random.default_rng(0).choice(len(values[keys[0]]), size=min(200_000, len(values[keys[0]])), replace=False)
    out["spearman_vs_" + keys[0]] = [float(spearmanr(values[keys[0]][sub], values[k][sub])[0]) for k in keys]
    return out
