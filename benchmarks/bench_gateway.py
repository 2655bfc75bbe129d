"""Benchmarks of the LLM gateway (format: docs/design.md, "Benchmarks").

* ``gateway.concurrency_speedup`` — 500 requests to the local fake server answering after 200 ms,
  wall time at concurrency 1 divided by wall time at concurrency 32, both measured in this run
  (target >= 20).
* ``gateway.cache_hits_per_s`` — ``Gateway.chat`` calls per second answered from the SQLite cache
  (key hashing, lookup, validation and ledger included; target >= 5000).
* ``gateway.followup_turn_ratio`` — with the embedded llama.cpp model, latency of a follow-up turn
  divided by that of the first turn, over a shared ~3,000-token prefix (target <= 0.3): the KV
  cache of the prefix is reused.

Run: ``python benchmarks/bench_gateway.py`` (``--quick``: seconds, for the test suite: 40 requests to
a 50 ms server, 200 cache hits, a 300-token prefix; ``--skip-llm`` to leave out the llama.cpp
figure). Writes ``results/bench/gateway.json`` (``--out`` elsewhere).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from figures_file import write_figures
from judgelab import paths

# the local test server lives with the tests (tests/fake_openai_server.py)
TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))
from judgelab.gateway import ChatRequest, Gateway, Message, Sampling
from fake_openai_server import FakeChatServer


class Score(BaseModel):
    score: int
    reason: str


class YesNo(BaseModel):
    answer: Literal["yes", "no"]


def _requests(n: int, tag: str) -> list[ChatRequest]:
    return [ChatRequest(messages=[Message(role="system", content="Rate the story from 1 to 10."),
                                  Message(role="user", content=f"story {tag}-{i}")],
                        schema=Score, sampling=Sampling(max_tokens=64), tags={"item": i}) for i in range(n)]


def _server_process(latency_s: float) -> tuple[subprocess.Popen, str]:
    """The fake server in its own process, so that its threads do not share our GIL."""
    proc = subprocess.Popen(
        [sys.executable, str(TESTS / "fake_openai_server.py"), "--latency", str(latency_s),
         "--reply", json.dumps({"score": 7, "reason": "fine"})],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    line = proc.stdout.readline().split()
    if len(line) != 2 or line[0] != "base_url":
        proc.kill()
        raise RuntimeError(f"fake server did not start (said {line!r})")
    return proc, line[1]


def concurrency_speedup(tmp: Path, n: int, latency_s: float = 0.2) -> dict:
    """Same n requests (fresh cache each time) at concurrency 1 and 32 against a 200 ms server."""
    out = {}
    proc, base_url = _server_process(latency_s)
    try:
        for conc in (32, 1):
            gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=base_url,
                                       cache_path=tmp / f"conc{conc}.sqlite", concurrency=conc, progress=False)
            t0 = time.perf_counter()
            res = gw.run_batch(_requests(n, f"c{conc}"), concurrency=conc)
            out[conc] = time.perf_counter() - t0
            assert all(r.status == "ok" for r in res), [r.error for r in res if r.status != "ok"][:3]
            gw.close()
    finally:
        proc.terminate()
        proc.wait()
    return {"concurrency_speedup": out[1] / out[32], "serial_wall_s": out[1], "concurrent32_wall_s": out[32],
            "concurrency_requests": n}


def cache_hits_per_s(tmp: Path, n: int = 2000, repeats: int = 3) -> dict:
    """Fill the cache with n answers, then time n cache-hit chats (best of ``repeats``)."""
    with FakeChatServer(lambda body: {"score": 5, "reason": "ok"}) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp / "hits.sqlite", concurrency=16, progress=False)
        reqs = _requests(n, "hit")
        gw.run_batch(reqs)
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            for r in reqs:
                gw.chat(r)
            best = min(best, time.perf_counter() - t0)
        gw.close()
    return {"cache_hits_per_s": n / best, "cache_hit_us": 1e6 * best / n}


def followup_turn_ratio(tmp: Path, prefix_tokens: int = 3000) -> dict:
    """First turn over a fresh ~3k-token prefix vs a follow-up turn that extends it."""
    gw = Gateway.from_settings(backend="llamacpp", cache_path=tmp / "llm.sqlite", progress=False)
    rng = random.Random(7)
    words = ("river night lantern stranger letter harbour winter promise silence orchard shadow "
             "journey mother soldier debt window storm bargain village secret").split()
    count = gw.backend.count_tokens
    text, sentences = "", []
    while count(text) < prefix_tokens:
        sentences.append(" ".join(rng.choice(words) for _ in range(12)).capitalize() + ".")
        text = " ".join(sentences)
    system = Message(role="system", content="You read a story and answer questions about it in JSON.")
    story = Message(role="user", content=text + "\n\nIs there a storm in the story?")
    sampling = Sampling(temperature=0.0, max_tokens=16)
    first = gw.chat(ChatRequest(messages=[system, story], schema=YesNo, sampling=sampling, tags={"turn": 1}))
    follow = gw.chat(ChatRequest(messages=[system, story, Message(role="assistant", content=first.text),
                                           Message(role="user", content="Is there a lantern in the story?")],
                                 schema=YesNo, sampling=sampling, tags={"turn": 2}))
    assert first.status == "ok" and follow.status == "ok", (first.error, follow.error)
    return {"followup_turn_ratio": follow.latency_s / first.latency_s, "first_turn_s": first.latency_s,
            "followup_turn_s": follow.latency_s, "prefix_prompt_tokens": first.usage.input_tokens,
            "followup_prompt_tokens": follow.usage.input_tokens, "followup_reused_tokens": follow.usage.cached_tokens}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="seconds: fewer requests, a faster server, a short prefix")
    parser.add_argument("--skip-llm", action="store_true", help="leave out the llama.cpp follow-up figure")
    parser.add_argument("--out", type=Path, default=None, help="default results/bench/gateway.json")
    args = parser.parse_args(argv)
    os.environ.setdefault("JUDGELAB_PROGRESS", "0")
    # the load average says how busy the shared machine was (absolute times depend on it)
    figures: dict = {"cpu_count": os.cpu_count(), "date": dt.date.today().isoformat(),
                     "loadavg_1m_at_start": os.getloadavg()[0]}
    # resolved before the output root is redirected
    out = args.out or paths.bench_dir() / ("gateway_quick.json" if args.quick else "gateway.json")
    with tempfile.TemporaryDirectory(prefix="bench_gateway_") as tmpdir:
        tmp = Path(tmpdir)
        os.environ["JUDGELAB_OUTPUT_ROOT"] = str(tmp)  # the bench's transcripts stay out of results/
        if args.quick:
            figures.update(concurrency_speedup(tmp, 40, latency_s=0.05))
            figures.update(cache_hits_per_s(tmp, n=200, repeats=1))
        else:
            figures.update(concurrency_speedup(tmp, 500))
            figures.update(cache_hits_per_s(tmp))
        if not args.skip_llm:
            figures.update(followup_turn_ratio(tmp, prefix_tokens=300 if args.quick else 3000))
    write_figures(out, "gateway", figures)
    return figures


if __name__ == "__main__":
    main()
