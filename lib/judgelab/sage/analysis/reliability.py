"""SAGE reliability statistics (RQ1, RQ3): convergence, evaluator-validator agreement, mode
invariance, failure accounting, score trajectories.

Plain functions: tidy rows in (schema ``sage_rows_L4.parquet``, CONTRIBUTING.md), a DataFrame
with named columns out. A statistic that cannot be computed for a group (too few observations,
all scores equal, a missing category) gives NaN with a ``note`` saying why; it never raises for
data, only for input that breaks the schema (:class:`~judgelab.sage.analysis.scores.SageStatsError`).

Reference: the SAGE paper, "Statistical Analysis" and Tables 7, 8, 9, 12.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from judgelab.sage.analysis.scores import (
    LAYERS, STORY_KEYS, VALIDATOR_TRACKS, SageStatsError, final_scores, iter_groups, no_rows_note,
    require_columns, round_scores, scored, share_truncated, sort_groups, state_scale_and_truncation, story_scores,
    with_truncation,
)
from judgelab.stats import rules, tests
from judgelab.stats.bootstrap import cluster_bootstrap
from judgelab.stats.intervals import t_interval
from judgelab.stats.reliability import icc, interval_alpha_pairs, krippendorff_alpha

# Score differences are compared after rounding to the rules' tolerance (scores have one decimal),
# so that 4.3 - 4.0 (= 0.29999999999999982 in floating point) counts as a change of exactly 0.3,
# which is NOT below a 0.3 threshold, and 3.7 - 3.2 as exactly 0.5, NOT below 0.5.
_DECIMALS = rules.DECIMALS


def _by(by) -> list[str]:
    if by is None:
        return []
    return [by] if isinstance(by, str) else list(by)


# --------------------------------------------------------------------------- convergence

def convergence_items(rows: pd.DataFrame, threshold: float = 0.3) -> pd.DataFrame:
    """Per evaluated dimension: the evaluator's R4 and R5 scores, their change and convergence.

    ``change = s_R5 - s_R4``; ``converged = |change| < threshold`` (paper, Table 7 and 12:
    threshold 0.3). A dimension whose R4 or R5 reply failed has ``converged`` = NA and is counted
    as unpaired, never as converged. ``exact_zero`` is the original SAGE code's criterion
    (change exactly 0), kept to show the difference.
    """
    require_columns(rows, STORY_KEYS + ["track", "round", "dimension", "score", "status"])
    if threshold <= 0:
        raise SageStatsError(f"convergence threshold must be > 0, got {threshold}")
    keys = STORY_KEYS + ["dimension"]
    ev_all = rows[rows["track"] == "evaluator"]
    items = ev_all[keys].drop_duplicates()
    ev = scored(ev_all)
    r4 = ev[ev["round"] == 4].groupby(keys, dropna=False)["score"].mean().rename("r4")
    r5 = ev[ev["round"] == 5].groupby(keys, dropna=False)["score"].mean().rename("r5")
    out = items.merge(r4.reset_index(), on=keys, how="left").merge(r5.reset_index(), on=keys, how="left")
    out["change"] = (out["r5"] - out["r4"]).round(_DECIMALS)
    paired = out["change"].notna()
    out["converged"] = pd.array(np.where(paired, out["change"].abs() < threshold, False), dtype="boolean")
    out.loc[~paired, "converged"] = pd.NA
    out["exact_zero"] = pd.array(np.where(paired, out["change"] == 0, False), dtype="boolean")
    out.loc[~paired, "exact_zero"] = pd.NA
    return with_truncation(out.reset_index(drop=True), rows)


def layer_mean_convergence_items(rows: pd.DataFrame, threshold: float = 0.3) -> pd.DataFrame:
    """Per evaluation (story x layer x mode): the layer mean of the evaluator's R4 and R5 dimension
    scores, its change and whether it converged.

    ``mean_r4 = mean_d s_R4(d)``, ``mean_r5 = mean_d s_R5(d)``, ``change = mean_r5 - mean_r4``;
    ``converged = |change| < threshold`` (the paper's rule, Tables 7 and 12, applied to the layer's
    overall score instead of each dimension). Dimensions moving in opposite directions
    cancel: +0.4 and -0.4 give change 0. Only evaluations whose every dimension has an R4 and an R5
    score are paired; the others have ``converged`` = NA. Columns: story keys, n_dimensions,
    n_paired_dimensions, mean_r4, mean_r5, change, converged, exact_zero, truncated.
    """
    items = convergence_items(rows, threshold)
    g = items.groupby(STORY_KEYS, dropna=False)
    out = g.agg(n_dimensions=("dimension", "size"), n_paired_dimensions=("change", "count"),
                mean_r4=("r4", "mean"), mean_r5=("r5", "mean"), truncated=("truncated", "any")).reset_index()
    paired = out["n_paired_dimensions"].eq(out["n_dimensions"])
    out.loc[~paired, ["mean_r4", "mean_r5"]] = np.nan
    out["change"] = (out["mean_r5"] - out["mean_r4"]).round(_DECIMALS)
    out["converged"] = pd.array(np.where(paired, out["change"].abs() < threshold, False), dtype="boolean")
    out.loc[~paired, "converged"] = pd.NA
    out["exact_zero"] = pd.array(np.where(paired, out["change"] == 0, False), dtype="boolean")
    out.loc[~paired, "exact_zero"] = pd.NA
    return out


def _layer_mean_rate(lm: pd.DataFrame, key: dict, by: list[str]) -> dict:
    """The layer-mean convergence columns of one :func:`convergence_rate` group."""
    if "dimension" in by:
        return {"n_evaluations_paired": np.nan, "n_evaluations_converged": np.nan,
                "layer_mean_convergence_rate": np.nan, "layer_mean_rate_exact_zero": np.nan}
    sub = lm.merge(pd.DataFrame([key]), on=by) if by else lm
    n = int(sub["converged"].notna().sum())
    k = int(sub["converged"].sum(skipna=True))
    return {"n_evaluations_paired": n, "n_evaluations_converged": k,
            "layer_mean_convergence_rate": k / n if n else np.nan,
            "layer_mean_rate_exact_zero": float(sub["exact_zero"].sum(skipna=True)) / n if n else np.nan}


def convergence_rate(rows: pd.DataFrame, by: Sequence[str] | str | None = ("layer",),
                     threshold: float = 0.3) -> pd.DataFrame:
    """Convergence rate: share of dimensions with ``|s_R5 - s_R4| < threshold``, by group.

    ``convergence_rate = n_converged / n_paired`` where ``n_paired`` counts dimensions with both
    an R4 and an R5 score (paper, "Statistical Analysis": "calculate convergence rates by
    dimension, layer, mode, and story category"; Table 8: 98.8%). Columns: the ``by`` columns,
    n_items, n_paired, n_unpaired, n_converged, convergence_rate, rate_exact_zero (the original
    code's criterion), mean_abs_change; then the same test on the layer mean
    (:func:`layer_mean_convergence_items`: ``|mean_d s_R5 - mean_d s_R4| < threshold`` per
    evaluation): n_evaluations_paired, n_evaluations_converged, layer_mean_convergence_rate,
    layer_mean_rate_exact_zero (NaN when ``by`` holds ``dimension``: a layer mean spans all four);
    share_truncated (share of the group's evaluations whose content text was cut to head + tail),
    threshold, note.
    """
    by = _by(by)
    items = convergence_items(rows, threshold)
    require_columns(items, by, "rows (convergence groups)")
    lm = layer_mean_convergence_items(rows, threshold)
    recs = []
    for key, sub in iter_groups(items, by):
        n_paired = int(sub["converged"].notna().sum())
        n_conv = int(sub["converged"].sum(skipna=True))
        rec = {**key, "n_items": len(sub), "n_paired": n_paired, "n_unpaired": len(sub) - n_paired,
               "n_converged": n_conv,
               "convergence_rate": n_conv / n_paired if n_paired else np.nan,
               "rate_exact_zero": float(sub["exact_zero"].sum(skipna=True)) / n_paired if n_paired else np.nan,
               "mean_abs_change": float(sub["change"].abs().mean()) if n_paired else np.nan,
               **_layer_mean_rate(lm, key, by), "share_truncated": share_truncated(sub),
               "threshold": threshold, "note": ""}
        if not len(sub):
            rec["note"] = no_rows_note(key)
        elif not n_paired:
            rec["note"] = "no dimension has both an R4 and an R5 score (failed replies)"
        elif n_paired < len(sub):
            rec["note"] = f"{len(sub) - n_paired} dimension(s) without R4/R5 pair left out"
        recs.append(rec)
    out = pd.DataFrame(recs)
    if len(out):
        out = out.astype({"n_evaluations_paired": "Int64", "n_evaluations_converged": "Int64"})
    return out


# --------------------------------------------------------------------------- agreement

def track_pairs(rows: pd.DataFrame, validator: str = "validator_blind") -> pd.DataFrame:
    """Evaluator final (R5) and validator scores side by side, per story x layer x mode x dimension.

    ``diff = s_validator - s_evaluator``. Only dimensions scored by both tracks appear; ``truncated``
    is the evaluation's flag (both tracks read the same prepared text).
    """
    if validator not in VALIDATOR_TRACKS:
        raise SageStatsError(f"unknown validator track {validator!r}; choose {' or '.join(VALIDATOR_TRACKS)}")
    keys = STORY_KEYS + ["dimension"]
    ev = final_scores(rows, "evaluator").rename(columns={"score": "evaluator"})
    va = final_scores(rows, validator).rename(columns={"score": "validator"})
    out = ev.merge(va, on=keys, how="inner")
    out["diff"] = (out["validator"] - out["evaluator"]).round(_DECIMALS)
    out["track"] = validator
    return with_truncation(out, rows)


def track_agreement(rows: pd.DataFrame, validator: str = "validator_blind",
                    by: Sequence[str] | str | None = ("layer", "mode"),
                    threshold: float = 0.5) -> pd.DataFrame:
    """Evaluator-validator agreement by group: MAD and the share of dimensions within ``threshold``.

    ``MAD = mean |s_validator - s_evaluator|``; ``agreement_rate = mean(|diff| < threshold)``
    (paper, Table 7: "inter-rater agreement threshold MAD < 0.5"; Table 8: peer agreement > 94%,
    mean IRR difference < 0.3). ``mean_diff`` is the signed mean (validator minus evaluator).
    Columns: track, the ``by`` columns, n_pairs, mad, mean_diff, sd_diff, agreement_rate,
    share_truncated (share of the group's evaluations with a truncated content text), threshold, note.
    """
    by = _by(by)
    pairs = track_pairs(rows, validator)
    recs = []
    for key, sub in iter_groups(pairs, by):
        d = sub["diff"].to_numpy(float)
        rec = {"track": validator, **key, "n_pairs": len(d),
               "mad": float(np.mean(np.abs(d))) if len(d) else np.nan,
               "mean_diff": float(np.mean(d)) if len(d) else np.nan,
               "sd_diff": float(np.std(d, ddof=1)) if len(d) > 1 else np.nan,
               "agreement_rate": float(np.mean(np.abs(d) < threshold)) if len(d) else np.nan,
               "share_truncated": share_truncated(sub), "threshold": threshold, "note": _empty_pairs_note(pairs, sub, key, validator)}
        recs.append(rec)
    return pd.DataFrame(recs)


def _empty_pairs_note(pairs: pd.DataFrame, sub: pd.DataFrame, key: dict, validator: str) -> str:
    if not len(pairs):
        return f"no dimension scored by both the evaluator and {validator}"
    return "" if len(sub) else no_rows_note(key)


def _long(pairs: pd.DataFrame) -> pd.DataFrame:
    """Evaluator-validator pairs as long ratings (item, rater, score) for :mod:`judgelab.stats`."""
    return (pairs[["evaluator", "validator"]].reset_index(drop=True).rename_axis("item").reset_index()
            .melt(id_vars="item", var_name="rater", value_name="score"))


def _icc(pairs: pd.DataFrame) -> tuple[dict, str]:
    """ICC(2,1) with its 95% CI and ICC(3,1) between the two tracks; (values, note)."""
    res = icc(_long(pairs), "item", "rater", "score", forms=("ICC2", "ICC3")).set_index("form")
    out = {"icc2": res.loc["ICC2", "icc"], "icc2_ci95_low": res.loc["ICC2", "ci_low"],
           "icc2_ci95_high": res.loc["ICC2", "ci_high"], "icc3": res.loc["ICC3", "icc"]}
    return out, res["note"].iloc[0]


def _alpha(pairs: pd.DataFrame) -> tuple[float, str]:
    """Krippendorff's alpha (interval metric) between the two tracks; (alpha, note)."""
    a = krippendorff_alpha(_long(pairs), "item", "rater", "score", level="interval").iloc[0]
    return a["alpha"], a["note"]


def track_reliability(rows: pd.DataFrame, validator: str = "validator_blind",
                      by: Sequence[str] | str | None = ("layer",)) -> pd.DataFrame:
    """Inter-rater reliability of evaluator vs validator: ICC and Krippendorff's alpha by group.

    Units are story x mode x dimension scores; raters are the two tracks. ``icc2`` is ICC(2,1),
    two-way random effects, absolute agreement, single rater (Shrout & Fleiss 1979; McGraw & Wong
    1996), with its 95% CI, and ``icc3`` ICC(3,1) consistency (:func:`judgelab.stats.reliability.icc`).
    ``krippendorff_alpha`` is alpha with the interval metric, ``1 - D_o / D_e`` (Krippendorff 2011;
    :func:`judgelab.stats.reliability.krippendorff_alpha`). Both need >= 3 items (the rule of
    :mod:`judgelab.stats.rules`), else NaN with a note.
    """
    by = _by(by)
    pairs = track_pairs(rows, validator)
    recs = []
    for key, sub in iter_groups(pairs, by):
        iccs, note_icc = _icc(sub)
        alpha, note_alpha = _alpha(sub)
        empty = _empty_pairs_note(pairs, sub, key, validator)
        notes = empty or rules.join(note_icc, note_alpha)
        recs.append({"track": validator, **key, "n_pairs": len(sub), **iccs,
                     "krippendorff_alpha": alpha, "note": notes})
    return pd.DataFrame(recs)


# --------------------------------------------------------------------------- mode invariance

def _paired_tests(a: np.ndarray, b: np.ndarray) -> tuple[dict, str]:
    """Paired t-test and Wilcoxon signed-rank test of b vs a, with the rules' note when undefined."""
    t = tests.paired_ttest(b, a).iloc[0]
    w = tests.wilcoxon(b, a).iloc[0]
    res = {"t": t["t"], "df": t["df"], "p_t": t["p"], "wilcoxon_w": w["w"], "p_wilcoxon": w["p"]}
    return res, rules.join(t["note"], w["note"])


POOLED_OVERALL = "overall_story_x_layer"
"""Table 9's sensitivity row: the paper's pooled overall test, every story x layer pair one observation."""
MODE_CI_METHOD = "t interval (paired t for the difference; stories independent)"


def mode_invariance(story_scores: pd.DataFrame, overall: bool = True) -> pd.DataFrame:
    """Content-limit vs title-limit scores per layer: means, difference, paired t and Wilcoxon.

    Pairs are stories evaluated in both modes in a layer. ``difference = mean(title - content)``
    (paper, Table 9, sign as printed there); ``t`` is the paired-samples t statistic
    ``mean(d) / (sd(d) / sqrt(n))`` with ``n - 1`` df (:func:`judgelab.stats.tests.paired_ttest`);
    ``wilcoxon_w`` the Wilcoxon signed-rank statistic (:func:`judgelab.stats.tests.wilcoxon`, zero
    differences dropped). 95% CIs (``X_ci_low``, ``X_ci_high``) on the two means and the
    difference: t intervals over stories (the paired t interval for the difference).

    With ``overall``, two more rows: ``overall``, the story as the unit (a story's title - content
    difference averaged over the layers it is paired in, then tested over stories), and
    :data:`POOLED_OVERALL`, the paper's reading (all story x layer pairs pooled; pairs of one story
    are not independent: a sensitivity row). p-values (t and Wilcoxon separately) are adjusted by
    Holm and Bonferroni over the three layers and the story-level overall row (``mc_family``); the
    pooled row is its own family of one.
    ``share_truncated`` is the share of the paired *content-limit* evaluations whose text was cut
    to head + tail (their scores are of excerpts; NaN when ``story_scores`` has no ``truncated``).
    Columns: layer, unit, n_pairs, n_unpaired, content_mean (+ CI), title_mean (+ CI), difference
    (+ CI), abs_difference, sd_difference, t, df, p_t (+ holm, bonferroni), wilcoxon_w, p_wilcoxon
    (+ holm, bonferroni), mc_family, ci_method, share_truncated, note.
    """
    require_columns(story_scores, STORY_KEYS + ["score"], "story scores")
    wide = story_scores.pivot_table(index=["story_id", "layer"], columns="mode", values="score", aggfunc="mean")
    for m in ("content", "title"):
        if m not in wide.columns:
            wide[m] = np.nan
    wide = wide.reset_index()
    if "truncated" in story_scores.columns:
        content = story_scores[story_scores["mode"] == "content"]
        cut = content.groupby(["story_id", "layer"])["truncated"].any().rename("content_truncated")
        wide = wide.merge(cut.reset_index(), on=["story_id", "layer"], how="left")
    paired = wide.dropna(subset=["content", "title"])

    def one(label, allw, sub, unit="story"):
        a, b = sub["content"].to_numpy(float), sub["title"].to_numpy(float)
        tests, note = _paired_tests(a, b)
        d = b - a
        share = (float(sub["content_truncated"].fillna(False).astype(bool).mean())
                 if "content_truncated" in sub and len(sub) else np.nan)
        cis = {f"{k}_{side}": v for k, vals in (("content_mean", a), ("title_mean", b), ("difference", d))
               for side, v in zip(("ci_low", "ci_high"), t_interval(vals))}
        return {"layer": label, "unit": unit, "n_pairs": len(sub), "n_unpaired": len(allw) - len(sub),
                "content_mean": float(a.mean()) if len(a) else np.nan,
                "title_mean": float(b.mean()) if len(b) else np.nan,
                "difference": float(d.mean()) if len(d) else np.nan,
                "abs_difference": float(abs(d.mean())) if len(d) else np.nan,
                "sd_difference": float(d.std(ddof=1)) if len(d) > 1 else np.nan,
                **tests, **cis, "share_truncated": share, "note": note}

    layers = list(LAYERS) + sorted(set(wide["layer"]) - set(LAYERS))
    recs = []
    for layer in layers:
        rec = one(layer, wide[wide["layer"] == layer], paired[paired["layer"] == layer])
        if not (wide["layer"] == layer).any():
            rec["note"] = f"no rows for layer={layer}"
        recs.append(rec)
    if overall:
        per_story = paired.groupby("story_id").agg(content=("content", "mean"), title=("title", "mean"),
                                                   **({"content_truncated": ("content_truncated", "any")}
                                                      if "content_truncated" in paired else {}))
        recs.append(one("overall", wide.drop_duplicates("story_id"), per_story))
        recs.append(one(POOLED_OVERALL, wide, paired, unit="story x layer (the paper's pooled reading; sensitivity)"))
    return _mode_adjust(pd.DataFrame(recs))


def _mode_adjust(out: pd.DataFrame) -> pd.DataFrame:
    """Holm / Bonferroni columns of :func:`mode_invariance` (families in its docstring)."""
    out = out.copy()
    main = (out["layer"] != POOLED_OVERALL).to_numpy()
    for test in ("p_t", "p_wilcoxon"):
        for j, method in enumerate(tests.MC_METHODS):
            adj = np.full(len(out), np.nan)
            adj[main] = tests.adjust(out.loc[main, test], int(main.sum()), method)
            adj[~main] = tests.adjust(out.loc[~main, test], int((~main).sum()), method) if (~main).any() else []
            out.insert(list(out.columns).index(test) + 1 + j, f"{test}_{method}", adj)
    fam = f"Table 9: {int(main.sum())} paired tests (layers + story-level overall), t and Wilcoxon separately"
    out["mc_family"] = np.where(main, fam, "Table 9 sensitivity: the pooled overall row alone")
    out["ci_method"] = MODE_CI_METHOD
    return out


# --------------------------------------------------------------------------- failures

def failure_accounting(rows: pd.DataFrame, summary: pd.DataFrame | None = None,
                       by: Sequence[str] | str | None = ("layer", "mode")) -> pd.DataFrame:
    """Evaluation success, repairs and failures by group (paper, Table 8 "Evaluation Success").

    From the rows: ``n_evaluations`` (story x layer x mode), ``n_replies`` (story x layer x mode x
    track x round), ``reply_success_rate`` = share of replies whose every dimension has status ok
    (the paper's "parsing success"), ``n_failed_rows`` and ``n_failed_rows_scored`` (failed rows
    that nevertheless carry a score; must be 0, failures are never scored), ``share_truncated``
    (share of the evaluations, not rows, whose content text was cut to head + tail).
    From the summary, when given: ``success_rate`` = share of evaluations with status ok,
    ``n_repairs`` and ``n_failures`` summed.
    """
    by = _by(by)
    require_columns(rows, STORY_KEYS + ["track", "round", "status", "score"])
    r = rows.copy()
    r["_failed"] = r["status"].ne("ok")
    r["_scored"] = np.isfinite(pd.to_numeric(r["score"], errors="coerce"))
    reply_keys = STORY_KEYS + ["track", "round"]
    replies = r.groupby(reply_keys, dropna=False)["_failed"].any().rename("reply_failed").reset_index()
    recs = []
    for key, sub in iter_groups(r, by):
        rep = replies.merge(pd.DataFrame([key]), on=by) if by else replies
        evals = sub.groupby(STORY_KEYS, dropna=False)["_failed"].any()
        rec = {**key, "n_evaluations": len(evals),
               "n_evaluations_with_failure": int(evals.sum()),
               "n_replies": len(rep),
               "reply_success_rate": float(1 - rep["reply_failed"].mean()) if len(rep) else np.nan,
               "n_failed_rows": int(sub["_failed"].sum()),
               "n_failed_rows_scored": int((sub["_failed"] & sub["_scored"]).sum()),
               "share_truncated": share_truncated(sub),
               "note": ""}
        if not len(sub):
            rec["note"] = no_rows_note(key)
        if rec["n_failed_rows_scored"]:
            rec["note"] = "failed rows carry a score: the writer broke the contract (failures are never scored)"
        recs.append(rec)
    out = pd.DataFrame(recs)
    if summary is not None and len(summary):
        require_columns(summary, ["status", "n_repairs", "n_failures"] + by, "summary")
        srecs = []
        for key, sub in iter_groups(summary, by):
            srecs.append({**key, "n_summary": len(sub),
                          "success_rate": float(sub["status"].eq("ok").mean()) if len(sub) else np.nan,
                          "n_repairs": int(pd.to_numeric(sub["n_repairs"], errors="coerce").fillna(0).sum()),
                          "n_failures": int(pd.to_numeric(sub["n_failures"], errors="coerce").fillna(0).sum())})
        s = pd.DataFrame(srecs)
        out = out.merge(s, on=by, how="outer") if by else pd.concat([out, s], axis=1)
    return state_scale_and_truncation(out)


# --------------------------------------------------------------------------- trajectories

def round_trajectories(rows: pd.DataFrame, by: Sequence[str] | str | None = ("layer", "category"), *,
                       n_boot: int = 0, seed: int = 0) -> pd.DataFrame:
    """Mean evaluator score per round (1-5) by group, for Figure 2.

    The unit is a story's mean over dimensions in one round and mode; per group and round:
    n, mean, sd, sem = sd / sqrt(n), share_truncated (share of those evaluations whose content text
    was cut to head + tail). With ``n_boot`` > 0 also ``mean_ci_low`` / ``mean_ci_high``: a cluster
    bootstrap over stories (within category when ``by`` has it), with ``unit`` and ``ci_method``:
    the SEM treats a story's two modes as independent. Columns: the ``by`` columns, round, n, mean
    (+ CI), sd, sem, share_truncated, truncation_note, scale.
    """
    by = _by(by)
    rs = round_scores(rows)
    if rs.empty:
        return pd.DataFrame(columns=by + ["round", "n", "mean", "sd", "sem", "share_truncated"])
    g = rs.groupby(by + ["round"], dropna=False)
    out = g.agg(n=("score", "count"), mean=("score", "mean"), sd=("score", "std"),
                share_truncated=("truncated", "mean")).reset_index()
    out.insert(out.columns.get_loc("share_truncated"), "sem", out["sd"] / np.sqrt(out["n"]))
    if n_boot:
        keys = by + ["round"]

        def stat(f):  # every group mean of one resample of stories
            m = f.groupby(keys, dropna=False)["score"].mean()
            return {"|".join(map(str, k if isinstance(k, tuple) else (k,))): float(v) for k, v in m.items()}

        names = ["|".join(map(str, k)) for k in out[keys].itertuples(index=False)]
        boot = cluster_bootstrap(rs, stat, cluster="story_id", strata="category" if "category" in by else None,
                                 n_boot=n_boot, seed=seed, unit="story").set_index("statistic")
        pos = out.columns.get_loc("mean") + 1
        out.insert(pos, "mean_ci_low", [boot.at[k, "ci_low"] if k in boot.index else np.nan for k in names])
        out.insert(pos + 1, "mean_ci_high", [boot.at[k, "ci_high"] if k in boot.index else np.nan for k in names])
        out["unit"] = "story (a story's modes resampled together)"
        out["ci_method"] = boot["ci_method"].iloc[0] if len(boot) else ""
    return state_scale_and_truncation(sort_groups(out, by + ["round"]))


# --------------------------------------------------------------------------- breakdowns

def convergence_breakdown(rows: pd.DataFrame, threshold: float = 0.3,
                          groupings=(("layer",), ("mode",), ("category",), ("layer", "mode"),
                                     ("layer", "dimension"))) -> pd.DataFrame:
    """:func:`convergence_rate` for several groupings stacked in one long table.

    The paper computes convergence "by dimension, layer, mode, and story category". Columns:
    grouping (e.g. ``"layer x mode"``), group (e.g. ``"L4 / content"``), then the rate columns
    (per dimension and on the layer mean), truncation_note and scale.
    """
    parts = [convergence_rate(rows, by=None, threshold=threshold).assign(grouping="all", group="all")]
    for by in groupings:
        t = convergence_rate(rows, by=list(by), threshold=threshold)
        t["grouping"] = " x ".join(by)
        t["group"] = t[list(by)].astype(str).agg(" / ".join, axis=1)
        parts.append(t.drop(columns=list(by)))
    out = pd.concat(parts, ignore_index=True)
    first = ["grouping", "group"]
    return state_scale_and_truncation(out[first + [c for c in out.columns if c not in first]])


def agreement_breakdown(rows: pd.DataFrame, threshold: float = 0.5,
                        by: Sequence[str] = ("layer", "mode")) -> pd.DataFrame:
    """Agreement (MAD, share within ``threshold``) and reliability (ICC, alpha) for both validator
    tracks, overall and by ``by``: one long table with a ``track`` column."""
    parts = []
    for track in VALIDATOR_TRACKS:
        for grp in ([], list(by)):
            ag = track_agreement(rows, track, by=grp, threshold=threshold)
            rl = track_reliability(rows, track, by=grp)
            keys = ["track"] + grp
            m = ag.merge(rl.drop(columns=["n_pairs"], errors="ignore"), on=keys, how="left", suffixes=("", "_rel"))
            if "note_rel" in m:
                m["note"] = [("; ".join(x for x in (a, b) if isinstance(x, str) and x)) for a, b in
                             zip(m["note"], m["note_rel"])]
                m = m.drop(columns="note_rel")
            for col in by:
                if col not in m:
                    m[col] = "all"
            parts.append(m)
    out = pd.concat(parts, ignore_index=True)
    first = ["track"] + list(by)
    return state_scale_and_truncation(out[first + [c for c in out.columns if c not in first]])


# --------------------------------------------------------------------------- intervals (Table 8)

def _rate(col: str):
    """A bootstrap statistic: the mean of the non-missing ``col`` (a share when boolean)."""
    def stat(f: pd.DataFrame) -> dict[str, float]:
        v = pd.to_numeric(f[col], errors="coerce").dropna()
        return {col: float(v.mean()) if len(v) else np.nan}
    return stat


def _boot_one(frame: pd.DataFrame, statistic, n_boot: int, seed: int, unit: str = "story") -> dict[str, dict]:
    """``{statistic name: {ci_low, ci_high, ci_method, unit}}`` by a cluster bootstrap over stories."""
    if frame.empty:
        return {}
    b = cluster_bootstrap(frame, statistic, cluster="story_id", n_boot=n_boot, seed=seed, unit=unit)
    return {r.statistic: {"ci_low": r.ci_low, "ci_high": r.ci_high, "ci_method": r.ci_method, "unit": unit,
                          "note": r.note} for r in b.itertuples()}


def reliability_intervals(rows: pd.DataFrame, summary: pd.DataFrame | None = None, *,
                          convergence_threshold: float = 0.3, agreement_threshold: float = 0.5,
                          n_boot: int = 2000, seed: int = 0) -> dict[tuple[str, str], dict]:
    """95% CIs of Table 8's rates, ``{(metric, track): {ci_low, ci_high, ci_method, unit}}``.

    Dimensions, evaluations and replies are nested in stories, so every rate gets a cluster
    bootstrap over stories (seeded, percentile): convergence (per dimension, on the layer mean,
    exact zero), success and parsing rates, peer agreement, MAD and Krippendorff's alpha per
    validator track, and the largest mode difference |mean(title - content)| over layers. The ICC's
    CI is the F-based one of :func:`track_reliability` (items = story x mode x dimension).
    """
    out: dict[tuple[str, str], dict] = {}
    items = convergence_items(rows, convergence_threshold)
    items = items.assign(converged=items["converged"].astype("Float64"), exact_zero=items["exact_zero"].astype("Float64"))
    for metric, col in (("convergence_rate", "converged"), ("convergence_rate_exact_zero", "exact_zero")):
        got = _boot_one(items[["story_id", col]], _rate(col), n_boot, seed)
        if col in got:
            out[(metric, "")] = got[col]
    lm = layer_mean_convergence_items(rows, convergence_threshold)
    got = _boot_one(lm.assign(converged=lm["converged"].astype("Float64"))[["story_id", "converged"]],
                    _rate("converged"), n_boot, seed)
    if "converged" in got:
        out[("convergence_rate_layer_mean", "")] = got["converged"]
    reply_keys = STORY_KEYS + ["track", "round"]
    replies = rows.groupby(reply_keys, dropna=False)["status"].apply(lambda s: float(s.eq("ok").all())).rename("ok")
    got = _boot_one(replies.reset_index()[["story_id", "ok"]], _rate("ok"), n_boot, seed)
    if "ok" in got:
        out[("parsing_success", "")] = got["ok"]
    if summary is not None and len(summary) and "story_id" in summary:
        s = summary.assign(ok=summary["status"].eq("ok").astype(float))[["story_id", "ok"]]
        got = _boot_one(s, _rate("ok"), n_boot, seed)
        if "ok" in got:
            out[("success_rate", "")] = got["ok"]
    for track in VALIDATOR_TRACKS:
        pairs = track_pairs(rows, track)
        if pairs.empty:
            continue
        pairs = pairs.assign(agree=(pairs["diff"].abs() < agreement_threshold).astype(float),
                             absdiff=pairs["diff"].abs())
        # alpha by its closed form for two complete raters (the krippendorff package's value, fast)
        got = _boot_one(pairs, lambda f: {"agree": float(f["agree"].mean()), "absdiff": float(f["absdiff"].mean()),
                                          "alpha": interval_alpha_pairs(f["evaluator"], f["validator"])},
                        n_boot, seed)
        for metric, key in (("peer_agreement", "agree"), ("mean_irr_difference", "absdiff"),
                            ("krippendorff_alpha_interval", "alpha")):
            out[(metric, track)] = got[key]
    out.update(_mode_max_interval(story_scores(rows), n_boot, seed))
    return out


def _mode_max_interval(story: pd.DataFrame, n_boot: int, seed: int) -> dict[tuple[str, str], dict]:
    """The bootstrap CI of max over layers of |mean(title - content)| (stories resampled)."""
    wide = story.pivot_table(index=["story_id", "layer"], columns="mode", values="score", aggfunc="mean")
    if not {"content", "title"} <= set(wide.columns):
        return {}
    d = (wide["title"] - wide["content"]).dropna().rename("d").reset_index()
    if d.empty:
        return {}

    def stat(f):
        m = f.groupby("layer")["d"].mean().abs()
        return {"max": float(m.max()) if len(m) else np.nan}

    got = _boot_one(d, stat, n_boot, seed)
    return {("mode_invariance_max_abs_diff", ""): got["max"]} if "max" in got else {}
