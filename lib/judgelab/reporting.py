"""Writing tables and figures, and the lines that say who made the numbers (a notebook writes
through its :class:`judgelab.run.Run`, which saves, shows and captions in one call).

Every table goes to ``results/tables/<name>.csv`` and every figure to ``figures/<name>.png`` and
``.pdf``, each with a provenance sidecar ``<name>.provenance.json`` beside it (who made it: judge,
profile, prompt versions, seeds, commit, notebook; :mod:`judgelab.provenance`). When the embedded
135M model produced the numbers, captions and banners say so: such outputs show that the pipeline
runs, not the papers' findings.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from judgelab import paths, provenance as _provenance, style
from judgelab.provenance import SMALL_MODEL_WARNING, is_embedded_small_model  # shared with the gateway


def caption_line(profile: str | None, backend: str | None = None, model: str | None = None) -> str:
    """One line for captions: profile, backend and model, plus the small-model warning if it applies."""
    parts = [f"profile={profile}"]
    if backend or model:
        parts.append(f"judge={backend or '?'}:{model or '?'}")
    text = "; ".join(parts)
    if is_embedded_small_model(backend, model):
        text += ". " + SMALL_MODEL_WARNING
    return text


def model_banner(backend: str | None, model: str | None) -> str:
    """A banner (Markdown) naming the judge, with a warning when it is the embedded small model."""
    if is_embedded_small_model(backend, model):
        return (
            f"> **Warning — {SMALL_MODEL_WARNING}** Backend `{backend}`, model `{model}`. "
            "Point the compendium at a capable model (README: 'Choosing the judge') to test the papers' claims."
        )
    return f"> Judge: backend `{backend}`, model `{model}`."


def save_table(df: pd.DataFrame, name: str, *, index: bool = False, context: dict | None = None) -> Path:
    """Write ``df`` to ``results/tables/<name>.csv`` and its provenance sidecar
    ``<name>.provenance.json`` with a run's ``context`` (:mod:`judgelab.provenance`; notebooks go
    through :meth:`judgelab.run.Run.table`); return the CSV's path.

    The CSV holds the table only, so that a replay reproduces it byte for byte."""
    if name.endswith(".csv"):
        name = name[:-4]
    out = paths.tables_dir() / f"{name}.csv"
    df.to_csv(out, index=index)
    _provenance.write_sidecar(out, "table", context)
    return out


def save_figure(fig, name: str, caption: str | None = None, *, context: dict | None = None) -> list[Path]:
    """Write a matplotlib figure as PNG (200 dpi) and PDF under ``figures/``, with ``caption`` under it.

    The layout is fixed first (:func:`judgelab.style.freeze_layout`); the caption is then placed by
    :func:`judgelab.style.add_caption`, measured below the lowest rendered artist (x labels, legends,
    colour bars) and wrapped to the figure's width, and ``bbox_inches="tight"`` grows the canvas to
    hold it. Beside the images, ``figures/<name>.layout.json`` records the PNG rendering's text
    elements (:func:`judgelab.style.text_boxes`), the boxes of everything else
    (:func:`judgelab.style.content_boxes`), both in pixels at 200 dpi, and the colliding pairs; the
    figure-layout test reads these after a smoke run. ``figures/<name>.provenance.json`` says who
    made it (``context``, as for :func:`save_table`; its ``sha256`` is the PNG's).
    """
    style.remove_caption(fig)  # a figure saved twice keeps one caption
    style.freeze_layout(fig)
    if caption:
        style.add_caption(fig, caption)
    rendered: dict = {}

    def measure(event):  # runs inside savefig: the boxes of the image actually written
        rendered["texts"] = style.text_boxes(fig, event.renderer)
        rendered["content"] = style.content_boxes(fig, event.renderer)

    outs = []
    for ext in ("png", "pdf"):
        out = paths.figures_dir() / f"{name}.{ext}"
        cid = fig.canvas.mpl_connect("draw_event", measure) if ext == "png" else None
        try:
            # no creation time in the PDF: a replayed run writes the same bytes (the run record compares them)
            fig.savefig(out, dpi=200 if ext == "png" else None, bbox_inches="tight",
                        metadata={"CreationDate": None} if ext == "pdf" else None)
        finally:
            if cid is not None:
                fig.canvas.mpl_disconnect(cid)
        outs.append(out)
    _write_layout(name, rendered["texts"], rendered["content"])
    _provenance.write_sidecar(outs[0], "figure", context)
    return outs


def _write_layout(name: str, texts, content) -> Path:
    """``figures/<name>.layout.json``: text and content boxes (x0, y0, x1, y1 pixels) and what collides."""
    def rows(boxes):
        return [{"name": n, "bbox": [round(float(v), 1) for v in b.extents]} for n, b in boxes]

    caption = dict(texts).get("caption")
    layout = {
        "figure": name,
        "texts": rows(texts),
        "content": rows(content),
        "overlaps": [list(p) for p in style.overlapping_pairs(texts)],
        "above_caption": style.above_caption_violations(caption, content),
    }
    out = paths.figures_dir() / f"{name}.layout.json"
    out.write_text(json.dumps(layout, indent=1) + "\n")
    return out
