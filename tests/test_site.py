"""`make site` (judgelab.site): the builder on a tiny synthetic results tree, the paper-vs-recomputed
comparison, and the catalog that maps table CSVs to paper tables.

The tree holds one executed notebook (made here with nbformat, as papermill would leave it), a
Table 8 with a sidecar naming the embedded model, a table without a sidecar, one figure with its
layout sidecar and one explorer page; every expected link, class and line is derived from those
inputs. The real browser opens the smoke run's site in tests/test_site_browser.py.
"""
from __future__ import annotations

import importlib
import inspect
import json
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from markupsafe import escape  # noqa: E402

from judgelab import paths  # noqa: E402
from judgelab.reporting import SMALL_MODEL_WARNING  # noqa: E402
from judgelab.site import build, catalog, compare, notebooks  # noqa: E402

EXTERNAL = re.compile(r"""<(?:script|link|img|iframe)[^>]+(?:src|href)=["']?(?:https?:)?//""", re.I)


# ----------------------------------------------------------------------------- comparison rules

def test_paper_columns_pair_with_their_recomputed_neighbours():
    cols = ["metric", "value", "paper_value", "paper_qualifier", "paper_source", "mean", "paper_mean",
            "paper_orphan", "p_t", "paper_p_t", "paper_p_t_qualifier"]
    pairs = compare.paper_pairs(cols)
    assert [(p.paper, p.ours, p.qualifier) for p in pairs] == [
        ("paper_value", "value", "paper_qualifier"), ("paper_mean", "mean", None),
        ("paper_p_t", "p_t", "paper_p_t_qualifier")]
    assert [p.ours for p in compare.paper_pairs(["value_mean", "paper_value"], {"paper_value": "value_mean"})] == [
        "value_mean"]
    # on the page each paper column stands right after its recomputed one
    assert build.beside_order(cols, pairs) == [
        "metric", "value", "paper_value", "paper_qualifier", "paper_source", "mean", "paper_mean", "paper_orphan",
        "p_t", "paper_p_t", "paper_p_t_qualifier"]
    assert build.beside_order(["mean", "std", "paper_mean", "paper_std"], compare.paper_pairs(
        ["mean", "std", "paper_mean", "paper_std"])) == ["mean", "paper_mean", "std", "paper_std"]


@pytest.mark.parametrize("ours, paper, qualifier, expected", [
    (0.95, 1.0, None, "agrees"),          # 5% off: within 10%
    (0.80, 1.0, "=", "differs"),          # 20% off
    (0.015, 0.0, None, "agrees"),         # near zero: within the absolute 0.02
    (0.96, 0.94, ">", "agrees"),          # a bound: "> 94%"
    (0.90, 0.94, ">", "differs"),
    (0.2, 0.3, "<", "agrees"),
    (float("nan"), 1.0, None, "missing"),
    ("n/a", 1.0, None, "missing"),
])
def test_a_recomputed_value_agrees_within_tolerance_or_on_the_side_of_a_bound(ours, paper, qualifier, expected):
    assert compare.verdict(ours, paper, qualifier) == expected


# ----------------------------------------------------------------------------- catalog

@pytest.mark.parametrize("entry", catalog.PAPER_TABLES, ids=lambda e: e.csv)
def test_every_catalogued_function_exists_and_its_notebook_calls_it(entry):
    module, function_name = importlib.import_module(entry.module), entry.function.split(":")[1]
    assert callable(getattr(module, function_name)), entry.function
    pv_module, pv_name = entry.paper_values.split(":")
    assert hasattr(importlib.import_module(pv_module), pv_name), entry.paper_values
    writer = build.writer_in_sources(paths.project_root(), entry.csv)
    assert writer, f"no notebook saves {entry.csv}"
    source = next((paths.project_root() / "notebooks").glob(f"{writer}_*.py")).read_text()
    assert f".{function_name}(" in source, f"notebook {writer} does not call {entry.function}"


def test_figure_names_carry_the_paper_number():
    assert catalog.figure_label("narr_fig08ab_coherence_by_method") == "Figure 8 (ab)"
    assert catalog.figure_label("sage_fig03_genre_comparison") == "Figure 3"
    assert catalog.figure_label("narr_fig_landscape_news") is None
    assert catalog.study_of("sage_fig03_genre_comparison") == catalog.SAGE


# ----------------------------------------------------------------------------- the builder

def _notebook(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# 05 — Toy reliability"),
                nbformat.v4.new_code_cell('PROFILE = "smoke"'),
                nbformat.v4.new_markdown_cell("## Table 8 — reliability"),
                nbformat.v4.new_code_cell('table08 = paper_tables.table08_reliability(rows)\n'
                                          'reporting.save_table(table08, "sage_table08_reliability")'),
                nbformat.v4.new_markdown_cell("## Figure 3"),
                nbformat.v4.new_code_cell('reporting.save_figure(fig, f"sage_fig03_{what}")')]
    nb.metadata["papermill"] = {"parameters": {"PROFILE": "smoke", "BACKEND": "llamacpp", "MODEL": None},
                                "end_time": "2026-11-30T12:00:00"}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return nb


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "out"
    nb = _notebook(root / "results" / "executed" / "05_toy.ipynb")
    tables = root / "results" / "tables"
    tables.mkdir(parents=True)
    pd.DataFrame({"metric": ["success_rate", "peer_agreement", "convergence_rate"],
                  "value": [0.99, 0.90, 0.5], "paper_value": [1.0, 0.94, 0.988],
                  "paper_qualifier": ["=", ">", "="]}).to_csv(tables / "sage_table08_reliability.csv", index=False)
    (tables / "sage_table08_reliability.provenance.json").write_text(json.dumps({
        "output": "sage_table08_reliability", "notebook": "05_toy", "profile": "smoke", "judge": "llamacpp:smollm2-135m",
        "backend": "llamacpp", "model": "SmolLM2-135M-Instruct", "base_url_host": None, "embedded_small_model": True,
        "prompt_versions": ["sage-v2"], "seeds": ["seed=7"], "git_commit": "0123456789abcdef", "git_dirty": False,
        "written_at": "2026-11-30T12:00:00+00:00"}))
    pd.DataFrame({"a": [1, 2]}).to_csv(tables / "sage_extra.csv", index=False)
    figures = root / "figures"
    figures.mkdir()
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], [0, 1])
    fig.savefig(figures / "sage_fig03_genre_comparison.png", dpi=50)
    plt.close(fig)
    (figures / "sage_fig03_genre_comparison.layout.json").write_text(json.dumps(
        {"texts": [{"name": "caption", "bbox": [0, 0, 1, 1]}]}))
    (figures / "narr_explorer_toy.html").write_text("<!DOCTYPE html><title>toy explorer</title>")
    return root, nb


def test_the_site_links_each_table_to_its_notebook_section_and_library_function(tree):
    root, nb = tree
    report = build.build_site(root=root)
    site = root / "site"
    assert report.out == site
    assert {"index.html", "figures.html", "notebooks/05_toy.html", "tables/sage_table08_reliability.html",
            "tables/sage_extra.html", "src/judgelab.sage.analysis.paper_tables.html"} <= set(report.pages)
    page = (site / "tables" / "sage_table08_reliability.html").read_text()
    heading_id = nb.cells[2].id  # the "## Table 8" section above the cell that saves the table
    assert f'href="../notebooks/05_toy.html#cell-id={heading_id}"' in page
    assert f'id="cell-id={heading_id}"' in (site / "notebooks" / "05_toy.html").read_text()
    from judgelab.sage.analysis import paper_tables
    line = inspect.getsourcelines(paper_tables.table08_reliability)[1]
    assert f'href="../src/judgelab.sage.analysis.paper_tables.html#line-{line}"' in page
    assert f'id="line-{line}"' in (site / "src" / "judgelab.sage.analysis.paper_tables.html").read_text()
    # the embedded model made this table: its values stand beside the paper's uncoloured, never "agrees"
    assert 'class="agrees"' not in page and 'class="differs"' not in page
    assert len(re.findall(r'<td class="embedded-value" title="paper ([^;]+);', page)) == 3
    assert "commit 0123456789" in page and "judge llamacpp:smollm2-135m" in page and escape(SMALL_MODEL_WARNING) in page
    # the same table from the paper's judge: 0.99 vs 1.0 agrees; 0.90 vs "> 0.94" differs; 0.5 vs 0.988 differs
    side = root / "results" / "tables" / "sage_table08_reliability.provenance.json"
    side.write_text(json.dumps({**json.loads(side.read_text()), "judge": "openai:gpt-5-mini", "backend": "openai",
                                "model": "gpt-5-mini", "embedded_small_model": False}))
    build.build_site(root=root)
    page = (site / "tables" / "sage_table08_reliability.html").read_text()
    cells = re.findall(r'<td class="(agrees|differs)" title="paper ([^;]+);', page)
    assert cells == [("agrees", "1"), ("differs", "0.94"), ("differs", "0.988")]


def test_the_landing_page_names_the_judge_and_lists_what_is_missing(tree):
    root, _ = tree
    report = build.build_site(root=root)
    index = (root / "site" / "index.html").read_text()
    assert "Warning — " + escape(SMALL_MODEL_WARNING) in index
    assert "llamacpp:smollm2-135m" in index and "0123456789" in index
    assert "; 2 tables and figures carry no sidecar" in index  # sage_extra.csv and the figure
    assert 'href="tables/sage_table08_reliability.html"' in index
    assert 'href="figures.html#sage_fig03_genre_comparison"' in index and "Figure 3" in index
    assert 'href="figures/narr_explorer_toy.html"' in index
    # a catalogued table the tree lacks is named with the notebook that writes it
    assert "make nb-08 (narr_table01_path_lengths, narr_table04_effect_sizes, narr_math_vs_paper)" in report.missing
    assert "<code>make nb-08 (narr_table01_path_lengths" in index
    assert not any("sage_table08" in m for m in report.missing)  # present in the tree


def test_tables_without_a_sidecar_say_provenance_is_unknown_and_figures_are_copied(tree):
    root, _ = tree
    build.build_site(root=root)
    site = root / "site"
    extra = (site / "tables" / "sage_extra.html").read_text()
    assert "provenance unknown" in extra
    gallery = (site / "figures.html").read_text()
    assert 'src="figures/sage_fig03_genre_comparison.png"' in gallery
    assert 'href="notebooks/05_toy.html#cell-id=' in gallery  # the f-string name is found
    assert (site / "figures" / "sage_fig03_genre_comparison.png").stat().st_size > 0


def test_no_page_loads_anything_from_the_network(tree):
    root, _ = tree
    report = build.build_site(root=root)
    for page in report.pages:
        html = (root / "site" / page).read_text()
        assert not EXTERNAL.findall(html), page


def test_without_executed_notebooks_the_build_says_what_to_run(tmp_path):
    with pytest.raises(build.SiteInputMissing, match=r"no executed notebooks .* run `make all`"):
        build.build_site(root=tmp_path)


def test_an_unreadable_sidecar_names_the_file(tree):
    root, _ = tree
    (root / "results" / "tables" / "sage_extra.provenance.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"sage_extra\.provenance\.json: not valid JSON"):
        build.build_site(root=root)


def test_the_section_of_a_name_saved_through_an_fstring_is_found():
    nb = notebooks.Notebook("07_x", Path("07_x.ipynb"), nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("## Landscape"),
        nbformat.v4.new_code_cell('reporting.save_figure(fig, f"narr_fig_landscape_{name}")'),
        nbformat.v4.new_markdown_cell("## With a narrative"),
        nbformat.v4.new_code_cell('reporting.save_figure(fig, f"narr_fig_landscape_narrative_{name}")')]))
    assert notebooks.cell_saving(nb, "narr_fig_landscape_news") == 1
    assert notebooks.cell_saving(nb, "narr_fig_landscape_narrative_news") == 3  # the more specific name wins
    assert notebooks.section_anchor(nb, "narr_fig_landscape_narrative_news") == f"cell-id={nb.nb.cells[2].id}"
    assert notebooks.cell_saving(nb, "sage_table08_reliability") is None


def test_the_landing_page_links_the_teaching_path_rendered_from_docs(tree, tmp_path):
    root, _ = tree
    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    (project / "docs" / "teaching.md").write_text("# Teaching\n\n### 1. How strict is *converged*?\n", encoding="utf-8")
    build.build_site(root=root, project=project)
    assert 'href="teaching.html"' in (root / "site" / "index.html").read_text()
    page = (root / "site" / "teaching.html").read_text()
    assert "<h3>1. How strict is <em>converged</em>?</h3>" in page and 'href="index.html"' in page
    # without the file there is no page and no link
    (project / "docs" / "teaching.md").unlink()
    build.build_site(root=root, project=project)
    assert not (root / "site" / "teaching.html").exists()
    assert "teaching.html" not in (root / "site" / "index.html").read_text()
