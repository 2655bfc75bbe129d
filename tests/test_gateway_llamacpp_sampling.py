"""The grammar checked only when the model's own draw breaks it (``llamacpp_sampling``), on the real
bundled model: it must never let a refused token through, and what it samples must be what the
grammar allows. Two decoding paths are never compared token for token: the same greedy request can
decode to different replies on two CPUs of one kind (the order of floating-point sums differs), so
the tests check what the paths must share (the constraint, a valid reply, the key naming the path)."""
from __future__ import annotations

import json

import pytest

from judgelab.gateway.backends.llamacpp import LlamaCppBackend
from judgelab.gateway.backends.llamacpp_decoding import compact_json_gbnf
from judgelab.gateway.backends.llamacpp_sampling import SlotStats, sample_value

pytestmark = pytest.mark.llm

PROMPT = "<|im_start|>user\nName an animal and say why you like it, in JSON.<|im_end|>\n<|im_start|>assistant\n"


@pytest.fixture(scope="module")
def be():
    return LlamaCppBackend()


def prompt_ids(be, text=PROMPT):
    return be.llama.tokenize(text.encode(), add_bos=False, special=True)


def assert_fits(value, schema: dict) -> None:
    """``value`` is one the (small) schema allows: its enum, its type, its maxLength."""
    if "enum" in schema:
        assert value in schema["enum"]
    elif schema.get("type") == "string":
        assert isinstance(value, str) and len(value) <= schema.get("maxLength", len(value))
    elif schema.get("type") == "number":
        assert isinstance(value, (int, float)) and not isinstance(value, bool)


def valid_round_reply(text: str, schema) -> dict:
    """The reply parsed and validated against the round's pydantic schema (raises otherwise)."""
    parsed = schema.model_validate_json(text)
    assert parsed.model_dump()["scores"]
    return parsed.model_dump()


@pytest.mark.parametrize("schema", ['{"type": "string", "maxLength": 40}',
                                    '{"type": "number"}',
                                    '{"enum": ["cat", "dog", "owl"]}'])
def test_a_greedy_value_is_one_the_grammar_allows(be, schema):
    """Greedy sampling with the grammar checked after the draw yields a complete value of the schema
    (or a cut one that says ``length``), and leaves the KV cache holding the prompt and the value."""
    llama, gbnf = be.llama, compact_json_gbnf(schema)
    ids = prompt_ids(be, PROMPT + '{"value":')
    llama.reset()
    toks, finish = sample_value(llama, ids, gbnf, temperature=0.0, top_p=1.0, seed=1, max_tokens=30)
    assert finish in ("stop", "length")
    if finish == "stop":
        assert_fits(json.loads(be._detokenize_special(toks)), json.loads(schema))
    assert list(llama._input_ids) == ids + toks


def test_a_refused_draw_is_redrawn_under_the_grammar(be):
    stats = SlotStats()
    ids = prompt_ids(be, PROMPT + "My favourite animal is the")
    seen = set()
    for seed in range(6):
        toks, finish = sample_value(be.llama, ids, 'root ::= " zebra" | " quokka"', temperature=0.9, top_p=1.0,
                                    seed=seed, max_tokens=10, stats=stats)
        seen.add(be._detokenize_special(toks))
        assert finish == "stop"
    assert seen <= {" zebra", " quokka"}
    assert stats.redrawn >= 1 and stats.sampled > stats.redrawn


def test_a_value_cut_at_max_tokens_says_length(be):
    ids = prompt_ids(be, PROMPT + '{"why":')
    toks, finish = sample_value(be.llama, ids, compact_json_gbnf('{"type": "string"}'), temperature=0.7,
                                top_p=1.0, seed=3, max_tokens=4)
    assert finish == "length" and len(toks) == 4


def test_a_grammar_llama_cpp_cannot_parse_is_a_clear_error(be):
    with pytest.raises(ValueError, match="could not parse the grammar"):
        sample_value(be.llama, prompt_ids(be), "root ::= (", temperature=0.7, top_p=1.0, seed=1, max_tokens=3)


@pytest.mark.parametrize("schema", ['{"type": "string", "maxLength": 40}',
                                    '{"enum": ["strong", "moderate", "weak", "absent"]}'])
def test_a_value_is_called_closed_exactly_when_its_grammar_allows_only_the_end(be, schema):
    """Sampled without the test, a value ends with the end token: the closing test must say no to
    every shorter run of its tokens and yes to the whole value, whatever the draw."""
    from judgelab.gateway.backends.llamacpp_decoding import closing_test

    closed, gbnf = closing_test(schema), compact_json_gbnf(schema)
    ids = prompt_ids(be, PROMPT + '{"value":')
    for seed in range(4):
        toks, finish = sample_value(be.llama, ids, gbnf, temperature=0.9, top_p=1.0, seed=seed, max_tokens=40)
        assert finish == "stop"
        texts = [be._detokenize_special(toks[:n]) for n in range(1, len(toks) + 1)]
        assert [closed(t) for t in texts] == [False] * (len(toks) - 1) + [True], texts


def test_a_closed_value_leaves_its_last_token_to_the_caller_and_the_reply_stays_valid(be):
    """With folding (the closing token of a closed value left to the caller) a SAGE round's greedy
    reply is as valid as without it and needs fewer decodes. The two replies are not compared
    token for token: the two paths evaluate different batches, whose float sums may differ."""
    from judgelab.gateway.types import Sampling
    from judgelab.sage.protocol import schemas

    schema = schemas.round_schema("L4", "content", 1, 30, 40)
    msgs = [{"role": "system", "content": "You judge stories."},
            {"role": "user", "content": "A family moves north and the farm fails. Score it in JSON."}]
    llama, replies, evals = be.llama, {}, {}
    real_eval = llama.eval
    try:
        for fold in (False, True):
            be.skip_closed_end, calls = fold, []
            llama.eval = lambda toks, calls=calls: (calls.append(len(toks)), real_eval(toks))
            llama.reset()
            replies[fold] = be.complete(msgs, schema, Sampling(temperature=0.0, seed=7, max_tokens=300)).text
            evals[fold] = len(calls)
    finally:
        del llama.eval
        be.skip_closed_end = True
    for fold in (False, True):
        valid_round_reply(replies[fold], schema)
    # at least one decode saved per closed slot that both replies went through (two notes + 4 x
    # (strength, evidence)), whatever text each wrote
    assert evals[True] < evals[False]

    ids = prompt_ids(be, PROMPT + '{"value":')
    from judgelab.gateway.backends.llamacpp_decoding import closing_test
    toks, finish = sample_value(llama, ids, compact_json_gbnf('{"enum": ["cat", "dog"]}'), temperature=0.0,
                                top_p=1.0, seed=1, max_tokens=10, closed=closing_test('{"enum": ["cat", "dog"]}'))
    assert finish == "stop" and be._detokenize_special(toks) in ('"cat"', '"dog"')
    assert list(llama._input_ids) == ids + toks[:-1]  # the closing token is not evaluated yet


def test_the_public_api_fallback_gives_a_valid_greedy_reply_under_its_own_key(be):
    """Without llama_cpp._internals the backend samples through the public Llama.generate: a SAGE
    round's greedy reply is valid either way, and the cache key names the way it was made (so a
    cached reply of one path is never served for the other). The replies are not compared token
    for token: on some CPUs of this kind the two paths decode "the 1.0" and "the 1"."""
    from judgelab.gateway.backends import llamacpp
    from judgelab.gateway.types import Sampling
    from judgelab.sage.protocol import schemas

    assert be.fast_sampling  # the pinned llama-cpp-python has the private pieces
    schema = schemas.round_schema("L4", "content", 1, 30, 40)
    msgs = [{"role": "system", "content": "You judge stories."},
            {"role": "user", "content": "A family moves north and the farm fails. Score it in JSON."}]
    replies, identities = {}, {}
    try:
        for fast in (True, False):
            be.fast_sampling = fast
            be.llama.reset()
            replies[fast] = be.complete(msgs, schema, Sampling(temperature=0.0, seed=7, max_tokens=300)).text
            identities[fast] = be.identity()["decoding"]
    finally:
        be.fast_sampling = True
    for fast in (True, False):
        valid_round_reply(replies[fast], schema)
    assert identities == {True: llamacpp.DECODING, False: llamacpp.DECODING_PLAIN}


def test_the_fallback_slot_keeps_to_the_grammar_and_stops_at_max_tokens(be):
    from judgelab.gateway.backends.llamacpp_sampling import sample_value_plain

    llama, gbnf = be.llama, compact_json_gbnf('{"enum": ["cat", "dog", "owl"]}')
    ids = prompt_ids(be, PROMPT + '{"value":')
    llama.reset()
    toks, finish = sample_value_plain(llama, ids, gbnf, temperature=0.0, top_p=1.0, seed=1, max_tokens=30)
    assert finish == "stop" and json.loads(be._detokenize_special(toks)) in ("cat", "dog", "owl")
    toks, finish = sample_value_plain(llama, prompt_ids(be, PROMPT + '{"why":'), compact_json_gbnf('{"type": "string"}'),
                                      temperature=0.7, top_p=1.0, seed=3, max_tokens=4)
    assert finish == "length" and len(toks) == 4
    with pytest.raises(ValueError, match="could not parse the grammar"):
        sample_value_plain(llama, ids, "root ::= (", temperature=0.7, top_p=1.0, seed=1, max_tokens=3)


def test_fast_sampling_needs_every_private_piece(monkeypatch):
    from llama_cpp import _internals

    from judgelab.gateway.backends import llamacpp_sampling

    assert llamacpp_sampling.fast_sampling_available()
    monkeypatch.delattr(_internals.LlamaTokenDataArray, "copy_logits")
    assert not llamacpp_sampling.fast_sampling_available()
