"""Which interim files each notebook writes and reads: the declared table of the notebook graph.

Names are those of :mod:`judgelab.contracts` (``*`` stands for a collection or a layer).
:mod:`judgelab.pipeline` derives each notebook's upstream from it, :mod:`judgelab.contracts` the
notebook to re-run; a module of its own so that the contracts need not import the pipeline.
Standard library only: the Makefile reads it before any venv exists.
"""
from __future__ import annotations

from fnmatch import fnmatch

#: Interim files each notebook writes.
WRITES: dict[str, list[str]] = {
    "01": ["corpus", "sage_l123_features"],
    "02": ["sage_rows_L4", "sage_summary_L4", "sage_rows_anonymous_L4"],
    "03": ["sage_rows_L5", "sage_summary_L5", "sage_rows_anonymous_L5"],
    "04": ["sage_rows_L6", "sage_summary_L6", "sage_rows_anonymous_L6"],
    "05": [], "06": [],
    "07": ["narr_documents_*", "narr_landscape_*"],
    "08": ["narr_paths", "narr_paths_seeds"],
    "09": ["narr_judge_scores"],
    "10": [], "11": [], "12": [], "13": [], "14": [],
}
_SAGE_EVALUATIONS = [f"sage_{kind}_{layer}" for kind in ("rows", "summary") for layer in ("L4", "L5", "L6")]
#: Interim files each notebook reads (a notebook reads only what earlier notebooks wrote).
READS: dict[str, list[str]] = {
    "01": [], "02": ["corpus"], "03": ["corpus"], "04": ["corpus"],
    "05": [*_SAGE_EVALUATIONS, *(f"sage_rows_anonymous_{layer}" for layer in ("L4", "L5", "L6"))],
    "06": ["corpus", "sage_l123_features", *_SAGE_EVALUATIONS],
    "07": [],
    "08": ["narr_landscape_*", "narr_documents_*"],
    "09": ["narr_paths"],
    "10": ["narr_paths", "narr_judge_scores", "narr_documents_*", "narr_landscape_*"],
    "11": [],
    # 12 reads the planted layer's SAGE summaries only (profiles.toml: planted_layer = "L4" in every profile)
    "12": ["corpus", "sage_summary_L4", "narr_paths", "narr_judge_scores"],
    "13": [],
    # 14 refits the landscapes of the specification grid from 07's documents and main fit, and
    # re-tests SAGE's findings (02-04's rows) under each unit and test
    "14": ["narr_landscape_*", "narr_documents_*", *_SAGE_EVALUATIONS],
}
#: Notebooks that read other notebooks' tables (``results/tables/*.csv``) rather than interim
#: files: the claims scorecard (13) reads the paper tables of 05-10 and notebook 14's robustness
#: table (shown beside each verdict), so it runs after them.
#: Their upstream notebooks are these plus the writers of what they read.
AFTER_TABLES: dict[str, list[str]] = {
    "13": ["05", "06", "07", "08", "09", "10", "14"],
}
#: Notebooks that read the outputs of both studies' chains (12 the interim files of 01-04 and
#: 08-09, 13 the tables of 05-10, 14 the interim files of 02-04 and 07). In the test suite they join no chain (joining would merge the
#: two chains onto one worker) and run late, once their upstream notebooks have a status.
LATE_NOTEBOOKS: frozenset[str] = frozenset({"12", "14", *AFTER_TABLES})


def writers_of(name: str) -> list[str]:
    """The notebooks that write the interim file ``name`` (a name or a ``*`` pattern)."""
    return sorted(nb for nb, names in WRITES.items()
                  if any(fnmatch(name, w) or fnmatch(w, name) for w in names))

