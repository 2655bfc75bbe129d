"""Benchmark of SAGE evaluations on the embedded engine: the sage-v2 message layout against the
shared-prefix layout (sage-v4), both measured in this run.

One story (the demo profile's first content-mode story, demo settings: 900-token excerpt,
440-token replies, sampling at 0.7 with a seed) is judged on each layer (L4, L5 and L6 by default), each
evaluation being the evaluator's five rounds, the blind validator and the review (7 calls),
once per layout:

* ``v2`` — the role and the layer in the system message before the story: evaluator and
  validator share nothing of the story, nor consecutive evaluations their system message;
* ``shared-prefix`` (sage-v4) — one system message for everything, then the story, then the
  layer with its description, then the role: consecutive evaluations share the system message,
  the blind turn reuses system + story + layer task from the KV cache.

Before each evaluation the KV cache holds what the previous evaluation of the same notebook
would leave at its head (the validator conversation's system message), so the figures are
those of a notebook's steady state. Notebooks 02, 03 and 04 are separate processes; the gateway's
prefix-state store (``gateway/backends/llamacpp_states.py``) keeps a story's system + text prefix
on disk after its first layer, and the next layer loads it instead of prefilling it. The
benchmark's gateway has its own store (in a temporary directory), so the second and third layers
of the shared-prefix layout measure that; the v2 layout shares no prefix across layers.

Figures (``sage.<name>``; the first two are the targets'):

* ``seconds_per_evaluation`` / ``processed_tokens_per_evaluation`` — shared-prefix layout, mean
  over the layers; ``v2_*`` the same for the old layout; ``processed_tokens_ratio`` = v2 /
  shared-prefix and ``prompt_tokens_processed_ratio`` the same for prompt tokens alone (the same
  story on the same layers: per story; the target is >= 2). The target counted processed
  *prompt* tokens (its "processes ~3.1k prompt tokens and generates ~1.7k" was written when
  replies were sampled whole); since the fixed-text decoding llama.cpp's batch count also holds
  ~750 reply tokens per evaluation that both layouts process alike, so both ratios are printed;
  ``seconds_ratio`` = v2 / shared-prefix wall time (replies differ between layouts, so generated
  tokens differ too: compare the engine bounds as well).
* ``prompt_tokens_processed_per_evaluation``: prompt tokens not found in the KV cache (input minus
  cached); ``processed_tokens_per_evaluation`` is llama.cpp's own count of batch-evaluated tokens,
  which since the fixed-text decoding (``gateway/backends/llamacpp_decoding.py``) also holds
  the replies' fixed JSON text; ``generated_tokens_per_evaluation`` counts the sampled tokens only
  and ``reply_tokens_per_evaluation`` the whole replies.
* The engine bound: ``prompt_tokens_per_s`` and ``generated_tokens_per_s`` are llama.cpp's own
  timings (``llama_perf_context``) over every call of the run; ``engine_bound_s_per_evaluation``
  = processed / prompt rate + generated / generation rate; the rest of the wall time is
  sampling with the JSON grammar and Python (``overhead_share``).
* ``grammar_refusal_share``: of the value tokens sampled, the share the grammar refused at first
  and had redrawn over the whole vocabulary (``gateway/backends/llamacpp_sampling.py``).
* The prefix-state store: ``prefix_states_saved`` / ``prefix_states_loaded`` (counts),
  ``story_prefix_tokens`` and ``story_prefix_state_mb`` (the largest stored state: what one story
  costs on disk), ``kv_state_bytes_per_token``.

Absolute seconds depend on the machine's load (printed); ratios come from one run. Run:
``python benchmarks/bench_sage.py`` (``--story ID`` to pick the story; ``--layers L4,L5,L6`` for
fewer layers, e.g. ``--layers L4`` for a shorter run; the default is all three; ``--quick``: seconds,
for the test suite: L4, a 100-token excerpt and 16-token replies, which come back cut, so every
step runs but the figures are no measurement). Writes ``results/bench/sage.json`` (``--out``
elsewhere). Numbers come from the embedded SmolLM2-135M.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import tempfile
import time
from pathlib import Path

from figures_file import write_figures
from judgelab import config, paths
from judgelab.corpus import manifest
from judgelab.gateway import Gateway
from judgelab.gateway.backends.llamacpp import common_prefix_len
from judgelab.sage.protocol import leak_check, runner
from judgelab.sage.protocol.evaluation import EvalConfig, evaluate, opening

LAYOUTS = ("v2", "shared-prefix")


class EngineMeter:
    """Wraps the llama.cpp backend's ``complete`` to record, per call, llama.cpp's own counts and
    timings (prompt tokens it evaluated, generated tokens, milliseconds for each), the wall time,
    and the token ids left in the KV cache (prompt + reply)."""

    def __init__(self, backend):
        import llama_cpp

        self._perf, self._reset = llama_cpp.llama_perf_context, llama_cpp.llama_perf_context_reset
        self._sync = llama_cpp.llama_synchronize
        self.backend, self.calls = backend, []
        self._complete = backend.complete
        backend.complete = self.complete

    def complete(self, messages, schema, sampling):
        ctx = self.backend.llama._ctx.ctx
        self._reset(ctx)
        t0 = time.perf_counter()
        reply = self._complete(messages, schema, sampling)
        wall = time.perf_counter() - t0
        p = self._perf(ctx)
        self.calls.append({"wall_s": wall, "n_prompt": reply.usage.input_tokens, "n_cached": reply.usage.cached_tokens,
                           "n_reply": reply.usage.output_tokens, "n_p_eval": int(p.n_p_eval),
                           "t_p_eval_s": p.t_p_eval_ms / 1e3, "n_eval": int(p.n_eval), "t_eval_s": p.t_eval_ms / 1e3,
                           "kv_ids": list(self.backend.llama._input_ids)})
        return reply

    def prime(self, system_text: str) -> list[int]:
        """Leave in the KV cache what the previous evaluation of the same notebook leaves at its
        head: the system message of its last conversation (the validator's). Not metered."""
        llama = self.backend.llama
        toks = self.backend.prompt_tokens([{"role": "system", "content": system_text}])
        llama.reset()
        llama.eval(toks)
        # llama.cpp books a decode's timings when it synchronises: do it now, so that the next
        # call's meter (reset at its start) does not count the priming
        self._sync(llama._ctx.ctx)
        return toks


#: the quick mode's settings (seconds, for the test suite): a short excerpt, replies cut at 16
#: tokens and never repaired, so that each evaluation is Round 1 and the blind turn
QUICK = {"max_text_tokens": 100, "max_tokens": 16}
#: layouts the quick mode primes (:meth:`EngineMeter.prime`): the shared-prefix one only, where the
#: primed system message is the evaluator's own and Round 1 reuses it; the v2 validator's system
#: message (~1,200 tokens, unmetered, reused by nothing) was a fifth of the quick run's prompt tokens
QUICK_PRIMED = ("shared-prefix",)


def pick_story(story: str | None, quick: bool = False) -> tuple:
    """The corpus, the chosen story's row and the demo profile's settings (:data:`QUICK` applied)."""
    corpus = manifest.load_corpus()
    cfg = {**config.resolve("demo").knobs("sage"), **(QUICK if quick else {})}  # resolved once, as a notebook does
    chosen = runner.select_stories(corpus, cfg["per_category"], cfg["selection_seed"],
                                   [story] if story else None)
    return corpus, chosen.iloc[[0]], cfg


def open_gateway(folder: Path, quick: bool = False) -> Gateway:
    """The embedded model's gateway with its cache in ``folder`` (no repair turn in quick mode)."""
    return Gateway.from_settings(backend="llamacpp", cache_path=folder / "llm.sqlite", progress=False,
                                 **({"max_repairs": 0} if quick else {}))


def run_layout(gw: Gateway, meter: EngineMeter, corpus, story, cfg: dict, layout: str, layers,
               prime: bool = True) -> list[dict]:
    """Evaluate ``story`` in content mode on each layer in ``layout``; the KV cache is emptied
    before each layer (and primed with the validator's system message unless ``prime`` is false).
    Returns one record per evaluation with its calls' meter records."""
    surnames = leak_check.distinctive_surnames(zip(corpus["author"], corpus["text"]))
    ecfg = EvalConfig.from_settings({**cfg, "layout": layout})
    out = []
    for layer in layers:
        item = runner.build_items(story, layer, ["content"], cfg["max_text_tokens"], cfg["context_policy"],
                                  mask_title_in_body=cfg["mask_title_in_body"], surnames=surnames,
                                  count_tokens=gw.count_tokens)[0]
        if prime:
            primed = meter.prime(opening(item, "validator", layout).content)
        else:
            gw.backend.llama.reset()
            primed = []
        first = len(meter.calls)
        t0 = time.perf_counter()
        ev = evaluate(gw, item, ecfg)
        wall = time.perf_counter() - t0
        calls = meter.calls[first:]
        print(f"  {layout} {layer}: {wall:.1f} s, {sum(c['n_p_eval'] for c in calls)} prompt tokens processed, "
              f"{sum(c['n_eval'] for c in calls)} generated", file=sys.stderr, flush=True)
        out.append({"layer": layer, "layout": layout, "wall_s": wall, "calls": calls, "primed": primed,
                    "n_ok": sum(c.ok for c in ev.calls), "n_calls": len(ev.calls)})
    return out


def summarise(evals: list[dict]) -> dict:
    calls = [c for e in evals for c in e["calls"]]
    n = len(evals)
    return {"seconds_per_evaluation": sum(e["wall_s"] for e in evals) / n,
            "processed_tokens_per_evaluation": sum(c["n_p_eval"] for c in calls) / n,
            "prompt_tokens_per_evaluation": sum(c["n_prompt"] for c in calls) / n,
            "generated_tokens_per_evaluation": sum(c["n_eval"] for c in calls) / n,
            # the prompts' own share: prompt tokens not already in the KV cache (the reply's fixed
            # text, appended as tokens, is in n_p_eval but not here)
            "prompt_tokens_processed_per_evaluation": sum(c["n_prompt"] - c["n_cached"] for c in calls) / n,
            "reply_tokens_per_evaluation": sum(c["n_reply"] for c in calls) / n,
            "prompt_eval_s_per_evaluation": sum(c["t_p_eval_s"] for c in calls) / n,
            "generation_s_per_evaluation": sum(c["t_eval_s"] for c in calls) / n,
            "ok_share": sum(e["n_ok"] for e in evals) / max(1, sum(e["n_calls"] for e in evals))}


def kv_state_bytes_per_token(meter: EngineMeter) -> float:
    """The llama.cpp state size (KV cells + bookkeeping) per token now in the cache."""
    import llama_cpp

    llama = meter.backend.llama
    return llama_cpp.llama_state_get_size(llama._ctx.ctx) / max(1, llama.n_tokens)


def figures_of(results: dict[str, list[dict]], meter: EngineMeter, state_bpt: float) -> dict:
    old, new = summarise(results["v2"]), summarise(results["shared-prefix"])
    calls = meter.calls
    prompt_tps = sum(c["n_p_eval"] for c in calls) / sum(c["t_p_eval_s"] for c in calls)
    gen_tps = sum(c["n_eval"] for c in calls) / sum(c["t_eval_s"] for c in calls)
    bound = new["processed_tokens_per_evaluation"] / prompt_tps + new["generated_tokens_per_evaluation"] / gen_tps
    # what the blind turn shares with the evaluator's Round 1: system + material + layer task
    ev0 = results["shared-prefix"][0]["calls"]
    blind = ev0[5] if len(ev0) > 5 else None
    shared = common_prefix_len(ev0[0]["kv_ids"], blind["kv_ids"][:blind["n_prompt"]]) if blind else 0
    f = {**new, **{f"v2_{k}": v for k, v in old.items()},
         "processed_tokens_ratio": old["processed_tokens_per_evaluation"] / new["processed_tokens_per_evaluation"],
         "prompt_tokens_processed_ratio": old["prompt_tokens_processed_per_evaluation"]
         / new["prompt_tokens_processed_per_evaluation"],
         "seconds_ratio": old["seconds_per_evaluation"] / new["seconds_per_evaluation"],
         "prompt_tokens_per_s": prompt_tps, "generated_tokens_per_s": gen_tps,
         "engine_bound_s_per_evaluation": bound,
         "v2_engine_bound_s_per_evaluation": old["processed_tokens_per_evaluation"] / prompt_tps
         + old["generated_tokens_per_evaluation"] / gen_tps,
         "overhead_share": 1 - bound / new["seconds_per_evaluation"],
         "evaluator_validator_shared_tokens": shared,
         "kv_state_bytes_per_token": state_bpt}
    return f


def store_figures(states) -> dict:
    """What the prefix-state store did in this run, and what a story costs it on disk."""
    stored = states.entries() if states is not None else []
    biggest = max(stored, key=lambda e: len(e.ids), default=None)
    return {"prefix_states_saved": states.saved if states else 0,
            "prefix_states_loaded": states.loaded if states else 0,
            "story_prefix_tokens": len(biggest.ids) if biggest else 0,
            "story_prefix_state_mb": biggest.nbytes / 1e6 if biggest else 0.0}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--story", default=None, help="story_id (default: the demo profile's first story)")
    # all three: the per-story ratio counts the story's prefix once for three layers (~6 min quiet)
    parser.add_argument("--layers", default="L4,L5,L6", help="comma-separated layers (default L4,L5,L6)")
    parser.add_argument("--quick", action="store_true", help="seconds: L4, cut replies (no measurement)")
    parser.add_argument("--out", type=Path, default=None, help="default results/bench/sage.json")
    args = parser.parse_args(argv)
    os.environ.setdefault("JUDGELAB_PROGRESS", "0")
    layers = ["L4"] if args.quick else [x.strip() for x in args.layers.split(",") if x.strip()]
    figures: dict = {"cpu_count": os.cpu_count(), "date": dt.date.today().isoformat(),
                     "loadavg_1m_at_start": os.getloadavg()[0],
                     "source": "embedded SmolLM2-135M (llama.cpp), demo settings, content mode"}
    # resolved before the output root is redirected
    out = args.out or paths.bench_dir() / ("sage_quick.json" if args.quick else "sage.json")
    corpus, story, cfg = pick_story(args.story, args.quick)
    figures["story_id"], figures["layers"] = str(story["story_id"].iloc[0]), ",".join(layers)
    with tempfile.TemporaryDirectory(prefix="bench_sage_") as tmpdir:
        os.environ["JUDGELAB_OUTPUT_ROOT"] = tmpdir  # transcripts and cache stay out of results/
        gw = open_gateway(Path(tmpdir), args.quick)
        meter = EngineMeter(gw.backend)
        results = {layout: [] for layout in LAYOUTS}
        for layer in layers:  # layer by layer, both layouts, so that a partial run still compares them
            for layout in LAYOUTS:
                results[layout] += run_layout(gw, meter, corpus, story, cfg, layout, [layer],
                                              prime=not args.quick or layout in QUICK_PRIMED)
        figures.update(figures_of(results, meter, kv_state_bytes_per_token(meter)))
        figures.update(store_figures(gw.backend.states))
        stats = gw.backend.slot_stats  # both layouts: how often the grammar refused the model's draw
        figures["grammar_refusal_share"] = stats.redrawn / max(1, stats.sampled)
        figures["per_call"] = [{k: v for k, v in c.items() if k != "kv_ids"} | {"layout": e["layout"], "layer": e["layer"]}
                               for layout in LAYOUTS for e in results[layout] for c in e["calls"]]
        gw.close()
    figures["loadavg_1m_at_end"] = os.getloadavg()[0]
    write_figures(out, "sage", figures, hidden=("per_call",))
    return figures


if __name__ == "__main__":
    main()
