"""Build a collection's landscapes once (paper 4.2; docs/design.md: seed sensitivity).

One UMAP + HDBSCAN fit per seed; the coherence matrices of the other JSD bases reuse that fit (the
base changes only the topic similarity, eq. 1). The runs later steps need (the main seed in every
base, the first ``path_seeds`` seeds in the main base) are kept in a :class:`CollectionLandscapes`,
so tables and figures read them instead of refitting.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgelab.embeddings import embed_collection, l2_normalise
from judgelab.narrative.landscape.coherence import coherence_matrix, offdiagonal
from judgelab.narrative.landscape.collections import DocumentCollection, load_collection
from judgelab.narrative.landscape.graph import critical_coherence, sparse_edges
from judgelab.narrative.landscape.knn_graph import (EXACT_UP_TO, KnnCoherenceGraph, knn_coherence_graph,
                                                    neighbour_lists, pair_coherence)
from judgelab.narrative.landscape.projection import UMAP_APPROXIMATE_FROM, Landscape, fit_landscape, project_2d
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


POOL_PAIRS = 2_000_000
"""Pairs notebook 08's endpoint strata draw from on the sparse route (every pair when the
collection has fewer; 50,000 documents have 1.25 billion)."""

PAIR_SAMPLE = 200_000
"""Pairs of documents (seeded, rng 0) on which the sparse route measures the coherence
distribution (the dense route reads every pair): a large collection has billions."""


def route_note(k: int) -> str:
    """What the sparse route approximates (sidecars' ``choices``, the notebooks' text)."""
    return (f"sparse: coherence only between each document and its {k} nearest neighbours (more documents "
            "than dense_limit); the critical value is the exact one when the candidate graph is connected "
            "(components = 1), but edges between non-neighbours are missing, so paths can be narrower or absent "
            "(news, k = 32: 83 of 92 pairs kept a path, mean capacity lost 0.0097; docs/own_texts.md)")


def progress(message: str) -> None:
    """One progress line of notebook 07/08's long steps, marked for the pipeline's relay (stderr,
    :data:`judgelab.gateway.progress.LOG_MARK`), so `make own`'s log shows how far a large
    collection is."""
    from judgelab.gateway.progress import LOG_MARK

    print(f"{LOG_MARK}landscape {time.strftime('%H:%M:%S')}: {message}", file=sys.stderr, flush=True)


@dataclass
class LandscapeRun:
    """One seed's landscape, coherence and critical coherence (in one JSD base): the dense n x n
    matrix, or on the sparse route (``graph``) the nearest-neighbour graph and no matrix."""

    landscape: Landscape
    coherence: np.ndarray | None
    critical: float
    jsd_base: float
    graph: KnnCoherenceGraph | None = None

    @property
    def route(self) -> str:
        return "dense" if self.graph is None else "sparse"

    def pair_values(self, embeddings: np.ndarray) -> np.ndarray:
        """theta over the pairs of distinct documents: every pair (dense), or the same seeded
        sample of :data:`PAIR_SAMPLE` pairs (sparse; eq. 1 computed on each)."""
        if self.graph is None:
            return offdiagonal(self.coherence)
        u, v = sample_pairs(len(embeddings), PAIR_SAMPLE, seed=0)
        return pair_coherence(embeddings, self.landscape.memberships, u, v, self.jsd_base)


def sample_pairs(n: int, size: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(i, j)``, i < j: every pair when there are at most ``size``, else ``size`` distinct pairs
    drawn uniformly (seeded)."""
    total = n * (n - 1) // 2
    if total <= size:
        return np.triu_indices(n, k=1)
    rng = np.random.default_rng(seed)
    i = rng.integers(0, n, size=2 * size)
    j = rng.integers(0, n, size=2 * size)
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    keys = np.unique((lo * n + hi)[lo != hi])
    keys = rng.choice(keys, size=min(size, len(keys)), replace=False)
    keys.sort()
    return keys // n, keys % n


def shared_neighbours(embeddings: np.ndarray, knobs: dict, route: str, seed: int = 42) -> tuple[np.ndarray, np.ndarray] | None:
    """Each document's cosine neighbours (exact up to :data:`knn_graph.EXACT_UP_TO` documents, one
    NN-descent seeded with the main seed above), found once for every seed, JSD base and the 2-D map:
    UMAP's ``n_neighbors`` (from :data:`projection.UMAP_APPROXIMATE_FROM` documents, where UMAP
    would otherwise search approximately for every seed) and, on the sparse route, the candidate
    graph's ``knn_k``. None for a small collection on the dense route (UMAP searches exactly)."""
    n = len(embeddings)
    need = [int(knobs["n_neighbors"])] if n >= UMAP_APPROXIMATE_FROM else []
    if route == "sparse":
        need.append(int(knobs["knn_k"]))
    if not need:
        return None
    progress(f"nearest neighbours of {n} documents (k = {max(need)}; exact up to {EXACT_UP_TO}), shared by every seed")
    return neighbour_lists(l2_normalise(np.asarray(embeddings, dtype=np.float64)), max(need), seed=int(seed))


def umap_knn(neighbours, n: int) -> dict:
    """``neighbours=`` for a UMAP fit when UMAP takes them (:data:`UMAP_APPROXIMATE_FROM` documents
    and more), else nothing: UMAP's own exact search."""
    return {"neighbours": neighbours} if neighbours is not None and n >= UMAP_APPROXIMATE_FROM else {}


def build_landscape(col: DocumentCollection, knobs: dict, seed: int, jsd_base="e",
                    landscape: Landscape | None = None, route: str = "dense",
                    neighbours: tuple[np.ndarray, np.ndarray] | None = None) -> LandscapeRun:
    """UMAP + HDBSCAN (seeded; skipped when ``landscape`` is given) -> coherence in the JSD base
    -> critical coherence: the dense matrix, or (``route="sparse"``) theta between each document
    and its ``knobs["knn_k"]`` nearest neighbours only (:mod:`knn_graph`; undirected graph).
    ``neighbours``: :func:`shared_neighbours`, when the collection needs them."""
    if landscape is None:
        progress(f"{col.name}: UMAP + HDBSCAN, seed {seed}, {len(col)} documents")
        landscape = fit_landscape(col.embeddings, n_neighbors=knobs["n_neighbors"],
                                  min_cluster_size=knobs["min_cluster_size"], seed=seed, **umap_knn(neighbours, len(col)))
    base = log_base(jsd_base)
    if route == "sparse":
        progress(f"{col.name}: nearest-neighbour coherence graph, k = {knobs['knn_k']}, seed {seed}, JSD base {jsd_base}")
        g = knn_coherence_graph(col.embeddings, landscape.memberships, k=int(knobs["knn_k"]), base=base, seed=seed,
                                neighbours=None if neighbours is None else neighbours[0])
        return LandscapeRun(landscape, None, g.critical, base, g)
    progress(f"{col.name}: coherence matrix, seed {seed}, JSD base {jsd_base}")
    c = coherence_matrix(col.embeddings, landscape.memberships, base)
    return LandscapeRun(landscape, c, critical_coherence(c), base)


def runs_over_bases(col: DocumentCollection, knobs: dict, seed: int, bases,
                    route: str = "dense", neighbours=None, landscape: Landscape | None = None) -> dict[str, LandscapeRun]:
    """One fit for ``seed`` (``landscape`` when already fitted), its coherence in every base;
    keyed by ``str(base)``, first base first."""
    runs, land = {}, landscape
    for base in bases:
        run = build_landscape(col, knobs, seed, base, landscape=land, route=route, neighbours=neighbours)
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


def knn_sparsity_row(g: KnnCoherenceGraph, dates: np.ndarray | None) -> dict:
    """:func:`sparsity_row` of the sparse route's graph (undirected, both directions stored), with
    what the route evaluated: its k, candidate pairs and connected parts."""
    n = g.n
    coo = g.graph.tocoo()
    undirected = int((coo.row < coo.col).sum())
    directed = int((np.asarray(dates)[coo.row] <= np.asarray(dates)[coo.col]).sum()) if dates is not None else int(coo.nnz)
    return {"n_docs": n, "complete_edges": n * (n - 1) // 2, "sparse_edges": undirected,
            "sparse_share": undirected / (n * (n - 1) / 2), "temporal_directed_edges": directed,
            "route": "sparse", "knn_k": g.k, "candidate_edges": g.candidate_edges, "components": g.components}


def run_sparsity(run: LandscapeRun, dates: np.ndarray | None) -> dict:
    """The sparsity columns of either route (the sparse route's with its ``route``, ``knn_k``, ...)."""
    if run.graph is not None:
        return knn_sparsity_row(run.graph, dates)
    return sparsity_row(run.coherence, run.critical, dates)


def sensitivity_row(col: DocumentCollection, seed: int, base: str, run: LandscapeRun) -> dict:
    """One row of the seed-sensitivity table: critical coherence, topics, noise share, sparsity."""
    land = run.landscape
    return {"collection": col.name, "seed": seed, "jsd_base": str(base), "critical": run.critical,
            "n_topics": land.n_topics, "noise_share": float((land.hdbscan_labels < 0).mean()),
            **run_sparsity(run, col.dates)}


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

    @property
    def route(self) -> str:
        return self.main.route


FIT_PROCESSES = 2
"""Seeds a large collection's UMAP + HDBSCAN fits run at once, one process each: a seeded UMAP runs
on one thread, so two fill this project's 2 cores (at 50,000 documents a fit holds about 2 GB)."""


def fits_in_order(col: DocumentCollection, knobs: dict, seeds: list[int], neighbours, map_seed: int | None = None):
    """Each seed's landscape, in order, then the 2-D map of ``map_seed`` (when given): fitted
    :data:`FIT_PROCESSES` at a time in worker processes for a collection of
    :data:`UMAP_APPROXIMATE_FROM` documents or more (each fit is seeded and single-threaded, so
    they are the ones a loop would fit); else None for each (:func:`build_landscape` and
    :func:`build_landscapes` fit them, in this process)."""
    count = len(seeds) + (map_seed is not None)
    if len(col) < UMAP_APPROXIMATE_FROM or count < 2:
        yield from (None for _ in range(count))
        return
    from joblib import Parallel, delayed

    knn = umap_knn(neighbours, len(col))
    progress(f"{col.name}: UMAP + HDBSCAN of {len(seeds)} seeds{' and the 2-D map' if map_seed is not None else ''}, "
             f"{FIT_PROCESSES} at a time, {len(col)} documents")
    jobs = [delayed(fit_landscape)(col.embeddings, n_neighbors=knobs["n_neighbors"],
                                   min_cluster_size=knobs["min_cluster_size"], seed=seed, **knn) for seed in seeds]
    if map_seed is not None:
        jobs.append(delayed(project_2d)(col.embeddings, knobs["n_neighbors"], map_seed, **knn))
    yield from Parallel(n_jobs=min(FIT_PROCESSES, len(jobs)), return_as="generator")(jobs)


def build_collection_landscapes(col: DocumentCollection, knobs: dict, seeds: list[int], bases,
                                keep: int = 1, route: str = "dense", map_seed: int | None = None) -> CollectionLandscapes:
    """Fit every seed, critical coherence in every base. The first seed is the main one; only the
    first ``keep`` seeds' main-base runs are kept, for notebook 08 (a VisPub matrix is 52 MB).
    ``map_seed``: a large collection's 2-D map is fitted beside the seeds (``umap2d``).
    ``route``: dense matrices, or the sparse nearest-neighbour graphs (every seed and base alike)."""
    if not seeds:
        raise ValueError(f"{col.name}: no UMAP seed to build")
    rows, main_by_base, path_runs = [], {}, {}
    neighbours = shared_neighbours(col.embeddings, knobs, route, seed=seeds[0])
    fits = fits_in_order(col, knobs, seeds, neighbours, map_seed)
    for k, (seed, fitted) in enumerate(zip(seeds, fits)):
        progress(f"{col.name}: seed {seed} ({k + 1} of {len(seeds)}), {route} route")
        by_base = runs_over_bases(col, knobs, seed, bases, route, neighbours, landscape=fitted)
        rows += [sensitivity_row(col, seed, base, run) for base, run in by_base.items()]
        if k == 0:
            main_by_base = by_base
        if k < keep:
            path_runs[seed] = by_base[str(bases[0])]
    umap2d = next(fits, None)       # the 2-D map, when a worker fitted it beside the seeds
    return CollectionLandscapes(col, knobs, pd.DataFrame(rows), main_by_base, path_runs, umap2d=umap2d)


@dataclass
class LandscapeStudy:
    """Notebook 07's landscapes for every collection, with the settings that made them."""

    settings: LandscapeSettings
    collections: dict[str, CollectionLandscapes]

    @property
    def sensitivity(self) -> pd.DataFrame:
        """Critical coherence per collection, seed and JSD base (``narr_critical_coherence_seeds``)."""
        return pd.concat([c.sensitivity for c in self.collections.values()], ignore_index=True)

    def route_choices(self) -> dict:
        """``landscape_route.<collection>``: the route's note for every collection on the sparse route."""
        return {f"landscape_route.{name}": route_note(c.main.graph.k)
                for name, c in self.collections.items() if c.route == "sparse"}

    def overview(self) -> pd.DataFrame:
        """One row per collection: size, embedding, the main landscape's topics and critical value."""
        return pd.DataFrame([{"collection": name, "n_docs": len(c.collection),
                              "embedding_dim": int(c.collection.embeddings.shape[1]),
                              "embedding_source": c.collection.embedding_source,
                              "main_seed": c.main_seed, "jsd_base": c.jsd_base,
                              "n_topics": c.main.landscape.n_topics, "critical": c.main.critical,
                              "path_seeds": sorted(c.path_runs), "route": c.route,
                              "knn_k": c.main.graph.k if c.main.graph is not None else None}
                             for name, c in self.collections.items()])


def build_landscapes(settings: LandscapeSettings) -> LandscapeStudy:
    """Prepare and build every collection of ``settings`` (seeds x bases), plus the 2-D UMAP of
    each collection's embeddings for display (seeded with the main seed)."""
    out = {}
    for name in settings.collections:
        knobs = {"knn_k": settings.knobs["knn_k"], **settings.collection_knobs(name)}
        col = prepare_collection(name, knobs, settings.sources.get(name), settings.embedding_url)
        route = settings.route(len(col))
        if route == "sparse":
            progress(f"{name}: {len(col)} documents > dense_limit {settings.knobs['dense_limit']}: the sparse "
                     f"route, coherence only between each document and its {knobs['knn_k']} nearest neighbours")
        built = build_collection_landscapes(col, knobs, settings.seeds, settings.bases,
                                            keep=settings.path_seeds(name), route=route, map_seed=settings.seed)
        if built.umap2d is None:   # a collection below UMAP_APPROXIMATE_FROM: UMAP searches itself
            progress(f"{name}: 2-D UMAP for the map")
            built.umap2d = project_2d(col.embeddings, knobs["n_neighbors"], settings.seed)
        out[name] = built
    return LandscapeStudy(settings, out)
