"""Sampling one JSON value under its grammar, checking the grammar only when it is needed.

llama-cpp-python puts the grammar first in its chain, so every token pays for matching it against
all 49,152 vocabulary entries (19-20 ms a token on two cores, against 10 ms). Like llama.cpp's own
``common_sampler_sample``, :func:`sample_value` samples with the chain alone, asks the grammar
about that one token, and only when it is refused samples again with the grammar applied.

The chain is llama-cpp-python's default for the arguments passed (top-k 40, typical 1.0, top-p,
min-p 0.05, temperature, a draw seeded per slot; greedy at 0). Where the grammar refuses a draw the
distribution differs from grammar-first sampling, so the backend's ``DECODING`` names it. The chain
uses the private ``llama_cpp._internals`` (:func:`fast_sampling_available`); without it
:func:`sample_value_plain` samples grammar-first with the public API, under its own ``DECODING``.
"""
from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass

import numpy as np

from judgelab.gateway.backends.llamacpp_states import common_prefix_len


_CHAIN_METHODS = ("add_greedy", "add_top_k", "add_typical", "add_top_p", "add_min_p", "add_temp", "add_dist",
                  "sample", "close")


def fast_sampling_available() -> bool:
    """Whether the installed llama-cpp-python has the private pieces :func:`sample_value` uses:
    ``_internals.LlamaSampler`` (with the chain's methods), ``_internals.LlamaTokenDataArray``
    (``copy_logits``) and ``_internals.LlamaContext.kv_cache_seq_rm``."""
    try:
        from llama_cpp import _internals
    except ImportError:
        return False
    sampler = getattr(_internals, "LlamaSampler", None)
    cands = getattr(_internals, "LlamaTokenDataArray", None)
    context = getattr(_internals, "LlamaContext", None)
    return (sampler is not None and all(hasattr(sampler, m) for m in _CHAIN_METHODS)
            and cands is not None and hasattr(cands, "copy_logits")
            and context is not None and hasattr(context, "kv_cache_seq_rm"))


@dataclass
class SlotStats:
    """Tokens sampled, and how many of them the grammar refused at first (then redrawn)."""

    sampled: int = 0
    redrawn: int = 0


def _chain(temperature: float, top_p: float, seed: int):
    from llama_cpp import _internals

    chain = _internals.LlamaSampler()
    if temperature == 0:
        chain.add_greedy()
        return chain
    chain.add_top_k(40)
    chain.add_typical(1.0, 1)
    chain.add_top_p(top_p, 1)
    chain.add_min_p(0.05, 1)
    chain.add_temp(temperature)
    chain.add_dist(seed)
    return chain


def _allows(grammar, token: int) -> bool:
    """Whether the grammar, in its current state, allows ``token`` next."""
    import llama_cpp

    one = (llama_cpp.llama_token_data * 1)()
    one[0].id, one[0].logit, one[0].p = token, 0.0, 0.0
    arr = llama_cpp.llama_token_data_array(data=ctypes.cast(one, llama_cpp.llama_token_data_p), size=1,
                                           selected=-1, sorted=False)
    llama_cpp.llama_sampler_apply(grammar, ctypes.byref(arr))
    return not math.isinf(one[0].logit)


def _redraw(llama, grammar, chain) -> int:
    """The token drawn from the whole vocabulary with the grammar applied first."""
    import llama_cpp
    from llama_cpp import _internals

    n_vocab = llama.n_vocab()
    logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama._ctx.ctx, -1), shape=(n_vocab,))
    cands = _internals.LlamaTokenDataArray(n_vocab=n_vocab)
    cands.copy_logits(logits)
    llama_cpp.llama_sampler_apply(grammar, ctypes.byref(cands.candidates))
    llama_cpp.llama_sampler_apply(chain.sampler, ctypes.byref(cands.candidates))
    return int(cands.candidates_data.id[cands.candidates.selected])


def evaluate_prompt(llama, ids: list[int]) -> None:
    """Bring the KV cache to ``ids``: keep the prefix it already holds, evaluate the rest (at least
    the last token, whose logits the first draw needs)."""
    keep = min(common_prefix_len(llama._input_ids, ids), len(ids) - 1)
    llama._ctx.kv_cache_seq_rm(-1, keep, -1)
    llama.n_tokens = keep
    llama.eval(ids[keep:])


def sample_value(llama, ids: list[int], grammar_text: str, *, temperature: float, top_p: float,
                 seed: int | None, max_tokens: int, stats: SlotStats | None = None,
                 closed=None) -> tuple[list[int], str]:
    """Sample after ``ids`` until ``grammar_text`` is complete (it then allows only the end token)
    or ``max_tokens``; returns the value's tokens (the end token excluded) and ``"stop"`` or
    ``"length"``. The KV cache is left holding ``ids`` + the value, except that with
    ``closed(text) -> bool`` (:func:`.llamacpp_decoding.closing_test`) a value that test calls
    closed stops at once: its last token is left for the caller to evaluate with what follows."""
    import llama_cpp

    evaluate_prompt(llama, ids)
    vocab = llama._model.vocab
    chain = _chain(temperature, top_p, 0xFFFFFFFF if seed is None else seed)  # LLAMA_DEFAULT_SEED: random
    grammar = llama_cpp.llama_sampler_init_grammar(vocab, grammar_text.encode("utf-8"), b"root")
    if not grammar:
        chain.close()
        raise ValueError(f"llama.cpp could not parse the grammar:\n{grammar_text}")
    stats = stats if stats is not None else SlotStats()
    out: list[int] = []
    try:
        for _ in range(max_tokens):
            token = chain.sample(llama._ctx, -1)
            stats.sampled += 1
            if not _allows(grammar, token):
                stats.redrawn += 1
                token = _redraw(llama, grammar, chain)
            llama_cpp.llama_sampler_accept(grammar, token)
            if llama_cpp.llama_vocab_is_eog(vocab, token):
                return out, "stop"
            out.append(token)
            if closed is not None and closed(llama.detokenize(out).decode("utf-8", errors="replace")):
                return out, "stop"  # the grammar would now allow only the end token
            llama.eval([token])
        return out, "length"
    finally:
        llama_cpp.llama_sampler_free(grammar)
        chain.close()


def sample_value_plain(llama, ids: list[int], grammar_text: str, *, temperature: float, top_p: float,
                       seed: int | None, max_tokens: int, stats: SlotStats | None = None,
                       closed=None) -> tuple[list[int], str]:
    """:func:`sample_value` with the public API only (``Llama.generate``, grammar first); ``closed``
    is not used (the end token is sampled)."""
    import llama_cpp
    from llama_cpp import LlamaGrammar

    vocab = llama_cpp.llama_model_get_vocab(llama.model)
    # LlamaGrammar.from_string does not parse; a grammar llama.cpp refuses would reach the
    # sampler chain as a null sampler (a crash), so parse it here first
    check = llama_cpp.llama_sampler_init_grammar(vocab, grammar_text.encode("utf-8"), b"root")
    if not check:
        raise ValueError(f"llama.cpp could not parse the grammar:\n{grammar_text}")
    llama_cpp.llama_sampler_free(check)
    grammar = LlamaGrammar.from_string(grammar_text, verbose=False)
    llama.set_seed(0xFFFFFFFF if seed is None else seed)
    stats = stats if stats is not None else SlotStats()
    out: list[int] = []
    tokens = llama.generate(ids, top_k=40, top_p=top_p, min_p=0.05, typical_p=1.0, temp=temperature,
                            repeat_penalty=1.0, grammar=grammar)
    try:
        for token in tokens:
            stats.sampled += 1
            if llama_cpp.llama_vocab_is_eog(vocab, token):
                return out, "stop"
            out.append(int(token))
            if len(out) >= max_tokens:
                return out, "length"
        return out, "length"
    finally:
        tokens.close()
