"""Interim files of notebooks 07 and 08 (CONTRIBUTING.md, "Interim files").

- ``narr_documents_<collection>.parquet``: doc, title, date, text, cluster (main seed's topic).
- ``narr_landscape_<collection>.npz``: coherence (n x n float32), memberships, umap2d, critical
  (scalar), seeds (UMAP seeds of the sensitivity study) — plus, for notebook 08: labels,
  embeddings (for the spatial-extremes stratum), dates (days), jsd_base, critical_by_seed, and
  ``path_seeds`` with ``coherence_by_seed`` / ``labels_by_seed`` / ``critical_path_seeds`` (the
  landscapes over which notebook 08 averages).
- ``narr_paths.parquet`` (08, main seed; read by 09 and 10) and ``narr_paths_seeds.parquet``
  (08, every path seed, same columns; for the seed-averaged comparison with the paper).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .. import paths


def documents_path(collection: str) -> Path:
    return paths.interim_dir() / f"narr_documents_{collection}.parquet"


def landscape_path(collection: str) -> Path:
    return paths.interim_dir() / f"narr_landscape_{collection}.npz"


def save_documents(col, labels: np.ndarray) -> Path:
    """The collection's documents with their topic (``cluster``)."""
    df = col.docs[["doc", "title", "date", "text"]].copy()
    df["cluster"] = np.asarray(labels, dtype=int)
    out = documents_path(col.name)
    df.to_parquet(out, index=False)
    return out


def save_landscape(collection: str, **arrays) -> Path:
    """Write the npz (uncompressed: the matrix is float noise to a compressor)."""
    for key in ("coherence", "memberships", "umap2d", "critical", "seeds"):
        if key not in arrays:
            raise KeyError(f"narr_landscape npz needs {key!r}")
    arrays["coherence"] = np.asarray(arrays["coherence"], dtype=np.float32)
    out = landscape_path(collection)
    np.savez(out, **{k: np.asarray(v) for k, v in arrays.items()})
    return out


def load_landscape(collection: str) -> dict:
    """The npz as a dict of arrays (scalars as Python floats)."""
    path = landscape_path(collection)
    if not path.exists():
        raise FileNotFoundError(f"{path} missing: run notebook 07 first (same PROFILE and output root)")
    with np.load(path, allow_pickle=False) as z:
        out = {k: z[k] for k in z.files}
    out["critical"] = float(out["critical"])
    return out


def load_documents(collection: str) -> pd.DataFrame:
    path = documents_path(collection)
    if not path.exists():
        raise FileNotFoundError(f"{path} missing: run notebook 07 first (same PROFILE and output root)")
    return pd.read_parquet(path)


def landscape_collections() -> list[str]:
    """Collections for which notebook 07 wrote a landscape in this output root."""
    return sorted(p.stem.removeprefix("narr_landscape_") for p in paths.interim_dir().glob("narr_landscape_*.npz"))
