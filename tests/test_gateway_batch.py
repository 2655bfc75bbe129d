"""The OpenAI Batch API path against the fake server's /v1/files and /v1/batches."""
from __future__ import annotations

from pydantic import BaseModel

from judgelab.gateway import ChatRequest, Gateway, Message
from judgelab.gateway.fake_server import FakeChatServer, Fault


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
        gw = Gateway.from_settings("openai-compatible", model="fake-model", base_url=srv.base_url,
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
        # the batch replies are ordinary cache entries: a live run now calls only for the failures
        calls = srv.n_calls
        again = gw.run_batch([req(i) for i in (0, 1, 4)])
        assert srv.n_calls == calls and all(r.cached for r in again)
        assert again[1].parsed == Label(label="item 1")
        assert gw.submit_batch([req(0), req(1)]) is None  # nothing left to send
