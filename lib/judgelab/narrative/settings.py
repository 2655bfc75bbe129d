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
  endpoints (True) or inclusively (False); see :mod:`judgelab.narrative.paths.baseline`. News: strict
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

Notebook parameters (papermill passes strings from the command line) are parsed once, with
:mod:`judgelab.params`, by :func:`landscape_settings` (notebook 07) and :func:`path_settings`
(notebook 08), which also resolve the profile's defaults.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from judgelab import profiles
from judgelab.params import as_bool, as_list, as_optional_int, is_unset

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


def _check_collections(names: list[str], knobs: dict) -> list[str]:
    unknown = [n for n in names if n not in knobs["collections"]]
    if unknown:
        raise ValueError(f"COLLECTIONS: {unknown} not in this profile's collections "
                         f"{sorted(knobs['collections'])}")
    return names


@dataclass(frozen=True)
class LandscapeSettings:
    """Notebook 07's resolved parameters: which collections, which UMAP seeds, which JSD bases."""

    profile: str
    knobs: dict                 # the profile's NARR_PROFILES entry
    collections: list[str]
    seed: int                   # the main seed (first of ``seeds``)
    seeds: list[int]            # seed, seed + 1, ... (the sensitivity study)
    jsd_base: str | float       # the main base (first of ``bases``)
    bases: list                 # the main base, then the other of ("e", 2)

    def collection_knobs(self, name: str) -> dict:
        return self.knobs["collections"][name]

    def path_seeds(self, name: str) -> int:
        """How many of the first seeds notebook 08 repeats its paths on (per collection override)."""
        return int(self.collection_knobs(name).get("path_seeds", self.knobs["path_seeds"]))


def landscape_settings(profile: str, collections=None, jsd_base=None, seed=None,
                       sensitivity_seeds=None) -> LandscapeSettings:
    """Resolve notebook 07's parameters against the profile (None / "none" = the profile's value).

    ``collections``: list or comma-separated string; ``jsd_base``: "e" or a number > 1;
    ``seed``: main UMAP seed; ``sensitivity_seeds``: how many seeds ``seed, seed+1, ...``.
    """
    knobs = profiles.pick(NARR_PROFILES, profile)
    names = as_list(collections, name="COLLECTIONS") or list(knobs["collections"])
    main_seed = as_optional_int(seed, name="SEED")
    main_seed = int(knobs["seed"]) if main_seed is None else main_seed
    n_seeds = as_optional_int(sensitivity_seeds, name="SENSITIVITY_SEEDS")
    n_seeds = int(knobs["sensitivity_seeds"]) if n_seeds is None else n_seeds
    if n_seeds < 1:
        raise ValueError(f"SENSITIVITY_SEEDS must be >= 1, got {n_seeds}")
    base = knobs["jsd_base"] if is_unset(jsd_base) else jsd_base
    log_base(base)                                  # fail here, not after an hour of UMAP
    bases = [base] + [b for b in ("e", 2) if str(b) != str(base)]
    return LandscapeSettings(profile, knobs, _check_collections(names, knobs), main_seed,
                             [main_seed + i for i in range(n_seeds)], base, bases)


@dataclass(frozen=True)
class PathSettings:
    """Notebook 08's resolved parameters."""

    profile: str
    knobs: dict
    n_pairs: int | None         # None = each collection's ``n_pairs``
    temporal: bool              # u -> v only if date_u <= date_v

    def pairs_for(self, name: str) -> int:
        return int(self.n_pairs if self.n_pairs is not None else self.knobs["collections"][name]["n_pairs"])

    def strict_dates(self, name: str) -> bool:
        return bool(self.knobs["collections"][name].get("baseline_strict_dates", False))


def path_settings(profile: str, n_pairs=None, temporal=True) -> PathSettings:
    """Resolve notebook 08's parameters: ``n_pairs`` (None = the profile's), ``temporal`` (yes/no;
    "off" and "false" are False)."""
    knobs = profiles.pick(NARR_PROFILES, profile)
    pairs = as_optional_int(n_pairs, name="N_PAIRS")
    if pairs is not None and pairs < 1:
        raise ValueError(f"N_PAIRS must be >= 1, got {pairs}")
    return PathSettings(profile, knobs, pairs, as_bool(temporal, name="TEMPORAL"))
