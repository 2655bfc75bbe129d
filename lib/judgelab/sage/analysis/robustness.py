"""SAGE's genre and mode-invariance findings under the analysis choices the paper reads one way
(notebook 14): the unit (the story, a story's modes averaged; one mode; or the paper's story x
mode rows, a story counted twice) and the test (Welch's t, Mann-Whitney U, a mixed model with a
story random intercept; for modes the paired t and Wilcoxon, over stories or over the paper's
pooled story x layer pairs).

Every statistic comes from the functions notebooks 05 and 06 use (:func:`genre.genre_pairwise`,
:func:`genre.genre_mixed_model`, :func:`reliability.mode_invariance`) or the stats floor
(:func:`judgelab.stats.tests.mann_whitney`); nothing is re-implemented. Each row carries its
conclusion at the paper's alpha (a > b, a < b, or no difference detected), and
:func:`finding_stability` says, per finding, whether every analysis reaches the main analysis's
conclusion: a reviewer with a key sees at once whether a finding depends on the analysis.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab.sage.analysis import genre, reliability, scores
from judgelab.stats.tests import mann_whitney

ALPHA = 0.05
"""The paper's significance level (its Table 11 and Table 9 read p < 0.05)."""
GENRE_PAIRS = (("canonical", "pulp"), ("canonical", "llm"))
MAIN = ("story", "welch")
"""The main analysis of every genre finding: the story (its modes averaged), Welch's t."""


def conclusion(diff: float, p: float, alpha: float = ALPHA) -> str:
    """``"a > b"``, ``"a < b"`` (p < alpha, by the sign of ``diff``), ``"no difference detected"``,
    or ``"undefined"`` (no p)."""
    if not np.isfinite(p) or not np.isfinite(diff):
        return "undefined"
    if p >= alpha:
        return "no difference detected"
    return "a > b" if diff > 0 else "a < b"


def genre_under_choices(story_scores: pd.DataFrame, units=("story", "story_x_mode"),
                        tests=("welch", "mann-whitney"), mixed: bool = True) -> pd.DataFrame:
    """Canonical - pulp and canonical - LLM per layer (and their average) under every ``units``
    (:data:`scores.ANALYSES`) x ``tests``, plus the mixed model (story random intercept, both
    modes); one row each: unit, test, diff (mean a - mean b), p, n_a, n_b, conclusion."""
    rows = []
    for unit in units:
        obs = genre.with_layer_average(scores.analysis_units(story_scores, unit))
        pw = genre.genre_pairwise(obs, by="layer", pairs=GENRE_PAIRS)
        for r in pw.itertuples(index=False):
            sub = obs[obs["layer"] == r.layer]
            for test in tests:
                if test == "welch":
                    p = float(r.p_welch)
                elif test == "mann-whitney":
                    x = sub.loc[sub["category"] == r.group_a, "score"]
                    y = sub.loc[sub["category"] == r.group_b, "score"]
                    p = float(mann_whitney(x, y).iloc[0]["p"])
                else:
                    raise ValueError(f"test {test!r}: choose welch or mann-whitney")
                rows.append({"layer": r.layer, "contrast": f"{r.group_a} - {r.group_b}", "unit": unit,
                             "test": test, "diff": float(r.diff), "p": p, "n_a": int(r.n_a), "n_b": int(r.n_b)})
    if mixed:
        mm = genre.genre_mixed_model(story_scores)
        for r in mm.itertuples(index=False):
            if r.contrast.replace(" ", "") in {f"{a}-{b}" for a, b in GENRE_PAIRS}:
                rows.append({"layer": r.layer, "contrast": r.contrast, "unit": "story (random intercept)",
                             "test": "mixed model", "diff": float(r.diff), "p": float(r.p),
                             "n_a": int(r.n_stories), "n_b": int(r.n_observations)})
    out = pd.DataFrame(rows)
    out["conclusion"] = [conclusion(d, p) for d, p in zip(out["diff"], out["p"])]
    out["finding"] = "genre: " + out["contrast"] + ", " + out["layer"].astype(str)
    return out


def mode_under_choices(story_scores: pd.DataFrame) -> pd.DataFrame:
    """Title - content per layer (paper Table 9) under the paired t and Wilcoxon, over stories, and
    the paper's pooled story x layer reading (:func:`reliability.mode_invariance`); one row each."""
    mi = reliability.mode_invariance(story_scores)
    rows = []
    for r in mi.itertuples(index=False):
        unit = "story x layer (pooled)" if r.layer == reliability.POOLED_OVERALL else "story"
        layer = "overall" if r.layer == reliability.POOLED_OVERALL else r.layer
        for test, p in (("paired t", r.p_t), ("wilcoxon", r.p_wilcoxon)):
            rows.append({"layer": layer, "contrast": "title - content", "unit": unit, "test": test,
                         "diff": float(r.difference), "p": float(p), "n_a": int(r.n_pairs), "n_b": int(r.n_pairs)})
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
