"""The grammar checked only when the model's own draw breaks it (``llamacpp_sampling``), on the real
bundled model: at temperature 0 it must give exactly what grammar-first sampling gives (the argmax
over the allowed tokens either way), and it must never let a refused token through."""
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


@pytest.mark.parametrize("schema", ['{"type": "string", "maxLength": 40}',
                                    '{"type": "number"}',
                                    '{"enum": ["cat", "dog", "owl"]}'])
def test_greedy_equals_grammar_first_sampling(be, schema):
    from llama_cpp import LlamaGrammar

    llama, gbnf = be.llama, compact_json_gbnf(schema)
    ids = prompt_ids(be, PROMPT + '{"value":')
    llama.reset()
    ref = llama.create_completion(prompt=ids, grammar=LlamaGrammar.from_string(gbnf, verbose=False),
                                  temperature=0.0, max_tokens=30)
    llama.reset()
    toks, finish = sample_value(llama, ids, gbnf, temperature=0.0, top_p=1.0, seed=1, max_tokens=30)
    assert be._detokenize_special(toks) == ref["choices"][0]["text"]
    assert finish == ref["choices"][0]["finish_reason"]
    assert list(llama._input_ids) == ids + toks  # the KV cache holds the prompt and the value


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


def test_a_closed_value_leaves_its_last_token_to_the_caller_and_the_reply_is_unchanged(be):
    """Greedy replies to a SAGE round are the same with and without folding, with fewer decodes."""
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
    assert replies[True] == replies[False] and json.loads(replies[True])["scores"]
    assert evals[True] <= evals[False] - 10  # two notes + 4 x (strength, evidence) closed slots

    ids = prompt_ids(be, PROMPT + '{"value":')
    from judgelab.gateway.backends.llamacpp_decoding import closing_test
    toks, finish = sample_value(llama, ids, compact_json_gbnf('{"enum": ["cat", "dog"]}'), temperature=0.0,
                                top_p=1.0, seed=1, max_tokens=10, closed=closing_test('{"enum": ["cat", "dog"]}'))
    assert finish == "stop" and be._detokenize_special(toks) in ('"cat"', '"dog"')
    assert list(llama._input_ids) == ids + toks[:-1]  # the closing token is not evaluated yet


def test_the_public_api_fallback_gives_the_same_greedy_reply(be):
    """Without llama_cpp._internals the backend samples through the public Llama.generate: a SAGE
    round's greedy reply is the same either way, and the cache key names the way it was made."""
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
    assert replies[True] == replies[False] and json.loads(replies[False])["scores"]
    assert identities == {True: llamacpp.DECODING, False: llamacpp.DECODING_PLAIN}


def test_the_fallback_slot_matches_grammar_first_sampling_and_stops_at_max_tokens(be):
    from llama_cpp import LlamaGrammar

    from judgelab.gateway.backends.llamacpp_sampling import sample_value_plain

    llama, gbnf = be.llama, compact_json_gbnf('{"enum": ["cat", "dog", "owl"]}')
    ids = prompt_ids(be, PROMPT + '{"value":')
    llama.reset()
    ref = llama.create_completion(prompt=ids, grammar=LlamaGrammar.from_string(gbnf, verbose=False),
                                  temperature=0.0, max_tokens=30)
    toks, finish = sample_value_plain(llama, ids, gbnf, temperature=0.0, top_p=1.0, seed=1, max_tokens=30)
    assert (be._detokenize_special(toks), finish) == (ref["choices"][0]["text"], "stop")
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
