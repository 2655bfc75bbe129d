"""Benchmark: coherence matrix + critical coherence + 200 widest paths (notebooks 07-08's core).

Synthetic collection shaped like VisPub: n documents with 1,536-d embeddings around 48 topic
centres, 48-d topic memberships (Dirichlet, peaked on the document's topic), dates over 30 years.
Each measurement runs in a fresh child process so that its peak resident memory (``ru_maxrss``,
interpreter and libraries included) belongs to it alone.

Figures (``results/bench/landscape.json``, one ``landscape.<figure> <value>`` line each):

- ``speedup_vs_networkx``: seconds of the networkx way to the critical coherence (build the
  complete graph from the same dense matrix with ``nx.from_numpy_array`` and take
  ``nx.maximum_spanning_tree``, as the original code did) divided by ours (scipy's MST on the dense
  matrix), both at n = 3,549 and in the same run. Target >= 10.
- ``peak_mem_mb``: peak RSS of our whole pipeline at n = 3,549. Target <= 1,024.
- ``n20000_seconds`` / ``n20000_peak_mem_mb``: the same pipeline at 20,000 documents (the matrix
  alone is 1.6 GB in float32; the critical coherence then uses the dense Prim variant and the
  mixture temporaries are float32).
- absolute seconds of every stage are printed too, labelled (shared machine: noisy), and the
  speedup of the dense Prim variant (``speedup_prim_vs_networkx``), timed on the same matrix.

``speedup_vs_networkx`` compares the critical-coherence step alone; the peak-memory and n=20,000
figures cover the whole pipeline (matrix, critical value, 200 widest paths). The Prim timing is
excluded from ``n20000_seconds``/``ours_total_seconds``.

Run: ``python benchmarks/bench_landscape.py`` (``--quick`` for a small smoke run).
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


def synthetic(n: int, seed: int = 0):
    """Embeddings (n x 1536 float32), memberships (n x 48), dates (days, sorted)."""
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
    return emb, memb, dates


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def child_ours(n: int, n_paths: int) -> dict:
    from judgelab.narrative.landscape.coherence import coherence_matrix
    from judgelab.narrative.landscape.graph import critical_coherence, critical_coherence_prim
    from judgelab.narrative.paths.widest import widest_path

    emb, memb, dates = synthetic(n)
    t0 = time.perf_counter()
    c = coherence_matrix(emb, memb, np.e, compute_dtype=np.float32 if n > 6000 else np.float64)
    t1 = time.perf_counter()
    crit = critical_coherence(c)
    t2 = time.perf_counter()
    crit_prim = critical_coherence_prim(c)       # the dense Prim variant, for comparison
    prim_s = time.perf_counter() - t2
    if crit_prim != crit:
        raise SystemExit(f"Prim {crit_prim} != {crit}")
    t2 = time.perf_counter()
    rng = np.random.default_rng(1)
    found = 0
    for _ in range(n_paths):
        s, t = sorted(rng.choice(n, size=2, replace=False), key=lambda x: (dates[x], x))
        path, _cap = widest_path(c, s, t, threshold=crit, dates=dates)
        found += path is not None
    t3 = time.perf_counter()
    return {"n": n, "coherence_s": t1 - t0, "critical_s": t2 - t1, "paths_s": t3 - t2,
            "total_s": t3 - t0 - prim_s, "critical_prim_s": prim_s, "critical": crit, "paths_found": found, "peak_mem_mb": peak_mb()}


def child_networkx(n: int) -> dict:
    import networkx as nx
    from judgelab.narrative.landscape.coherence import coherence_matrix

    emb, memb, dates = synthetic(n)
    c = coherence_matrix(emb, memb, np.e)
    t0 = time.perf_counter()
    g = nx.from_numpy_array(np.triu(c), create_using=nx.Graph)
    tree = nx.maximum_spanning_tree(g)
    crit = min(w for _, _, w in tree.edges(data="weight"))
    t1 = time.perf_counter()
    return {"n": n, "networkx_mst_s": t1 - t0, "critical": float(crit), "peak_mem_mb": peak_mb()}


def run_child(kind: str, n: int, n_paths: int) -> dict:
    cmd = [sys.executable, __file__, "--child", kind, "--n", str(n), "--paths", str(n_paths)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2")})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", choices=["ours", "networkx"])
    ap.add_argument("--n", type=int, default=3549)
    ap.add_argument("--paths", type=int, default=N_PATHS)
    ap.add_argument("--large", type=int, default=20000)
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke check")
    args = ap.parse_args(argv)
    if args.child == "ours":
        print(json.dumps(child_ours(args.n, args.paths)))
        return 0
    if args.child == "networkx":
        print(json.dumps(child_networkx(args.n)))
        return 0

    from judgelab import paths

    n, large, n_paths = (400, 1500, 20) if args.quick else (args.n, args.large, args.paths)
    ours = run_child("ours", n, n_paths)
    nx_res = run_child("networkx", n, n_paths)
    big = run_child("ours", large, n_paths)
    if abs(ours["critical"] - nx_res["critical"]) > 1e-6:
        raise SystemExit(f"critical coherence disagrees: ours {ours['critical']} vs networkx {nx_res['critical']}")
    figures = {
        "speedup_vs_networkx": nx_res["networkx_mst_s"] / ours["critical_s"],
        "peak_mem_mb": ours["peak_mem_mb"],
        f"n{large}_seconds": big["total_s"],
        f"n{large}_peak_mem_mb": big["peak_mem_mb"],
    }
    extra = {
        "n_docs": n, "n_paths": n_paths, "large_n": large,
        "ours_coherence_seconds": ours["coherence_s"], "ours_critical_seconds": ours["critical_s"],
        "ours_paths_seconds": ours["paths_s"], "ours_total_seconds": ours["total_s"],
        "ours_critical_prim_seconds": ours["critical_prim_s"],
        "speedup_prim_vs_networkx": nx_res["networkx_mst_s"] / ours["critical_prim_s"],
        "networkx_mst_seconds": nx_res["networkx_mst_s"], "networkx_peak_mem_mb": nx_res["peak_mem_mb"],
        "large_coherence_seconds": big["coherence_s"], "large_critical_seconds": big["critical_s"],
        "large_paths_seconds": big["paths_s"], "paths_found": ours["paths_found"],
        "large_paths_found": big["paths_found"], "critical": ours["critical"],
        "cpu_count": os.cpu_count(), "date": dt.datetime.now().isoformat(timespec="seconds"),
    }
    result = {**figures, **extra}
    name = "landscape" if not args.quick else "landscape_quick"
    out = paths.bench_dir() / f"{name}.json"
    out.write_text(json.dumps(result, indent=2))
    for key, value in figures.items():
        print(f"landscape.{key} {value:.4g}")
    print(f"landscape.speedup_prim_vs_networkx {result['speedup_prim_vs_networkx']:.4g}  (dense Prim instead of scipy)")
    for key in ("ours_coherence_seconds", "ours_critical_seconds", "ours_critical_prim_seconds",
                "networkx_mst_seconds",
                "large_coherence_seconds", "large_critical_seconds", "large_paths_seconds"):
        print(f"landscape.{key} {result[key]:.4g}  (absolute seconds, shared machine)")
    print(f"landscape.cpu_count {result['cpu_count']}")
    print(f"landscape.date {result['date']}")
    print(f"[bench] wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
