"""Statistics of the out-of-distribution study by narrative kind (the Narrative paper, section 5.7).

Input: one row per narrative and mode with ``kind`` (maxcap / random, alternating / random_mixed,
shuffled / off_topic), ``score_mean`` (the K agents' mean score) and the narrative's minimum and
mean coherence. The paper's readings: alternating vs random mixed t = −2.93, p = 0.0048,
d = −0.77; "both OOD narrative types received significantly lower scores than typical
narratives"; r = 0.729 of coherence with the score over the OOD narratives.
"""
from __future__ import annotations

from typing import Sequence

import pandas as pd

from judgelab.narrative.analyses.ood_narratives import OOD_KINDS, PERTURBATION_KINDS
from judgelab.stats import rules
from judgelab.stats.correlation import correlation
from judgelab.stats.effects import cohens_d, cohens_dz
from judgelab.stats.tests import adjust, paired_ttest, ttest

TEST_COLUMNS = ["mode", "comparison", "value", "test", "t", "p", "d", "n_a", "n_b", "p_holm", "note"]


def kind_summary(long: pd.DataFrame, by: Sequence[str] = ("kind", "mode")) -> pd.DataFrame:
    """Mean and SD (ddof=1) of the LLM score, minimum and mean coherence per kind (and mode)."""
    g = long.groupby(list(by), sort=False)
    out = g.agg(n=("score_mean", "size"),
                score_mean=("score_mean", "mean"), score_sd=("score_mean", lambda x: x.std(ddof=1)),
                min_coherence_mean=("min_coherence", "mean"), min_coherence_sd=("min_coherence", lambda x: x.std(ddof=1)),
                mean_coherence_mean=("mean_coherence", "mean"), mean_coherence_sd=("mean_coherence", lambda x: x.std(ddof=1)))
    return out.reset_index()


def two_sample_test(a: Sequence[float], b: Sequence[float]) -> dict:
    """Student's t-test (pooled variance) of a vs b with Cohen's d on the pooled SD. Keys: test,
    t, p, d, n_a, n_b, note."""
    t = ttest(a, b, equal_var=True).iloc[0]
    d = cohens_d(a, b).iloc[0]
    return {"test": "student_t", "t": float(t["t"]), "p": float(t["p"]), "d": float(d["d"]),
            "n_a": int(t["n_x"]), "n_b": int(t["n_y"]), "note": rules.join(t["note"], d["note"])}


def lower_test(a: Sequence[float], typical: Sequence[float]) -> dict:
    """Welch's t-test that ``a`` scores lower than ``typical``, one-sided (half the two-sided p
    when t < 0, else 1 − half), with Cohen's d (pooled SD). Keys as :func:`two_sample_test`."""
    t = ttest(a, typical, equal_var=False).iloc[0]
    d = cohens_d(a, typical).iloc[0]
    p = t["p"] / 2 if t["t"] < 0 else 1 - t["p"] / 2
    return {"test": "welch_t, one-sided (lower)", "t": float(t["t"]), "p": float(p), "d": float(d["d"]),
            "n_a": int(t["n_x"]), "n_b": int(t["n_y"]), "note": rules.join(t["note"], d["note"])}


def paired_test(perturbed: Sequence[float], original: Sequence[float]) -> dict:
    """Paired t-test of perturbed vs original values with d_z = mean(diff) / SD(diff, ddof=1)
    (Lakens 2013, *Front. Psychol.* 4:863). Keys as :func:`two_sample_test`."""
    t = paired_ttest(perturbed, original).iloc[0]
    dz = cohens_dz(perturbed, original).iloc[0]
    return {"test": "paired_t", "t": float(t["t"]), "p": float(t["p"]), "d": float(dz["d_z"]),
            "n_a": int(t["n"]), "n_b": int(t["n"]), "note": rules.join(t["note"], dz["note"])}


def kind_tests(long: pd.DataFrame, originals: pd.DataFrame | None = None,
               values: Sequence[str] = ("score_mean", "min_coherence", "mean_coherence")) -> pd.DataFrame:
    """Per mode and value: alternating vs random mixed (:func:`two_sample_test`); with
    ``originals`` (the max-capacity narratives), each OOD kind lower than them (:func:`lower_test`,
    Holm over the kinds) and each perturbation against its own original (:func:`paired_test`,
    matched on collection and pair). Columns: :data:`TEST_COLUMNS`.
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
            lower = [{"mode": mode, "comparison": f"{kind}_vs_typical", "value": v,
                      **lower_test(g.loc[g["kind"] == kind, v], o[v])} for kind in OOD_KINDS]
            for r, q in zip(lower, adjust([r["p"] for r in lower], len(lower), "holm")):
                r["p_holm"] = float(q)
                r["note"] = rules.join(r["note"], f"Holm over the {len(lower)} OOD kinds against the typical narratives")
            rows += lower
            for kind in PERTURBATION_KINDS:
                pk = g[g["kind"] == kind]
                if pk.empty:
                    continue
                m = pk.merge(o[["collection", "base_pair_id", v]], on=["collection", "base_pair_id"], suffixes=("", "_orig"))
                rows.append({"mode": mode, "comparison": f"{kind}_vs_original", "value": v,
                             **paired_test(m[v], m[f"{v}_orig"])})
    return pd.DataFrame(rows, columns=TEST_COLUMNS)


def kind_correlations(long: pd.DataFrame, groups: dict[str, Sequence[str]] | None = None,
                      coherence: Sequence[str] = ("min_coherence", "mean_coherence")) -> pd.DataFrame:
    """Pearson r between coherence and the LLM score within sets of kinds (``groups``: label ->
    kinds pooled; default "ood" and each perturbation kind), per mode."""
    groups = groups or {"ood": OOD_KINDS, "shuffled": ("shuffled",), "off_topic": ("off_topic",)}
    rows = []
    for mode, g in long.groupby("mode"):
        for label, kinds in groups.items():
            sub = g[g["kind"].isin(kinds)]
            for c in coherence:
                res = correlation(sub[c], sub["score_mean"], method="pearson").iloc[0]
                rows.append({"mode": mode, "group": label, "predictor": c, "r": res["r"], "p": res["p"],
                             "n": int(res["n"])})
    return pd.DataFrame(rows, columns=["mode", "group", "predictor", "r", "p", "n"])
