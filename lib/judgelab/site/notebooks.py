"""Executed notebooks as offline HTML pages, and where in them a table or figure is made.

nbconvert renders each executed notebook with the JupyterLab template, which loads require.js,
MathJax and the widget manager from CDNs; ``templates/notebook.html.j2`` empties those blocks, so
the page loads nothing from the network (formulas show as TeX). Cell ids are the anchors the table
pages link to.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

TEMPLATES = Path(__file__).parent / "templates"
_LITERAL = re.compile(r"""f?(["'])((?:sage|narr)_[A-Za-z0-9_{}.\[\]"' ]*?)\1""")


@dataclass(frozen=True)
class Notebook:
    stem: str                 # "08_path_extraction"
    path: Path                # the executed .ipynb
    nb: nbformat.NotebookNode

    @property
    def number(self) -> str:
        return self.stem[:2]

    @property
    def page(self) -> str:
        return f"notebooks/{self.stem}.html"

    @property
    def title(self) -> str:
        """The first Markdown heading, e.g. "08 — Endpoint pairs, ..."."""
        for cell in self.nb.cells:
            if cell.cell_type == "markdown":
                for line in cell.source.splitlines():
                    if line.startswith("#"):
                        return line.lstrip("#").strip()
        return self.stem

    @property
    def parameters(self) -> dict:
        return dict(self.nb.metadata.get("papermill", {}).get("parameters", {}))

    @property
    def executed_at(self) -> str:
        return str(self.nb.metadata.get("papermill", {}).get("end_time") or "")


def load(directory: Path) -> list[Notebook]:
    """Every executed notebook under ``directory``, in number order."""
    return [Notebook(p.stem, p, nbformat.read(p, as_version=4)) for p in sorted(Path(directory).glob("*.ipynb"))]


def _pattern(literal: str) -> re.Pattern:
    """A saved name as the notebook writes it (``f"narr_fig_landscape_{name}"``) as a regex."""
    parts = re.split(r"\{[^}]*\}", literal)
    return re.compile("^" + ".+".join(re.escape(p) for p in parts) + "$")


def _match(nb: Notebook, name: str) -> tuple[int, int] | None:
    """(specificity, cell index) of the code cell whose string literals name ``name`` most
    specifically (f-strings included: ``narr_fig_landscape_narrative_{name}`` beats
    ``narr_fig_landscape_{name}`` for ``narr_fig_landscape_narrative_news``)."""
    best = None
    for i, cell in enumerate(nb.nb.cells):
        if cell.cell_type != "code":
            continue
        for m in _LITERAL.finditer(cell.source):
            if _pattern(m.group(2)).match(name):
                fixed = len(re.sub(r"\{[^}]*\}", "", m.group(2)))
                if best is None or fixed > best[0]:
                    best = (fixed, i)
    return best


def cell_saving(nb: Notebook, name: str) -> int | None:
    """Index of the code cell that saves ``name`` (:func:`_match`), or None."""
    found = _match(nb, name)
    return None if found is None else found[1]


def section_anchor(nb: Notebook, name: str) -> str | None:
    """``cell-id=<id>`` of the heading above the cell that saves ``name`` (else that cell)."""
    at = cell_saving(nb, name)
    if at is None:
        return None
    for cell in reversed(nb.nb.cells[:at]):
        if cell.cell_type == "markdown" and cell.source.lstrip().startswith("#") and cell.get("id"):
            return f"cell-id={cell.id}"
    cell = nb.nb.cells[at]
    return f"cell-id={cell.id}" if cell.get("id") else None


def find_writer(notebooks: list[Notebook], name: str, declared: str | None = None) -> Notebook | None:
    """The notebook that saves ``name``: its sidecar's (``declared``), else by its code."""
    if declared:
        for nb in notebooks:
            if nb.stem == declared or nb.number == declared:
                return nb
    found = [(m[0], -k, nb) for k, nb in enumerate(notebooks) if (m := _match(nb, name))]
    return max(found, key=lambda t: t[:2])[2] if found else None


def exporter():
    """An HTMLExporter on the lab template with the CDN blocks emptied (``templates/notebook.html.j2``)."""
    from nbconvert import HTMLExporter

    exp = HTMLExporter(template_name="lab", extra_template_paths=[str(TEMPLATES)])
    exp.template_file = "notebook.html.j2"
    exp.exclude_anchor_links = False
    return exp


def render(nb: Notebook, exp, resources: dict) -> str:
    """One notebook as HTML; ``resources['site']`` feeds the page header (links back to the site)."""
    body, _ = exp.from_notebook_node(nb.nb, resources={"metadata": {"name": nb.title}, **resources})
    return body
