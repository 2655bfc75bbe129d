"""Values the SAGE paper reports, as cited constants (never used as inputs to a computation).

Source: Wang & Zhou 2026, arXiv:2605.07102 (SAGE: hierarchical, ontology-grounded LLM
evaluation of literary quality). Each constant names the table or section it is read from. They
appear in outputs only in ``paper_value`` / ``paper_<stat>`` columns beside the recomputed value.

``qualifier`` records how the paper states the number: ``"="`` (a point value), ``">"`` / ``"<"``
(a bound, e.g. "peer agreement > 94%").
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PaperValue:
    """One number the paper reports, with where it comes from."""

    value: float
    source: str
    qualifier: str = "="

    def __str__(self) -> str:  # e.g. "> 0.94 (Table 8)"
        q = "" if self.qualifier == "=" else f"{self.qualifier} "
        return f"{q}{self.value:g} ({self.source})"


LAYER_NAMES = {"L4": "Cultural (L4)", "L5": "Emotional (L5)", "L6": "Existential (L6)"}

# --- Table 8: system reliability and quality assurance metrics (Results, "System Performance") ---
TABLE8 = {
    "total_evaluations": PaperValue(600, "Table 8"),
    "success_rate": PaperValue(1.0, "Table 8"),
    "parsing_success": PaperValue(1.0, "Table 8"),
    "convergence_rate": PaperValue(0.988, "Table 8"),          # |R5-R4| < 0.3
    "peer_agreement": PaperValue(0.94, "Table 8", ">"),       # share |evaluator - validator| < 0.5
    "mean_irr_difference": PaperValue(0.3, "Table 8", "<"),   # mean |evaluator - validator|
    "mode_invariance_max_abs_diff": PaperValue(0.05, "Table 8"),
}

# --- Table 9: mode invariance, content-limit vs title-limit (difference = title - content) ---
TABLE9 = {
    "L4": {"content_mean": PaperValue(3.63, "Table 9"), "title_mean": PaperValue(3.65, "Table 9"),
           "difference": PaperValue(0.02, "Table 9")},
    "L5": {"content_mean": PaperValue(3.98, "Table 9"), "title_mean": PaperValue(3.93, "Table 9"),
           "difference": PaperValue(-0.05, "Table 9")},
    "L6": {"content_mean": PaperValue(3.60, "Table 9"), "title_mean": PaperValue(3.59, "Table 9"),
           "difference": PaperValue(-0.01, "Table 9")},
    "overall": {"content_mean": PaperValue(3.74, "Table 9"), "title_mean": PaperValue(3.72, "Table 9"),
                "difference": PaperValue(-0.01, "Table 9")},
}
# "Paired samples t-tests confirm no significant mode effects (all p > 0.05)" (Results, before Table 9)
TABLE9_P_PAIRED_T = PaperValue(0.05, "Results, Table 9 text", ">")

# --- Table 10: cross-layer correlation (N = 200 story-mode observations; all p < 0.001) ---
TABLE10 = {
    ("L4", "L5"): {"pearson_r": PaperValue(0.649, "Table 10"), "spearman_rho": PaperValue(0.514, "Table 10"),
                   "p": PaperValue(0.001, "Table 10", "<")},
    ("L4", "L6"): {"pearson_r": PaperValue(0.683, "Table 10"), "spearman_rho": PaperValue(0.598, "Table 10"),
                   "p": PaperValue(0.001, "Table 10", "<")},
    ("L5", "L6"): {"pearson_r": PaperValue(0.680, "Table 10"), "spearman_rho": PaperValue(0.621, "Table 10"),
                   "p": PaperValue(0.001, "Table 10", "<")},
}
TABLE10_N = PaperValue(200, "Table 10 notes")

# --- Table 11 (Appendix): genre comparison; mean (SD); differences; p; Cohen's d in the notes ---
TABLE11 = {
    "L4": {"mean_canonical": 3.96, "sd_canonical": 0.41, "mean_pulp": 3.83, "sd_pulp": 0.36,
           "mean_llm": 2.55, "sd_llm": 0.62, "diff_canonical_pulp": 0.13, "diff_canonical_llm": 1.41},
    "L5": {"mean_canonical": 4.15, "sd_canonical": 0.31, "mean_pulp": 4.04, "sd_pulp": 0.24,
           "mean_llm": 3.36, "sd_llm": 0.59, "diff_canonical_pulp": 0.11, "diff_canonical_llm": 0.79},
    "L6": {"mean_canonical": 3.95, "sd_canonical": 0.57, "mean_pulp": 3.68, "sd_pulp": 0.56,
           "mean_llm": 2.59, "sd_llm": 0.57, "diff_canonical_pulp": 0.27, "diff_canonical_llm": 1.36},
    "average": {"mean_canonical": 4.02, "mean_pulp": 3.85, "mean_llm": 2.83,
                "diff_canonical_pulp": 0.17, "diff_canonical_llm": 1.19},
}
TABLE11 = {layer: {k: PaperValue(v, "Table 11") for k, v in stats.items()} for layer, stats in TABLE11.items()}
# p for every row of Table 11 is "< 0.001***"; the text gives p < 0.01 for canonical vs pulp in L4.
TABLE11_P = PaperValue(0.001, "Table 11", "<")
# Cohen's d, canonical vs LLM (Table 11 notes; Figure 4; Results "Layer-Specific Results").
# Recomputing from Table 11's means and SDs shows the paper used sqrt((s1^2 + s2^2) / 2).
COHENS_D_CANONICAL_LLM = {
    "L4": PaperValue(2.68, "Table 11 notes / Figure 4"),
    "L5": PaperValue(1.68, "Table 11 notes / Figure 4"),
    "L6": PaperValue(2.40, "Table 11 notes / Figure 4"),
}
# Relative gaps (Results, "Layer-Specific Results" and "Genre Discrimination").
RELATIVE_GAP_CANONICAL_LLM = {
    "L4": PaperValue(0.356, "Results, Layer 4"),
    "L5": PaperValue(0.191, "Results, Layer 5"),
    "L6": PaperValue(0.345, "Results, Layer 6"),
    "average": PaperValue(0.296, "Results, Genre Discrimination"),
}
RELATIVE_GAP_CANONICAL_PULP = {
    "L5": PaperValue(0.027, "Results, Layer 5"),
    "L6": PaperValue(0.068, "Results, Layer 6"),
    "average": PaperValue(0.044, "Results, Genre Discrimination"),
}
# Layer means over all 200 story-mode evaluations (Results, "Layer-Specific Results", "Cross-Layer").
LAYER_MEAN = {
    "L4": PaperValue(3.64, "Results, Layer 4"),
    "L5": PaperValue(3.96, "Results, Layer 5"),
    "L6": PaperValue(3.59, "Results, Cross-Layer Correlation"),
}
# Figure 4: the "large effect" line.
LARGE_EFFECT_D = PaperValue(0.8, "Figure 4 / Statistical Analysis (Cohen's thresholds)")
# Corpus design (Dataset; Table 5): stories per category and LLM quality tiers.
CORPUS_DESIGN = {
    "canonical": PaperValue(50, "Table 5"), "pulp": PaperValue(30, "Table 5"), "llm": PaperValue(20, "Table 5"),
    "tier_high": PaperValue(10, "Dataset, LLM-Generated"), "tier_average": PaperValue(5, "Dataset, LLM-Generated"),
    "tier_low": PaperValue(5, "Dataset, LLM-Generated"),
}
# Protocol thresholds (Table 7; Table 12).
CONVERGENCE_THRESHOLD = PaperValue(0.3, "Table 7 / Table 12")
AGREEMENT_THRESHOLD = PaperValue(0.5, "Table 7 / Table 12")


def paper(table: dict, *keys) -> float | None:
    """The numeric value at ``table[k1][k2]...``, or None when the paper reports none there."""
    node = table
    for k in keys:
        if not isinstance(node, dict) or k not in node:
            return None
        node = node[k]
    return node.value if isinstance(node, PaperValue) else None
