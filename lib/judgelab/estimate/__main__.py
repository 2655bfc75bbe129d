"""``python -m judgelab.estimate --profile paper`` (``make estimate PROFILE=paper``).

Backend and judges from the usual settings (:mod:`judgelab.study_models`, ``JUDGELAB_*``); no key,
no network. Prints per notebook and in total calls, tokens, USD (standard, prompt caching, Batch)
and wall time as low / typical / high, written to ``results/estimate/``; ``compare`` checks an
estimate against a ledger CSV. ``--sage-per-category 50,30,20`` (or ``canonical=100,...``) and
``--narrative-pairs 400,200`` (or ``news=400``) price the SAGE layers and the narrative judges of
a run of that size instead, scaled from a few measured units (:func:`judgelab.estimate.sized`).
"""
from __future__ import annotations

import argparse
import sys
import time

import pandas as pd

from judgelab.estimate import NOTEBOOKS, SIZED_NOTEBOOKS, Estimate, estimate, measure, profile_sizes, sized, write
from judgelab.estimate import timing
from judgelab.estimate.timing import Speed, speed_for


def _n(x: float) -> str:
    return f"{x:,.0f}"


def _usd(x: float) -> str:
    return "n/a (model not in prices.csv)" if pd.isna(x) else f"${x:,.2f}"


def _time(s: float) -> str:
    return f"{s / 3600:.1f} h" if s >= 3600 else f"{s / 60:.1f} min"


def _range(row, what: str, fmt) -> str:
    lo, ty, hi = row[f"{what}_low"], row[f"{what}_typical"], row[f"{what}_high"]
    return f"{fmt(ty)} ({fmt(lo)} – {fmt(hi)})"


def render(est: Estimate, seconds: float | None = None) -> str:
    """The printed report: settings, one block per notebook, the total."""
    s = est.settings
    out = [f"Estimate for PROFILE={est.profile}, backend {est.backend}, model {est.model}",
           f"  tokens counted with {est.tokenizer}; concurrency {s['concurrency']}, RPM {s['rpm'] or 'unlimited'}, "
           f"TPM {s['tpm'] or 'unlimited'}; nothing was sent to any model",
           "  figures: typical (low – high); low = minimal replies / shortest paths, high = every reply at max_tokens,"
           " schema-capped conversations, longest paths"]
    if s.get("batch_mode"):
        out.append("  batch mode is on (JUDGELAB_BATCH): the run pays the 'USD batch' line; each SAGE round and each "
                   "judge notebook waits for its batch (up to 24 h each), which the wall time below does not include")
    if est.backend != "llamacpp":
        waits = est.batch_waits()
        out.append(f"  with Batch (BATCH=1) the whole run waits for {int(waits.sum())} batches one after another ("
                   + ", ".join(f"{nb}: {n}" for nb, n in waits.items())
                   + f"; a conversation's next call waits for the batch before it, notebooks run one at a time): "
                   f"at most {est.batch_bound_h():,.0f} h ({est.batch_bound_h() / 24:.0f} days) if every batch takes "
                   f"its {timing.BATCH_WINDOW_H:.0f} h window; usually far less, but no sooner than the slowest batch")
    if s.get("reasoning_model"):
        out.append("  reasoning model: budgets as the gateway sends them (the profile's + the reasoning allowance, "
                   "judgelab.gateway.reasoning); typical output adds an assumed reasoning spend at the effort in force "
                   "(judgelab.estimate.pricing.TYPICAL_REASONING); high = every budget spent")
    rows = list(est.summary.iterrows()) + [(None, pd.Series({**est.total().to_dict(), "notebook": "total", "what": ""}))]
    for _, r in rows:
        judge = f"  [{r['model']}]" if r["notebook"] != "total" else ""
        head = f"\n{r['notebook']}  {r['what']}{judge}".rstrip()
        out.append(head)
        if r["notebook"] != "total":
            out.append(f"    inputs: {est.notes.get(r['notebook'], '')}")
        out.append(f"    calls {_n(r['calls'])}; first-round input tokens {_n(r['first_round_input'])}")
        out.append(f"    input tokens  {_range(r, 'input', _n)}; cached {_range(r, 'cached', _n)}")
        out.append(f"    output tokens {_range(r, 'output', _n)}")
        out.append(f"    USD standard  {_range(r, 'usd_standard', _usd)}")
        out.append(f"    USD cached    {_range(r, 'usd_cached', _usd)}   (prompt caching)")
        out.append(f"    USD batch     {_range(r, 'usd_batch', _usd)}   (Batch API)")
        out.append(f"    wall time     {_range(r, 'wall_s', _time)}")
    if est.backend != "llamacpp":
        out.append("\n" + est.budget_advice())
    for w in est.warnings:
        out.append(f"\nWARNING {w}")
    if seconds is not None:
        out.append(f"\nestimate computed in {seconds:.0f} s")
    return "\n".join(out)


def parse_sizes(text: str | None, names: list[str], what: str) -> dict[str, int] | None:
    """``"50,30,20"`` (in the order of ``names``) or ``"canonical=50,llm=20"`` as ``{name: count}``."""
    if not text:
        return None
    parts = [p.strip() for p in text.split(",") if p.strip()]
    try:
        if all("=" in p for p in parts):
            return {k.strip(): int(v) for k, v in (p.split("=", 1) for p in parts)}
        if len(parts) > len(names):
            raise ValueError(f"{len(parts)} counts for {len(names)} {what} ({', '.join(names)})")
        return {n: int(v) for n, v in zip(names, parts)}
    except ValueError as exc:
        raise SystemExit(f"--{what.replace(' ', '-')} {text!r}: {exc}") from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m judgelab.estimate", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command")
    ap.add_argument("--profile", default="demo")
    ap.add_argument("--backend", default=None)
    ap.add_argument("--model", default=None)
    ap.add_argument("--notebooks", default=",".join(NOTEBOOKS), help="comma-separated notebook numbers")
    ap.add_argument("--overhead-s", type=float, default=None, help="seconds per request (timing assumption)")
    ap.add_argument("--prefill-tps", type=float, default=None, help="prompt tokens per second")
    ap.add_argument("--decode-tps", type=float, default=None, help="output tokens per second")
    ap.add_argument("--speed-from", default=None, metavar="LEDGER_CSV",
                    help="fit the three speeds to a ledger of this machine and backend (compare.speed_from_ledger)")
    ap.add_argument("--sage-per-category", default=None, help="stories per category of a sized run: 50,30,20")
    ap.add_argument("--narrative-pairs", default=None, help="endpoint pairs per collection of a sized run: 400,200")
    cmp = sub.add_parser("compare", help="compare an estimate CSV of calls with a ledger CSV")
    cmp.add_argument("calls_csv")
    cmp.add_argument("ledger_csv")
    args = ap.parse_args(argv)
    if args.command == "compare":
        from judgelab.estimate.compare import compare_ledger

        table = compare_ledger(pd.read_csv(args.calls_csv), pd.read_csv(args.ledger_csv))
        print(table.to_string(index=False))
        return 0
    t0 = time.perf_counter()
    base = None
    if args.speed_from:
        from judgelab.estimate.compare import speed_from_ledger

        base = speed_from_ledger(pd.read_csv(args.speed_from))
    elif any(v is not None for v in (args.overhead_s, args.prefill_tps, args.decode_tps)):
        from judgelab.gateway.settings import resolve

        d = speed_for(resolve(backend=args.backend, cache_path="/dev/null").backend)
        base = Speed(args.overhead_s if args.overhead_s is not None else d.overhead_s,
                     args.prefill_tps or d.prefill_tps, args.decode_tps or d.decode_tps)
    if args.sage_per_category or args.narrative_pairs:
        own = profile_sizes(args.profile)
        sizes = (parse_sizes(args.sage_per_category, list(own["sage"]), "sage per category"),
                 parse_sizes(args.narrative_pairs, list(own["narrative"]), "narrative pairs"))
        est = sized(measure(args.profile, args.backend, args.model, speed=base, progress=True), *sizes)
        print(f"sized run (notebooks {', '.join(SIZED_NOTEBOOKS)} scaled, the others at the profile's design): "
              + ", ".join(f"{k} {v}" for k, v in est.settings["sizes"].items()))
    else:
        est = estimate(args.profile, args.backend, args.model, notebooks=tuple(args.notebooks.split(",")), speed=base,
                       progress=True)
    paths = write(est)
    calls_path = paths[0].with_name(paths[0].stem + "_calls.csv")
    est.calls.to_csv(calls_path, index=False)  # what `compare` reads
    print(render(est, time.perf_counter() - t0))
    print(f"\nwritten: {paths[0]}\n         {paths[1]}\n         {calls_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
