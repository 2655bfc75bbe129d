"""Reading the SAGE interim files that notebooks 02-04 write (schemas in CONTRIBUTING.md).

Every file is read through :func:`judgelab.interim.read` (the one reader of interim tables), by
name: ``sage_rows_<layer>`` and ``sage_summary_<layer>``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from judgelab import interim, paths
from judgelab.sage.analysis.scores import (
    CATEGORIES, LAYERS, MODES, ROW_COLUMNS, SUMMARY_COLUMNS, SageStatsError, provenance_of, require_columns,
)


def _load(kind: str, layers, directory: Path | None) -> tuple[pd.DataFrame, list[str]]:
    frames, missing = [], []
    for layer in layers:
        name = f"sage_{kind}_{layer}"
        if interim.exists(name, directory):
            frames.append(interim.read(name, directory))
        else:
            missing.append(layer)
    if not frames:
        raise SageStatsError(
            f"no sage_{kind}_<layer>.parquet in {directory or paths.interim_dir()} for layers {', '.join(layers)}: "
            "run notebooks 02-04 first (python -m judgelab.pipeline run 02 03 04 --profile smoke)")
    df = pd.concat(frames, ignore_index=True)
    require_columns(df, ROW_COLUMNS if kind == "rows" else SUMMARY_COLUMNS, f"sage_{kind} files")
    return df, missing


def load_rows(layers=LAYERS, directory: Path | None = None) -> tuple[pd.DataFrame, list[str]]:
    """All ``sage_rows_<layer>.parquet`` that exist, concatenated; and the layers without a file."""
    rows, missing = _load("rows", layers, directory)
    return _typed_rows(rows), missing


def _typed_rows(rows: pd.DataFrame) -> pd.DataFrame:
    rows["round"] = rows["round"].astype(int)
    rows["tier"] = rows["tier"].fillna("")
    return rows


def load_anonymous_rows(layers=LAYERS, directory: Path | None = None) -> pd.DataFrame:
    """The title-mode rows of the anonymous-author sensitivity run (``sage_rows_anonymous_<layer>``,
    notebooks 02-04) of every layer that has them; an empty frame when none has (the run was off)."""
    frames = [interim.read(f"sage_rows_anonymous_{layer}", directory) for layer in layers
              if interim.exists(f"sage_rows_anonymous_{layer}", directory)]
    if not frames:
        return pd.DataFrame(columns=ROW_COLUMNS)
    return _typed_rows(pd.concat(frames, ignore_index=True))


def load_summaries(layers=LAYERS, directory: Path | None = None) -> tuple[pd.DataFrame, list[str]]:
    """All ``sage_summary_<layer>.parquet`` that exist, concatenated; and the layers without a file."""
    summary, missing = _load("summary", layers, directory)
    summary["tier"] = summary["tier"].fillna("")
    return summary, missing


def coverage(rows: pd.DataFrame) -> pd.DataFrame:
    """Stories per layer x mode x category (0 where none): what the statistics below rest on."""
    got = rows.groupby(["layer", "mode", "category"])["story_id"].nunique()
    idx = pd.MultiIndex.from_product([LAYERS, MODES, CATEGORIES], names=["layer", "mode", "category"])
    wide = got.reindex(idx, fill_value=0).unstack("category")[list(CATEGORIES)]
    wide.columns.name = None
    return wide.reset_index()


def coverage_messages(rows: pd.DataFrame, missing_layers=()) -> list[str]:
    """Plain-language warnings about what the rows cannot support (missing layers, categories, modes)."""
    msgs = []
    if missing_layers:
        msgs.append(f"No rows for layer(s) {', '.join(missing_layers)}: their statistics are reported as missing.")
    for col, levels in (("category", CATEGORIES), ("mode", MODES)):
        absent = [lev for lev in levels if lev not in set(rows[col])]
        if absent:
            msgs.append(f"No {col} {', '.join(absent)} in the rows: comparisons involving "
                        f"{'it' if len(absent) == 1 else 'them'} are not computable and say so.")
    n = rows.groupby("category")["story_id"].nunique()
    small = [f"{c} ({int(k)})" for c, k in n.items() if k < 2]
    if small:
        msgs.append("Fewer than 2 stories in " + ", ".join(small)
                    + ": SDs, t-tests and effect sizes need at least 2 per group.")
    return msgs


@dataclass
class Evaluations:
    """The L4–L6 evaluations that notebooks 05 and 06 analyse: the tidy ``rows`` of every layer
    found, the per-evaluation ``summary`` (None when those files are missing: the rows alone still
    give everything but repairs and the summary-based success rate), the layers without rows, and
    plain-language ``notes`` on what the rows cannot support."""

    rows: pd.DataFrame
    summary: pd.DataFrame | None
    missing_layers: list[str]
    notes: list[str] = field(default_factory=list)

    @property
    def backend(self) -> str | None:
        return provenance_of(self.rows)[0]

    @property
    def model(self) -> str | None:
        return provenance_of(self.rows)[1]

    def coverage(self) -> pd.DataFrame:
        """:func:`coverage` of the rows."""
        return coverage(self.rows)

    def description(self) -> str:
        """One line: rows, stories and the profile(s) the rows were made in."""
        made_in = ", ".join(sorted(self.rows["profile"].astype(str).unique()))
        return f"{len(self.rows):,} rows; {self.rows['story_id'].nunique()} stories; rows made in profile(s) {made_in}"

    def notes_markdown(self) -> str:
        """The notes as a Markdown list (empty string when there is nothing to say)."""
        return "\n".join(f"- **Note:** {msg}" for msg in self.notes)


def load_evaluations(layers=LAYERS, directory: Path | None = None) -> Evaluations:
    """Rows and summaries of ``layers`` (:func:`load_rows`, :func:`load_summaries`) with the notes
    a reader needs: missing summary files first, then :func:`coverage_messages`. Raises
    :class:`SageStatsError` only when no layer has rows at all."""
    layers = list(layers)
    rows, missing = load_rows(layers, directory)
    notes = []
    try:
        summary, _ = load_summaries(layers, directory)
    except SageStatsError as exc:  # the rows alone still give everything but repairs
        summary = None
        notes.append(f"summary files missing ({exc}); repairs and success rate come from the rows only")
    return Evaluations(rows, summary, missing, notes + coverage_messages(rows, missing))
