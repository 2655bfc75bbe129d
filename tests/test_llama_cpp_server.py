"""A real server no one here wrote: llama-cpp-python's own OpenAI-compatible
server (``python -m llama_cpp.server``) serves the bundled SmolLM2-135M GGUF on a free loopback
port; one SAGE request (the evaluator's Round 1 of one story, L5, content mode: its prepared
text, its messages and its reply schema, as ``evaluation.run_evaluator`` sends them) and one
narrative judge call (``run_judges``: one path, simple mode, one agent) go through backend
``openai-compatible`` (``JUDGELAB_BASE_URL``) end to end. Then the server is stopped and both are
replayed from the cache: identical results, zero fresh calls.

One SAGE round, not a whole evaluation (seven calls, 60-90 s of the suite's time): what this test
alone shows is that a server no one here wrote accepts the request form, compiles the SAGE schema
to a grammar and returns a reply that parses onto the scale, with its own token counts. The
evaluation's order of calls (rounds 1-5, then the validator's two turns), its rows and the
withheld title and author are the same code on any backend: ``tests/test_sage_llm.py`` checks them
on the embedded model, and ``tests/test_own_texts.py`` runs notebook 02's whole evaluations over
``openai-compatible`` (against the fake server).

The server refuses OpenAI's ``json_schema`` response format with HTTP 500 ("Input should be
'text' or 'json_object'"); the backend's default for ``openai-compatible`` is the ``json_object``
+ ``schema`` form, which it compiles to a grammar. Both are checked here against the real server.

Slow-ish (marked ``llm``): two generations of the 135M model on one thread. The live run, the
probe and the replay are one test on purpose: under pytest-xdist a module-scoped fixture is set up
once per worker that runs any of the module's tests, and ``xdist_group`` does not hold them
together with the pinned pytest 9.2 / pytest-xdist 3.8 (xdist renames ``item._nodeid``, which
pytest 9 no longer reads), so separate tests would start the server and pay the live run twice.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
import pytest

from judgelab import profiles
from judgelab.gateway import ChatRequest, Gateway, Message, Sampling
from judgelab.gateway.errors import ReplayMissError
from judgelab.gateway.local_server import LocalLlamaServer, ServerStartError, answers, missing_extras
from judgelab.narrative.judges import schemas as judge_schemas
from judgelab.narrative.judges.run import SCORE_COLUMNS, run_judges
from judgelab.sage.protocol import prompts, schemas
from judgelab.sage.protocol.evaluation import EVALUATOR, EvalConfig, EvalItem, first_messages
from judgelab.sage.protocol.modes import prepare_input
from judgelab.sage.protocol.schemas import SCORE_VALUES

pytestmark = pytest.mark.llm

_MISSING = missing_extras()
if _MISSING:
    pytest.skip(f"llama_cpp.server cannot import: {_MISSING}", allow_module_level=True)

TEXT = ("THE LAST FERRY\n\nBy Nora Vell\n\nThe ferry left at dusk, and Ilse stood at the rail with her father's "
        "letter folded in her glove. She had not opened it. Her brother said it would only be money and "
        "apologies, and she believed him, and she did not believe him. When the lights of the town went "
        "out behind the headland she took the letter out, held it over the black water, and put it back.")

LAYER = "L5"
# The smoke profile's knobs with terser strings: the grammar bounds every string by its maxLength,
# which keeps the replies short.
SAGE_OVERRIDES = {"evidence_chars": 12, "note_chars": 16, "max_tokens": 300}
SAGE_CFG = EvalConfig.from_settings({**profiles.knobs("sage", "smoke"), **SAGE_OVERRIDES})
JUDGE_MODE = "simple"
JUDGE_MAX_TOKENS = profiles.knobs("narrative_judges", "smoke")["max_tokens"][JUDGE_MODE]
# no wall-clock limit in a test: on a loaded machine one 135M generation has taken over 80 s
TIMEOUT_S = 900.0


def sage_request() -> ChatRequest:
    """The evaluator's Round 1 request for the story, as ``evaluation.run_evaluator`` builds it."""
    prepared = prepare_input("content", text=TEXT, title="The Last Ferry", author="Nora Vell",
                             max_text_tokens=profiles.knobs("sage", "smoke")["max_text_tokens"])
    item = EvalItem("ferry", "canonical", "", LAYER, "content", prepared)
    messages = first_messages(item, "evaluator", prompts.round_instructions(LAYER, "content", 1), SAGE_CFG.layout)
    schema = schemas.round_schema(LAYER, "content", 1, SAGE_CFG.evidence_chars, SAGE_CFG.note_chars,
                                  SAGE_CFG.reasoning_chars)
    return ChatRequest(messages=messages, schema=schema, sampling=SAGE_CFG.sampling(), replicate=0,
                       template_version=prompts.template_version(LAYER),
                       tags={"study": "sage", "layer": LAYER, "mode": "content", "item": "ferry",
                             "track": EVALUATOR, "round": 1})


def paths() -> pd.DataFrame:
    return pd.DataFrame([{
        "collection": "news", "pair_id": 0, "method": "maxcap",
        "titles": ["Storm closes the harbour", "Fishermen count their losses", "Harbour reopens behind a new sea wall"],
    }])


@dataclass
class Run:
    """What one pass (live or replay) produced."""

    model: str
    embedded: bool
    sage: object  # the SAGE request's ChatResult
    judge: pd.DataFrame
    ledger: pd.DataFrame


def run_both(gw: Gateway) -> Run:
    """One SAGE request and one judge call through ``gw``."""
    sage = gw.chat(sage_request())  # in replay, a miss raises ReplayMissError
    judge = run_judges(gw, paths(), modes=(JUDGE_MODE,), k=1, max_tokens=JUDGE_MAX_TOKENS, profile="smoke")
    return Run(gw.model_name, gw.is_embedded_small_model, sage, judge, gw.ledger_frame())


def env(mp: pytest.MonkeyPatch, base_url: str, model: str | None = None, cache_mode: str | None = None) -> None:
    mp.setenv("JUDGELAB_BACKEND", "openai-compatible")
    mp.setenv("JUDGELAB_BASE_URL", base_url)
    for name, value in (("JUDGELAB_MODEL", model), ("JUDGELAB_CACHE_MODE", cache_mode)):
        if value is None:
            mp.delenv(name, raising=False)
        else:
            mp.setenv(name, value)


def failed_calls(run: Run) -> int:
    return int((run.ledger["status"] == "failed").sum())


def json_schema_probe(root) -> object:
    """One request in OpenAI's ``json_schema`` form, which this server refuses."""
    with Gateway.from_settings(cache_path=root / "json_schema.sqlite", schema_style="json_schema",
                               timeout_s=TIMEOUT_S, progress=False) as gw:
        return gw.chat(ChatRequest(
            messages=[Message(role="user", content="Rate this story from 1 to 10: a ferry at dusk.")],
            schema=judge_schemas.judge_schema(JUDGE_MODE), sampling=Sampling(temperature=0.0, max_tokens=16),
            template_version="probe", tags={"item": "json-schema-probe"}))


def check_model(run: Run, srv: LocalLlamaServer) -> None:
    # --model_alias is the GGUF's stem: outputs say they come from the embedded 135M model
    assert run.model == srv.model_alias == "SmolLM2-135M-Instruct.Q4_1"
    assert run.embedded


def check_sage(run: Run) -> None:
    res = run.sage
    assert res.model == run.model
    if res.status == "ok":
        # the reply parses onto Round 1's schema: every dimension of the layer scored on the scale
        scores = res.parsed.scores
        codes = schemas.layer_spec(LAYER).codes
        assert sorted(type(scores).model_fields) == sorted(codes)
        for code in codes:
            dim = getattr(scores, code)
            assert dim.score in SCORE_VALUES and 1 <= dim.confidence <= 5
        assert res.usage.input_tokens > 0 and res.usage.output_tokens > 0  # the server's own counts
    else:
        # a failure is recorded with its reason, naming the item, never scored
        assert res.parsed is None and "ferry" in (res.error or "")
    # the text the judge saw holds neither the title nor the author
    for m in sage_request().messages:
        assert "Last Ferry" not in m.content and "Nora Vell" not in m.content


def check_judge(run: Run) -> None:
    judge = run.judge
    assert list(judge.columns) == list(SCORE_COLUMNS) and len(judge) == 1
    row = judge.iloc[0]
    assert row["backend"] == "openai-compatible" and row["model"] == run.model and not row["cached"]
    if row["status"] == "ok":
        assert 1 <= row["score"] <= 10 and float(row["score"]).is_integer()
        assert row["input_tokens"] > 0 and row["output_tokens"] > 0  # usage reported by the server
    else:
        assert math.isnan(row["score"])


def check_fresh_ledger(run: Run, posts: int) -> None:
    assert len(run.ledger) == 1 + len(run.judge)
    assert not run.ledger["cached"].any()
    ok = run.ledger[run.ledger["status"] == "ok"]
    assert (ok["input_tokens"] > 0).all() and not ok["estimated"].any()  # the server's own counts
    # every call (and any repair turn or retry) was one POST in the server's log
    assert posts >= len(run.ledger)


def check_refused(res) -> None:
    assert res.status == "failed" and res.parsed is None
    assert "HTTP 500" in res.error and "Input should be 'text' or 'json_object'" in res.error
    assert "json-schema-probe" in res.error
    assert res.n_attempts == 1  # a request form the server rejects is not retried


def check_replay(live: Run, again: Run | ReplayMissError) -> None:
    if failed_calls(live):
        # a recorded failure is never cached, so its replay stops with an error naming the item
        assert isinstance(again, ReplayMissError), again
        assert "item=ferry" in str(again) or "collection=news" in str(again)
        return
    assert isinstance(again, Run), again
    assert again.sage.parsed == live.sage.parsed and again.sage.text == live.sage.text
    pd.testing.assert_frame_equal(again.judge.drop(columns="cached"), live.judge.drop(columns="cached"))
    assert again.judge["cached"].all() and again.sage.cached
    # zero fresh calls: every ledger row is a cache hit, the same calls in the same order
    assert len(again.ledger) == len(live.ledger) and again.ledger["cached"].all()
    assert list(again.ledger["key"]) == list(live.ledger["key"])


def test_sage_and_a_judge_through_llama_cpp_server_then_replay_offline(tmp_path):
    # one thread: `make test` runs two workers on two cores, and llama.cpp's idle threads spin
    srv = LocalLlamaServer(n_threads=1, n_ctx=4096, log_path=tmp_path / "server.log")
    cache = tmp_path / "cache.sqlite"
    with pytest.MonkeyPatch.context() as mp, srv:
        env(mp, srv.base_url)  # no JUDGELAB_MODEL: the gateway asks the server's /v1/models
        with Gateway.from_settings(cache_path=cache, timeout_s=TIMEOUT_S, progress=False) as gw:
            live = run_both(gw)
        refused = json_schema_probe(tmp_path)
        posts = srv.log_tail(10_000).count("POST /v1/chat/completions")
    assert not srv.running and not answers(f"{srv.base_url}/models")

    check_model(live, srv)
    check_sage(live)
    check_judge(live)
    check_fresh_ledger(live, posts)
    check_refused(refused)

    with pytest.MonkeyPatch.context() as mp:
        # replay needs the model name that filled the cache: no server is there to list it
        env(mp, srv.base_url, model=live.model, cache_mode="replay")
        with Gateway.from_settings(cache_path=cache, progress=False) as gw:
            try:
                again = run_both(gw)
            except ReplayMissError as exc:
                again = exc
    check_replay(live, again)


def test_a_server_that_cannot_load_its_model_is_reported_with_its_log(tmp_path):
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"not a gguf")
    srv = LocalLlamaServer(bad, n_threads=1, log_path=tmp_path / "server.log")
    with pytest.raises(ServerStartError, match="exited with code") as err:
        srv.start()
    # the error carries the server's own last words, which name the file
    assert f"Failed to load model from file: {bad}" in str(err.value)
    assert not srv.running
