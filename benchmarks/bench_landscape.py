"""Benchmark: the landscape and its paths at scale (notebooks 07-08's core).

Synthetic collections with known topic structure, shaped like VisPub: n documents with 1,536-d
embeddings around 48 topic centres, 48-d topic memberships (Dirichlet, peaked on the document's
topic), dates over 30 years. The pipeline measured per size is what runs at scale:
:func:`judgelab.narrative.landscape.sparse_graph.build_sparse_graph` (coherence in row blocks,
exact critical coherence by merged maximum spanning forests, the sparse temporal graph; no n x n
matrix) and 200 widest paths on that graph (:func:`judgelab.narrative.paths.widest.widest_path_sparse`).
It starts from given embeddings and topic memberships: UMAP + HDBSCAN are timed separately
(``full_pipeline``), because at 50,000 documents they, not the graph, are the long step.

Each measurement runs in a fresh child process; ``peak_mem_mb`` is that process's peak resident
memory (``ru_maxrss``: interpreter, libraries and the synthetic input included — 1,536-d float32
embeddings are 307 MB at 50,000 documents, plus the generator's temporaries). ``work_mem_mb`` is
the peak minus the resident memory just after imports. Seconds are wall clock on whatever else the
machine runs (noisy on a shared machine); memory is not.

Figures (``results/bench/landscape.json``; one ``landscape.<figure> <value>`` line each, and a
``targets`` block with pass/fail):

- ``speedup_vs_networkx``: at n = 3,549, seconds of the networkx way to the critical coherence
  (``nx.from_numpy_array`` of the dense matrix + ``nx.maximum_spanning_tree``, as the original code
  did) divided by the seconds the pipeline actually spends on it (the first block's Prim and the
  forest merges inside ``build_sparse_graph``; at this size one block holds every row, so it is
  the dense Prim). Target >= 10. ``speedup_dense_prim_vs_networkx``: the dense Prim that notebook
  07 uses (``critical_coherence``), on the same matrix.
- ``peak_mem_mb``: peak RSS of the pipeline at n = 3,549. Target <= 1,024.
- ``n<N>_seconds`` / ``n<N>_peak_mem_mb`` for each size (default 2,000 / 5,000 / 20,000 / 50,000);
  targets: n20000 peak <= 1,024 MB, n50000 <= 300 s and <= 4,096 MB.
- ``seconds_exponent`` / ``peak_mem_exponent`` / ``work_mem_exponent``: slopes of log(value)
  against log(n) over the sizes (least squares).
- ``memberships_speedup_vs_hdbscan``: at 5,000 points in ~330 clusters (12-d, min_cluster_size 8),
  seconds of hdbscan's ``all_points_membership_vectors`` over those of
  :mod:`judgelab.narrative.landscape.memberships` on the same fit (equal bit for bit, checked).
  Target >= 10: the landscape's memberships at 50,000 documents rest on it.
- ``news_top_k``: the ``top_k`` bound against the exact graph on the real news collection
  (authors' embeddings, UMAP + HDBSCAN 32/8, seed 42; the endpoint pairs of notebook 08's
  sampler, 200 pairs): edges and MB of the graph, share of identical paths, and the differences
  in minimum and mean coherence along the paths. Skipped when the data mirror is absent.

Run: ``python benchmarks/bench_landscape.py`` (about 10 min on a quiet 2-core machine),
``--sizes 2000,5000`` to choose sizes, ``--quick`` for a small smoke run, ``--no-news``,
``--full-n 0`` to skip the UMAP + HDBSCAN timing.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

N_TOPICS = 48
DIM = 1536
N_PATHS = 200
NX_N = 3549
SIZES = (2000, 5000, 20000, 50000)
TOP_KS = (5, 10, 20, 50)
TARGETS = {  # figure -> (comparison, bound)
    "speedup_vs_networkx": (">=", 10.0), "peak_mem_mb": ("<=", 1024.0),
    "n20000_peak_mem_mb": ("<=", 1024.0), "n50000_seconds": ("<=", 300.0),
    "n50000_peak_mem_mb": ("<=", 4096.0), "memberships_speedup_vs_hdbscan": (">=", 10.0),
}


def synthetic(n: int, seed: int = 0):
    """Embeddings (n x 1536 float32), memberships (n x 48), dates (days, sorted), topic labels."""
    rng = np.random.default_rng(seed)
    topic = rng.integers(0, N_TOPICS, size=n)
    centres = rng.standard_normal((N_TOPICS, DIM), dtype=np.float32)
    emb = centres[topic]
    emb += 1.5 * rng.standard_normal((n, DIM), dtype=np.float32)
    alpha = np.full((n, N_TOPICS), 0.05)
    alpha[np.arange(n), topic] = 5.0
    memb = rng.gamma(alpha)
    memb /= memb.sum(axis=1, keepdims=True)
    dates = np.sort(rng.integers(0, 30 * 365, size=n))
    return emb, memb, dates, topic


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def cpu_s() -> float:
    """CPU seconds of this process (user + system, all threads): less sensitive to a busy machine."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def compute_dtype(n: int):
    """float64 mixture temporaries where they are cheap, float32 (~1e-6 in theta) above 6,000."""
    return np.float32 if n > 6000 else np.float64


def endpoint_pairs(n: int, dates: np.ndarray, n_paths: int) -> list[tuple[int, int]]:
    rng = np.random.default_rng(1)
    return [tuple(sorted(rng.choice(n, size=2, replace=False), key=lambda x: (dates[x], x)))
            for _ in range(n_paths)]


def child_ours(n: int, n_paths: int) -> dict:
    from judgelab.narrative.landscape.sparse_graph import build_sparse_graph
    from judgelab.narrative.paths.widest import widest_path_sparse

    base_mb = peak_mb()
    emb, memb, dates, _ = synthetic(n)
    input_mb = peak_mb()
    cpu0 = cpu_s()
    t0 = time.perf_counter()
    g = build_sparse_graph(emb, memb, np.e, dates, compute_dtype=compute_dtype(n))
    t1 = time.perf_counter()
    found = sum(widest_path_sparse(g.graph, s, t, dates)[0] is not None
                for s, t in endpoint_pairs(n, dates, n_paths))
    t2 = time.perf_counter()
    return {"n": n, "graph_s": t1 - t0, **{f"{k}_s": v for k, v in g.timings.items()},
            "paths_s": t2 - t1, "total_s": t2 - t0, "cpu_s": cpu_s() - cpu0, "critical": g.critical, "paths_found": found,
            "edges": g.n_edges, "graph_mb": g.nbytes / 2**20, "base_mem_mb": base_mb,
            "input_mem_mb": input_mb, "peak_mem_mb": peak_mb()}


def child_networkx(n: int) -> dict:
    import networkx as nx
    from judgelab.narrative.landscape.coherence import coherence_matrix
    from judgelab.narrative.landscape.graph import critical_coherence, critical_coherence_scipy

    emb, memb, _dates, _ = synthetic(n)
    c = coherence_matrix(emb, memb, np.e, compute_dtype=compute_dtype(n))
    t0 = time.perf_counter()
    prim = critical_coherence(c)
    t1 = time.perf_counter()
    scipy_value = critical_coherence_scipy(c)
    t2 = time.perf_counter()
    g = nx.from_numpy_array(np.triu(c), create_using=nx.Graph)
    tree = nx.maximum_spanning_tree(g)
    crit = min(w for _, _, w in tree.edges(data="weight"))
    t3 = time.perf_counter()
    if not prim == scipy_value == float(crit):
        raise SystemExit(f"critical coherence disagrees: prim {prim}, scipy {scipy_value}, networkx {crit}")
    return {"n": n, "networkx_mst_s": t3 - t2, "dense_prim_s": t1 - t0, "scipy_mst_s": t2 - t1,
            "critical": float(crit), "peak_mem_mb": peak_mb()}


def child_full(n: int) -> dict:
    """UMAP (48-d) + HDBSCAN on the synthetic embeddings, then the graph: the whole landscape."""
    from judgelab.narrative.landscape.projection import fit_landscape
    from judgelab.narrative.landscape.sparse_graph import build_sparse_graph

    emb, _memb, dates, topic = synthetic(n)
    t0 = time.perf_counter()
    land = fit_landscape(emb, n_neighbors=32, min_cluster_size=8, seed=42)
    t1 = time.perf_counter()
    g = build_sparse_graph(emb, land.memberships, np.e, dates, compute_dtype=compute_dtype(n))
    t2 = time.perf_counter()
    from sklearn.metrics import adjusted_rand_score
    return {"n": n, "umap_hdbscan_s": t1 - t0, "graph_s": t2 - t1, "total_s": t2 - t0,
            "n_topics_found": land.n_topics, "ari_vs_true_topics": float(adjusted_rand_score(topic, land.labels)),
            "peak_mem_mb": peak_mb()}


def child_memberships(n: int) -> dict:
    """HDBSCAN's soft memberships of n points (clusters of ~15 points in 12-d, 8 per cluster at the
    least, as the landscape's min_cluster_size): hdbscan's ``all_points_membership_vectors`` and
    :mod:`judgelab.narrative.landscape.memberships` on the same fit, which must agree bit for bit."""
    import warnings

    import hdbscan
    from judgelab.narrative.landscape.memberships import all_points_membership_vectors

    rng = np.random.default_rng(0)
    centres = rng.uniform(-20, 20, (max(2, n // 15), 12))
    x = centres[rng.integers(0, len(centres), n)] + rng.normal(scale=0.6, size=(n, 12))
    model = hdbscan.HDBSCAN(min_cluster_size=8, prediction_data=True).fit(x)
    all_points_membership_vectors(model)                      # numba's compilation, not timed
    t0 = time.perf_counter()
    ours = all_points_membership_vectors(model)
    t1 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = hdbscan.all_points_membership_vectors(model)
    t2 = time.perf_counter()
    if not np.array_equal(ours, theirs):
        raise SystemExit("memberships differ from hdbscan's all_points_membership_vectors")
    return {"n": n, "clusters": int(ours.shape[1]), "ours_s": t1 - t0, "hdbscan_s": t2 - t1}


def child_news(n_pairs: int) -> dict:
    """The top_k bound against the exact graph on the news collection (module doc)."""
    from judgelab.narrative.landscape.collections import load_news
    from judgelab.narrative.landscape.projection import fit_landscape
    from judgelab.narrative.landscape.sparse_graph import build_sparse_graph, sparse_degree
    from judgelab.narrative.paths.endpoints import candidate_pools, sample_endpoints
    from judgelab.narrative.paths.metrics import path_metrics
    from judgelab.narrative.paths.widest import widest_path_sparse
    from judgelab.narrative.landscape.coherence import coherence_matrix

    col = load_news()
    land = fit_landscape(col.embeddings, n_neighbors=32, min_cluster_size=8, seed=42)
    dates = np.asarray(col.dates)
    t0 = time.perf_counter()
    exact = build_sparse_graph(col.embeddings, land.memberships, np.e, dates)
    exact_s = time.perf_counter() - t0
    c = coherence_matrix(col.embeddings, land.memberships, np.e)   # only to measure paths

    def paths_on(g):
        return lambda s, t: widest_path_sparse(g.graph, s, t, dates)[0]

    pools = candidate_pools(land.labels, dates, sparse_degree(exact), col.embeddings)
    pairs = sample_endpoints(pools, n_pairs, paths_on(exact), seed=42)
    ref = pairs["path"].tolist()
    ref_m = [path_metrics(p, c) for p in ref]
    out = {"n_docs": len(col), "n_pairs": len(ref), "critical": exact.critical,
           "exact_edges": exact.n_edges, "exact_graph_mb": exact.nbytes / 2**20,
           "exact_edge_share": exact.n_edges / (len(col) * (len(col) - 1)), "exact_build_s": exact_s,
           "pairs_at_critical": exact.pairs_at_critical, "top_k": {}}
    for k in TOP_KS:
        g = build_sparse_graph(col.embeddings, land.memberships, np.e, dates, top_k=k)
        t0 = time.perf_counter()
        got = [widest_path_sparse(g.graph, s, t, dates)[0] for s, t in zip(pairs["source"], pairs["target"])]
        paths_s = time.perf_counter() - t0
        both = [(r, m, p) for r, m, p in zip(ref, ref_m, got) if p is not None]
        dmin = [path_metrics(p, c)["min_coherence"] - m["min_coherence"] for _, m, p in both]
        dmean = [path_metrics(p, c)["mean_coherence"] - m["mean_coherence"] for _, m, p in both]
        out["top_k"][str(k)] = {
            "edges": g.n_edges, "graph_mb": g.nbytes / 2**20, "edge_share_of_exact": g.n_edges / exact.n_edges,
            "paths_found_share": len(both) / len(ref),
            "identical_path_share": sum(r == p for r, _, p in both) / len(ref),
            "min_coherence_diff_mean": float(np.mean(dmin)) if dmin else float("nan"),
            "min_coherence_diff_worst": float(np.min(dmin)) if dmin else float("nan"),
            "mean_coherence_diff_mean": float(np.mean(dmean)) if dmean else float("nan"),
            "length_diff_mean": float(np.mean([len(p) - len(r) for r, _, p in both])) if both else float("nan"),
            "paths_s": paths_s}
    return out


def run_child(kind: str, n: int, n_paths: int) -> dict:
    cmd = [sys.executable, __file__, "--child", kind, "--n", str(n), "--paths", str(n_paths)]
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2")}
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def exponent(ns, values) -> float:
    """Least-squares slope of log(value) on log(n)."""
    if len(ns) < 2:
        return float("nan")
    return float(np.polyfit(np.log(ns), np.log(values), 1)[0])


def check_targets(figures: dict) -> dict:
    out = {}
    for key, (op, bound) in TARGETS.items():
        if key in figures:
            value = figures[key]
            out[key] = {"target": f"{op} {bound:g}", "value": value,
                        "pass": bool(value >= bound if op == ">=" else value <= bound)}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", choices=["ours", "networkx", "full", "news", "memberships"])
    ap.add_argument("--n", type=int, default=NX_N)
    ap.add_argument("--paths", type=int, default=N_PATHS)
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="comma-separated sizes")
    ap.add_argument("--full-n", type=int, default=5000, help="size of the UMAP + HDBSCAN timing (0: skip)")
    ap.add_argument("--no-news", action="store_true", help="skip the top_k measurement on news")
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke check (the test suite runs it)")
    ap.add_argument("--out", type=Path, default=None,
                    help="default results/bench/landscape.json (landscape_quick.json)")
    args = ap.parse_args(argv)
    if args.child:
        fn = {"ours": lambda: child_ours(args.n, args.paths), "networkx": lambda: child_networkx(args.n),
              "full": lambda: child_full(args.n), "news": lambda: child_news(args.paths),
              "memberships": lambda: child_memberships(args.n)}[args.child]
        print(json.dumps(fn()))
        return 0

    from judgelab import paths

    if args.quick:
        nx_n, sizes, n_paths, full_n = 400, [300, 600, 1200], 20, 0
    else:
        nx_n, n_paths, full_n = args.n, args.paths, args.full_n
        sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    ours = run_child("ours", nx_n, n_paths)
    nx_res = run_child("networkx", nx_n, n_paths)
    if ours["critical"] != nx_res["critical"]:
        raise SystemExit(f"critical coherence disagrees: ours {ours['critical']} vs networkx {nx_res['critical']}")
    per_size = {}
    for n in sizes:
        per_size[n] = run_child("ours", n, n_paths)
        r = per_size[n]
        print(f"[bench] n={n}: {r['total_s']:.1f} s (coherence {r['coherence_s']:.1f}, critical {r['critical_s']:.2f}, "
              f"paths {r['paths_s']:.1f}), peak {r['peak_mem_mb']:.0f} MB, {r['edges']} edges", flush=True)
    memb = run_child("memberships", 1500 if args.quick else 5_000, 0)
    figures = {"speedup_vs_networkx": nx_res["networkx_mst_s"] / ours["critical_s"], "peak_mem_mb": ours["peak_mem_mb"],
               "memberships_speedup_vs_hdbscan": memb["hdbscan_s"] / memb["ours_s"]}
    for n, r in per_size.items():
        figures[f"n{n}_seconds"] = r["total_s"]
        figures[f"n{n}_peak_mem_mb"] = r["peak_mem_mb"]
    ns = list(per_size)
    figures["seconds_exponent"] = exponent(ns, [per_size[n]["total_s"] for n in ns])
    figures["peak_mem_exponent"] = exponent(ns, [per_size[n]["peak_mem_mb"] for n in ns])
    figures["work_mem_exponent"] = exponent(ns, [per_size[n]["peak_mem_mb"] - per_size[n]["base_mem_mb"] for n in ns])
    extra = {
        "what": "build_sparse_graph (block coherence, exact critical, sparse temporal graph) + widest_path_sparse; "
                "synthetic 48-topic collections from given embeddings/memberships; peak = ru_maxrss of a child per size",
        "n_docs": nx_n, "n_paths": n_paths, "sizes": ns,
        "speedup_dense_prim_vs_networkx": nx_res["networkx_mst_s"] / nx_res["dense_prim_s"],
        "speedup_scipy_vs_networkx": nx_res["networkx_mst_s"] / nx_res["scipy_mst_s"],
        "critical_path_used": "build_sparse_graph: first-block Prim + scipy forest merges",
        "networkx_mst_seconds": nx_res["networkx_mst_s"], "dense_prim_seconds": nx_res["dense_prim_s"],
        "critical_scipy_seconds": nx_res["scipy_mst_s"], "networkx_peak_mem_mb": nx_res["peak_mem_mb"],
        "memberships": memb, "ours": ours, "per_size": {str(n): r for n, r in per_size.items()}, "critical": ours["critical"],
        "cpu_count": os.cpu_count(), "load_average": os.getloadavg(),
        "date": dt.datetime.now().isoformat(timespec="seconds"),
    }
    if full_n:
        extra["full_pipeline"] = run_child("full", full_n, n_paths)
    if not args.no_news and not args.quick:
        try:
            extra["news_top_k"] = run_child("news", 0, 200)
        except subprocess.CalledProcessError as err:   # no data mirror: say so, keep the rest
            extra["news_top_k"] = {"skipped": err.stderr.strip().splitlines()[-1] if err.stderr else "failed"}
    targets = check_targets(figures)
    result = {**figures, "targets": targets, **extra}
    name = "landscape" if not args.quick else "landscape_quick"
    out = args.out or paths.bench_dir() / f"{name}.json"
    out.write_text(json.dumps(result, indent=2))
    for key, value in figures.items():
        note = f"  (target {targets[key]['target']}: {'pass' if targets[key]['pass'] else 'FAIL'})" if key in targets else ""
        print(f"landscape.{key} {value:.4g}{note}")
    print(f"landscape.speedup_dense_prim_vs_networkx {extra['speedup_dense_prim_vs_networkx']:.4g}  (notebook 07's dense Prim)")
    print(f"landscape.speedup_scipy_vs_networkx {extra['speedup_scipy_vs_networkx']:.4g}  (scipy MST, the reference)")
    for n, r in per_size.items():
        print(f"landscape.n{n} coherence {r['coherence_s']:.3g} s, critical {r['critical_s']:.3g} s, graph {r['edges_s']:.3g} s, "
              f"paths {r['paths_s']:.3g} s ({r['paths_found']}/{n_paths} found); graph {r['graph_mb']:.0f} MB, "
              f"input {r['input_mem_mb']:.0f} MB  (absolute seconds, shared machine)")
    if "full_pipeline" in extra:
        f = extra["full_pipeline"]
        print(f"landscape.full_pipeline_n{f['n']} umap+hdbscan {f['umap_hdbscan_s']:.3g} s + graph {f['graph_s']:.3g} s, "
              f"peak {f['peak_mem_mb']:.0f} MB, {f['n_topics_found']} topics (ARI {f['ari_vs_true_topics']:.2f})")
    news = extra.get("news_top_k")
    if news and "top_k" in news:
        print(f"landscape.news exact graph: {news['exact_edges']} edges ({news['exact_edge_share']:.1%} of ordered pairs), "
              f"{news['exact_graph_mb']:.2f} MB, {news['n_pairs']} pairs")
        for k, r in news["top_k"].items():
            print(f"landscape.news_top_k{k} edges {r['edge_share_of_exact']:.1%} of exact, paths found {r['paths_found_share']:.1%}, "
                  f"identical {r['identical_path_share']:.1%}, min-coherence diff mean {r['min_coherence_diff_mean']:.4f} "
                  f"(worst {r['min_coherence_diff_worst']:.4f}), mean-coherence diff {r['mean_coherence_diff_mean']:.4f}")
    elif news:
        print(f"landscape.news_top_k skipped: {news.get('skipped')}")
    print(f"landscape.cpu_count {result['cpu_count']}  load average {result['load_average'][0]:.1f}")
    print(f"landscape.date {result['date']}")
    print(f"[bench] wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
