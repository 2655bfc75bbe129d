"""Notebooks 07 and 08's parameters: the published UMAP/HDBSCAN parameter sets and the resolution of
the notebooks' overrides against the profile's ``[<profile>.narrative]`` knobs (``profiles.toml``).

The paper states neither UMAP's neighbours nor HDBSCAN's minimum cluster size; the authors
published two sets (:data:`PARAM_SETS`). The default is chosen by provenance, not by which output
matches: the paths behind the paper's Tables 1 and 4 are the authors' stored paths, produced by
their path-comparison notebook with 32 / 8. The critical coherence the authors printed comes from
their examples notebook (16 / 4), so notebook 07 sets it beside this project's value at 16 / 4
(:mod:`judgelab.narrative.landscape.comparison`). UMAP always uses 48 components, cosine,
``min_dist=0`` (paper section 4.2).

Notebook parameters (papermill passes strings from the command line) are parsed once, with
:mod:`judgelab.params`, by :func:`landscape_settings` (notebook 07) and :func:`path_settings`
(notebook 08).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from judgelab import profiles
from judgelab.params import as_bool, as_list, as_optional_int, is_unset

PARAM_SETS: dict[str, dict] = {
    # key -> UMAP n_neighbors, HDBSCAN min_cluster_size, and where the authors used it
    "32/8": {"n_neighbors": 32, "min_cluster_size": 8,
             "label": "32/8 (authors' path-comparison notebook, default)"},
    "16/4": {"n_neighbors": 16, "min_cluster_size": 4,
             "label": "16/4 (authors' examples notebook)"},
}
DEFAULT_PARAMS = "32/8"
"""Provenance: the path-comparison notebook produced the stored paths of Tables 1 and 4."""
CRITICAL_PARAMS = "16/4"
"""Provenance: the examples notebook printed the critical coherence (0.4775) the comparison cites."""
BASELINE_DATES = "strict"
"""One date rule for every collection's random baseline (module doc, ``baseline_dates``)."""

def params_key(n_neighbors: int, min_cluster_size: int) -> str:
    """The :data:`PARAM_SETS` key of a (n_neighbors, min_cluster_size) pair, e.g. ``"32/8"``."""
    return f"{int(n_neighbors)}/{int(min_cluster_size)}"


def params_label(key: str) -> str:
    """A parameter set's label for the ``params`` column (with its provenance), else the key."""
    return PARAM_SETS[key]["label"] if key in PARAM_SETS else key


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
    knobs: dict                 # the profile's [narrative] knobs
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
    knobs = profiles.knobs("narrative", profile)
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
    investigate_lengths: bool = False   # the path-length investigation (news, full collection)

    def pairs_for(self, name: str) -> int:
        return int(self.n_pairs if self.n_pairs is not None else self.knobs["collections"][name]["n_pairs"])

    @property
    def strict_dates(self) -> bool:
        """The profile-wide random-baseline date rule (``baseline_dates``): True = strict."""
        rule = self.knobs.get("baseline_dates", BASELINE_DATES)
        if rule not in ("inclusive", "strict"):
            raise ValueError(f"baseline_dates must be 'inclusive' or 'strict', got {rule!r}")
        return rule == "strict"

    def alt_params(self, name: str) -> str | None:
        """The other published parameter set for ``name`` (a key of :data:`PARAM_SETS`), or None."""
        key = self.knobs["collections"][name].get("alt_params")
        if key is not None and key not in PARAM_SETS:
            raise ValueError(f"{name}: alt_params {key!r} not in {sorted(PARAM_SETS)}")
        return key


def path_settings(profile: str, n_pairs=None, temporal=True, investigate_lengths=None) -> PathSettings:
    """Resolve notebook 08's parameters: ``n_pairs`` (None = the profile's), ``temporal`` (yes/no;
    "off" and "false" are False), ``investigate_lengths`` (None = the profile's
    ``investigate_lengths``)."""
    knobs = profiles.knobs("narrative", profile)
    pairs = as_optional_int(n_pairs, name="N_PAIRS")
    if pairs is not None and pairs < 1:
        raise ValueError(f"N_PAIRS must be >= 1, got {pairs}")
    invest = (bool(knobs.get("investigate_lengths", False)) if is_unset(investigate_lengths)
              else as_bool(investigate_lengths, name="INVESTIGATE_LENGTHS"))
    return PathSettings(profile, knobs, pairs, as_bool(temporal, name="TEMPORAL"), invest)
