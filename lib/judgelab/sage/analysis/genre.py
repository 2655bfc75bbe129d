"""SAGE genre discrimination and dimensional independence (RQ2, RQ4; the paper's "Statistical
Analysis", Tables 10 and 11, Figures 3 and 4): descriptives, t-tests, one-way ANOVA with post-hoc
pairs, Cohen's d, relative gaps, cross-layer correlation, dimensions, LLM quality tiers.

Input: scores with at least ``category``, ``layer``, ``score`` (one analysis' observation units).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from judgelab.sage.analysis.scores import (
    CATEGORIES, LAYERS, TIERS, SageStatsError, by_columns, iter_groups, no_rows_note,
    require_columns, share_truncated, state_scale_and_truncation,
)
from judgelab.stats import rules
from judgelab.stats.bootstrap import cluster_bootstrap
from judgelab.stats.correlation import correlation, pearson_rows, spearman_rows
from judgelab.stats.effects import cohens_d
from judgelab.stats.tests import adjust, anova, ttest

PAIRS = (("canonical", "pulp"), ("canonical", "llm"), ("pulp", "llm"))
D_COLUMNS = {"d_pooled_sd": "pooled", "d_sqrt_mean_var": "average"}
"""Table column -> SD convention of :func:`judgelab.stats.effects.cohens_d`: the pooled SD (Cohen
1988, eq. 2.5.2) and sqrt((s1^2 + s2^2) / 2), the convention the original SAGE code used (Cohen
1988, eq. 2.3.2; equal to the pooled one only when n1 = n2)."""


# --------------------------------------------------------------------------- two groups

def _two_sample(x: np.ndarray, y: np.ndarray) -> tuple[dict, str]:
    """Student and Welch t-tests and both d conventions for x vs y, with the rules' note."""
    st, we = ttest(x, y).iloc[0], ttest(x, y, equal_var=False).iloc[0]
    d = cohens_d(x, y, sd=tuple(D_COLUMNS.values())).set_index("sd_convention")["d"]
    res = {"t_student": st["t"], "p_student": st["p"], "t_welch": we["t"], "df_welch": we["df"],
           "p_welch": we["p"], **{col: d[sd] for col, sd in D_COLUMNS.items()}}
    return res, st["note"]


def _share(units: pd.DataFrame) -> float:
    """Share of the observations (rows) in ``units`` that rest on a truncated content text."""
    return share_truncated(units, keys=())


def _values(df: pd.DataFrame, col: str, level) -> np.ndarray:
    v = pd.to_numeric(df.loc[df[col] == level, "score"], errors="coerce").to_numpy(float)
    return v[np.isfinite(v)]


# --------------------------------------------------------------------------- layer averages

def with_layer_average(scores: pd.DataFrame, label: str = "average") -> pd.DataFrame:
    """Append, per story (and mode), the mean over its layers: the paper's "Average" row. Only
    stories scored in every layer present get one, so every average is over the same layers."""
    require_columns(scores, ["story_id", "category", "layer", "score"], "scores")
    keys = [c for c in ("story_id", "category", "tier", "mode") if c in scores.columns]
    n_layers = scores["layer"].nunique()
    # an average over layers that includes an excerpt's score counts as truncated
    agg = {"score": ("score", "mean"), "count": ("score", "count"),
           **({"truncated": ("truncated", "any")} if "truncated" in scores.columns else {})}
    g = scores.groupby(keys, dropna=False).agg(**agg).reset_index()
    avg = g[g["count"] == n_layers].drop(columns="count")
    avg["layer"] = label
    return pd.concat([scores, avg], ignore_index=True)


# --------------------------------------------------------------------------- descriptives & tests

def genre_descriptives(scores: pd.DataFrame, by: Sequence[str] | str | None = ("layer",),
                       group: str = "category", levels: Sequence[str] = CATEGORIES) -> pd.DataFrame:
    """Mean, SD (ddof = 1), SEM and n of the scores per ``by`` x ``group`` level; a level without
    scores appears with n = 0 and a note (the smoke profile may have no LLM story)."""
    by = by_columns(by)
    require_columns(scores, by + [group, "score"], "scores")
    sc = scores[np.isfinite(pd.to_numeric(scores["score"], errors="coerce"))]
    recs = []
    for key, sub in iter_groups(sc, by):
        for lev in levels:
            v = _values(sub, group, lev)
            note = "" if len(v) else (no_rows_note(key) if not len(sub) else f"no scores for {group}={lev}")
            if len(v) == 1:
                note = "one score: SD undefined"
            recs.append({**key, group: lev, "n": len(v),
                         "mean": float(v.mean()) if len(v) else np.nan,
                         "sd": float(v.std(ddof=1)) if len(v) > 1 else np.nan,
                         "sem": float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else np.nan,
                         "share_truncated": _share(sub[sub[group] == lev]), "note": note})
    return pd.DataFrame(recs, columns=by + [group, "n", "mean", "sd", "sem", "share_truncated", "note"])


def genre_pairwise(scores: pd.DataFrame, by: Sequence[str] | str | None = ("layer",),
                   pairs: Sequence[tuple[str, str]] = PAIRS, group: str = "category",
                   bonferroni_over: int | None = None) -> pd.DataFrame:
    """Pairwise group comparisons per ``by`` group: ``diff = mean_a - mean_b``, ``relative_gap =
    diff / mean_a`` (the paper's "35.6% relative gap" of L4 is 1.41 / 3.96), Student and Welch t,
    both d conventions (:data:`D_COLUMNS`).

    The post-hoc step after the ANOVA (unprotected: not conditioned on it): p-values Bonferroni-
    and Holm-adjusted over all ``pairs`` of the ``by`` group, or ``bonferroni_over`` tests.
    """
    by = by_columns(by)
    require_columns(scores, by + [group, "score"], "scores")
    recs = []
    for key, sub in iter_groups(scores, by):
        block = []
        for a, b in pairs:
            x, y = _values(sub, group, a), _values(sub, group, b)
            res, note = _two_sample(x, y)
            if not len(x) or not len(y):
                missing = [lev for lev, v in ((a, x), (b, y)) if not len(v)]
                note = (f"no scores for {group}={' and '.join(missing)}" if len(sub)
                        else no_rows_note(key))
            ma = float(x.mean()) if len(x) else np.nan
            mb = float(y.mean()) if len(y) else np.nan
            block.append({**key, "group_a": a, "group_b": b, "n_a": len(x), "n_b": len(y),
                          "mean_a": ma, "mean_b": mb, "diff": ma - mb,
                          "relative_gap": (ma - mb) / ma if np.isfinite(ma) and ma != 0 else np.nan,
                          **res, "share_truncated": _share(sub[sub[group].isin([a, b])]), "note": note})
        # a family of fixed size, so that a missing category does not shrink it
        m = bonferroni_over or len(pairs)
        family = (f"{m} tests per {' x '.join(by) or 'table'} group" if bonferroni_over
                  else f"the {m} pairs of each {' x '.join(by) or 'table'} group")
        for test in ("student", "welch"):
            p = [r[f"p_{test}"] for r in block]
            suffix = "" if test == "student" else "_welch"
            for method in ("bonferroni", "holm"):
                for r, pa in zip(block, adjust(p, m, method)):
                    r[f"p{suffix}_{method}"] = float(pa)
        for r in block:
            r["mc_family"] = family
        recs.extend(block)
    out = pd.DataFrame(recs)
    if out.empty:
        return pd.DataFrame(columns=by + ["group_a", "group_b", "n_a", "n_b", "diff", "share_truncated", "note"])
    cols = [c for c in out.columns if c != "note"] + ["note"]
    return state_scale_and_truncation(out[cols])


def genre_anova(scores: pd.DataFrame, by: Sequence[str] | str | None = ("layer",),
                group: str = "category") -> pd.DataFrame:
    """One-way between-groups ANOVA of the scores on ``group`` per ``by`` group
    (:func:`judgelab.stats.tests.anova`: F, df, p, eta2)."""
    by = by_columns(by)
    require_columns(scores, by + [group, "score"], "scores")
    sc = scores[np.isfinite(pd.to_numeric(scores["score"], errors="coerce"))]
    recs = []
    for key, sub in iter_groups(sc, by):
        rec = {**key, **anova(sub, "score", group).iloc[0].to_dict(), "share_truncated": _share(sub)}
        if not len(sub):
            rec["note"] = no_rows_note(key)
        recs.append(rec)
    return pd.DataFrame(recs)


# --------------------------------------------------------------------------- intervals

def _d(m1: float, v1: float, n1: int, m2: float, v2: float, n2: int, sd: str, tol: float) -> float:
    """Cohen's d from group summaries by the rules of :func:`judgelab.stats.effects.cohens_d`."""
    if n1 < rules.MIN_PER_GROUP or n2 < rules.MIN_PER_GROUP:
        return np.nan
    if rules.is_zero_spread(v1, tol) and rules.is_zero_spread(v2, tol):
        return np.nan
    s = np.sqrt(((n1 - 1) * v1 + (n2 - 1) * v2) / (n1 + n2 - 2)) if sd == "pooled" else np.sqrt((v1 + v2) / 2)
    return float((m1 - m2) / s)


def _group_summaries(layer: np.ndarray, cat: np.ndarray, v: np.ndarray) -> dict:
    """``{(layer, category): {"mean", "var" (ddof 1), "count"}}`` by bincount (a resample's cost)."""
    keys, codes = np.unique(np.char.add(np.char.add(layer.astype(str), "\t"), cat.astype(str)), return_inverse=True)
    n = np.bincount(codes, minlength=len(keys)).astype(float)
    s1 = np.bincount(codes, v, minlength=len(keys))
    mean = s1 / n
    ss = np.bincount(codes, (v - mean[codes]) ** 2, minlength=len(keys))
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.where(n > 1, ss / (n - 1), np.nan)
    return {tuple(k.split("\t")): {"mean": mean[i], "var": var[i], "count": n[i]} for i, k in enumerate(keys)}


def genre_point_statistics(units: pd.DataFrame, pairs: Sequence[tuple[str, str]] = PAIRS,
                           group: str = "category") -> dict[str, float]:
    """The bootstrapped statistics of one (re)sample, named ``"<layer>|<stat>"``: the formulas of
    :func:`genre_descriptives` and :func:`genre_pairwise` on group summaries (fast enough for B
    resamples). With L4-L6 all present, the comparisons the paper draws between layers too:
    ``mean_all``, ``mean_all_minus_L4`` and ``d_sqrt_mean_var_canonical_llm_minus_L5`` (the
    paper's "L5's gap is the smallest" as a difference of d's)."""
    score = pd.to_numeric(units["score"], errors="coerce").to_numpy(float)
    ok = np.isfinite(score)
    g = _group_summaries(units["layer"].to_numpy()[ok], units[group].to_numpy()[ok], score[ok])
    tol = rules.tolerance(score[ok]) if ok.any() else rules.REL_TOL
    out: dict[str, float] = {}
    for layer in pd.unique(units["layer"]):
        summ = {c: g.get((layer, c)) for c in CATEGORIES}
        for c, r in summ.items():
            out[f"{layer}|mean_{c}"] = float(r["mean"]) if r is not None else np.nan
        for a, b in pairs:
            ra, rb = summ.get(a), summ.get(b)
            tag = f"{a}_{b}"
            if ra is None or rb is None:
                for k in ("diff", "relative_gap", "d_pooled_sd", "d_sqrt_mean_var"):
                    out[f"{layer}|{k}_{tag}"] = np.nan
                continue
            diff = float(ra["mean"] - rb["mean"])
            out[f"{layer}|diff_{tag}"] = diff
            out[f"{layer}|relative_gap_{tag}"] = diff / ra["mean"] if ra["mean"] != 0 else np.nan
            args = (ra["mean"], ra["var"], int(ra["count"]), rb["mean"], rb["var"], int(rb["count"]))
            out[f"{layer}|d_pooled_sd_{tag}"] = _d(*args, "pooled", tol)
            out[f"{layer}|d_sqrt_mean_var_{tag}"] = _d(*args, "average", tol)
    layer_of = units["layer"].to_numpy()[ok]
    if set(LAYERS) <= set(layer_of):
        means = {lay: float(score[ok][layer_of == lay].mean()) for lay in LAYERS}
        d = "d_sqrt_mean_var_canonical_llm"
        for lay in LAYERS:
            out[f"{lay}|mean_all"] = means[lay]
            out[f"{lay}|mean_all_minus_L4"] = means[lay] - means["L4"]
            out[f"{lay}|{d}_minus_L5"] = out.get(f"{lay}|{d}", np.nan) - out.get(f"L5|{d}", np.nan)
    return out


def genre_bootstrap(units: pd.DataFrame, *, n_boot: int = 2000, seed: int = 0, unit: str = "story") -> pd.DataFrame:
    """Cluster-bootstrap CIs (over stories, within category; a story's rows resampled together)
    of :func:`genre_point_statistics`."""
    require_columns(units, ["story_id", "category", "layer", "score"], "scores")
    return cluster_bootstrap(units, genre_point_statistics, cluster="story_id", strata="category",
                             n_boot=n_boot, seed=seed, unit=unit)


COLLAPSED_RESIDUAL = 1e-6
"""A mixed model's residual variance below this share of the scores' variance has collapsed: REML
sits on the boundary (residual variance 0, e.g. when a story's two modes score alike) where the
optimiser stops short of 0 (~1e-11 seen) and still reports ``converged``; its Wald SEs then rest on
that near-zero variance (p = 0.004 where the story means give 0.05)."""
MIXED_CI_METHOD = "Wald (MixedLM, REML)"
STORY_MEAN_CI_METHOD = "t (OLS on story means: the mixed model's residual variance collapsed)"


def _story_mean_fit(sub: pd.DataFrame, group: str, reference: str):
    """OLS of each story's mean score (over its modes) on category: the mixed model's fallback."""
    import statsmodels.formula.api as smf

    means = sub.groupby("story_id").agg(score=("score", "mean"), **{group: (group, "first")}).reset_index()
    return smf.ols(f"score ~ C({group}, Treatment('{reference}'))", means).fit()


def genre_mixed_model(scores: pd.DataFrame, layers: Sequence[str] = LAYERS, group: str = "category",
                      reference: str = "canonical") -> pd.DataFrame:
    """Per layer, a linear mixed model with a story random intercept (statsmodels ``MixedLM``,
    REML): score ~ C(category, reference) + C(mode), so a story's modes are repeated measures of
    one story. One row per layer and contrast; ``diff`` is the canonical mean minus the other (the
    sign of Table 11). When the residual variance has collapsed (:data:`COLLAPSED_RESIDUAL`) the
    layer's rows come from story-mean OLS instead, and ``note`` and ``ci_method`` say so.
    """
    import warnings

    import statsmodels.formula.api as smf

    require_columns(scores, ["story_id", group, "layer", "mode", "score"], "story scores")
    recs = []
    for layer in layers:
        sub = scores[(scores["layer"] == layer) & np.isfinite(pd.to_numeric(scores["score"], errors="coerce"))]
        base = {"layer": layer, "n_stories": int(sub["story_id"].nunique()), "n_observations": len(sub)}
        others = [c for c in CATEGORIES if c != reference]
        present = set(sub[group])
        problem = ""
        if reference not in present:
            problem = f"no {reference} scores"
        elif sub["story_id"].nunique() < 3 or sub["story_id"].nunique() >= len(sub):
            problem = "needs >= 3 stories and a story with both modes"
        fit = None
        if not problem:
            modes = "+ C(mode)" if sub["mode"].nunique() > 1 else ""
            formula = f"score ~ C({group}, Treatment('{reference}')) {modes}"
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fit = smf.mixedlm(formula, sub, groups=sub["story_id"]).fit(reml=True)
            except (ValueError, np.linalg.LinAlgError) as exc:
                problem = f"MixedLM failed: {exc}"
        converged = bool(fit.converged) if fit else False
        estimates, ci_method, fallback = fit, MIXED_CI_METHOD, ""
        total_var = float(sub["score"].var(ddof=1)) if len(sub) > 1 else np.nan
        if fit is not None and np.isfinite(total_var) and fit.scale <= COLLAPSED_RESIDUAL * total_var:
            estimates, ci_method = _story_mean_fit(sub, group, reference), STORY_MEAN_CI_METHOD
            fallback = (f"MixedLM residual variance collapsed ({fit.scale:.2g} against a score variance of "
                        f"{total_var:.2g}): story-mean OLS instead")
        for c in others:
            rec = {**base, "contrast": f"{reference} - {c}", "diff": np.nan, "diff_ci_low": np.nan,
                   "diff_ci_high": np.nan, "p": np.nan, "converged": converged, "note": problem,
                   "ci_method": ci_method}
            name = f"C({group}, Treatment('{reference}'))[T.{c}]"
            if estimates is not None and name in estimates.params.index:
                lo, hi = estimates.conf_int().loc[name]
                rec.update({"diff": -float(estimates.params[name]), "diff_ci_low": -float(hi),
                            "diff_ci_high": -float(lo), "p": float(estimates.pvalues[name])})
                rec["note"] = fallback or ("" if converged else "MixedLM did not converge")
            elif not problem:
                rec["note"] = f"no {c} scores"
            recs.append(rec)
    out = pd.DataFrame(recs)
    ci_method = out.pop("ci_method").to_numpy()
    fam = f"mixed model: {len(out)} contrasts ({len(layers)} layers x {len(CATEGORIES) - 1})"
    out["p_holm"] = adjust(out["p"], len(out), "holm")
    out["p_bonferroni"] = adjust(out["p"], len(out), "bonferroni")
    out["mc_family"] = fam
    out["unit"] = np.where(ci_method == STORY_MEAN_CI_METHOD, "story (the mean of its modes)",
                           "story (random intercept; both modes as repeated measures)")
    out["ci_method"] = ci_method
    return out


# --------------------------------------------------------------------------- cross-layer

def _cross_layer_boot(pair: pd.DataFrame, a: str, b: str, n_boot: int, seed: int) -> pd.DataFrame:
    """Cluster-bootstrap (over stories) CIs of Pearson r and Spearman rho of layers a and b."""
    frame = pair.reset_index()
    xa, xb = frame[a].to_numpy(float), frame[b].to_numpy(float)
    frame["_ra"], frame["_rb"] = rules.snap(xa, rules.tolerance(xa)), rules.snap(xb, rules.tolerance(xb))

    def stat(f):
        return {"pearson_r": float(pearson_rows(f[a].to_numpy(float), f[b].to_numpy(float))[0]),
                "spearman_rho": float(spearman_rows(f["_ra"].to_numpy(float), f["_rb"].to_numpy(float))[0])}

    return cluster_bootstrap(frame, stat, cluster="story_id", n_boot=n_boot, seed=seed, unit="story")


def cross_layer_correlation(scores: pd.DataFrame, layers: Sequence[str] = LAYERS,
                            unit: Sequence[str] = ("story_id", "mode"), *, ci_method: str = "fisher_z",
                            n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Pearson r and Spearman rho with p and 95% CIs between every pair of layers, over the
    ``unit`` rows scored in both (story x mode: the paper's N = 200).

    ``ci_method="fisher_z"`` (Fisher z for r, Bonett & Wright for rho: exact for independent
    units) or ``"cluster_bootstrap"`` (over stories, for story x mode units: not independent).
    """
    if ci_method not in ("fisher_z", "cluster_bootstrap"):
        raise SageStatsError(f"unknown ci_method {ci_method!r}; choose fisher_z or cluster_bootstrap")
    unit = [u for u in unit if u in scores.columns]
    require_columns(scores, unit + ["layer", "score"], "scores")
    wide = scores.pivot_table(index=unit, columns="layer", values="score", aggfunc="mean")
    cut = (scores.pivot_table(index=unit, columns="layer", values="truncated", aggfunc="any")
           if "truncated" in scores.columns else None)
    recs = []
    nan_ci = {f"{s}_{side}": np.nan for s in ("pearson_r", "spearman_rho") for side in ("ci_low", "ci_high")}
    for i, a in enumerate(layers):
        for b in layers[i + 1:]:
            rec = {"layer_a": a, "layer_b": b, "n": 0, "n_stories": 0, "pearson_r": np.nan, "p_pearson": np.nan,
                   "spearman_rho": np.nan, "p_spearman": np.nan, **nan_ci, "ci_method": ci_method,
                   "share_truncated": np.nan, "note": ""}
            if a not in wide or b not in wide:
                rec["note"] = "no scores for " + " and ".join(x for x in (a, b) if x not in wide)
                recs.append(rec)
                continue
            pair = wide[[a, b]].dropna()
            pr = correlation(pair[a], pair[b], method="pearson").iloc[0]
            sr = correlation(pair[a], pair[b], method="spearman").iloc[0]
            # share of the 2n evaluations behind the n pairs whose content text was truncated
            share = (float(cut.loc[pair.index, [a, b]].fillna(False).astype(bool).to_numpy().mean())
                     if cut is not None and len(pair) else np.nan)
            stories = pair.index.get_level_values("story_id") if "story_id" in unit else pair.index
            rec.update({"n": len(pair), "n_stories": int(pd.Index(stories).nunique()), "pearson_r": pr["r"],
                        "p_pearson": pr["p"], "spearman_rho": sr["r"], "p_spearman": sr["p"],
                        "share_truncated": share, "note": pr["note"]})
            if ci_method == "fisher_z":
                rec.update({"pearson_r_ci_low": pr["ci_low"], "pearson_r_ci_high": pr["ci_high"],
                            "spearman_rho_ci_low": sr["ci_low"], "spearman_rho_ci_high": sr["ci_high"],
                            "ci_method": "Fisher z (r; Bonett-Wright se for rho), independent units"})
            elif np.isfinite(pr["r"]):
                boot = _cross_layer_boot(pair, a, b, n_boot, seed).set_index("statistic")
                for st in ("pearson_r", "spearman_rho"):
                    rec[f"{st}_ci_low"], rec[f"{st}_ci_high"] = boot.at[st, "ci_low"], boot.at[st, "ci_high"]
                rec["ci_method"] = boot["ci_method"].iloc[0]
            recs.append(rec)
    return pd.DataFrame(recs)


# --------------------------------------------------------------------------- dimensions

def dimension_discrimination(dimension_scores: pd.DataFrame, pair: tuple[str, str] = ("canonical", "llm"),
                             unit: str = "story_mode") -> pd.DataFrame:
    """Which dimensions separate two categories most ("dimension-level analysis", the paper): per
    layer x dimension of the final scores, diff, t, p (Bonferroni over all dimensions) and d,
    sorted by layer, then ``d_pooled_sd`` descending. ``unit="story"`` averages a story's modes."""
    require_columns(dimension_scores, ["story_id", "category", "layer", "dimension", "score"], "dimension scores")
    df = dimension_scores
    if unit == "story":
        agg = {"score": "mean", **({"truncated": "any"} if "truncated" in df.columns else {})}
        df = df.groupby(["story_id", "category", "layer", "dimension"], dropna=False).agg(agg).reset_index()
    elif unit != "story_mode":
        raise SageStatsError(f"unknown unit {unit!r}; choose story_mode or story")
    n_tests = df.groupby(["layer", "dimension"]).ngroups
    out = genre_pairwise(df, by=("layer", "dimension"), pairs=(pair,), bonferroni_over=max(n_tests, 1))
    if out.empty:
        return out
    out["_l"] = out["layer"].map({l: i for i, l in enumerate(LAYERS)})
    out = out.sort_values(["_l", "d_pooled_sd"], ascending=[True, False], na_position="last")
    return out.drop(columns="_l").reset_index(drop=True)


# --------------------------------------------------------------------------- LLM tiers

def llm_tiers(scores: pd.DataFrame, by: Sequence[str] | str | None = ("layer",),
              tiers: Sequence[str] = TIERS) -> pd.DataFrame:
    """Do the judge's scores track the LLM stories' quality tiers? Per ``by`` group: n, mean and SD
    per tier, high - low difference and d, ANOVA across tiers, and Spearman rho of tier rank (low =
    1) and score as a monotone-trend check."""
    by = by_columns(by)
    require_columns(scores, by + ["category", "tier", "score"], "scores")
    llm = scores[(scores["category"] == "llm") & scores["tier"].isin(tiers)]
    llm = llm[np.isfinite(pd.to_numeric(llm["score"], errors="coerce"))]
    rank = {t: len(tiers) - i for i, t in enumerate(tiers)}
    tier_anova = genre_anova(llm, by=by, group="tier") if len(llm) else pd.DataFrame()
    recs = []
    for key, sub in iter_groups(llm, by):
        rec = dict(key)
        for t in tiers:
            v = _values(sub, "tier", t)
            rec.update({f"n_{t}": len(v), f"mean_{t}": float(v.mean()) if len(v) else np.nan,
                        f"sd_{t}": float(v.std(ddof=1)) if len(v) > 1 else np.nan})
        hi, lo = _values(sub, "tier", tiers[0]), _values(sub, "tier", tiers[-1])
        rec["diff_high_low"] = (hi.mean() - lo.mean()) if len(hi) and len(lo) else np.nan
        rec["share_truncated"] = _share(sub)
        rec["d_high_low_pooled_sd"] = cohens_d(hi, lo)["d"].item()
        trend = correlation(sub["tier"].map(rank), sub["score"], method="spearman").iloc[0]
        rec["spearman_rho_tier"], rec["p_spearman_tier"] = trend["r"], trend["p"]
        notes = [f"tier trend: {trend['note']}"] if np.isnan(trend["r"]) else []
        if len(tier_anova):
            a = tier_anova.merge(pd.DataFrame([key]), on=by) if by else tier_anova
            if len(a):
                rec.update({"F": a["F"].iloc[0], "p_anova": a["p"].iloc[0]})
                if a["note"].iloc[0]:
                    notes.append(a["note"].iloc[0])
        missing = [t for t in tiers if rec[f"n_{t}"] == 0]
        if missing:
            notes.append("no scores for tier " + ", ".join(missing))
        rec["note"] = "; ".join(notes)
        recs.append(rec)
    out = pd.DataFrame(recs)
    if not len(llm):
        out["note"] = "no LLM-generated story with a quality tier has scores"
    return state_scale_and_truncation(out)
