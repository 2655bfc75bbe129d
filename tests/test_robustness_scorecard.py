"""Notebook 14's robustness beside each verdict: the scorecard's columns (joined on claim_id from
``narr_claims_robustness.csv``) and the site's column, from a planted table; absent with a note
when notebook 14 has not run or ran in another profile."""
from __future__ import annotations

import json

import nbformat
import pandas as pd
import pytest

from judgelab import provenance
from judgelab.claims import scorecard
from judgelab.site import build

D, LEN, SAGE = "narr-math-d-min-news", "narr-math-len-maxcap-news", "sage-mean-llm-L4"


def _card() -> pd.DataFrame:
    base = {"study": "narrative", "reason": "", "paper_value": 1.0, "estimate": 1.0, "ci_low": 0.9, "ci_high": 1.1,
            "ci_width": 0.2, "margin": 0.3, "n": 60, "n_80_paper": float("nan"), "power_unit": "",
            "table": "narr_table04_effect_sizes", "notebook": 8, "location": "NT", "wording": "w",
            "function": "judgelab.narrative.paths.comparison:method_effects"}
    return pd.DataFrame([{**base, "claim_id": SAGE, "label": "SAGE: mean LLM", "study": "sage", "verdict": "not run"},
                         {**base, "claim_id": D, "label": "NT: d min coherence", "verdict": "reproduced"},
                         {**base, "claim_id": LEN, "label": "NT: max-capacity length", "verdict": "not reproduced"}])


def _plant(tables, profile="demo", sidecar=True):
    """A robustness table in another order than the card, with a claim the card lacks."""
    t = pd.DataFrame([
        {"claim_id": LEN, "robustness": "fragile", "n_specifications": 8, "n_reproduced": 3, "share_reproduced": 0.375,
         "estimate_min": 5.31, "estimate_max": 6.72, "label": "x", "main_estimate": 5.9},
        {"claim_id": "narr-math-elsewhere", "robustness": "robust", "n_specifications": 8, "n_reproduced": 8,
         "share_reproduced": 1.0, "estimate_min": 0.0, "estimate_max": 1.0, "label": "x", "main_estimate": 0.5},
        {"claim_id": D, "robustness": "robust", "n_specifications": 8, "n_reproduced": 8, "share_reproduced": 1.0,
         "estimate_min": 1.42, "estimate_max": 1.97, "label": "x", "main_estimate": 1.7},
    ])
    csv = tables / "narr_claims_robustness.csv"
    t.to_csv(csv, index=False)
    if sidecar:
        provenance.write_sidecar(csv, "table", {"profile": profile})
    return csv


def _site(root, card) -> str:
    executed = root / "results" / "executed"
    executed.mkdir(parents=True, exist_ok=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# 13 — Toy scorecard"), nbformat.v4.new_code_cell('PROFILE = "demo"')]
    nb.metadata["papermill"] = {"parameters": {"PROFILE": "demo"}, "end_time": "2026-12-05T12:00:00"}
    nbformat.write(nb, executed / "13_toy.ipynb")
    tables = root / "results" / "tables"
    card.to_csv(tables / "claims_scorecard.csv", index=False)
    (tables / "claims_scorecard.provenance.json").write_text(json.dumps({"judge": "none"}))
    build.build_site(root=root)
    return (root / "site" / "index.html").read_text()


def _row(index: str, claim_id: str) -> str:
    row = index[index.index(f'id="claim-{claim_id}"'):]
    return row[:row.index("</tr>")]


def test_a_planted_robustness_table_labels_each_claim_it_covers_on_the_scorecard_and_the_site(tmp_path):
    tables = tmp_path / "out" / "results" / "tables"
    tables.mkdir(parents=True)
    _plant(tables)
    card = scorecard.with_robustness(_card(), tables, "demo")
    by = card.set_index("claim_id")
    assert list(card["claim_id"]) == [SAGE, D, LEN] and len(card) == 3       # the register's rows, no more
    assert by.loc[LEN, "robustness"] == "fragile" and by.loc[D, "robustness"] == "robust"
    assert by.loc[LEN, "robustness_n_reproduced"] == 3 and by.loc[LEN, "robustness_n_specifications"] == 8
    assert (by.loc[LEN, "robustness_estimate_min"], by.loc[LEN, "robustness_estimate_max"]) == (5.31, 6.72)
    assert by.loc[D, "robustness_share_reproduced"] == 1.0
    assert pd.isna(by.loc[SAGE, "robustness"]) and by.loc[SAGE, "robustness_note"] == scorecard.ROBUSTNESS_NOT_IN_GRID
    assert by.loc[D, "robustness_note"] == "" and by.loc[D, "verdict"] == "reproduced"   # the verdict untouched
    # joined twice (notebook 13 re-run on its own output): the same columns, not suffixed copies
    assert list(scorecard.with_robustness(card, tables, "demo").columns) == list(card.columns)

    index = _site(tmp_path / "out", card)
    assert "<th>across the analysis choices</th>" in index
    row = _row(index, LEN)
    assert ">not reproduced<" in row and "fragile" in row and "3 of 8 specifications reproduce it; estimate 5.31 to 6.72" in row
    assert "robust" in _row(index, D) and "8 of 8 specifications reproduce it" in _row(index, D)
    assert 'class="robustness"></td>' in _row(index, SAGE)
    assert "Across the analysis choices: notebook 14" not in index


@pytest.mark.parametrize("case", ["not run", "other profile", "no sidecar"])
def test_without_notebook_14_in_this_profile_the_scorecard_has_no_label_and_says_why(tmp_path, case):
    tables = tmp_path / "out" / "results" / "tables"
    tables.mkdir(parents=True)
    if case != "not run":
        _plant(tables, profile="paper", sidecar=case == "other profile")
    card = scorecard.with_robustness(_card(), tables, "demo")
    assert card["robustness"].isna().all()
    note = card["robustness_note"].iloc[0]
    assert (card["robustness_note"] == note).all()
    expected = {"not run": "notebook 14 (robustness) has not run",
                "other profile": "narr_claims_robustness.csv is of profile paper, this scorecard of demo",
                "no sidecar": "is of profile unknown (no provenance sidecar)"}[case]
    assert expected in note
    if case != "not run":   # the page shows whichever note the scorecard holds: one site build suffices
        return
    index = _site(tmp_path / "out", card)
    assert f"Across the analysis choices: {note}" in index.replace("&#39;", "'")
    assert "specifications reproduce it" not in index


def test_a_robustness_table_without_its_columns_names_the_file(tmp_path):
    csv = _plant(tmp_path)
    pd.read_csv(csv).drop(columns=["n_reproduced"]).to_csv(csv, index=False)
    provenance.write_sidecar(csv, "table", {"profile": "demo"})
    with pytest.raises(ValueError, match=r"narr_claims_robustness\.csv: missing column\(s\) n_reproduced; re-run notebook 14"):
        scorecard.with_robustness(_card(), tmp_path, "demo")
