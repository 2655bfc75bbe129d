"""A judge panel's tables: how far its judges agree, and whether each study's headline survives a
change of judge (the members' outputs: :func:`judgelab.panel.stack`).

- :func:`agreement`: the narrative study's agreement table with the judges as the raters, per
  SAGE layer x mode (items: stories) or narrative collection x mode (items: narratives);
- :func:`sage_headline`: per judge and layer (content mode), the genre ordering and Cohen's d of
  canonical vs LLM and vs pulp, and each judge's d minus the first judge's, cluster-bootstrap 95%
  intervals over stories within category (all judges' scores of a story drawn together, so the
  difference is paired by story);
- :func:`narrative_headline`: per judge, collection and mode, Pearson r of the mean judge score with
  minimum coherence, and each judge's r minus the first judge's, pair-bootstrap 95% intervals.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab.narrative.judges.agreement import agreement_table
from judgelab.sage.analysis.genre import genre_point_statistics
from judgelab.stats import resampling as rs
from judgelab.stats import rules
from judgelab.stats.bootstrap import cluster_bootstrap

PAIRS = (("canonical", "llm"), ("canonical", "pulp"))


def agreement(data: pd.DataFrame, by: list[str], item: list[str], score: str, n_boot: int = 2000,
              seed: int = 0) -> pd.DataFrame:
    """One row per ``by`` group: the narrative agreement table with the judges as raters."""
    unit = "endpoint pair" if "pair_id" in item else "story"
    table = agreement_table(data.rename(columns={"judge": "agent", score: "score"}), by, item, n_boot, seed)
    return table.assign(unit=unit, ci_method=rs.ci_method(n_boot, seed, unit)).rename(columns={"k_agents": "n_judges"})


def sage_headline(scores: pd.DataFrame, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per judge and layer: ordering, d and d minus the first judge's (module docstring).
    ``scores``: the members' SAGE summaries (judge, story_id, category, layer, mode, overall_score)."""
    units = scores[scores["mode"] == "content"].rename(columns={"overall_score": "score"})
    judges = sorted(units["judge"].unique())
    ref = judges[0]

    def statistic(frame: pd.DataFrame) -> dict[str, float]:
        out = {}
        for j in judges:
            st = genre_point_statistics(frame[frame["judge"] == j])
            for k, v in st.items():
                out[f"{j}|{k}"] = v
                if j != ref and "|d_pooled_sd_" in k:
                    out[f"{j} vs {ref}|{k}"] = v - out.get(f"{ref}|{k}", np.nan)
        return out

    boot = cluster_bootstrap(units, statistic, cluster="story_id", strata="category", n_boot=n_boot, seed=seed,
                             unit="story")
    parts = boot["statistic"].str.split("|", expand=True)
    vs = parts[0].str.contains(" vs ", regex=False)
    boot = boot.assign(judge=parts[0].str.split(" vs ").str[0], layer=parts[1], stat=parts[2],
                       what=np.where(vs, f"d minus {ref}'s", "d"))
    means = boot[boot["stat"].str.startswith("mean_") & boot["estimate"].notna()]
    ordering = (means.assign(category=means["stat"].str[5:])
                .sort_values("estimate", ascending=False).groupby(["judge", "layer"])["category"]
                .agg(lambda c: " > ".join(c)).rename("ordering"))
    wanted = [f"d_pooled_sd_{a}_{b}" for a, b in PAIRS]
    table = boot[boot["stat"].isin(wanted)].merge(ordering.reset_index(), on=["judge", "layer"], how="left")
    return table[["judge", "layer", "ordering", "stat", "what", "estimate", "ci_low", "ci_high", "n_clusters",
                  "note", "unit", "ci_method"]].sort_values(["layer", "stat", "judge"]).reset_index(drop=True)


def narrative_headline(judged: pd.DataFrame, metric: str = "min_coherence", n_boot: int = 2000,
                       seed: int = 0) -> pd.DataFrame:
    """Per collection and mode: each judge's r, and r minus the first judge's (module docstring).
    ``judged``: narratives with judge, collection, pair_id, method, mode, score_mean and ``metric``."""
    rows = []
    for (coll, mode), g in judged.groupby(["collection", "mode"], sort=True):
        wide = g.pivot_table(index=["pair_id", "method", metric], columns="judge", values="score_mean")
        judges, wide = list(wide.columns), wide.dropna().reset_index()
        n_pairs = int(wide["pair_id"].nunique())
        base = {"collection": coll, "mode": mode, "n_narratives": len(wide), "n_pairs": n_pairs}
        if len(wide) < rules.MIN_PAIRS:
            rows += [{**base, "judge": j, "what": f"r with {metric}", "estimate": np.nan,
                      "note": rules.too_few(len(wide), rules.MIN_PAIRS, "narratives scored by every judge")}
                     for j in judges]
            continue
        x, w = wide[metric].to_numpy(float), rs.cluster_weights(wide["pair_id"].to_numpy(), n_boot, seed)
        boots = {j: rs.weighted_pearson(x, wide[j].to_numpy(float), w) for j in judges}
        full = {j: float(rs.weighted_pearson(x, wide[j].to_numpy(float), np.ones((1, len(wide))))[0]) for j in judges}
        for j in judges:
            items = [(f"r with {metric}", full[j], boots[j])]
            if j != judges[0]:
                items.append((f"r minus {judges[0]}'s", full[j] - full[judges[0]], boots[j] - boots[judges[0]]))
            for what, est, b in items:
                iv = rs.percentile_interval(b)
                rows.append({**base, "judge": j, "what": what, "estimate": est, "ci_low": iv.low, "ci_high": iv.high,
                             "note": rs.interval_note(what, b, est, n_pairs)})
    return pd.DataFrame(rows).assign(unit="endpoint pair", ci_method=rs.ci_method(n_boot, seed))


def panel_tables(sage_scores: pd.DataFrame, narr_judged: pd.DataFrame, n_boot: int = 2000,
                 seed: int = 0) -> dict[str, pd.DataFrame]:
    """Notebook 12's panel tables by name, for each study the panel ran."""
    out: dict[str, pd.DataFrame] = {}
    if not sage_scores.empty:
        out["behaviour_panel_sage_agreement"] = agreement(sage_scores, ["layer", "mode"], ["story_id"],
                                                          "overall_score", n_boot, seed)
        out["behaviour_panel_sage_headline"] = sage_headline(sage_scores, n_boot, seed)
    if not narr_judged.empty:
        out["behaviour_panel_narr_agreement"] = agreement(narr_judged, ["collection", "mode"],
                                                          ["pair_id", "method"], "score_mean", n_boot, seed)
        out["behaviour_panel_narr_headline"] = narrative_headline(narr_judged, n_boot=n_boot, seed=seed)
    return out


def judged_panel(panel_narr: pd.DataFrame, all_paths: pd.DataFrame) -> pd.DataFrame:
    """The panel members' narrative scores (``panel.stack(["narr_judge_scores"])``) on their paths,
    a ``judge`` column per member; empty without a panel."""
    from judgelab.narrative.judges import scores as judge_scores

    if panel_narr.empty:
        return pd.DataFrame()
    return pd.concat([judge_scores.judged_paths(judge_scores.narrative_scores(g), all_paths).assign(judge=j)
                      for j, g in panel_narr.groupby("judge")], ignore_index=True)
