"""What notebook 12 looks at: the stories and narratives the earlier notebooks judged, chosen with
their own code so that every unperturbed request is the one they sent.

"""
from __future__ import annotations

from typing import Callable, Sequence

import pandas as pd

from judgelab import config
from judgelab.sage.protocol import leak_check, runner
from judgelab.sage.protocol.evaluation import EvalConfig


def sage_stories(corpus: pd.DataFrame, profile: config.Config | str) -> pd.DataFrame:
    """The stories notebooks 02-04 evaluate in the run's configuration ``profile`` (:func:`judgelab.config.of`)."""
    cfg = config.of(profile).knobs("sage")
    return runner.select_stories(corpus, cfg["per_category"], cfg["selection_seed"])


def sage_items(corpus: pd.DataFrame, stories: pd.DataFrame, layer: str, profile: config.Config | str,
               modes: Sequence[str], count_tokens: Callable[[str], int] | None):
    """(items, EvalConfig) of ``stories`` x ``modes`` for ``layer``, prepared as ``run_layer`` does
    with the run's configuration ``profile`` (:func:`judgelab.config.of`)."""
    cfg = config.of(profile).knobs("sage")
    surnames = leak_check.distinctive_surnames(zip(corpus["author"], corpus["text"]))
    items = runner.build_items(stories, layer, modes, cfg["max_text_tokens"], cfg["context_policy"],
                               mask_title_in_body=bool(cfg.get("mask_title_in_body", True)), surnames=surnames,
                               count_tokens=count_tokens)
    return items, EvalConfig.from_settings(cfg)


def planted_stories(stories: pd.DataFrame, per_category: dict[str, int]) -> pd.DataFrame:
    """The first ``per_category[c]`` stories of each category, in ``stories``' order."""
    parts = [stories[stories["category"] == c].head(int(n)) for c, n in per_category.items() if int(n) > 0]
    return pd.concat(parts).reset_index(drop=True) if parts else stories.head(0)


def planted_items(corpus: pd.DataFrame, stories: pd.DataFrame, knobs: dict, profile: config.Config | str,
                  count_tokens: Callable[[str], int] | None):
    """(items, EvalConfig) of the planted and length studies: ``knobs["planted_per_category"]``
    stories of ``stories`` on the planted layer, content mode."""
    subset = planted_stories(stories, knobs["planted_per_category"])
    return sage_items(corpus, subset, knobs["planted_layer"], profile, ("content",), count_tokens)


def judged_narratives(all_paths: pd.DataFrame, judge_knobs: dict) -> pd.DataFrame:
    """The narratives notebook 09 judged (``select_pairs`` with its knobs)."""
    from judgelab.narrative.judges import run as judges

    return judges.select_pairs(all_paths, judge_knobs["n_pairs"], judge_knobs["seed"])


def planted_paths(all_paths: pd.DataFrame, judge_knobs: dict, n_pairs: int, methods: Sequence[str]) -> pd.DataFrame:
    """Notebook 09's narratives, the first ``n_pairs`` pairs per collection, only ``methods``."""
    chosen = judged_narratives(all_paths, judge_knobs)
    keep = []
    for _, g in chosen.groupby("collection", sort=True):
        pairs = list(dict.fromkeys(g["pair_id"]))[: int(n_pairs)]
        keep.append(g[g["pair_id"].isin(pairs) & g["method"].isin(list(methods))])
    return pd.concat(keep).reset_index(drop=True) if keep else chosen.head(0)
