"""SAGE Layer 3, thematic content: topic diversity, semantic network, conceptual spread.

The SAGE paper (Table 1) names "topic diversity, semantic networks, conceptual structure" for
this layer but no metrics; these are standard operationalisations (``l3_*`` columns; undefined
values are NaN). The unit is a *passage*: paragraphs merged until it has ``PASSAGE_MIN_WORDS``
words (a topic model or an embedding of a five-word dialogue line says little). Every model is
fitted on one story alone, so a story's features do not change when other stories are added.
"""
from __future__ import annotations

import math
from collections import Counter
from itertools import combinations

import networkx as nx
import numpy as np
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy
from sklearn.decomposition import LatentDirichletAllocation
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

from judgelab.sage.layers.segment import Segmented, ensure_segmented, is_word

PASSAGE_MIN_WORDS = 100
N_TOPICS = 5            # topics per story: a short story has few themes; entropy is normalised by log K
LDA_SEED = 0
NETWORK_NODES = 100     # the most frequent content words of the story
NETWORK_MIN_WEIGHT = 2  # an edge = two words co-occurring in at least 2 sentences (recurring association)
NETWORK_SEED = 0
CONTENT_TAGS = ("NN", "VB", "JJ")  # nouns, verbs, adjectives (tag prefixes)
# Embedding cost bounds: MiniLM on one core takes ~0.05 s for a 90-word text, so a story's ~40
# full passages would cost more than all other features together. The opening EMBED_WORDS words
# (~3 sentences, ~85 word pieces, within the 128 the model was trained on) of at most
# EMBED_MAX_PASSAGES passages spread evenly over the story keep the cost small and fixed per story.
EMBED_MAX_PASSAGES = 12
EMBED_WORDS = 64


def passages(text: str | Segmented, min_words: int = PASSAGE_MIN_WORDS) -> list[str]:
    """Paragraphs merged in order until each passage has >= ``min_words`` words (the last may be
    merged into its predecessor when it falls short)."""
    seg = ensure_segmented(text)
    out: list[str] = []
    buf: list[str] = []
    n = 0
    for para in seg.paragraph_texts():
        buf.append(para)
        n += sum(1 for tok in para.split() if any(c.isalpha() for c in tok))
        if n >= min_words:
            out.append(" ".join(buf))
            buf, n = [], 0
    if buf:
        if out and n < min_words:
            out[-1] = out[-1] + " " + " ".join(buf)
        else:
            out.append(" ".join(buf))
    return out


def _normalised_entropy(p: np.ndarray, k: int) -> float:
    return float(entropy(p, base=2) / math.log2(k)) if k > 1 else math.nan


def topic_diversity(text: str | Segmented, n_topics: int = N_TOPICS, seed: int = LDA_SEED) -> dict[str, float]:
    """LDA (Blei, Ng & Jordan 2003; K = ``n_topics``, seeded) over the passages' word counts
    (English stop words out, >= 3 letters). With theta_p the topic mix of passage p:

    - ``l3_topic_entropy`` = H(theta_bar) / log K, in [0, 1]: how evenly the story spreads over
      its topics (topic diversity);
    - ``l3_topic_passage_entropy`` = mean_p H(theta_p) / log K: how mixed a single passage is;
    - ``l3_topic_shift`` = mean Jensen–Shannon distance (base 2) between consecutive passages'
      theta: how fast the theme moves.
    """
    keys = ("l3_topic_entropy", "l3_topic_passage_entropy", "l3_topic_shift")
    docs = passages(text)
    if len(docs) < 2:
        return {k: math.nan for k in keys}
    vec = CountVectorizer(stop_words="english", token_pattern=r"(?u)\b[^\W\d_]{3,}\b", lowercase=True)
    try:
        counts = vec.fit_transform(docs)
    except ValueError:  # empty vocabulary
        return {k: math.nan for k in keys}
    if counts.shape[1] < n_topics:
        return {k: math.nan for k in keys}
    lda = LatentDirichletAllocation(n_components=n_topics, learning_method="batch", max_iter=20,
                                    random_state=seed)
    theta = lda.fit_transform(counts)
    theta = theta / theta.sum(axis=1, keepdims=True)
    mean_mix = theta.mean(axis=0)
    shift = [jensenshannon(a, b, base=2) for a, b in zip(theta[:-1], theta[1:])]
    return {
        "l3_topic_entropy": _normalised_entropy(mean_mix, n_topics),
        "l3_topic_passage_entropy": float(np.mean([_normalised_entropy(t, n_topics) for t in theta])),
        "l3_topic_shift": float(np.mean(shift)),
    }


def cooccurrence_network(text: str | Segmented, n_nodes: int = NETWORK_NODES,
                         min_weight: int = NETWORK_MIN_WEIGHT) -> nx.Graph:
    """The story's semantic network: its ``n_nodes`` most frequent content words (nouns, verbs,
    adjectives by POS tag, lower-cased, stop words and words under 3 letters dropped; ties broken
    alphabetically) joined by an edge weighted by the number of sentences in which both occur;
    edges lighter than ``min_weight`` are dropped. All ``n_nodes`` words stay as nodes."""
    seg = ensure_segmented(text)
    sent_sets: list[set[str]] = []
    freq: Counter = Counter()
    for toks, tags in zip(seg.tokens, seg.tags):
        words = {t.lower() for t, g in zip(toks, tags)
                 if g.startswith(CONTENT_TAGS) and g not in ("NNP", "NNPS") and is_word(t) and len(t) >= 3
                 and t.lower() not in ENGLISH_STOP_WORDS}
        sent_sets.append(words)
        freq.update(words)
    nodes = [w for w, _ in sorted(freq.items(), key=lambda kv: (-kv[1], kv[0]))[:n_nodes]]
    keep = set(nodes)
    weights: Counter = Counter()
    for words in sent_sets:
        for a, b in combinations(sorted(words & keep), 2):
            weights[(a, b)] += 1
    g = nx.Graph()
    g.add_nodes_from(nodes)
    g.add_weighted_edges_from((a, b, w) for (a, b), w in weights.items() if w >= min_weight)
    return g


def semantic_network(text: str | Segmented, seed: int = NETWORK_SEED) -> dict[str, float]:
    """Structure of the co-occurrence network (:func:`cooccurrence_network`, networkx):

    - ``l3_net_density`` and ``l3_net_clustering`` (mean local clustering, Watts & Strogatz 1998);
    - ``l3_net_modularity`` = Newman's Q (PNAS 103:8577) of the seeded weighted Louvain partition
      (Blondel et al. 2008): how strongly the vocabulary falls into separate thematic clusters;
    - ``l3_net_communities`` = number of Louvain communities with at least 2 words.

    Sentences, not a sliding window, define co-occurrence, as literary "semantic networks" do.
    """
    g = cooccurrence_network(text)
    keys = ("l3_net_density", "l3_net_clustering", "l3_net_modularity", "l3_net_communities")
    if g.number_of_nodes() < 2 or g.number_of_edges() == 0:
        out = {k: math.nan for k in keys}
        if g.number_of_nodes() >= 2:
            out["l3_net_density"] = 0.0
        return out
    comms = nx.community.louvain_communities(g, weight="weight", seed=seed)
    return {
        "l3_net_density": float(nx.density(g)),
        "l3_net_clustering": float(nx.average_clustering(g)),
        "l3_net_modularity": float(nx.community.modularity(g, comms, weight="weight")),
        "l3_net_communities": float(sum(1 for c in comms if len(c) >= 2)),
    }


_EMBEDDER = None


def default_embedder():
    """The bundled all-MiniLM-L6-v2 (384-d, offline, cached under ``paths.cache_dir()``)."""
    global _EMBEDDER
    if _EMBEDDER is None:
        from judgelab.embeddings import MiniLMEmbeddings
        _EMBEDDER = MiniLMEmbeddings()
    return _EMBEDDER


def embedding_units(text: str | Segmented, max_passages: int = EMBED_MAX_PASSAGES,
                    words: int = EMBED_WORDS) -> list[str]:
    """The texts that :func:`conceptual_spread` embeds: the first ``words`` words of up to
    ``max_passages`` passages (:func:`passages`) at evenly spaced positions (all when fewer)."""
    docs = passages(text)
    if len(docs) > max_passages:
        idx = np.unique(np.round(np.linspace(0, len(docs) - 1, max_passages)).astype(int))
        docs = [docs[i] for i in idx]
    return [" ".join(d.split()[:words]) for d in docs]


def conceptual_spread(text: str | Segmented, embedder=None) -> dict[str, float]:
    """Dispersion of the passages' unit-length MiniLM embeddings v_p (Reimers & Gurevych 2019) of
    their opening words, c their mean: ``l3_embed_spread`` = mean_p (1 - cos(v_p, c)) and
    ``l3_embed_adjacent_sim`` = mean cos(v_p, v_(p+1)). ``embedder``: ``embed(list[str])`` -> array.
    """
    keys = ("l3_embed_spread", "l3_embed_adjacent_sim")
    docs = embedding_units(text)
    if len(docs) < 2:
        return {k: math.nan for k in keys}
    emb = np.asarray((embedder or default_embedder()).embed(docs), dtype=float)
    emb = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    centroid = emb.mean(axis=0)
    norm = np.linalg.norm(centroid)
    cos_c = emb @ (centroid / norm) if norm > 0 else np.zeros(len(emb))
    adjacent = np.sum(emb[:-1] * emb[1:], axis=1)
    return {"l3_embed_spread": float(np.mean(1.0 - cos_c)), "l3_embed_adjacent_sim": float(adjacent.mean())}


def l3_features(text: str | Segmented, embed: bool = True, embedder=None) -> dict[str, float]:
    """All Layer-3 features of one story (``l3_*`` columns); ``embed=False`` leaves the two
    embedding features NaN (the cheap setting of the smoke profile)."""
    seg = ensure_segmented(text)
    out: dict[str, float] = {}
    out.update(topic_diversity(seg))
    out.update(semantic_network(seg))
    if embed:
        out.update(conceptual_spread(seg, embedder=embedder))
    else:
        out.update({"l3_embed_spread": math.nan, "l3_embed_adjacent_sim": math.nan})
    return out
