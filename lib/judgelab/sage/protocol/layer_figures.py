"""Figures and small tables that notebooks 02–04 show for one layer.

- :func:`final_scores_figure` — per-dimension final (Round-5) evaluator scores, by category and mode;
- :func:`trajectory_figure` — mean evaluator score per round (R1–R5), per dimension and mode,
  with the validator's blind and review means beside them;
- :func:`failure_list` — the failed replies, for the notebook's failure list.
"""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg", force=False)
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from judgelab.sage.protocol import prompts
from judgelab.sage.settings import CATEGORIES, MODES  # noqa: E402

_CAT_COLOURS = {"canonical": "#1b6ca8", "pulp": "#d98324", "llm": "#5b8c3a"}


def final_scores_figure(rows: pd.DataFrame, layer: str):
    """Strip plot of final evaluator scores (R5, status ok): one panel per mode, dimensions on
    the x axis, categories side by side."""
    codes = prompts.layer_spec(layer).codes
    fin = rows[(rows["track"] == "evaluator") & (rows["round"] == 5) & (rows["status"] == "ok")]
    modes = [m for m in MODES if m in set(rows["mode"])] or list(MODES)
    fig, axes = plt.subplots(1, len(modes), figsize=(4.2 * len(modes), 3.4), sharey=True, squeeze=False)
    rng = np.random.default_rng(0)
    for ax, mode in zip(axes[0], modes):
        sub = fin[fin["mode"] == mode]
        for j, cat in enumerate(CATEGORIES):
            pts = sub[sub["category"] == cat]
            pos = {c: i for i, c in enumerate(codes)}
            x = np.array([pos[d] for d in pts["dimension"]], dtype=float) + (j - 1) * 0.22
            ax.scatter(x + rng.uniform(-0.05, 0.05, len(x)), pts["score"].to_numpy(float), s=22, alpha=0.8,
                       color=_CAT_COLOURS[cat], label=cat if len(pts) else None)
        ax.set_xticks(range(len(codes)), codes)
        ax.set_ylim(0.8, 5.2)
        ax.set_title(f"{layer}, {mode} mode (final round)")
        ax.grid(axis="y", alpha=0.3)
        if sub.empty:
            ax.text(0.5, 0.5, "no scored replies", transform=ax.transAxes, ha="center")
    axes[0][0].set_ylabel("score (1–5)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    for ax in axes[0][1:]:
        h, lab = ax.get_legend_handles_labels()
        handles, labels = handles + [x for x, y in zip(h, lab) if y not in labels], labels + [y for y in lab if y not in labels]
    if handles:
        fig.legend(handles, labels, loc="upper right", fontsize=8)
    fig.tight_layout()
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
    """Round-by-round mean score per dimension (one panel per mode)."""
    tab = trajectory_table(rows)
    codes = prompts.layer_spec(layer).codes
    modes = [m for m in MODES if m in set(rows["mode"])] or list(MODES)
    fig, axes = plt.subplots(1, len(modes), figsize=(4.2 * len(modes), 3.4), sharey=True, squeeze=False)
    for ax, mode in zip(axes[0], modes):
        for code in codes:
            sub = tab[(tab["mode"] == mode) & (tab["dimension"] == code)].set_index("step").reindex(STEPS)
            y = sub["mean_score"].to_numpy(float)
            line, = ax.plot(range(5), y[:5], marker="o", label=code)
            ax.scatter([5.3, 6.3], y[5:], marker="s", s=18, color=line.get_color())
        ax.axvline(4.65, color="#999", lw=0.8, ls=":")
        ax.set_xticks([0, 1, 2, 3, 4, 5.3, 6.3], STEPS, fontsize=8)
        ax.set_ylim(0.8, 5.2)
        ax.set_title(f"{layer}, {mode} mode: trajectory")
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("mean score")
    axes[0][-1].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def failure_list(failures: pd.DataFrame) -> pd.DataFrame:
    """The failure list, shortest useful form (error text cut at 160 characters)."""
    out = failures.copy()
    out["error"] = out["error"].astype(str).str.slice(0, 160)
    return out.reset_index(drop=True)
