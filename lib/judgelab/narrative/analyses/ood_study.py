"""The out-of-distribution study end to end (the Narrative paper, section 5.7, and two families beyond it).

:func:`run_ood_study`: mixed narratives on the joint news + VisPub collection (coherence on the
joint landscape, lengths from notebook 08's max-capacity paths); perturbed copies of notebook 09's
judged max-capacity paths (coherence on their own landscape, so each is set against its
original); the judges on all of them with notebook 09's agents (:func:`ood_agents`); the
statistics by kind (:mod:`judgelab.narrative.analyses.ood_tests`).
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
    """``(K, base seed)`` of the OOD judges, notebook 09's so that a perturbed narrative is judged
    by the same agents as its original: K is ``k``, else 09's K when one for every collection,
    else None (the paper's K per collection); the seed is 09's smallest agent seed."""
    seed = int(scores["seed"].min()) if len(scores) else int(default_seed)
    if k is not None:
        return int(k), seed
    ks = set(scores.groupby("collection")["agent"].nunique().tolist())
    return (ks.pop() if len(ks) == 1 else None), seed


def judged_narratives(narratives: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """Generated narratives joined to the score summary of their judge rows (keyed as
    :func:`ood_narratives.judge_frame` made them). Columns: :data:`LONG_COLUMNS` + n_failed."""
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
    """What :func:`run_ood_study` made: the generated ``narratives``, the judges' raw rows,
    ``long`` (in-distribution + generated, :data:`LONG_COLUMNS`) and the statistics by kind."""

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
    """Generate, judge and compare out-of-distribution and perturbed narratives (module doc) from
    notebook 08's ``paths``, 09's ``scores`` and 07's coherence matrices and titles; the
    in-distribution rows are restricted to ``modes`` too."""
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
