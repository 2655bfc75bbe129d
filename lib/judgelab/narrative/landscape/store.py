"""Interim files of notebooks 07 and 08 (CONTRIBUTING.md, "Interim files").

- ``narr_documents_<collection>.parquet``: doc, title, date, text, cluster (main seed's topic).
- ``narr_landscape_<collection>.npz``: coherence (n x n float32), memberships, umap2d, critical
  (scalar), seeds (UMAP seeds of the sensitivity study) — plus, for notebook 08: labels,
  embeddings (for the spatial-extremes stratum), dates (days), jsd_base, critical_by_seed, and
  ``path_seeds`` with ``coherence_by_seed`` / ``labels_by_seed`` / ``critical_path_seeds`` (the
  landscapes over which notebook 08 averages).

The documents table goes through :mod:`judgelab.interim` (name ``narr_documents_<collection>``);
the npz is written here. Notebook 08's ``narr_paths`` tables are written by
:mod:`judgelab.narrative.paths.extraction`.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from judgelab import interim, paths


def documents_name(collection: str) -> str:
    return f"narr_documents_{collection}"


def documents_path(collection: str) -> Path:
    return interim.path_of(documents_name(collection))


def landscape_path(collection: str) -> Path:
    return paths.interim_dir() / f"narr_landscape_{collection}.npz"


def save_documents(col, labels: np.ndarray) -> Path:
    """The collection's documents with their topic (``cluster``)."""
    df = col.docs[["doc", "title", "date", "text"]].copy()
    df["cluster"] = np.asarray(labels, dtype=int)
    return interim.write(df, documents_name(col.name))


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
    return interim.read(documents_name(collection))


def landscape_collections() -> list[str]:
    """Collections for which notebook 07 wrote a landscape in this output root."""
    return sorted(p.stem.removeprefix("narr_landscape_") for p in paths.interim_dir().glob("narr_landscape_*.npz"))


def save_collection_landscapes(built) -> list[Path]:
    """Notebook 07's files for one collection (a
    :class:`~judgelab.narrative.landscape.build.CollectionLandscapes`): the documents with the main
    seed's topic, and the npz with the main landscape, the critical coherence of every seed in the
    main base, and the path seeds' matrices and topics for notebook 08."""
    col, main = built.collection, built.main
    sens = built.sensitivity[built.sensitivity["jsd_base"] == built.jsd_base].sort_values("seed")
    path_seeds = sorted(built.path_runs)
    runs = [built.path_runs[s] for s in path_seeds]
    docs = save_documents(col, main.landscape.labels)
    npz = save_landscape(
        col.name, coherence=main.coherence, memberships=main.landscape.memberships, umap2d=built.umap2d,
        critical=main.critical, seeds=sens["seed"].to_numpy(), critical_by_seed=sens["critical"].to_numpy(),
        labels=main.landscape.labels, embeddings=col.embeddings, dates=col.dates,
        jsd_base=float(main.jsd_base), main_seed=built.main_seed, path_seeds=np.array(path_seeds),
        coherence_by_seed=np.stack([r.coherence for r in runs]),
        labels_by_seed=np.stack([r.landscape.labels for r in runs]),
        critical_path_seeds=np.array([r.critical for r in runs]),
        embedding_source=col.embedding_source,
    )
    return [docs, npz]


def save_study(study) -> list[Path]:
    """:func:`save_collection_landscapes` for every collection of a
    :class:`~judgelab.narrative.landscape.build.LandscapeStudy`; returns the files written."""
    return [p for built in study.collections.values() for p in save_collection_landscapes(built)]
