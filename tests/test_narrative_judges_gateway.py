"""Narrative judges against the gateway's local fake chat server: the K-agent runner,
its cache entries, and failures that are recorded but never scored."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab.gateway import Gateway
from fake_openai_server import FakeChatServer, request_schema
from judgelab.narrative.judges import schemas as js
from judgelab.narrative.judges.run import SCORE_COLUMNS, agent_spread, build_requests, run_judges

GOOD, BAD = "Alpha story", "Zeta story"


def paths_frame() -> pd.DataFrame:
    """Two endpoint pairs; max-capacity narratives mention GOOD titles, random ones BAD."""
    rows = []
    for p in range(2):
        for method, word in (("maxcap", GOOD), ("random", BAD)):
            titles = [f"{word} {p}-{i}" for i in range(3 + p)]
            rows.append({"collection": "news", "pair_id": p, "method": method, "titles": titles,
                         "length": len(titles), "min_coherence": 0.7 if method == "maxcap" else 0.4,
                         "mean_coherence": 0.8 if method == "maxcap" else 0.5})
    return pd.DataFrame(rows)


def scripted(body: dict) -> dict:
    """Answer from the request: 8 for GOOD narratives, 3 for BAD, in whatever fields the schema has;
    standard/complex dimensions are spread around that value so their mean is known."""
    props = request_schema(body)["properties"]
    user = body["messages"][-1]["content"]
    base = 8 if GOOD in user else 3
    if "coherence_score" in props:
        out = {"coherence_score": base}
        out.update({s: "short" for s in js.COT_STEPS if s in props})
        return out
    names = [n for n in props if n in js.STANDARD_DIMENSIONS + js.COMPLEX_CRITERIA]
    offsets = [-1, 1] * (len(names) // 2)  # mean offset 0
    return {n: base + o for n, o in zip(names, offsets)}


@pytest.fixture
def gateway(tmp_path):
    def make(server, **options):
        return Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=server.base_url,
                                     cache_path=tmp_path / "cache.sqlite", progress=False, **options)
    return make


def test_k_agents_through_the_fake_server(gateway):
    with FakeChatServer(scripted) as srv:
        gw = gateway(srv)
        df = run_judges(gw, paths_frame(), k=3, seed=40, max_tokens=64, profile="smoke", concurrency=2)
        assert list(df.columns) == list(SCORE_COLUMNS)
        assert len(df) == 4 * 4 * 3 and srv.n_calls == 48
        assert (df["status"] == "ok").all()
        expected = np.where(df["method"] == "maxcap", 8.0, 3.0)
        assert np.allclose(df["score"], expected)
        # the spread of agents reached the server: three temperatures, three seeds, per narrative
        sent = {(b["temperature"], b["seed"]) for b in srv.calls}
        assert sent == {(a.temperature, a.seed) for a in agent_spread(3, base_seed=40)}
        assert set(df["agent"]) == {0, 1, 2} and set(df["seed"]) == {40, 41, 42}
        assert set(df["backend"]) == {gw.backend_name} and (df["profile"] == "smoke").all()
        assert not df["cached"].any() and (df["input_tokens"] > 0).all()

        # every agent is its own cache entry: a re-run is served from the cache, no new calls
        again = run_judges(gw, paths_frame(), k=3, seed=40, max_tokens=64, profile="smoke")
        assert srv.n_calls == 48 and again["cached"].all()
        assert np.allclose(again["score"], df["score"])


def test_each_agent_has_its_own_cache_key():
    from judgelab.gateway.cache import request_key

    agents = {"news": agent_spread(5)}
    meta, reqs = build_requests(paths_frame().iloc[:1], agents, modes=("simple",))
    assert [r.replicate for r in reqs] == [0, 1, 2, 3, 4]
    assert [r.sampling.temperature for r in reqs] == pytest.approx([0.3, 0.4, 0.5, 0.6, 0.7])
    assert len({r.sampling.seed for r in reqs}) == 5
    assert {r.template_version for r in reqs} == {"narr-judge-simple-v1"}
    identity = {"backend": "openai-compatible", "model": "fake-model", "base_url": "http://127.0.0.1:1/v1"}
    assert len({request_key(identity, r) for r in reqs}) == 5
    # the same agent with a different replicate index alone would already be a new entry
    assert request_key(identity, reqs[0]) != request_key(identity, reqs[0].model_copy(update={"replicate": 9}))
    assert [m["agent"] for m in meta] == [0, 1, 2, 3, 4]


def test_unparseable_replies_are_failures_not_scores(gateway):
    def script(body):
        convo = " ".join(m["content"] for m in body["messages"])  # repair turns included
        if "Zeta story 1-" in convo:
            return '{"coherence_score": 42}'  # out of the enum, every time (repairs fail too)
        return scripted(body)

    with FakeChatServer(script) as srv:
        # two agents whose three replies each fail (repairs included): six alike failures in a row,
        # which the default stop (4, every failed reply counted) would end; here the stop is above them
        df = run_judges(gateway(srv, stop_after=8), paths_frame(), modes=("simple",), k=2, seed=1, max_tokens=32)
    bad = df[(df["pair_id"] == 1) & (df["method"] == "random")]
    assert (bad["status"] == "failed").all() and bad["score"].isna().all()
    assert (df.drop(bad.index)["status"] == "ok").all()
    assert len(df) == 4 * 2
