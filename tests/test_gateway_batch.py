"""The OpenAI Batch API path against the fake server's /v1/files and /v1/batches."""
from __future__ import annotations

import pytest
from pydantic import BaseModel

from judgelab.gateway import ChatRequest, Gateway, Message
from fake_openai_server import FakeChatServer, Fault


@pytest.fixture(autouse=True)
def _no_canary(monkeypatch):
    """These tests count the Batch API path's own calls and batches; the live canary per request
    shape that precedes a batch is tested in test_gateway_canary.py."""
    monkeypatch.setenv("JUDGELAB_CANARY", "0")


class Label(BaseModel):
    label: str


def req(i) -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content=f"item {i}")], schema=Label, tags={"item": i})


def script(body):
    text = body["messages"][-1]["content"]
    if text == "item 2":
        return Fault.server_error(500)
    if text == "item 3":
        return '{"nope": 1}'
    return {"label": text}


def test_batch_submit_collect_fills_the_same_cache(tmp_path):
    with FakeChatServer(script) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite", progress=False)
        gw.chat(req(0))  # already cached: not sent in the batch
        batch_id = gw.submit_batch([req(i) for i in range(5)])
        assert srv.count("/v1/files") == 1 and srv.count("batch_line") == 4
        assert gw.cache.batch_keys(batch_id) == [gw.key(req(i)) for i in (1, 2, 3, 4)]
        results = gw.collect_batch(batch_id, [req(i) for i in range(5)])
        assert [r.status for r in results] == ["ok", "ok", "failed", "failed", "ok"]
        assert results[0].cached and not results[1].cached
        assert "HTTP 500" in results[2].error and "item=2" in results[2].error
        assert "schema violation" in results[3].error
        assert results[3].usage.input_tokens > 0  # the invalid reply was billed: its tokens are in its row
        # the batch replies are ordinary cache entries: a live run now calls only for the failures
        calls = srv.n_calls
        again = gw.run_batch([req(i) for i in (0, 1, 4)])
        assert srv.n_calls == calls and all(r.cached for r in again)
        assert again[1].parsed == Label(label="item 1")
        assert gw.submit_batch([req(0), req(1)]) is None  # nothing left to send


# ------------------------------------------------------------------ batch mode (JUDGELAB_BATCH=1)

import threading  # noqa: E402

import pytest  # noqa: E402

from judgelab.gateway import batch_api  # noqa: E402
from judgelab.gateway.cache import BatchJobs, fingerprint  # noqa: E402
from judgelab.gateway.errors import ConfigError, ReplayMissError  # noqa: E402

POLL = 0.01


def batch_gw(srv, tmp_path, **kw) -> Gateway:
    return Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                 cache_path=tmp_path / "c.sqlite", progress=False, batch=True, batch_poll_s=POLL, **kw)


def conversation(gw: Gateway, item: tuple[str, int]) -> list[str]:
    """A multi-turn conversation as SAGE runs one: each turn's prompt holds the replies so far."""
    name, turns = item
    messages, labels = [], []
    for turn in range(turns):
        messages = messages + [Message(role="user", content=f"{name} turn {turn}")]
        res = gw.chat(ChatRequest(messages=messages, schema=Label, tags={"item": name, "turn": turn}))
        assert res.ok, res.error
        labels.append(res.parsed.label)
        messages = messages + [Message(role="assistant", content=res.text)]
    return labels


def echo(body):
    return {"label": body["messages"][-1]["content"]}


def test_batch_mode_sends_each_round_of_all_items_as_one_batch(tmp_path):
    items = [("a", 3), ("b", 1), ("c", 2), ("d", 3)]
    with FakeChatServer(echo) as srv:
        gw = batch_gw(srv, tmp_path)
        out = gw.map(lambda it: conversation(gw, it), items)
        assert out == [[f"{n} turn {t}" for t in range(k)] for n, k in items]
        # round t of every item still running shares one batch: 4, then 3, then 2 requests
        assert [n for _, n in gw.batch_history] == [4, 3, 2]
        assert srv.count("/v1/batches") == 3 and srv.count("/v1/files") == 3 and srv.count("batch_line") == 9
        assert srv.n_calls == 0  # no ordinary call
        ledger = gw.ledger_frame()
        assert len(ledger) == 9 and not ledger["cached"].any() and ledger["batch_id"].notna().all()
        # the batch replies are ordinary cache entries: a rerun submits nothing
        again = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                      cache_path=tmp_path / "c.sqlite", progress=False, batch=True, batch_poll_s=POLL)
        assert again.map(lambda it: conversation(again, it), items) == out
        assert srv.count("/v1/batches") == 3 and again.batch_history == []
        # every batch is recorded as collected next to the responses
        jobs = BatchJobs(tmp_path / "c.sqlite").rows()
        assert [j["n_requests"] for j in jobs] == [4, 3, 2]
        assert all(j["status"] == "completed" and j["collected_at"] is not None for j in jobs)
        assert gw.cache.stats()["pending_batches"] == 0


def test_batch_mode_run_batch_is_one_batch_of_the_distinct_misses(tmp_path):
    with FakeChatServer(echo) as srv:
        gw = batch_gw(srv, tmp_path)
        first = gw.run_batch([req(0)])
        assert first[0].ok and srv.count("batch_line") == 1
        reqs = [req(i) for i in (0, 1, 2, 1, 3)]  # 0 cached, 1 twice
        results = gw.run_batch(reqs)
        assert [r.parsed.label for r in results] == ["item 0", "item 1", "item 2", "item 1", "item 3"]
        assert [n for _, n in gw.batch_history] == [1, 3] and srv.n_calls == 0
        assert [r.cached for r in results] == [True, False, False, True, False]


def test_batch_mode_falls_back_to_an_ordinary_call_or_a_recorded_failure(tmp_path):
    seen = set()
    lock = threading.Lock()

    def flaky(body):
        text = body["messages"][-1]["content"]
        with lock:
            first = text not in seen
            seen.add(text)
        if text == "item 1" and first:
            return Fault.server_error(500)  # the batch line fails; a second ask succeeds
        if text == "item 2" and first:
            return '{"nope": 1}'  # breaks the schema in the batch
        return {"label": text}

    with FakeChatServer(flaky) as srv:
        gw = batch_gw(srv, tmp_path / "live", batch_fallback="live")
        results = gw.run_batch([req(i) for i in range(3)])
        assert [r.status for r in results] == ["ok", "ok", "ok"]
        assert srv.count("batch_line") == 3 and srv.n_calls == 2  # items 1 and 2 asked again, live
        # item 2's invalid batch reply was billed: its own failed row, then the live call's row
        ledger = gw.ledger_frame()
        assert sorted(ledger["item"]) == [0, 1, 2, 2] and len(ledger[ledger["status"] == "failed"]) == 1
        # fail and the default, stop: the 500 line goes with the next batch round (unbilled, at the
        # batch price), the invalid one is a failure naming the setting; no live call
        for fallback, lines in (("fail", 3 + 3 + 1), ("stop", 3 + 3 + 3 + 1 + 1)):
            seen.clear()
            gw = batch_gw(srv, tmp_path / fallback, batch_fallback=fallback)
            results = gw.run_batch([req(i) for i in range(3)])
            assert [r.status for r in results] == ["ok", "ok", "failed"]
            assert "schema violation" in results[2].error and srv.n_calls == 2
            assert srv.count("batch_line") == lines and len(gw.batch_history) == 2
            assert not gw.cache.contains(results[2].key)  # failures are never cached
        assert "JUDGELAB_BATCH_FALLBACK=live" in results[2].error


def test_expired_batch_falls_back_to_ordinary_calls(tmp_path):
    with FakeChatServer(echo, batch_status="expired") as srv:
        gw = batch_gw(srv, tmp_path, batch_fallback="live")
        out = gw.map(lambda it: conversation(gw, it), [("a", 2), ("b", 2)])
        assert out == [["a turn 0", "a turn 1"], ["b turn 0", "b turn 1"]]
        assert srv.count("/v1/batches") == 2 and srv.n_calls == 4
        assert [j["status"] for j in BatchJobs(tmp_path / "c.sqlite").rows()] == ["expired", "expired"]


def test_a_worker_that_raises_does_not_leave_the_others_waiting(tmp_path):
    def fn(item):
        conversation(gw, (item, 1))
        if item == "boom":
            raise RuntimeError("item boom broke")
        return conversation(gw, (item, 3))

    with FakeChatServer(echo) as srv:
        gw = batch_gw(srv, tmp_path)
        with pytest.raises(RuntimeError, match="item boom broke"):
            gw.map(fn, ["x", "boom", "y"])
        # turn 0 of the second conversation is the cached first one; turns 1 and 2 without "boom"
        assert [n for _, n in gw.batch_history] == [3, 2, 2]


def test_batches_are_split_at_the_request_limit(tmp_path):
    lines = [{"custom_id": f"k{i}", "body": {"x": "y" * i}} for i in range(5)]
    assert [len(c) for c in batch_api.chunk_lines(lines, max_requests=2)] == [2, 2, 1]
    sizes = [len(batch_api.encode_line(line)) for line in lines]
    assert [len(c) for c in batch_api.chunk_lines(lines, max_bytes=sum(sizes[:3]))] == [3, 2]
    with pytest.raises(ConfigError, match="k4"):
        batch_api.chunk_lines(lines, max_bytes=sizes[3])
    with FakeChatServer(echo) as srv:
        gw = batch_gw(srv, tmp_path)
        gw.batch.collector.max_requests = 2
        results = gw.run_batch([req(i) for i in range(5)])
        assert all(r.ok for r in results) and [n for _, n in gw.batch_history] == [2, 2, 1]


def test_batch_mode_needs_a_batch_api_and_replay_never_submits(tmp_path):
    with pytest.raises(ConfigError, match="unset JUDGELAB_BATCH"):
        Gateway.from_settings(backend="llamacpp", cache_path=tmp_path / "x.sqlite", batch=True)
    with FakeChatServer(echo) as srv:
        Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                              cache_path=tmp_path / "c.sqlite", progress=False).chat(req(0))
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite", progress=False, batch=True, cache_mode="replay")
        assert not gw.batch_mode and gw.run_batch([req(0)])[0].cached
        with pytest.raises(ReplayMissError):
            gw.chat(req(1))
        assert srv.count("/v1/batches") == 0 and srv.count("/v1/files") == 0


def test_batch_settings_from_the_environment(monkeypatch, tmp_path):
    from judgelab.gateway.settings import resolve

    monkeypatch.setenv("JUDGELAB_BATCH", "1")
    monkeypatch.setenv("JUDGELAB_BATCH_POLL_S", "0.5")
    s = resolve("openai-compatible", cache_path=tmp_path / "c.sqlite")
    assert s.batch and s.batch_poll_s == 0.5
    monkeypatch.setenv("JUDGELAB_BATCH", "maybe")
    with pytest.raises(ConfigError, match="JUDGELAB_BATCH"):
        resolve("openai-compatible", cache_path=tmp_path / "c.sqlite")
    monkeypatch.delenv("JUDGELAB_BATCH")
    assert not resolve("openai-compatible", cache_path=tmp_path / "c.sqlite").batch
    assert fingerprint(["b", "a"]) == fingerprint(["a", "b"]) != fingerprint(["a"])


def test_a_sage_layer_in_batch_mode_is_one_batch_per_round_and_matches_live(tmp_path):
    """Two stories x two modes = four evaluations: evaluator rounds 1-5, the blind and the review
    turn each go out as one batch of four; the tables equal those of ordinary calls."""
    import pandas as pd

    from judgelab.sage.protocol import runner

    text = "Marta wrapped the bread in cloth and waited by the door for her son, who had gone to the river."
    corpus = pd.DataFrame([
        {"story_id": s, "category": c, "title": t, "author": "Ada Fenwick", "year": 1900, "translator": "",
         "model": "", "tier": "", "words": 20, "in_range": True, "text": f"{t.upper()}\n\n{text} {s}"}
        for s, c, t in (("a", "canonical", "The Long Winter"), ("b", "pulp", "Broken Stair"))])
    with FakeChatServer(None) as srv:
        live_gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                        cache_path=tmp_path / "live.sqlite", progress=False)
        live = runner.run_layer(live_gw, corpus, "L4", "smoke", stories=["a", "b"], modes="content,title")
        gw = batch_gw(srv, tmp_path)
        batched = runner.run_layer(gw, corpus, "L4", "smoke", stories=["a", "b"], modes="content,title")
        assert srv.n_calls == 4 * 7  # the live run only
    assert [n for _, n in gw.batch_history] == [4] * 7
    ledger = gw.ledger_frame()
    per_batch = ledger.groupby("batch_id").apply(lambda d: {(t, r) for t, r in zip(d["track"], d["round"])})
    assert sorted(map(len, per_batch)) == [1] * 7  # each batch is one round of every evaluation
    pd.testing.assert_frame_equal(batched.rows, live.rows)
    pd.testing.assert_frame_equal(batched.summary, live.summary)


def test_a_rerun_resumes_a_recorded_batch_that_holds_its_requests(tmp_path):
    """A run killed after its batch was recorded (and after part of the replies were stored)
    resumes that batch on the rerun instead of submitting the rest again."""
    reqs = [req(i) for i in range(4)]
    with FakeChatServer(echo) as srv:
        killed = batch_gw(srv, tmp_path)
        killed.batch.collector._start(sorted(batch_api.batch_lines(killed.lookup, killed.fresh, reqs), key=lambda line: line["custom_id"]))
        killed.close()  # "killed": recorded and submitted, never collected
        plain = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                      cache_path=tmp_path / "c.sqlite", progress=False)
        plain.run_batch(reqs[:2])  # two replies already stored
        assert srv.count("/v1/batches") == 1 and srv.n_calls == 2
        rerun = batch_gw(srv, tmp_path)
        results = rerun.run_batch(reqs)
        assert [r.parsed.label for r in results] == [f"item {i}" for i in range(4)]
        assert srv.count("/v1/batches") == 1 and srv.n_calls == 2  # resumed: nothing sent again
        assert [n for _, n in rerun.batch_history] == [2]
        assert [j["collected_at"] is not None for j in BatchJobs(tmp_path / "c.sqlite").rows()] == [True]


def test_the_narrative_judges_in_batch_mode_are_one_batch_with_the_live_scores(tmp_path):
    import pandas as pd

    from judgelab.narrative.judges.run import run_judges

    paths = pd.DataFrame([{"collection": "news", "pair_id": p, "method": m, "titles": [f"{m} {p}-{i}" for i in range(3)],
                           "length": 3, "min_coherence": 0.5, "mean_coherence": 0.6}
                          for p in range(2) for m in ("maxcap", "random")])
    kw = dict(k=2, seed=1, max_tokens=64, profile="smoke")
    drop = ["latency_s", "cached"]
    with FakeChatServer(None) as srv:
        live = run_judges(Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                                cache_path=tmp_path / "live.sqlite", progress=False), paths, **kw)
        gw = batch_gw(srv, tmp_path)
        batched = run_judges(gw, paths, **kw)
    assert gw.batch_history == [(gw.batch_history[0][0], len(live))] and srv.n_calls == len(live)
    pd.testing.assert_frame_equal(batched.drop(columns=drop), live.drop(columns=drop))


def test_a_server_without_the_batch_endpoints_stops_the_run_naming_its_url(tmp_path):
    with FakeChatServer(echo) as srv:
        url = srv.base_url + "/no-batch-api"  # every path under it answers 404
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=url,
                                   cache_path=tmp_path / "c.sqlite", progress=False, batch=True, batch_poll_s=POLL)
        with pytest.raises(ConfigError, match="no-batch-api did not accept a batch of 2 requests"):
            gw.map(lambda it: conversation(gw, it), [("a", 2), ("b", 2)])
