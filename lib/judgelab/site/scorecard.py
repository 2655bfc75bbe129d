"""The landing page's first screen: the claims scorecard of notebook 13 (its CSV only: the site
imports neither a study nor the claims package), one row per claim with its verdict and links to
the table page, the notebook section that saves the table and the library function behind it.
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from judgelab.site import notebooks

SCORECARD = "claims_scorecard"
#: The verdict's CSS class (colour-blind-safe colours in site.css; the verdict is also written out).
#: The site reads the CSV only, so the vocabulary (judgelab.claims.verdicts.VERDICTS) is spelled out
#: here; tests/test_site_claims.py checks the two agree.
VERDICT_CLASS = {"reproduced": "v-reproduced", "reproduced within the margin": "v-reproduced-within",
                 "not reproduced": "v-not-reproduced", "inconclusive": "v-inconclusive",
                 "not comparable": "v-not-comparable", "not testable by this judge": "v-not-testable",
                 "not run": "v-not-run"}


def _num(v, digits: int = 3) -> str:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return ""
    if math.isnan(x):
        return ""
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    return f"{x:.{digits}g}"


def _n(v) -> str:
    s = _num(v, 6)
    return s if s in ("", "∞") else f"{float(v):,.0f}"


def rows(tables_dir: Path, nbs: list[notebooks.Notebook], table_pages: set[str], function_href) -> list[dict] | None:
    """The scorecard's rows for the landing page, or None when notebook 13 has not run."""
    csv = Path(tables_dir) / f"{SCORECARD}.csv"
    if not csv.exists():
        return None
    try:
        card = pd.read_csv(csv)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ValueError(f"{csv}: cannot be read as CSV ({exc}); re-run notebook 13") from None
    missing = {"claim_id", "label", "verdict", "table", "function"} - set(card.columns)
    if missing:
        raise ValueError(f"{csv}: missing column(s) {', '.join(sorted(missing))}; re-run notebook 13")
    by_stem = {nb.stem[:2]: nb for nb in nbs}
    out = []
    for r in card.to_dict("records"):
        table = str(r["table"])
        nb = notebooks.find_writer(nbs, table) or by_stem.get(f"{int(r['notebook']):02d}" if pd.notna(r.get("notebook")) else "")
        anchor = notebooks.section_anchor(nb, table) if nb else None
        ci = (f"[{_num(r.get('ci_low'))}, {_num(r.get('ci_high'))}]" if _num(r.get("ci_low")) and _num(r.get("ci_high"))
              else "")
        out.append({
            "id": r["claim_id"], "label": r["label"], "study": r.get("study", ""), "verdict": r["verdict"],
            "cls": VERDICT_CLASS.get(r["verdict"], ""), "reason": r.get("reason") if isinstance(r.get("reason"), str) else "",
            "paper": _num(r.get("paper_value"), 4), "ours": _num(r.get("estimate"), 4), "ci": ci,
            "margin": _num(r.get("margin")), "width": _num(r.get("ci_width")), "n": _n(r.get("n")), "n80": _n(r.get("n_80_paper")),
            "power_unit": r.get("power_unit") if isinstance(r.get("power_unit"), str) else "",
            "location": r.get("location", ""), "wording": r.get("wording", ""),
            "table": table, "table_href": f"tables/{table}.html" if table in table_pages else None,
            "notebook": nb.stem if nb else None,
            "notebook_href": (nb.page + (f"#{anchor}" if anchor else "")) if nb else None,
            "function": r["function"], "function_href": function_href(str(r["function"])),
            "judge": r.get("judge") if isinstance(r.get("judge"), str) else "",
            "embedded": str(r.get("embedded_judge")).lower() == "true",
            "differences": r.get("design_differences") if isinstance(r.get("design_differences"), str) else "",
            "register": r.get("register") if isinstance(r.get("register"), str) else "",
            # the claims package's words (scorecard.UNDECIDABLE_AT_PAPER) where n_80 exceeds the paper's n
            "undecidable": "the paper's own design cannot decide this" in str(r.get("power_note") or ""),
            **robustness_cell(r),
        })
    order = {v: i for i, v in enumerate(DECIDED + UNDECIDED)}   # decided claims first, the register's order within
    return sorted(out, key=lambda r: order.get(r["verdict"], len(order)))


def robustness_cell(r: dict) -> dict:
    """Notebook 14's robustness of one scorecard row (the claims package's ``with_robustness``
    columns): the label, "k of n specifications reproduce it", the estimate's range; the note
    when there is none (empty strings for a scorecard written before the columns existed)."""
    label = r.get("robustness")
    if not isinstance(label, str) or not label:
        note = r.get("robustness_note")
        return {"robustness": "", "robustness_detail": "", "robustness_note": note if isinstance(note, str) else ""}
    n, k = _n(r.get("robustness_n_specifications")), _n(r.get("robustness_n_reproduced"))
    lo, hi = _num(r.get("robustness_estimate_min"), 3), _num(r.get("robustness_estimate_max"), 3)
    detail = f"{k} of {n} specifications reproduce it" + (f"; estimate {lo} to {hi}" if lo and hi else "")
    return {"robustness": label, "robustness_detail": detail, "robustness_note": ""}


def robustness_note(rows_: list[dict]) -> str:
    """The page's line when no claim has a robustness label (notebook 14 not run, or of another
    profile): the scorecard's note; empty when some claim has one, or the CSV has no such column."""
    if any(r.get("robustness") for r in rows_):
        return ""
    return next((r["robustness_note"] for r in rows_ if r.get("robustness_note")), "")


#: the first screen's order and words (the site reads the CSV only, so the vocabulary is spelled
#: out here as in VERDICT_CLASS; tests/test_site_claims.py checks it against judgelab.claims)
DECIDED = ("reproduced", "reproduced within the margin", "not reproduced")
UNDECIDED = ("inconclusive", "not comparable", "not testable by this judge", "not run")
WHY_NOT = {"inconclusive": "the interval is too wide to tell, or there is none",
           "not comparable": "this run's design differs from the paper's in what the claim depends on",
           "not testable by this judge": "a claim about an LLM's judgements, made here by a judge that cannot test it",
           "not run": "its table or row is not in this run"}


def first_screen(rows_: list[dict]) -> dict:
    """What the scorecard's first screen says above the table: the judges behind the claims'
    tables (``embedded``: the small model answered), how many claims this run decides, and why
    the others are not decided, each reason counted; the register read."""
    judges = sorted({r["judge"] for r in rows_ if ":" in r.get("judge", "")})
    embedded = sorted({r["judge"] for r in rows_ if r.get("embedded") and ":" in r.get("judge", "")})
    why = [(v, WHY_NOT[v], n) for v in UNDECIDED if (n := sum(r["verdict"] == v for r in rows_))]
    diffs: dict[str, int] = {}
    for r in rows_:
        if r["verdict"] == "not comparable":
            for d in filter(None, (r.get("differences") or "").split("; ")):
                diffs[d] = diffs.get(d, 0) + 1
    return {"judges": judges, "embedded": embedded, "total": len(rows_),
            "decided": sum(r["verdict"] in DECIDED for r in rows_), "why_not": why,
            "differences": sorted(diffs.items(), key=lambda kv: -kv[1])[:3],
            "register": next((r["register"] for r in rows_ if r.get("register")), "")}


def counts(rows_: list[dict]) -> list[tuple[str, str, int]]:
    """(verdict, css class, number of claims) in the verdicts' order, those present only."""
    return [(v, c, n) for v, c in VERDICT_CLASS.items() if (n := sum(r["verdict"] == v for r in rows_))]


def chance(rows_: list[dict], confidence: float = 0.95) -> str:
    """(1 - confidence) x the decided verdicts, in words (the site may not import claims)."""
    decided = sum(r["verdict"] in ("reproduced", "reproduced within the margin", "not reproduced") for r in rows_)
    if not rows_:
        return ""
    return (f"about {(1 - confidence) * decided:.1f} of the {decided} decided "
            f"({(1 - confidence) * len(rows_):.1f} were all {len(rows_)} claims decided)")
