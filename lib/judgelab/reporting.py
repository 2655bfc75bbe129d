"""Writing tables and figures with their provenance sidecars (notebooks go through
:class:`judgelab.run.Run`), and the lines that say who made the numbers: when the embedded 135M
model produced them, captions and banners say so.
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
    """Write ``df`` to ``results/tables/<name>.csv`` and its sidecar; return the CSV's path."""
    if name.endswith(".csv"):
        name = name[:-4]
    out = paths.tables_dir() / f"{name}.csv"
    df.to_csv(out, index=index)
    _provenance.write_sidecar(out, "table", context)
    return out


def save_figure(fig, name: str, caption: str | None = None, *, context: dict | None = None) -> list[Path]:
    """Write a matplotlib figure as PNG (200 dpi) and PDF under ``figures/``, ``caption`` under it
    (:func:`judgelab.style.add_caption` after :func:`judgelab.style.freeze_layout`), with
    ``<name>.layout.json`` (the PNG's text and content boxes in pixels and their collisions, read by
    the figure-layout test) and the sidecar (its ``sha256`` is the PNG's) beside."""
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
