"""The grammar checked only when the model's own draw breaks it (``llamacpp_sampling``), on the real
bundled model: at temperature 0 it must give exactly what grammar-first sampling gives (the argmax
over the allowed tokens either way), and it must never let a refused token through."""
from __future__ import annotations

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
