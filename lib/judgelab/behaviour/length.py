"""Length: do the judges' scores follow length rather than the text?

**Intervention (SAGE)** (:func:`length_requests`, :func:`intervention_table`): the planted
study's stories and blind validator call, the story *cut* to a fraction of its words or *padded*
with its own paragraphs again (:func:`resize`); the shift from the cached unresized call per
fraction, beside the planted study's noise floor, and the within-story slope on log tokens.

**Observation (SAGE)**, per layer and mode, one row per story: its final score and the log of the
**story's tokens as sent** (``PreparedInput.text_tokens``, counted by the judge's tokenizer: the
story part of the message after SAGE's preparation, not the whole message and not the corpus' word
count): :func:`partial_correlation` (category held fixed) and :func:`sage_length_models` (each
category's gap from canonical without and with the length term). Title mode is the **negative
control**: the judge sees no text there, so a slope in title mode is the part of the association
that is not the judge reading length. **Cut texts are left out**: a story SAGE cut head and tail to
its context budget is sent at about the budget's tokens whatever its length, so among cut texts
the tokens sent measure where the cut fell, not the story; each row counts the stories left out,
and where every text was cut (the demo) there is no model, and the note says why.

**Narrative judges** (:func:`narrative_length_models`): the endpoint pair as a fixed effect, so
the length slope compares the two paths of one pair, at equal minimum coherence and method.

Too few units or no variation gives NaN with a note naming why.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pingouin as pg
import statsmodels.formula.api as smf

from judgelab.stats import rules
from judgelab.stats.tests import adjust

CATEGORY_ORDER = ("canonical", "pulp", "llm")


def sent_tokens(items) -> pd.DataFrame:
    """story_id, ``tokens_sent`` (the content-mode material's story tokens as sent), ``cut`` (SAGE's
    preparation cut the story head and tail) and ``original_tokens`` (before the cut) of SAGE items."""
    return pd.DataFrame([{"story_id": it.story_id, "tokens_sent": it.prepared.text_tokens,
                          "cut": bool(it.prepared.truncated), "original_tokens": it.prepared.original_tokens}
                         for it in items if it.mode == "content"]).drop_duplicates("story_id")


def story_units(summaries: pd.DataFrame, sent: pd.DataFrame) -> pd.DataFrame:
    """One row per layer x mode x story: score, category, tokens sent and their log, and ``cut``
    (False where ``sent`` does not say)."""
    tokens = sent.set_index("story_id")["tokens_sent"]
    cut = sent.set_index("story_id")["cut"].astype(bool) if "cut" in sent else pd.Series(False, index=tokens.index)
    missing = sorted(set(summaries["story_id"]) - set(tokens.index))
    if missing:
        raise ValueError(f"sage summaries name stories without a prepared text: {missing[:5]}")
    df = summaries[["story_id", "category", "layer", "mode", "overall_score"]].rename(columns={"overall_score": "score"})
    df = df.assign(tokens_sent=df["story_id"].map(tokens).astype(float), cut=df["story_id"].map(cut).astype(bool))
    if (df["tokens_sent"] <= 0).any():
        bad = df.loc[df["tokens_sent"] <= 0, "story_id"].tolist()
        raise ValueError(f"prepared texts: tokens sent must be positive to take their log (stories {bad[:5]})")
    df["log_tokens"] = np.log(df["tokens_sent"])
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
    few = rules.too_few(n, len(covar) + 4, "units") + f" for {len(covar)} covariates" if n < len(covar) + 4 else ""
    flat = next((f"no variation: every {c} equals {df[c].iloc[0]:g}" for c in (y, x) if n and rules.is_constant(df[c])), "")
    if few or flat:
        return {"n": n, "r": np.nan, "r_ci_low": np.nan, "r_ci_high": np.nan, "p": np.nan, "note": few or flat}
    res = pg.partial_corr(data=df, x=x, y=y, covar=covar or None, method="pearson")
    # pingouin renamed its columns in 0.6 (CI95%, p-val -> CI95, p_val): read either
    lo, hi = res["CI95" if "CI95" in res else "CI95%"].iloc[0]
    p = res["p_val" if "p_val" in res else "p-val"].iloc[0]
    return {"n": n, "r": float(res["r"].iloc[0]), "r_ci_low": float(lo), "r_ci_high": float(hi),
            "p": float(p), "note": ""}


def ols_problem(df: pd.DataFrame, y: str, x: str, n_params: int) -> str:
    """Why an OLS slope of ``y`` on ``x`` cannot be estimated ("" when it can): too few units for
    the parameters (none left for the residual), or no variation in ``y`` or in ``x``."""
    if len(df) < n_params + 1:
        return rules.too_few(len(df), n_params + 1, "units") + f" for {n_params} parameters"
    if rules.is_constant(df[y]):
        return f"no variation: every {y} equals {df[y].iloc[0]:g}"
    if rules.is_constant(df[x]):
        return f"no variation: every {x} equals {df[x].iloc[0]:g}"
    return ""


def ols_terms(df: pd.DataFrame, formula: str) -> dict[str, tuple[float, float, float, float]]:
    """``{term: (coefficient, 95% low, 95% high, p)}`` of an OLS fit (statsmodels); {} when the design
    has no residual degrees of freedom or no residual variance (a perfect fit has no interval)."""
    fit = smf.ols(formula, data=df).fit()
    if fit.df_resid < 1 or rules.is_zero_spread(fit.mse_resid, rules.tolerance(df[fit.model.endog_names])):
        return {}
    ci = fit.conf_int(0.05)
    return {t: (float(fit.params[t]), float(ci.loc[t, 0]), float(ci.loc[t, 1]), float(fit.pvalues[t]))
            for t in fit.params.index}


def cut_note(n_cut: int, n_all: int, mode: str = "content") -> str:
    """What leaving the cut texts out did to one layer x mode ("" when none was cut); title mode
    leaves out the same stories, so that the negative control matches the content rows."""
    if not n_cut:
        return ""
    if mode == "title":
        return (f"{n_cut} of {n_all} stories left out, as in content mode (their content-mode text was cut head "
                "and tail)" + ("; no model" if n_cut == n_all else ""))
    if n_cut == n_all:
        return (f"every text ({n_all}) was cut head and tail to SAGE's context budget: the tokens sent measure "
                "where the cut fell, not the story's length; no model")
    return (f"{n_cut} of {n_all} stories cut head and tail to SAGE's context budget left out (their tokens sent "
            "measure the cut, not the story)")


def sage_length_models(units: pd.DataFrame) -> pd.DataFrame:
    """Per layer x mode, on the stories sent whole (cut texts left out and counted, ``n_cut``): the
    length slope (per unit of log story tokens sent) and its partial correlation, and each
    category's gap from canonical without / with the length term (see the module docstring)."""
    rows = []
    units = units.assign(cut=units["cut"].astype(bool)) if "cut" in units else units.assign(cut=False)
    for (layer, mode), g in units.groupby(["layer", "mode"], sort=True):
        n_all, n_cut = len(g), int(g["cut"].sum())
        cut_why = cut_note(n_cut, n_all, mode)
        g, dummies = _dummies(g[~g["cut"]], "category")
        pc = partial_correlation(g, "log_tokens", "score", dummies)
        cats = " + ".join(dummies)
        problem = ols_problem(g, "score", "log_tokens", len(dummies) + 2)
        plain = ols_terms(g, f"score ~ {cats}" if cats else "score ~ 1") if not ols_problem(g, "score", "log_tokens", len(dummies) + 1) else {}
        full = ols_terms(g, f"score ~ {cats + ' + ' if cats else ''}log_tokens") if not problem else {}
        slope = full.get("log_tokens", (np.nan,) * 4)
        role = "negative control: the judge sees no text" if mode == "title" else "the judge reads the text"
        base = {"layer": layer, "mode": mode, "role": role, "n": len(g), "n_cut": n_cut,
                "partial_r": pc["r"], "partial_r_ci_low": pc["r_ci_low"],
                "partial_r_ci_high": pc["r_ci_high"], "partial_r_p": pc["p"],
                "slope_log_tokens": slope[0], "slope_log_tokens_ci_low": slope[1], "slope_log_tokens_ci_high": slope[2],
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
                         "note": rules.join(cut_why, "" if n_cut == n_all else pc["note"],
                                            "" if n_cut == n_all else
                                            (problem or ("" if full else "no residual variance: no interval")))})
    out = _adjust_slopes(pd.DataFrame(rows), ["layer", "mode"])
    return out.assign(unit="story (cut texts left out)",
                      covariate="log tokens of the story as sent (the judge's tokenizer; the story part of the "
                                "message, not the whole message)",
                      ci_method="partial r: pingouin (Fisher z); coefficients: OLS t intervals (statsmodels)",
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


def pair_differences(g: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """Per endpoint pair, the first method's path minus the second's (methods in sorted order:
    maxcap - random) in ``score_mean``, ``length`` and ``min_coherence``: one row per pair, the unit.
    ("", why) when the pairs do not hold exactly two methods."""
    methods = sorted(g["method"].unique())
    if len(methods) != 2:
        return pd.DataFrame(), f"within-pair differences need two methods per pair, not {len(methods)}"
    cols = ["score_mean", "length", "min_coherence"]
    w = g.pivot_table(index="pair", columns="method", values=cols, aggfunc="mean")
    d = pd.DataFrame({c: w[(c, methods[0])] - w[(c, methods[1])] for c in cols}).dropna()
    return d.reset_index(), f"{methods[0]} - {methods[1]}"


def narrative_length_models(judged: pd.DataFrame) -> pd.DataFrame:
    """Per collection x mode: ``score_mean ~ length + min_coherence + C(method) + C(pair)`` (OLS, the
    endpoint pair a fixed effect) and the partial correlation of the within-pair differences of
    score and length given the difference of minimum coherence (:func:`pair_differences`): the
    endpoint pair is the unit of both, so a length-score association *between* pairs counts for
    neither."""
    rows = []
    for (coll, mode), g in judged.dropna(subset=["score_mean"]).groupby(["collection", "mode"], sort=True):
        g = g.assign(length=g["length"].astype(float), pair=g["pair_id"].astype(str))
        terms = ["length", "min_coherence"] + [f"C({c})" for c in ("method", "pair") if g[c].nunique() > 1]
        n_params = 1 + 2 + (g["method"].nunique() - 1) + (g["pair"].nunique() - 1)
        problem = ols_problem(g, "score_mean", "length", n_params)
        fit = ols_terms(g, "score_mean ~ " + " + ".join(terms)) if not problem else {}
        slope = fit.get("length", (np.nan,) * 4)
        diffs, what = pair_differences(g)
        pc = (partial_correlation(diffs, "length", "score_mean", ["min_coherence"]) if len(diffs)
              else {"n": 0, "r": np.nan, "r_ci_low": np.nan, "r_ci_high": np.nan, "p": np.nan, "note": what})
        rows.append({"collection": coll, "mode": mode, "n": len(g), "n_pairs": g["pair"].nunique(),
                     "partial_r": pc["r"], "partial_r_ci_low": pc["r_ci_low"],
                     "partial_r_ci_high": pc["r_ci_high"], "partial_r_p": pc["p"], "partial_r_n_pairs": pc["n"],
                     "slope_length": slope[0], "slope_length_ci_low": slope[1], "slope_length_ci_high": slope[2],
                     "slope_p": slope[3],
                     "note": rules.join(f"partial r: {pc['note']}" if pc["note"] else "",
                                        f"slope: {problem}" if problem else ("" if fit else "slope: no residual variance"))})
    out = _adjust_slopes(pd.DataFrame(rows), ["collection", "mode"])
    return out.assign(unit="endpoint pair",
                      model="score_mean ~ length + min_coherence + C(method) + C(pair)",
                      partial_r_on="within-pair differences (maxcap - random) of score and length, given that of "
                                   "minimum coherence; n = endpoint pairs",
                      ci_method="partial r: pingouin (Fisher z over pairs); slope: OLS t interval (statsmodels)",
                      mc_family="the length slope of every collection x mode (t-test of the OLS coefficient)")


# ---------------------------------------------------------------- the intervention

LENGTH_VERSION = "length-v1"


def resize(text: str, fraction: float) -> str:
    """``text`` (paragraphs separated by blank lines) at ``fraction`` of its words: cut (< 1) to its
    first words, whole paragraphs first and the last one cut; padded (> 1) with its own paragraphs
    again from the first (repeated scene text of the story itself), the last one cut."""
    if fraction <= 0:
        raise ValueError(f"length fraction must be positive, not {fraction}")
    paras = [p for p in text.split("\n\n") if p.split()]
    total = sum(len(p.split()) for p in paras)
    target = max(1, round(total * float(fraction)))
    out, n, i = [], 0, 0
    while n < target:
        words = paras[i % len(paras)].split()
        take = words[: target - n]
        out.append(" ".join(take) if len(take) < len(words) else paras[i % len(paras)])
        n += len(take)
        i += 1
    return "\n\n".join(out)


def length_requests(items, cfg, fractions, seeds: int = 1) -> tuple[list[dict], list]:
    """(meta, requests): each item's blind validator call at fraction 1 and at ``fractions``, every
    one at the planted study's ``seeds`` seed indices (:func:`judgelab.behaviour.planted.at_seed`);
    ``meta["text"]`` is the story as sent (counted, then dropped, by :func:`run_intervention`)."""
    from judgelab.behaviour import planted

    meta, reqs = [], []
    for it in items:
        body = planted.material_body(it.prepared.material)
        for f in (1.0, *[float(x) for x in fractions if float(x) != 1.0]):
            text = body if f == 1.0 else resize(body, f)
            req = planted.blind_request(it, cfg, None if f == 1.0 else text)
            if f != 1.0:
                req = req.model_copy(update={"template_version": f"{req.template_version}+{LENGTH_VERSION}",
                                             "tags": {**req.tags, "notebook": "12", "probe": "length", "fraction": f}})
            for r in range(int(seeds)):
                reqs.append(planted.at_seed(req, r) if r else req)
                meta.append({"study": "sage", "unit": it.story_id, "story_id": it.story_id, "category": it.category,
                             "layer": it.layer, "fraction": f, "seed_index": r, "words_sent": len(text.split()),
                             "cut_before": bool(it.prepared.truncated), "text": text})
    return meta, reqs


def run_study(gw, corpus: pd.DataFrame, stories: pd.DataFrame, knobs: dict, profile) -> pd.DataFrame:
    """The intervention on the planted study's stories (``planted_per_category``, its layer, content
    mode), cut and padded to ``knobs["length_fractions"]`` at the planted study's ``seeds``:
    :func:`run_intervention`'s frame; ``profile``: the run's resolved configuration (:func:`judgelab.config.of`)."""
    from judgelab import config
    from judgelab.behaviour import selection

    resolved = config.of(profile)
    items, cfg = selection.planted_items(corpus, stories, knobs, resolved, gw.count_tokens)
    return run_intervention(gw, items, cfg, knobs["length_fractions"], resolved.profile, int(knobs["seeds"]))


def run_intervention(gw, items, cfg, fractions, profile: str, seeds: int = 1) -> pd.DataFrame:
    """Send :func:`length_requests` through the gateway: one row per call, its score and
    ``story_tokens`` (the story as sent, the judge's tokenizer: the scale the observational model
    uses); ``cut_before``: SAGE's preparation had already cut the story (head and tail kept)."""
    from judgelab.behaviour import planted
    from judgelab.gateway.types import sent_columns

    meta, reqs = length_requests(items, cfg, fractions, seeds)
    rows = []
    for m, r in zip(meta, gw.run_batch(reqs, desc="length intervention")):
        ok = r.status == "ok" and r.parsed is not None
        m = dict(m)
        text = m.pop("text")
        rows.append({**m, "story_tokens": gw.count_tokens(text),
                     "score": planted.sage_score(r.parsed) if ok else np.nan, "status": "ok" if ok else "failed",
                     "cached": bool(r.cached), **sent_columns(r), "backend": r.backend, "model": r.model,
                     "profile": profile})
    return pd.DataFrame(rows)


def intervention_table(calls: pd.DataFrame, noise_floor: float = np.nan) -> pd.DataFrame:
    """Per fraction: the shift resized - baseline, taken within a seed and averaged over the seeds
    (points and scale units; Student t over stories, none below ``planted.MIN_UNITS``) beside the
    planted study's noise floor from the same seeds; and one row with the within-story slope of
    score on the log of the story's tokens as sent (``score ~ log_story_tokens + C(story_id)``, OLS
    t interval). The note says when SAGE's preparation had cut a story before it was resized."""
    from judgelab.behaviour import planted

    ok = calls[calls["status"] == "ok"]
    seed_col = ok["seed_index"] if "seed_index" in ok else pd.Series(0, index=ok.index)
    ok = ok.assign(seed_index=seed_col)
    base = ok[ok["fraction"] == 1.0].set_index(["story_id", "seed_index"])["score"]
    cut = sorted(set(ok.loc[ok.get("cut_before", pd.Series(False, index=ok.index)).astype(bool), "story_id"]))
    cut_note = (f"{len(cut)} of {ok['story_id'].nunique()} stories were already cut (head and tail kept) "
                "before resizing: their fractions are of the cut text" if cut else "")
    rows = []
    for f, g in ok[ok["fraction"] != 1.0].groupby("fraction", sort=True):
        idx = pd.MultiIndex.from_arrays([g["story_id"], g["seed_index"]])
        shift = g["score"].to_numpy() - base.reindex(idx).to_numpy(dtype=float)
        m = planted.unit_mean(shift, g["story_id"], "stories")
        rows.append({"estimand": f"shift at {f:g} x the words (resized - baseline, within seed)", "fraction": f,
                     "n_units": m["n_units"], "n_seeds": int(g["seed_index"].nunique()), "value": m["mean"],
                     "ci_low": m["ci_low"], "ci_high": m["ci_high"],
                     "value_scale": m["mean"] / planted.SCALE_RANGE["sage"], "noise_floor": noise_floor,
                     "note": rules.join(m["note"], cut_note)})
    d = ok.assign(log_tokens=np.log(ok["story_tokens"].astype(float)), story=ok["story_id"].astype(str))
    n_params = 2 + d["story"].nunique() - 1
    problem = ols_problem(d, "score", "log_tokens", n_params)
    fit = ols_terms(d, "score ~ log_tokens" + (" + C(story)" if d["story"].nunique() > 1 else "")) if not problem else {}
    slope = fit.get("log_tokens", (np.nan,) * 4)
    n_stories = d["story"].nunique()
    # the story is the unit: below planted.MIN_UNITS stories the slope is shown without an interval
    few = planted.too_few_units(n_stories).replace("units", "stories", 1) if n_stories < planted.MIN_UNITS else ""
    rows.append({"estimand": "within-story slope per log story token sent", "fraction": np.nan,
                 "n_units": n_stories, "n_seeds": int(d["seed_index"].nunique()), "value": slope[0],
                 "ci_low": np.nan if few else slope[1], "ci_high": np.nan if few else slope[2],
                 "value_scale": slope[0] / planted.SCALE_RANGE["sage"], "noise_floor": noise_floor,
                 "note": rules.join(few, problem or ("" if fit else "no residual variance: no interval"), cut_note)})
    return pd.DataFrame(rows).assign(
        unit="story", filler="the story's own paragraphs repeated from the first",
        tokens="the story's tokens as sent (the judge's tokenizer), as in the observational model",
        ci_method=f"shifts: {planted.CI_METHOD}; slope: OLS t interval (statsmodels)")
