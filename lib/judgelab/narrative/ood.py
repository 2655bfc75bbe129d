"""Out-of-distribution and perturbed narratives (paper 002, section 5.7, and two families beyond it).

The paper's two adversarial kinds mix the news and VisPub collections:

- **alternating** — the collection switches at every step (news, paper, news, ... or the
  reverse, the start drawn at random);
- **random mixed** — documents drawn at random from the union of the two collections.

Both need one shared embedding space (the same backend for both collections; here the bundled
MiniLM, since the mirror has OpenAI vectors for news only) and their coherence is read on the
*joint* landscape built from it. Our random mixed narratives must contain both collections (drawn
again until they do); otherwise, with VisPub seven times larger than news, many would be plain
in-distribution VisPub samples and not OOD at all.

Two perturbation families of in-distribution narratives go beyond the paper:

- **shuffled** — the same documents in a random order different from the original;
- **off-topic** — one interior document replaced by an off-topic one from the same collection:
  a document, not on the path, whose mean coherence to the path's remaining documents lies in the
  lowest ``quantile`` of all candidates, drawn at random among those.

Their coherence is read on the collection's own landscape. Lengths of generated narratives are
drawn from the in-distribution path lengths. Every generator takes a seed and is deterministic
given it.

A narrative's score in a mode is the mean over the K agents (failed calls never scored), as in
:func:`judgelab.narrative.followups.narrative_scores`. Tests between kinds are Student's
two-sample t-test (pooled variance) with Cohen's d on the pooled SD, or, for a perturbation
against its own original, the paired t-test with d_z = mean(diff) / SD(diff) (Lakens 2013,
*Front. Psychol.* 4:863).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from .path_metrics import path_metrics
from .validity import cohens_d

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
    """``n`` narratives over the joint index whose collection changes at every step.

    ``collection_of[i]`` names the collection of joint document i. With m collections the
    sequence cycles through them in a fixed order from a random start (for two: strict
    alternation). Documents are drawn without replacement within a narrative.
    Columns: :data:`NARRATIVE_COLUMNS` (``path`` holds joint indices).
    """
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
    collection, redrawn until every collection is present (so ``min_length`` ≥ number of
    collections)."""
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
    """Each path of ``paths`` (columns collection, pair_id, path) with 3 or more documents, its
    order permuted at random until it differs from the original. ``n`` caps how many (the first
    ``n`` eligible rows)."""
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


def is_alternating(collections: Sequence[str]) -> bool:
    """True when no two consecutive documents share a collection."""
    return all(a != b for a, b in zip(collections[:-1], collections[1:]))


# --------------------------------------------------------------------------- coherence

def add_coherence(narratives: pd.DataFrame, coherence_for: Callable[[str], np.ndarray]) -> pd.DataFrame:
    """Add ``min_coherence`` and ``mean_coherence`` (minimum and mean of the consecutive
    coherences θ(d_i, d_{i+1}), :func:`judgelab.narrative.path_metrics.path_metrics`) read on
    the dense matrix ``coherence_for(collection)``."""
    out = narratives.copy()
    metrics = [path_metrics(list(p), coherence_for(c)) for c, p in zip(out["collection"], out["path"])]
    out["min_coherence"] = [m["min_coherence"] for m in metrics]
    out["mean_coherence"] = [m["mean_coherence"] for m in metrics]
    return out


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


def joint_collection(docs_by_collection: dict[str, pd.DataFrame], backend=None, *, n_neighbors: int = 16,
                     min_cluster_size: int = 5, seed: int = 42, jsd_base: float = math.e) -> JointCollection:
    """Embed the union of the collections with ONE backend (default: the bundled MiniLM; the
    mirror's OpenAI vectors cover news only, so mixing them with MiniLM VisPub vectors would put
    the two collections in different spaces), fit the joint landscape (UMAP 48-d cosine + HDBSCAN
    soft memberships, :func:`judgelab.narrative.landscape.fit_landscape`) and compute the dense
    coherence θ = √(S·T) on it (:func:`judgelab.narrative.coherence.coherence_matrix`).

    ``docs_by_collection`` maps a name to a frame with doc, title, date, text.
    """
    from .coherence import coherence_matrix
    from .embeddings import MiniLMEmbeddings
    from .landscape import fit_landscape

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


def titles_for(narratives: pd.DataFrame, titles_by_collection: dict[str, Sequence[str]],
               joint: JointCollection | None = None) -> list[list[str]]:
    """The document titles of each narrative: joint indices for the mixed kinds (looked up in
    ``joint.docs``), collection-local indices otherwise."""
    out = []
    for c, p in zip(narratives["collection"], narratives["path"]):
        if c == MIXED_COLLECTION:
            out.append([str(joint.docs["title"].iat[int(i)]) for i in p])
        else:
            out.append([str(titles_by_collection[c][int(i)]) for i in p])
    return out


# --------------------------------------------------------------------------- scores and tests

def summarize_scores(scores: pd.DataFrame, keys: Sequence[str] = ("kind", "narrative_id", "collection", "mode")) -> pd.DataFrame:
    """Per narrative and mode: score_mean over successful agents, score_sd (ddof=1), n_agents."""
    ok = scores[scores["status"].eq("ok") & scores["score"].notna()]
    return (ok.groupby(list(keys))["score"]
              .agg(score_mean="mean", score_sd=lambda x: x.std(ddof=1), n_agents="count").reset_index())


def kind_summary(long: pd.DataFrame, by: Sequence[str] = ("kind", "mode")) -> pd.DataFrame:
    """Mean and SD (ddof=1) of the LLM score, minimum and mean coherence per kind (and mode).

    Columns: *by, n, score_mean, score_sd, min_coherence_mean, min_coherence_sd,
    mean_coherence_mean, mean_coherence_sd.
    """
    g = long.groupby(list(by), sort=False)
    out = g.agg(n=("score_mean", "size"),
                score_mean=("score_mean", "mean"), score_sd=("score_mean", lambda x: x.std(ddof=1)),
                min_coherence_mean=("min_coherence", "mean"), min_coherence_sd=("min_coherence", lambda x: x.std(ddof=1)),
                mean_coherence_mean=("mean_coherence", "mean"), mean_coherence_sd=("mean_coherence", lambda x: x.std(ddof=1)))
    return out.reset_index()


def two_sample_test(a: Sequence[float], b: Sequence[float]) -> dict:
    """Student's t-test (pooled variance) of a vs b, with Cohen's d on the pooled SD."""
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if len(a) < 2 or len(b) < 2:
        return {"test": "student_t", "t": np.nan, "p": np.nan, "d": np.nan, "n_a": len(a), "n_b": len(b)}
    t, p = stats.ttest_ind(a, b, equal_var=True)
    return {"test": "student_t", "t": float(t), "p": float(p), "d": cohens_d(a, b), "n_a": len(a), "n_b": len(b)}


def paired_test(perturbed: Sequence[float], original: Sequence[float]) -> dict:
    """Paired t-test of perturbed vs original values with d_z = mean(diff) / SD(diff, ddof=1)."""
    x = np.asarray(perturbed, float)
    y = np.asarray(original, float)
    m = np.isfinite(x) & np.isfinite(y)
    x, y = x[m], y[m]
    if len(x) < 2:
        return {"test": "paired_t", "t": np.nan, "p": np.nan, "d": np.nan, "n_a": len(x), "n_b": len(y)}
    diff = x - y
    sd = diff.std(ddof=1)
    if sd == 0:
        return {"test": "paired_t", "t": np.nan, "p": np.nan, "d": np.nan, "n_a": len(x), "n_b": len(y)}
    t, p = stats.ttest_rel(x, y)
    return {"test": "paired_t", "t": float(t), "p": float(p), "d": float(diff.mean() / sd), "n_a": len(x), "n_b": len(y)}


def kind_tests(long: pd.DataFrame, originals: pd.DataFrame | None = None,
               values: Sequence[str] = ("score_mean", "min_coherence", "mean_coherence")) -> pd.DataFrame:
    """The tests of section 5.7 and of the perturbation families, per mode and value.

    - alternating vs random_mixed: Student's t, Cohen's d (the paper's t = −2.93, d = −0.77);
    - shuffled vs original and off_topic vs original: paired t and d_z, matching each perturbed
      narrative to its original (``originals``: rows with collection, pair_id (= base_pair_id),
      mode and the same value columns; the max-capacity narratives).

    Columns: mode, comparison, value, test, t, p, d, n_a, n_b.
    """
    rows = []
    for mode, g in long.groupby("mode"):
        for v in values:
            a = g.loc[g["kind"] == "alternating", v]
            b = g.loc[g["kind"] == "random_mixed", v]
            if len(a) or len(b):
                rows.append({"mode": mode, "comparison": "alternating_vs_random_mixed", "value": v, **two_sample_test(a, b)})
            if originals is None:
                continue
            o = originals[originals["mode"] == mode].rename(columns={"pair_id": "base_pair_id"})
            for kind in PERTURBATION_KINDS:
                pk = g[g["kind"] == kind]
                if pk.empty:
                    continue
                m = pk.merge(o[["collection", "base_pair_id", v]], on=["collection", "base_pair_id"], suffixes=("", "_orig"))
                rows.append({"mode": mode, "comparison": f"{kind}_vs_original", "value": v,
                             **paired_test(m[v], m[f"{v}_orig"])})
    return pd.DataFrame(rows, columns=["mode", "comparison", "value", "test", "t", "p", "d", "n_a", "n_b"])


def kind_correlations(long: pd.DataFrame, groups: dict[str, Sequence[str]] | None = None,
                      coherence: Sequence[str] = ("min_coherence", "mean_coherence")) -> pd.DataFrame:
    """Pearson r between coherence and the LLM score within sets of kinds, per mode.

    ``groups`` maps a label to the kinds pooled (default: "ood" = alternating + random_mixed, as
    in the paper's r = 0.729; plus each perturbation kind). Columns: mode, group, predictor, r, p, n.
    """
    groups = groups or {"ood": OOD_KINDS, "shuffled": ("shuffled",), "off_topic": ("off_topic",)}
    rows = []
    for mode, g in long.groupby("mode"):
        for label, kinds in groups.items():
            sub = g[g["kind"].isin(kinds)]
            for c in coherence:
                x, y = sub[c].to_numpy(float), sub["score_mean"].to_numpy(float)
                m = np.isfinite(x) & np.isfinite(y)
                if m.sum() >= 3 and np.ptp(x[m]) > 0 and np.ptp(y[m]) > 0:
                    r, p = stats.pearsonr(x[m], y[m])
                else:
                    r, p = np.nan, np.nan
                rows.append({"mode": mode, "group": label, "predictor": c, "r": float(r), "p": float(p), "n": int(m.sum())})
    return pd.DataFrame(rows, columns=["mode", "group", "predictor", "r", "p", "n"])


# --------------------------------------------------------------------------- notebook plumbing

OOD_WORDING: dict[str, str] = {MIXED_COLLECTION: "news articles and scientific articles"}
"""How the judge prompt names the documents of a mixed narrative."""


def union_documents(docs_by_collection: dict[str, pd.DataFrame], names: Sequence[str] = ("news", "vispub"),
                    subset: dict[str, int | None] | None = None) -> dict[str, pd.DataFrame]:
    """The document frames (doc, title, date, text) of ``names``: notebook 07's
    ``narr_documents_<name>`` frame when given, else loaded from the data mirror
    (:func:`judgelab.narrative.collections.load_collection`). ``subset`` maps a name to about how
    many documents to keep, spread evenly over time (:meth:`DocumentCollection.every_kth`)."""
    from .collections import DocumentCollection, load_collection

    out = {}
    for name in names:
        if name in docs_by_collection:
            col = DocumentCollection(name, docs_by_collection[name].sort_values("doc").reset_index(drop=True))
        else:
            col = load_collection(name)
        out[name] = col.every_kth((subset or {}).get(name)).docs
    return out


def judge_frame(narratives: pd.DataFrame) -> pd.DataFrame:
    """Narratives in the shape :func:`judgelab.narrative.judges.run_judges` takes: collection,
    pair_id = "<kind>-<narrative_id>", method = kind, titles."""
    return pd.DataFrame({"collection": narratives["collection"].to_numpy(),
                         "pair_id": [f"{k}-{i}" for k, i in zip(narratives["kind"], narratives["narrative_id"])],
                         "method": narratives["kind"].to_numpy(), "titles": narratives["titles"].to_numpy()})


def judged_narratives(narratives: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """One row per narrative and mode: the narrative's kind, ids and coherence with the K-agent
    mean score (``score_mean``), SD (ddof=1) and successful-agent count (failures excluded)."""
    s = scores.copy()
    s["kind"] = s["method"]
    s["narrative_id"] = s["pair_id"].astype(str).str.rsplit("-", n=1).str[-1].astype(int)
    summ = summarize_scores(s, keys=("kind", "narrative_id", "collection", "mode"))
    cols = ["kind", "narrative_id", "collection", "base_pair_id", "length", "min_coherence", "mean_coherence"]
    return narratives[cols].merge(summ, on=["kind", "narrative_id", "collection"], how="inner")


def in_distribution_long(long: pd.DataFrame) -> pd.DataFrame:
    """Notebook 09's judged paths (:func:`judgelab.narrative.followups.narrative_scores`) in the
    OOD layout: kind = method (maxcap / random), base_pair_id = pair_id."""
    out = long.copy()
    out["kind"] = out["method"]
    out["base_pair_id"] = out["pair_id"]
    out["narrative_id"] = out["pair_id"]
    return out[["kind", "narrative_id", "collection", "base_pair_id", "length", "min_coherence",
                "mean_coherence", "mode", "score_mean", "score_sd", "n_agents"]]
