"""Saving tables and figures, and saying who made the numbers.

Every table goes to ``results/tables/<name>.csv`` and every figure to ``figures/<name>.png`` and
``.pdf``. When the embedded 135M model produced the numbers, captions and banners say so: such
outputs show that the pipeline runs, not the papers' findings.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgelab import paths
from judgelab.engines import is_embedded_small_model  # shared with the gateway

SMALL_MODEL_WARNING = (
    "EMBEDDED SmolLM2-135M: these numbers show that the pipeline runs, "
    "not the papers' findings."
)


def provenance(profile: str, backend: str | None = None, model: str | None = None) -> str:
    """One line for captions: profile, backend and model, plus the small-model warning if it applies."""
    parts = [f"profile={profile}"]
    if backend or model:
        parts.append(f"judge={backend or '?'}:{model or '?'}")
    text = "; ".join(parts)
    if is_embedded_small_model(backend, model):
        text += ". " + SMALL_MODEL_WARNING
    return text


def model_banner(backend: str | None, model: str | None) -> str:
    """A banner (Markdown) to display at the top of a notebook run by the embedded small model."""
    if is_embedded_small_model(backend, model):
        return (
            f"> **Warning — {SMALL_MODEL_WARNING}** Backend `{backend}`, model `{model}`. "
            "Point the compendium at a capable model (README: 'Choosing the judge') to test the papers' claims."
        )
    return f"> Judge: backend `{backend}`, model `{model}`."


def save_table(df: pd.DataFrame, name: str, *, index: bool = False) -> Path:
    """Write ``df`` to ``results/tables/<name>.csv`` and return the path."""
    if name.endswith(".csv"):
        name = name[:-4]
    out = paths.tables_dir() / f"{name}.csv"
    df.to_csv(out, index=index)
    return out


def save_figure(fig, name: str, caption: str | None = None) -> list[Path]:
    """Write a matplotlib figure as PNG (200 dpi) and PDF; the caption, if given, is printed under the figure."""
    if caption:
        fig.text(0.01, 0.005, caption, fontsize=7, ha="left", va="bottom", wrap=True, color="#444444")
        fig.subplots_adjust(bottom=max(fig.subplotpars.bottom, 0.14))
    outs = []
    for ext in ("png", "pdf"):
        out = paths.figures_dir() / f"{name}.{ext}"
        fig.savefig(out, dpi=200 if ext == "png" else None, bbox_inches="tight")
        outs.append(out)
    return outs
