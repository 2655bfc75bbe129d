"""One figure style for both studies: a colour-blind-safe palette, sizes, and a grid of panels.

The palette is Okabe & Ito's (2008) eight colours, distinguishable under the common colour-vision
deficiencies. Captions are placed by :func:`judgelab.reporting.save_figure`, below everything else.
"""
from __future__ import annotations

import matplotlib.pyplot as plt

OKABE_ITO: tuple[str, ...] = (
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
)
"""Okabe–Ito colours, most distinct first."""

CATEGORY_COLOURS: dict[str, str] = {"canonical": "#0072B2", "pulp": "#E69F00", "llm": "#009E73"}
METHOD_COLOURS: dict[str, str] = {"maxcap": "#0072B2", "random": "#E69F00"}

PANEL_WIDTH = 4.8
PANEL_HEIGHT = 4.0


def colour(i: int) -> str:
    """The i-th palette colour (cycling)."""
    return OKABE_ITO[i % len(OKABE_ITO)]


def subplots(n_cols: int = 1, n_rows: int = 1, *, width: float = PANEL_WIDTH, height: float = PANEL_HEIGHT):
    """A figure of ``n_rows x n_cols`` panels in the house size; returns (fig, 2-D axes array)."""
    n_cols, n_rows = max(1, n_cols), max(1, n_rows)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(width * n_cols, height * n_rows), squeeze=False)
    return fig, axes
