"""Out-of-distribution and perturbed narratives: how they are made (the Narrative paper, section 5.7, and
two families beyond it).

The paper's two adversarial kinds mix news and VisPub on the joint index of
:class:`judgelab.narrative.analyses.joint_collection.JointCollection`: **alternating** (the
collection switches at every step) and **random mixed**. A random mixed narrative must contain
both collections: with VisPub seven times larger than news, many would otherwise be plain
in-distribution VisPub samples. Beyond the paper, two perturbations of in-distribution paths:
**shuffled** and **off-topic** (one interior document replaced). Lengths are drawn from the
in-distribution path lengths; every generator is deterministic given its seed.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pandas as pd

from judgelab.narrative.paths.metrics import path_metrics

OOD_KINDS: tuple[str, ...] = ("alternating", "random_mixed")

PERTURBATION_KINDS: tuple[str, ...] = ("shuffled", "off_topic")

IN_DISTRIBUTION_KINDS: tuple[str, ...] = ("maxcap", "random")

MIXED_COLLECTION = "news+vispub"
"""The ``collection`` label of a narrative drawn from the joint collection."""

NARRATIVE_COLUMNS = ["kind", "narrative_id", "collection", "base_pair_id", "path", "collections", "length", "seed"]


def _lengths(rng: np.random.Generator, lengths: Sequence[int], n: int, minimum: int) -> np.ndarray:
    pool = np.asarray(lengths, dtype=int)
    if pool.size == 0:
        raise ValueError("need at least one in-distribution path length to draw from")
    return np.maximum(rng.choice(pool, size=n, replace=True), minimum)


def alternating_narratives(collection_of: Sequence[str], n: int, lengths: Sequence[int], seed: int,
                           min_length: int = 2) -> pd.DataFrame:
    """``n`` narratives over the joint index (``collection_of[i]``: joint document i's
    collection) cycling through the collections from a random start, documents drawn without
    replacement. Columns: :data:`NARRATIVE_COLUMNS` (``path`` holds joint indices)."""
    rng = np.random.default_rng(seed)
    coll = np.asarray(collection_of)
    names = sorted(set(coll.tolist()))
    if len(names) < 2:
        raise ValueError("alternating narratives need at least two collections")
    pools = {c: np.flatnonzero(coll == c) for c in names}
    rows = []
    for i, L in enumerate(_lengths(rng, lengths, n, min_length)):
        start = int(rng.integers(len(names)))
        seq = [names[(start + j) % len(names)] for j in range(L)]
        draws = {c: list(rng.choice(pools[c], size=seq.count(c), replace=False)) for c in names}
        path = [int(draws[c].pop(0)) for c in seq]
        rows.append({"kind": "alternating", "narrative_id": i, "collection": MIXED_COLLECTION,
                     "base_pair_id": -1, "path": path, "collections": seq, "length": int(L), "seed": seed})
    return pd.DataFrame(rows, columns=NARRATIVE_COLUMNS)


def random_mixed_narratives(collection_of: Sequence[str], n: int, lengths: Sequence[int], seed: int,
                            min_length: int = 2, max_tries: int = 10_000) -> pd.DataFrame:
    """``n`` narratives of documents drawn uniformly without replacement from the joint
    collection, redrawn until every collection is present."""
    rng = np.random.default_rng(seed)
    coll = np.asarray(collection_of)
    names = set(coll.tolist())
    min_length = max(min_length, len(names))
    rows = []
    for i, L in enumerate(_lengths(rng, lengths, n, min_length)):
        for _ in range(max_tries):
            path = rng.choice(len(coll), size=int(L), replace=False)
            if set(coll[path].tolist()) == names:
                break
        else:
            raise RuntimeError(f"no random mixed narrative of length {L} with every collection in {max_tries} draws")
        rows.append({"kind": "random_mixed", "narrative_id": i, "collection": MIXED_COLLECTION,
                     "base_pair_id": -1, "path": [int(p) for p in path], "collections": coll[path].tolist(),
                     "length": int(L), "seed": seed})
    return pd.DataFrame(rows, columns=NARRATIVE_COLUMNS)


def shuffled_narratives(paths: pd.DataFrame, seed: int, n: int | None = None) -> pd.DataFrame:
    """Each path of ``paths`` with 3 or more documents, permuted at random until its order
    differs from the original (the first ``n`` eligible rows)."""
    rng = np.random.default_rng(seed)
    rows = []
    for _, r in paths.iterrows():
        orig = [int(x) for x in r["path"]]
        if len(orig) < 3:
            continue
        perm = list(orig)
        while perm == orig:
            perm = [orig[j] for j in rng.permutation(len(orig))]
        rows.append({"kind": "shuffled", "narrative_id": len(rows), "collection": r["collection"],
                     "base_pair_id": r["pair_id"], "path": perm, "collections": [r["collection"]] * len(perm),
                     "length": len(perm), "seed": seed})
        if n is not None and len(rows) >= n:
            break
    return pd.DataFrame(rows, columns=NARRATIVE_COLUMNS)


def off_topic_document(path: Sequence[int], position: int, coherence: np.ndarray, rng: np.random.Generator,
                       quantile: float = 0.1) -> int:
    """A document not on ``path`` whose mean coherence to the path's documents other than the one
    at ``position`` is at or below the ``quantile`` of all such candidates, drawn at random."""
    keep = [int(p) for j, p in enumerate(path) if j != position]
    cand = np.setdiff1d(np.arange(coherence.shape[0]), np.asarray(path, dtype=int))
    mean_coh = np.asarray(coherence[np.ix_(cand, keep)], dtype=float).mean(axis=1)
    cut = np.quantile(mean_coh, quantile)
    return int(rng.choice(cand[mean_coh <= cut]))


def off_topic_narratives(paths: pd.DataFrame, coherence_by_collection: dict[str, np.ndarray], seed: int,
                         n: int | None = None, quantile: float = 0.1) -> pd.DataFrame:
    """Each path with 3 or more documents with one interior document (position drawn uniformly
    from 1..L−2) replaced by :func:`off_topic_document`."""
    rng = np.random.default_rng(seed)
    rows = []
    for _, r in paths.iterrows():
        orig = [int(x) for x in r["path"]]
        if len(orig) < 3 or r["collection"] not in coherence_by_collection:
            continue
        pos = int(rng.integers(1, len(orig) - 1))
        new = list(orig)
        new[pos] = off_topic_document(orig, pos, coherence_by_collection[r["collection"]], rng, quantile)
        rows.append({"kind": "off_topic", "narrative_id": len(rows), "collection": r["collection"],
                     "base_pair_id": r["pair_id"], "path": new, "collections": [r["collection"]] * len(new),
                     "length": len(new), "seed": seed})
        if n is not None and len(rows) >= n:
            break
    return pd.DataFrame(rows, columns=NARRATIVE_COLUMNS)


def add_coherence(narratives: pd.DataFrame, coherence_for: Callable[[str], np.ndarray]) -> pd.DataFrame:
    """Add ``min_coherence`` and ``mean_coherence`` of the consecutive links (the joint
    landscape's matrix for the mixed kinds, the collection's own for the perturbed ones)."""
    out = narratives.copy()
    metrics = [path_metrics(list(p), coherence_for(c)) for c, p in zip(out["collection"], out["path"])]
    out["min_coherence"] = [m["min_coherence"] for m in metrics]
    out["mean_coherence"] = [m["mean_coherence"] for m in metrics]
    return out


def titles_for(narratives: pd.DataFrame, titles_by_collection: dict[str, Sequence[str]],
               joint=None) -> list[list[str]]:
    """The document titles of each narrative: joint indices for the mixed kinds (in
    ``joint.docs``), collection-local indices otherwise."""
    out = []
    for c, p in zip(narratives["collection"], narratives["path"]):
        if c == MIXED_COLLECTION:
            out.append([str(joint.docs["title"].iat[int(i)]) for i in p])
        else:
            out.append([str(titles_by_collection[c][int(i)]) for i in p])
    return out


OOD_WORDING: dict[str, str] = {MIXED_COLLECTION: "news articles and scientific articles"}
"""How the judge prompt names the documents of a mixed narrative."""


def judge_frame(narratives: pd.DataFrame) -> pd.DataFrame:
    """Narratives in the shape :func:`judgelab.narrative.judges.run.run_judges` takes: collection,
    pair_id = "<kind>-<narrative_id>", method = kind, titles."""
    return pd.DataFrame({"collection": narratives["collection"].to_numpy(),
                         "pair_id": [f"{k}-{i}" for k, i in zip(narratives["kind"], narratives["narrative_id"])],
                         "method": narratives["kind"].to_numpy(), "titles": narratives["titles"].to_numpy()})
