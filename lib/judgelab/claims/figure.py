"""The scorecard figure: claims down the side, the paper's value, ours and our 95% CI on one
standardised axis per claim, the verdict as a colour *and* a word on the right.

The common scale is (value - reference) / margin, the reference being the paper's value (a bound's
bound, 0 for "no effect" and a direction): a value rule is reproduced when the bar lies within ±1.
Points beyond ±:data:`CLIP` are drawn at the edge as arrows.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from judgelab import style
from judgelab.claims.verdicts import (INCONCLUSIVE, NOT_COMPARABLE, NOT_REPRODUCED, NOT_RUN, NOT_TESTABLE,
                                      REPRODUCED, REPRODUCED_WITHIN)

CLIP = 3.0
#: Okabe–Ito colours (colour-blind safe), with a marker each so that colour is never the only cue.
VERDICT_STYLE = {
    REPRODUCED: ("#009E73", "o"),
    REPRODUCED_WITHIN: ("#56B4E9", "h"),
    NOT_REPRODUCED: ("#D55E00", "X"),
    INCONCLUSIVE: ("#E69F00", "D"),
    NOT_COMPARABLE: ("#0072B2", "P"),
    NOT_TESTABLE: ("#777777", "s"),
    NOT_RUN: ("#CC79A7", "v"),
}


def reference_and_scale(rule: dict, paper_value) -> tuple[float, float]:
    """(reference, scale) of one claim (module docstring)."""
    if rule.get("type") in ("above", "below"):
        ref = rule.get("bound", paper_value)
    elif rule.get("type") in ("equivalence", "direction"):
        ref = 0.0
    else:
        ref = paper_value
    ref = float(ref) if ref is not None and np.isfinite(ref) else 0.0
    scale = rule.get("margin") or abs(ref) or 1.0
    return ref, float(scale)


def standardised(card: pd.DataFrame, rules: dict[str, dict]) -> pd.DataFrame:
    """The scorecard's paper value, estimate and CI as (value - reference) / scale, per claim."""
    rows = []
    for r in card.itertuples():
        ref, scale = reference_and_scale(rules[r.claim_id], r.paper_value)
        z = {k: (getattr(r, k) - ref) / scale if getattr(r, k) is not None and np.isfinite(getattr(r, k)) else math.nan
             for k in ("paper_value", "estimate", "ci_low", "ci_high")}
        rows.append({"claim_id": r.claim_id, "reference": ref, "scale": scale, **{f"z_{k}": v for k, v in z.items()}})
    return pd.DataFrame(rows)


def plot_scorecard(card: pd.DataFrame, rules: dict[str, dict], title: str = "Claims scorecard"):
    """One row per claim (top = first), returns the figure."""
    z = standardised(card, rules)
    n = len(card)
    fig, axes = style.subplots(width=7.6, height=0.9 + 0.27 * n)
    ax = axes[0][0]
    y = np.arange(n)[::-1]
    for yi, (_, r), (_, zr) in zip(y, card.iterrows(), z.iterrows()):
        colour, marker = VERDICT_STYLE.get(r["verdict"], ("#000000", "o"))
        lo, hi = zr["z_ci_low"], zr["z_ci_high"]
        if np.isfinite(lo) and np.isfinite(hi):
            ax.plot([max(lo, -CLIP), min(hi, CLIP)], [yi, yi], color=colour, lw=2.2, solid_capstyle="butt")
            for edge, beyond in ((-CLIP, lo < -CLIP), (CLIP, hi > CLIP)):
                if beyond:
                    ax.plot([edge], [yi], marker="<" if edge < 0 else ">", color=colour, ms=5)
        est = zr["z_estimate"]
        if np.isfinite(est):
            ax.plot([float(np.clip(est, -CLIP, CLIP))], [yi], marker=marker, color=colour, ms=6,
                    markeredgecolor="white", markeredgewidth=0.6)
        if np.isfinite(zr["z_paper_value"]):
            ax.plot([zr["z_paper_value"]], [yi], marker="|", color="black", ms=11, mew=1.6)
    ax.axvline(0, color=style.GREY, lw=0.8, ls=":")
    ax.set_xlim(-CLIP - 0.2, CLIP + 0.2)
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_yticks(y, list(card["label"]))
    right = ax.secondary_yaxis("right")
    right.set_yticks(y, list(card["verdict"]))
    for tick, verdict in zip(right.get_yticklabels(), card["verdict"]):
        tick.set_color(VERDICT_STYLE.get(verdict, ("#000000",))[0])
    right.tick_params(length=0)
    ax.set_xlabel("(value - paper value or bound) / claim's margin   (| = paper; bar = our 95% CI; marker = ours)")
    ax.set_title(title)
    ax.grid(axis="x")
    handles = [ax.plot([], [], marker=m, color=c, ls="", label=v)[0] for v, (c, m) in VERDICT_STYLE.items()
               if v in set(card["verdict"])]
    if handles:
        style.figure_legend(fig, [ax], where="below")
    return fig
