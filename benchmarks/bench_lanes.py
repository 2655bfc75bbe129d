"""Benchmark: two notebooks at a time with half the cores each, against one at a time with every
core (the Makefile's ``NB_JOBS``).

The work is what notebooks 02-04 do: SAGE evaluations on the embedded model, here the demo
profile's first story in content mode on L4, L5 and L6 (``bench_sage.run_layout``, shared-prefix
layout, demo settings). Each run is a process of its own with its own temporary output root, so
each prefills the story once and keeps its prefix state, as a notebook does.

* ``one`` — one process with every core (``JUDGELAB_LLAMA_THREADS`` = cores): one notebook at a
  time, as ``make all`` ran before;
* ``two`` — two such processes at once, each with half the cores: ``make all`` now.

Figures (``lanes.<name>``): ``one_seconds_per_evaluation`` and ``two_seconds_per_evaluation``
(each process's own wall time per evaluation), ``throughput_ratio`` = evaluations per second
with two at once / with one (the target: above 1, or two at a time is not worth it), and
``same_token_counts`` — whether the three runs processed and generated the same numbers of tokens
(a sign that the thread count left the replies as they were). Absolute seconds depend on the
machine's load (printed); the ratio comes from one run.

Run: ``python benchmarks/bench_lanes.py`` (~6 min on 2 cores; ``--layers L4`` for a shorter run;
``--quick``: seconds, for the test suite, with ``bench_sage``'s quick settings: no measurement).
Writes ``results/bench/lanes.json`` (``--out`` elsewhere). Numbers come from the embedded SmolLM2-135M.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from figures_file import write_figures


def worker(layers: list[str], quick: bool = False) -> dict:
    """One process's evaluations (run with ``--worker``): wall seconds and token counts."""
    import bench_sage as B

    corpus, story, cfg = B.pick_story(None, quick)
    with tempfile.TemporaryDirectory(prefix="bench_lanes_") as tmp:
        os.environ["JUDGELAB_OUTPUT_ROOT"] = tmp
        gw = B.open_gateway(Path(tmp), quick)
        meter = B.EngineMeter(gw.backend)
        t0 = time.perf_counter()
        evals = B.run_layout(gw, meter, corpus, story, cfg, "shared-prefix", layers)
        wall = time.perf_counter() - t0
        threads = gw.backend.n_threads
        gw.close()
    calls = [c for e in evals for c in e["calls"]]
    return {"threads": threads, "wall_s": wall, "evaluations": len(evals),
            "processed_tokens": sum(c["n_p_eval"] for c in calls), "generated_tokens": sum(c["n_eval"] for c in calls)}


def spawn(threads: int, layers: str, quick: bool = False) -> subprocess.Popen:
    env = {**os.environ, "JUDGELAB_LLAMA_THREADS": str(threads), "OMP_NUM_THREADS": str(threads),
           "JUDGELAB_PROGRESS": "0", "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.Popen([sys.executable, __file__, "--worker", "--layers", layers] + ["--quick"] * quick,
                            env=env, stdout=subprocess.PIPE, text=True)


def result_of(proc: subprocess.Popen) -> dict:
    out, _ = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"bench_lanes worker failed with exit code {proc.returncode}")
    return json.loads(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> dict | None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--layers", default="L4,L5,L6", help="comma-separated layers (default L4,L5,L6)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="seconds: L4, cut replies (no measurement)")
    parser.add_argument("--out", type=Path, default=None, help="default results/bench/lanes.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.layers = "L4"
    layers = [x.strip() for x in args.layers.split(",") if x.strip()]
    if args.worker:
        print(json.dumps(worker(layers, args.quick)))
        return None
    from judgelab import paths

    cores = os.cpu_count() or 1
    half = max(1, cores // 2)
    figures: dict = {"cpu_count": cores, "date": dt.date.today().isoformat(), "loadavg_1m_at_start": os.getloadavg()[0],
                     "layers": ",".join(layers),
                     "source": "embedded SmolLM2-135M (llama.cpp), demo settings, content mode"}
    t0 = time.perf_counter()
    procs = [spawn(half, args.layers, args.quick) for _ in range(2)]
    two = [result_of(p) for p in procs]
    two_wall = time.perf_counter() - t0
    if args.quick:
        # the quick mode checks the plumbing (spawn, worker, figures), not the speed: the one-process
        # layout's figures are lane 0's, and the ratio is not a measurement
        one, one_wall = two[0], two_wall
        figures["note"] = "quick mode: no measurement; the one-process figures are lane 0's"
    else:
        t0 = time.perf_counter()
        one = result_of(spawn(cores, args.layers, args.quick))
        one_wall = time.perf_counter() - t0
    n = one["evaluations"]
    figures.update({
        "one_threads": one["threads"], "two_threads_each": two[0]["threads"],
        "one_seconds_per_evaluation": one["wall_s"] / n,
        "two_seconds_per_evaluation": sum(r["wall_s"] for r in two) / (2 * n),
        # evaluations per second, two processes at once against one: process start-up included
        "throughput_ratio": (2 * n / two_wall) / (n / one_wall),
        "one_wall_s": one_wall, "two_wall_s": two_wall,
        "same_token_counts": len({(r["processed_tokens"], r["generated_tokens"]) for r in [one, *two]}) == 1,
        "runs": {"one": one, "two": two},
        "loadavg_1m_at_end": os.getloadavg()[0],
    })
    out = args.out or paths.bench_dir() / ("lanes_quick.json" if args.quick else "lanes.json")
    write_figures(out, "lanes", figures, hidden=("runs",))
    return figures


if __name__ == "__main__":
    main()
