"""Notebook 09's tables with the paper's values (:mod:`judgelab.narrative.judges.paper_values`)
in ``paper_<stat>`` columns right after ours."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from judgelab.narrative.judges import paper_values as pv
from judgelab.narrative.judges.validity import llm_metric_name


def with_paper_columns(
    df: pd.DataFrame,
    paper: Mapping[tuple, Mapping[str, float]],
    keys: Sequence[str] = ("collection", "mode"),
) -> pd.DataFrame:
    """Insert ``paper_<stat>`` after each ``<stat>`` the paper reports (NaN where it reports none,
    e.g. the CoT column of Table 3 or a collection it did not study)."""
    stats = sorted({s for v in paper.values() for s in v})
    out = df.copy()
    for stat in stats:
        vals = [paper.get(tuple(row), {}).get(stat, np.nan) for row in out[list(keys)].itertuples(index=False)]
        pos = out.columns.get_loc(stat) + 1 if stat in out.columns else len(out.columns)
        out.insert(pos, f"paper_{stat}", vals)
    return out


def table02(correlations: pd.DataFrame) -> pd.DataFrame:
    """Table 2 (Pearson of mean LLM score with min / average coherence) with the paper's r."""
    return with_paper_columns(correlations, pv.PAPER_TABLE2_PEARSON)


def table03(agreement: pd.DataFrame) -> pd.DataFrame:
    """Table 3 (inter-agent reliability per mode) with the paper's values."""
    return with_paper_columns(agreement, pv.PAPER_TABLE3_AGREEMENT)


def disagreement_with_paper(disagreement: pd.DataFrame) -> pd.DataFrame:
    """Figure 8(g) / Table 8 data (mean agent SD and CoV per mode) with the paper's values."""
    return with_paper_columns(disagreement, pv.PAPER_TABLE8_DISAGREEMENT)


PAPER_TABLE4_SOURCE = "paper Table 4"


def _paper_table4(kind: str) -> dict[tuple[str, str], dict[str, float]]:
    """The paper's Table 4 values keyed by (collection, row name): LLM rows from
    :mod:`paper_values`, mathematical rows from notebook 08's :mod:`math_paper_values`."""
    if kind == "llm":
        return {(c, llm_metric_name(m)): v for (c, m), v in pv.PAPER_TABLE4_LLM.items()}
    from judgelab.narrative.paths.paper_values import PAPER_TABLE4_MATH

    return dict(PAPER_TABLE4_MATH)


def table04_rows(effects: pd.DataFrame, kind: str = "llm") -> pd.DataFrame:
    """Rows of Table 4 of one ``kind`` ("llm" or "math") with ``paper_d`` / ``paper_auc`` beside
    ``d`` / ``auc`` and a ``paper_source`` column, as in notebook 08's table."""
    rows = effects[effects["kind"] == kind].copy()
    out = with_paper_columns(rows, _paper_table4(kind), keys=("collection", "metric"))
    out["paper_source"] = PAPER_TABLE4_SOURCE
    return out


MATH_TABLE04 = "narr_table04_effect_sizes"
"""Notebook 08's Table 4 (the mathematical rows); notebook 09 reads it and never rewrites it."""


def read_math_table04(directory=None) -> pd.DataFrame | None:
    """Notebook 08's ``narr_table04_effect_sizes.csv`` from the tables folder (or ``directory``),
    None when notebook 08 has not written it."""
    from pathlib import Path

    from judgelab import paths

    path = Path(directory or paths.tables_dir()) / f"{MATH_TABLE04}.csv"
    return pd.read_csv(path) if path.exists() else None


def merge_table04(existing: pd.DataFrame | None, effects: pd.DataFrame) -> pd.DataFrame:
    """Table 4 as a whole: notebook 08's mathematical rows (``existing``, without any "LLM " rows
    so that these appear once; None: the maths rows over the judged narratives) followed by the
    LLM rows of ``effects``. Columns are the union, aligned by name."""
    llm = table04_rows(effects, "llm")
    if existing is None or existing.empty:
        return pd.concat([table04_rows(effects, "math"), llm], ignore_index=True, sort=False)
    keep = existing[~existing["metric"].astype(str).str.startswith("LLM ")].copy()
    keep["kind"] = keep["kind"].fillna("math") if "kind" in keep.columns else "math"
    return pd.concat([keep, llm], ignore_index=True, sort=False)
