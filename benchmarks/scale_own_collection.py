"""Scale of `make own COLLECTION=` on this machine: MiniLM's throughput, and the landscape + paths
of a large collection by the nearest-neighbour route (docs/own_texts.md, "Time on 2 cores").

    python benchmarks/scale_own_collection.py minilm --n 2000        # VisPub abstracts, one thread
    python benchmarks/scale_own_collection.py landscape --n 50000    # precomputed vectors (.npy)
    python benchmarks/scale_own_collection.py dense --n 3000         # notebook 07's dense route: memory

``minilm`` embeds the first n VisPub abstracts of the data mirror with the bundled
all-MiniLM-L6-v2 (no cache) and reports documents per second. ``landscape`` builds n vectors by
resampling real MiniLM vectors (``--vectors``: an .npz of the embedding cache, or an .npy; each
new vector a random mixture of two real ones plus Gaussian noise, so that no two coincide), random
dates over five years, then: UMAP (the own profile's 32 neighbours, 48 dimensions) -> HDBSCAN
(min_cluster_size 8) -> the nearest-neighbour coherence graph (k = 32) -> widest paths between
random pairs (``--topics K``: memberships drawn over K topics instead of UMAP + HDBSCAN, the
graph's and paths' own cost). ``dense`` measures what notebook 07's dense route holds at n
documents (the own profile's 5 seeds x 2 JSD bases, 3 path seeds kept, the base-effect and sparsity
tables, the npz's stacked matrices), the memberships drawn over ``--topics`` (default 50) topics
instead of fitted: the peak resident memory above the process's start, in bytes per n^2, from
which ``narrative.dense_limit`` is set (docs/own_texts.md). Each step's wall and CPU time and the peak resident memory are printed as they
finish, and all of them as one JSON line at the end (``--out``). Run it under ``nice -n 10``
and state the load average beside the times.
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


_CPU = [0.0]


def step(record: dict, name: str, started: float) -> float:
    """Wall and CPU seconds since the last step (CPU: this process's own, what a loaded machine
    does not inflate), peak resident memory so far."""
    now = cpu_s()
    record[name] = {"seconds": round(time.perf_counter() - started, 1), "cpu_seconds": round(now - _CPU[0], 1),
                    "peak_rss_mb": round(peak_mb())}
    _CPU[0] = now
    print(f"[scale] {name}: {record[name]['seconds']} s wall, {record[name]['cpu_seconds']} CPU-s, peak RSS "
          f"{record[name]['peak_rss_mb']} MB, load {open('/proc/loadavg').read().split()[0]}", flush=True)
    return time.perf_counter()


def minilm(n: int) -> dict:
    from judgelab.narrative.landscape.collections import load_vispub
    from judgelab.embeddings import minilm_model_path
    from sentence_transformers import SentenceTransformer

    texts = load_vispub().docs["text"].astype(str).tolist()[:n]
    model = SentenceTransformer(minilm_model_path(), device="cpu")
    model.encode(texts[:32], batch_size=32)                    # warm-up, not timed
    t0 = time.perf_counter()
    model.encode(texts, batch_size=32, show_progress_bar=False)
    took = time.perf_counter() - t0
    words = float(np.mean([len(t.split()) for t in texts]))
    return {"what": "minilm", "documents": len(texts), "mean_words": round(words, 1), "seconds": round(took, 1),
            "documents_per_second": round(len(texts) / took, 2)}


def resampled(n: int, vectors: Path, seed: int) -> np.ndarray:
    if vectors.suffix == ".npz":
        with np.load(vectors) as z:
            real = z[[k for k in z.files if k.startswith("vec_")][0]]
    else:
        real = np.load(vectors)
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, len(real), n), rng.integers(0, len(real), n)
    mix = rng.uniform(0, 1, (n, 1))
    out = mix * real[a] + (1 - mix) * real[b] + rng.normal(scale=0.02, size=(n, real.shape[1]))
    return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


def landscape(n: int, vectors: Path, pairs: int, seed: int = 42, topics: int | None = None) -> dict:
    from judgelab.narrative.landscape.knn_graph import knn_coherence_graph
    from judgelab.narrative.landscape.projection import topic_memberships, umap_project
    from judgelab.narrative.paths.widest import widest_path_sparse

    record: dict = {"what": "landscape", "documents": n, "source": f"resampled from {vectors.name}"}
    t = time.perf_counter()
    emb = resampled(n, vectors, seed)
    dates = np.random.default_rng(seed).integers(0, 5 * 365, n)
    t = step(record, "vectors", t)
    if topics:  # the graph and paths alone: soft memberships drawn, not fitted (stated in the record)
        rng = np.random.default_rng(seed)
        memb = rng.dirichlet(np.full(topics, 0.05), n)
        record.update(topics=topics, memberships=f"drawn: Dirichlet(0.05) over {topics} topics, no UMAP/HDBSCAN")
    else:
        reduced = umap_project(emb, 48, 32, seed)
        reduced -= reduced.mean(axis=0)
        t = step(record, "umap", t)
        memb, labels = topic_memberships(reduced, 8)
        record["topics"] = int(memb.shape[1])
        record["noise_share"] = round(float((labels < 0).mean()), 3)
        t = step(record, "hdbscan", t)
    g = knn_coherence_graph(emb, memb, k=32, dates=dates, seed=seed)
    record.update(critical=round(g.critical, 4), components=g.components, candidate_edges=g.candidate_edges,
                  graph_edges=int(g.graph.nnz), graph_mb=round(g.nbytes / 1e6, 1), exact_neighbours=g.exact_neighbours,
                  graph_timings={k: round(v, 1) for k, v in g.timings.items()})
    t = step(record, "knn_graph", t)
    rng = np.random.default_rng(seed)
    found, lengths = 0, []
    for _ in range(pairs):
        s, e = rng.choice(n, 2, replace=False)
        s, e = (s, e) if dates[s] <= dates[e] else (e, s)
        path, _ = widest_path_sparse(g.graph, int(s), int(e), dates=dates)
        if path is not None:
            found += 1
            lengths.append(len(path))
    record.update(pairs=pairs, pairs_with_path=found, mean_length=round(float(np.mean(lengths)), 1) if lengths else None)
    step(record, "paths", t)
    return record


def dense(n: int, topics: int = 50, seed: int = 42) -> dict:
    """Peak memory of notebook 07's dense route at ``n`` documents (module doc)."""
    from judgelab.narrative.landscape import build, summaries
    from judgelab.narrative.landscape.collections import DocumentCollection
    from judgelab.narrative.landscape.projection import Landscape

    import pandas as pd

    rng = np.random.default_rng(seed)
    emb = rng.normal(size=(n, 384)).astype(np.float32)
    docs = pd.DataFrame({"doc": np.arange(n), "title": [f"d{i}" for i in range(n)], "text": "x",
                         "date": pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 1800, n), unit="D")})
    col = DocumentCollection("own", docs, emb, "drawn")

    def drawn(embeddings, n_neighbors, min_cluster_size, seed):   # memberships drawn, not fitted
        m = np.random.default_rng(seed).dirichlet(np.full(topics, 0.05), len(embeddings))
        return Landscape(np.zeros((len(embeddings), 2)), m, m.argmax(axis=1), m.argmax(axis=1), seed, {})

    build.fit_landscape = drawn
    base_mb = peak_mb()
    record: dict = {"what": "dense", "documents": n, "topics": topics, "baseline_rss_mb": round(base_mb)}
    t = time.perf_counter()
    knobs = {"n_neighbors": 32, "min_cluster_size": 8, "knn_k": 32}
    built = build.build_collection_landscapes(col, knobs, [seed + i for i in range(5)], ["e", 2], keep=3)
    built.umap2d = np.zeros((n, 2))
    t = step(record, "seeds_and_bases", t)
    summaries.jsd_base_effect(built)
    t = step(record, "jsd_base_effect", t)
    study = build.LandscapeStudy(None, {"own": built})
    summaries.graph_sparsity(study)
    t = step(record, "graph_sparsity", t)
    runs = [built.path_runs[s] for s in sorted(built.path_runs)]
    stacked = np.stack([r.coherence for r in runs])               # what the npz writer stacks
    del stacked
    step(record, "npz_stack", t)
    record["peak_above_start_mb"] = round(peak_mb() - base_mb)
    record["bytes_per_n2"] = round((peak_mb() - base_mb) * 1024 * 1024 / n ** 2, 1)
    return record


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["minilm", "landscape", "dense"])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--vectors", type=Path, default=None, help="real vectors to resample (.npz cache export or .npy)")
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--topics", type=int, default=None, help="landscape: draw memberships over this many topics "
                    "instead of fitting UMAP + HDBSCAN (the graph and paths' own cost)")
    args = ap.parse_args(argv)
    load = open("/proc/loadavg").read().split()[:3]
    if args.what == "dense":
        rec = dense(args.n, topics=args.topics or 50)
    elif args.what == "minilm":
        rec = minilm(args.n)
    else:
        rec = landscape(args.n, args.vectors, args.pairs, topics=args.topics)
    rec.update(load_before=load, load_after=open("/proc/loadavg").read().split()[:3], peak_rss_mb=round(peak_mb()))
    line = json.dumps(rec)
    print(line, flush=True)
    if args.out:
        args.out.write_text(line + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
