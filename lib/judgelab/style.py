"""One figure style for both studies: palette, fonts, panel sizes, legends, captions, and the
boxes of a figure's text that the saved layout records.

- Colours are Okabe & Ito's eight, distinguishable under the common colour-vision deficiencies
  (Okabe M., Ito K., "Color Universal Design", 2008; Wong B., Nature Methods 8:441, 2011). Story
  categories and path methods keep one colour each; categories also differ by marker, line style
  and hatching so that a greyscale print still separates them.
- Panels come in the house size under constrained layout (:func:`subplots`), legends outside the
  axes; :func:`add_caption` measures where everything else ends, and :func:`text_boxes` /
  :func:`content_boxes` let :func:`judgelab.reporting.save_figure` record collisions.
"""
from __future__ import annotations

import contextlib
import textwrap
from itertools import combinations
from typing import Iterable, Sequence

import matplotlib
import matplotlib.pyplot as plt
from cycler import cycler
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.transforms import Bbox, ScaledTranslation

# ----------------------------------------------------------------------------- palette

OKABE_ITO: tuple[str, ...] = (
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
)
"""Okabe–Ito colours, most distinct first: blue, orange, bluish green, reddish purple, sky blue,
vermillion, yellow, black. Yellow is last but one because it is faint on white."""

GREY = "#777777"
"""Reference lines and notes."""

CATEGORY_COLOURS: dict[str, str] = {"canonical": "#0072B2", "pulp": "#E69F00", "llm": "#009E73"}
CATEGORY_MARKERS: dict[str, str] = {"canonical": "o", "pulp": "s", "llm": "^"}
CATEGORY_LINESTYLES: dict[str, str] = {"canonical": "-", "pulp": "--", "llm": ":"}
CATEGORY_HATCHES: dict[str, str] = {"canonical": "", "pulp": "//", "llm": ".."}
CATEGORY_LABELS: dict[str, str] = {"canonical": "Canonical", "pulp": "Pulp", "llm": "LLM-generated"}

METHOD_COLOURS: dict[str, str] = {"maxcap": "#0072B2", "random": "#E69F00"}
METHOD_LABELS: dict[str, str] = {"maxcap": "max capacity", "random": "random chronological"}

# ----------------------------------------------------------------------------- fonts and sizes

FONT_SIZE = 9
TITLE_SIZE = 10
SMALL_SIZE = 8
"""Tick labels, legends and in-panel notes."""
CAPTION_SIZE = 7.5
CAPTION_COLOUR = "#444444"
CAPTION_GAP_PT = 6.0
"""Space between the lowest artist and the caption's first line, in points."""

PANEL_WIDTH = 4.8
PANEL_HEIGHT = 4.0
"""One panel of a grid, inches; :func:`subplots` multiplies by the number of columns and rows."""

RC: dict = {
    "font.size": FONT_SIZE,
    "axes.titlesize": TITLE_SIZE,
    "axes.labelsize": FONT_SIZE,
    "xtick.labelsize": SMALL_SIZE,
    "ytick.labelsize": SMALL_SIZE,
    "legend.fontsize": SMALL_SIZE,
    "legend.title_fontsize": SMALL_SIZE,
    "legend.frameon": False,
    "figure.titlesize": TITLE_SIZE + 1,
    "axes.prop_cycle": cycler(color=list(OKABE_ITO)),
    "axes.spines.top": False,
    "axes.spines.right": False,
    "grid.alpha": 0.3,
    "image.cmap": "viridis",
    "savefig.dpi": 200,
}
"""The one matplotlib rc of the compendium (viridis, for colour maps, is perceptually uniform and
colour-blind safe)."""


def apply() -> None:
    """Set :data:`RC` in matplotlib's rcParams (idempotent; :func:`subplots` calls it)."""
    matplotlib.rcParams.update(RC)


def colour(i: int) -> str:
    """The i-th palette colour (cycling)."""
    return OKABE_ITO[i % len(OKABE_ITO)]


def subplots(n_cols: int = 1, n_rows: int = 1, *, width: float = PANEL_WIDTH, height: float = PANEL_HEIGHT,
             **kwargs):
    """(fig, 2-D array of axes): ``n_rows x n_cols`` panels of ``width x height`` inches each, house
    style, constrained layout; ``kwargs`` go to :func:`matplotlib.pyplot.subplots`."""
    apply()
    n_cols, n_rows = max(1, n_cols), max(1, n_rows)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(width * n_cols, height * n_rows), squeeze=False,
                             layout="constrained", **kwargs)
    return fig, axes


@contextlib.contextmanager
def fixed_jitter(seed: int = 0):
    """seaborn's stripplot jitters its dots with numpy's global generator, unseeded: the same data
    drawn twice give two different images (and two sha256s in the run record). Inside this block
    the global generator starts from ``seed``; its state is restored afterwards."""
    import numpy as np

    state = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(state)


def empty_panel(ax, text: str) -> None:
    """Say in words, centred in the panel, why it has no data."""
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", fontsize=SMALL_SIZE,
            color=GREY)


# ----------------------------------------------------------------------------- legends

def legend_right(ax, **kwargs):
    """The axis' legend outside it, right and top-aligned; None when nothing is labelled."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    opts = dict(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    opts.update(kwargs)
    return ax.legend(handles, labels, **opts)


def legend_below(ax, **kwargs):
    """The axis' legend outside it, centred under its tick labels and x label. The offset is measured
    (in points, so the layout engine may resize the axes afterwards): call it after the labels are
    set. Returns the Legend, or None when the axis has nothing labelled."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    fig = ax.get_figure()
    fig.draw_without_rendering()
    below_px = ax.bbox.y0 - ax.get_tightbbox().y0  # tick labels + x label under the axes
    offset = ScaledTranslation(0, -(below_px / fig.dpi + 4 / 72), fig.dpi_scale_trans)
    opts = dict(loc="upper center", bbox_to_anchor=(0.5, 0.0), bbox_transform=ax.transAxes + offset,
                borderaxespad=0.0)
    opts.update(kwargs)
    return ax.legend(handles, labels, **opts)


def unique_handles(axes: Iterable) -> tuple[list, list[str]]:
    """Legend handles and labels of several axes, each label once, in first-seen order."""
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels and not lab.startswith("_"):
                handles.append(h)
                labels.append(lab)
    return handles, labels


def figure_legend(fig, axes: Iterable | None = None, *, where: str = "below", ncol: int | None = None,
                  **kwargs):
    """One legend for the whole figure, ``where="below"`` or ``"right"`` of the panels: each label
    of ``axes`` (default: all) once, the axes' own legends removed. Needs a constrained layout.
    Returns the Legend, or None when nothing is labelled."""
    if not isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine):
        raise ValueError("figure_legend places the legend outside the panels with constrained layout; "
                         "make the figure with judgelab.style.subplots (layout='constrained')")
    axes = list(fig.axes if axes is None else axes)
    handles, labels = unique_handles(axes)
    for ax in axes:
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    if not handles:
        return None
    if where == "below":
        opts = dict(loc="outside lower center", ncol=ncol or min(len(labels), 4))
    elif where == "right":
        opts = dict(loc="outside right upper", ncol=ncol or 1)
    else:
        raise ValueError(f"where must be 'below' or 'right', not {where!r}")
    opts.update(kwargs)
    return fig.legend(handles, labels, **opts)


# ----------------------------------------------------------------------------- caption

def figure_box(fig) -> Bbox:
    """The extent ``bbox_inches='tight'`` keeps of ``fig``, in display pixels."""
    fig.draw_without_rendering()
    return fig.get_tightbbox().transformed(fig.dpi_scale_trans)


def wrap_to_width(text: str, width_px: float, measure) -> str:
    """``text`` wrapped with :func:`textwrap.fill` at the most characters per line for which
    ``measure(s)`` (rendered width in pixels) stays within ``width_px``; paragraphs (``\\n``) are kept."""
    paragraphs = text.split("\n")
    one_line = max(paragraphs, key=len)
    if not one_line or measure(one_line) <= width_px:
        return text
    n = max(20, int(len(one_line) * width_px / measure(one_line)))
    while True:
        wrapped = "\n".join(textwrap.fill(p, n, break_on_hyphens=False) if p else p for p in paragraphs)
        if n <= 20 or max(measure(line) for line in wrapped.split("\n")) <= width_px:
            return wrapped
        n -= 1


def freeze_layout(fig) -> None:
    """Lay ``fig`` out once more and keep that layout (engine off, figure legends re-anchored to
    figure coordinates): ``savefig(bbox_inches="tight")`` swaps the figure's box for the tight box
    holding the caption, and a legend anchored to that box would follow its bottom onto the caption.
    """
    fig.draw_without_rendering()
    if fig.get_layout_engine() is not None:
        fig.set_layout_engine("none")
    for leg in fig.legends:
        if leg.get_bbox_to_anchor() is fig.bbox:
            leg.set_bbox_to_anchor(Bbox.unit(), transform=fig.transFigure)


def remove_caption(fig) -> None:
    """Take away a caption that :func:`add_caption` put on ``fig`` (none: nothing happens)."""
    for t in [t for t in fig.texts if t.get_gid() == "caption"]:
        t.remove()


def add_caption(fig, caption: str, *, fontsize: float = CAPTION_SIZE, gap_pt: float = CAPTION_GAP_PT):
    """Put ``caption`` ``gap_pt`` points under the lowest rendered artist of ``fig``, left-aligned
    with its content and wrapped to its width; it may lie below the canvas, so save with
    ``bbox_inches="tight"``. A caption added before is replaced. Returns its Text (gid
    ``"caption"``)."""
    remove_caption(fig)
    box = figure_box(fig)
    probe = fig.text(0, 0, "", fontsize=fontsize)

    def measure(s: str) -> float:
        probe.set_text(s)
        return probe.get_window_extent().width

    wrapped = wrap_to_width(caption, box.width, measure)
    probe.remove()
    to_fig = fig.transFigure.inverted()
    x0, y0 = to_fig.transform((box.x0, box.y0 - gap_pt * fig.dpi / 72.0))
    return fig.text(x0, y0, wrapped, fontsize=fontsize, color=CAPTION_COLOUR, ha="left", va="top",
                    gid="caption")


# ----------------------------------------------------------------------------- text collisions

def _shown(t) -> bool:
    return t is not None and t.get_visible() and bool(t.get_text().strip())


def _short(s: str, n: int = 40) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _axes_name(i: int, ax) -> str:
    if ax.get_label() == "<colorbar>":
        return f"colorbar {i}"
    title = ax.get_title() or ax.get_title("left") or ax.get_title("right")
    return f"axes {i}" + (f" '{_short(title, 30)}'" if title else "")


def text_boxes(fig, renderer=None) -> list[tuple[str, Bbox]]:
    """Every visible text element of ``fig`` (figure and axes titles, labels, texts, legends; the
    caption named ``caption``; tick labels left to matplotlib) with its bounding box in display
    pixels. Without ``renderer`` the figure is drawn first; with one (inside a ``draw_event``) the
    boxes are those of that rendering."""
    if renderer is None:
        fig.draw_without_rendering()
    out: list[tuple[str, Bbox]] = []

    def add(name, artist):
        bb = artist.get_window_extent(renderer)
        if bb.width > 0 and bb.height > 0:
            out.append((name, bb))

    titles = []
    for attr, name in (("_suptitle", "suptitle"), ("_supxlabel", "supxlabel"), ("_supylabel", "supylabel")):
        t = getattr(fig, attr, None)
        if _shown(t):
            titles.append(t)
            add(f"figure {name} '{_short(t.get_text())}'", t)
    for t in fig.texts:
        if _shown(t) and not any(t is u for u in titles):  # recent matplotlib lists suptitle in texts
            add("caption" if t.get_gid() == "caption" else f"figure text '{_short(t.get_text())}'", t)
    for k, leg in enumerate(fig.legends):
        if leg.get_visible():
            add(f"figure legend {k}", leg)
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        where = _axes_name(i, ax)
        for loc in ("center", "left", "right"):
            t = {"center": ax.title, "left": getattr(ax, "_left_title", None),
                 "right": getattr(ax, "_right_title", None)}[loc]
            if _shown(t):
                add(f"{where} title", t)
        if ax.xaxis.get_visible() and _shown(ax.xaxis.label):
            add(f"{where} x label '{_short(ax.xaxis.label.get_text())}'", ax.xaxis.label)
        if ax.yaxis.get_visible() and _shown(ax.yaxis.label):
            add(f"{where} y label '{_short(ax.yaxis.label.get_text())}'", ax.yaxis.label)
        leg = ax.get_legend()
        if leg is not None and leg.get_visible():
            add(f"{where} legend", leg)
        for t in ax.texts:
            if _shown(t):
                add(f"{where} text '{_short(t.get_text())}'", t)
    return out


def content_boxes(fig, renderer=None) -> list[tuple[str, Bbox]]:
    """The rendered extent (display pixels) of everything but the caption."""
    if renderer is None:
        fig.draw_without_rendering()
    out = []
    for i, ax in enumerate(fig.axes):
        if ax.get_visible():
            bb = ax.get_tightbbox(renderer)
            if bb is not None:
                out.append((_axes_name(i, ax), bb))
    for k, leg in enumerate(fig.legends):
        if leg.get_visible():
            out.append((f"figure legend {k}", leg.get_window_extent(renderer)))
    for name, bb in text_boxes(fig, renderer):
        if name.startswith("figure ") and not name.startswith("figure legend"):
            out.append((name, bb))
    return out


def overlapping_pairs(boxes: Sequence[tuple[str, Bbox | Sequence[float]]], tolerance_px: float = 1.0
                      ) -> list[tuple[str, str]]:
    """Every pair of named boxes whose intersection is wider and taller than ``tolerance_px`` (boxes
    that merely touch do not count). A box is a Bbox or ``(x0, y0, x1, y1)``."""
    norm = [(n, b if isinstance(b, Bbox) else Bbox.from_extents(*b)) for n, b in boxes]
    pairs = []
    for (na, a), (nb, b) in combinations(norm, 2):
        w = min(a.x1, b.x1) - max(a.x0, b.x0)
        h = min(a.y1, b.y1) - max(a.y0, b.y0)
        if w > tolerance_px and h > tolerance_px:
            pairs.append((na, nb))
    return pairs


def above_caption_violations(caption: Bbox | Sequence[float] | None,
                             boxes: Sequence[tuple[str, Bbox | Sequence[float]]],
                             tolerance_px: float = 1.0) -> list[str]:
    """Names of the ``boxes`` (see :func:`content_boxes`) whose bottom edge reaches below the caption's
    top edge: the caption must be under everything. ``[]`` when there is no caption."""
    if caption is None:
        return []
    cap = caption if isinstance(caption, Bbox) else Bbox.from_extents(*caption)
    return [n for n, b in boxes
            if (b if isinstance(b, Bbox) else Bbox.from_extents(*b)).y0 < cap.y1 - tolerance_px]
