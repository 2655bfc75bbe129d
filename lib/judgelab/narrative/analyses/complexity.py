"""Path complexity and the judges (paper 002, section 5.8.4, Figure 9d).

Choices the paper leaves open, stated here:

- Path efficiency is the straightness index (Benhamou 2004, *J. Theor. Biol.* 229:209–220) of the
  path drawn on the landscape's 2-D UMAP map: straight-line distance source→target divided by the
  summed step lengths (1 = no detour). The paper does not define it.
- The complexity score is the mean of the z-scored coherence variance, weak-link ratio and
  (1 − efficiency), within a collection (z with population SD, ddof = 0; a column with zero SD
  contributes 0).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from judgelab.narrative.analyses.correlations import correlations

COMPLEXITY_METRICS: tuple[str, ...] = ("coherence_var", "weak_link_ratio", "path_efficiency", "complexity_score")


def path_efficiency(path: Sequence[int], coords: np.ndarray) -> float:
    """Straightness index of a path on a map: ‖x_target − x_source‖ / Σ‖x_{i+1} − x_i‖.

    1 for a straight path, towards 0 for a detour (Benhamou 2004). A one-document path, or a path
    whose steps have zero total length, has efficiency 1.
    """
    pts = np.asarray(coords)[np.asarray(path, dtype=int)]
    if len(pts) < 2:
        return 1.0
    steps = np.linalg.norm(np.diff(pts, axis=0), axis=1).sum()
    if steps == 0:
        return 1.0
    return float(np.linalg.norm(pts[-1] - pts[0]) / steps)


def _z(s: pd.Series) -> pd.Series:
    sd = s.std(ddof=0)
    return (s - s.mean()) / sd if sd and np.isfinite(sd) else s * 0.0


def add_complexity(paths: pd.DataFrame, coords_by_collection: dict[str, np.ndarray]) -> pd.DataFrame:
    """Add ``path_efficiency`` (from each collection's 2-D map; NaN for a collection without one)
    and ``complexity_score`` = mean of z(coherence_var), z(weak_link_ratio) and
    z(1 − path_efficiency) within a collection."""
    out = paths.copy()
    out["path_efficiency"] = [
        path_efficiency(p, coords_by_collection[c]) if c in coords_by_collection else np.nan
        for c, p in zip(out["collection"], out["path"])
    ]
    parts = pd.DataFrame({
        "a": out.groupby("collection")["coherence_var"].transform(_z),
        "b": out.groupby("collection")["weak_link_ratio"].transform(_z),
        "c": (1 - out["path_efficiency"]).groupby(out["collection"]).transform(_z),
    })
    out["complexity_score"] = parts.mean(axis=1, skipna=True)
    return out


def complexity_analysis(long: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Pearson r of coherence variance, weak-link ratio, path efficiency and the complexity score
    with the mean LLM score, per collection and mode, with the pair-bootstrap interval and
    adjusted p of :func:`judgelab.narrative.analyses.correlations.correlations` (its columns)."""
    present = [m for m in COMPLEXITY_METRICS if m in long.columns]
    return correlations(long, present, ["score_mean"], family="path complexity (section 5.8.4)", seed=seed)
