"""Cache modes, replay, resumption after SIGKILL, and keeping the API key out of every file."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

from judgelab.gateway import ChatRequest, Gateway, Message, ReplayMissError, ResponseCache, request_key
from fake_openai_server import FakeChatServer

LIB = Path(__file__).resolve().parents[1] / "lib"
FAKE_KEY = "sk-test-FAKEKEY-do-not-write-0123456789abcdef"


class Label(BaseModel):
    label: str


def req(i, **kw) -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content=f"item {i}")], schema=Label, tags={"item": i}, **kw)


def gw_for(srv, path, mode="normal", url=None) -> Gateway:
    return Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=url or srv.base_url,
                                 cache_mode=mode, cache_path=path, progress=False)


def test_normal_caches_replay_answers_refresh_recalls(tmp_path):
    path = tmp_path / "c.sqlite"
    with FakeChatServer(lambda body: {"label": body["messages"][-1]["content"]}) as srv:
        first = gw_for(srv, path).chat(req(1))
        again = gw_for(srv, path).chat(req(1))
        assert srv.n_calls == 1 and not first.cached and again.cached
        assert again.parsed == first.parsed == Label(label="item 1")
        replayed = gw_for(srv, path, "replay").run_batch([req(1)])
        assert srv.n_calls == 1 and replayed[0].cached
        gw_for(srv, path, "refresh").chat(req(1))
        assert srv.n_calls == 2


def test_replay_miss_names_the_item(tmp_path):
    with FakeChatServer() as srv:
        gw = gw_for(srv, tmp_path / "c.sqlite", "replay")
        with pytest.raises(ReplayMissError, match=r"item=7"):
            gw.chat(req(7, template_version="sage-l4-v1"))
        with pytest.raises(ReplayMissError, match=r"2 of 2 requests are not in the cache"):
            gw.run_batch([req(1), req(2)])
        assert srv.n_calls == 0


def test_exported_cache_replays_elsewhere(tmp_path):
    with FakeChatServer() as srv:
        src = gw_for(srv, tmp_path / "a.sqlite")
        src.run_batch([req(i) for i in range(3)])
        src.cache.export_jsonl(tmp_path / "handoff.jsonl")
        ResponseCache(tmp_path / "b.sqlite").import_jsonl(tmp_path / "handoff.jsonl")
        res = gw_for(srv, tmp_path / "b.sqlite", "replay").run_batch([req(i) for i in range(3)])
        assert srv.n_calls == 3 and all(r.cached and r.status == "ok" for r in res)


def test_backends_at_two_base_urls_have_different_identities_and_cache_keys(tmp_path, monkeypatch):
    # the real backends' own identity(), not a hand-built dict: a cache written against one
    # endpoint must never answer for another (same backend kind, same model). Two hosts here
    # (127.0.0.1 and localhost): the port alone is no other endpoint (JUDGELAB_CACHE_ENDPOINT)
    from judgelab.gateway.backends.openai_backend import OpenAIBackend

    with FakeChatServer() as a, FakeChatServer() as b:
        b_url = b.base_url.replace("127.0.0.1", "localhost")
        urls = (a.base_url, b_url)
        pairs = {
            "openai-compatible": [OpenAIBackend("fake-model", url, compatible=True) for url in urls],
            "openai": [OpenAIBackend("gpt-4.1", url, api_key="sk-dummy") for url in urls],
        }
        for name, (be_a, be_b) in pairs.items():
            assert be_a.name == be_b.name == name
            assert be_a.identity() != be_b.identity(), name
            assert request_key(be_a.identity(), req(1)) != request_key(be_b.identity(), req(1)), name
        # end to end: one cache file, the same request; the second endpoint (the port counts here)
        # is asked, not the cache
        monkeypatch.setenv("JUDGELAB_CACHE_ENDPOINT", "url")
        path = tmp_path / "shared.sqlite"
        gw_a, gw_b = gw_for(a, path), gw_for(b, path)
        assert gw_a.key(req(1)) != gw_b.key(req(1))
        first, second = gw_a.chat(req(1)), gw_b.chat(req(1))
        assert (a.n_calls, b.n_calls) == (1, 1) and not first.cached and not second.cached
        assert gw_for(b, path).chat(req(1)).cached and b.n_calls == 1  # same endpoint: from the cache


CONCURRENCY = 4
CHILD = textwrap.dedent("""
    import sys
    from pydantic import BaseModel
    from judgelab.gateway import ChatRequest, Gateway, Message

    class Label(BaseModel):
        label: str

    gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=sys.argv[1],
                               cache_path=sys.argv[2], concurrency=int(sys.argv[4]), progress=False)
    reqs = [ChatRequest(messages=[Message(role="user", content=f"item {i}")], schema=Label, tags={"item": i})
            for i in range(int(sys.argv[3]))]
    res = gw.run_batch(reqs)
    print(sum(r.status == "ok" for r in res))
""")


def _child(srv, cache, n, env):
    return subprocess.Popen([sys.executable, "-c", CHILD, srv.base_url, str(cache), str(n), str(CONCURRENCY)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_sigkill_mid_batch_then_resume_repeats_no_completed_call(tmp_path):
    # Bound (README, "Replay"): after a kill, the calls paid again are at most the concurrency:
    # only calls in flight at the kill (received by the server, answer not yet cached) repeat.
    n = 40
    cache = tmp_path / "out" / "c.sqlite"
    env = {**os.environ, "PYTHONPATH": str(LIB), "JUDGELAB_OUTPUT_ROOT": str(tmp_path / "out"), "OPENAI_API_KEY": FAKE_KEY}
    with FakeChatServer(lambda body: {"label": body["messages"][-1]["content"]}, latency_s=0.05) as srv:
        proc = _child(srv, cache, n, env)
        deadline = time.monotonic() + 120
        while srv.n_calls < 12 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        done_before = {r["tags"]["item"] for r in ResponseCache(cache).rows()}
        assert 0 < len(done_before) < n, "the kill must land mid-batch"
        received_before = {int(b["messages"][-1]["content"].split()[1]) for b in srv.calls}  # paid at the server
        srv.reset_counts()
        proc = _child(srv, cache, n, env)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        called_after = {int(b["messages"][-1]["content"].split()[1]) for b in srv.calls}
    assert out.strip() == str(n)
    assert called_after.isdisjoint(done_before)          # zero repeat calls for completed requests
    assert called_after | done_before == set(range(n))
    assert srv.n_calls == n - len(done_before)
    repaid = received_before & called_after
    assert repaid == received_before - done_before       # exactly the calls in flight at the kill
    assert len(repaid) <= CONCURRENCY


def test_no_written_file_contains_the_api_key(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    with FakeChatServer(['not json', {"label": "x"}]) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url, progress=False)
        gw.run_batch([req(i) for i in range(3)])
        gw.ledger_frame().to_csv(tmp_path / "ledger.csv")
        gw.cache.export_jsonl(tmp_path / "export.jsonl")
        gw.close()
        assert srv.n_calls == 4
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert "llm_cache.sqlite" in names and any(p.suffix == ".jsonl" and "transcripts" in str(p) for p in files)
    for p in files:
        assert FAKE_KEY.encode() not in p.read_bytes(), p
    assert FAKE_KEY not in repr(gw)


def test_numpy_tags_from_dataframes_are_stored(tmp_path):
    import numpy as np

    with FakeChatServer() as srv:
        gw = gw_for(srv, tmp_path / "c.sqlite")
        res = gw.chat(ChatRequest(messages=[Message(role="user", content="x")], schema=Label,
                                  tags={"item": np.int64(3), "score": np.float32(0.5)}))
    assert res.status == "ok"
    (row,) = list(gw.cache.rows())
    assert row["tags"] == {"item": 3, "score": 0.5}


def test_a_recorded_failure_replays_as_that_failure_and_normal_mode_asks_again(tmp_path):
    """A fresh call that failed (here: a reply that never fits the schema, repaired and failed) is no
    answer: normal mode asks again. Replay serves it as the same failure, so a run whose table holds
    a failed row replays to that table instead of stopping at a miss; the export carries it."""
    def plain(path, mode="normal"):  # no canary: a failing first call would stop the fan-out by design
        gw = gw_for(srv, path, mode)
        gw.canary.enabled = False
        return gw

    with FakeChatServer(lambda body: {"wrong": 1}) as srv:
        gw = plain(tmp_path / "a.sqlite")
        (first,) = gw.run_batch([req(1)])
        assert first.status == "failed" and not gw.cache.contains(gw.key(req(1)))
        calls = srv.n_calls
        (again,) = plain(tmp_path / "a.sqlite").run_batch([req(1)])
        assert again.status == "failed" and srv.n_calls > calls  # normal mode: asked again
        calls = srv.n_calls
        (replayed,) = gw_for(srv, tmp_path / "a.sqlite", "replay").run_batch([req(1)])
        assert srv.n_calls == calls
        assert (replayed.status, replayed.cached, replayed.failure, replayed.error) == (
            "failed", True, again.failure, again.error)
        assert replayed.parsed is None
        gw.cache.export_jsonl(tmp_path / "handoff.jsonl.gz")
        other = ResponseCache(tmp_path / "b.sqlite")
        other.import_jsonl(tmp_path / "handoff.jsonl.gz")
        (elsewhere,) = gw_for(srv, tmp_path / "b.sqlite", "replay").run_batch([req(1)])
        assert srv.n_calls == calls and elsewhere.status == "failed" and elsewhere.error == again.error


def test_a_gzip_export_is_the_same_bytes_for_the_same_entries(tmp_path):
    with FakeChatServer() as srv:
        src = gw_for(srv, tmp_path / "a.sqlite")
        src.run_batch([req(i) for i in range(3)])
        assert src.cache.export_jsonl(tmp_path / "one.jsonl.gz") == 3
        assert src.cache.export_jsonl(tmp_path / "two.jsonl.gz", keys={src.key(req(0))}) == 1
        src.cache.export_jsonl(tmp_path / "three.jsonl.gz")
        assert (tmp_path / "one.jsonl.gz").read_bytes() == (tmp_path / "three.jsonl.gz").read_bytes()
        dst = ResponseCache(tmp_path / "b.sqlite")
        assert dst.import_jsonl(tmp_path / "two.jsonl.gz") == 1 and dst.contains(src.key(req(0)))
