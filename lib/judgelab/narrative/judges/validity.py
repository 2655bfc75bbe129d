"""Do the LLM judges track mathematical coherence? (the Narrative paper, sections 5.2, 5.3, 5.5;
Tables 2 and 4; Figure 8).

A *narrative* (collection, endpoint pair, method) is what the judge scores: its LLM score in a
mode is ``score_mean`` over the K agents (:func:`judgelab.narrative.judges.scores.narrative_scores`),
its metrics the path's minimum and average coherence from notebook 08. The *independent unit* is
the endpoint pair (a pair's max-capacity path and its random twin share their endpoints): every
interval is a seeded percentile cluster bootstrap over pairs (:mod:`judgelab.stats.resampling`),
and Table 4's tests are paired. The readings that treat narratives as independent (scipy's p,
Fisher-z, Welch's t, Mann-Whitney U) stay beside them for Figure 8(l) and the paper's reading.
Small or degenerate groups give NaN with a ``note`` (:mod:`judgelab.stats.rules`).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from judgelab.narrative.judges.prompts import MODES
from judgelab.stats import resampling as rs
from judgelab.stats import rules
from judgelab.stats.correlation import correlation
from judgelab.stats.effects import auc, cohens_d
from judgelab.stats.tests import adjust, mann_whitney, paired_ttest, ttest, wilcoxon

POSITIVE_METHOD = "maxcap"
NEGATIVE_METHOD = "random"
MATH_METRICS: dict[str, str] = {"min_coherence": "Min. coherence", "mean_coherence": "Avg. coherence"}
"""Path columns of notebook 08 -> the paper's row names in Tables 2 and 4."""
UNIT = "endpoint pair"
N_BOOT = 2000
TABLE2_FAMILY = "Table 2: Pearson r, every collection x mode x coherence metric"
TABLE4_LLM_FAMILY = "Table 4 LLM rows: every collection x mode (paired t over endpoint pairs)"


def _ci(prefix: str, boot: np.ndarray) -> dict:
    iv = rs.percentile_interval(boot)
    return {f"{prefix}_ci_low": iv.low, f"{prefix}_ci_high": iv.high}


def llm_metric_name(mode: str) -> str:
    """The paper's Table 4 row name for a judge mode, e.g. ``"LLM simple"``, ``"LLM CoT"``."""
    return "LLM " + ("CoT" if mode == "cot" else mode)


def _short(metric: str) -> str:
    return "min" if metric == "min_coherence" else ("avg" if metric == "mean_coherence" else metric)


def correlation_table(judged: pd.DataFrame, metrics: Sequence[str] = ("min_coherence", "mean_coherence"),
                      n_boot: int = N_BOOT, seed: int = 0) -> pd.DataFrame:
    """Table 2: per collection and mode, Pearson r of the mean LLM score with each coherence
    metric, with its pair-bootstrap 95% interval and bootstrap p (``pearson_p_boot_<m>``, Holm /
    Bonferroni over the whole table), scipy's p and the Fisher-z interval, and Spearman rho with
    its p; n counts narratives, n_pairs endpoint pairs.

    ``best_mode_<m>``, ``runner_up_<m>`` and ``pearson_<m>_lead`` (:func:`_leads`): this mode's r
    minus the largest r of the collection's other modes, with a paired interval (every mode's r
    recomputed on the same resampled endpoint pairs)."""
    rows = []
    for coll, gc in judged.groupby("collection", sort=False):
        gc = gc.reset_index(drop=True)
        # no pair ids: the i-th narrative of every mode is taken as the same unit
        clusters = (gc["pair_id"].to_numpy() if "pair_id" in gc.columns else
                    gc.groupby("mode", sort=False).cumcount().to_numpy())
        w_all = rs.cluster_weights(clusters, n_boot, seed)   # one draw of pairs for every mode
        boots: dict[str, dict[str, np.ndarray]] = {}
        for mode, g in gc.groupby("mode", sort=False):
            at = g.index.to_numpy()
            ok = g["score_mean"].notna().to_numpy()
            row = {"collection": coll, "mode": mode, "n": int(ok.sum()), "n_pairs": int(len(np.unique(clusters[at][ok])))}
            w = w_all[:, at]
            notes = []
            for m in metrics:
                short = _short(m)
                pr = correlation(g[m], g["score_mean"], method="pearson").iloc[0]
                sr = correlation(g[m], g["score_mean"], method="spearman").iloc[0]
                boot = rs.weighted_pearson(g[m].to_numpy(float), g["score_mean"].to_numpy(float), w)
                boots.setdefault(short, {})[mode] = boot
                row[f"pearson_{short}"] = pr["r"]
                row.update(_ci(f"pearson_{short}", boot) if np.isfinite(pr["r"]) else
                           {f"pearson_{short}_ci_low": np.nan, f"pearson_{short}_ci_high": np.nan})
                row[f"pearson_p_boot_{short}"] = rs.bootstrap_p(boot) if np.isfinite(pr["r"]) else np.nan
                row[f"pearson_p_{short}"] = pr["p"]
                row[f"pearson_{short}_ci_low_fisher"], row[f"pearson_{short}_ci_high_fisher"] = pr["ci_low"], pr["ci_high"]
                row[f"spearman_{short}"], row[f"spearman_p_{short}"] = sr["r"], sr["p"]
                notes += [f"{short}: {pr['note']}"] if pr["note"] else []
                notes.append(rs.interval_note(f"r {short}", boot, pr["r"], row["n_pairs"]))
            row["note"] = rules.join(*notes)
            rows.append(row)
        for short, by_mode in boots.items():
            _leads(rows[len(rows) - len(by_mode):], short, by_mode)
    out = _in_mode_order(pd.DataFrame(rows))
    return _adjust_wide(out, [_short(m) for m in metrics], n_boot, seed)


def _leads(rows: list[dict], short: str, boots: dict[str, np.ndarray]) -> None:
    """Fill one collection's ``rows`` with the best and runner-up mode by ``pearson_<short>`` and
    each row's lead over the best other mode, its interval from the modes' paired ``boots``."""
    r = {row["mode"]: row[f"pearson_{short}"] for row in rows}
    ranked = sorted((m for m in r if np.isfinite(r[m])), key=lambda m: -r[m])
    name = f"pearson_{short}_lead"
    for row in rows:
        row[f"best_mode_{short}"] = ranked[0] if len(ranked) >= 2 else None
        row[f"runner_up_{short}"] = ranked[1] if len(ranked) >= 2 else None
        others = [m for m in ranked if m != row["mode"]]
        if not others or not np.isfinite(r[row["mode"]]):
            row.update({name: np.nan, f"{name}_ci_low": np.nan, f"{name}_ci_high": np.nan})
            row["note"] = rules.join(row["note"], f"{short} lead: fewer than 2 modes with an r")
            continue
        boot = boots[row["mode"]] - np.max(np.stack([boots[m] for m in others]), axis=0)
        row[name] = r[row["mode"]] - r[others[0]]
        row.update(_ci(name, boot))
        row["note"] = rules.join(row["note"], rs.interval_note(f"{short} lead", boot, row[name], row["n_pairs"]))


def _adjust_wide(t: pd.DataFrame, shorts: list[str], n_boot: int, seed: int) -> pd.DataFrame:
    """Holm / Bonferroni over every bootstrap p of the table (rows x metrics: one family)."""
    if t.empty:
        return t
    cols = [f"pearson_p_boot_{s}" for s in shorts]
    flat = t[cols].to_numpy(float).ravel()
    holm, bonf = adjust(flat, len(flat), "holm"), adjust(flat, len(flat), "bonferroni")
    for i, s in enumerate(shorts):
        t[f"p_holm_{s}"] = holm.reshape(len(t), len(shorts))[:, i]
        t[f"p_bonferroni_{s}"] = bonf.reshape(len(t), len(shorts))[:, i]
    t["mc_family"] = TABLE2_FAMILY
    t["unit"] = UNIT
    t["ci_method"] = rs.ci_method(n_boot, seed) + "; p: bootstrap over pairs"
    return t


def _in_mode_order(df: pd.DataFrame) -> pd.DataFrame:
    """Rows sorted by collection (first appearance) and the paper's mode order (:data:`MODES`)."""
    if df.empty:
        return df
    coll_rank = {c: i for i, c in enumerate(dict.fromkeys(df["collection"]))}
    mode_rank = {m: i for i, m in enumerate(MODES)}
    key = df["collection"].map(coll_rank) * 100 + df["mode"].map(lambda m: mode_rank.get(m, 99))
    return df.iloc[np.argsort(key.to_numpy(), kind="stable")].reset_index(drop=True)


def discrimination(values: np.ndarray, is_positive: np.ndarray, pair_ids: np.ndarray | None = None,
                   n_boot: int = N_BOOT, seed: int = 0) -> dict[str, float]:
    """Max-capacity (positive) against random ``values`` (NaN dropped): Cohen's d with the pooled
    SD (``d``) and the average-variance SD of the original code (``d_avg_sd``), AUC-ROC and the
    group means, each with its cluster-bootstrap interval over ``pair_ids`` (each row its own
    cluster when None); the paired t-test (``p``) and Wilcoxon signed-rank test over pairs;
    Welch's t-test and Mann–Whitney U. Keys as notebook 08's Table 4 columns where they overlap."""
    v = np.asarray(values, float)
    pos = np.asarray(is_positive, bool)
    ids = np.arange(len(v)) if pair_ids is None else np.asarray(pair_ids)
    a, b = v[pos], v[~pos]
    d = cohens_d(a, b, sd=("pooled", "average")).set_index("sd_convention")
    roc, t, u = auc(a, b).iloc[0], ttest(a, b, equal_var=False).iloc[0], mann_whitney(a, b).iloc[0]
    if pair_ids is None:   # no pairing known: no paired test (the rows are the clusters of the bootstrap)
        x = y = np.empty(0)
        pt, wx = {"p": np.nan, "note": ""}, {"p": np.nan}
    else:
        x, y = _by_pair(v, pos, ids)
        pt, wx = paired_ttest(x, y).iloc[0], wilcoxon(x, y).iloc[0]
    w = rs.cluster_weights(ids, n_boot, seed)
    boot_d = rs.weighted_cohens_d(a, w[:, pos], b, w[:, ~pos])
    return {
        "n_maxcap": int(d.loc["pooled", "n_x"]), "n_random": int(d.loc["pooled", "n_y"]),
        "n_pairs": int(np.sum(np.isfinite(x) & np.isfinite(y))),
        "mean_maxcap": float(d.loc["pooled", "mean_x"]), **_ci("mean_maxcap", rs.weighted_mean(a, w[:, pos])),
        "mean_random": float(d.loc["pooled", "mean_y"]), **_ci("mean_random", rs.weighted_mean(b, w[:, ~pos])),
        "d": float(d.loc["pooled", "d"]),
        **(_ci("d", boot_d) if np.isfinite(d.loc["pooled", "d"]) else {"d_ci_low": np.nan, "d_ci_high": np.nan}),
        "d_avg_sd": float(d.loc["average", "d"]),
        "auc": float(roc["auc"]), **_ci("auc", rs.weighted_auc(a, w[:, pos], b, w[:, ~pos])),
        "p": float(pt["p"]), "test": "paired t over endpoint pairs", "wilcoxon_p": float(wx["p"]),
        "t_stat": float(t["t"]), "t_p": float(t["p"]), "mw_u": float(u["u"]), "mw_p": float(u["p"]),
        "note": rules.join(d.loc["pooled", "note"], t["note"], pt["note"],
                           rs.interval_note("d", boot_d, d.loc["pooled", "d"], len(np.unique(ids)))),
    }


def _by_pair(v: np.ndarray, pos: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positive and negative values aligned by pair id (NaN where a pair lacks one side)."""
    frame = pd.DataFrame({"pair": ids, "pos": pos, "v": v})
    wide = frame.pivot_table(index="pair", columns="pos", values="v", aggfunc="first", dropna=False)
    wide = wide.reindex(columns=[True, False])
    return wide[True].to_numpy(float), wide[False].to_numpy(float)


def d_minus_math(g: pd.DataFrame, n_boot: int = N_BOOT, seed: int = 0, metric: str = "min_coherence") -> dict:
    """The judge's d (pooled SD, ``score_mean``) minus the mathematical ``metric``'s d over the same
    narratives, with the pair bootstrap of the difference (both d's from the same resampled pairs):
    the paper's "close to that of mathematical coherence" as one interval. Empty without ``metric``."""
    if metric not in g.columns:
        return {}
    pos = (g["method"] == POSITIVE_METHOD).to_numpy()
    w = rs.cluster_weights(g["pair_id"].to_numpy(), n_boot, seed)
    est, boot = 0.0, 0.0
    for col, sign in (("score_mean", 1), (metric, -1)):
        v = g[col].to_numpy(float)
        est += sign * float(cohens_d(v[pos], v[~pos]).iloc[0]["d"])
        boot = boot + sign * rs.weighted_cohens_d(v[pos], w[:, pos], v[~pos], w[:, ~pos])
    name = f"d_minus_{metric}"
    return {name: est, **(_ci(name, boot) if np.isfinite(est) else {f"{name}_ci_low": np.nan, f"{name}_ci_high": np.nan})}


def effect_size_table(judged: pd.DataFrame, paths: pd.DataFrame | None = None,
                      include_math: bool = True, n_boot: int = N_BOOT, seed: int = 0) -> pd.DataFrame:
    """Table 4 (and Figure 8 i, l): per collection, one :func:`discrimination` row per metric —
    min and average coherence (of the judged narratives' paths, or of ``paths``) and each mode's
    mean score. ``metric`` is the paper's row name, ``column`` the path column or mode, ``kind``
    "math" or "llm"; ``p_holm`` / ``p_bonferroni`` adjust ``p`` within ``mc_family`` (the LLM rows;
    the maths rows)."""
    rows = []
    for coll, g in judged.groupby("collection", sort=False):
        if include_math:
            src = paths[paths["collection"] == coll] if paths is not None else (
                g.drop_duplicates(["pair_id", "method"]))
            for key, label in MATH_METRICS.items():
                if key in src.columns:
                    rows.append({"collection": coll, "metric": label, "column": key, "kind": "math",
                                 **discrimination(src[key].to_numpy(float), (src["method"] == POSITIVE_METHOD).to_numpy(),
                                                  src["pair_id"].to_numpy(), n_boot, seed)})
        present = list(dict.fromkeys(g["mode"]))
        for mode in [m for m in MODES if m in present] + [m for m in present if m not in MODES]:
            gm = g[g["mode"] == mode]
            rows.append({"collection": coll, "metric": llm_metric_name(mode), "column": mode, "kind": "llm",
                         **discrimination(gm["score_mean"].to_numpy(float), (gm["method"] == POSITIVE_METHOD).to_numpy(),
                                          gm["pair_id"].to_numpy(), n_boot, seed),
                         **d_minus_math(gm, n_boot, seed)})
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    out["mc_family"] = np.where(out["kind"] == "llm", TABLE4_LLM_FAMILY,
                                "Table 4 maths rows over the judged narratives (paired t over endpoint pairs)")
    out["p_holm"], out["p_bonferroni"] = np.nan, np.nan
    for _, idx in out.groupby("mc_family").groups.items():
        p = out.loc[idx, "p"]
        out.loc[idx, "p_holm"], out.loc[idx, "p_bonferroni"] = adjust(p, len(p), "holm"), adjust(p, len(p), "bonferroni")
    out["unit"], out["ci_method"] = UNIT, rs.ci_method(n_boot, seed)
    return out


def correlation_matrix(judged: pd.DataFrame, collection: str,
                       metrics: Sequence[str] = ("min_coherence", "mean_coherence", "length")) -> pd.DataFrame:
    """Figure 8(j): Pearson correlations among the coherence metrics and each mode's mean LLM
    score, over the narratives of one collection (narratives as rows, pairwise-complete)."""
    g = judged[judged["collection"] == collection]
    wide = g.pivot_table(index=["pair_id", "method"], columns="mode", values="score_mean")
    wide = wide[[m for m in MODES if m in wide.columns] + [m for m in wide.columns if m not in MODES]]
    wide.columns = [llm_metric_name(c) for c in wide.columns]
    base = g.drop_duplicates(["pair_id", "method"]).set_index(["pair_id", "method"])
    base = base[[m for m in metrics if m in base.columns]].rename(columns={**MATH_METRICS, "length": "Path length"})
    return base.join(wide).corr(method="pearson")
