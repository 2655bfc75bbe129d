"""What notebook 10 reads from notebooks 07-09, and the follow-up table built from it.

:func:`load`: the paths of notebook 08, the judge scores of 09 and, for every collection with
paths, notebook 07's documents and landscape. A missing file raises the loader's own error, which
names the notebook to run.

:func:`narrative_table`: one row per judged narrative and prompt mode; every follow-up analysis
reads it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgelab import interim
from judgelab.narrative.analyses.correlations import add_complexity, temporal_span
from judgelab.narrative.judges.scores import judged_paths, narrative_scores
from judgelab.narrative.landscape import store


@dataclass(frozen=True)
class AnalysisInputs:
    paths: pd.DataFrame                 # narr_paths (08)
    scores: pd.DataFrame                # narr_judge_scores (09)
    docs: dict[str, pd.DataFrame]       # collection -> narr_documents_<c> (07)
    lands: dict[str, dict]              # collection -> narr_landscape_<c> arrays (07)

    @property
    def collections(self) -> list[str]:
        return sorted(self.docs)

    @property
    def titles(self) -> dict[str, list[str]]:
        """Document titles in document order, per collection (what the judges are shown)."""
        return {c: d.sort_values("doc")["title"].tolist() for c, d in self.docs.items()}

    @property
    def coherence(self) -> dict[str, np.ndarray]:
        return {c: land["coherence"] for c, land in self.lands.items()}

    @property
    def umap2d(self) -> dict[str, np.ndarray]:
        return {c: land["umap2d"] for c, land in self.lands.items()}

    def summary(self) -> str:
        agents = self.scores.groupby("collection")["agent"].nunique().to_dict()
        return (f"paths: {self.paths.groupby(['collection', 'method']).size().to_dict()}\n"
                f"judge rows (09): {len(self.scores)}, agents per collection: {agents}")


def load() -> AnalysisInputs:
    """Notebooks 07-09's outputs in the current output root."""
    paths = interim.read("narr_paths")
    present = sorted(paths["collection"].unique())
    return AnalysisInputs(paths=paths, scores=interim.read("narr_judge_scores"),
                          docs={c: store.load_documents(c) for c in present},
                          lands={c: store.load_landscape(c) for c in present})


def narrative_table(paths: pd.DataFrame, scores: pd.DataFrame,
                    coords_by_collection: dict[str, np.ndarray]) -> pd.DataFrame:
    """Notebook 08's judged paths x modes with the K agents' score summary of notebook 09, path
    efficiency, the complexity score and the temporal span in the collection's unit
    (:mod:`judgelab.narrative.analyses.correlations`), in the order of ``paths``."""
    return temporal_span(judged_paths(narrative_scores(scores), add_complexity(paths, coords_by_collection)))
