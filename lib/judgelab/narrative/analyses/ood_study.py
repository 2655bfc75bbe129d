"""The out-of-distribution study end to end (paper 002, section 5.7, and two families beyond it).

:func:`run_ood_study` chains, in this order:

1. mixed narratives on the joint news + VisPub collection (alternating and random mixed,
   :mod:`judgelab.narrative.analyses.ood_narratives`), lengths drawn from notebook 08's
   max-capacity paths, coherence read on the joint landscape;
2. perturbed narratives (shuffled, off-topic) of notebook 09's judged max-capacity paths with three
   or more documents, coherence read on the collection's own landscape, so that each can be set
   against its original;
3. the judges on all of them, with notebook 09's agents (:func:`ood_agents`) unless K is given;
   mixed narratives are introduced as "news articles and scientific articles";
4. per-narrative score summaries (:func:`judgelab.narrative.judges.scores.narrative_scores`) beside
   notebook 09's in-distribution narratives, then the statistics by kind
   (:mod:`judgelab.narrative.analyses.ood_tests`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from judgelab.narrative.analyses import ood_narratives as on
from judgelab.narrative.analyses.joint_collection import JointCollection
from judgelab.narrative.analyses.ood_tests import kind_correlations, kind_summary, kind_tests
from judgelab.narrative.judges.scores import NARRATIVE_KEYS, judged_paths, narrative_scores

LONG_COLUMNS = ["kind", "narrative_id", "collection", "base_pair_id", "length", "min_coherence",
                "mean_coherence", "mode", "score_mean", "score_sd", "n_agents"]
"""One row per narrative and mode, in-distribution and generated alike."""

KINDS: tuple[str, ...] = on.IN_DISTRIBUTION_KINDS + on.OOD_KINDS + on.PERTURBATION_KINDS


def ood_agents(scores: pd.DataFrame, k: int | None = None, default_seed: int = 0) -> tuple[int | None, int]:
    """The agents of the OOD judges: ``(K, base seed)``.

    K: ``k`` when given; else notebook 09's K when it used one K for every collection; else None
    (the paper's K per collection, :func:`judgelab.narrative.settings.k_for`). The seed is
    notebook 09's base seed (its smallest agent seed), ``default_seed`` when 09 judged nothing. A
    perturbed narrative is thus judged by the same agents as its original.
    """
    seed = int(scores["seed"].min()) if len(scores) else int(default_seed)
    if k is not None:
        return int(k), seed
    ks = set(scores.groupby("collection")["agent"].nunique().tolist())
    return (ks.pop() if len(ks) == 1 else None), seed


def judged_narratives(narratives: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """Generated narratives (:data:`ood_narratives.NARRATIVE_COLUMNS` plus coherence) joined to the
    score summary of their judge rows (``method`` = kind, ``pair_id`` = "<kind>-<narrative_id>",
    as :func:`ood_narratives.judge_frame` made them). Columns: :data:`LONG_COLUMNS` + n_failed."""
    s = scores.assign(kind=scores["method"],
                      narrative_id=scores["pair_id"].astype(str).str.rsplit("-", n=1).str[-1].astype(int))
    summary = narrative_scores(s, keys=("kind", "narrative_id", "collection", "mode"))
    cols = ["kind", "narrative_id", "collection", "base_pair_id", "length", "min_coherence", "mean_coherence"]
    return narratives[cols].merge(summary, on=["kind", "narrative_id", "collection"], how="inner")


def in_distribution_long(judged: pd.DataFrame) -> pd.DataFrame:
    """Notebook 09's judged paths (:func:`judgelab.narrative.judges.scores.judged_paths`) in the OOD
    layout: kind = method (maxcap / random), base_pair_id = narrative_id = pair_id."""
    out = judged.assign(kind=judged["method"], base_pair_id=judged["pair_id"], narrative_id=judged["pair_id"])
    return out[LONG_COLUMNS]


def mixed_narratives(joint: JointCollection, lengths: Sequence[int], n: int, seed: int) -> pd.DataFrame:
    """``n`` alternating (seed) and ``n`` random mixed (seed + 1) narratives on the joint
    collection, with their coherence on the joint landscape and their titles."""
    mixed = pd.concat([on.alternating_narratives(joint.collection_of, n, lengths, seed),
                       on.random_mixed_narratives(joint.collection_of, n, lengths, seed + 1)], ignore_index=True)
    mixed = on.add_coherence(mixed, lambda _c: joint.coherence)
    mixed["titles"] = on.titles_for(mixed, {}, joint)
    return mixed


def perturbed_narratives(originals: pd.DataFrame, coherence_by_collection: Mapping[str, np.ndarray],
                         titles_by_collection: Mapping[str, Sequence[str]], n: int | None, seed: int,
                         quantile: float = 0.1) -> pd.DataFrame:
    """Shuffled and off-topic versions (up to ``n`` of each) of the ``originals`` paths, with
    their coherence on the collection's own landscape and their titles."""
    perturbed = pd.concat([on.shuffled_narratives(originals, seed, n),
                           on.off_topic_narratives(originals, dict(coherence_by_collection), seed, n, quantile)],
                          ignore_index=True)
    perturbed = on.add_coherence(perturbed, lambda c: coherence_by_collection[c])
    perturbed["titles"] = on.titles_for(perturbed, titles_by_collection)
    return perturbed


@dataclass
class OODStudy:
    """What :func:`run_ood_study` made: the generated ``narratives`` (with coherence and titles),
    the judges' raw rows, ``long`` (in-distribution + generated narratives, one row per narrative
    and mode, :data:`LONG_COLUMNS`), and the statistics by kind: ``summary``
    (:func:`ood_tests.kind_summary` by kind, collection, mode), ``tests`` and ``correlations``."""

    narratives: pd.DataFrame
    raw_scores: pd.DataFrame
    long: pd.DataFrame
    summary: pd.DataFrame
    tests: pd.DataFrame
    correlations: pd.DataFrame
    k: int | None
    seed: int

    @property
    def kinds(self) -> list[str]:
        """The narrative kinds present, in-distribution first."""
        return [k for k in KINDS if k in set(self.long["kind"])]


def run_ood_study(gw, joint: JointCollection, paths: pd.DataFrame, scores: pd.DataFrame,
                  coherence_by_collection: Mapping[str, np.ndarray],
                  titles_by_collection: Mapping[str, Sequence[str]], *, n_ood: int, n_perturbed: int | None,
                  modes: Sequence[str], k: int | None, seed: int, off_topic_quantile: float = 0.1,
                  max_tokens: int | Mapping[str, int] = 256, reasoning_chars: int = 300,
                  profile: str = "demo") -> OODStudy:
    """Generate, judge and compare out-of-distribution and perturbed narratives (steps 1–4 of the
    module docstring).

    ``paths``: notebook 08's ``narr_paths``; ``scores``: notebook 09's ``narr_judge_scores``;
    ``coherence_by_collection`` / ``titles_by_collection``: each collection's dense coherence
    matrix and titles by document index (notebook 07); ``modes``: the judge modes for the
    generated narratives (the in-distribution rows are restricted to them too).
    """
    from judgelab.narrative.judges.run import run_judges

    lengths = paths.loc[paths["method"] == "maxcap", "length"].to_numpy()
    mixed = mixed_narratives(joint, lengths, n_ood, seed)
    judged_keys = scores[list(NARRATIVE_KEYS)].drop_duplicates()
    originals = paths.merge(judged_keys, on=list(NARRATIVE_KEYS))
    originals = originals[originals["method"] == "maxcap"]
    perturbed = perturbed_narratives(originals, coherence_by_collection, titles_by_collection, n_perturbed, seed,
                                     off_topic_quantile)
    narratives = pd.concat([mixed, perturbed], ignore_index=True)

    k_ood, judge_seed = ood_agents(scores, k, default_seed=seed)
    raw = run_judges(gw, on.judge_frame(narratives), modes=modes, k=k_ood, seed=judge_seed, max_tokens=max_tokens,
                     reasoning_chars=reasoning_chars, wording=on.OOD_WORDING, profile=profile)
    generated = judged_narratives(narratives, raw)

    in_dist = in_distribution_long(judged_paths(narrative_scores(scores), paths))
    in_dist = in_dist[in_dist["mode"].isin(modes)]
    long = pd.concat([in_dist, generated[LONG_COLUMNS]], ignore_index=True)
    own = in_dist[in_dist["kind"] == "maxcap"].rename(columns={"base_pair_id": "pair_id"})
    return OODStudy(
        narratives=narratives, raw_scores=raw, long=long,
        summary=kind_summary(long, by=("kind", "collection", "mode")),
        tests=kind_tests(generated, own), correlations=kind_correlations(generated),
        k=k_ood, seed=judge_seed,
    )
