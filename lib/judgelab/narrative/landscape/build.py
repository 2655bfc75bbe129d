"""Build a collection's landscapes once (paper 4.2; docs/design.md: seed sensitivity).

One UMAP + HDBSCAN fit per seed; the coherence matrices of the other JSD bases reuse that fit (the
base changes only the topic similarity, eq. 1). The runs later steps need (the main seed in every
base, the first ``path_seeds`` seeds in the main base) are kept in a :class:`CollectionLandscapes`,
so tables and figures read them instead of refitting.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgelab.embeddings import embed_collection
from judgelab.narrative.landscape.coherence import coherence_matrix
from judgelab.narrative.landscape.collections import DocumentCollection, load_collection
from judgelab.narrative.landscape.graph import critical_coherence, sparse_edges
from judgelab.narrative.landscape.projection import Landscape, fit_landscape, project_2d
from judgelab.narrative.settings import LandscapeSettings, log_base


def prepare_collection(name: str, knobs: dict, source: DocumentCollection | None = None,
                       embedding_url: str | None = None) -> DocumentCollection:
    """Load a collection (or take ``source``, a user's collection already loaded), keep the
    profile's subset, embed it with the configured backend unless it brings its own vectors
    (``embedding_url``: an OpenAI-protocol embedding server, the configuration's)."""
    col = source if source is not None else load_collection(name, knobs.get("year_range"))
    col = col.every_kth(knobs.get("subset"))
    return embed_collection(col, "precomputed" if source is not None and col.embeddings is not None
                            else knobs["embedding"], openai_url=embedding_url)


@dataclass
class LandscapeRun:
    """One seed's landscape, coherence matrix and critical coherence (in one JSD base)."""

    landscape: Landscape
    coherence: np.ndarray
    critical: float
    jsd_base: float


def build_landscape(col: DocumentCollection, knobs: dict, seed: int, jsd_base="e",
                    landscape: Landscape | None = None) -> LandscapeRun:
    """UMAP + HDBSCAN (seeded; skipped when ``landscape`` is given) -> coherence matrix in the
    JSD base -> critical coherence."""
    if landscape is None:
        landscape = fit_landscape(col.embeddings, n_neighbors=knobs["n_neighbors"],
                                  min_cluster_size=knobs["min_cluster_size"], seed=seed)
    base = log_base(jsd_base)
    c = coherence_matrix(col.embeddings, landscape.memberships, base)
    return LandscapeRun(landscape, c, critical_coherence(c), base)


def runs_over_bases(col: DocumentCollection, knobs: dict, seed: int, bases) -> dict[str, LandscapeRun]:
    """One fit for ``seed``, its coherence in every base; keyed by ``str(base)``, first base first."""
    runs, land = {}, None
    for base in bases:
        run = build_landscape(col, knobs, seed, base, landscape=land)
        land = run.landscape
        runs[str(base)] = run
    return runs


def sparsity_row(c: np.ndarray, critical: float, dates: np.ndarray | None) -> dict:
    """Edges of the complete graph, of the thresholded graph, and with the temporal rule."""
    n = c.shape[0]
    undirected = int(((c >= critical).sum() - (np.diag(c) >= critical).sum()) // 2)
    directed = len(sparse_edges(c, critical, dates)[0]) if dates is not None else 2 * undirected
    return {"n_docs": n, "complete_edges": n * (n - 1) // 2, "sparse_edges": undirected,
            "sparse_share": undirected / (n * (n - 1) / 2), "temporal_directed_edges": directed}


def sensitivity_row(col: DocumentCollection, seed: int, base: str, run: LandscapeRun) -> dict:
    """One row of the seed-sensitivity table: critical coherence, topics, noise share, sparsity."""
    land = run.landscape
    return {"collection": col.name, "seed": seed, "jsd_base": str(base), "critical": run.critical,
            "n_topics": land.n_topics, "noise_share": float((land.hdbscan_labels < 0).mean()),
            **sparsity_row(run.coherence, run.critical, col.dates)}


@dataclass
class CollectionLandscapes:
    """Everything notebook 07 builds for one collection, built once and reused."""

    collection: DocumentCollection
    knobs: dict
    sensitivity: pd.DataFrame               # one row per (seed, JSD base)
    main_by_base: dict[str, LandscapeRun]   # the main seed in every base, main base first
    path_runs: dict[int, LandscapeRun]      # the first ``path_seeds`` seeds, main base
    umap2d: np.ndarray | None = None        # 2-D UMAP for display

    @property
    def name(self) -> str:
        return self.collection.name

    @property
    def main_seed(self) -> int:
        return int(self.main.landscape.seed)

    @property
    def jsd_base(self) -> str:
        """The main JSD base, as the sensitivity table spells it."""
        return next(iter(self.main_by_base))

    @property
    def main(self) -> LandscapeRun:
        return self.main_by_base[self.jsd_base]


def build_collection_landscapes(col: DocumentCollection, knobs: dict, seeds: list[int], bases,
                                keep: int = 1) -> CollectionLandscapes:
    """Fit every seed, critical coherence in every base. The first seed is the main one; only the
    first ``keep`` seeds' main-base runs are kept, for notebook 08 (a VisPub matrix is 52 MB)."""
    if not seeds:
        raise ValueError(f"{col.name}: no UMAP seed to build")
    rows, main_by_base, path_runs = [], {}, {}
    for k, seed in enumerate(seeds):
        by_base = runs_over_bases(col, knobs, seed, bases)
        rows += [sensitivity_row(col, seed, base, run) for base, run in by_base.items()]
        if k == 0:
            main_by_base = by_base
        if k < keep:
            path_runs[seed] = by_base[str(bases[0])]
    return CollectionLandscapes(col, knobs, pd.DataFrame(rows), main_by_base, path_runs)


@dataclass
class LandscapeStudy:
    """Notebook 07's landscapes for every collection, with the settings that made them."""

    settings: LandscapeSettings
    collections: dict[str, CollectionLandscapes]

    @property
    def sensitivity(self) -> pd.DataFrame:
        """Critical coherence per collection, seed and JSD base (``narr_critical_coherence_seeds``)."""
        return pd.concat([c.sensitivity for c in self.collections.values()], ignore_index=True)

    def overview(self) -> pd.DataFrame:
        """One row per collection: size, embedding, the main landscape's topics and critical value."""
        return pd.DataFrame([{"collection": name, "n_docs": len(c.collection),
                              "embedding_dim": int(c.collection.embeddings.shape[1]),
                              "embedding_source": c.collection.embedding_source,
                              "main_seed": c.main_seed, "jsd_base": c.jsd_base,
                              "n_topics": c.main.landscape.n_topics, "critical": c.main.critical,
                              "path_seeds": sorted(c.path_runs)}
                             for name, c in self.collections.items()])


def build_landscapes(settings: LandscapeSettings) -> LandscapeStudy:
    """Prepare and build every collection of ``settings`` (seeds x bases), plus the 2-D UMAP of
    each collection's embeddings for display (seeded with the main seed)."""
    out = {}
    for name in settings.collections:
        knobs = settings.collection_knobs(name)
        col = prepare_collection(name, knobs, settings.sources.get(name), settings.embedding_url)
        built = build_collection_landscapes(col, knobs, settings.seeds, settings.bases,
                                            keep=settings.path_seeds(name))
        built.umap2d = project_2d(col.embeddings, knobs["n_neighbors"], settings.seed)
        out[name] = built
    return LandscapeStudy(settings, out)
