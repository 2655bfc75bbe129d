"""Length: do the judges' scores follow length rather than the text?

**SAGE.** Per layer and mode, one row per story (the unit): its final score (``overall_score`` of
notebooks 02-04) and the log of its word count (the corpus' ``words``, notebook 01).

- :func:`partial_correlation`: Pearson's r of score and log words with category held fixed
  (pingouin ``partial_corr``, category as dummy covariates), with its 95% interval;
- :func:`sage_length_models`: OLS (statsmodels) ``score ~ C(category)`` and
  ``score ~ C(category) + log_words``: the length slope and each category's gap from canonical,
  without and with the length term, with 95% intervals (the t intervals of OLS). The gap
  *survives* the length term when its interval with the term still excludes 0.

**Narrative judges.** Per collection and mode, one row per narrative: the mean score of the K
agents against the path's length (documents) at equal minimum coherence:
``score_mean ~ min_coherence + length`` (OLS) and the partial correlation of score and length
given minimum coherence.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pingouin as pg
import statsmodels.formula.api as smf

from judgelab.stats.tests import adjust

CATEGORY_ORDER = ("canonical", "pulp", "llm")


def story_units(summaries: pd.DataFrame, corpus: pd.DataFrame) -> pd.DataFrame:
    """One row per layer x mode x story: score (``overall_score``), category, words and log words;
    stories without a score (failed evaluations) are left out."""
    words = corpus.set_index("story_id")["words"]
    missing = sorted(set(summaries["story_id"]) - set(words.index))
    if missing:
        raise ValueError(f"sage summaries name stories absent from the corpus table: {missing[:5]}")
    df = summaries[["story_id", "category", "layer", "mode", "overall_score"]].rename(columns={"overall_score": "score"})
    df = df.assign(words=df["story_id"].map(words).astype(float))
    if (df["words"] <= 0).any():
        bad = df.loc[df["words"] <= 0, "story_id"].tolist()
        raise ValueError(f"corpus: word count must be positive to take its log (stories {bad[:5]})")
    df["log_words"] = np.log(df["words"])
    return df.dropna(subset=["score"]).reset_index(drop=True)


def _dummies(df: pd.DataFrame, col: str) -> tuple[pd.DataFrame, list[str]]:
    levels = [c for c in CATEGORY_ORDER if c in set(df[col])] + sorted(set(df[col]) - set(CATEGORY_ORDER))
    names = []
    out = df.copy()
    for lev in levels[1:]:
        name = f"is_{lev}"
        out[name] = (out[col] == lev).astype(float)
        names.append(name)
    return out, names


def partial_correlation(df: pd.DataFrame, x: str, y: str, covar: list[str]) -> dict:
    """Pearson partial r of ``x`` and ``y`` given ``covar`` (pingouin), its 95% interval and p; NaN
    with a note when there are too few units (n < number of covariates + 4) or no variation."""
    n = len(df)
    if n < len(covar) + 4 or df[x].nunique() < 2 or df[y].nunique() < 2:
        return {"n": n, "r": np.nan, "r_ci_low": np.nan, "r_ci_high": np.nan, "p": np.nan,
                "note": f"too few units or no variation (n = {n}, {len(covar)} covariates)"}
    res = pg.partial_corr(data=df, x=x, y=y, covar=covar or None, method="pearson")
    # pingouin renamed its columns in 0.6 (CI95%, p-val -> CI95, p_val): read either
    lo, hi = res["CI95" if "CI95" in res else "CI95%"].iloc[0]
    p = res["p_val" if "p_val" in res else "p-val"].iloc[0]
    return {"n": n, "r": float(res["r"].iloc[0]), "r_ci_low": float(lo), "r_ci_high": float(hi),
            "p": float(p), "note": ""}


def ols_terms(df: pd.DataFrame, formula: str) -> dict[str, tuple[float, float, float, float]]:
    """``{term: (coefficient, 95% low, 95% high, p)}`` of an OLS fit (statsmodels); {} when the design
    has no residual degrees of freedom."""
    fit = smf.ols(formula, data=df).fit()
    if fit.df_resid < 1:
        return {}
    ci = fit.conf_int(0.05)
    return {t: (float(fit.params[t]), float(ci.loc[t, 0]), float(ci.loc[t, 1]), float(fit.pvalues[t]))
            for t in fit.params.index}


def sage_length_models(units: pd.DataFrame) -> pd.DataFrame:
    """Per layer x mode: the length slope (per unit of log words) and its partial correlation, and
    each category's gap from canonical without / with the length term (see the module docstring)."""
    rows = []
    for (layer, mode), g in units.groupby(["layer", "mode"], sort=True):
        g, dummies = _dummies(g, "category")
        pc = partial_correlation(g, "log_words", "score", dummies)
        cats = " + ".join(dummies)
        plain = ols_terms(g, f"score ~ {cats}" if cats else "score ~ 1") if len(g) > len(dummies) + 1 else {}
        full = ols_terms(g, f"score ~ {cats + ' + ' if cats else ''}log_words") if len(g) > len(dummies) + 2 else {}
        slope = full.get("log_words", (np.nan,) * 4)
        base = {"layer": layer, "mode": mode, "n": len(g), "partial_r": pc["r"], "partial_r_ci_low": pc["r_ci_low"],
                "partial_r_ci_high": pc["r_ci_high"], "partial_r_p": pc["p"],
                "slope_log_words": slope[0], "slope_log_words_ci_low": slope[1], "slope_log_words_ci_high": slope[2],
                "slope_p": slope[3]}
        terms = dummies or [None]
        for d in terms:
            gap0 = plain.get(d, (np.nan,) * 4) if d else (np.nan,) * 4
            gap1 = full.get(d, (np.nan,) * 4) if d else (np.nan,) * 4
            survives = (bool(gap1[1] > 0 or gap1[2] < 0) if np.isfinite(gap1[1]) else None)
            rows.append({**base, "gap": f"{d.removeprefix('is_')} - canonical" if d else "",
                         "gap_without_length": gap0[0], "gap_without_length_ci_low": gap0[1],
                         "gap_without_length_ci_high": gap0[2],
                         "gap_with_length": gap1[0], "gap_with_length_ci_low": gap1[1], "gap_with_length_ci_high": gap1[2],
                         "gap_survives": survives,
                         "note": pc["note"] or ("" if full else "too few stories for the length model")})
    out = _adjust_slopes(pd.DataFrame(rows), ["layer", "mode"])
    return out.assign(unit="story", ci_method="partial r: pingouin (Fisher z); coefficients: OLS t intervals (statsmodels)",
                      mc_family="the length slope of every layer x mode (t-test of the OLS coefficient)")


def _adjust_slopes(out: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """``slope_p_holm`` / ``slope_p_bonferroni``: the slope p-values adjusted over the distinct ``keys``
    (a layer x mode appears once per gap row; it counts once)."""
    if out.empty:
        return out
    one = out.drop_duplicates(keys)[keys + ["slope_p"]].copy()
    m = len(one)  # every slope of the table is in the family, an undefined one too
    one["slope_p_holm"], one["slope_p_bonferroni"] = adjust(one["slope_p"], m, "holm"), adjust(one["slope_p"], m, "bonferroni")
    return out.merge(one.drop(columns="slope_p"), on=keys, how="left")


def narrative_length_models(judged: pd.DataFrame) -> pd.DataFrame:
    """Per collection x mode: ``score_mean ~ min_coherence + length`` (OLS) and the partial
    correlation of score and length given minimum coherence; unit: narrative (path)."""
    rows = []
    for (coll, mode), g in judged.dropna(subset=["score_mean"]).groupby(["collection", "mode"], sort=True):
        g = g.assign(length=g["length"].astype(float))
        pc = partial_correlation(g, "length", "score_mean", ["min_coherence"])
        fit = ols_terms(g, "score_mean ~ min_coherence + length") if len(g) > 3 and g["length"].nunique() > 1 else {}
        slope = fit.get("length", (np.nan,) * 4)
        rows.append({"collection": coll, "mode": mode, "n": len(g), "partial_r": pc["r"], "partial_r_ci_low": pc["r_ci_low"],
                     "partial_r_ci_high": pc["r_ci_high"], "partial_r_p": pc["p"],
                     "slope_length": slope[0], "slope_length_ci_low": slope[1], "slope_length_ci_high": slope[2],
                     "slope_p": slope[3], "note": pc["note"]})
    out = _adjust_slopes(pd.DataFrame(rows), ["collection", "mode"])
    return out.assign(unit="narrative (path)", ci_method="partial r: pingouin (Fisher z); slope: OLS t interval (statsmodels)",
                      mc_family="the length slope of every collection x mode (t-test of the OLS coefficient)")
