"""The SAGE paper's Tables 8-11, recomputed and laid out as the paper does, each ``paper_<stat>``
column (:mod:`judgelab.sage.analysis.paper_values`) right after the recomputed ``<stat>``."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from judgelab.sage.analysis import paper_values as pv
from judgelab.sage.analysis.genre import (
    PAIRS, cross_layer_correlation, dimension_discrimination, genre_anova, genre_bootstrap, genre_descriptives,
    genre_pairwise, with_layer_average,
)
from judgelab.sage.analysis.reliability import (
    POOLED_OVERALL, convergence_rate, failure_accounting, mode_invariance, reliability_intervals, track_agreement,
    track_reliability,
)
from judgelab.sage.analysis.scores import (
    ANALYSES, CATEGORIES, DEFAULT_BOOT, LAYERS, MODES, TRUNCATION_NOTE, VALIDATOR_TRACKS,
    analysis_units, final_scores, label, share_truncated, state_scale_and_truncation, story_scores,
    with_truncation,
)
from judgelab.stats.effects import cohens_d_from_summary
from judgelab.sage.protocol.modes import with_title_author_note
from judgelab.stats.tests import MC_METHODS, adjust


def _insert_after(df: pd.DataFrame, after: str, name: str, values) -> pd.DataFrame:
    df = df.copy()
    pos = list(df.columns).index(after) + 1 if after in df.columns else len(df.columns)
    df.insert(pos, name, values)
    return df


def beside(df: pd.DataFrame, stat: str, key_col: str, table: dict, paper_stat: str | None = None) -> pd.DataFrame:
    """Insert ``paper_<stat>`` after ``stat``: ``table[key][paper_stat]`` for each row's ``key_col``."""
    paper_stat = paper_stat or stat
    vals = [pv.paper(table, k, paper_stat) for k in df[key_col]]
    return _insert_after(df, stat, f"paper_{stat}", pd.array(vals, dtype="Float64"))


# --------------------------------------------------------------------------- Table 8

def table08_reliability(rows: pd.DataFrame, summary: pd.DataFrame | None, mode_table: pd.DataFrame | None = None,
                        convergence_threshold: float = 0.3, agreement_threshold: float = 0.5, *,
                        n_boot: int = DEFAULT_BOOT["n_boot"], seed: int = DEFAULT_BOOT["boot_seed"]) -> pd.DataFrame:
    """Table 8, long format: one row per metric (and validator track) with its value, interval
    (:func:`~judgelab.sage.analysis.reliability.reliability_intervals`), paper value and definition.

    Convergence per dimension (the paper's 98.8%), on the layer mean and by the original code's
    exact-zero rule. Agreement for both validator tracks: ``validator_blind`` (the paper's stated
    method) and ``validator_review`` (after the evaluator's transcript, closer to the original
    code), the paper's value beside both. ``mode_table``: :func:`mode_invariance`'s output (None:
    computed from the rows).
    """
    if mode_table is None:
        mode_table = mode_invariance(story_scores(rows))
    recs = []
    fa = failure_accounting(rows, summary, by=None).iloc[0]
    all_cut = fa["share_truncated"]
    intervals = reliability_intervals(rows, summary, convergence_threshold=convergence_threshold,
                                      agreement_threshold=agreement_threshold, n_boot=n_boot, seed=seed)

    def add(section, metric, value, paper=None, track="", definition="", note="", cut=None, ci=None):
        ci = ci or intervals.get((metric, track)) or {
            "ci_low": np.nan, "ci_high": np.nan, "unit": "evaluation",
            "ci_method": "count or share of the design: no interval"}
        recs.append({"section": section, "metric": metric, "track": track,
                     "value": float(value) if value is not None and np.isfinite(value) else np.nan,
                     "value_ci_low": ci["ci_low"], "value_ci_high": ci["ci_high"], "unit": ci["unit"],
                     "ci_method": ci["ci_method"] + (f" ({ci['note']})" if ci.get("note") else ""),
                     "paper_value": paper.value if paper else np.nan,
                     "paper_qualifier": paper.qualifier if paper else "",
                     "paper_source": paper.source if paper else "",
                     "definition": definition, "note": note,
                     "share_truncated": all_cut if cut is None else cut})

    add("Evaluation success", "total_evaluations", fa["n_evaluations"], pv.TABLE8["total_evaluations"],
        definition="story x layer x mode evaluations with rows")
    if summary is not None and "success_rate" in fa:
        add("Evaluation success", "success_rate", fa["success_rate"], pv.TABLE8["success_rate"],
            definition="share of evaluations with status ok (summary files)")
        add("Evaluation success", "n_repairs", fa["n_repairs"], definition="repair retries, summed (summary files)")
        add("Evaluation success", "n_failures", fa["n_failures"], definition="failed replies, summed (summary files)")
    add("Evaluation success", "parsing_success", fa["reply_success_rate"], pv.TABLE8["parsing_success"],
        definition="share of replies (track x round) whose every dimension parsed and validated")
    add("Evaluation success", "failed_rows_scored", fa["n_failed_rows_scored"],
        definition="failed rows that carry a score (must be 0: failures are never scored)",
        note=fa["note"])
    add("Evaluation success", "share_truncated", all_cut,
        definition=f"share of evaluations whose content-limit text was cut to head + tail ({TRUNCATION_NOTE})")
    conv = convergence_rate(rows, by=None, threshold=convergence_threshold).iloc[0]
    add("Convergence & consistency", "convergence_rate", conv["convergence_rate"], pv.TABLE8["convergence_rate"],
        definition=f"share of dimensions with |R5 - R4| < {convergence_threshold:g}", note=conv["note"])
    add("Convergence & consistency", "convergence_rate_layer_mean", conv["layer_mean_convergence_rate"],
        definition=f"share of evaluations whose layer mean (mean of the dimension scores) moved "
                   f"|mean R5 - mean R4| < {convergence_threshold:g}",
        note="" if conv["n_evaluations_paired"] else "no evaluation with R4 and R5 in every dimension")
    add("Convergence & consistency", "convergence_rate_exact_zero", conv.get("rate_exact_zero", np.nan),
        definition="share of dimensions with R5 == R4 exactly (the original code's criterion; not the paper's)")
    for track in VALIDATOR_TRACKS:
        ag = track_agreement(rows, track, by=None, threshold=agreement_threshold).iloc[0]
        rel = track_reliability(rows, track, by=None).iloc[0]
        add("Convergence & consistency", "peer_agreement", ag["agreement_rate"], pv.TABLE8["peer_agreement"], track,
            f"share of dimensions with |validator - evaluator R5| < {agreement_threshold:g}", ag["note"])
        add("Convergence & consistency", "mean_irr_difference", ag["mad"], pv.TABLE8["mean_irr_difference"], track,
            "mean |validator - evaluator R5| over dimensions (MAD)", ag["note"])
        add("Convergence & consistency", "icc2_absolute_agreement", rel.get("icc2", np.nan), None, track,
            "ICC(2,1) evaluator vs validator over story x mode x dimension (pingouin)", rel["note"],
            ci={"ci_low": rel.get("icc2_ci95_low", np.nan), "ci_high": rel.get("icc2_ci95_high", np.nan),
                "unit": "story x mode x dimension", "ci_method": "F-based (Shrout & Fleiss; McGraw & Wong), unrounded"})
        add("Convergence & consistency", "krippendorff_alpha_interval", rel.get("krippendorff_alpha", np.nan), None,
            track, "Krippendorff's alpha, interval metric (krippendorff)", rel["note"])
    layers = mode_table[mode_table["layer"].isin(LAYERS)]
    diffs = layers["abs_difference"].dropna()
    overall = mode_table[mode_table["layer"] == "overall"]
    mode_cut = (overall["share_truncated"].iloc[0] if "share_truncated" in overall and len(overall)
                else np.nan)
    add("Mode robustness", "mode_invariance_max_abs_diff", diffs.max() if len(diffs) else np.nan,
        pv.TABLE8["mode_invariance_max_abs_diff"],
        definition="max over layers of |mean(title - content)|",
        note="" if len(diffs) else "no story evaluated in both modes", cut=mode_cut)
    out = pd.DataFrame(recs)
    out["mc_family"] = "none: Table 8 reports rates, no tests"
    return state_scale_and_truncation(out)


# --------------------------------------------------------------------------- Table 9

TABLE9_TRUNCATION_NOTE = ("content scores come from excerpts: " + TRUNCATION_NOTE
                          + "; the title-limit scores they are compared with read no text")
"""Table 9's truncation note: it compares content-limit scores with title-limit ones."""


#: ``title_author`` of Table 9's rows: the main comparison, and the anonymous-author sensitivity.
TITLE_AUTHOR_AS_PRINTED = "as printed"
TITLE_AUTHOR_ANONYMOUS = "an unknown author (sensitivity)"


def table09_mode_invariance(mode_table: pd.DataFrame, anonymous_author: bool = False) -> pd.DataFrame:
    """Table 9: content vs title mean per layer and overall, difference (title - content), tests."""
    t = mode_table.copy()
    # the paper's overall numbers are its pooled reading: beside both overall rows
    t["_paper_key"] = t["layer"].replace({POOLED_OVERALL: "overall"})
    for stat in ("content_mean", "title_mean", "difference"):
        t = beside(t, stat, "_paper_key", pv.TABLE9)
    t = t.drop(columns="_paper_key")
    t = _insert_after(t, "p_t", "paper_p_t", pv.TABLE9_P_PAIRED_T.value)
    t = _insert_after(t, "paper_p_t", "paper_p_t_qualifier", pv.TABLE9_P_PAIRED_T.qualifier)
    t.insert(1, "title_author", TITLE_AUTHOR_ANONYMOUS if anonymous_author else TITLE_AUTHOR_AS_PRINTED)
    return with_title_author_note(state_scale_and_truncation(t, note=TABLE9_TRUNCATION_NOTE), anonymous_author)


def table09_from_rows(rows: pd.DataFrame, anonymous_rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """Table 9 from the tidy rows (:func:`story_scores`, :func:`mode_invariance`). With
    ``anonymous_rows`` (``sage_rows_anonymous_<layer>``), the same comparison follows with those
    title scores against the same stories' content scores: does mode invariance hold without the
    model's name in the LLM stories' byline? Those rows are their own multiple-comparison family."""
    main = table09_mode_invariance(mode_invariance(story_scores(rows)))
    if anonymous_rows is None or not len(anonymous_rows):
        return main
    titled = anonymous_rows[anonymous_rows["mode"] == "title"]
    # the content scores of the same stories and layers only: a profile may run the sensitivity on
    # a subset of stories (``anonymous_per_category``) or of layers (``anonymous_author_sensitivity``)
    ran = set(titled["layer"])
    content = rows[(rows["mode"] == "content") & rows["story_id"].isin(set(titled["story_id"]))
                   & rows["layer"].isin(ran)]
    anon = table09_mode_invariance(
        mode_invariance(story_scores(pd.concat([content, titled], ignore_index=True))), anonymous_author=True)
    anon.loc[anon["layer"].isin(set(LAYERS) - ran), "note"] = (
        "not run for this layer: anonymous_author_sensitivity names the layers that run it")
    anon["mc_family"] = "sensitivity, title with an unknown author; " + anon["mc_family"].astype(str)
    # the paper's values belong beside its own comparison only (the paper ran no anonymous title mode)
    for col in [c for c in anon.columns if c.startswith("paper_")]:
        anon[col] = "" if anon[col].dtype == object else np.nan
    return pd.concat([main, anon], ignore_index=True)


# --------------------------------------------------------------------------- Table 10

def table10_cross_layer(scores: pd.DataFrame, analyses: Sequence[str] = ANALYSES, *,
                        n_boot: int = DEFAULT_BOOT["n_boot"], seed: int = DEFAULT_BOOT["boot_seed"]) -> pd.DataFrame:
    """Table 10: Pearson r and Spearman rho with p and 95% CIs per layer pair and analysis
    (:data:`~judgelab.sage.analysis.scores.ANALYSES`). CIs: Fisher z for story units, a cluster
    bootstrap for story x mode rows; p-values Holm- and Bonferroni-adjusted over the 3 pairs.
    """
    blocks = []
    for analysis in analyses:
        units = analysis_units(scores, analysis)
        method = "cluster_bootstrap" if analysis == "story_x_mode" else "fisher_z"
        t = cross_layer_correlation(units, ci_method=method, n_boot=n_boot, seed=seed)
        t.insert(0, "layer_pair", t["layer_a"] + " x " + t["layer_b"])
        keys = list(zip(t["layer_a"], t["layer_b"]))
        t = _insert_after(t, "n", "paper_n", pv.TABLE10_N.value)
        for stat in ("pearson_r", "spearman_rho"):
            t = _insert_after(t, f"{stat}_ci_high", f"paper_{stat}", [pv.paper(pv.TABLE10, k, stat) for k in keys])
        t = _insert_after(t, "p_pearson", "paper_p", [pv.paper(pv.TABLE10, k, "p") for k in keys])
        t = _insert_after(t, "paper_p", "paper_p_qualifier", "<")
        for test in ("pearson", "spearman"):
            pos = list(t.columns).index(f"p_{test}") + 1
            for j, method_mc in enumerate(MC_METHODS):
                t.insert(pos + j, f"p_{test}_{method_mc}",
                         adjust(t[f"p_{test}"], len(t), method_mc))
        t["mc_family"] = f"Table 10 / {analysis}: {len(t)} layer pairs, Pearson and Spearman adjusted separately"
        blocks.append(label(t, analysis))
    return state_scale_and_truncation(pd.concat(blocks, ignore_index=True))


# --------------------------------------------------------------------------- Table 11

PAIR_TAGS = ("canonical_pulp", "canonical_llm", "pulp_llm")
TABLE11_POST_HOC = ("pairwise Student t (and Welch t) of the three category pairs per row, after and "
                    "not conditioned on the one-way ANOVA (unprotected post-hoc tests)")


def table11_genre_comparison(scores: pd.DataFrame, analyses: Sequence[str] = ANALYSES, *,
                             n_boot: int = DEFAULT_BOOT["n_boot"], seed: int = DEFAULT_BOOT["boot_seed"]
                             ) -> pd.DataFrame:
    """Table 11 per analysis (:data:`~judgelab.sage.analysis.scores.ANALYSES`) and per layer and
    their average: mean (SD) per category, differences, relative gaps, ANOVA and pairwise p, Cohen's
    d canonical vs LLM in both conventions, the paper's values beside.

    Intervals on every mean, difference, gap and d: cluster bootstrap over stories within category.
    p-values Holm- and Bonferroni-adjusted within an analysis over the 12 pairwise tests of each
    kind and the 4 ANOVAs (undefined tests still count).
    """
    blocks = [_table11_block(analysis_units(scores, a), a, n_boot, seed) for a in analyses]
    return pd.concat(blocks, ignore_index=True)


def _table11_block(units: pd.DataFrame, analysis: str, n_boot: int, seed: int) -> pd.DataFrame:
    """The four rows (L4, L5, L6, average) of one analysis of Table 11."""
    sc = with_layer_average(units)
    levels = list(LAYERS) + ["average"]
    desc = genre_descriptives(sc, by="layer")
    pair = genre_pairwise(sc, by="layer")
    anova = genre_anova(sc, by="layer")
    boot = genre_bootstrap(sc, n_boot=n_boot, seed=seed, unit="story").set_index("statistic") if len(sc) else None

    def ci(layer, stat):
        if boot is None or f"{layer}|{stat}" not in boot.index:
            return np.nan, np.nan
        r = boot.loc[f"{layer}|{stat}"]
        return r["ci_low"], r["ci_high"]

    recs = []
    for layer in levels:
        rec = {"layer": layer, "layer_name": pv.LAYER_NAMES.get(layer, "Average")}
        rec["share_truncated"] = share_truncated(sc[sc["layer"] == layer], keys=())
        notes = []
        d = desc[desc["layer"] == layer]
        for cat in CATEGORIES:
            row = d[d["category"] == cat]
            rec[f"n_{cat}"] = int(row["n"].iloc[0]) if len(row) and pd.notna(row["n"].iloc[0]) else 0
            rec[f"mean_{cat}"] = row["mean"].iloc[0] if len(row) else np.nan
            rec[f"mean_{cat}_ci_low"], rec[f"mean_{cat}_ci_high"] = ci(layer, f"mean_{cat}")
            rec[f"paper_mean_{cat}"] = pv.paper(pv.TABLE11, layer, f"mean_{cat}")
            rec[f"sd_{cat}"] = row["sd"].iloc[0] if len(row) else np.nan
            rec[f"paper_sd_{cat}"] = pv.paper(pv.TABLE11, layer, f"sd_{cat}")
            if rec[f"n_{cat}"] == 0:
                notes.append(f"no {cat} scores")
        for a, b in PAIRS:
            p = pair[(pair["layer"] == layer) & (pair["group_a"] == a) & (pair["group_b"] == b)]
            get = (lambda c: p[c].iloc[0] if len(p) else np.nan)
            tag = f"{a}_{b}"
            reported = a == "canonical"  # the paper reports canonical-pulp and canonical-LLM only
            rec[f"diff_{tag}"] = get("diff")
            rec[f"diff_{tag}_ci_low"], rec[f"diff_{tag}_ci_high"] = ci(layer, f"diff_{tag}")
            if reported:
                rec[f"paper_diff_{tag}"] = pv.paper(pv.TABLE11, layer, f"diff_{tag}")
            rec[f"relative_gap_{tag}"] = get("relative_gap")
            rec[f"relative_gap_{tag}_ci_low"], rec[f"relative_gap_{tag}_ci_high"] = ci(layer, f"relative_gap_{tag}")
            gaps = {"canonical_llm": pv.RELATIVE_GAP_CANONICAL_LLM, "canonical_pulp": pv.RELATIVE_GAP_CANONICAL_PULP}
            if reported:
                rec[f"paper_relative_gap_{tag}"] = pv.paper(gaps[tag], layer)
            rec[f"p_{tag}"] = get("p_student")
            rec[f"p_{tag}_welch"] = get("p_welch")
            if tag == "canonical_llm":
                for col, stat in (("d_canonical_llm_sqrt_mean_var", "d_sqrt_mean_var"),
                                  ("d_canonical_llm_pooled_sd", "d_pooled_sd")):
                    rec[col] = get(stat)
                    rec[f"{col}_ci_low"], rec[f"{col}_ci_high"] = ci(layer, f"{stat}_{tag}")
                    if stat == "d_sqrt_mean_var":
                        rec["paper_d_canonical_llm_sqrt_mean_var"] = pv.paper(pv.COHENS_D_CANONICAL_LLM, layer)
        # the paper's comparisons between layers (its layer means' order, L5's d the smallest)
        paper_d = {lay: pv.paper(pv.COHENS_D_CANONICAL_LLM, lay) for lay in LAYERS}
        paper_m = {lay: pv.paper(pv.LAYER_MEAN, lay) for lay in LAYERS}
        for col, stat, paper in (("mean_all", "mean_all", paper_m.get(layer)),
                                 ("mean_all_minus_L4", "mean_all_minus_L4",
                                  paper_m[layer] - paper_m["L4"] if layer in paper_m else None),
                                 ("d_canonical_llm_minus_L5", "d_sqrt_mean_var_canonical_llm_minus_L5",
                                  paper_d[layer] - paper_d["L5"] if layer in paper_d else None)):
            key = f"{layer}|{stat}"
            rec[col] = boot.loc[key, "estimate"] if boot is not None and key in boot.index else np.nan
            rec[f"{col}_ci_low"], rec[f"{col}_ci_high"] = ci(layer, stat)
            rec[f"paper_{col}"] = paper
        a = anova[anova["layer"] == layer]
        rec["F_anova"] = a["F"].iloc[0] if len(a) else np.nan
        rec["p_anova"] = a["p"].iloc[0] if len(a) else np.nan
        rec["paper_p"] = pv.TABLE11_P.value
        rec["paper_p_qualifier"] = pv.TABLE11_P.qualifier
        if len(a) and a["note"].iloc[0]:
            notes.append(a["note"].iloc[0])
        rec["note"] = "; ".join(dict.fromkeys(notes))
        recs.append(rec)
    out = _table11_adjust(pd.DataFrame(recs), analysis)
    out["ci_method"] = (boot["ci_method"].iloc[0] if boot is not None else "no scores: no interval")
    out["post_hoc"] = TABLE11_POST_HOC
    paper_cols = [c for c in out.columns if c.startswith("paper_") and c != "paper_p_qualifier"]
    out[paper_cols] = out[paper_cols].astype("Float64")
    out = label(out, analysis)
    cols = [c for c in out.columns if c != "share_truncated"]
    return state_scale_and_truncation(out[cols[:cols.index("note")] + ["share_truncated"] + cols[cols.index("note"):]])


def _table11_adjust(t: pd.DataFrame, analysis: str) -> pd.DataFrame:
    """Holm and Bonferroni columns for the 12 Student, the 12 Welch and the 4 ANOVA tests of one
    analysis of Table 11 (each family of fixed size: undefined tests count)."""
    out = t.copy()
    n = len(out)
    for kind, suffix in (("Student", ""), ("Welch", "_welch")):
        cols = [f"p_{tag}{suffix}" for tag in PAIR_TAGS]
        flat = out[cols].to_numpy(float).ravel()
        for method in MC_METHODS:
            adj = adjust(flat, len(flat), method).reshape(n, len(cols))
            for j, tag in enumerate(PAIR_TAGS):
                pos = list(out.columns).index(f"p_{tag}{suffix}") + 1
                out.insert(pos + MC_METHODS.index(method), f"p_{tag}{suffix}_{method}", adj[:, j])
    for method in MC_METHODS:
        out.insert(list(out.columns).index("p_anova") + 1 + MC_METHODS.index(method), f"p_anova_{method}",
                   adjust(out["p_anova"], n, method))
    out["mc_family"] = (f"Table 11 / {analysis}: {3 * n} pairwise Student t (3 pairs x {n} rows), "
                        f"{3 * n} Welch t, {n} ANOVAs, each adjusted within its kind")
    return out


def paper_d_check(units_per_mode: int = 2) -> pd.DataFrame:
    """Cohen's d from the paper's own Table 11 means and SDs under both conventions (n: Table 5's
    stories x ``units_per_mode``): which convention reproduces the paper's printed d."""
    recs = []
    for layer in LAYERS:
        t = pv.TABLE11[layer]
        args = (t["mean_canonical"].value, t["sd_canonical"].value, pv.CORPUS_DESIGN["canonical"].value * units_per_mode,
                t["mean_llm"].value, t["sd_llm"].value, pv.CORPUS_DESIGN["llm"].value * units_per_mode)
        recs.append({"layer": layer,
                     "d_from_paper_means_sqrt_mean_var": cohens_d_from_summary(*args, sd="average"),
                     "d_from_paper_means_pooled_sd": cohens_d_from_summary(*args, sd="pooled"),
                     "paper_d": pv.COHENS_D_CANONICAL_LLM[layer].value})
    return pd.DataFrame(recs)


# --------------------------------------------------------------------------- figures 3 and 4, dimensions

def paper_genre_means(layers=LAYERS) -> dict[str, dict[str, float | None]]:
    """The paper's Table 11 mean per layer and category, ``{layer: {category: mean}}`` (the white
    diamonds of Figure 3); None where the paper prints none."""
    return {layer: {cat: pv.paper(pv.TABLE11, layer, f"mean_{cat}") for cat in CATEGORIES} for layer in layers}


def paper_cohens_d(layers=LAYERS) -> dict[str, float | None]:
    """The paper's Cohen's d, canonical vs LLM, per layer (the white diamonds of Figure 4)."""
    return {layer: pv.paper(pv.COHENS_D_CANONICAL_LLM, layer) for layer in layers}


def dimension_discrimination_table(rows: pd.DataFrame, genre_unit: str = "story_mode") -> pd.DataFrame:
    """Canonical vs LLM per dimension (:func:`~.genre.dimension_discrimination`) on the final
    scores, in ``genre_unit`` (:func:`~.scores.observation_units`)."""
    dims = with_truncation(final_scores(rows, "evaluator"), rows)
    if genre_unit in MODES:
        dims = dims[dims["mode"] == genre_unit]
    return dimension_discrimination(dims, unit="story" if genre_unit == "story" else "story_mode")


# --------------------------------------------------------------------------- figures 3 and 4 from Table 11

def figure3_means(table11: pd.DataFrame, analysis: str = "story", layers=LAYERS) -> pd.DataFrame:
    """Figure 3's points (layer x category mean and CI) from Table 11's rows of one ``analysis``."""
    t = table11[(table11["analysis"] == analysis) & table11["layer"].isin(layers)]
    recs = [{"layer": r["layer"], "category": c, "n": r[f"n_{c}"], "mean": r[f"mean_{c}"],
             "mean_ci_low": r[f"mean_{c}_ci_low"], "mean_ci_high": r[f"mean_{c}_ci_high"], "sd": r[f"sd_{c}"]}
            for _, r in t.iterrows() for c in CATEGORIES]
    return pd.DataFrame(recs, columns=["layer", "category", "n", "mean", "mean_ci_low", "mean_ci_high", "sd"])


def figure4_effects(table11: pd.DataFrame, analysis: str = "story", layers=LAYERS) -> pd.DataFrame:
    """Figure 4's bars (canonical vs LLM d, both conventions, CIs) from Table 11's ``analysis``."""
    t = table11[(table11["analysis"] == analysis) & table11["layer"].isin(layers)]
    out = pd.DataFrame({"layer": t["layer"].to_numpy(), "group_a": "canonical", "group_b": "llm"})
    for col, src in (("d_pooled_sd", "d_canonical_llm_pooled_sd"), ("d_sqrt_mean_var", "d_canonical_llm_sqrt_mean_var")):
        for suffix in ("", "_ci_low", "_ci_high"):
            out[col + suffix] = t[src + suffix].to_numpy(float)
    return out
