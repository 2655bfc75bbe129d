"""The critical coherence beside the authors' value (docs/design.md, principle 7).

The paper does not print the news collection's critical coherence; the authors' examples notebook
does (:mod:`judgelab.narrative.paths.paper_values`): 0.4775, *the authors' notebook output on
their machine*, at n_neighbors 16 / min_cluster_size 4. Running the authors' own code on this
machine gives exactly this project's value at the same parameters, so the two are shown side by
side — "authors' notebook output (their machine)" and "authors' method run here" — and their
difference is the platform, not the method (:func:`authors_critical_comparison`). In the seed
table the authors' value appears only beside a comparable landscape: the full news collection,
the natural-log base and the authors' parameter set.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from judgelab.narrative.landscape.build import LandscapeStudy, build_landscape
from judgelab.narrative.paths.paper_values import (AUTHORS_CRITICAL_NEWS, AUTHORS_CRITICAL_PARAMS,
                                                   AUTHORS_CRITICAL_SOURCE)
from judgelab.narrative.settings import PARAM_SETS, log_base, params_key, params_label
from judgelab.stats.intervals import prediction_interval_from_summary

NEWS_SIZE = 540
"""Articles in the authors' news collection; a subset (smoke profile) is not comparable."""


def knobs_params(knobs: dict) -> str:
    """The parameter-set key (``"16/4"``, ``"32/8"``) of a collection's knobs."""
    return params_key(knobs["n_neighbors"], knobs["min_cluster_size"])


def authors_critical(collection: str, n_docs: int, jsd_base, params: str = AUTHORS_CRITICAL_PARAMS) -> float:
    """The authors' critical coherence for a comparable landscape (full news, ln, their
    parameter set), else NaN."""
    natural = math.isclose(log_base(jsd_base), math.e)
    if collection == "news" and n_docs == NEWS_SIZE and natural and params == AUTHORS_CRITICAL_PARAMS:
        return AUTHORS_CRITICAL_NEWS
    return float("nan")


def critical_summary(sens: pd.DataFrame) -> pd.DataFrame:
    """Mean, SD (n - 1), min and max of the critical coherence over seeds, per collection and base."""
    g = sens.groupby(["collection", "jsd_base"], sort=False)["critical"]
    return g.agg(n_seeds="count", mean="mean", sd="std", min="min", max="max").reset_index()


def critical_coherence_table(study: LandscapeStudy) -> pd.DataFrame:
    """Critical coherence over seeds, the main seed's value, the parameter set, and the authors'
    value in ``paper_value`` where comparable (``narr_critical_coherence``)."""
    sens = study.sensitivity
    out = critical_summary(sens)
    main = sens[sens["seed"] == study.settings.seed].set_index(["collection", "jsd_base"])["critical"]
    keys = list(zip(out["collection"], out["jsd_base"]))
    params = [knobs_params(study.collections[c].knobs) for c in out["collection"]]
    out["critical_main_seed"] = [main.get(k, np.nan) for k in keys]
    out["main_seed"] = study.settings.seed
    out.insert(2, "params", [params_label(p) for p in params])
    out["paper_value"] = [authors_critical(c, len(study.collections[c].collection), b, p)
                          for (c, b), p in zip(keys, params)]
    out["paper_source"] = np.where(out["paper_value"].notna(), AUTHORS_CRITICAL_SOURCE, "")
    out["embedding"] = [study.collections[c].collection.embedding_source for c in out["collection"]]
    return out


def authors_method_here(study: LandscapeStudy, collection: str = "news", seed: int | None = None) -> float:
    """This project's critical coherence at the authors' parameter set, natural log, at ``seed``
    (None: the main seed): the study's own value when its landscape already uses that set, else
    one refit."""
    built = study.collections[collection]
    seed = study.settings.seed if seed is None else int(seed)
    if knobs_params(built.knobs) == AUTHORS_CRITICAL_PARAMS:
        if seed == study.settings.seed and "e" in built.main_by_base:
            return float(built.main_by_base["e"].critical)
        sens = built.sensitivity
        hit = sens[(sens["seed"] == seed) & (sens["jsd_base"] == "e")]["critical"]
        if len(hit):
            return float(hit.iloc[0])
    p = PARAM_SETS[AUTHORS_CRITICAL_PARAMS]
    knobs = {**built.knobs, "n_neighbors": p["n_neighbors"], "min_cluster_size": p["min_cluster_size"]}
    return float(build_landscape(built.collection, knobs, seed, "e").critical)


SEEDS_METHOD = ("95% prediction interval of one UMAP seed's value (Student t over the run's {n} seeds, "
                "mean -+ t sd sqrt(1 + 1/n)); the platform's own spread (umap-learn, numba) is not in it")


def authors_critical_comparison(study: LandscapeStudy) -> pd.DataFrame:
    """One row (news, if built): "authors' method run here" at the main seed beside "authors'
    notebook output (their machine)" (NaN on a subset) and their difference; and the same method
    over the study's UMAP seeds (``settings.seeds``): their mean, SD and the 95% prediction interval
    of one seed's value, the interval the paper's single landscape is read against
    (``narr_critical_vs_authors``)."""
    cols = ["collection", "params", "seed", "jsd_base", "n_docs", "value", "value_source", "paper_value",
            "paper_source", "difference", "n_seeds", "seeds_mean", "seeds_sd", "seeds_pi_low", "seeds_pi_high",
            "ci_method"]
    if "news" not in study.collections:
        return pd.DataFrame(columns=cols)
    n = len(study.collections["news"].collection)
    value = authors_method_here(study)
    seeds = [int(s) for s in study.settings.seeds]
    values = np.array([value if s == study.settings.seed else authors_method_here(study, seed=s) for s in seeds])
    sd = float(values.std(ddof=1)) if len(values) >= 2 else float("nan")
    mean, low, high = (float(v) for v in prediction_interval_from_summary(values.mean(), sd, len(values)))
    paper = authors_critical("news", n, "e")
    return pd.DataFrame([{"collection": "news", "params": params_label(AUTHORS_CRITICAL_PARAMS),
                          "seed": study.settings.seed, "jsd_base": "e", "n_docs": n, "value": value,
                          "value_source": "authors' method run here",
                          "paper_value": paper,
                          "paper_source": AUTHORS_CRITICAL_SOURCE if not np.isnan(paper) else "",
                          "difference": value - paper, "n_seeds": len(values), "seeds_mean": mean,
                          "seeds_sd": sd, "seeds_pi_low": low, "seeds_pi_high": high,
                          "ci_method": SEEDS_METHOD.format(n=len(values))}], columns=cols)


def authors_reference(study: LandscapeStudy) -> float | None:
    """The authors' news value when the study's news landscape is comparable to theirs (full
    collection, their parameter set), for a reference line in the main base; else None."""
    news = study.collections.get("news")
    if news is None:
        return None
    value = authors_critical("news", len(news.collection), "e", knobs_params(news.knobs))
    return None if np.isnan(value) else value
