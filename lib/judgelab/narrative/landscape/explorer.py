"""An interactive explorer of one collection's narrative landscape: a self-contained HTML page.

The 2-D map of notebook 07, one dot per document in its topic's colour and marker (as the static
figure, :func:`figures.topic_style`), its title, date and topic on hover. Choosing one of notebook
08's narratives draws its max-capacity path and its random twin and lists both paths' documents
with their coherence as notebook 08 computed them. Plotly's JavaScript is inlined, so the page
works from ``file://``; the only hand-written script moves the two path traces
(``Plotly.restyle``) and fills the document list, which plotly's own dropdown cannot show.
"""
from __future__ import annotations

import json
from pathlib import Path

import jinja2
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from judgelab import paths, style
from judgelab.narrative.landscape import store
from judgelab.narrative.landscape.figures import TOPIC_MARKERS

METHODS = ("maxcap", "random")
PLOT_ID = "landscape"
NOISE_COLOUR = "#BBBBBB"
#: Plotly's name for each matplotlib marker of :data:`figures.TOPIC_MARKERS`, in the same order.
PLOTLY_SYMBOLS = {"o": "circle", "s": "square", "^": "triangle-up", "D": "diamond", "v": "triangle-down",
                  "P": "cross", "X": "x", "*": "star"}


def explorer_name(collection: str) -> str:
    """File stem of a collection's explorer under ``figures/`` (the site links it by this name)."""
    return f"narr_explorer_{collection}"


def document_frame(documents: pd.DataFrame, xy: np.ndarray, labels: np.ndarray) -> pd.DataFrame:
    """One row per document: doc, title, date (YYYY-MM-DD), topic, x, y. Raises when the map, the
    topic labels and the documents do not have one entry per document each."""
    xy, labels = np.asarray(xy, dtype=float), np.asarray(labels, dtype=int)
    if not (len(documents) == len(xy) == len(labels)):
        raise ValueError(f"{len(documents)} documents, {len(xy)} map positions and {len(labels)} topic "
                         "labels: re-run notebook 07 so that its documents and landscape files agree")
    dates = pd.to_datetime(documents["date"], errors="coerce")
    return pd.DataFrame({
        "doc": documents["doc"].to_numpy(int) if "doc" in documents else np.arange(len(documents)),
        "title": documents["title"].astype(str).to_numpy(),
        "date": dates.dt.strftime("%Y-%m-%d").fillna("date unknown").to_numpy(),
        "topic": labels, "x": xy[:, 0], "y": xy[:, 1],
    })


def narratives(paths_rows: pd.DataFrame, docs: pd.DataFrame) -> list[dict]:
    """Every endpoint pair of ``paths_rows`` (one collection, one seed) with its two paths: the
    documents in order (title, date, topic, x, y) and the path's min and mean coherence."""
    out = []
    for pair_id, g in paths_rows.sort_values("pair_id").groupby("pair_id", sort=False):
        item = {"pair_id": int(pair_id), "stratum": str(g["stratum"].iloc[0])}
        for method in METHODS:
            row = g[g["method"] == method]
            item[method] = _path_entry(row.iloc[0], docs) if len(row) else None
        first = item["maxcap"] or item["random"]
        item["label"] = (f"pair {item['pair_id']} · {item['stratum']} · {first['docs'][0]['title'][:50]} → "
                         f"{first['docs'][-1]['title'][:50]}")
        out.append(item)
    return out


def _path_entry(row: pd.Series, docs: pd.DataFrame) -> dict:
    # a path holds row positions in notebook 07's coherence matrix, i.e. positions in the documents
    at = docs.iloc[[int(d) for d in row["path"]]]
    return {
        "min_coherence": float(row["min_coherence"]), "mean_coherence": float(row["mean_coherence"]),
        "docs": [{"doc": int(r.doc), "title": r.title, "date": r.date, "topic": int(r.topic)}
                 for r in at.itertuples()],
        "x": at["x"].round(4).tolist(), "y": at["y"].round(4).tolist(),
    }


def topic_colour(topic: int) -> str:
    """The static figure's colour of a topic (:func:`judgelab.style.colour`); grey for noise (-1)."""
    return NOISE_COLOUR if topic < 0 else style.colour(int(topic))


def topic_symbol(topic: int) -> str:
    """The static figure's marker of a topic as a plotly symbol: the first eight topics circles,
    the next eight squares, ... (:data:`figures.TOPIC_MARKERS`); noise (-1) a circle."""
    if topic < 0:
        return "circle"
    return PLOTLY_SYMBOLS[TOPIC_MARKERS[(int(topic) // len(style.OKABE_ITO)) % len(TOPIC_MARKERS)]]


def explorer_figure(docs: pd.DataFrame, title: str) -> go.Figure:
    """The map: one scatter trace per topic (so the legend names topics), then two empty path
    traces (max capacity, random chronological) that the page's script fills."""
    fig = go.Figure()
    hover = "%{customdata[0]}<br>%{customdata[1]} · topic %{customdata[2]}<extra></extra>"
    for topic, g in docs.groupby("topic", sort=True):
        fig.add_trace(go.Scatter(
            x=g["x"].round(4), y=g["y"].round(4), mode="markers", name=f"topic {topic}",
            marker={"size": 7, "color": topic_colour(topic), "symbol": topic_symbol(topic), "opacity": 0.7,
                    "line": {"width": 0}},
            customdata=g[["title", "date", "topic"]].to_numpy(), hovertemplate=hover,
            meta="documents"))
    for method in METHODS:
        fig.add_trace(go.Scatter(
            x=[], y=[], mode="lines+markers", name=style.METHOD_LABELS[method], meta=method,
            line={"color": style.METHOD_COLOURS[method], "width": 3 if method == "maxcap" else 2,
                  "dash": "solid" if method == "maxcap" else "dash"},
            marker={"size": 11, "symbol": "circle-open", "color": style.METHOD_COLOURS[method]},
            hovertemplate="%{text}<extra>" + style.METHOD_LABELS[method] + "</extra>", text=[]))
    fig.update_layout(title=title, template="plotly_white", height=640, hovermode="closest",
                      xaxis={"showticklabels": False, "title": "UMAP 1"},
                      yaxis={"showticklabels": False, "title": "UMAP 2"},
                      legend={"title": {"text": "topic / path"}}, margin={"l": 40, "r": 20, "t": 60, "b": 40})
    return fig


def explorer_html(collection: str, documents: pd.DataFrame, xy: np.ndarray, labels: np.ndarray,
                  paths_rows: pd.DataFrame, provenance: str = "") -> str:
    """The whole page (plotly.js inlined) for one collection; ``paths_rows`` may be empty."""
    docs = document_frame(documents, xy, labels)
    items = narratives(paths_rows, docs) if len(paths_rows) else []
    n_topics = docs["topic"].nunique()
    fig = explorer_figure(docs, f"{collection}: {len(docs)} documents, {n_topics} topics")
    plot = fig.to_html(full_html=False, include_plotlyjs=True, div_id=PLOT_ID,
                       config={"displaylogo": False, "responsive": True})
    return _TEMPLATE.render(
        collection=collection, plot=plot, provenance=provenance, n_docs=len(docs), n_topics=n_topics,
        narratives=items, data=_script_json(items), plot_id=PLOT_ID, first_path_trace=len(fig.data) - len(METHODS))


def _script_json(obj) -> str:
    """JSON safe inside a <script> element (a title holding "</script>" must not end it)."""
    return json.dumps(obj, ensure_ascii=False).replace("</", "<\\/")


def save_explorer(collection: str, documents: pd.DataFrame, xy: np.ndarray, labels: np.ndarray,
                  paths_rows: pd.DataFrame, provenance: str = "") -> Path:
    """Write ``figures/narr_explorer_<collection>.html`` and return its path."""
    out = paths.figures_dir() / f"{explorer_name(collection)}.html"
    out.write_text(explorer_html(collection, documents, xy, labels, paths_rows, provenance), encoding="utf-8")
    return out


def save_explorers(paths_main: pd.DataFrame, landscapes: dict[str, dict], provenance: str = "") -> list[Path]:
    """One explorer per collection of notebook 08's main-seed paths, on notebook 07's arrays
    (``landscapes``) and documents."""
    out = []
    for name, land in landscapes.items():
        rows = paths_main[paths_main["collection"] == name]
        out.append(save_explorer(name, store.load_documents(name), land["umap2d"], land["labels"], rows,
                                 provenance))
    return out


_TEMPLATE = jinja2.Environment(autoescape=True).from_string("""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Narrative landscape explorer: {{ collection }}</title>
<style>
 body { font-family: system-ui, sans-serif; margin: 1rem 2rem; color: #222; }
 /* a grid, not a wrapping flex row: the plot's column can never grow under the list */
 .layout { display: grid; grid-template-columns: minmax(0, 1fr) minmax(280px, 26rem); gap: 1.5rem;
           align-items: start; }
 .map { min-width: 0; overflow: hidden; }
 aside { min-width: 0; }
 @media (max-width: 1000px) { .layout { grid-template-columns: minmax(0, 1fr); } }
 select { width: 100%; font-size: 0.9rem; }
 .path h3 { margin: 0.8rem 0 0.2rem; font-size: 1rem; }
 .path ol { margin: 0.2rem 0; padding-left: 1.4rem; font-size: 0.88rem; }
 .maxcap h3 { color: #0072B2; } .random h3 { color: #B36B00; }
 .meta { color: #555; font-size: 0.85rem; }
</style>
</head>
<body>
<h1>Narrative landscape explorer: {{ collection }}</h1>
<p class="meta">{{ n_docs }} documents, {{ n_topics }} topics; {{ narratives|length }} extracted narratives
(notebook 08, main seed). Hover a dot for its title, date and topic; choose a narrative to draw its
max-capacity path (solid) and its random chronological twin between the same endpoints (dashed).
{% if provenance %}<br>{{ provenance }}{% endif %}</p>
<div class="layout">
<div class="map">{{ plot|safe }}</div>
<aside>
<label for="narrative">Narrative</label>
<select id="narrative" {% if not narratives %}disabled{% endif %}>
{% for n in narratives %}<option value="{{ loop.index0 }}">{{ n.label }}</option>
{% else %}<option>no narratives were extracted for this collection</option>{% endfor %}
</select>
<div id="paths"></div>
</aside>
</div>
<script>
(function () {
  const narratives = {{ data|safe }};
  const first = {{ first_path_trace }};
  const methods = [["maxcap", "max capacity"], ["random", "random chronological"]];
  const plot = document.getElementById("{{ plot_id }}");
  const list = document.getElementById("paths");
  function fmt(v) { return v.toFixed(3); }
  function show(i) {
    const n = narratives[i];
    const xs = [], ys = [], texts = [];
    list.innerHTML = "";
    methods.forEach(function (m) {
      const p = n[m[0]];
      xs.push(p ? p.x : []); ys.push(p ? p.y : []);
      texts.push(p ? p.docs.map(function (d, k) { return (k + 1) + ". " + d.title + " (" + d.date + ")"; }) : []);
      const box = document.createElement("div");
      box.className = "path " + m[0];
      const h = document.createElement("h3");
      h.textContent = p ? m[1] + ": " + p.docs.length + " documents, minimum coherence " + fmt(p.min_coherence)
        + ", average " + fmt(p.mean_coherence) : m[1] + ": none";
      box.appendChild(h);
      if (p) {
        const ol = document.createElement("ol");
        p.docs.forEach(function (d) {
          const li = document.createElement("li");
          li.textContent = d.title + " (" + d.date + ", topic " + d.topic + ")";
          ol.appendChild(li);
        });
        box.appendChild(ol);
      }
      list.appendChild(box);
    });
    Plotly.restyle(plot, {x: xs, y: ys, text: texts}, [first, first + 1]);
    document.body.dataset.shownPair = String(n.pair_id);
  }
  const select = document.getElementById("narrative");
  if (narratives.length) {
    select.addEventListener("change", function () { show(Number(select.value)); });
    window.addEventListener("load", function () { show(Number(select.value)); });  // after newPlot
  }
  // the plot takes its column's width, whatever width it was first drawn at
  window.addEventListener("load", function () { Plotly.Plots.resize(plot); });
})();
</script>
</body>
</html>
""")
