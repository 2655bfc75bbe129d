"""The figure tests' collision check: every pair of text elements of a rendered figure whose
bounding boxes overlap, from the boxes the library measures when it saves a figure
(:func:`judgelab.style.text_boxes`, :func:`judgelab.style.overlapping_pairs`)."""
from __future__ import annotations

from matplotlib.figure import Figure

from judgelab import style


def text_overlaps(fig: Figure, tolerance_px: float = 1.0) -> list[tuple[str, str]]:
    """Render ``fig`` and return every pair of text elements (see :func:`judgelab.style.text_boxes`)
    whose bounding boxes overlap; ``[]`` for a figure whose text never collides."""
    return style.overlapping_pairs(style.text_boxes(fig), tolerance_px)
