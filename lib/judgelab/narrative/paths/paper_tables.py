"""Tables of the extracted paths: Table 1 (path lengths), Table 4 maths rows, the comparison with
the paper (sections 5.1-5.2) and the baseline's date rule.

Every table puts our value (main seed), its mean and SD over the path seeds, and the paper's
reported value (column ``paper_*``, cited constants from :mod:`judgelab.narrative.paths.paper_values`) side by side.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab.narrative.paths.comparison import length_difference, method_effects, path_length_table
from judgelab.narrative.landscape.paper_values import AUTHORS_CRITICAL_NEWS, AUTHORS_CRITICAL_SOURCE
from judgelab.narrative.paths.paper_values import (PAPER_SECTION52, PAPER_SECTION52_SOURCE, PAPER_TABLE1,
                                                   PAPER_TABLE1_SOURCE, PAPER_TABLE4_MATH, PAPER_TABLE4_SOURCE)
from judgelab.narrative.paths.param_sets import params_label
from judgelab.narrative.settings import CRITICAL_PARAMS, DEFAULT_PARAMS, PathSettings

METHOD_LABEL = {"maxcap": "Max capacity", "random": "Random chronological"}


def _over_seeds(per_seed: pd.DataFrame, keys: list[str], cols: list[str]) -> pd.DataFrame:
    g = per_seed.groupby(keys, sort=False)[cols]
    mean, sd = g.mean().add_suffix("_seed_mean"), g.std().add_suffix("_seed_sd")
    n = g.size().rename("n_seeds")
    return pd.concat([mean, sd, n], axis=1).reset_index()


def _params_column(t: pd.DataFrame, default_params: dict[str, str] | None) -> pd.Series:
    """The default parameter set's label per row (its provenance; :mod:`param_sets`)."""
    dp = default_params or {}
    return t["collection"].map(lambda c: params_label(dp.get(c, DEFAULT_PARAMS)))


def _with_alt(t: pd.DataFrame, default_params, alt: pd.DataFrame | None, one_table) -> pd.DataFrame:
    """``t`` (default set, labelled) followed by ``one_table(alt rows)`` for each other set."""
    t.insert(0, "params", _params_column(t, default_params))
    parts = [t]
    if alt is not None and len(alt):
        for key, g in alt.groupby("params", sort=False):
            a = one_table(g.drop(columns="params"))
            a.insert(0, "params", params_label(key))
            parts.append(a)
    return pd.concat(parts, ignore_index=True)


def table01_path_lengths(main: pd.DataFrame, seeds: pd.DataFrame, alt: pd.DataFrame | None = None,
                         default_params: dict[str, str] | None = None) -> pd.DataFrame:
    """Mean, SD, min, max of path length by collection and method, with the paper's Table 1; one
    block per parameter set (column ``params``): the default first, then ``alt`` (paths of the
    other set, main seed only, so its ``_seed_*`` columns describe one seed)."""
    return _with_alt(_table01(main, seeds), default_params, alt, lambda g: _table01(g, g))


def _table01(main: pd.DataFrame, seeds: pd.DataFrame) -> pd.DataFrame:
    t = path_length_table(main)
    per_seed = pd.concat([path_length_table(g).assign(seed=s) for s, g in seeds.groupby("seed")])
    t = t.merge(_over_seeds(per_seed, ["collection", "method"], ["mean", "std"]), on=["collection", "method"])
    for stat in ("mean", "std", "min", "max"):
        t[f"paper_{stat}"] = [PAPER_TABLE1.get((c, m), {}).get(stat, np.nan)
                              for c, m in zip(t["collection"], t["method"])]
    t.insert(2, "method_label", t["method"].map(METHOD_LABEL))
    t["paper_source"] = PAPER_TABLE1_SOURCE
    return t


def table04_math_effects(main: pd.DataFrame, seeds: pd.DataFrame, alt: pd.DataFrame | None = None,
                         default_params: dict[str, str] | None = None) -> pd.DataFrame:
    """Cohen's d and AUC-ROC of min / avg coherence between methods, with the paper's Table 4; one
    block per parameter set (column ``params``), as :func:`table01_path_lengths`."""
    return _with_alt(_table04(main, seeds), default_params, alt, lambda g: _table04(g, g))


def _table04(main: pd.DataFrame, seeds: pd.DataFrame) -> pd.DataFrame:
    t = method_effects(main)
    per_seed = pd.concat([method_effects(g).assign(seed=s) for s, g in seeds.groupby("seed")])
    t = t.merge(_over_seeds(per_seed, ["collection", "metric"], ["d", "auc"]), on=["collection", "metric"])
    t["paper_d"] = [PAPER_TABLE4_MATH.get((c, m), {}).get("d", np.nan) for c, m in zip(t["collection"], t["metric"])]
    t["paper_auc"] = [PAPER_TABLE4_MATH.get((c, m), {}).get("auc", np.nan) for c, m in zip(t["collection"], t["metric"])]
    t["paper_source"] = PAPER_TABLE4_SOURCE
    return t


def paper_comparison(seeds: pd.DataFrame, critical_by_seed: dict[str, np.ndarray],
                     default_params: dict[str, str] | None = None) -> pd.DataFrame:
    """Section 5.1-5.2 statistics per path seed, averaged, beside the paper's (news and VisPub).

    The authors' critical coherence (their examples notebook, parameter set ``CRITICAL_PARAMS``)
    is set beside ours only when this landscape used the same set (``default_params``); otherwise
    notebook 07's ``narr_critical_coherence`` compares it at that set."""
    dp = default_params or {}
    rows = []
    for (coll, seed), g in seeds.groupby(["collection", "seed"], sort=False):
        mc, rd = g[g.method == "maxcap"], g[g.method == "random"]
        diff = length_difference(g)["difference"].iloc[0]
        eff = method_effects(g).set_index("column")
        vals = {
            "mean min coherence, max-capacity": mc["min_coherence"].mean(),
            "mean min coherence, random": rd["min_coherence"].mean(),
            "length difference max-capacity - random": diff,
            "Cohen's d, min coherence": eff.loc["min_coherence", "d"],
            "AUC-ROC, min coherence": eff.loc["min_coherence", "auc"],
            "Cohen's d, avg coherence": eff.loc["mean_coherence", "d"],
            "AUC-ROC, avg coherence": eff.loc["mean_coherence", "auc"],
        }
        rows += [{"collection": coll, "seed": seed, "statistic": k, "value": v} for k, v in vals.items()]
    for coll, crit in critical_by_seed.items():
        rows += [{"collection": coll, "seed": i, "statistic": "critical coherence", "value": float(v)}
                 for i, v in enumerate(np.atleast_1d(crit))]
    per = pd.DataFrame(rows)
    out = per.groupby(["collection", "statistic"], sort=False)["value"].agg(
        value_mean="mean", value_sd="std", value_min="min", value_max="max", n_seeds="count").reset_index()

    def paper(coll, stat):
        if stat in PAPER_SECTION52:
            return PAPER_SECTION52[stat].get(coll, np.nan), PAPER_SECTION52_SOURCE
        metric = "Min. coherence" if "min coherence" in stat else "Avg. coherence"
        key = "d" if stat.startswith("Cohen") else "auc"
        if stat.startswith(("Cohen", "AUC")) and (coll, metric) in PAPER_TABLE4_MATH:
            return PAPER_TABLE4_MATH[(coll, metric)][key], PAPER_TABLE4_SOURCE
        if stat == "critical coherence" and coll == "news":
            if dp.get(coll, DEFAULT_PARAMS) == CRITICAL_PARAMS:
                return AUTHORS_CRITICAL_NEWS, AUTHORS_CRITICAL_SOURCE
            return np.nan, f"authors' value is at {CRITICAL_PARAMS}: see narr_critical_coherence (notebook 07)"
        return np.nan, ""

    pv = [paper(c, s) for c, s in zip(out["collection"], out["statistic"])]
    out["paper_value"] = [p[0] for p in pv]
    out["paper_source"] = [p[1] for p in pv]
    out["difference"] = out["value_mean"] - out["paper_value"]
    return out


def baseline_rule_table(rules: pd.DataFrame, settings: PathSettings) -> pd.DataFrame:
    """The random baseline's date rule, inclusive vs strict (:mod:`judgelab.narrative.paths.baseline`):
    per collection and rule, the seed means of the length gap (max-capacity - random), the random
    paths' mean minimum coherence, Cohen's d and AUC of the minimum coherence; ``used`` marks the
    profile-wide rule (one for every collection), ``role`` labels the other reading as the
    sensitivity row, ``paper_length_gap`` is the paper's section 5.1 gap
    (``narr_baseline_date_rule``)."""
    out = rules.groupby(["collection", "baseline_dates"], sort=False).agg(
        n_seeds=("seed", "count"), length_gap=("length_gap", "mean"),
        random_mean_min_coherence=("random_mean_min_coherence", "mean"),
        d_min_coherence=("d_min_coherence", "mean"), auc_min_coherence=("auc_min_coherence", "mean")).reset_index()
    used = "strict" if settings.strict_dates else "inclusive"
    out["used"] = out["baseline_dates"] == used
    out["role"] = out["used"].map({True: "main rule (fixed from the paper's text)",
                                   False: "sensitivity: other reading of 'between'"})
    gap = PAPER_SECTION52["length difference max-capacity - random"]
    out["paper_length_gap"] = [gap.get(c, np.nan) for c in out["collection"]]
    return out
