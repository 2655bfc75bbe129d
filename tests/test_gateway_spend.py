"""Every billed line in the ledger, at the price billed: the run's spend is the provider's usage
times the price table, in live and in batch mode, and a stop never loses a line already paid for.
The provider's side is the local server's own record of what it answered (``srv.billed``)."""
from __future__ import annotations

import random

import pytest
from pydantic import BaseModel

from judgelab import provenance
from judgelab.gateway import ChatRequest, Gateway, Message, ResponseCache, Sampling
from judgelab.gateway.backends.openai_backend import OpenAIBackend
from judgelab.gateway.canary import FanOutStopped
from judgelab.gateway.ledger import Ledger, PriceTable
from judgelab.gateway.retry import RetryPolicy
from judgelab.gateway.types import ChatResult, Usage
from fake_openai_server import FakeChatServer, Fault

KEY = "sk-test-spend-0000"
MODEL = "gpt-4.1"  # priced in prices.csv: $2 in, $0.50 cached in, $8 out per million; batch 0.5


class Score(BaseModel):
    score: int


def gateway(srv, tmp_path, **kw) -> Gateway:
    be = OpenAIBackend(MODEL, srv.base_url, api_key=KEY)
    kw.setdefault("retry", RetryPolicy(max_attempts=1, sleep=lambda s: None))
    return Gateway(be, ResponseCache(tmp_path / "c.sqlite"), progress=False, secrets=(KEY,), **kw)


def requests(n: int) -> list[ChatRequest]:
    return [ChatRequest(messages=[Message(role="user", content=f"rate story number {i} of the set")], schema=Score,
                        sampling=Sampling(seed=i, max_tokens=16), tags={"item": f"s{i}"}) for i in range(n)]


def provider_bill(srv) -> float:
    """USD the provider bills for what it answered: usage x prices.csv, batch lines at its share."""
    price = PriceTable.load().lookup(MODEL)
    usd = 0.0
    for line in srv.billed:
        u = line["usage"]
        cached = (u.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
        one = ((u["prompt_tokens"] - cached) * price.input + cached * price.cached_input
               + u["completion_tokens"] * price.output) / 1e6
        usd += one * (price.batch if line["batch"] else 1.0)
    return usd


def test_batch_rate_is_read_from_the_price_table():
    prices = PriceTable.load()
    assert prices.lookup("gpt-4.1").batch == 0.5 and prices.lookup("SmolLM2-135M").batch is None
    assert prices.cost("gpt-4.1", 1_000_000, 1_000_000) == pytest.approx(10.0)
    assert prices.cost("gpt-4.1", 1_000_000, 1_000_000, batch=True) == pytest.approx(5.0)


def test_live_spend_is_the_providers_usage_times_the_price_and_cache_hits_cost_nothing(tmp_path):
    with FakeChatServer(default={"score": 3}) as srv:
        gw = gateway(srv, tmp_path)
        assert all(r.ok for r in gw.run_batch(requests(6), concurrency=3))
        frame = gw.ledger_frame()
        assert len(frame) == len(srv.billed) == 6
        assert frame["spent_usd"].sum() == pytest.approx(provider_bill(srv), rel=1e-12)
        assert provenance.summarize_ledger(frame)["spent_usd"] == round(provider_bill(srv), 6)
        # the same requests again: answered from the cache, priced as made fresh, paid nothing
        again = gateway(srv, tmp_path)
        assert all(r.cached for r in again.run_batch(requests(6)))
        hits = again.ledger_frame()
        assert len(srv.billed) == 6 and (hits["spent_usd"] == 0).all()
        assert hits["cost_usd"].sum() == pytest.approx(frame["cost_usd"].sum())
        assert provenance.summarize_ledger(hits)["spent_usd"] == 0.0


def test_batch_spend_is_the_providers_usage_at_the_batch_rate(tmp_path):
    """The canary live at the standard price, the other lines through the Batch API at half."""
    with FakeChatServer(default={"score": 4}) as srv:
        gw = gateway(srv, tmp_path, batch=True, batch_poll_s=0.01)
        assert all(r.ok for r in gw.run_batch(requests(8)))
        assert [b["batch"] for b in srv.billed].count(True) == 7 and srv.n_calls == 1
        frame = gw.ledger_frame()
        assert len(frame) == 8 and frame["batch_id"].notna().sum() == 7
        assert frame["spent_usd"].sum() == pytest.approx(provider_bill(srv), rel=1e-12)
        live = frame[frame["batch_id"].isna()]["cost_usd"].sum()
        by_batch = frame[frame["batch_id"].notna()]
        # a batch line costs half what the same usage costs live
        full = sum(PriceTable.load().cost(MODEL, i, o) for i, o in zip(by_batch["input_tokens"], by_batch["output_tokens"]))
        assert by_batch["cost_usd"].sum() == pytest.approx(full / 2) and live > 0


def test_a_stop_on_invalid_batch_lines_keeps_every_billed_line(tmp_path):
    """The canary passes live; every batch line breaks the schema. The stop on alike failures
    (schema violations count, as live) comes after four, and all 51 billed lines are in the
    ledger, at the batch rate: the spend is the provider's bill."""
    with FakeChatServer(default={"score": 2}, batch_replies=lambda body: '{"score": "many"}') as srv:
        gw = gateway(srv, tmp_path, batch=True, batch_poll_s=0.01, stop_after=4)
        with pytest.raises(FanOutStopped, match=r"4 consecutive calls that failed alike \(invalid\)"):
            gw.run_batch(requests(52), concurrency=4)
        assert srv.count("batch_line") == 51 and len(srv.billed) == 52
        frame = gw.ledger_frame()
        assert len(frame) == 52 and (frame["status"] == "failed").sum() == 51
        assert frame["spent_usd"].sum() == pytest.approx(provider_bill(srv), rel=1e-12)


def test_a_live_stop_records_every_call_it_paid_for(tmp_path):
    """After a passed canary a server answering 500: the paid canary and the failed items are all
    rows; nothing billed is missing, nothing unbilled is charged."""
    with FakeChatServer([{"score": 1}], default=Fault.server_error(500)) as srv:
        gw = gateway(srv, tmp_path, stop_after=3)
        with pytest.raises(FanOutStopped):
            gw.run_batch(requests(20), concurrency=1)
        frame = gw.ledger_frame()
        assert len(frame) == 4 and len(srv.billed) == 1
        assert frame["spent_usd"].sum() == pytest.approx(provider_bill(srv), rel=1e-12)


# ---------------------------------------------------------------- the ledger cleans what it keeps

def test_the_ledger_redacts_the_key_from_every_row():
    """A batch result's tags carry what the request's tags held; only the ledger cleans them here."""
    ledger = Ledger(PriceTable.load(), secrets=(KEY,))
    ledger.record(ChatResult(status="failed", backend="openai", model=MODEL, key="k1",
                             usage=Usage(input_tokens=10, output_tokens=2),
                             tags={"item": f"story with {KEY} inside", "batch_id": "batch_1"}))
    row = ledger.frame().iloc[0]
    assert KEY not in " ".join(str(v) for v in row.values) and row["item"].startswith("story with ")
    assert row["batch_id"] == "batch_1"


# ---------------------------------------------------------------- Retry-After beyond its cap

def test_a_retry_after_is_waited_up_to_its_cap_and_no_longer():
    """Known answer: Random(0)'s first draw is 0.8444218515250481; the wait is min(Retry-After,
    cap) plus a tenth of a base period of jitter."""
    policy = RetryPolicy(retry_after_cap_s=5.0, base_s=1.0, rng=random.Random(0))
    assert policy.delay(0, retry_after=100.0) == pytest.approx(5.0 + 0.1 * 0.8444218515250481)
    policy = RetryPolicy(retry_after_cap_s=5.0, base_s=1.0, rng=random.Random(0))
    assert policy.delay(0, retry_after=2.0) == pytest.approx(2.0 + 0.1 * 0.8444218515250481)
