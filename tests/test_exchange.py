"""judgelab.exchange: one item's messages and raw replies, read back from the cache and transcripts
that a real gateway run (against the local scriptable HTTP server) left behind."""
from __future__ import annotations

import pydantic
import pytest

from judgelab import exchange
from judgelab.gateway import ChatRequest, Gateway, Message
from fake_openai_server import FakeChatServer


class Score(pydantic.BaseModel):
    score: int = pydantic.Field(ge=1, le=5)


STORY = "A" * 3000 + "MIDDLE" + "Z" * 3000


def _req(messages, item, rnd):
    return ChatRequest(messages=messages, schema=Score, replicate=0, template_version="t-v1",
                       tags={"study": "sage", "layer": "L4", "mode": "content", "item": item,
                             "track": "evaluator", "round": rnd})


@pytest.fixture
def run(tmp_path):
    """Story s1: round 1, then round 2 whose first reply breaks the schema (repaired); story s2: round 1."""
    replies = ['{"score": 3}', '{"score": 9}', '{"score": 4}', '{"score": 2}']
    with FakeChatServer(replies) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "cache" / "c.sqlite")
        first = [Message(role="system", content="You judge stories."), Message(role="user", content=STORY)]
        r1 = gw.chat(_req(first, "s1", 1))
        second = first + [Message(role="assistant", content=r1.text), Message(role="user", content="Check again.")]
        r2 = gw.chat(_req(second, "s1", 2))
        gw.chat(_req([Message(role="system", content="You judge stories."),
                      Message(role="user", content="another story")], "s2", 1))
        gw.close()
        assert (r1.data, r2.data, srv.n_calls) == ({"score": 3}, {"score": 4}, 4)
    return tmp_path / "cache" / "c.sqlite"


def test_elide_keeps_head_and_tail():
    assert exchange.elide("abcdef", 6) == "abcdef"
    assert exchange.elide("abcdefghij", 4) == "ab\n[... 6 characters elided ...]\nij"


def test_one_item_round_by_round(run):
    ex = exchange.load_exchange({"study": "sage", "layer": "L4"}, {"item": "s1"}, cache_path=run)
    assert ex.item == {"item": "s1", "layer": "L4", "mode": "content", "study": "sage"}
    assert [c.tags["round"] for c in ex.calls] == [1, 2]
    # round 1 shows the whole conversation; round 2 only what it added after round 1's reply
    assert [m["role"] for m in ex.calls[0].new_messages] == ["system", "user"]
    assert ex.calls[1].new_messages == [{"role": "user", "content": "Check again."}]
    # the transcript holds round 2's rejected reply before the accepted one
    assert [r["reply"] for r in ex.calls[1].replies] == ['{"score": 9}', '{"score": 4}']
    assert ex.calls[1].replies[0]["error"] and ex.calls[1].replies[1]["error"] is None


def test_latest_item_is_the_default_and_text_is_elided(run):
    ex = exchange.load_exchange({"study": "sage"}, cache_path=run)
    assert ex.item["item"] == "s2" and len(ex.calls) == 1
    md = exchange.exchange_markdown(exchange.load_exchange({"study": "sage"}, {"item": "s1"}, cache_path=run), 100)
    assert "MIDDLE" not in md and "[... 5,906 characters elided ...]" in md
    assert "reply, attempt 1* — rejected" in md and '{"score": 4}' in md


def test_without_transcripts_the_cached_reply_is_shown(run, tmp_path):
    ex = exchange.load_exchange({"study": "sage"}, {"item": "s1"}, cache_path=run, transcripts=tmp_path / "none")
    assert [r["reply"] for r in ex.calls[1].replies] == ['{"score": 4}']


def test_no_match_says_so(run, tmp_path):
    assert exchange.load_exchange({"study": "narrative"}, cache_path=run) is None
    assert exchange.load_exchange({"study": "sage"}, cache_path=tmp_path / "absent.sqlite") is None
    assert "No cached call matches" in exchange.exchange_markdown(None)


def test_a_broken_transcript_line_names_its_file(run):
    bad = run.parent / "transcripts" / "zz_broken.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"zz_broken.jsonl: line 1"):
        exchange.load_exchange({"study": "sage"}, cache_path=run)


def _turn(messages, item, track, rnd, **more):
    return ChatRequest(messages=messages, schema=Score, replicate=0, template_version="t-v1",
                       tags={"study": "sage", "layer": "L4", "mode": "title", "item": item,
                             "track": track, "round": rnd, **more})


def _title_conversation(gw, author):
    """One title-mode evaluation as SAGE runs it: evaluator rounds 1 and 2, blind validator, review."""
    work = f'WORK: "The Story" by {author}.'
    first = [Message(role="system", content="You judge stories."), Message(role="user", content=work)]
    r1 = gw.chat(_turn(first, "t1", "evaluator", 1))
    gw.chat(_turn(first + [Message(role="assistant", content=r1.text), Message(role="user", content="Check.")],
                  "t1", "evaluator", 2))
    blind = [Message(role="system", content="You validate."), Message(role="user", content=work)]
    b = gw.chat(_turn(blind, "t1", "validator_blind", 1))
    gw.chat(_turn(blind + [Message(role="assistant", content=b.text), Message(role="user", content="Review.")],
                  "t1", "validator_review", 1))


def test_the_main_run_is_shown_whole_when_the_anonymous_run_repeats_its_tags(tmp_path):
    """Table 9's anonymous-author title run goes last with the main run's tags; notebook 12 tags
    its probes with its number: the exchange is the main run's four calls, none of the others."""
    with FakeChatServer(['{"score": 3}'] * 9) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite")
        _title_conversation(gw, "Katherine Mansfield")
        _title_conversation(gw, "an unknown author")  # the sensitivity run, after the main one
        gw.chat(_turn([Message(role="user", content="planted")], "t1", "evaluator", 1, notebook="12", probe="p"))
        gw.close()
        assert srv.n_calls == 9
    ex = exchange.load_exchange({"study": "sage", "layer": "L4"}, cache_path=tmp_path / "c.sqlite")
    assert ex.item == {"item": "t1", "layer": "L4", "mode": "title", "study": "sage"}
    assert [(c.tags["track"], c.tags["round"]) for c in ex.calls] == [
        ("evaluator", 1), ("evaluator", 2), ("validator_blind", 1), ("validator_review", 1)]
    sent = [m["content"] for c in ex.calls for m in c.new_messages]
    assert sum("Katherine Mansfield" in t for t in sent) == 2 and not any("unknown author" in t for t in sent)
    # round 2 adds only its own message to round 1's conversation: the two runs are not interleaved
    assert ex.calls[1].new_messages == [{"role": "user", "content": "Check."}]
    assert ex.calls[3].new_messages == [{"role": "user", "content": "Review."}]
    # asked for, notebook 12's probe is found
    probe = exchange.load_exchange({"study": "sage", "notebook": "12"}, cache_path=tmp_path / "c.sqlite")
    assert probe.item["probe"] == "p" and len(probe.calls) == 1
