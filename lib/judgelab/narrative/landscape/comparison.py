"""The critical coherence beside the authors' value (DESIGN.md, principle 7).

The paper does not print the news collection's critical coherence; the authors' news notebook
does (:mod:`judgelab.narrative.landscape.paper_values`). It is set beside ours only where the
landscape is comparable: the full news collection in the natural-log base.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from judgelab.narrative.landscape.build import LandscapeStudy
from judgelab.narrative.landscape.paper_values import AUTHORS_CRITICAL_NEWS, AUTHORS_CRITICAL_SOURCE
from judgelab.narrative.settings import log_base

NEWS_SIZE = 540
"""Articles in the authors' news collection; a subset (smoke profile) is not comparable."""


def authors_critical(collection: str, n_docs: int, jsd_base) -> float:
    """The authors' critical coherence for a comparable landscape, else NaN."""
    natural = math.isclose(log_base(jsd_base), math.e)
    if collection == "news" and n_docs == NEWS_SIZE and natural:
        return AUTHORS_CRITICAL_NEWS
    return float("nan")


def critical_summary(sens: pd.DataFrame) -> pd.DataFrame:
    """Mean, SD (n - 1), min and max of the critical coherence over seeds, per collection and base."""
    g = sens.groupby(["collection", "jsd_base"], sort=False)["critical"]
    return g.agg(n_seeds="count", mean="mean", sd="std", min="min", max="max").reset_index()


def critical_coherence_table(study: LandscapeStudy) -> pd.DataFrame:
    """Critical coherence over seeds (:func:`critical_summary`), the main seed's value, and the
    authors' value in ``paper_value`` where comparable (``narr_critical_coherence``)."""
    sens = study.sensitivity
    out = critical_summary(sens)
    main = sens[sens["seed"] == study.settings.seed].set_index(["collection", "jsd_base"])["critical"]
    keys = list(zip(out["collection"], out["jsd_base"]))
    out["critical_main_seed"] = [main.get(k, np.nan) for k in keys]
    out["main_seed"] = study.settings.seed
    out["paper_value"] = [authors_critical(c, len(study.collections[c].collection), b) for c, b in keys]
    out["paper_source"] = np.where(out["paper_value"].notna(), AUTHORS_CRITICAL_SOURCE, "")
    out["embedding"] = [study.collections[c].collection.embedding_source for c in out["collection"]]
    return out


def authors_reference(study: LandscapeStudy) -> float | None:
    """The authors' news value when the study holds the full news collection (for a reference
    line in the main base), else None."""
    news = study.collections.get("news")
    if news is None:
        return None
    value = authors_critical("news", len(news.collection), "e")
    return None if np.isnan(value) else value
