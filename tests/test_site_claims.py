"""The site's landing page opens with the claims scorecard (notebook 13's CSV): every claim with its
verdict in words and colour class, and links to the table page, the notebook section that saves
the table and the library function behind it."""
from __future__ import annotations

import inspect
import json
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from judgelab.site import build


def _tree(tmp_path, with_scorecard=True):
    root = tmp_path / "out"
    executed = root / "results" / "executed"
    executed.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# 06 — Toy genre"), nbformat.v4.new_code_cell('PROFILE = "smoke"'),
                nbformat.v4.new_markdown_cell("## Table 11"),
                nbformat.v4.new_code_cell('reporting.save_table(table11, "sage_table11_genre_comparison")')]
    nb.metadata["papermill"] = {"parameters": {"PROFILE": "smoke"}, "end_time": "2026-12-01T12:00:00"}
    nbformat.write(nb, executed / "06_toy.ipynb")
    tables = root / "results" / "tables"
    tables.mkdir(parents=True)
    pd.DataFrame({"layer": ["L4"], "mean_llm": [2.5]}).to_csv(tables / "sage_table11_genre_comparison.csv", index=False)
    if with_scorecard:
        pd.DataFrame([
            {"claim_id": "sage-mean-llm-L4", "study": "sage", "label": "SAGE: mean LLM, L4",
             "verdict": "not testable by this judge", "reason": "embedded", "paper_value": 2.55, "estimate": 2.5,
             "power_note": "the paper's own design cannot decide this at its margin (n_80_paper > n_paper)",
             "ci_low": 2.1, "ci_high": 2.9, "ci_width": 0.8, "n": 4, "n_80_paper": 41,
             "power_unit": "LLM observations", "table": "sage_table11_genre_comparison", "notebook": 6,
             "function": "judgelab.sage.analysis.paper_tables:table11_genre_comparison",
             "location": "SAGE, Table 11", "wording": "Table 11 means"},
            {"claim_id": "narr-math-d-min-news", "study": "narrative", "label": "NT math: d min coherence, news",
             "verdict": "reproduced", "reason": "inside", "paper_value": 1.591, "estimate": 1.5, "ci_low": 1.3,
             "ci_high": 1.8, "ci_width": 0.5, "margin": 0.3, "n": 80, "n_80_paper": float("nan"),
             "power_unit": "", "table": "narr_table04_effect_sizes", "notebook": 8,
             "function": "judgelab.narrative.paths.paper_tables:table04_math_effects",
             "location": "NT, Table 4", "wording": "d"},
        ]).to_csv(tables / "claims_scorecard.csv", index=False)
        (tables / "claims_scorecard.provenance.json").write_text(json.dumps({"judge": "none"}))
    return root, nb


def test_the_landing_page_opens_with_the_scorecard_and_links_each_claim(tmp_path):
    root, nb = _tree(tmp_path)
    build.build_site(root=root)
    index = (root / "site" / "index.html").read_text()
    # the scorecard comes before everything else on the page
    assert index.index('id="scorecard"') < index.index("Who produced these numbers") < index.index("Contents")
    # decided claims first: the reproduced news claim above the untestable SAGE one
    assert index.index('id="claim-narr-math-d-min-news"') < index.index('id="claim-sage-mean-llm-L4"')
    assert "This run decides 1 of 2 claims" in index and "1 <em>not testable by this judge</em>" in index
    row = index[index.index('id="claim-sage-mean-llm-L4"'):]
    row = row[:row.index("</tr>")]
    assert 'class="v-not-testable"' in row and ">not testable by this judge<" in row
    assert "the paper&#39;s own design cannot decide this" in row or "the paper's own design cannot decide this" in row
    assert 'href="tables/sage_table11_genre_comparison.html"' in row
    assert f'href="notebooks/06_toy.html#cell-id={nb.cells[2].id}"' in row     # the section saving the table
    from judgelab.sage.analysis import paper_tables
    line = inspect.getsourcelines(paper_tables.table11_genre_comparison)[1]
    assert f'href="src/judgelab.sage.analysis.paper_tables.html#line-{line}"' in row
    assert (root / "site" / "src" / "judgelab.sage.analysis.paper_tables.html").exists()
    assert "[2.1, 2.9]" in row and "41" in row and "LLM observations" in row
    # a claim whose table this run lacks is named, not linked
    other = index[index.index('id="claim-narr-math-d-min-news"'):]
    other = other[:other.index("</tr>")]
    assert 'class="v-reproduced"' in other and 'href="tables/narr_table04' not in other
    assert "<td>[1.3, 1.8]</td><td>0.3</td>" in other                          # the margin beside the interval
    assert ">narr_table04_effect_sizes<" in other
    assert "not testable by this judge</span> 1" in index and "reproduced</span> 1" in index
    # every verdict of the vocabulary is defined on the page, and the verdicts expected by chance stated
    for word in ("Reproduced", "not reproduced", "inconclusive", "not comparable", "not testable by this judge",
                 "not run"):
        assert f"<em>{word}</em>" in index, word
    assert "by chance alone, at 95% per interval: about 0.1 of the 1 decided (0.1 were all 2 claims decided)." in index


def test_an_embedded_judge_is_the_first_thing_the_scorecard_says(tmp_path):
    root, _ = _tree(tmp_path)
    csv = root / "results" / "tables" / "claims_scorecard.csv"
    card = pd.read_csv(csv).assign(judge=["llamacpp:smollm2-135m", "none"], embedded_judge=[True, False])
    card.to_csv(csv, index=False)
    build.build_site(root=root)
    index = (root / "site" / "index.html").read_text()
    section = index[index.index('id="scorecard"'):]
    warning = section.index("this run's judge is the embedded small model (llamacpp:smollm2-135m)")
    assert warning < section.index("This run decides") < section.index("<table")


def test_the_site_knows_every_verdict_of_the_vocabulary():
    from judgelab.claims.verdicts import VERDICTS
    from judgelab.site import scorecard

    assert tuple(scorecard.VERDICT_CLASS) == VERDICTS
    from judgelab.claims.verdicts import DECIDED
    assert scorecard.DECIDED == DECIDED and set(scorecard.DECIDED + scorecard.UNDECIDED) == set(VERDICTS)
    css = Path(build.__file__).with_name("site.css").read_text()
    assert all(f".{cls} " in css for cls in scorecard.VERDICT_CLASS.values())


def test_without_notebook_13_the_landing_page_has_no_scorecard(tmp_path):
    root, _ = _tree(tmp_path, with_scorecard=False)
    build.build_site(root=root)
    assert 'id="scorecard"' not in (root / "site" / "index.html").read_text()


def test_a_scorecard_without_its_columns_names_the_file(tmp_path):
    root, _ = _tree(tmp_path)
    pd.DataFrame({"claim_id": ["x"]}).to_csv(root / "results" / "tables" / "claims_scorecard.csv", index=False)
    with pytest.raises(ValueError, match=r"claims_scorecard\.csv: missing column\(s\) function, label"):
        build.build_site(root=root)
