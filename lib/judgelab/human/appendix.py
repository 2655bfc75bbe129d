"""The steps of the appendix notebook 11 (judges against people), in the order it calls them:
the human ratings with derived per-rater scores (Confederacy ``overall`` = mean of the 10 rubric
items; Art or Artifice ``tests_passed`` = number of the 14 TTCW tests passed, and the share passed
per Torrance dimension, ``dim_<name>``), the human ceiling, the stories judged, the judges, the
correlations with the ceiling, per-source ranks and the cost per judge.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from judgelab import params
from judgelab.human import DATASETS, TIDY_COLUMNS, artifice, confederacy, holistic
from judgelab.human.compare import CRITERION_MAP, CriterionMap, judge_vs_human, ranking_agreement, source_rankings
from judgelab.human.reliability import add_overall, reliability_table

STRATEGIES: tuple[str, ...] = ("shortest", "random")

OVERALL = {"confederacy": ("overall", "mean"), "artifice": ("tests_passed", "sum")}
"""Derived overall criterion per data set: (name, aggregation over the criteria of one rater)."""


def check_datasets(datasets: Sequence[str] | str | None) -> list[str]:
    """``None`` -> both; a comma-separated string or a list -> validated list."""
    chosen = params.as_list(datasets, name="DATASETS")
    if chosen is None:
        return list(DATASETS)
    bad = [d for d in chosen if d not in DATASETS]
    if bad:
        raise ValueError(f"unknown data set(s) {bad}; choose from {', '.join(DATASETS)}")
    return chosen


def stories_per_dataset(knobs: dict[str, Any], datasets: Sequence[str], n_stories: Any = None) -> dict[str, int]:
    """Stories per data set: ``n_stories`` (N_STORIES), else the profile's ``n_stories``."""
    n = params.as_optional_int(n_stories, name="N_STORIES")
    return {ds: n if n is not None else int(knobs["n_stories"][ds]) for ds in datasets}


def run_settings(profile: str, knobs: dict[str, Any], n_stories: dict[str, int]) -> dict[str, Any]:
    """What this run uses: the profile, the stories per data set and the other knobs."""
    return {"profile": profile, "n_stories": n_stories, **{k: v for k, v in knobs.items() if k != "n_stories"}}


SMALL_MODEL_NOTE = (
    "> **Expected result with the bundled SmolLM2-135M: correlations near zero.** A 135M model "
    "cannot judge stories; its scores are close to random. What this run shows is that the "
    "pipeline (loaders, judges, statistics, figure) works end to end — not how well LLM judges "
    "agree with people. Point BACKEND/MODEL at a capable model for that.")


def judge_note(gateway) -> str:
    """:data:`SMALL_MODEL_NOTE` when the gateway runs the bundled 135M model, else ``""``."""
    return SMALL_MODEL_NOTE if gateway.is_embedded_small_model else ""


def artifice_dimension_scores(verdicts: pd.DataFrame, tests: pd.DataFrame) -> pd.DataFrame:
    """Per (story, expert): share of tests passed per Torrance dimension (``dim_<name>``)."""
    dims = tests.set_index("criterion")["torrance_dimension"]
    v = verdicts.assign(dimension=verdicts["criterion"].map(dims))
    out = (v.groupby(["dataset", "story", "source", "rater", "dimension"], sort=False)["value"].mean()
           .reset_index())
    out["criterion"] = "dim_" + out["dimension"].str.lower()
    return out[list(TIDY_COLUMNS)]


def load_human(datasets: Sequence[str] | str | None = None) -> pd.DataFrame:
    """The human ratings of ``datasets`` (default both) with the derived criteria appended."""
    parts = []
    for ds in check_datasets(datasets):
        if ds == "confederacy":
            tidy = confederacy.load_ratings()
        else:
            tidy = artifice.load_verdicts()
            tidy = pd.concat([tidy, artifice_dimension_scores(tidy, artifice.load_tests())], ignore_index=True)
        name, how = OVERALL[ds]
        base = tidy[~tidy["criterion"].str.startswith("dim_")]
        parts.append(pd.concat([add_overall(base, name, how),
                                tidy[tidy["criterion"].str.startswith("dim_")]], ignore_index=True))
    return pd.concat(parts, ignore_index=True)


def alpha_level(dataset: str, criterion: str) -> str:
    """Krippendorff's alpha level: ``nominal`` for Yes/No TTCW tests, else ``interval``."""
    if dataset == "artifice" and criterion != OVERALL["artifice"][0] and not criterion.startswith("dim_"):
        return "nominal"
    return "interval"


def human_ceiling(tidy: pd.DataFrame) -> pd.DataFrame:
    """:func:`reliability_table` per (dataset, criterion) with the right alpha level for each."""
    rows = []
    for (ds, crit), sub in tidy.groupby(["dataset", "criterion"], sort=False):
        rows.append(reliability_table(sub, level=alpha_level(ds, crit)))
    return pd.concat(rows, ignore_index=True)


def human_overview(tidy: pd.DataFrame) -> pd.DataFrame:
    """Per data set: stories, sources, raters, criteria and single ratings in the tidy table."""
    return (tidy.groupby("dataset")
            .agg(stories=("story", "nunique"), sources=("source", "nunique"), raters=("rater", "nunique"),
                 criteria=("criterion", "nunique"), ratings=("value", "size")))


def select_stories(stories: pd.DataFrame, n: int, strategy: str = "random", seed: int = 0) -> pd.DataFrame:
    """``n`` stories taken from the sources in turn (so ``n`` >= the sources covers each), in the
    order taken: within a source shortest first (``shortest``: cheap smoke runs; the source whose
    next story is shortest goes first) or a seeded shuffle (``random``, sources in a seeded order).
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, not {strategy!r}")
    missing = [c for c in ("story", "source", "words") if c not in stories.columns]
    if missing:
        raise ValueError(f"stories: missing column(s) {missing}")
    if n <= 0:
        return stories.iloc[0:0].copy()
    rng = np.random.default_rng(seed)
    queues = {}
    for source, sub in stories.groupby("source", sort=True):
        if strategy == "shortest":
            sub = sub.sort_values(["words", "story"])
        else:
            sub = sub.sort_values("story").iloc[rng.permutation(len(sub))]
        queues[source] = list(sub.index)
    order = sorted(queues)
    if strategy == "random":
        order = [order[i] for i in rng.permutation(len(order))]
    taken: list = []
    while len(taken) < n and any(queues.values()):
        live = [s for s in order if queues[s]]
        if strategy == "shortest":
            live.sort(key=lambda s: (stories.at[queues[s][0], "words"], s))
        for s in live:
            if len(taken) == n:
                break
            taken.append(queues[s].pop(0))
    return stories.loc[taken].reset_index(drop=True)


def stories_to_judge(dataset: str, n: int, selection: str = "random", seed: int = 0) -> pd.DataFrame:
    """``n`` rated stories of ``dataset`` with text (columns story, source, words, text, ...)."""
    loader: Callable[[], pd.DataFrame] = {"confederacy": confederacy.load_stories,
                                          "artifice": artifice.load_stories}[dataset]
    return select_stories(loader(), n, selection, seed).assign(dataset=dataset)


def stories_for(n_stories: dict[str, int], knobs: dict[str, Any]) -> pd.DataFrame:
    """:func:`stories_to_judge` of every data set with ``n_stories[ds] > 0``, one table."""
    parts = [stories_to_judge(ds, n, knobs["selection"], knobs["selection_seed"])
             for ds, n in n_stories.items() if n > 0]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["dataset", "story", "source"])


def run_holistic(gateway, stories: pd.DataFrame, knobs: dict[str, Any], profile: str) -> pd.DataFrame:
    """The holistic judge over every data set in ``stories`` (column ``dataset``)."""
    parts = [
        holistic.judge_stories(gateway, sub, dataset=ds, max_tokens=knobs["holistic_max_tokens"],
                               temperature=knobs["temperature"], seed=knobs["seed"],
                               reason_chars=knobs["holistic_reason_chars"],
                               reasoning_effort=knobs.get("holistic_reasoning_effort"), profile=profile)
        for ds, sub in stories.groupby("dataset", sort=False)
    ]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def sage_corpus(stories: pd.DataFrame) -> pd.DataFrame:
    """The stories in the shape :func:`judgelab.sage.protocol.runner.run_layer` reads. Category
    ``llm`` for all (it only labels SAGE's rows here); no author (no published work a judge could
    recognise); Art-or-Artifice stories keep the title of the New Yorker story they were written
    from, which content-limit mode strips and masks."""
    title = stories["title"] if "title" in stories else pd.Series("", index=stories.index)
    return pd.DataFrame({"story_id": stories["story"], "category": "llm", "tier": "",
                         "title": title.fillna("").astype(str), "author": "", "text": stories["text"],
                         "in_range": True})


def run_sage(gateway, stories: pd.DataFrame, knobs: dict[str, Any], profile, enabled: Any = True):
    """SAGE's ``knobs["sage_layer"]`` in ``knobs["sage_mode"]`` over (the first
    ``knobs["sage_max_stories"]`` of) ``stories`` with SAGE's own knobs for ``profile``, a
    ``dataset`` column added; the runner's :class:`SageRun`, or None when not ``enabled``."""
    from judgelab.sage.protocol import runner

    if not params.as_bool(enabled, name="RUN_SAGE"):
        return None

    if knobs.get("sage_max_stories") is not None:
        stories = stories.head(int(knobs["sage_max_stories"]))
    run = runner.run_layer(gateway, sage_corpus(stories), knobs["sage_layer"], profile,
                           stories=list(stories["story"]), modes=[knobs["sage_mode"]],
                           desc=f"SAGE {knobs['sage_layer']} (human-rated)")
    which = dict(zip(stories["story"], stories["dataset"]))
    run.rows.insert(0, "dataset", run.rows["story_id"].map(which))
    run.summary.insert(0, "dataset", run.summary["story_id"].map(which))
    return run


def sage_scores(summary: pd.DataFrame, rows: pd.DataFrame, layer: str = "L5", final_round: int = 5) -> pd.DataFrame:
    """Judge scores from a SAGE run, one per (story, measure), NaN where the evaluation failed:
    ``sage_<layer>_overall`` is the summary's ``overall_score``, ``sage_<layer>_<dimension>`` the
    evaluator's score in round ``final_round`` (the round the overall is the mean of)."""
    prefix = f"sage_{layer.lower()}"
    out = [pd.DataFrame({"dataset": summary["dataset"], "story": summary["story_id"],
                         "measure": f"{prefix}_overall", "score": summary["overall_score"].astype(float)})]
    dims = list(dict.fromkeys(rows["dimension"]))
    final = rows[(rows["track"] == "evaluator") & (rows["round"] == final_round)]
    final = final.set_index(["story_id", "dimension"])["score"]
    for dim in dims:
        out.append(pd.DataFrame({
            "dataset": summary["dataset"], "story": summary["story_id"], "measure": f"{prefix}_{dim.lower()}",
            "score": [float(final.get((s, dim), np.nan)) for s in summary["story_id"]],
        }))
    return pd.concat(out, ignore_index=True)


def judge_scores(holistic_rows: pd.DataFrame, sage: pd.DataFrame | None = None) -> pd.DataFrame:
    """One table (dataset, story, measure, score) of every judge measure."""
    parts = [holistic_rows[["dataset", "story", "measure", "score"]]]
    if sage is not None and len(sage):
        parts.append(sage[["dataset", "story", "measure", "score"]])
    return pd.concat(parts, ignore_index=True)


def sage_overview(run) -> pd.DataFrame:
    """The SAGE run's summary, the columns a reader checks first (empty when SAGE did not run)."""
    cols = ["dataset", "story_id", "overall_score", "validator_blind_overall", "status", "n_failures", "n_repairs"]
    return run.summary[cols] if run is not None else pd.DataFrame(columns=cols)


def collect_scores(holistic_rows: pd.DataFrame, sage_run=None, layer: str = "L5") -> pd.DataFrame:
    """:func:`judge_scores` of the holistic judge and, when it ran, the SAGE run (:func:`sage_scores`)."""
    sage = sage_scores(sage_run.summary, sage_run.rows, layer) if sage_run is not None else None
    return judge_scores(holistic_rows, sage)


def scores_wide(scores: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, story), one column per judge measure (NaN where a judge gave none)."""
    return scores.pivot_table(index=["dataset", "story"], columns="measure", values="score", dropna=False)


def with_provenance(df: pd.DataFrame, *, backend: str, model: str, profile: str) -> pd.DataFrame:
    """``df`` with the judge's backend and model and the profile as its last columns."""
    return df.assign(backend=backend, model=model, profile=profile)


def comparison(scores: pd.DataFrame, tidy: pd.DataFrame, ceiling: pd.DataFrame, knobs: dict[str, Any],
               *, backend: str, model: str, profile: str,
               mapping: Sequence[CriterionMap] = CRITERION_MAP) -> pd.DataFrame:
    """:func:`judge_vs_human` with a readable ``status`` and the run's provenance columns."""
    tab = judge_vs_human(scores, tidy, ceiling, mapping, n_boot=knobs["n_boot"], ci=knobs["ci"],
                         seed=knobs["boot_seed"])
    tab = with_provenance(tab, backend=backend, model=model, profile=profile)
    tab.insert(3, "status", correlation_status(tab))
    return tab


def rankings(scores: pd.DataFrame, tidy: pd.DataFrame, measures: Sequence[str] = ("holistic", "sage_l5_overall")
             ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-source rankings (people vs judge) per data set's overall, and their agreement."""
    ranks, agree = [], []
    for ds in scores["dataset"].unique():
        crit = OVERALL[ds][0]
        for measure in measures:
            if not ((scores["dataset"] == ds) & (scores["measure"] == measure)).any():
                continue
            rk = source_rankings(scores, tidy, ds, measure, crit)
            ranks.append(rk)
            agree.append({"dataset": ds, "measure": measure, "criterion": crit, **ranking_agreement(rk)})
    if not ranks:
        return pd.DataFrame(), pd.DataFrame()
    return pd.concat(ranks, ignore_index=True), pd.DataFrame(agree)


def published_judges_vs_experts(human: pd.DataFrame, knobs: dict[str, Any],
                                judges: Sequence[str] | None = None) -> pd.DataFrame:
    """The Art-or-Artifice study's own published LLM judges against its experts (no model called):
    per judge, agreement with the expert majority over (story, test) pairs (share equal, Cohen's
    kappa, :func:`sklearn.metrics.cohen_kappa_score`) and the rank correlation of tests passed with
    the experts' mean (:func:`judgelab.human.compare.bootstrap_rank_correlation`; stories with an
    unparsed verdict left out)."""
    from sklearn.metrics import cohen_kappa_score

    from judgelab.human.compare import bootstrap_rank_correlation

    experts = human[(human["dataset"] == "artifice")]
    tests = experts[~experts["criterion"].str.startswith("dim_") & (experts["criterion"] != "tests_passed")]
    majority = (tests.groupby(["story", "criterion"])["value"].mean() > 0.5).astype(float).rename("majority")
    passed = experts[experts["criterion"] == "tests_passed"].groupby("story")["value"].mean()
    rows = []
    for name in judges or artifice.published_judges():
        j = artifice.load_published_judge(name).set_index(["story", "criterion"])["value"]
        both = pd.concat([j.rename("judge"), majority], axis=1, join="inner")
        ok = both.dropna()
        n_tests = tests["criterion"].nunique()
        per_story = j.groupby(level="story").agg(["sum", "count"])
        complete = per_story[per_story["count"] == n_tests]["sum"]
        common = complete.index.intersection(passed.index)
        corr = bootstrap_rank_correlation(complete[common], passed[common], n_boot=knobs["n_boot"],
                                          ci=knobs["ci"], seed=knobs["boot_seed"])
        rows.append({"judge": name, "n_verdicts": int(len(ok)), "n_unparsed": int(both["judge"].isna().sum()),
                     "agreement": float((ok["judge"] == ok["majority"]).mean()),
                     "kappa": float(cohen_kappa_score(ok["majority"], ok["judge"])),
                     "judge_yes_rate": float(ok["judge"].mean()), "expert_yes_rate": float(ok["majority"].mean()),
                     **{f"tests_passed_{k}": v for k, v in corr.items()}})
    return pd.DataFrame(rows)


def correlation_status(table: pd.DataFrame) -> pd.Series:
    """A readable status per comparison row: ``ok`` or why no correlation could be computed."""
    def one(r):
        if r["n"] < 3:
            return f"n={int(r['n'])} < 3 stories: no correlation"
        if np.isnan(r["spearman"]):
            return "a constant side (all scores equal): no correlation"
        return "ok"
    return table.apply(one, axis=1)


def cost_summary(ledger: pd.DataFrame) -> pd.DataFrame:
    """Tokens and latency per study, measure and layer from the gateway's ledger."""
    if ledger.empty:
        return ledger
    keys = [c for c in ("study", "measure", "layer") if c in ledger]
    return ledger.groupby(keys, dropna=False)[["input_tokens", "output_tokens", "latency_s"]].sum()
