"""What the JSD log base changes, and the size of the sparse coherence graph (paper 3.1, 4.2),
from the runs :mod:`judgelab.narrative.landscape.build` kept."""
from __future__ import annotations

import numpy as np
import pandas as pd

import networkx as nx

from judgelab.narrative.landscape.build import CollectionLandscapes, LandscapeRun, LandscapeStudy, run_sparsity
from judgelab.narrative.landscape.graph import coherence_digraph, graph_summary
from judgelab.stats.correlation import correlation

SPEARMAN_SAMPLE = 200_000
"""Pairs sampled (seeded, rng 0) for the Spearman correlation between bases: the full VisPub
upper triangle has 6.5 million pairs."""


def jsd_base_effect(built: CollectionLandscapes) -> pd.DataFrame:
    """What the JSD log base changes on the main landscape: the coherence distribution, the
    critical value, the sparse graph, and Spearman's rho between each base's pairwise coherences
    and the main base's (same seeded sample of pairs): how much the ranking of all pairs moves.
    On the sparse route the distribution is that of a seeded sample of pairs
    (:data:`~judgelab.narrative.landscape.build.PAIR_SAMPLE`, column ``pairs_measured``)."""
    col, rows, values = built.collection, [], {}
    for base, run in built.main_by_base.items():
        vals = run.pair_values(col.embeddings)
        values[base] = vals
        rows.append({"collection": col.name, "seed": built.main_seed, "jsd_base": base,
                     "critical": run.critical, "theta_min": float(vals.min()), "theta_median": float(np.median(vals)),
                     "theta_mean": float(vals.mean()), "share_theta_below_0.05": float((vals < 0.05).mean()),
                     "pairs_measured": len(vals), **run_sparsity(run, col.dates)})
    out = pd.DataFrame(rows)
    keys = list(values)
    n = len(values[keys[0]])
    sub = np.random.default_rng(0).choice(n, size=min(SPEARMAN_SAMPLE, n), replace=False)
    out["spearman_vs_" + keys[0]] = [correlation(values[keys[0]][sub], values[k][sub], method="spearman")["r"].item()
                                      for k in keys]
    return out


def jsd_base_effects(study: LandscapeStudy) -> pd.DataFrame:
    """:func:`jsd_base_effect` for every collection (``narr_jsd_base_effect``)."""
    return pd.concat([jsd_base_effect(c) for c in study.collections.values()], ignore_index=True)


def graph_sparsity(study: LandscapeStudy) -> pd.DataFrame:
    """Per collection, the main landscape's sparse coherence graph: edge counts and networkx
    connectivity (``narr_graph_sparsity``)."""
    rows = []
    for name, built in study.collections.items():
        main, dates = built.main, built.collection.dates
        rows.append({"collection": name, "seed": built.main_seed, "jsd_base": built.jsd_base,
                     "critical": main.critical, **run_sparsity(main, dates),
                     **graph_summary(run_digraph(main, dates))})
    return pd.DataFrame(rows)


def run_digraph(run: LandscapeRun, dates) -> nx.DiGraph:
    """The thresholded temporal graph as a networkx ``DiGraph``: from the dense matrix, or from
    the sparse route's graph (its edges u -> v with date_u <= date_v)."""
    if run.graph is None:
        return coherence_digraph(run.coherence, run.critical, dates)
    coo = run.graph.graph.tocoo()
    keep = np.asarray(dates)[coo.row] <= np.asarray(dates)[coo.col] if dates is not None else np.ones(coo.nnz, bool)
    g = nx.DiGraph()
    g.add_nodes_from(range(run.graph.n))
    g.add_weighted_edges_from(zip(coo.row[keep].tolist(), coo.col[keep].tolist(), coo.data[keep].tolist()))
    return g
