"""The llama.cpp backend's decoding helpers with the bundled GGUF's real tokenizer (no weights)."""
from __future__ import annotations

import json

import pytest

from judgelab.gateway.backends.llamacpp import bundled_gguf
from judgelab.gateway.backends.llamacpp_decoding import ConversationTokens, closing_test, compact_json_gbnf


@pytest.fixture(scope="module")
def vocab():
    from llama_cpp import Llama

    return Llama(model_path=str(bundled_gguf()), vocab_only=True, verbose=False)


@pytest.fixture
def turns(vocab):
    return ConversationTokens(lambda t: vocab.tokenize(t.encode(), add_bos=False, special=True),
                              lambda ids: vocab.detokenize(ids, special=True).decode("utf-8", errors="replace"))


def test_a_continued_prompt_keeps_the_generated_ids(turns):
    # a reply generated in pieces the tokenizer would have merged: not the canonical ids
    reply = turns.tokenize('<|im_start|>assistant\n{"a"') + turns.tokenize(':') + turns.tokenize('1}')
    assert reply != turns.tokenize('<|im_start|>assistant\n{"a":1}')
    turns.remember(reply)
    prompt = '<|im_start|>assistant\n{"a":1}<|im_end|>\n<|im_start|>user\nAgain.'
    ids, carried = turns.prompt_ids(prompt)
    assert carried == len(reply) and ids[:carried] == reply
    assert turns.detokenize(ids) == prompt


def test_an_unrelated_prompt_is_tokenised_whole(turns):
    turns.remember(turns.tokenize("<|im_start|>system\nA"))
    ids, carried = turns.prompt_ids("<|im_start|>system\nB and more")
    assert carried == 0 and ids == turns.tokenize("<|im_start|>system\nB and more")
    turns.forget()
    assert turns.prompt_ids("<|im_start|>system\nA x") == (turns.tokenize("<|im_start|>system\nA x"), 0)


def test_a_seam_that_does_not_round_trip_is_tokenised_whole(turns):
    # ids that do not detokenise to their recorded text are never carried over
    turns.ids, turns.text = turns.tokenize("Hello"), "Hel"
    ids, carried = turns.prompt_ids("Hello world")
    assert carried == 0 and ids == turns.tokenize("Hello world")


def test_compact_grammar_has_an_empty_space_rule_and_keeps_property_order():
    schema = {"type": "object", "properties": {"reasoning": {"type": "string", "maxLength": 5},
                                               "score": {"enum": [1, 2]}},
              "required": ["reasoning", "score"]}
    gbnf = compact_json_gbnf(json.dumps(schema))
    assert 'space ::= ""' in gbnf and 'space ::= " "?' not in gbnf
    root = next(line for line in gbnf.splitlines() if line.startswith("root ::="))
    assert root.index("reasoning-kv") < root.index("score-kv")


@pytest.mark.parametrize("schema, closed, open_", [
    ('{"type": "string", "maxLength": 9}', ['""', '"ab"', '"a\\\\"', '"say \\"hi\\""'],
     ['"', '"ab', '"a\\"', '"say \\"hi\\"']),
    ('{"enum": ["weak", "moderate", "strong"]}', ['"weak"', '"strong"'], ['"wea', '"', '"strong']),
    ('{"enum": [1, 1.5, 2]}', ['1.5', '2'], ['1', '1.']),  # "1" may still become "1.5"
    ('{"type": "boolean"}', ['true', 'false'], ['tru', 'f']),
])
def test_closing_test_closes_a_value_only_when_nothing_may_follow(schema, closed, open_):
    test = closing_test(schema)
    assert all(test(text) for text in closed), closed
    assert not any(test(text) for text in open_), open_


def test_numbers_are_never_closed_early():
    assert closing_test('{"type": "number"}') is None and closing_test('{"type": "integer"}') is None
