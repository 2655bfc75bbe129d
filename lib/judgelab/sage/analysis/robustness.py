"""SAGE's genre and mode-invariance findings under the analysis choices the paper reads one way
(notebook 14): mode pooling (a story's two modes pooled — averaged, or as two rows, the paper's
story x mode reading, or as repeated measures in a mixed model — or each mode on its own), the
unit (the story, or the story x mode row that counts a story twice) and the test (Welch's t,
Mann-Whitney U, the mixed model with a story random intercept; for modes the paired t and
Wilcoxon, over stories or over the paper's pooled story x layer pairs).

Every statistic comes from the functions notebooks 05 and 06 use (:func:`genre.genre_pairwise`,
:func:`genre.genre_mixed_model`, :func:`reliability.mode_invariance`) or the stats floor
(:func:`judgelab.stats.tests.mann_whitney`); nothing is re-implemented. Each row carries its
conclusion at the paper's alpha (a > b, a < b, or no difference detected), and
:func:`finding_stability` says, per finding, whether every analysis reaches the main analysis's
conclusion: a reviewer with a key sees at once whether a finding depends on the analysis.
:func:`analysis_verdicts` gives each analysis the verdict of every register claim about that
finding, by the claim's own rule (:func:`judgelab.claims.verdicts.decide_many`) on the analysis's
own interval; on the embedded model's scores it says *not testable by this judge*, as the
scorecard does, with the rule's verdict on those numbers beside it, for looking at.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab import provenance
from judgelab.claims import design, register, verdicts
from judgelab.sage.analysis import genre, reliability, scores
from judgelab.stats.intervals import welch_interval
from judgelab.stats.tests import mann_whitney

ALPHA = 0.05
"""The paper's significance level (its Table 11 and Table 9 read p < 0.05)."""
GENRE_PAIRS = (("canonical", "pulp"), ("canonical", "llm"))
MAIN = ("story", "welch")
"""The main analysis of every genre finding: the story (its modes averaged), Welch's t."""
#: The mode-pooling choice of each unit of :data:`scores.ANALYSES` (and of the mixed model).
MODE_POOLING = {"story": "pooled: a story's modes averaged", "story_x_mode": "pooled: both modes as rows",
                "content": "content mode only", "title": "title mode only",
                "mixed": "pooled: modes as repeated measures", "paired": "the two modes paired"}
#: The register's estimand of each finding's contrast: (table, column) of the claims about it.
ESTIMANDS = {"canonical - pulp": ("sage_table11_genre_comparison", "diff_canonical_pulp"),
             "canonical - llm": ("sage_table11_genre_comparison", "diff_canonical_llm"),
             "title - content": ("sage_table09_mode_invariance", "difference")}
RANK_TEST = "a rank test: no interval on the mean difference the claim's rule reads"


def conclusion(diff: float, p: float, alpha: float = ALPHA) -> str:
    """``"a > b"``, ``"a < b"`` (p < alpha, by the sign of ``diff``), ``"no difference detected"``,
    or ``"undefined"`` (no p)."""
    if not np.isfinite(p) or not np.isfinite(diff):
        return "undefined"
    if p >= alpha:
        return "no difference detected"
    return "a > b" if diff > 0 else "a < b"


def genre_under_choices(story_scores: pd.DataFrame, units=scores.ANALYSES,
                        tests=("welch", "mann-whitney"), mixed: bool = True) -> pd.DataFrame:
    """Canonical - pulp and canonical - LLM per layer (and their average) under every ``units``
    (:data:`scores.ANALYSES`: the modes pooled by averaging or as rows, or one mode) x ``tests``,
    plus the mixed model (story random intercept, both modes); one row each: unit, mode_pooling,
    test, diff (mean a - mean b), ci_low, ci_high (the test's own 95% interval of diff: Welch's t,
    the mixed model's Wald; none for the rank test), p, n_a, n_b, conclusion."""
    rows = []
    for unit in units:
        obs = genre.with_layer_average(scores.analysis_units(story_scores, unit))
        pw = genre.genre_pairwise(obs, by="layer", pairs=GENRE_PAIRS)
        for r in pw.itertuples(index=False):
            sub = obs[obs["layer"] == r.layer]
            x = sub.loc[sub["category"] == r.group_a, "score"]
            y = sub.loc[sub["category"] == r.group_b, "score"]
            for test in tests:
                if test == "welch":
                    p, (lo, hi) = float(r.p_welch), welch_interval(x, y)
                elif test == "mann-whitney":
                    p, (lo, hi) = float(mann_whitney(x, y).iloc[0]["p"]), (np.nan, np.nan)
                else:
                    raise ValueError(f"test {test!r}: choose welch or mann-whitney")
                rows.append({"layer": r.layer, "contrast": f"{r.group_a} - {r.group_b}", "unit": unit,
                             "mode_pooling": MODE_POOLING[unit], "test": test, "diff": float(r.diff),
                             "ci_low": lo, "ci_high": hi, "p": p, "n_a": int(r.n_a), "n_b": int(r.n_b)})
    if mixed:
        mm = genre.genre_mixed_model(story_scores)
        for r in mm.itertuples(index=False):
            if r.contrast.replace(" ", "") in {f"{a}-{b}" for a, b in GENRE_PAIRS}:
                rows.append({"layer": r.layer, "contrast": r.contrast, "unit": "story (random intercept)",
                             "mode_pooling": MODE_POOLING["mixed"], "test": "mixed model", "diff": float(r.diff),
                             "ci_low": float(r.diff_ci_low), "ci_high": float(r.diff_ci_high), "p": float(r.p),
                             "n_a": int(r.n_stories), "n_b": int(r.n_observations)})
    out = pd.DataFrame(rows)
    out["conclusion"] = [conclusion(d, p) for d, p in zip(out["diff"], out["p"])]
    out["finding"] = "genre: " + out["contrast"] + ", " + out["layer"].astype(str)
    return out


def mode_under_choices(story_scores: pd.DataFrame) -> pd.DataFrame:
    """Title - content per layer (paper Table 9) under the paired t (with its t interval of the
    mean difference) and Wilcoxon, over stories, and the paper's pooled story x layer reading
    (:func:`reliability.mode_invariance`); one row each."""
    mi = reliability.mode_invariance(story_scores)
    rows = []
    for r in mi.itertuples(index=False):
        unit = "story x layer (pooled)" if r.layer == reliability.POOLED_OVERALL else "story"
        layer = "overall" if r.layer == reliability.POOLED_OVERALL else r.layer
        for test, p, lo, hi in (("paired t", r.p_t, r.difference_ci_low, r.difference_ci_high),
                                ("wilcoxon", r.p_wilcoxon, np.nan, np.nan)):
            rows.append({"layer": layer, "contrast": "title - content", "unit": unit,
                         "mode_pooling": MODE_POOLING["paired"], "test": test, "diff": float(r.difference),
                         "ci_low": float(lo), "ci_high": float(hi), "p": float(p), "n_a": int(r.n_pairs),
                         "n_b": int(r.n_pairs)})
    out = pd.DataFrame(rows)
    out["conclusion"] = [conclusion(d, p) for d, p in zip(out["diff"], out["p"])]
    out["finding"] = "mode: " + out["contrast"] + ", " + out["layer"].astype(str)
    return out


def finding_stability(table: pd.DataFrame) -> pd.DataFrame:
    """Per finding: the analyses run, the main analysis's conclusion (the first row of the
    finding, :data:`MAIN` for genre, the story-level paired t for modes), how many analyses reach
    it, and ``depends on the analysis`` when any defined one does not."""
    rows = []
    for finding, g in table.groupby("finding", sort=False):
        main = g.iloc[0]
        defined = g[g["conclusion"] != "undefined"]
        same = (defined["conclusion"] == main["conclusion"]).sum()
        rows.append({"finding": finding, "n_analyses": len(g), "n_defined": len(defined),
                     "main_analysis": f"{main['unit']}, {main['test']}", "main_conclusion": main["conclusion"],
                     "n_same_conclusion": int(same),
                     "stability": ("undefined" if main["conclusion"] == "undefined" else
                                   "same under every analysis" if same == len(defined) else "depends on the analysis")})
    return pd.DataFrame(rows)


def findings_under_choices(story_scores: pd.DataFrame) -> pd.DataFrame:
    """:func:`genre_under_choices` then :func:`mode_under_choices`: every finding, every analysis."""
    return pd.concat([genre_under_choices(story_scores), mode_under_choices(story_scores)], ignore_index=True)


def claims_about(finding_rows: pd.DataFrame, claims=None) -> dict[tuple[str, str], list]:
    """(contrast, layer) -> the register's claims whose estimand is that finding's
    (:data:`ESTIMANDS`: the claim's table and column, its ``where`` layer)."""
    claims = register.load() if claims is None else claims
    out: dict[tuple[str, str], list] = {}
    for contrast, layer in finding_rows[["contrast", "layer"]].drop_duplicates().itertuples(index=False):
        table, column = ESTIMANDS.get(contrast, (None, None))
        out[(contrast, str(layer))] = [c for c in claims if c.study == "sage" and c.table == table
                                       and c.column == column and str(c.where.get("layer")) == str(layer)]
    return out


def analysis_verdicts(table: pd.DataFrame, backend: str | None, model: str | None, profile: str | None,
                      claims=None, choices: dict | None = None) -> pd.DataFrame:
    """Every analysis of :func:`findings_under_choices` judged by each register claim about its
    finding: one row per analysis x claim with the claim's paper value, margin and rule, and
    ``rule_verdict``, the claim's own rule (:func:`judgelab.claims.verdicts.decide_many`) on the
    analysis's estimate, 95% interval and p. ``verdict`` is the scorecard's: *not testable by this
    judge* on the embedded model's (or an unknown judge's) scores, *not comparable* where the run's
    design differs from the paper's in what the claim depends on
    (:func:`judgelab.claims.design.differences`: the judge model, the profile), else the rule's.
    A rank test has no interval on the mean difference: ``rule_verdict`` is empty and ``reason``
    says so. ``choices``: the design the rows rest on, as notebooks 05-06 record it
    (:func:`judgelab.claims.design.sage_choices`: story counts, reasoning effort); without them a
    claim that depends on them is *not comparable* (unrecorded)."""
    about = claims_about(table, claims)
    embedded = model is None or provenance.is_embedded_small_model(backend, model)
    run = {"profile": profile, "model": model, "choices": [f"{k}={v}" for k, v in (choices or {}).items()]}
    rows = []
    for r in table.to_dict("records"):
        for c in about.get((r["contrast"], str(r["layer"])), []):
            rows.append({**{k: r[k] for k in ("finding", "layer", "contrast", "unit", "mode_pooling", "test",
                                              "diff", "ci_low", "ci_high", "p", "conclusion")},
                         "claim_id": c.id, "rule": c.rule["type"], "paper_value": c.paper_value(), "margin": c.margin,
                         "rule_spec": c.rule, "design_diffs": design.differences(c, run)})
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    rule_verdict, reason = [], []
    for r in out.itertuples(index=False):
        if not (np.isfinite(r.ci_low) and np.isfinite(r.ci_high)):
            rule_verdict.append("")
            reason.append(RANK_TEST if r.test in ("mann-whitney", "wilcoxon") else "no interval (too few units)")
            continue
        code = verdicts.decide_many(r.rule_spec, paper_value=r.paper_value, estimate=r.diff, ci_low=r.ci_low,
                                    ci_high=r.ci_high, p=r.p if np.isfinite(r.p) else None)
        rule_verdict.append(verdicts.CODES[int(code)])
        reason.append("")
    out["rule_verdict"] = rule_verdict
    judge = f"{backend}:{model}" if model else "unknown"
    if embedded:
        out["verdict"] = verdicts.NOT_TESTABLE
        out["reason"] = [f"scores of {judge}, the embedded small model (or an unknown judge): they show the "
                         "pipeline runs, not the paper's finding" + (f"; {x}" if x else "") for x in reason]
    else:
        comparable = out["design_diffs"].map(len) == 0
        out["verdict"] = np.where(comparable, out["rule_verdict"], verdicts.NOT_COMPARABLE)
        out["reason"] = ["; ".join(d) if d else x for d, x in zip(out["design_diffs"], reason)]
        out.loc[comparable & (out["rule_verdict"] == ""), "verdict"] = verdicts.INCONCLUSIVE
    out["judge"] = judge
    out["embedded_judge"] = embedded
    return out.drop(columns=["rule_spec", "design_diffs"])
