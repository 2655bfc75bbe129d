"""Each part of the gateway on its own, with real neighbours (the fake server, a sqlite cache):
the call context, the sender, the fresh call, the cache lookup, the call, the canary and the
fan-out. The gateway's own tests (test_gateway_*.py) check them together."""
from __future__ import annotations

import threading
import time

import pytest
from pydantic import BaseModel

from judgelab.gateway import ChatRequest, Message, ResponseCache, Sampling
from judgelab.gateway.backends.openai_backend import OpenAIBackend
from judgelab.gateway.cache import request_key
from judgelab.gateway.call import Call
from judgelab.gateway.canary import Canary, FanOutStopped, StopWording
from judgelab.gateway.context import CallContext
from judgelab.gateway.errors import EndpointUnreachableError, ReplayMissError, TransientError
from judgelab.gateway.fanout import FanOut
from judgelab.gateway.fresh import FreshCall, Sender
from judgelab.gateway.ledger import Ledger, PriceTable
from judgelab.gateway.limiter import RateLimiter
from judgelab.gateway.lookup import CacheLookup
from judgelab.gateway.retry import CircuitBreaker, RetryPolicy
from fake_openai_server import FakeChatServer, Fault

KEY = "sk-test-parts-0000"


class Score(BaseModel):
    score: int


def ask(i: int = 0, shape: str = "a") -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content=f"rate story {i}")], schema=Score,
                       sampling=Sampling(temperature=0.0, max_tokens=50), tags={"item": i, "shape": shape})


def parts(srv, tmp_path, mode="normal", attempts=1, max_repairs=2):
    """The parts a gateway builds, built here by hand: backend, cache, lookup, fresh call, ledger."""
    be = OpenAIBackend("fake-model", srv.base_url, api_key=KEY, compatible=True)
    cache = ResponseCache(tmp_path / "c.sqlite")
    ctx = CallContext()
    sender = Sender(be, RetryPolicy(max_attempts=attempts, sleep=lambda s: None), RateLimiter(), CircuitBreaker(be.base_url))
    fresh = FreshCall(be, cache, sender, ctx, max_repairs=max_repairs, secrets=(KEY,))
    lookup = CacheLookup(cache, be, mode, secrets=(KEY,))
    ledger = Ledger(PriceTable.load(), (KEY,))
    return be, cache, ctx, fresh, lookup, ledger


def test_the_call_context_is_per_thread_and_restored():
    ctx = CallContext()
    seen = {}
    inside = threading.Event()
    release = threading.Event()

    def worker():
        with ctx.using(guard="g1", canary=True):
            inside.set()
            release.wait(5)
            seen["worker"] = (ctx.guard, ctx.canary)
        seen["after"] = (ctx.guard, ctx.canary)

    t = threading.Thread(target=worker)
    t.start()
    inside.wait(5)
    seen["main"] = (ctx.guard, ctx.canary)  # the worker's roles are not this thread's
    release.set()
    t.join(5)
    assert seen == {"worker": ("g1", True), "main": (None, False), "after": (None, False)}
    with ctx.using(stats="outer"):
        with ctx.using(stats="inner"):
            assert ctx.stats == "inner"
        assert ctx.stats == "outer"
    with pytest.raises(TypeError, match="unknown role"):
        with ctx.using(gaurd=1):
            pass


def test_the_sender_retries_and_a_canary_gives_up_at_its_first_timeout(tmp_path):
    with FakeChatServer([Fault.server_error(503), {"score": 3}]) as srv:
        be, *_ = parts(srv, tmp_path)
        sender = Sender(be, RetryPolicy(max_attempts=3, sleep=lambda s: None), RateLimiter(), CircuitBreaker(be.base_url))
        reply, attempts = sender.send([{"role": "user", "content": "x"}], ask())
        assert (attempts, srv.n_calls, reply.text) == (2, 2, '{"score": 3}')
    with FakeChatServer([Fault.timeout(1.5)] * 3) as srv:
        be = OpenAIBackend("fake-model", srv.base_url, api_key=KEY, compatible=True, timeout_s=0.3)
        sender = Sender(be, RetryPolicy(max_attempts=5, sleep=lambda s: None), RateLimiter(), CircuitBreaker(be.base_url))
        with pytest.raises(TransientError) as canary_err:
            sender.send([{"role": "user", "content": "x"}], ask(), canary=True)
        assert canary_err.value.attempts == 1 and srv.n_calls == 1  # a canary is paid once
        with pytest.raises(TransientError) as ordinary_err:
            sender.send([{"role": "user", "content": "x"}], ask())
        assert ordinary_err.value.attempts == 2 and srv.n_calls == 3  # an ordinary call tries once more


def test_the_sender_stops_at_an_endpoint_that_is_not_there():
    be = OpenAIBackend("fake-model", "http://127.0.0.1:9/v1", api_key=KEY, compatible=True, timeout_s=1)
    sender = Sender(be, RetryPolicy(max_attempts=50, sleep=lambda s: None), RateLimiter(), CircuitBreaker(be.base_url, limit=3))
    with pytest.raises(EndpointUnreachableError, match="127.0.0.1:9"):
        sender.send([{"role": "user", "content": "x"}], ask())
    assert sender.breaker.is_open


def test_the_fresh_call_repairs_caches_a_success_and_keeps_a_failure_apart(tmp_path):
    replies = ['{"score": "high"}', {"score": 4}, "no json", "still none", "never"]
    with FakeChatServer(replies) as srv:
        be, cache, ctx, fresh, lookup, _ = parts(srv, tmp_path)
        good = fresh.ask(lookup.as_sent(ask(1)), lookup.key(ask(1)))
        assert (good.status, good.n_repairs, good.parsed.score, srv.n_calls) == ("ok", 1, 4, 2)
        assert cache.get(lookup.key(ask(1)))["parsed"] == {"score": 4}
        bad = fresh.ask(lookup.as_sent(ask(2)), lookup.key(ask(2)))
        assert (bad.status, bad.n_repairs, srv.n_calls) == ("failed", 2, 5)  # max_repairs=2: three replies
        assert not cache.contains(lookup.key(ask(2))) and cache.get_failure(lookup.key(ask(2)))["failure"] == "invalid"


def test_the_cache_lookup_keys_hits_and_single_flight(tmp_path):
    with FakeChatServer([{"score": 2}]) as srv:
        be, cache, ctx, fresh, lookup, _ = parts(srv, tmp_path)
        r = ask(3)
        # the key is the cache's own hash of (backend identity, request as sent): caches filled before still hit
        assert lookup.key(r) == request_key(be.identity(), lookup.as_sent(r))
        assert lookup.find(r, lookup.key(r)) is None
        calls = []

        def slow_fresh():
            calls.append(1)
            time.sleep(0.2)
            return fresh.ask(lookup.as_sent(r), lookup.key(r))

        out = []
        threads = [threading.Thread(target=lambda: out.append(lookup.once(r, lookup.key(r), slow_fresh))) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert len(calls) == 1 and srv.n_calls == 1 and sorted(o.cached for o in out) == [False, True, True, True]
        hit = lookup.find(r, lookup.key(r))
        assert hit.cached and hit.parsed.score == 2
        assert CacheLookup(cache, be, "refresh").find(r, lookup.key(r)) is None  # refresh never reads


def test_the_call_answers_from_cache_replays_failures_and_records_each_result(tmp_path):
    with FakeChatServer(["not json"] * 3 + [{"score": 5}]) as srv:
        be, cache, ctx, fresh, lookup, ledger = parts(srv, tmp_path)
        call = Call(lookup, fresh, ledger, ctx)
        failed, ok, again = call.chat(ask(1)), call.chat(ask(2)), call.chat(ask(2))
        assert (failed.status, ok.status, again.cached, srv.n_calls) == ("failed", "ok", True, 4)
        assert len(ledger.frame()) == 3
        _, _, ctx2, fresh2, _, ledger2 = parts(srv, tmp_path)
        replay = Call(CacheLookup(cache, be, "replay", secrets=(KEY,)), fresh2, ledger2, ctx2)
        assert replay.chat(ask(1)).failure == "invalid" and replay.chat(ask(2)).cached  # as recorded
        with pytest.raises(ReplayMissError, match="item=9"):
            replay.chat(ask(9))
        assert srv.n_calls == 4


def test_the_canary_picks_one_request_per_unanswered_shape_and_its_failure_stops(tmp_path):
    with FakeChatServer([Fault.status(400, "unknown model")]) as srv:
        be, cache, ctx, fresh, lookup, ledger = parts(srv, tmp_path)
        canary = Canary(True, 4, StopWording(be, "narrative", (KEY,)))
        reqs = [ask(0, "a"), ask(1, "a"), ask(2, "b"), ask(3, "b"), ask(4, "c")]
        first = canary.first_requests(reqs, be.model, answered=lambda r: r.tags["shape"] == "c")
        assert [r.tags["item"] for r in first] == [0, 2]
        assert Canary(False, 4, canary.wording).guard() is None
        fan = FanOut(Call(lookup, fresh, ledger, ctx), canary, concurrency=4, max_concurrency=8, progress=False)
        with pytest.raises(FanOutStopped, match="canary.*JUDGELAB_NARRATIVE_MODEL") as stop:
            fan.run_batch([ask(i, "a") for i in range(6)])
        assert srv.n_calls == 1 and KEY not in str(stop.value)  # the canary alone was paid


def test_the_fan_out_keeps_order_and_counts_each_items_calls(tmp_path):
    def reply(body):
        time.sleep(0.05)
        n = int(body["messages"][-1]["content"].split()[-1])
        return {"score": n}

    with FakeChatServer(reply) as srv:
        be, cache, ctx, fresh, lookup, ledger = parts(srv, tmp_path)
        fan = FanOut(Call(lookup, fresh, ledger, ctx), Canary(False, 4, StopWording(be)), concurrency=4,
                     max_concurrency=8, progress=False)
        res = fan.run_batch([ask(i) for i in range(8)])
        assert [r.parsed.score for r in res] == list(range(8)) and srv.n_calls == 8
        got = fan.map(lambda i: (fan.call.chat(ask(i)).cached, fan.call.chat(ask(100 + i)).cached), [1, 2])
        assert got == [(True, False), (True, False)] and srv.n_calls == 10


def test_a_stopped_map_names_the_items_it_left_half_done(tmp_path):
    def reply(body):
        n = int(body["messages"][-1]["content"].split()[-1])
        return Fault.status(400, "no such setting") if n >= 100 else {"score": n}

    with FakeChatServer(reply) as srv:
        be, cache, ctx, fresh, lookup, ledger = parts(srv, tmp_path)
        fan = FanOut(Call(lookup, fresh, ledger, ctx), Canary(True, 4, StopWording(be)), concurrency=1,
                     max_concurrency=8, progress=False)
        with pytest.raises(FanOutStopped) as stop:  # item 0: one answer, then its second shape's canary fails
            fan.map(lambda i: (fan.call.chat(ask(i, "a")), fan.call.chat(ask(100 + i, "b"))), [0, 1, 2])
        assert [(c.calls, c.failed, c.tags) for c in stop.value.unfinished] == [(2, True, {})]
        assert "Unfinished: 1 of 3 items had paid calls" in str(stop.value) and srv.n_calls == 2


def test_the_batch_collector_works_from_the_parts_it_is_given(tmp_path):
    """The collector alone, on the fake server's Batch API: the parts a gateway would hand it
    (lookup, fresh call, ledger, two numbers), no gateway. A valid line is cached under its key;
    a paid invalid line and a server error stop the run (``stop``), the paid line in the ledger."""
    from judgelab.gateway.batch_collector import BatchCollector, Pending
    from judgelab.gateway.errors import BatchStoppedError

    def script(body):
        text = body["messages"][-1]["content"]
        if text.endswith(" 1"):
            return '{"nope": 1}'            # billed, fails the schema
        if text.endswith(" 2"):
            return Fault.server_error(500)  # not billed; the one round allowed is spent
        return {"score": 4}

    with FakeChatServer(script) as srv:
        be, cache, ctx, fresh, lookup, ledger = parts(srv, tmp_path)
        collector = BatchCollector(lookup, fresh, ledger, concurrency=2, max_attempts=1, poll_s=0.01)
        pending = [Pending(lookup.key(ask(i)), lookup.as_sent(ask(i))) for i in range(3)]
        with pytest.raises(BatchStoppedError, match="failed on the server side"):
            collector.run(pending)
        assert srv.count("/v1/batches") == 1 and srv.count("batch_line") == 3 and srv.n_calls == 0
        ok, invalid, error = pending
        assert ok.result.ok and ok.result.parsed == Score(score=4) and cache.contains(ok.key)
        assert lookup.find(ask(0), ok.key).parsed == Score(score=4)      # what the gateway's lookup reads
        assert invalid.result is None and "schema violation" in invalid.reason and not cache.contains(invalid.key)
        assert error.transient and error.sent == 1 and not error.again    # its round was the last allowed
        rows = ledger.frame()
        assert len(rows) == 2 and sorted(rows["status"]) == ["failed", "ok"]  # the valid line and the paid invalid one
        assert KEY not in collector.history.__repr__() + str(rows.to_dict())
        collector.close()
