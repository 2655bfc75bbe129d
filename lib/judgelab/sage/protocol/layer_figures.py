"""Figures and small tables that notebooks 02–04 show for one layer.

- :func:`final_scores_figure` — per-dimension final (Round-5) evaluator scores, by category and mode;
- :func:`trajectory_figure` — mean evaluator score per round (R1–R5), per dimension and mode,
  with the validator's blind and review means beside them;
- :func:`failure_list` — the failed replies, for the notebook's failure list.

House style (:mod:`judgelab.style`); legends sit under the panels, never over the points.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab import style
from judgelab.sage.protocol import prompts
from judgelab.sage.settings import CATEGORIES, MODES


def final_scores_figure(rows: pd.DataFrame, layer: str):
    """Strip plot of final evaluator scores (R5, status ok): one panel per mode, dimensions on
    the x axis, categories side by side."""
    codes = prompts.layer_spec(layer).codes
    fin = rows[(rows["track"] == "evaluator") & (rows["round"] == 5) & (rows["status"] == "ok")]
    modes = [m for m in MODES if m in set(rows["mode"])] or list(MODES)
    fig, axes = style.subplots(len(modes), width=4.2, height=3.4, sharey=True)
    rng = np.random.default_rng(0)
    pos = {c: i for i, c in enumerate(codes)}
    for ax, mode in zip(axes[0], modes):
        sub = fin[fin["mode"] == mode]
        for j, cat in enumerate(CATEGORIES):
            pts = sub[sub["category"] == cat]
            x = np.array([pos[d] for d in pts["dimension"]], dtype=float) + (j - 1) * 0.22
            ax.scatter(x + rng.uniform(-0.05, 0.05, len(x)), pts["score"].to_numpy(float), s=22, alpha=0.8,
                       color=style.CATEGORY_COLOURS[cat], marker=style.CATEGORY_MARKERS[cat],
                       label=style.CATEGORY_LABELS[cat] if len(pts) else None)
        ax.set_xticks(range(len(codes)), codes)
        ax.set_xlim(-0.5, len(codes) - 0.5)  # every dimension's slot, whichever categories have points
        ax.set_ylim(0.8, 5.2)
        ax.set_title(f"{layer}, {mode} mode (final round)")
        ax.grid(axis="y")
        if sub.empty:
            style.empty_panel(ax, "no scored replies")
    axes[0][0].set_ylabel("score (1–5)")
    style.figure_legend(fig, axes[0], where="below", ncol=len(CATEGORIES))
    return fig


def trajectory_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean score per mode x dimension x step, steps R1–R5 then V-blind and V-review (ok rows)."""
    ok = rows[rows["status"] == "ok"].copy()
    ok["step"] = [f"R{r}" if t == "evaluator" else ("V-blind" if t == "validator_blind" else "V-review")
                  for t, r in zip(ok["track"], ok["round"])]
    return ok.groupby(["mode", "dimension", "step"], as_index=False).agg(
        mean_score=("score", "mean"), n=("score", "size"))


STEPS = ["R1", "R2", "R3", "R4", "R5", "V-blind", "V-review"]


def trajectory_figure(rows: pd.DataFrame, layer: str):
    """Round-by-round mean score per dimension (one panel per mode): evaluator rounds R1–R5 as
    lines, the validator's blind and review means as squares right of the dotted line."""
    tab = trajectory_table(rows)
    codes = prompts.layer_spec(layer).codes
    modes = [m for m in MODES if m in set(rows["mode"])] or list(MODES)
    fig, axes = style.subplots(len(modes), width=4.2, height=3.4, sharey=True)
    for ax, mode in zip(axes[0], modes):
        for k, code in enumerate(codes):
            sub = tab[(tab["mode"] == mode) & (tab["dimension"] == code)].set_index("step").reindex(STEPS)
            y = sub["mean_score"].to_numpy(float)
            ax.plot(range(5), y[:5], marker="o", color=style.colour(k), label=code)
            ax.scatter([5.3, 6.3], y[5:], marker="s", s=18, color=style.colour(k))
        ax.axvline(4.65, color=style.GREY, lw=0.8, ls=":")
        ax.set_xticks([0, 1, 2, 3, 4, 5.3, 6.3], STEPS)
        ax.set_ylim(0.8, 5.2)
        ax.set_title(f"{layer}, {mode} mode: trajectory")
        ax.grid(axis="y")
    axes[0][0].set_ylabel("mean score")
    style.figure_legend(fig, axes[0], where="below", ncol=len(codes), title="dimension (squares: validator)")
    return fig


def failure_list(failures: pd.DataFrame) -> pd.DataFrame:
    """The failure list, shortest useful form (error text cut at 160 characters)."""
    out = failures.copy()
    out["error"] = out["error"].astype(str).str.slice(0, 160)
    return out.reset_index(drop=True)
