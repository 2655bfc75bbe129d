"""Benchmark: what a paid SAGE run in batch mode buys when the server fails a share of its calls
(format: docs/design.md, "Benchmarks").

The demo's SAGE L4 design (two stories a category, both modes, and the anonymous-author title run
of one LLM story: 13 evaluations of 7 chained calls) through the gateway in batch mode, against
the local fake server (``tests/fake_openai_server.py``) answering HTTP 500 to a share ``--rate``
of chat calls and batch lines (decided per request body and send, seeded). Synthetic stories: the
replies are the server's schema-synthesized ones, so the figures are counts, not scores
(``--quick`` writes ``batch_faults_quick.json``). Per seed:

* ``scored`` — evaluations with a summary status ``ok`` (of ``evaluations``);
* ``calls_paid`` — replies the server billed (HTTP 200: chat calls and batch lines);
* ``calls_unfinished`` — billed replies of evaluations left unscored (paid for nothing);
* ``stopped`` — runs that stopped (the exception's class is counted), naming their unfinished chains;
* ``rerun_calls_new_port`` — calls a rerun pays against the same server started on another port
  with no faults (the cache key without the port replays every answer it holds).

Figures are means over ``--seeds`` seeds (min and max beside them). Run:
``python benchmarks/bench_batch_faults.py`` (``--quick``: one story a category, one seed, seconds).
Writes ``results/bench/batch_faults.json``.
"""
from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import random
import sys
import tempfile
import threading
from pathlib import Path

import pandas as pd

from figures_file import write_figures
from judgelab import paths

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))
from fake_openai_server import FakeChatServer, Fault, default_reply  # noqa: E402
from judgelab.gateway import Gateway  # noqa: E402
from judgelab.gateway.errors import GatewayError  # noqa: E402
from judgelab.gateway.retry import RetryPolicy  # noqa: E402
from judgelab.sage.protocol import runner  # noqa: E402

TEXT = "Marta wrapped the bread in cloth and waited by the door for her son, who had gone to the river."


def faulty(rate: float, seed: int):
    """HTTP 500 for a share ``rate`` of sends, decided by the body and its send count (not by
    arrival order, which threads make vary), else the schema's synthesized reply."""
    sent: dict[str, int] = {}
    lock = threading.Lock()

    def script(body):
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        with lock:
            n = sent[digest] = sent.get(digest, 0) + 1
        return Fault.server_error(500) if random.Random(f"{seed}:{digest}:{n}").random() < rate else default_reply(body)

    return script


def corpus(per_category: int) -> pd.DataFrame:
    rows = []
    for cat in ("canonical", "pulp", "llm"):
        for j in range(per_category):
            sid, title = f"{cat[0]}{j}", f"The {cat.title()} Story {j}"
            rows.append({"story_id": sid, "category": cat, "title": title, "author": "Ada Fenwick", "year": 1900,
                         "translator": "", "model": "gpt-4" if cat == "llm" else "", "tier": "", "words": 20,
                         "in_range": True, "text": f"{title.upper()}\n\n{TEXT} {sid}"})
    return pd.DataFrame(rows)


def gateway(url: str, cache: Path) -> Gateway:
    return Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=url, cache_path=cache,
                                 progress=False, batch=True, batch_poll_s=0.01,
                                 retry=RetryPolicy(sleep=lambda s: None))


def one_run(rate: float, seed: int, per_category: int, tmp: Path) -> dict:
    stories = corpus(per_category)
    ids = list(stories["story_id"])
    cache = tmp / f"cache_{seed}.sqlite"
    summaries, stopped = [], ""
    with FakeChatServer(faulty(rate, seed), batch_replies=faulty(rate, seed + 10_000)) as srv:
        gw = gateway(srv.base_url, cache)
        try:
            summaries.append(runner.run_layer(gw, stories, "L4", "demo", stories=ids, modes="content,title").summary)
            summaries.append(runner.run_title_anonymous(gw, stories, "L4", "demo", stories=ids[-1:]).summary)
        except GatewayError as exc:  # a stop: its message names the unfinished chains
            stopped = type(exc).__name__
        paid = len(srv.billed)
        ledger = gw.ledger_frame()
    n_eval = 2 * len(ids) + 1
    summary = pd.concat(summaries) if summaries else pd.DataFrame(columns=["story_id", "mode", "status"])
    scored = int((summary["status"] == "ok").sum())
    unfinished = 0
    if len(ledger):  # billed replies (ok rows, fresh) of evaluations that were not scored
        fresh = ledger[(~ledger["cached"]) & (ledger["input_tokens"] > 0)]
        ok_keys = {(r.story_id, r.mode) for r in summary.itertuples() if r.status == "ok"}
        unfinished = int(sum((item, mode) not in ok_keys for item, mode in zip(fresh["item"], fresh["mode"])))
    with FakeChatServer(None) as moved:  # the same server, restarted on another port, without faults
        gw = gateway(moved.base_url, cache)
        try:
            runner.run_layer(gw, stories, "L4", "demo", stories=ids, modes="content,title")
            runner.run_title_anonymous(gw, stories, "L4", "demo", stories=ids[-1:])
        except GatewayError:
            pass
        rerun = len(moved.billed)
    return {"evaluations": n_eval, "scored": scored, "calls_paid": paid, "calls_unfinished": unfinished,
            "stopped": int(bool(stopped)), "rerun_calls_new_port": rerun}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="one story a category, one seed (seconds)")
    parser.add_argument("--seeds", type=int, default=10, help="fault seeds (default 10)")
    parser.add_argument("--rate", type=float, default=0.05, help="share of calls answered HTTP 500 (default 0.05)")
    parser.add_argument("--out", type=Path, default=None, help="default results/bench/batch_faults.json")
    args = parser.parse_args(argv)
    seeds, per_category = (1, 1) if args.quick else (args.seeds, 2)
    with tempfile.TemporaryDirectory() as tmp:
        runs = pd.DataFrame([one_run(args.rate, s, per_category, Path(tmp)) for s in range(seeds)])
    figures: dict = {"rate": args.rate, "seeds": seeds, "evaluations": int(runs["evaluations"].iloc[0])}
    for col in ("scored", "calls_paid", "calls_unfinished", "rerun_calls_new_port"):
        figures[f"{col}_mean"] = float(runs[col].mean())
        figures[f"{col}_min"], figures[f"{col}_max"] = int(runs[col].min()), int(runs[col].max())
    figures["stopped_runs"] = int(runs["stopped"].sum())
    figures["cores"] = os.cpu_count()
    figures["date"] = dt.date.today().isoformat()
    out = args.out or paths.bench_dir() / ("batch_faults_quick.json" if args.quick else "batch_faults.json")
    write_figures(out, "batch_faults", figures, hidden=("date",))
    return figures


if __name__ == "__main__":
    main()
