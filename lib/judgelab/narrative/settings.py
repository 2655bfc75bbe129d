"""Knobs of the coherence landscape (notebook 07) and path extraction (notebook 08), keyed by profile.

Read with ``judgelab.profiles.pick(NARR_PROFILES, PROFILE)``. Each collection has its own entry:

- ``embedding``: ``"precomputed"`` (the authors' OpenAI text-embedding-3-small vectors shipped with
  the news collection), ``"minilm"`` (the bundled all-MiniLM-L6-v2, 384-d) or ``"openai"``
  (text-embedding-3-small through the API, key from ``OPENAI_API_KEY``).
- ``subset``: keep every k-th document so that about this many remain (None = all). Only the
  smoke profile uses it.
- ``n_neighbors``, ``min_cluster_size``: UMAP neighbours and HDBSCAN minimum cluster size. The
  news values (16, 4) are those of the authors' news notebook (Narrative Trails repository,
  ``Examples/news_articles.ipynb``); UMAP always uses 48 components, cosine, ``min_dist=0``
  (paper section 4.2).
- ``n_pairs``: endpoint pairs (paper section 3.2: 200 news, 100 VisPub).
- ``year_range``: VisPub years kept (paper section 4.1: 1990-2022).
- ``baseline_strict_dates``: the random baseline draws intermediates dated strictly between the
  endpoints (True) or inclusively (False); see :mod:`judgelab.narrative.baseline`. News: strict
  (many articles share a day; this reading reproduces the paper's 0.73-document length gap),
  VisPub: inclusive (dates are years; a strict reading would drop every paper of the endpoints'
  years, and the paper reports no length gap there). Notebook 08 reports both readings.
- ``path_seeds`` (optional): overrides the profile-wide value for one collection (VisPub: 1, its
  3,615 x 3,615 matrix per seed is 52 MB).

Profile-wide knobs:

- ``seed``: the main seed (UMAP, HDBSCAN has none, endpoint sampling, random baseline). The
  authors used ``random_state=42``.
- ``sensitivity_seeds``: number of UMAP seeds (``seed, seed+1, ...``) over which notebook 07
  reports the critical coherence.
- ``path_seeds``: number of seeds over which notebook 08 repeats landscape + sampling + baseline
  on the news collection to average the numbers set beside the paper's.
- ``jsd_base``: log base of the Jensen-Shannon distance in the topic similarity. ``"e"`` is what
  the original code used (scipy's default); ``2`` bounds the distance by 1. Notebook 07 reports
  both.
"""
from __future__ import annotations

import math

NEWS_PAPER = {"embedding": "precomputed", "subset": None, "n_neighbors": 16, "min_cluster_size": 4,
              "baseline_strict_dates": True}
VISPUB_PAPER = {
    "embedding": "minilm", "subset": None, "n_neighbors": 32, "min_cluster_size": 8,
    "year_range": (1990, 2022), "path_seeds": 1, "baseline_strict_dates": False,
}

NARR_PROFILES: dict[str, dict] = {
    "smoke": {
        "collections": {"news": {**NEWS_PAPER, "subset": 140, "n_pairs": 12}},
        "seed": 42, "sensitivity_seeds": 2, "path_seeds": 2, "jsd_base": "e",
    },
    "demo": {
        "collections": {"news": {**NEWS_PAPER, "n_pairs": 60}},
        "seed": 42, "sensitivity_seeds": 5, "path_seeds": 3, "jsd_base": "e",
    },
    "paper": {
        "collections": {
            "news": {**NEWS_PAPER, "n_pairs": 200},
            "vispub": {**VISPUB_PAPER, "n_pairs": 100},
        },
        "seed": 42, "sensitivity_seeds": 10, "path_seeds": 5, "jsd_base": "e",
    },
}


def log_base(value) -> float:
    """``"e"`` -> math.e; any positive number > 1 -> itself (the JSD log base)."""
    if isinstance(value, str):
        if value.lower() in ("e", "natural", "ln"):
            return math.e
        value = float(value)
    value = float(value)
    if not value > 1:
        raise ValueError(f"jsd_base must be > 1 (or 'e'), got {value!r}")
    return value
