"""Text in figures never collides, and captions sit under everything.

(a) ``figure_geometry.text_overlaps`` (the boxes of :mod:`judgelab.style`) and the caption placement of
:func:`judgelab.reporting.save_figure`, on figures built to collide and figures built clean.

(b) Every figure of the smoke run. ``save_figure`` writes ``figures/<name>.layout.json`` beside each
PNG with the bounding boxes of the texts and of everything else *as rendered into that PNG* (it
measures inside the save's own draw); this test reads them all and fails naming the figure and the
two colliding elements. Why sidecars rather than re-rendering here: a re-render would have to rebuild
each notebook's inputs and repeat its calls (and drift from them as notebooks change), while the
sidecar is the figure the notebook actually saved, caption included, and a figure added to any
notebook is covered without touching this test. A PNG without a sidecar (saved around
``save_figure``) fails too. The test runs after ``tests/test_notebooks.py`` (marker
``after_notebooks``, ordered by ``conftest.py``) and reads the output root that the smoke run set in
``$JUDGELAB_OUTPUT_ROOT``; alone, it checks the output root that variable names (e.g. after
``JUDGELAB_OUTPUT_ROOT=/tmp/x python -m judgelab.pipeline run 05 --profile smoke``).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.image as mpimg  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from judgelab import reporting, style  # noqa: E402
from figure_geometry import text_overlaps  # noqa: E402

LONG = "a caption long enough to need several lines under a small figure, " * 4


@pytest.fixture
def out_root(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    return tmp_path


def _line_figure(**subplots):
    fig, axes = style.subplots(**subplots)
    ax = axes[0][0]
    ax.plot([1, 2, 3], [1, 3, 2], label="series")
    ax.set(title="a title", xlabel="round", ylabel="score")
    return fig, ax


# ----------------------------------------------------------------------------- (a) the detector

def test_overlapping_pairs_counts_intersections_not_touching_boxes():
    boxes = [("a", (0, 0, 10, 10)), ("b", (5, 5, 15, 15)), ("c", (10, 0, 20, 4)), ("d", (30, 30, 40, 40))]
    assert style.overlapping_pairs(boxes) == [("a", "b")]  # a and c only touch at x = 10


def test_two_texts_on_top_of_each_other_are_found():
    fig, ax = _line_figure()
    fig.text(0.5, 0.5, "first note", fontsize=12)
    fig.text(0.5, 0.5, "second note", fontsize=12)
    assert text_overlaps(fig) == [("figure text 'first note'", "figure text 'second note'")]
    plt.close(fig)


def test_a_legend_over_a_title_and_an_annotation_over_a_label_are_found():
    fig, ax = _line_figure()
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0))  # sits where the title is
    ax.annotate("note on the x label", xy=(0.5, 0), xycoords="axes fraction", xytext=(0, -32),
                textcoords="offset points", ha="center", va="center")
    pairs = set(text_overlaps(fig))
    assert ("axes 0 'a title' title", "axes 0 'a title' legend") in pairs
    assert ("axes 0 'a title' x label 'round'", "axes 0 'a title' text 'note on the x label'") in pairs
    plt.close(fig)


def test_the_old_caption_placement_collides_with_the_x_label():
    """What save_figure did before: fig.text at the bottom plus subplots_adjust (Figure 2's bug)."""
    fig, axes = plt.subplots(1, 3, figsize=(9, 3.4))
    for ax in axes:
        ax.plot([1, 5], [1, 5])
        ax.set_xlabel("round")
    fig.tight_layout()
    fig.text(0.01, 0.005, LONG, fontsize=7, ha="left", va="bottom", wrap=True)
    fig.subplots_adjust(bottom=max(fig.subplotpars.bottom, 0.14))
    overlaps = text_overlaps(fig)
    assert any("x label 'round'" in a + b and "figure text" in a + b for a, b in overlaps)
    plt.close(fig)


def test_a_clean_figure_has_no_overlaps():
    fig, ax = _line_figure()
    style.legend_right(ax)
    style.add_caption(fig, LONG)
    assert text_overlaps(fig) == []
    plt.close(fig)


def test_tick_labels_are_not_text_elements():
    fig, ax = _line_figure()
    ax.set_xticks([1, 2, 3], ["a very long tick label"] * 3)  # tick labels collide with each other
    names = [n for n, _ in style.text_boxes(fig)]
    assert not any("tick" in n or "a very long" in n for n in names)
    assert names == ["axes 0 'a title' title", "axes 0 'a title' x label 'round'", "axes 0 'a title' y label 'score'"]
    plt.close(fig)


def test_wrap_to_width_breaks_at_the_measured_width():
    measure = lambda s: 6.0 * len(s)  # noqa: E731  6 px per character
    text = "one two three four five six seven"
    wrapped = style.wrap_to_width(text, 20 * 6.0, measure)
    assert wrapped.split("\n") == ["one two three four", "five six seven"]
    assert style.wrap_to_width("short", 100.0, measure) == "short"


def test_figure_legend_needs_constrained_layout():
    fig, ax = plt.subplots()
    ax.plot([0, 1], label="x")
    with pytest.raises(ValueError, match="constrained"):
        style.figure_legend(fig)
    plt.close(fig)


def test_the_caption_goes_under_the_lowest_artist_and_within_the_width():
    fig, ax = _line_figure(n_cols=2)
    fig.axes[1].plot([0, 1], [0, 1], label="other")
    style.figure_legend(fig, where="below")
    caption = style.add_caption(fig, LONG)
    content = [b for n, b in style.content_boxes(fig)]
    cap = caption.get_window_extent()
    assert cap.y1 < min(b.y0 for b in content)  # under the legend under the x labels
    whole = style.figure_box(fig)
    assert cap.x1 <= whole.x1 + 1 and caption.get_text().count("\n") >= 1  # wrapped, never wider
    plt.close(fig)


# ----------------------------------------------------------------------------- save_figure

def test_save_figure_writes_images_and_layout_and_grows_the_canvas(out_root):
    fig, ax = _line_figure()
    reporting.save_figure(fig, "plain")
    reporting.save_figure(fig, "captioned", caption=LONG)
    reporting.save_figure(fig, "captioned", caption=LONG)  # saved twice: still one caption
    figs = out_root / "figures"
    assert {p.name for p in figs.iterdir()} == {f"{n}.{e}" for n in ("plain", "captioned")
                                                for e in ("png", "pdf", "layout.json", "provenance.json")}
    assert sum(t.get_gid() == "caption" for t in fig.texts) == 1
    layout = json.loads((figs / "captioned.layout.json").read_text())
    cap = dict((t["name"], t["bbox"]) for t in layout["texts"])["caption"]
    plain_h = mpimg.imread(figs / "plain.png").shape[0]
    captioned_h = mpimg.imread(figs / "captioned.png").shape[0]
    # the PNG grew by the caption's height and the gap (200 dpi; 1 px rounding of the tight box)
    grown = cap[3] - cap[1] + style.CAPTION_GAP_PT * 200 / 72
    assert captioned_h - plain_h == pytest.approx(grown, abs=3)
    assert layout["overlaps"] == [] and layout["above_caption"] == []
    plt.close(fig)


def test_a_figure_legend_below_the_panels_stays_above_the_caption(out_root):
    """``bbox_inches='tight'`` swaps the figure box for one that holds the caption; a figure legend
    anchored to the figure box used to follow it down onto the caption (Figure 2's legend)."""
    fig, ax = _line_figure(n_cols=3, width=3.0, height=3.0)
    style.figure_legend(fig, where="below")
    reporting.save_figure(fig, "fig_legend", caption=LONG)
    layout = json.loads((out_root / "figures" / "fig_legend.layout.json").read_text())
    boxes = [(t["name"], t["bbox"]) for t in layout["texts"]]
    assert style.overlapping_pairs(boxes) == []
    assert style.above_caption_violations(dict(boxes)["caption"], [(c["name"], c["bbox"]) for c in layout["content"]]) == []
    plt.close(fig)


# ----------------------------------------------------------------------------- (b) the smoke run's figures

def _smoke_figures() -> Path:
    root = os.environ.get("JUDGELAB_OUTPUT_ROOT")
    if not root or not (Path(root) / "figures").is_dir():
        pytest.skip("no smoke run's figures: run with tests/test_notebooks.py (or set JUDGELAB_OUTPUT_ROOT "
                    "to the output root of a smoke run)")
    return Path(root) / "figures"


@pytest.mark.notebooks
@pytest.mark.after_notebooks
def test_no_figure_of_the_smoke_run_has_colliding_text():
    figures = _smoke_figures()
    pngs = sorted(figures.glob("*.png"))
    assert pngs, f"{figures}: the smoke run saved no figure"
    problems = []
    for png in pngs:
        sidecar = png.with_suffix(".layout.json")
        if not sidecar.exists():
            problems.append(f"{png.name}: no {sidecar.name} (saved without judgelab.reporting.save_figure?)")
            continue
        layout = json.loads(sidecar.read_text())
        texts = [(t["name"], t["bbox"]) for t in layout["texts"]]
        for a, b in style.overlapping_pairs(texts):
            problems.append(f"{png.stem}: {a!r} overlaps {b!r}")
        caption = dict(texts).get("caption")
        for name in style.above_caption_violations(caption, [(c["name"], c["bbox"]) for c in layout["content"]]):
            problems.append(f"{png.stem}: {name!r} reaches into the caption")
    assert not problems, "colliding text in the smoke run's figures:\n" + "\n".join(problems)


def test_a_runs_table_and_figure_write_what_they_show(tmp_path, monkeypatch):
    """The notebook one-liners save exactly what they return / display, the caption ending with
    the run's judge line."""
    import json

    import matplotlib
    import pandas as pd

    from judgelab.run import Run

    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    run = Run.open("07", profile="smoke")
    df = pd.DataFrame({"a": [1, 2], "b": [0.5, 0.25]})
    assert run.table(df, "t_demo") is df
    assert pd.read_csv(tmp_path / "results" / "tables" / "t_demo.csv").equals(df)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4])
    run.figure(fig, "f_demo", "a caption.")
    assert {p.suffix for p in (tmp_path / "figures").glob("f_demo.*")} >= {".png", ".pdf"}
    assert "profile=smoke" in fig.texts[-1].get_text() and fig.texts[-1].get_text().startswith("a caption. ")
    layout = json.loads((tmp_path / "figures" / "f_demo.layout.json").read_text())
    assert layout["figure"] == "f_demo"
