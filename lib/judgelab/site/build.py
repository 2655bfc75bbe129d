"""Build the static site under ``<output root>/site/`` from what the notebooks wrote.

Reads only outputs (tables and their sidecars, figures, the explorers, the executed notebooks) and
the library's source files; it runs no analysis. Pages: a landing page (the claims scorecard when
notebook 13 has run, the judge, a table of contents), one page per table (recomputed beside the
paper's, differences highlighted, links to the notebook section and the library function), a
figure gallery, every executed notebook and the cited source files. Nothing is loaded from the
network.
"""
from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
import pandas as pd

from judgelab import paths, provenance
from judgelab.provenance import is_embedded_small_model
from judgelab.reporting import SMALL_MODEL_WARNING
from judgelab.site import catalog, compare, notebooks, scorecard

HERE = Path(__file__).parent
EXPLORER_GLOB = "narr_explorer_*.html"


class SiteInputMissing(RuntimeError):
    """Nothing to build from: the message names the notebook (make target) to run."""


@dataclass
class SiteReport:
    out: Path
    pages: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def bytes(self) -> int:
        return sum(p.stat().st_size for p in self.out.rglob("*") if p.is_file())

    def __str__(self) -> str:
        text = (f"site: {len(self.pages)} pages, {self.bytes / 1e6:.1f} MB, built in {self.seconds:.1f} s -> "
                f"{self.out / 'index.html'}")
        if self.missing:
            text += "\npaper tables not on the site yet, run: " + "; ".join(self.missing)
        return text


# ----------------------------------------------------------------------------- provenance

def read_provenance(output: Path) -> dict | None:
    """The provenance sidecar beside a table or figure, or None."""
    return provenance.read_sidecar(output) if provenance.sidecar_path(output).exists() else None


def provenance_line(prov: dict | None, nb: notebooks.Notebook | None = None) -> str:
    """One line of who made an output, from its sidecar (or says that there is none)."""
    if prov is None:
        params = nb.parameters if nb else {}
        known = ", ".join(f"{k.lower()}={params[k]}" for k in ("PROFILE", "BACKEND", "MODEL") if k in params)
        return ("provenance unknown: no provenance sidecar beside this output"
                + (f"; the notebook {nb.stem} ran with {known}" if known else ""))
    judge = prov.get("judge") or (f"{prov.get('backend')}:{prov.get('model')}" if prov.get("backend") else "none")
    host = f" at {prov['base_url_host']}" if prov.get("base_url_host") else ""
    commit = prov.get("git_commit") or prov.get("commit") or "unknown"
    parts = [f"notebook {prov.get('notebook') or '?'}", f"profile {prov.get('profile') or '?'}",
             f"judge {judge}{host}"]
    if prov.get("prompt_versions"):
        parts.append("prompts " + ", ".join(map(str, _as_list(prov["prompt_versions"]))))
    if prov.get("seeds"):
        parts.append("seeds " + ", ".join(map(str, _as_list(prov["seeds"]))))
    parts.append(f"commit {str(commit)[:10]}{' (modified)' if prov.get('git_dirty') else ''}")
    when = prov.get("written_at") or prov.get("created_at")
    if when:
        parts.append(f"written {when}")
    text = " · ".join(parts)
    if _embedded(prov):
        text += ". " + SMALL_MODEL_WARNING
    return text


def _as_list(v) -> list:
    return v if isinstance(v, list) else [v]


def _embedded(prov: dict) -> bool:
    return bool(prov.get("embedded_small_model")) or (
        prov.get("judge") not in (None, "none") and is_embedded_small_model(prov.get("backend"), prov.get("model")))


# ----------------------------------------------------------------------------- library source links

def function_line(project: Path, function: str) -> tuple[Path, int] | None:
    """(source file, line of ``def``) of ``module:function``, read with ast; None if absent."""
    module, name = function.split(":")
    rel = Path("lib", *module.split(".")).with_suffix(".py")
    src = project / rel
    if not src.exists():
        return None
    for node in ast.walk(ast.parse(src.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)):
            names = [node.name] if hasattr(node, "name") else [
                t.id for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                if isinstance(t, ast.Name)]
            if name in names:
                return rel, node.lineno
    return None


def render_source(project: Path, rel: Path, out: Path) -> str:
    """Write ``src/<module>.html`` (pygments, one anchor ``line-N`` per line); return its site path."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    page = f"src/{'.'.join(rel.with_suffix('').parts[1:])}.html"
    target = out / page
    if not target.exists():
        fmt = HtmlFormatter(linenos="inline", lineanchors="line", anchorlinenos=True, cssclass="source")
        body = highlight((project / rel).read_text(encoding="utf-8"), PythonLexer(), fmt)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_env().get_template("source.html.j2").render(
            title=str(rel), body=body, css=fmt.get_style_defs(".source"), up="../"), encoding="utf-8")
    return page


# ----------------------------------------------------------------------------- tables

def _fmt(v) -> str:
    if isinstance(v, float):
        return "" if pd.isna(v) else (f"{v:.0f}" if v.is_integer() and abs(v) < 1e6 else f"{v:.4g}")
    return "" if v is None or (not isinstance(v, str) and pd.isna(v)) else str(v)


def beside_order(columns, pairs: list[compare.Pair]) -> list[str]:
    """The CSV's column order with each compared paper column moved right after its recomputed one."""
    moved = {p.paper for p in pairs}
    order = []
    for col in columns:
        if col not in moved:
            order += [col] + [p.paper for p in pairs if p.ours == col]
    return order


def table_cells(df: pd.DataFrame, entry: catalog.PaperTable | None,
                embedded: bool = False) -> tuple[list[dict], list[list[dict]], dict]:
    """Header and body cells of a table page: recomputed cells that have a paper partner carry
    their verdict (class ``agrees`` / ``differs``) and a tooltip with the paper's value and the
    difference; paper columns carry class ``paper``. A table the embedded small model made
    (``embedded``) is set beside the paper uncoloured: its values are no test of the paper's
    (the scorecard calls such claims not testable), so no cell is marked as agreeing."""
    pairs = compare.paper_pairs(df.columns, entry.pairs if entry else None)
    df = df[beside_order(df.columns, pairs)]
    verdicts = compare.cell_verdicts(df, pairs)
    if embedded:
        verdicts = verdicts.mask(verdicts.isin(["agrees", "differs"]), "embedded")
    partner = {p.ours: p for p in pairs}
    paper_cols = {c for c in df.columns if c.startswith("paper_")}
    head = [{"text": c, "cls": "paper" if c in paper_cols else ("compared" if c in partner else "")}
            for c in df.columns]
    values, marks = df.to_numpy(dtype=object), verdicts.to_numpy()
    paper_at = [df.columns.get_loc(partner[c].paper) if c in partner else None for c in df.columns]
    kinds = ["paper" if c in paper_cols else "" for c in df.columns]
    body = []
    for row_values, row_marks in zip(values, marks):
        row = []
        for j, v in enumerate(row_values):
            cell = {"text": _fmt(v), "cls": kinds[j]}
            if row_marks[j] in ("agrees", "differs"):
                paper = row_values[paper_at[j]]
                cell["cls"] = row_marks[j]
                cell["title"] = f"paper {_fmt(paper)}; recomputed - paper = {_fmt(float(v) - float(paper))}"
            elif row_marks[j] == "embedded":
                cell["cls"] = "embedded-value"
                cell["title"] = f"paper {_fmt(row_values[paper_at[j]])}; the embedded model's value, not compared"
            row.append(cell)
        body.append(row)
    return head, body, compare.summary(verdicts)


# ----------------------------------------------------------------------------- the build

def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"),
                              autoescape=jinja2.select_autoescape(["html", "j2"]), trim_blocks=True,
                              lstrip_blocks=True)


def git_commit(project: Path) -> str:
    try:
        out = subprocess.run(["git", "-C", str(project), "rev-parse", "--short=10", "HEAD"], capture_output=True,
                             text=True, timeout=10, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def writer_in_sources(project: Path, name: str) -> str | None:
    """The notebook (``NN``) whose source saves ``name``, for the 'run this notebook' message."""
    sources = [notebooks.Notebook(src.stem, src, _as_notebook(src))
               for src in sorted((project / "notebooks").glob("[0-9][0-9]_*.py"))]
    found = notebooks.find_writer(sources, name)
    return found.number if found else None


def _as_notebook(src: Path):
    import nbformat

    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src.read_text(encoding="utf-8"))])


def build_site(root: Path | None = None, out: Path | None = None, project: Path | None = None,
               own_name: str | None = None) -> SiteReport:
    """Build the site from the outputs under ``root`` (default: the output root) into ``out``
    (default ``<root>/site``); return what was written. Raises :class:`SiteInputMissing` when no
    notebook has been run there. Runs on your own texts (``results/own/<name>/``, ``make own``)
    get a section of their own, ``own/<name>/``, built with ``own_name``: no paper, so no paper
    column, no paper-table catalogue and no claims scorecard."""
    start = time.perf_counter()
    root = Path(root or paths.output_root())
    project = Path(project or paths.project_root())
    out = Path(out or root / "site")
    executed, tables_dir, figures_dir = root / "results" / "executed", root / "results" / "tables", root / "figures"
    nbs = notebooks.load(executed) if executed.is_dir() else []
    own_runs = own_sites(root) if own_name is None else []
    if not nbs and not own_runs:
        raise SiteInputMissing(f"no executed notebooks in {executed}: run `make all` (or the notebooks you "
                               "want on the site, e.g. `make nb-08`) first; `make site` never runs an analysis")
    if out.exists():
        shutil.rmtree(out)
    (out / "figures").mkdir(parents=True)
    shutil.copy(HERE / "site.css", out / "site.css")
    env, report = _env(), SiteReport(out)
    by_csv = catalog.by_csv() if own_name is None else {}

    tables = []
    for csv in sorted(tables_dir.glob("*.csv")) if tables_dir.is_dir() else []:
        tables.append(_table_page(env, out, project, csv, by_csv.get(csv.stem), nbs, papers=own_name is None))
    present, absent = {t["name"] for t in tables}, {}
    for entry in catalog.PAPER_TABLES if own_name is None else ():
        if entry.csv not in present:
            absent.setdefault(writer_in_sources(project, entry.csv) or "NN", []).append(entry.csv)
    report.missing = [f"make nb-{nb} ({', '.join(names)})" for nb, names in sorted(absent.items())]

    pngs = sorted(figures_dir.glob("*.png"), key=lambda p: catalog.figure_sort_key(p.stem)) if figures_dir.is_dir() else []
    figures = [_figure(out, png, nbs) for png in pngs]
    explorers = []
    for page in sorted(figures_dir.glob(EXPLORER_GLOB)) if figures_dir.is_dir() else []:
        shutil.copy(page, out / "figures" / page.name)
        explorers.append({"name": page.stem.removeprefix("narr_explorer_"), "href": f"figures/{page.name}"})

    exp = notebooks.exporter()
    nb_pages = []
    for nb in nbs:
        page = out / nb.page
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(notebooks.render(nb, exp, {"site": {"stem": nb.stem, "provenance": _nb_judge(nb)["line"]}}),
                        encoding="utf-8")
        nb_pages.append({"stem": nb.stem, "title": nb.title, "href": nb.page, **_nb_judge(nb)})

    _write(env, out, "figures.html", "figures.html.j2", figures=figures, up="")
    teaching = _teaching_page(env, out, project)
    judges = _judges(tables, figures, nb_pages, project)
    claims = (scorecard.rows(tables_dir, nbs, {t["name"] for t in tables}, lambda f: _source_href(project, out, f))
              if own_name is None else None)
    _write(env, out, "index.html", "index.html.j2", up="", judges=judges, studies=_toc(tables, figures),
           explorers=explorers, notebooks=nb_pages, missing=report.missing, warning=SMALL_MODEL_WARNING,
           claims=claims, claim_counts=scorecard.counts(claims or []), claim_chance=scorecard.chance(claims or []),
           claim_screen=scorecard.first_screen(claims or []),
           claim_robustness_note=scorecard.robustness_note(claims or []),
           scorecard_figure=next((f for f in figures if f["name"] == "claims_fig_scorecard"), None),
           teaching=teaching, own_name=own_name, own_runs=own_runs)
    for run in own_runs:
        build_site(run["root"], out / run["href"].removesuffix("/index.html"), project, own_name=run["name"])
    report.pages = sorted(str(p.relative_to(out)) for p in out.rglob("*.html"))
    report.seconds = time.perf_counter() - start
    return report


def own_sites(root: Path) -> list[dict]:
    """The runs on your own texts under ``root`` (``results/own/<name>/`` with executed notebooks)."""
    base = root / "results" / "own"
    found = sorted(d for d in base.iterdir() if (d / "results" / "executed").is_dir()) if base.is_dir() else []
    return [{"name": d.name, "root": d, "href": f"own/{d.name}/index.html"} for d in found]


def _source_href(project: Path, out: Path, function: str) -> str | None:
    """``src/<module>.html#line-N`` for ``module:function`` (rendered on first use), or None."""
    if ":" not in function:
        return None
    found = function_line(project, function)
    return f"{render_source(project, found[0], out)}#line-{found[1]}" if found else None


def _teaching_page(env, out: Path, project: Path) -> str | None:
    """``teaching.html`` from ``docs/teaching.md``; None when the file is absent."""
    import mistune

    src = project / "docs" / "teaching.md"
    if not src.is_file():
        return None
    _write(env, out, "teaching.html", "teaching.html.j2", up="", body=mistune.html(src.read_text(encoding="utf-8")))
    return "teaching.html"


def _write(env, out: Path, page: str, template: str, **context) -> None:
    (out / page).parent.mkdir(parents=True, exist_ok=True)
    (out / page).write_text(env.get_template(template).render(**context), encoding="utf-8")


def _nb_judge(nb: notebooks.Notebook) -> dict:
    p = nb.parameters
    backend, model = p.get("BACKEND"), p.get("MODEL")
    embedded = ("BACKEND" in p) and is_embedded_small_model(backend or "llamacpp", model)
    line = f"profile {p.get('PROFILE', '?')}"
    if "BACKEND" in p:
        line += f" · judge {backend or 'default (environment, else embedded llamacpp)'}:{model or 'default'}"
    return {"profile": p.get("PROFILE", "?"), "backend": backend, "model": model, "llm": "BACKEND" in p,
            "embedded": embedded, "executed_at": nb.executed_at, "line": line}


def _table_page(env, out: Path, project: Path, csv: Path, entry, nbs, papers: bool = True) -> dict:
    try:
        df = pd.read_csv(csv)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ValueError(f"{csv}: cannot be read as CSV ({exc}); re-run the notebook that wrote it") from None
    if not papers:  # your own texts: the papers reported nothing about them
        df = df.drop(columns=[c for c in df.columns if str(c).startswith("paper_")])
    prov = read_provenance(csv)
    nb = notebooks.find_writer(nbs, csv.stem, (prov or {}).get("notebook"))
    anchor = notebooks.section_anchor(nb, csv.stem) if nb else None
    function = None
    if entry:
        found = function_line(project, entry.function)
        pv = function_line(project, entry.paper_values)
        function = {"name": entry.function, "path": str(found[0]) if found else None,
                    "href": f"../{render_source(project, found[0], out)}#line-{found[1]}" if found else None,
                    "paper_values": entry.paper_values,
                    "paper_href": f"../{render_source(project, pv[0], out)}#line-{pv[1]}" if pv else None}
    head, body, summary = table_cells(df, entry, embedded=_embedded(prov or {}))
    page = f"tables/{csv.stem}.html"
    _write(env, out, page, "table.html.j2", up="../", name=csv.stem, entry=entry, head=head, body=body,
           summary=summary, n_rows=len(df), provenance=provenance_line(prov, nb), function=function,
           notebook={"stem": nb.stem, "href": f"../{nb.page}" + (f"#{anchor}" if anchor else ""),
                     "section": bool(anchor)} if nb else None,
           tolerance=f"{compare.REL_TOL:.0%} or {compare.ABS_TOL:g}")
    return {"name": csv.stem, "href": page, "entry": entry, "summary": summary, "prov": prov,
            "study": catalog.study_of(csv.stem)}


def _figure(out: Path, png: Path, nbs) -> dict:
    shutil.copy(png, out / "figures" / png.name)
    prov = read_provenance(png)
    nb = notebooks.find_writer(nbs, png.stem, (prov or {}).get("notebook"))
    anchor = notebooks.section_anchor(nb, png.stem) if nb else None
    layout = png.with_name(f"{png.stem}.layout.json")
    has_caption = layout.exists() and any(t.get("name") == "caption"
                                          for t in json.loads(layout.read_text(encoding="utf-8")).get("texts", []))
    return {"name": png.stem, "src": f"figures/{png.name}", "label": catalog.figure_label(png.stem),
            "study": catalog.study_of(png.stem), "provenance": provenance_line(prov, nb), "prov": prov,
            "has_caption": has_caption,
            "notebook": {"stem": nb.stem, "href": nb.page + (f"#{anchor}" if anchor else "")} if nb else None}


def _toc(tables: list[dict], figures: list[dict]) -> list[dict]:
    """Per study: its paper tables in the catalog's order, its numbered figures, then the rest."""
    out = []
    for key, study in catalog.STUDIES.items():
        mine = [t for t in tables if t["study"] == study]
        order = {e.csv: i for i, e in enumerate(catalog.PAPER_TABLES)}
        paper = sorted((t for t in mine if t["entry"]), key=lambda t: order[t["name"]])
        figs = [f for f in figures if f["study"] == study]
        out.append({"key": key, "name": study, "paper_tables": paper,
                    "other_tables": [t for t in mine if not t["entry"]],
                    "paper_figures": [f for f in figs if f["label"]],
                    "other_figures": [f for f in figs if not f["label"]]})
    return out


def _judges(tables, figures, nb_pages, project: Path) -> dict:
    """Who produced the numbers: judges, profiles, commits, whether the embedded model answered."""
    provs = [x["prov"] for x in tables + figures if x["prov"]]
    judges = sorted({p.get("judge") or "none" for p in provs} - {"none"})
    commits = sorted({str(p.get("git_commit") or p.get("commit"))[:10]
                      + (" (with uncommitted changes)" if p.get("git_dirty") else "")
                      for p in provs if p.get("git_commit") or p.get("commit")})
    profiles = sorted({p.get("profile") for p in provs if p.get("profile")} | {n["profile"] for n in nb_pages})
    embedded = any(_embedded(p) for p in provs) or any(n["embedded"] for n in nb_pages)
    return {"judges": judges, "n_without": sum(1 for x in tables + figures if not x["prov"]), "commits": commits or [f"{git_commit(project)} (checkout at build time)"],
            "profiles": profiles, "embedded": embedded, "from_sidecars": bool(provs),
            "llm_notebooks": [n for n in nb_pages if n["llm"]]}


def main() -> int:
    """``python -m judgelab.site.build`` (``make site``): the site, or the missing input and 1."""
    try:
        print(build_site())
    except SiteInputMissing as exc:
        print(f"make site: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
