"""SAGE reliability statistics (RQ1, RQ3; the paper's "Statistical Analysis", Tables 7, 8, 9, 12):
convergence, evaluator-validator agreement, mode invariance, failures, score trajectories.

Tidy rows in (CONTRIBUTING.md), one row per group out; a group that cannot be computed gives NaN
with a ``note``; only input that breaks the schema raises (``SageStatsError``).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from judgelab.sage.analysis.scores import (
    LAYERS, STORY_KEYS, VALIDATOR_TRACKS, SageStatsError, by_columns, final_scores, iter_groups,
    no_rows_note, require_columns, round_scores, scored, share_truncated, sort_groups,
    state_scale_and_truncation, story_scores, with_truncation,
)
from judgelab.stats import rules, tests
from judgelab.stats.bootstrap import cluster_bootstrap
from judgelab.stats.intervals import t_interval
from judgelab.stats.reliability import icc, interval_alpha_pairs, krippendorff_alpha

# Differences are rounded to the rules' tolerance before comparing, so that 4.3 - 4.0
# (0.29999999999999982 in floating point) is a change of exactly 0.3, NOT below a 0.3 threshold.
_DECIMALS = rules.DECIMALS


# --------------------------------------------------------------------------- convergence

def convergence_items(rows: pd.DataFrame, threshold: float = 0.3) -> pd.DataFrame:
    """Per evaluated dimension: R4 and R5 scores, ``change = s_R5 - s_R4`` and ``converged =
    |change| < threshold`` (paper, Tables 7 and 12: 0.3); NA when R4 or R5 failed (unpaired).
    ``exact_zero`` is the original SAGE code's criterion (change exactly 0)."""
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
    """Per evaluation (story x layer x mode): :func:`convergence_items`' rule on the layer mean,
    ``|mean_d s_R5(d) - mean_d s_R4(d)| < threshold`` (opposite moves cancel: +0.4 and -0.4 give
    0). Paired only when every dimension has R4 and R5, else ``converged`` = NA."""
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
    """Share of paired dimensions with ``|s_R5 - s_R4| < threshold``, by group (paper, Table 8:
    98.8%), then the same on the layer mean (:func:`layer_mean_convergence_items`; NaN when ``by``
    holds ``dimension``: a layer mean spans all four)."""
    by = by_columns(by)
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
    """Evaluator R5 and validator scores per story x layer x mode x dimension scored by both;
    ``diff = s_validator - s_evaluator``."""
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
    """Evaluator-validator agreement by group: ``MAD = mean |diff|`` and ``agreement_rate =
    mean(|diff| < threshold)`` (paper, Table 7: MAD < 0.5; Table 8: peer agreement > 94%, mean IRR
    difference < 0.3); ``mean_diff`` is signed (validator minus evaluator)."""
    by = by_columns(by)
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
    """Evaluator vs validator by group, items story x mode x dimension: ICC(2,1) with its 95% CI,
    ICC(3,1) and Krippendorff's interval alpha (:mod:`judgelab.stats.reliability`)."""
    by = by_columns(by)
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
    """Content-limit vs title-limit per layer over the stories scored in both modes (paper, Table
    9): means and ``difference = mean(title - content)`` with t intervals, paired t and Wilcoxon.

    With ``overall``, two more rows: ``overall``, the story as the unit (its difference averaged
    over its paired layers), and :data:`POOLED_OVERALL`, the paper's reading (story x layer pairs
    pooled, not independent: a sensitivity row). p-values are Holm- and Bonferroni-adjusted over
    the layers and the overall row; the pooled row is its own family. ``share_truncated`` counts
    the paired content-limit evaluations whose text was cut.
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

    ``reply_success_rate``: share of replies (story x layer x mode x track x round) whose every
    dimension is ok (the paper's "parsing success"); ``n_failed_rows_scored`` must be 0 (failures
    are never scored). From ``summary``: ``success_rate`` of evaluations, repairs and failures.
    """
    by = by_columns(by)
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
    """Mean evaluator score per round (1-5) by group, for Figure 2: n, mean, sd, sem of a story's
    dimension mean per round and mode. With ``n_boot`` > 0 also a CI by a cluster bootstrap over
    stories (within category when ``by`` has it): the SEM treats a story's modes as independent.
    """
    by = by_columns(by)
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
    """:func:`convergence_rate` "by dimension, layer, mode, and story category" (the paper) in one
    long table: grouping (``"layer x mode"``), group (``"L4 / content"``), the rates."""
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

    Dimensions, evaluations and replies are nested in stories, so every rate gets a seeded
    percentile cluster bootstrap over stories; the ICC keeps its F-based CI.
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
