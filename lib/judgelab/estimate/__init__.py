"""Cost and time of a run, known before spending: ``python -m judgelab.estimate --profile paper``.

Builds every LLM notebook's requests with the code that sends them (:mod:`~.sage`,
:mod:`~.narrative`, :mod:`~.human`, :mod:`~.behaviour`), counts their tokens with the judge's
tokenizer, bounds what depends on replies not given yet (:mod:`~.counting`), prices and times
the calls (:mod:`~.pricing`, :mod:`~.timing`). No key, no network, no model load. Each notebook is
priced on its study's judge (:func:`judgelab.study_models.resolve_judge`) with the budgets and
efforts the gateway will send it; :attr:`Estimate.warnings` names budgets that cannot hold the
reasoning and designs the judge would refuse. :func:`.compare.compare_ledger` checks an estimate
against a ledger.
"""
from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from judgelab.estimate import pricing, timing
from judgelab.estimate.counting import TokenCounter
from judgelab.gateway.reasoning import REASONING_ALLOWANCE

SUMMARY_COLUMNS = ["notebook", "what", "model", "calls", "first_round_input"] + [
    f"{q}_{b}" for q in ("input", "cached", "output") for b in pricing.BOUNDS] + [
    f"usd_{k}_{b}" for k in ("standard", "cached", "batch") for b in pricing.BOUNDS] + [
    f"wall_s_{b}" for b in pricing.BOUNDS]
NOTEBOOKS = ("02", "03", "04", "09", "10", "11", "12")


@dataclass
class Estimate:
    """An estimate: its settings, every call, the per-notebook summary, and how inputs were known."""

    profile: str
    backend: str
    model: str
    tokenizer: str
    calls: pd.DataFrame
    summary: pd.DataFrame
    notes: dict[str, str] = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    #: the judge model of each notebook, and what would go wrong (budgets, refused designs)
    models: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def total(self) -> pd.Series:
        """The sums over notebooks (``wall_s_*`` too: the notebooks run one after another)."""
        num = self.summary.drop(columns=["notebook", "what", "model"])
        return num.sum(min_count=1)

    def batch_waits(self) -> pd.Series:
        """Per notebook, the batches it waits for one after another in Batch mode (:func:`timing.batch_waits`)."""
        return timing.batch_waits(self.calls)

    def batch_bound_h(self) -> float:
        """The whole run's longest wall time in Batch mode, hours: every sequential batch of every
        notebook (they run one at a time on an API backend) taking the full completion window."""
        return float(self.batch_waits().sum()) * timing.BATCH_WINDOW_H

    def budget_advice(self) -> str:
        """What to budget: the typical figure, and what the high one assumes and where it comes from."""
        tot = self.total()
        ty, hi, lo = tot["usd_standard_typical"], tot["usd_standard_high"], tot["usd_standard_low"]
        if pd.isna(ty) or pd.isna(hi):
            return "Budget: no price for this model in prices.csv, so no figure to budget."
        gap = (self.summary["usd_standard_high"] - self.summary["usd_standard_typical"]).fillna(0)
        top = self.summary.loc[gap.idxmax()] if gap.sum() > 0 else None
        where = (f"; notebook {top['notebook']} ({top['what']}) makes {gap.max() / gap.sum():.0%} of the gap"
                 if top is not None else "")
        reasoning = " and a reasoning model spending its whole allowance" if self.settings.get("reasoning_model") else ""
        return (f"Budget: the typical ${ty:,.2f} (${tot['usd_batch_typical']:,.2f} with Batch) is what this run "
                f"should cost, with replies of the length such judges usually give; ${lo:,.2f} is every reply at its "
                f"shortest. The high ${hi:,.2f} ({hi / ty:.1f}x) is a ceiling, not a forecast: every reply filling "
                f"its max_tokens budget{reasoning}{where}. Budget the typical figure with a margin, and set the "
                f"provider account's spending limit no higher than the high one.")


def _workers(backend: str, concurrency: int, profile_concurrency: int | None) -> int:
    if backend == "llamacpp":
        return 1  # one in-process model, one call at a time
    return int(profile_concurrency or concurrency)


def summarize(calls: pd.DataFrame, settings, speed: timing.Speed, workers_by_notebook: dict[str, int],
              what: dict[str, str]) -> pd.DataFrame:
    """One row per notebook: calls, tokens, USD and wall time at each bound (a sized estimate's
    calls counted ``weight`` times)."""
    rows = []
    for nb, g in calls.groupby("notebook", sort=True):
        w = g["weight"] if "weight" in g else pd.Series(1.0, index=g.index)
        row = {"notebook": nb, "what": what.get(nb, ""), "model": str(g["model"].iloc[0]), "calls": round(w.sum()),
               "first_round_input": round((g["input_low"] * w)[g["first_round"]].sum())}
        for q in ("input", "cached", "output"):
            for b in pricing.BOUNDS:
                row[f"{q}_{b}"] = round((g[f"{q}_{b}"] * w).sum())
        for k in ("standard", "cached", "batch"):
            for b in pricing.BOUNDS:
                row[f"usd_{k}_{b}"] = float((g[f"usd_{k}_{b}"] * w).sum(min_count=1))
        for b in pricing.BOUNDS:
            row[f"wall_s_{b}"] = timing.wall_seconds(g, b, workers_by_notebook[nb], speed, settings.rpm, settings.tpm)
        rows.append(row)
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def _builder(notebook: str):
    """(label, function building the calls) of a narrative or appendix notebook, imported on demand."""
    if notebook == "12":
        from judgelab.estimate import behaviour

        return "judge behaviour: recognition, planted instructions", behaviour.behaviour_calls
    if notebook == "11":
        from judgelab.estimate import human

        return "appendix: holistic judge + SAGE on human-rated stories", human.appendix_calls
    from judgelab.estimate import narrative

    if notebook == "09":
        return "narrative judges", narrative.judge_calls
    return "cost sample + OOD judges", narrative.cost_ood_calls


def _progress(message: str) -> None:
    """One line on stderr while an estimate builds its requests (a paper-size one takes minutes)."""
    print(f"[estimate] {message}", file=sys.stderr, flush=True)


def collect_calls(profile, counter: TokenCounter, notebooks=NOTEBOOKS, sample: int | None = None,
                  progress: bool = False):
    """(every request's row, how each notebook's inputs were known, what each notebook is);
    ``sample``: stories per category and pairs per collection of the notebooks a size scales
    (:data:`SIZED_NOTEBOOKS`); the others are built at the profile's own design (:func:`sized`).
    ``progress``: a line on stderr per notebook, with the seconds it took."""
    from judgelab.estimate import narrative, sage

    parts, notes, what = [], {}, {}
    layers = [lay for lay, nb in sage.NOTEBOOK.items() if nb in notebooks]
    if layers:
        t0 = time.perf_counter()
        parts.append(sage.sage_calls(profile, counter, layers, per_category=sample))
        for lay in layers:
            what[sage.NOTEBOOK[lay]] = f"SAGE {lay}"
            notes[sage.NOTEBOOK[lay]] = ("exact first rounds (runner.build_items + evaluation.evaluate); "
                                         "rounds 2-5 and review bounded by reply size")
        if progress:
            _progress(f"notebooks {', '.join(sage.NOTEBOOK[lay] for lay in layers)} (SAGE {', '.join(layers)}): "
                      f"{len(parts[-1]):,} requests built on {counter.model} in {time.perf_counter() - t0:.0f} s")
    for nb in ("09", "10", "11", "12"):
        if nb in notebooks:
            t0 = time.perf_counter()
            what[nb], build = _builder(nb)
            df, notes[nb] = (narrative.judge_calls(profile, counter, sample) if nb == "09" and sample
                             else build(profile, counter))
            parts.append(df)
            if progress:
                _progress(f"notebook {nb} ({what[nb]}): {len(df):,} requests built on {counter.model} "
                          f"in {time.perf_counter() - t0:.0f} s")
    return pd.concat([p for p in parts if not p.empty], ignore_index=True), notes, what


def judged_calls(profile, backend: str | None, model: str | None, notebooks=NOTEBOOKS,
                 sample: int | None = None, environ=None, progress: bool = False):
    """Every notebook's calls on its study's judge, budgets as sent, costs; notes, labels and
    tokenizers. ``environ``: the variables of the run priced (None: this process's)."""
    from judgelab.study_models import NOTEBOOK_STUDY, resolve_judge

    by_judge: dict = {}
    # a notebook's rows priced on each study's judge: its own study's, and for notebook 12 (SAGE
    # and narrative calls on their own judges, as the notebook sends them) the narrative track's
    shares = [(nb, NOTEBOOK_STUDY[nb], None) for nb in notebooks]
    shares += [(nb, study, track) for nb in notebooks for track, study in SPLIT_TRACKS.get(nb, {}).items()]
    for nb, study, track in shares:
        judge = resolve_judge(study, backend, model, environ=environ)
        by_judge.setdefault((judge.model, judge.reasoning), (judge, []))[1].append((nb, track))
    parts, notes, what, tokenizers = [], {}, {}, {}
    for judge, share in by_judge.values():
        counter = TokenCounter.for_settings(judge.backend, judge.model)
        calls, n, w = collect_calls(profile, counter, tuple(dict.fromkeys(nb for nb, _ in share)), sample, progress)
        calls = _judge_share(calls, share)
        calls = pricing.with_sent_sampling(calls.assign(model=counter.model), judge.backend, counter.model, judge.reasoning)
        parts.append(pricing.add_costs(pricing.add_bounds(calls), counter.model))
        notes.update(n)
        what.update(w)
        tokenizers[counter.model] = counter.tokenizer
    return pd.concat(parts, ignore_index=True), notes, what, tokenizers


#: notebooks whose calls go to more than one study's judge: track -> study (the rest: NOTEBOOK_STUDY's)
SPLIT_TRACKS = {"12": {"planted_narrative": "narrative"}}


def _judge_share(calls: pd.DataFrame, share: list[tuple[str, str | None]]) -> pd.DataFrame:
    """The rows of ``calls`` this judge answers: a split notebook's own tracks, or only ``track``."""
    keep = pd.Series(True, index=calls.index)
    for nb in SPLIT_TRACKS:
        if nb not in set(calls.get("notebook", pd.Series(dtype=str))):
            continue
        rows = calls["notebook"] == nb
        tracks = {t for n, t in share if n == nb and t is not None}
        own = any(n == nb and t is None for n, t in share)
        split = calls["track"].isin(list(SPLIT_TRACKS[nb]))
        mine = (split & calls["track"].isin(list(tracks))) | (~split & own)
        keep &= ~rows | mine
    return calls[keep].reset_index(drop=True)


def design_warnings(calls: pd.DataFrame, backend: str, environ=None) -> list[str]:
    """The narrative notebooks a temperature-rejecting judge would refuse (judgelab.study_models.agent_design)."""
    from judgelab.gateway.reasoning import reasoning_applies
    from judgelab.study_models import agent_design

    if agent_design(environ=environ) != "temperature":
        return []
    out = []
    for nb in ("09", "10"):
        models = calls.loc[calls["notebook"] == nb, "model"].unique()
        if len(models) and reasoning_applies(backend, str(models[0])):
            out.append(f"notebook {nb}: {models[0]} accepts no temperature; the narrative agents' temperature "
                       "design is refused before any call: JUDGELAB_NARRATIVE_MODEL=gpt-4.1 (the paper's) or "
                       "JUDGELAB_NARRATIVE_AGENTS=seed-only")
    return out


def estimate(profile: str, backend: str | None = None, model: str | None = None, *,
             notebooks=NOTEBOOKS, speed: timing.Speed | None = None, sample: int | None = None,
             environ=None, progress: bool = False) -> Estimate:
    """Estimate notebooks' calls for ``profile``, each on its study's judge (``model``: one for
    all); ``sample``: that many stories per category and pairs per collection (:func:`measure`);
    ``environ``: the declared variables of the run priced (None: this process's, read once here);
    ``progress``: a line on stderr as each notebook's requests are built."""
    from judgelab import config, profiles
    from judgelab.gateway.settings import resolve

    profiles.check(profile)
    environ = config.variables(environ)
    cfg = config.resolve(profile, environ=environ)  # the run priced, resolved once: every builder reads it
    s = resolve(backend=backend, model=model, cache_path="/dev/null", progress=False, environ=environ)
    calls, notes, what, tokenizers = judged_calls(cfg, backend, model, notebooks, sample, environ, progress)
    reasoning = bool(calls["reasoning"].any())
    # SAGE and the judges run at their profile's concurrency, else the gateway's
    conc = {"09": cfg.knobs("narrative_judges").get("concurrency")}
    conc.update(dict.fromkeys(("02", "03", "04"), cfg.knobs("sage").get("concurrency")))
    workers = {nb: _workers(s.backend, s.concurrency, conc.get(nb)) for nb in calls["notebook"].unique()}
    speed = speed or timing.speed_for(s.backend)
    summary = summarize(calls, s, speed, workers, what)
    models = {nb: str(m) for nb, m in calls.groupby("notebook")["model"].first().items()}
    settings = {"concurrency": s.concurrency, "workers": workers, "rpm": s.rpm, "tpm": s.tpm,
                "base_url": s.base_url, "reasoning_model": reasoning, "models": models,
                "batch_mode": s.batch,
                "speed": speed.__dict__, "what": what}
    warnings = pricing.budget_warnings(calls) + design_warnings(calls, s.backend, environ)
    label = "+".join(dict.fromkeys(models.values()))
    return Estimate(profile, s.backend, label, "; ".join(f"{m}: {t}" for m, t in tokenizers.items()), calls,
                    summary, notes, settings, models, warnings)


def output_path(est: Estimate, suffix: str = "csv") -> Path:
    """``<output root>/results/estimate/estimate_<profile>_<backend>_<model>.<suffix>``."""
    from judgelab import paths

    safe = "".join(ch if ch.isalnum() or ch in "-._" else "_" for ch in est.model)
    tag = "_sized" if "sizes" in est.settings else ""  # a sized run never overwrites the profile's own estimate
    return paths.output_root() / "results" / "estimate" / f"estimate_{est.profile}{tag}_{est.backend}_{safe}.{suffix}"


def write(est: Estimate) -> tuple[Path, Path]:
    """The summary as CSV (with provenance columns) and the whole estimate's settings as JSON."""
    csv_path = output_path(est, "csv")
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    table = est.summary.assign(profile=est.profile, backend=est.backend, tokenizer=est.tokenizer,
                               inputs=est.summary["notebook"].map(est.notes),
                               source="python -m judgelab.estimate (judgelab.estimate)")
    table.to_csv(csv_path, index=False)
    json_path = output_path(est, "json")
    payload = {"profile": est.profile, "backend": est.backend, "model": est.model, "tokenizer": est.tokenizer,
               "settings": est.settings, "notes": est.notes,
               "typical_reasoning": {str(k): v for k, v in pricing.TYPICAL_REASONING.items()},
               "reasoning_allowance_sent": dict(REASONING_ALLOWANCE), "warnings": est.warnings,
               "per_notebook": json.loads(est.summary.to_json(orient="records")),
               "total": json.loads(est.total().to_json())}
    json_path.write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return csv_path, json_path


# --------------------------------------------------------------------------- sized estimates
# Counting every request of a paper-size run takes minutes, and its calls and tokens grow linearly
# in stories and pairs: a run of another size is priced from a few of each, per unit, multiplied.

#: notebooks whose calls a size scales: the SAGE layers (stories per category) and the narrative
#: judges (pairs per collection). The other LLM notebooks (10 cost sample and OOD narratives, 11
#: the human-rated stories, 12 judge behaviour) have sizes of their own knobs (n_cost_pairs, n_ood,
#: human.n_stories, behaviour.planted_*): a sized estimate prices them at the profile's design, so
#: its total is the whole run's and a larger size never costs less than the profile's own estimate.
SIZED_NOTEBOOKS = ("02", "03", "04", "09")
#: stories per category and endpoint pairs per collection measured (the profile's own first ones)
SAMPLE_UNITS = 3


def measure(profile: str, backend: str | None = None, model: str | None = None, *,
            notebooks=NOTEBOOKS, speed: timing.Speed | None = None, progress: bool = False) -> Estimate:
    """:func:`estimate` of :data:`SAMPLE_UNITS` stories per category and pairs per collection for
    :data:`SIZED_NOTEBOOKS`, the other notebooks at the profile's design."""
    return estimate(profile, backend, model, notebooks=notebooks, speed=speed, sample=SAMPLE_UNITS, progress=progress)


def _unit(calls: pd.DataFrame) -> pd.Series:
    """Each call's sizing group: ``sage:<category>`` (SAGE) or ``narrative:<collection>`` (notebook 09)."""
    sage = calls["study"] == "sage"
    coll = calls["item"].astype(str).str.split(":").str[0]
    return ("sage:" + calls.get("category", pd.Series("", index=calls.index)).astype(str)).where(sage, "narrative:" + coll)


def sized(measured: Estimate, sage_per_category: dict[str, int] | None = None,
          narrative_pairs: dict[str, int] | None = None) -> Estimate:
    """``measured`` (:func:`measure`) scaled to ``sage_per_category`` stories per category and
    ``narrative_pairs`` pairs per collection (unnamed: the profile's own): each sampled call counts
    ``target units / sampled units`` times (``weight``). Bad sizes raise naming the unit."""
    target = {f"{study}:{k}": v for study, units in profile_sizes(measured.profile).items() for k, v in units.items()}
    for prefix, given in (("sage", sage_per_category or {}), ("narrative", narrative_pairs or {})):
        for k, v in given.items():
            if f"{prefix}:{k}" not in target:
                raise ValueError(f"sized estimate: no {prefix} unit {k!r} in profile {measured.profile} "
                                 f"(known: {', '.join(t.split(':', 1)[1] for t in target if t.startswith(prefix))})")
            if int(v) < 0:
                raise ValueError(f"sized estimate: {prefix} {k} = {v}, not a count")
            target[f"{prefix}:{k}"] = int(v)
    calls = measured.calls.copy()
    unit = _unit(calls)
    key = calls["item"].astype(str).str.rsplit(":", n=1).str[0].where(calls["study"] != "sage", calls["item"].astype(str))
    sampled = key.groupby([calls["notebook"], unit]).transform("nunique")
    scaled = calls["notebook"].isin(SIZED_NOTEBOOKS)
    # a notebook a size does not scale counts its calls once (its own design); notebook 12's SAGE
    # calls have categories too, but their number is the planted study's, not the run's stories
    calls["weight"] = (unit.map(target).fillna(0) / sampled).where(scaled, 1.0).to_numpy()
    s = measured.settings
    limits = SimpleNamespace(rpm=s["rpm"], tpm=s["tpm"])
    summary = summarize(calls, limits, timing.Speed(**s["speed"]), s["workers"], s.get("what", {}))
    notes = {nb: (f"sized: {SAMPLE_UNITS} sampled units per category / collection, scaled per unit ({n})"
                  if nb in SIZED_NOTEBOOKS else f"at the profile's design, which the sizes do not change ({n})")
             for nb, n in measured.notes.items()}
    return Estimate(measured.profile, measured.backend, measured.model, measured.tokenizer, calls, summary, notes,
                    {**s, "sizes": target}, measured.models, measured.warnings)


def profile_sizes(profile) -> dict:
    """A profile's own design (``profile``: its name or a resolved configuration,
    :func:`judgelab.config.of`): ``{"sage": stories per category, "narrative": pairs per collection}``."""
    from judgelab import config
    from judgelab.narrative.settings import judge_knobs

    cfg = config.of(profile)
    cap = judge_knobs(cfg)["n_pairs"]
    cols = cfg.knobs("narrative")["collections"]
    return {"sage": dict(cfg.knobs("sage")["per_category"]),
            "narrative": {c: k["n_pairs"] if cap is None else min(k["n_pairs"], cap) for c, k in cols.items()}}
