"""News and VisPub in ONE embedding space, with the landscape and coherence fitted on their union
(the Narrative paper, section 5.7: what the out-of-distribution narratives are drawn from).

Both collections are embedded with the same backend (by default the bundled MiniLM: the authors'
OpenAI vectors exist for news only, and mixing them would put the collections in different
spaces); the landscape and coherence are those of notebook 07.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd


@dataclass
class JointCollection:
    """News and VisPub documents in one embedding space: ``docs`` (collection, doc, title, date,
    joint index = row), the shared ``embeddings`` and the joint landscape's dense coherence."""

    docs: pd.DataFrame
    embeddings: np.ndarray
    coherence: np.ndarray
    n_topics: int
    embedding_source: str

    @property
    def collection_of(self) -> np.ndarray:
        return self.docs["collection"].to_numpy()


def union_documents(docs_by_collection: dict[str, pd.DataFrame], names: Sequence[str] = ("news", "vispub"),
                    subset: dict[str, int | None] | None = None) -> dict[str, pd.DataFrame]:
    """The document frames of ``names``: notebook 07's where given, else the data mirror's;
    ``subset`` maps a name to about how many documents to keep, spread evenly over time."""
    from judgelab.narrative.landscape.collections import DocumentCollection, load_collection

    out = {}
    for name in names:
        if name in docs_by_collection:
            col = DocumentCollection(name, docs_by_collection[name].sort_values("doc").reset_index(drop=True))
        else:
            col = load_collection(name)
        out[name] = col.every_kth((subset or {}).get(name)).docs
    return out


def embed_union(docs_by_collection: dict[str, pd.DataFrame], backend=None, *, n_neighbors: int = 16,
                min_cluster_size: int = 5, seed: int = 42, jsd_base: float = math.e) -> JointCollection:
    """Embed the union of ``docs_by_collection`` (name -> doc, title, date, text) with ONE backend
    (module doc), fit the joint landscape and compute its dense coherence matrix."""
    from judgelab.narrative.landscape.coherence import coherence_matrix
    from judgelab.embeddings import MiniLMEmbeddings
    from judgelab.narrative.landscape.projection import fit_landscape

    backend = backend or MiniLMEmbeddings()
    parts = []
    for name, d in docs_by_collection.items():
        parts.append(pd.DataFrame({"collection": name, "doc": d["doc"].to_numpy(), "title": d["title"].to_numpy(),
                                   "date": pd.to_datetime(d["date"]).to_numpy(), "text": d["text"].to_numpy()}))
    docs = pd.concat(parts, ignore_index=True)
    docs["joint"] = np.arange(len(docs))
    emb = np.asarray(backend.embed(docs["text"].tolist()), dtype=np.float32)
    land = fit_landscape(emb, n_neighbors=n_neighbors, min_cluster_size=min_cluster_size, seed=seed)
    coh = coherence_matrix(emb, land.memberships, jsd_base)
    return JointCollection(docs.drop(columns=["text"]), emb, coh, land.n_topics, getattr(backend, "name", "?"))


def build_joint_collection(docs_by_collection: dict[str, pd.DataFrame], names: Sequence[str] = ("news", "vispub"),
                           *, subset: dict[str, int | None] | None = None, backend=None, n_neighbors: int = 16,
                           min_cluster_size: int = 5, seed: int = 42, jsd_base: float = math.e) -> JointCollection:
    """The joint collection of ``names`` (:func:`union_documents`), embedded and fitted by
    :func:`embed_union`."""
    union = union_documents(docs_by_collection, names, subset=subset)
    return embed_union(union, backend, n_neighbors=n_neighbors, min_cluster_size=min_cluster_size,
                       seed=seed, jsd_base=jsd_base)
