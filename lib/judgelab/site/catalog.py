"""Which recomputed table is which paper table: the one declared map the site is built from.

Each :class:`PaperTable` names a CSV, the paper table it recomputes, the library function
(``module:function``), where the paper's values are cited (``module:CONSTANT``) and any pairing of
columns beyond ``paper_X`` beside ``X``. Figures need no map: their names carry the paper's number
(:func:`figure_label`). Strings only: the site never imports a study.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

SAGE = "SAGE (literary quality, layers L4-L6)"
NARR = "Narrative Trails (LLM judges of extracted narratives)"
BEHAVIOUR = "Judge behaviour (recognition, planted instructions, length, self-preference)"
STUDIES = {"sage": SAGE, "narr": NARR, "behaviour": BEHAVIOUR}


@dataclass(frozen=True)
class PaperTable:
    csv: str
    study: str
    label: str
    function: str
    paper_values: str
    pairs: dict[str, str] = field(default_factory=dict)
    """``paper column -> recomputed column`` where the default (``paper_X`` beside ``X``) does not hold."""

    @property
    def module(self) -> str:
        return self.function.split(":")[0]


_SAGE_PT, _SAGE_PV = "judgelab.sage.analysis.paper_tables", "judgelab.sage.analysis.paper_values"
_PATHS_PT, _PATHS_PV = "judgelab.narrative.paths.paper_tables", "judgelab.narrative.paths.paper_values"
_JUDGES_PT, _JUDGES_PV = "judgelab.narrative.judges.paper_tables", "judgelab.narrative.judges.paper_values"
_AN_PT = "judgelab.narrative.analyses.paper_tables"
_ROB = "judgelab.narrative.analyses.robustness"

PAPER_TABLES: tuple[PaperTable, ...] = (
    PaperTable("sage_table08_reliability", SAGE, "Table 8 — system reliability and quality assurance",
               f"{_SAGE_PT}:table08_reliability", f"{_SAGE_PV}:TABLE8"),
    PaperTable("sage_table09_mode_invariance", SAGE, "Table 9 — mode invariance, content vs title",
               f"{_SAGE_PT}:table09_from_rows", f"{_SAGE_PV}:TABLE9", {"paper_p_t": "p_t"}),
    PaperTable("sage_table10_cross_layer", SAGE, "Table 10 — cross-layer correlation",
               f"{_SAGE_PT}:table10_cross_layer", f"{_SAGE_PV}:TABLE10", {"paper_p": "p_pearson"}),
    PaperTable("sage_table11_genre_comparison", SAGE, "Table 11 — genre comparison (appendix)",
               f"{_SAGE_PT}:table11_genre_comparison", f"{_SAGE_PV}:TABLE11", {"paper_p": "p_anova"}),
    PaperTable("narr_table01_path_lengths", NARR, "Table 1 — path lengths by method",
               f"{_PATHS_PT}:table01_path_lengths", f"{_PATHS_PV}:PAPER_TABLE1"),
    PaperTable("narr_table02_correlations", NARR, "Table 2 — judge scores against coherence",
               f"{_JUDGES_PT}:table02", f"{_JUDGES_PV}:PAPER_TABLE2_PEARSON"),
    PaperTable("narr_table03_agreement", NARR, "Table 3 — agreement among judge agents",
               f"{_JUDGES_PT}:table03", f"{_JUDGES_PV}:PAPER_TABLE3_AGREEMENT"),
    PaperTable("narr_table04_effect_sizes", NARR, "Table 4 (mathematical rows) — max capacity vs random",
               f"{_PATHS_PT}:table04_math_effects", f"{_PATHS_PV}:PAPER_TABLE4_MATH"),
    PaperTable("narr_table04_llm_rows", NARR, "Table 4 (LLM rows) — max capacity vs random",
               f"{_JUDGES_PT}:table04_rows", f"{_JUDGES_PV}:PAPER_TABLE4_LLM"),
    PaperTable("narr_table04_math_and_llm", NARR, "Table 4 (all rows) — max capacity vs random",
               f"{_JUDGES_PT}:merge_table04", f"{_JUDGES_PV}:PAPER_TABLE4_LLM"),
    PaperTable("narr_table05_cost", NARR, "Table 5 — cost of each prompt mode",
               f"{_AN_PT}:table05", f"{_JUDGES_PV}:PAPER_TABLE5_COST"),
    PaperTable("narr_table06_predictive", NARR, "Table 6 — predicting judge scores",
               f"{_AN_PT}:table06", f"{_JUDGES_PV}:PAPER_TABLE6_R2"),
    PaperTable("narr_table07_feature_importance", NARR, "Table 7 — feature importance",
               f"{_AN_PT}:table07", f"{_JUDGES_PV}:PAPER_TABLE7_IMPORTANCE"),
    PaperTable("narr_table08_disagreement", NARR, "Table 8 — disagreement among agents",
               f"{_JUDGES_PT}:disagreement_with_paper", f"{_JUDGES_PV}:PAPER_TABLE8_DISAGREEMENT"),
    PaperTable("narr_math_vs_paper", NARR, "Sections 5.1-5.2 — coherence and length, averaged over seeds",
               f"{_PATHS_PT}:paper_comparison", f"{_PATHS_PV}:PAPER_SECTION52", {"paper_value": "value_mean"}),
    PaperTable("narr_critical_coherence", NARR, "Section 4.2 — critical coherence over UMAP seeds",
               "judgelab.narrative.landscape.comparison:critical_coherence_table",
               "judgelab.narrative.paths.paper_values:AUTHORS_CRITICAL_NEWS", {"paper_value": "critical_main_seed"}),
    PaperTable("narr_cost_performance", NARR, "Section 6 — cost against performance",
               f"{_AN_PT}:cost_performance_with_paper", "judgelab.narrative.analyses.cost:paper_cost_performance"),
    PaperTable("narr_ood_comparison", NARR, "Out-of-distribution narratives — scores by kind",
               f"{_AN_PT}:ood_comparison", f"{_JUDGES_PV}:PAPER_OOD"),
    PaperTable("narr_ood_tests", NARR, "Out-of-distribution narratives — tests",
               f"{_AN_PT}:ood_tests", f"{_JUDGES_PV}:PAPER_OOD_TEST"),
    PaperTable("narr_ood_correlations", NARR, "Out-of-distribution narratives — correlations",
               f"{_AN_PT}:ood_correlations", f"{_JUDGES_PV}:PAPER_OOD_CORRELATION"),
    PaperTable("narr_claims_robustness", NARR, "Robustness — each news-mathematics claim over the specification grid",
               f"{_ROB}:claims_robustness", f"{_PATHS_PV}:PAPER_TABLE4_MATH", {"paper_value": "main_estimate"}),
    PaperTable("narr_robustness_path_length", NARR, "Robustness — Table 1's path lengths under every choice",
               f"{_ROB}:path_length_note", f"{_PATHS_PV}:PAPER_TABLE1", {"paper_value": "main_estimate"}),
)

_FIGURE_NUMBER = re.compile(r"^(sage|narr)_fig(\d+)([a-z]*)(?:_|$)")


def by_csv() -> dict[str, PaperTable]:
    return {t.csv: t for t in PAPER_TABLES}


def study_of(name: str) -> str:
    """The study a table or figure belongs to, from its prefix (``sage_`` / ``narr_`` / ``behaviour_``)."""
    return STUDIES.get(name.split("_", 1)[0], "other")


def figure_label(name: str) -> str | None:
    """``"Figure 8 (ab)"`` for ``narr_fig08ab_...``; None for a figure the paper does not number."""
    m = _FIGURE_NUMBER.match(name)
    if not m:
        return None
    panel = f" ({m.group(3)})" if m.group(3) else ""
    return f"Figure {int(m.group(2))}{panel}"


def figure_sort_key(name: str) -> tuple:
    m = _FIGURE_NUMBER.match(name)
    return (name.split("_", 1)[0], 0 if m else 1, int(m.group(2)) if m else 0, name)
