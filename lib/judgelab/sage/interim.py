"""Reading the SAGE interim files that notebooks 02-04 write (schemas in CONTRIBUTING.md)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from .. import paths
from .scores import LAYERS, ROW_COLUMNS, SUMMARY_COLUMNS, SageStatsError, require_columns


def _load(kind: str, layers, directory: Path | None) -> tuple[pd.DataFrame, list[str]]:
    directory = Path(directory) if directory else paths.interim_dir()
    frames, missing = [], []
    for layer in layers:
        path = directory / f"sage_{kind}_{layer}.parquet"
        if path.exists():
            frames.append(pd.read_parquet(path))
        else:
            missing.append(layer)
    if not frames:
        raise SageStatsError(
            f"no sage_{kind}_<layer>.parquet in {directory} for layers {', '.join(layers)}: run notebooks "
            "02-04 first (python -m judgelab.pipeline run 02 03 04 --profile smoke)")
    df = pd.concat(frames, ignore_index=True)
    require_columns(df, ROW_COLUMNS if kind == "rows" else SUMMARY_COLUMNS, f"sage_{kind} files")
    return df, missing


def load_rows(layers=LAYERS, directory: Path | None = None) -> tuple[pd.DataFrame, list[str]]:
    """All ``sage_rows_<layer>.parquet`` that exist, concatenated; and the layers without a file."""
    rows, missing = _load("rows", layers, directory)
    rows["round"] = rows["round"].astype(int)
    rows["tier"] = rows["tier"].fillna("")
    return rows, missing


def load_summaries(layers=LAYERS, directory: Path | None = None) -> tuple[pd.DataFrame, list[str]]:
    """All ``sage_summary_<layer>.parquet`` that exist, concatenated; and the layers without a file."""
    summary, missing = _load("summary", layers, directory)
    summary["tier"] = summary["tier"].fillna("")
    return summary, missing


def coverage(rows: pd.DataFrame) -> pd.DataFrame:
    """Stories per layer x mode x category (0 where none): what the statistics below rest on."""
    from .scores import CATEGORIES, MODES

    got = rows.groupby(["layer", "mode", "category"])["story_id"].nunique()
    idx = pd.MultiIndex.from_product([LAYERS, MODES, CATEGORIES], names=["layer", "mode", "category"])
    wide = got.reindex(idx, fill_value=0).unstack("category")[list(CATEGORIES)]
    wide.columns.name = None
    return wide.reset_index()


def coverage_messages(rows: pd.DataFrame, missing_layers=()) -> list[str]:
    """Plain-language warnings about what the rows cannot support (missing layers, categories, modes)."""
    from .scores import CATEGORIES, MODES

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
