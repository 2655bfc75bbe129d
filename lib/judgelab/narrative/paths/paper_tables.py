"""Tables of the extracted paths: Table 1 (path lengths), Table 4 maths rows, the comparison with
the paper (sections 5.1-5.2) and the baseline's date rule.

Every table puts our value (main seed), its mean and SD over the path seeds and the paper's
(``paper_*``, from :mod:`judgelab.narrative.paths.paper_values`) side by side. Intervals and
paired tests are over endpoint pairs (:mod:`judgelab.narrative.paths.comparison`), adjusted
within a named family (``mc_family``: one table, one role) by Holm (``p_holm``, the default
reading) and Bonferroni (``p_bonferroni``, the paper's). The strict date rule of the random
baseline gives the main rows; the inclusive one is the labelled sensitivity row (``role``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab.narrative.paths.comparison import N_BOOT, UNIT, length_difference, method_effects, path_length_table
from judgelab.narrative.paths.paper_values import (AUTHORS_CRITICAL_NEWS, AUTHORS_CRITICAL_SOURCE, PAPER_SECTION52,
                                                   PAPER_SECTION52_SOURCE, PAPER_TABLE1, PAPER_TABLE1_SOURCE,
                                                   PAPER_TABLE4_MATH, PAPER_TABLE4_SOURCE)
from judgelab.narrative.settings import BASELINE_DATES, CRITICAL_PARAMS, DEFAULT_PARAMS, PathSettings, params_label
from judgelab.stats import resampling as rs
from judgelab.stats.tests import adjust

METHOD_LABEL = {"maxcap": "Max capacity", "random": "Random chronological"}


MAIN_ROLE = "main rule"
SENSITIVITY_ROLE = "sensitivity: other reading of 'between'"


def _over_seeds(per_seed: pd.DataFrame, keys: list[str], cols: list[str]) -> pd.DataFrame:
    g = per_seed.groupby(keys, sort=False)[cols]
    mean, sd = g.mean().add_suffix("_seed_mean"), g.std().add_suffix("_seed_sd")
    n = g.size().rename("n_seeds")
    return pd.concat([mean, sd, n], axis=1).reset_index()


def _params_column(t: pd.DataFrame, default_params: dict[str, str] | None) -> pd.Series:
    """The default parameter set's label per row (its provenance; :mod:`judgelab.narrative.settings`)."""
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


def _rule_of(paths: pd.DataFrame, other: pd.DataFrame | None) -> str:
    """The main date rule's name: the opposite of the sensitivity rows' (strict when none given)."""
    if other is not None and len(other):
        return "inclusive" if other["baseline_dates"].iloc[0] == "strict" else "strict"
    return paths.attrs.get("baseline_dates", BASELINE_DATES)


def _rule_blocks(main: pd.DataFrame, other: pd.DataFrame | None):
    """(rule, role, paths) for the main rule and, when ``other`` is given, for the other rule: the
    same max-capacity paths with the other rule's random paths."""
    rule = _rule_of(main, other)
    yield rule, MAIN_ROLE, main
    if other is not None and len(other):
        mc = main[main["method"] == "maxcap"]
        keep = other[other["collection"].isin(mc["collection"])].drop(columns="baseline_dates")
        yield other["baseline_dates"].iloc[0], SENSITIVITY_ROLE, pd.concat([mc, keep], ignore_index=True)


def _adjust(t: pd.DataFrame, p_col: str, family_col: str = "mc_family") -> pd.DataFrame:
    """Holm and Bonferroni adjustment of ``p_col`` within each multiple-comparison family."""
    t["p_holm"], t["p_bonferroni"] = np.nan, np.nan
    for _, idx in t.groupby(family_col, sort=False).groups.items():
        p = t.loc[idx, p_col]
        t.loc[idx, "p_holm"], t.loc[idx, "p_bonferroni"] = adjust(p, len(p), "holm"), adjust(p, len(p), "bonferroni")
    return t


def table01_path_lengths(main: pd.DataFrame, seeds: pd.DataFrame, alt: pd.DataFrame | None = None,
                         default_params: dict[str, str] | None = None, other_main: pd.DataFrame | None = None,
                         other_seeds: pd.DataFrame | None = None, n_boot: int = N_BOOT, seed: int = 0) -> pd.DataFrame:
    """Mean (with its 95% interval), SD, min, max of path length by collection and method, with the
    paper's Table 1; the random rows carry the length gap max-capacity - random over endpoint
    pairs (``gap``, its interval, the paired t-test ``gap_p``, Holm / Bonferroni over the table's
    gaps of one role). One random row per date rule (column ``baseline_dates``, ``role``): the main
    rule's, then the other rule's (``other_main`` / ``other_seeds``: :func:`extraction.other_rule_randoms`)
    as the labelled sensitivity row. One block per parameter set (column ``params``): the default
    first, then ``alt`` (main seed and main rule only, so its ``_seed_*`` columns describe one seed)."""
    t = _with_alt(_table01(main, seeds, other_main, other_seeds, n_boot, seed), default_params, alt,
                  lambda g: _table01(g, g, None, None, n_boot, seed))
    t["mc_family"] = np.where(t["method"] == "random", "Table 1 length gaps, " + t["role"], "")
    t = _adjust(t, "gap_p")
    t["unit"], t["ci_method"] = UNIT, rs.ci_method(n_boot, seed)
    return _length_vs_news(t)


def _length_vs_news(t: pd.DataFrame) -> pd.DataFrame:
    """``length_vs_news``: a collection's mean path length over the news collection's, same method,
    parameter set, date rule and role (section 5.1: VisPub narratives "25 to 44% longer"); NaN where
    the run has no news row to compare with. The claims scorecard gives it its delta-method interval
    from the two rows' means, SDs and counts."""
    keys = [k for k in ("method", "params", "baseline_dates", "role") if k in t.columns]
    news = t[t["collection"] == "news"].set_index(keys)["mean"]
    ref = [news.get(tuple(r) if len(keys) > 1 else r[0], np.nan) for r in t[keys].itertuples(index=False)]
    t["length_vs_news"] = t["mean"].to_numpy(float) / np.asarray(ref, float)
    return t


def _table01(main, seeds, other_main, other_seeds, n_boot, seed) -> pd.DataFrame:
    parts = []
    others = {r: p for r, _, p in _rule_blocks(seeds, other_seeds)}
    for rule, role, paths in _rule_blocks(main, other_main):
        t = path_length_table(paths, n_boot, seed)
        gap = length_difference(paths, n_boot, seed).rename(columns={
            "difference": "gap", "difference_ci_low": "gap_ci_low", "difference_ci_high": "gap_ci_high",
            "p_value": "gap_p", "p_welch": "gap_p_welch", "note": "gap_note"}).drop(columns="n_pairs")
        t = t.merge(gap, on="collection", how="left")
        t.loc[t["method"] != "random", [c for c in gap.columns if c != "collection"]] = np.nan
        sp = others.get(rule, paths)
        per_seed = pd.concat([path_length_table(g, 0).assign(seed=s) for s, g in sp.groupby("seed")])
        t = t.merge(_over_seeds(per_seed, ["collection", "method"], ["mean", "std"]), on=["collection", "method"])
        t.insert(2, "baseline_dates", np.where(t["method"] == "random", rule, "n/a (graph path)"))
        t.insert(3, "role", np.where(t["method"] == "random", role, "max-capacity"))
        parts.append(t if role == MAIN_ROLE else t[t["method"] == "random"])
    t = pd.concat(parts, ignore_index=True)
    for stat in ("mean", "std", "min", "max"):
        t[f"paper_{stat}"] = [PAPER_TABLE1.get((c, m), {}).get(stat, np.nan) if r != SENSITIVITY_ROLE else np.nan
                              for c, m, r in zip(t["collection"], t["method"], t["role"])]
    t.insert(2, "method_label", t["method"].map(METHOD_LABEL))
    t["paper_source"] = PAPER_TABLE1_SOURCE
    return t


def table04_math_effects(main: pd.DataFrame, seeds: pd.DataFrame, alt: pd.DataFrame | None = None,
                         default_params: dict[str, str] | None = None, other_main: pd.DataFrame | None = None,
                         other_seeds: pd.DataFrame | None = None, n_boot: int = N_BOOT, seed: int = 0) -> pd.DataFrame:
    """Cohen's d and AUC-ROC of min / avg coherence between methods (each with its 95% interval,
    and the paired t-test over endpoint pairs adjusted by Holm / Bonferroni within a role), with the
    paper's Table 4; one row per date rule (main, then the sensitivity row) and one block per
    parameter set (column ``params``), as :func:`table01_path_lengths`."""
    t = _with_alt(_table04(main, seeds, other_main, other_seeds, n_boot, seed), default_params, alt,
                  lambda g: _table04(g, g, None, None, n_boot, seed))
    t["mc_family"] = "Table 4 maths rows, " + t["role"]
    t = _adjust(t, "p")
    return t


def _table04(main, seeds, other_main, other_seeds, n_boot, seed) -> pd.DataFrame:
    parts = []
    others = {r: p for r, _, p in _rule_blocks(seeds, other_seeds)}
    for rule, role, paths in _rule_blocks(main, other_main):
        t = method_effects(paths, n_boot=n_boot, seed=seed)
        per_seed = pd.concat([method_effects(g, n_boot=0).assign(seed=s) for s, g in others.get(rule, paths).groupby("seed")])
        t = t.merge(_over_seeds(per_seed, ["collection", "metric"], ["d", "auc"]), on=["collection", "metric"])
        t.insert(1, "baseline_dates", rule)
        t.insert(2, "role", role)
        parts.append(t)
    t = pd.concat(parts, ignore_index=True)
    main_row = t["role"] == MAIN_ROLE
    t["paper_d"] = [PAPER_TABLE4_MATH.get((c, m), {}).get("d", np.nan) if ok else np.nan
                    for c, m, ok in zip(t["collection"], t["metric"], main_row)]
    t["paper_auc"] = [PAPER_TABLE4_MATH.get((c, m), {}).get("auc", np.nan) if ok else np.nan
                      for c, m, ok in zip(t["collection"], t["metric"], main_row)]
    t["paper_source"] = PAPER_TABLE4_SOURCE
    return t


def paper_comparison(seeds: pd.DataFrame, critical_by_seed: dict[str, np.ndarray],
                     default_params: dict[str, str] | None = None) -> pd.DataFrame:
    """Section 5.1-5.2 statistics per path seed, averaged, beside the paper's; the authors'
    critical coherence only when this landscape used their set (``CRITICAL_PARAMS``)."""
    dp = default_params or {}
    rows = []
    for (coll, seed), g in seeds.groupby(["collection", "seed"], sort=False):
        mc, rd = g[g.method == "maxcap"], g[g.method == "random"]
        diff = length_difference(g, n_boot=0)["difference"].iloc[0]
        eff = method_effects(g, n_boot=0).set_index("column")
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
    """The random baseline's date rule, strict (main) vs inclusive (:mod:`judgelab.narrative.paths.baseline`):
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
    out["role"] = out["used"].map({True: "main rule (the paper's 'between' read literally)",
                                   False: SENSITIVITY_ROLE})
    gap = PAPER_SECTION52["length difference max-capacity - random"]
    out["paper_length_gap"] = [gap.get(c, np.nan) for c in out["collection"]]
    return out
