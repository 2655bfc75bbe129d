"""Statistics of the out-of-distribution study by narrative kind (paper 002, section 5.7).

Input: one row per narrative and mode with ``kind`` (maxcap / random, alternating / random_mixed,
shuffled / off_topic), ``score_mean`` (the K agents' mean score;
:func:`judgelab.narrative.judges.scores.narrative_scores`) and the narrative's minimum and mean
coherence.

- alternating vs random mixed: Student's two-sample t-test (pooled variance) with Cohen's d on the
  pooled SD (the paper: t = −2.93, p = 0.0048, d = −0.77);
- a perturbation against its own original: the paired t-test with d_z = mean(diff) / SD(diff)
  (Lakens 2013, *Front. Psychol.* 4:863);
- Pearson r of coherence with the score within sets of kinds (the paper: r = 0.729 over the OOD
  narratives).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from judgelab.narrative.analyses.ood_narratives import OOD_KINDS, PERTURBATION_KINDS
from judgelab.stats.effects import cohens_d


def kind_summary(long: pd.DataFrame, by: Sequence[str] = ("kind", "mode")) -> pd.DataFrame:
    """Mean and SD (ddof=1) of the LLM score, minimum and mean coherence per kind (and mode).

    Columns: *by, n, score_mean, score_sd, min_coherence_mean, min_coherence_sd,
    mean_coherence_mean, mean_coherence_sd.
    """
    g = long.groupby(list(by), sort=False)
    out = g.agg(n=("score_mean", "size"),
                score_mean=("score_mean", "mean"), score_sd=("score_mean", lambda x: x.std(ddof=1)),
                min_coherence_mean=("min_coherence", "mean"), min_coherence_sd=("min_coherence", lambda x: x.std(ddof=1)),
                mean_coherence_mean=("mean_coherence", "mean"), mean_coherence_sd=("mean_coherence", lambda x: x.std(ddof=1)))
    return out.reset_index()


def two_sample_test(a: Sequence[float], b: Sequence[float]) -> dict:
    """Student's t-test (pooled variance) of a vs b, with Cohen's d on the pooled SD."""
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if len(a) < 2 or len(b) < 2:
        return {"test": "student_t", "t": np.nan, "p": np.nan, "d": np.nan, "n_a": len(a), "n_b": len(b)}
    t, p = stats.ttest_ind(a, b, equal_var=True)
    return {"test": "student_t", "t": float(t), "p": float(p), "d": cohens_d(a, b)["d"].item(), "n_a": len(a), "n_b": len(b)}


def paired_test(perturbed: Sequence[float], original: Sequence[float]) -> dict:
    """Paired t-test of perturbed vs original values with d_z = mean(diff) / SD(diff, ddof=1)."""
    x = np.asarray(perturbed, float)
    y = np.asarray(original, float)
    m = np.isfinite(x) & np.isfinite(y)
    x, y = x[m], y[m]
    if len(x) < 2:
        return {"test": "paired_t", "t": np.nan, "p": np.nan, "d": np.nan, "n_a": len(x), "n_b": len(y)}
    diff = x - y
    sd = diff.std(ddof=1)
    if sd == 0:
        return {"test": "paired_t", "t": np.nan, "p": np.nan, "d": np.nan, "n_a": len(x), "n_b": len(y)}
    t, p = stats.ttest_rel(x, y)
    return {"test": "paired_t", "t": float(t), "p": float(p), "d": float(diff.mean() / sd), "n_a": len(x), "n_b": len(y)}


def kind_tests(long: pd.DataFrame, originals: pd.DataFrame | None = None,
               values: Sequence[str] = ("score_mean", "min_coherence", "mean_coherence")) -> pd.DataFrame:
    """The tests of section 5.7 and of the perturbation families, per mode and value.

    - alternating vs random_mixed: Student's t, Cohen's d (the paper's t = −2.93, d = −0.77);
    - shuffled vs original and off_topic vs original: paired t and d_z, matching each perturbed
      narrative to its original (``originals``: rows with collection, pair_id (= base_pair_id),
      mode and the same value columns; the max-capacity narratives).

    Columns: mode, comparison, value, test, t, p, d, n_a, n_b.
    """
    rows = []
    for mode, g in long.groupby("mode"):
        for v in values:
            a = g.loc[g["kind"] == "alternating", v]
            b = g.loc[g["kind"] == "random_mixed", v]
            if len(a) or len(b):
                rows.append({"mode": mode, "comparison": "alternating_vs_random_mixed", "value": v, **two_sample_test(a, b)})
            if originals is None:
                continue
            o = originals[originals["mode"] == mode].rename(columns={"pair_id": "base_pair_id"})
            for kind in PERTURBATION_KINDS:
                pk = g[g["kind"] == kind]
                if pk.empty:
                    continue
                m = pk.merge(o[["collection", "base_pair_id", v]], on=["collection", "base_pair_id"], suffixes=("", "_orig"))
                rows.append({"mode": mode, "comparison": f"{kind}_vs_original", "value": v,
                             **paired_test(m[v], m[f"{v}_orig"])})
    return pd.DataFrame(rows, columns=["mode", "comparison", "value", "test", "t", "p", "d", "n_a", "n_b"])


def kind_correlations(long: pd.DataFrame, groups: dict[str, Sequence[str]] | None = None,
                      coherence: Sequence[str] = ("min_coherence", "mean_coherence")) -> pd.DataFrame:
    """Pearson r between coherence and the LLM score within sets of kinds, per mode.

    ``groups`` maps a label to the kinds pooled (default: "ood" = alternating + random_mixed, as
    in the paper's r = 0.729; plus each perturbation kind). Columns: mode, group, predictor, r, p, n.
    """
    groups = groups or {"ood": OOD_KINDS, "shuffled": ("shuffled",), "off_topic": ("off_topic",)}
    rows = []
    for mode, g in long.groupby("mode"):
        for label, kinds in groups.items():
            sub = g[g["kind"].isin(kinds)]
            for c in coherence:
                x, y = sub[c].to_numpy(float), sub["score_mean"].to_numpy(float)
                m = np.isfinite(x) & np.isfinite(y)
                if m.sum() >= 3 and np.ptp(x[m]) > 0 and np.ptp(y[m]) > 0:
                    r, p = stats.pearsonr(x[m], y[m])
                else:
                    r, p = np.nan, np.nan
                rows.append({"mode": mode, "group": label, "predictor": c, "r": float(r), "p": float(p), "n": int(m.sum())})
    return pd.DataFrame(rows, columns=["mode", "group", "predictor", "r", "p", "n"])
