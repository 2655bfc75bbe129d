"""A recomputed table beside the paper's values: which columns pair up, and which cells differ.

Convention (CONTRIBUTING.md, "Tables and figures"): a paper's value sits in a column ``paper_X``
beside the recomputed ``X`` (``paper_value`` beside ``value``); a bound is written as
``paper_X_qualifier`` (``">"`` / ``"<"``, e.g. "peer agreement > 94%"). Columns that are not
numbers (``paper_source``, qualifiers) describe, they are not compared.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

REL_TOL = 0.10
"""A recomputed value 'agrees' within 10% of the paper's value ..."""
ABS_TOL = 0.02
"""... or within 0.02 of it (for values near zero, where 10% is no room at all)."""

_DESCRIPTIVE = ("_source", "_qualifier", "_note")


@dataclass(frozen=True)
class Pair:
    paper: str
    ours: str
    qualifier: str | None = None


def paper_pairs(columns, overrides: dict[str, str] | None = None) -> list[Pair]:
    """Each numeric paper column with its recomputed partner (``overrides``, else ``X``)."""
    columns, overrides = list(columns), overrides or {}
    out = []
    for col in columns:
        if not col.startswith("paper_") or col.endswith(_DESCRIPTIVE):
            continue
        ours = overrides.get(col, col.removeprefix("paper_"))
        if ours not in columns:
            continue
        qualifier = next((q for q in (f"{col}_qualifier", "paper_qualifier" if col == "paper_value" else "")
                          if q in columns), None)
        out.append(Pair(col, ours, qualifier))
    return out


def _number(v) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def verdict(ours, paper, qualifier: str | None = None) -> str:
    """``"agrees"``, ``"differs"`` or ``"missing"`` (either side not a number). A bound (``>``,
    ``<``) agrees when the recomputed value lies on its side; a point value within
    :data:`REL_TOL` (relative) or :data:`ABS_TOL` (absolute)."""
    a, b = _number(ours), _number(paper)
    if a is None or b is None:
        return "missing"
    q = (qualifier or "=").strip() if isinstance(qualifier, str) else "="
    if q in (">", ">="):
        return "agrees" if a > b or (q == ">=" and a == b) else "differs"
    if q in ("<", "<="):
        return "agrees" if a < b or (q == "<=" and a == b) else "differs"
    return "agrees" if abs(a - b) <= max(ABS_TOL, REL_TOL * abs(b)) else "differs"


def cell_verdicts(df: pd.DataFrame, pairs: list[Pair]) -> pd.DataFrame:
    """``df``'s shape: each paired recomputed cell's verdict, "" elsewhere."""
    out = pd.DataFrame("", index=df.index, columns=df.columns)
    for p in pairs:
        quals = df[p.qualifier] if p.qualifier else pd.Series(None, index=df.index)
        out[p.ours] = [verdict(a, b, q) for a, b, q in zip(df[p.ours], df[p.paper], quals)]
    return out


def summary(verdicts: pd.DataFrame) -> dict[str, int]:
    """How many compared cells agree, differ, or lack a number on one side."""
    flat = pd.Series(verdicts.to_numpy().ravel())
    return {k: int((flat == k).sum()) for k in ("agrees", "differs", "missing", "embedded")}
