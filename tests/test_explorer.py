"""The narrative landscape explorer (judgelab.narrative.landscape.explorer) and the static landscape
with an example narrative (judgelab.narrative.paths.figures), on a toy collection of known shape.

Five documents, two topics, two endpoint pairs each with a max-capacity and a random path; the
answers (order of documents, coherence, which pair is the example) are read off the toy by hand.
The browser side (hover, dropdown) is tests/test_site_browser.py.
"""
from __future__ import annotations

import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from judgelab import interim  # noqa: E402
from judgelab.narrative.landscape import explorer  # noqa: E402
from judgelab.narrative.paths import figures as path_figures  # noqa: E402
from figure_geometry import text_overlaps  # noqa: E402

TITLES = ["Storm hits coast", "Relief arrives", "Rebuilding starts", "Election called", "Vote </script> counted"]


@pytest.fixture
def out_root(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    return tmp_path


def toy():
    docs = pd.DataFrame({"doc": np.arange(5), "title": TITLES,
                         "date": pd.to_datetime(["2020-01-01", "2020-01-03", "2020-02-01", "2020-03-01", "2020-03-05"]),
                         "text": ["t"] * 5, "cluster": [0, 0, 0, 1, 1]})
    xy = np.array([[0.0, 0.0], [1.0, 0.5], [2.0, 0.0], [5.0, 5.0], [6.0, 5.5]])
    labels = np.array([0, 0, 0, 1, 1])

    def row(pair, method, path, mn, mean, stratum="within_short"):
        return {"collection": "toy", "pair_id": pair, "stratum": stratum, "method": method, "source": path[0],
                "target": path[-1], "path": path, "titles": [TITLES[i] for i in path], "length": len(path),
                "min_coherence": mn, "mean_coherence": mean}

    paths = pd.DataFrame([row(0, "maxcap", [0, 1, 2], 0.8, 0.85), row(0, "random", [0, 2], 0.6, 0.6),
                          row(1, "maxcap", [3, 4], 0.9, 0.9, "cross_far"), row(1, "random", [3, 4], 0.9, 0.9, "cross_far")])
    return docs, xy, labels, paths


def test_document_frame_formats_dates_and_refuses_mismatched_lengths():
    docs, xy, labels, _ = toy()
    frame = explorer.document_frame(docs, xy, labels)
    assert frame["date"].tolist()[:2] == ["2020-01-01", "2020-01-03"]
    assert frame["topic"].tolist() == [0, 0, 0, 1, 1]
    with pytest.raises(ValueError, match="notebook 07"):
        explorer.document_frame(docs, xy[:4], labels)


def test_narratives_list_both_paths_in_order_with_their_coherence():
    docs, xy, labels, paths = toy()
    items = explorer.narratives(paths, explorer.document_frame(docs, xy, labels))
    assert [n["pair_id"] for n in items] == [0, 1]
    first = items[0]
    assert [d["title"] for d in first["maxcap"]["docs"]] == TITLES[:3]
    assert first["maxcap"]["x"] == [0.0, 1.0, 2.0] and first["random"]["y"] == [0.0, 0.0]
    assert (first["maxcap"]["min_coherence"], first["random"]["mean_coherence"]) == (0.8, 0.6)
    assert first["label"].startswith("pair 0 · within_short · Storm hits coast → Rebuilding starts")


def test_the_page_is_self_contained_and_carries_every_document_and_narrative():
    docs, xy, labels, paths = toy()
    html = explorer.explorer_html("toy", docs, xy, labels, paths, provenance="profile=smoke")
    # plotly.js is inlined: no script or stylesheet is fetched from anywhere
    assert not re.findall(r"""<(?:script|link)[^>]+(?:src|href)=["']?https?://""", html)
    assert len(html) > 1_000_000  # the inlined plotly.js bundle
    assert html.count('id="landscape"') == 1 and "Plotly.newPlot" in html


def test_the_map_has_one_trace_per_topic_then_the_two_path_traces():
    docs, xy, labels, _ = toy()
    fig = explorer.explorer_figure(explorer.document_frame(docs, xy, labels), "toy")
    doc_traces = [t for t in fig.data if t.meta == "documents"]
    assert [len(t.x) for t in doc_traces] == [3, 2]
    assert [t.name for t in doc_traces] == ["topic 0", "topic 1"]
    assert doc_traces[1].customdata[0].tolist() == ["Election called", "2020-03-01", 1]
    assert [t.meta for t in fig.data[-2:]] == ["maxcap", "random"] and len(fig.data[-1].x) == 0


def test_the_narratives_data_cannot_end_the_script_early():
    docs, xy, labels, paths = toy()
    html = explorer.explorer_html("toy", docs, xy, labels, paths)
    # the narratives' data: a title holding "</script>" cannot end the script element early
    assert "Vote <\\/script> counted" in html and html.count("</script>") == html.count("<script")
    assert html.count("<option value=") == 2


def test_a_collection_without_narratives_still_gets_its_map():
    docs, xy, labels, paths = toy()
    html = explorer.explorer_html("toy", docs, xy, labels, paths.iloc[0:0])
    assert "no narratives were extracted" in html and "<select id=\"narrative\" disabled" in html


def test_save_explorers_writes_one_page_per_collection_under_figures(out_root):
    docs, xy, labels, paths = toy()
    interim.write(docs, "narr_documents_toy")
    written = explorer.save_explorers(paths, {"toy": {"umap2d": xy, "labels": labels}}, "profile=smoke")
    assert written == [out_root / "figures" / "narr_explorer_toy.html"]
    assert "Narrative landscape explorer: toy" in written[0].read_text(encoding="utf-8")


def test_the_example_narrative_is_the_longest_max_capacity_path():
    _, _, _, paths = toy()
    assert path_figures.example_pair(paths) == 0
    longer_tie = paths.assign(length=[2, 2, 2, 2])  # equal lengths: the higher minimum coherence wins
    assert path_figures.example_pair(longer_tie) == 1


def test_the_static_landscape_draws_the_example_without_colliding_text():
    _, xy, labels, paths = toy()
    fig = path_figures.landscape_narrative_figure(paths, {"umap2d": xy, "labels": labels}, "toy")
    ax = fig.axes[0]
    drawn = {line.get_label(): line.get_xydata().tolist() for line in ax.get_lines()}
    maxcap = next(v for k, v in drawn.items() if k.startswith("max capacity"))
    assert maxcap == [[0.0, 0.0], [1.0, 0.5], [2.0, 0.0]]
    assert any(k.startswith("random chronological: 2 documents, min 0.60") for k in drawn)
    assert text_overlaps(fig) == []
    plt.close(fig)


def test_seventeen_topics_get_seventeen_distinct_colour_and_marker_pairs():
    from judgelab.narrative.landscape import figures as landscape_figures

    docs = pd.DataFrame({"doc": np.arange(17), "title": [f"doc {k}" for k in range(17)],
                         "date": pd.to_datetime(["2020-01-01"] * 17)})
    fig = explorer.explorer_figure(explorer.document_frame(docs, np.c_[np.arange(17), np.arange(17)], np.arange(17)),
                                   "17 topics")
    drawn = [(t.marker.color, t.marker.symbol) for t in fig.data if t.meta == "documents"]
    assert len(drawn) == 17 and len(set(drawn)) == 17
    assert drawn[0] == ("#0072B2", "circle") and drawn[8] == ("#0072B2", "square") and drawn[16][1] == "triangle-up"
    # the same colour and marker as the static landscape figure
    colours, markers = landscape_figures.topic_style(np.arange(17))
    assert [c for c, _ in drawn] == colours
    assert [s for _, s in drawn] == [explorer.PLOTLY_SYMBOLS[m] for m in markers]
    assert explorer.topic_symbol(-1) == "circle" and explorer.topic_colour(-1) == explorer.NOISE_COLOUR
