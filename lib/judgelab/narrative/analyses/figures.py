"""Figures of notebook 10: Figure 9's six panels (the Narrative paper, section 5.8) and the OOD comparison.

Each function takes the tidy frames of the follow-up analyses (the follow-up table of
:func:`judgelab.narrative.analyses.inputs.narrative_table` and the tables made from it) or of the
OOD study (:mod:`judgelab.narrative.analyses.ood_study`) and returns a matplotlib Figure drawn in
the house style (:mod:`judgelab.style`), saved as ``narr_fig09_<panel>`` and ``narr_ood_scores``.
"""
from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from judgelab import style
from judgelab.narrative.judges.prompts import MODES


def _grid(n_cols: int, w: float = style.PANEL_WIDTH, h: float = 4.4):
    """One row of ``n_cols`` panels in the house size (constrained layout: titles, labels, colour
    bars and outside legends get their room; the caption is placed by ``save_figure``)."""
    fig, axes = style.subplots(n_cols, 1, width=w, height=h)
    return fig, axes[0]


def _ordered_modes(df: pd.DataFrame) -> list[str]:
    have = set(df["mode"])
    return [m for m in MODES if m in have] + sorted(have - set(MODES))


def _yerr(d: pd.DataFrame, col: str, fallback: str | None = None):
    """Asymmetric error bars from ``col_ci_low`` / ``col_ci_high``, else ``fallback`` (a SD column)."""
    lo, hi = f"{col}_ci_low", f"{col}_ci_high"
    if lo in d.columns and hi in d.columns:
        v = d[col].to_numpy(float)
        return np.vstack([np.clip(v - d[lo].to_numpy(float), 0, None), np.clip(d[hi].to_numpy(float) - v, 0, None)])
    return d[fallback] if fallback else None


def predictive_r2(table06: pd.DataFrame) -> plt.Figure:
    """(a) cross-validated R² by model and mode, one axis per collection (error bars: the 95%
    pair-bootstrap interval of Table 6 when present, else the SD over folds)."""
    colls = list(dict.fromkeys(table06["collection"]))
    fig, axes = _grid(len(colls))
    for ax, c in zip(axes, colls):
        d = table06[table06["collection"] == c]
        modes, models = _ordered_modes(d), list(dict.fromkeys(d["model"]))
        w = 0.8 / max(1, len(models))
        for j, m in enumerate(models):
            dm = d[d["model"] == m].set_index("mode").reindex(modes)
            ax.bar(np.arange(len(modes)) + j * w, dm["r2_mean"], w, yerr=_yerr(dm, "r2_mean", "r2_sd"), label=m, capsize=2)
        ax.set_xticks(np.arange(len(modes)) + 0.4 - w / 2, modes)
        ax.axhline(0, color="k", lw=0.5)
        ax.set_title(f"{c}: R² (5-fold CV)")
        ax.set_ylabel("R²")
        style.legend_right(ax)
    return fig


def disagreement_by_mode(table08: pd.DataFrame) -> plt.Figure:
    """(b) mean SD across the K agents per mode, one axis per collection (error bars: the 95%
    pair-bootstrap interval of Table 8 when present)."""
    colls = list(dict.fromkeys(table08["collection"]))
    fig, axes = _grid(len(colls))
    for ax, c in zip(axes, colls):
        d = table08[table08["collection"] == c].set_index("mode").reindex(_ordered_modes(table08[table08["collection"] == c]))
        ax.bar(d.index, d["mean_sd"], color=style.colour(0), label="this run", yerr=_yerr(d, "mean_sd"), capsize=2)
        if "paper_mean_sd" in d:
            ax.scatter(d.index, d["paper_mean_sd"], color="k", marker="_", s=300, label="paper")
        ax.set_title(f"{c}: agent disagreement")
        ax.set_ylabel("mean SD over K agents")
        style.legend_right(ax)
    return fig


def temporal_scatter(long: pd.DataFrame, mode: str = "standard") -> plt.Figure:
    """(c) temporal span vs minimum coherence, coloured by the mean LLM score of ``mode`` (or the
    first mode present)."""
    if mode not in set(long["mode"]):
        mode = _ordered_modes(long)[0]
    d = long[long["mode"] == mode]
    colls = list(dict.fromkeys(d["collection"]))
    fig, axes = _grid(len(colls))
    for ax, c in zip(axes, colls):
        g = d[d["collection"] == c]
        sc = ax.scatter(g["temporal_span"], g["min_coherence"], c=g["score_mean"], cmap="viridis", vmin=1, vmax=10, s=18)
        unit = g["span_unit"].iloc[0] if len(g) else ""
        ax.set_xlabel(f"temporal span ({unit})")
        ax.set_ylabel("minimum coherence")
        ax.set_title(f"{c}: span vs coherence ({mode} score)")
        fig.colorbar(sc, ax=ax, label=f"LLM {mode} score")
    return fig


def complexity_hexbin(long: pd.DataFrame, mode: str = "standard") -> plt.Figure:
    """(d) path complexity score vs the mean LLM score of ``mode`` (hexbin density)."""
    if mode not in set(long["mode"]):
        mode = _ordered_modes(long)[0]
    d = long[long["mode"] == mode].dropna(subset=["complexity_score", "score_mean"])
    colls = list(dict.fromkeys(d["collection"]))
    fig, axes = _grid(len(colls))
    for ax, c in zip(axes, colls):
        g = d[d["collection"] == c]
        ax.hexbin(g["complexity_score"], g["score_mean"], gridsize=12, cmap="viridis", mincnt=1)
        ax.set_xlabel("complexity score\n(mean z of coherence var, weak links, 1 - efficiency)")
        ax.set_ylabel(f"LLM {mode} score")
        ax.set_title(f"{c}: complexity vs score")
    return fig


def error_histogram(errors: pd.DataFrame) -> plt.Figure:
    """(e) normalised LLM score − normalised coherence, per mode, zero line = agreement."""
    colls = list(dict.fromkeys(errors["collection"]))
    fig, axes = _grid(len(colls))
    for ax, c in zip(axes, colls):
        g = errors[errors["collection"] == c]
        for m in _ordered_modes(g):
            ax.hist(g.loc[g["mode"] == m, "error"].dropna(), bins=15, alpha=0.5, label=m)
        ax.axvline(0, color="k", lw=1)
        ax.set_xlabel("normalised score − normalised min coherence")
        ax.set_title(f"{c}: evaluation errors")
        style.legend_right(ax)
    return fig


def method_comparison(summary: pd.DataFrame) -> plt.Figure:
    """(f) mean minimum coherence and mean LLM score / 10 by method, per mode."""
    colls = list(dict.fromkeys(summary["collection"]))
    fig, axes = _grid(len(colls))
    for ax, c in zip(axes, colls):
        g = summary[summary["collection"] == c]
        modes = _ordered_modes(g)
        labels = ["min coherence"] + [f"LLM {m} / 10" for m in modes]
        x = np.arange(len(labels))
        for j, method in enumerate(("maxcap", "random")):
            gm = g[g["method"] == method].set_index("mode")
            vals = [gm["min_coherence"].mean()] + [gm["score_scaled"].get(m, np.nan) for m in modes]
            ax.bar(x + j * 0.4, vals, 0.4, color=style.METHOD_COLOURS[method], label=method)
        ax.set_xticks(x + 0.2, labels, rotation=30, ha="right", fontsize=7)
        ax.set_title(f"{c}: max capacity vs random")
        style.legend_right(ax)
    return fig


def ood_scores(long: pd.DataFrame, kinds: Sequence[str]) -> plt.Figure:
    """LLM score and minimum coherence by narrative kind (in-distribution, OOD, perturbed), one
    axis per quantity; points are narratives (mean over K agents), one colour per mode."""
    fig, axes = _grid(2, w=5.5)
    kinds = [k for k in kinds if k in set(long["kind"])]
    modes = _ordered_modes(long)
    for ax, col, label in zip(axes, ("score_mean", "min_coherence"), ("mean LLM score", "minimum coherence")):
        for j, m in enumerate(modes):
            for i, k in enumerate(kinds):
                v = long.loc[(long["kind"] == k) & (long["mode"] == m), col].dropna()
                xs = np.full(len(v), i + (j - (len(modes) - 1) / 2) * 0.15)
                ax.scatter(xs, v, s=14, alpha=0.7, color=style.colour(j), label=m if i == 0 else None)
        ax.set_xticks(range(len(kinds)), kinds, rotation=30, ha="right")
        ax.set_ylabel(label)
    style.figure_legend(fig, title="judge mode", where="right")
    return fig


FIGURE9_CAPTIONS: dict[str, str] = {
    "a_predictive": "Fig. 9(a) cross-validated R² by model and mode (error bars: 95% cluster bootstrap interval "
                    "over endpoint pairs, held-out predictions fixed).",
    "b_disagreement": "Fig. 9(b) mean SD across K agents per mode (bars, 95% cluster bootstrap interval over "
                      "endpoint pairs) and the paper's (dashes).",
    "c_temporal": "Fig. 9(c) temporal span vs minimum coherence, coloured by the LLM score.",
    "d_complexity": "Fig. 9(d) path complexity vs LLM score.",
    "e_errors": "Fig. 9(e) normalised score minus normalised minimum coherence.",
    "f_methods": "Fig. 9(f) coherence and scaled LLM score by method.",
}
"""What each panel of Figure 9 shows (the notebook adds the run's provenance)."""


def figure9_panels(table06: pd.DataFrame, table08: pd.DataFrame, long: pd.DataFrame) -> list[tuple[str, plt.Figure, str]]:
    """Figure 9's six panels as ``(panel name, figure, caption)``, saved as ``narr_fig09_<name>``,
    from Table 6, Table 8 (with ``paper_mean_sd``) and the follow-up table."""
    from judgelab.narrative.analyses.disagreement import evaluation_errors, method_summary

    figs = {
        "a_predictive": lambda: predictive_r2(table06),
        "b_disagreement": lambda: disagreement_by_mode(table08),
        "c_temporal": lambda: temporal_scatter(long),
        "d_complexity": lambda: complexity_hexbin(long),
        "e_errors": lambda: error_histogram(evaluation_errors(long)),
        "f_methods": lambda: method_comparison(method_summary(long)),
    }
    return [(name, make(), FIGURE9_CAPTIONS[name]) for name, make in figs.items()]


VERDICT_COLOURS = {"reproduced": 2, "not reproduced": 5, "inconclusive": 7}   # Okabe-Ito indices


def specification_curve_figure(estimates: pd.DataFrame, claim_ids: Sequence[str], choices: dict,
                               dimensions: Sequence[str]):
    """A specification curve (Simonsohn, Simmons & Nelson 2020) per claim, side by side: above,
    each specification's estimate with its 95% interval, sorted, coloured by the claim's verdict,
    with the paper's value (dashed) and its margin (shaded); below, the choices of each
    specification marked in a matrix (one row per value of a dimension that varies), the main
    specification's column outlined. ``estimates``: :func:`robustness.claim_estimates` rows."""
    varied = [d for d in dimensions if estimates[d].nunique() > 1]
    rows = [(d, v) for d in varied for v in dict.fromkeys(estimates[d].astype(str))]
    n = len(claim_ids)
    fig, axes = style.subplots(n, 2, width=max(4.2, 0.11 * estimates["spec_id"].nunique() + 2.0), height=2.6,
                               gridspec_kw={"height_ratios": [3, max(1.0, 0.35 * len(rows))]}, sharex="col")
    for k, cid in enumerate(claim_ids):
        g = estimates[estimates["claim_id"] == cid].sort_values("estimate", kind="stable").reset_index(drop=True)
        top, bottom = axes[0][k], axes[1][k]
        x = np.arange(len(g))
        colours = {v: style.colour(i) for v, i in VERDICT_COLOURS.items()}
        defensible = g["defensible"].astype(bool).to_numpy()
        for verdict in list(VERDICT_COLOURS) + sorted(set(g["verdict"]) - set(VERDICT_COLOURS)):
            for fair in (True, False):   # open markers: a specification that is not the paper's design
                m = (g["verdict"] == verdict).to_numpy() & (defensible == fair)
                if not m.any():
                    continue
                colour = colours.get(verdict, style.GREY)      # grey: not comparable, no rule applied
                top.errorbar(x[m], g["estimate"][m], yerr=[np.clip(g["estimate"][m] - g["ci_low"][m], 0, None),
                                                           np.clip(g["ci_high"][m] - g["estimate"][m], 0, None)],
                             fmt="o", ms=3.5, lw=0.8, color=colour, mfc=colour if fair else "white",
                             label=verdict if fair else f"{verdict} (not the paper's design)")
        pv, m = float(g["paper_value"].iloc[0]), float(g["margin"].iloc[0])
        top.axhline(pv, color="black", ls="--", lw=0.8, label="paper's value")
        if g["rule"].iloc[0] == "value":
            top.axhspan(pv - m, pv + m, color=style.GREY, alpha=0.15, lw=0, label="± margin")
        elif g["rule"].iloc[0] == "direction":
            top.axhline(0, color=style.GREY, lw=0.8)
        main = np.flatnonzero(g["main"].to_numpy())
        top.set_title(str(g["label"].iloc[0]).replace("NT math: ", ""), fontsize=style.SMALL_SIZE)
        top.set_ylabel("estimate (95% CI)" if k == 0 else "")
        for j, (d, v) in enumerate(rows):
            hit = (g[d].astype(str) == v).to_numpy()
            bottom.plot(x[hit], np.full(hit.sum(), j), "s", ms=2.5, color="black")
        for i in main:
            bottom.axvspan(i - 0.5, i + 0.5, color=style.colour(1), alpha=0.25, lw=0)
        bottom.set_yticks(range(len(rows)))
        bottom.set_yticklabels([choices[d][v]["label"] if d in choices and v in choices[d] else f"{d} {v}"
                                for d, v in rows] if k == 0 else [], fontsize=style.SMALL_SIZE)
        bottom.set_ylim(len(rows) - 0.5, -0.5)
        bottom.set_xlabel("specification (sorted by estimate)")
        bottom.set_xticks([])
    style.figure_legend(fig, [axes[0][k] for k in range(n)], where="below")
    return fig
