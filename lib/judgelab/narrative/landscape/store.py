"""Interim files of notebooks 07 and 08 (CONTRIBUTING.md, "Interim files"):
``narr_documents_<collection>`` (through :mod:`judgelab.interim`) and the landscape's arrays,
``narr_landscape_<collection>.npz``, written here.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from judgelab import contracts, interim, paths
from judgelab.contracts import ContractError, InterimFileMissing


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


class MissingLandscapeArray(ContractError, KeyError):
    """The npz lacks a required array (a KeyError too, for callers that look arrays up by key)."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


#: Arrays every ``narr_landscape_<collection>.npz`` holds (n documents, k topics, s seeds).
LANDSCAPE_REQUIRED = ("coherence", "memberships", "umap2d", "critical", "seeds")
#: The path seeds' landscapes for notebook 08 (m path seeds): all of them or none.
LANDSCAPE_PATH_SEEDS = ("path_seeds", "coherence_by_seed", "labels_by_seed", "critical_path_seeds")


#: The sparse route's npz (``route`` = "sparse"): no n x n matrix; each path seed's thresholded
#: graph (undirected, CSR arrays concatenated over the m seeds) and its memberships (topics padded
#: with zero columns to the widest seed's; a zero column changes no coherence).
SPARSE_REQUIRED = ("memberships", "umap2d", "critical", "seeds", "embeddings", "dates", "route", "knn_k",
                   "path_seeds", "labels_by_seed", "critical_path_seeds", "memberships_by_seed",
                   "graph_indptr_by_seed", "graph_nnz_by_seed", "graph_indices", "graph_data")


def is_sparse(arrays: dict) -> bool:
    """Whether a landscape npz was written by the sparse nearest-neighbour route."""
    return "route" in arrays and str(np.asarray(arrays["route"])) == "sparse"


def check_sparse_landscape(arrays: dict, path: Path, when: str) -> None:
    """The sparse route's npz contract: :data:`SPARSE_REQUIRED`, shapes that agree with n =
    ``memberships.shape[0]`` and m path seeds, and CSR arrays that add up."""
    fix = contracts.fix_for("narr_landscape_*", when)
    missing = [k for k in SPARSE_REQUIRED if k not in arrays]
    if missing:
        raise MissingLandscapeArray(f"{path}: array(s) {', '.join(map(repr, missing))} missing; {fix}")
    a = {k: np.asarray(v) for k, v in arrays.items()}
    n, m = a["memberships"].shape[0], a["path_seeds"].shape[0]
    want = {"umap2d": (n, 2), "embeddings": (n, None), "dates": (n,), "labels_by_seed": (m, n),
            "critical_path_seeds": (m,), "memberships_by_seed": (m, n, None), "graph_indptr_by_seed": (m, n + 1),
            "graph_nnz_by_seed": (m,), "graph_indices": (int(a["graph_nnz_by_seed"].sum()),),
            "graph_data": (int(a["graph_nnz_by_seed"].sum()),)}
    problems = []
    for key, shape in want.items():
        got = a[key].shape
        if len(got) != len(shape) or any(w is not None and g != w for g, w in zip(got, shape)):
            dims = " x ".join("?" if w is None else str(w) for w in shape)
            problems.append(f"array {key!r} has shape {got}, expected {dims} (n={n} documents, m={m} path seeds)")
    if problems:
        raise ContractError(f"{path}: " + "; ".join(problems) + f"; {fix}")


def path_seed_graph(landscape: dict, k: int):
    """Path seed ``k``'s undirected thresholded graph of a sparse-route npz (scipy CSR, theta)."""
    from scipy import sparse

    n = landscape["memberships"].shape[0]
    start = int(np.sum(landscape["graph_nnz_by_seed"][:k]))
    stop = start + int(landscape["graph_nnz_by_seed"][k])
    return sparse.csr_matrix((landscape["graph_data"][start:stop], landscape["graph_indices"][start:stop],
                              landscape["graph_indptr_by_seed"][k]), shape=(n, n))


def check_landscape(arrays: dict, path: Path, when: str) -> None:
    """The npz contract (CONTRIBUTING.md, "Interim files"): required arrays, and shapes that agree.

    With n = ``coherence.shape[0]``: coherence n x n; memberships n x k; umap2d n x 2; critical a
    finite scalar; seeds 1-D; when present, labels and dates (n,), embeddings n x d,
    critical_by_seed (len(seeds),), jsd_base/main_seed/embedding_source scalars; and, all or none,
    path_seeds (m,), coherence_by_seed m x n x n, labels_by_seed m x n, critical_path_seeds (m,).
    Raises :class:`~judgelab.contracts.ContractError` naming the file, the array and the fix.
    The sparse route's npz is checked by :func:`check_sparse_landscape`.
    """
    if is_sparse(arrays):
        return check_sparse_landscape(arrays, path, when)
    fix = contracts.fix_for("narr_landscape_*", when)
    missing = [k for k in LANDSCAPE_REQUIRED if k not in arrays]
    group = [k for k in LANDSCAPE_PATH_SEEDS if k in arrays]
    if group and len(group) < len(LANDSCAPE_PATH_SEEDS):
        missing += [k for k in LANDSCAPE_PATH_SEEDS if k not in arrays]
    if missing:
        raise MissingLandscapeArray(f"{path}: array(s) {', '.join(map(repr, missing))} missing; {fix}")
    a = {k: np.asarray(v) for k, v in arrays.items()}
    n = a["coherence"].shape[0] if a["coherence"].ndim == 2 else -1
    m = a["path_seeds"].shape[0] if "path_seeds" in a and a["path_seeds"].ndim == 1 else -1
    want = {"coherence": (n, n), "memberships": (n, None), "umap2d": (n, 2), "critical": (), "seeds": (None,),
            "labels": (n,), "dates": (n,), "embeddings": (n, None), "critical_by_seed": (a["seeds"].size,),
            "jsd_base": (), "main_seed": (), "embedding_source": (),
            "path_seeds": (None,), "coherence_by_seed": (m, n, n), "labels_by_seed": (m, n),
            "critical_path_seeds": (m,)}
    problems = []
    for key, shape in want.items():
        if key not in a:
            continue
        got = a[key].shape
        if len(got) != len(shape) or any(w is not None and g != w for g, w in zip(got, shape)):
            dims = " x ".join("?" if w is None else str(w) for w in shape) or "a scalar"
            problems.append(f"array {key!r} has shape {got}, expected {dims} (n={n} documents)")
    if not problems and not np.isfinite(float(a["critical"])):
        problems.append(f"array 'critical' is {float(a['critical'])}, expected a finite number")
    if problems:
        raise ContractError(f"{path}: " + "; ".join(problems) + f"; {fix}")


def save_landscape(collection: str, **arrays) -> Path:
    """Check the arrays against the npz contract (:func:`check_landscape`), then write the npz
    (uncompressed: the matrix is float noise to a compressor)."""
    out = landscape_path(collection)
    check_landscape(arrays, out, when="write")
    if "coherence" in arrays:
        arrays["coherence"] = np.asarray(arrays["coherence"], dtype=np.float32)
    np.savez(out, **{k: np.asarray(v) for k, v in arrays.items()})
    return out


def load_landscape(collection: str) -> dict:
    """The npz as a dict of arrays (``critical`` as a Python float), checked against its contract."""
    path = landscape_path(collection)
    if not path.exists():
        raise InterimFileMissing(f"{path} missing; {contracts.fix_for('narr_landscape_*', 'read')}")
    with np.load(path, allow_pickle=False) as z:
        out = {k: z[k] for k in z.files}
    check_landscape(out, path, when="read")
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
    """Notebook 07's files for one built collection: the documents with the main seed's topic,
    and the npz (the main landscape, every seed's critical value, the path seeds' landscapes)."""
    col, main = built.collection, built.main
    sens = built.sensitivity[built.sensitivity["jsd_base"] == built.jsd_base].sort_values("seed")
    path_seeds = sorted(built.path_runs)
    runs = [built.path_runs[s] for s in path_seeds]
    docs = save_documents(col, main.landscape.labels)
    if built.route == "sparse":
        graphs = [r.graph.graph.tocsr() for r in runs]
        topics = max(r.landscape.memberships.shape[1] for r in runs)
        memb = np.zeros((len(runs), len(col), topics), dtype=np.float32)
        for i, r in enumerate(runs):
            memb[i, :, :r.landscape.memberships.shape[1]] = r.landscape.memberships
        npz = save_landscape(
            col.name, route="sparse", knn_k=int(main.graph.k), memberships=main.landscape.memberships,
            umap2d=built.umap2d, critical=main.critical, seeds=sens["seed"].to_numpy(),
            critical_by_seed=sens["critical"].to_numpy(), labels=main.landscape.labels, embeddings=col.embeddings,
            dates=col.dates, jsd_base=float(main.jsd_base), main_seed=built.main_seed,
            path_seeds=np.array(path_seeds), labels_by_seed=np.stack([r.landscape.labels for r in runs]),
            critical_path_seeds=np.array([r.critical for r in runs]), memberships_by_seed=memb,
            graph_indptr_by_seed=np.stack([g.indptr.astype(np.int64) for g in graphs]),
            graph_nnz_by_seed=np.array([g.nnz for g in graphs]),
            graph_indices=np.concatenate([g.indices for g in graphs]),
            graph_data=np.concatenate([g.data for g in graphs]).astype(np.float32),
            embedding_source=col.embedding_source)
        return [docs, npz]
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
