"""Values the narrative paper reports for the mathematical side, as cited constants.

Source: Keith 2025, *Electronics* 14(13):2735, doi:10.3390/electronics14132735
(section 5.1, Table 1; section 5.2; Table 4).
The critical coherence, which the paper does not report, is cited from the authors' news notebook
in :mod:`judgelab.narrative.landscape.paper_values`. They are never inputs to a computation; they
appear only in ``paper_*`` columns.
"""
from __future__ import annotations

PAPER_TABLE1 = {  # (collection, method) -> mean, std, min, max of path length (documents)
    ("news", "maxcap"): {"mean": 4.70, "std": 2.03, "min": 2, "max": 12},
    ("news", "random"): {"mean": 3.97, "std": 1.80, "min": 2, "max": 8},
    ("vispub", "maxcap"): {"mean": 5.91, "std": 4.15, "min": 2, "max": 20},
    ("vispub", "random"): {"mean": 5.64, "std": 3.56, "min": 2, "max": 16},
}
PAPER_TABLE1_SOURCE = "paper Table 1"

PAPER_TABLE4_MATH = {  # (collection, metric label) -> Cohen's d, AUC-ROC
    ("news", "Min. coherence"): {"d": 1.591, "auc": 0.852},
    ("news", "Avg. coherence"): {"d": 1.998, "auc": 0.891},
    ("vispub", "Min. coherence"): {"d": 1.353, "auc": 0.834},
    ("vispub", "Avg. coherence"): {"d": 1.481, "auc": 0.840},
}
PAPER_TABLE4_SOURCE = "paper Table 4"

PAPER_SECTION52 = {  # statistic -> (collection -> value)
    "mean min coherence, max-capacity": {"news": 0.705, "vispub": 0.648},
    "mean min coherence, random": {"news": 0.470, "vispub": 0.433},
    "length difference max-capacity - random": {"news": 0.73, "vispub": 0.27},
}
PAPER_SECTION52_SOURCE = "paper sections 5.1-5.2"
