"""The narrative notebooks' parameters: the published UMAP/HDBSCAN parameter sets, and each
notebook's overrides (papermill's strings, parsed with :mod:`judgelab.params`; None or "default"
is the profile's value) resolved against ``profiles.toml``: :func:`landscape_settings` (07) and
:func:`path_settings` (08) against ``[<profile>.narrative]``, :func:`judge_knobs` (09) against
``[<profile>.narrative_judges]``, :func:`cost_ood_knobs` (10) against ``[<profile>.cost_ood]``.

The paper states neither UMAP's neighbours nor HDBSCAN's minimum cluster size; the authors
published two sets (:data:`PARAM_SETS`). The default is chosen by provenance, not by which output
matches: the authors' stored paths behind Tables 1 and 4 come from their path-comparison notebook
(32 / 8); the critical coherence they printed from their examples notebook (16 / 4), so notebook
07 sets it beside this project's value at 16 / 4.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from judgelab import config
from judgelab.narrative.judges.prompts import check_mode
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
    # collections read from a user's file (own_collection.load), by name; the others by load_collection
    sources: dict = field(default_factory=dict)
    # an OpenAI-protocol embedding server's endpoint (the configuration's embeddings.base_url; None: OpenAI's)
    embedding_url: str | None = None

    def collection_knobs(self, name: str) -> dict:
        return self.knobs["collections"][name]

    def path_seeds(self, name: str) -> int:
        """How many of the first seeds notebook 08 repeats its paths on (per collection override)."""
        return int(self.collection_knobs(name).get("path_seeds", self.knobs["path_seeds"]))

    def choices(self) -> dict:
        """The analysis choices the landscapes rest on, for the outputs' sidecars (the claims
        scorecard compares them with the paper's): JSD base, and per collection the embedding,
        the subset and the UMAP/HDBSCAN parameter set."""
        out = {"jsd_base": str(self.jsd_base)}
        for c in self.collections:
            k = self.collection_knobs(c)
            out.update({f"embedding.{c}": str(k.get("embedding")), f"subset.{c}": str(k.get("subset")),
                        f"parameter_set.{c}": f"{k.get('n_neighbors')}/{k.get('min_cluster_size')}"})
        return out

    def route(self, n_docs: int) -> str:
        """``"dense"`` (every pair's coherence, the paper's method) or ``"sparse"`` (each document's
        ``knn_k`` nearest neighbours only) for a collection of ``n_docs`` documents."""
        return "sparse" if n_docs > int(self.knobs["dense_limit"]) else "dense"


def landscape_settings(profile: config.Config | str, collections=None, jsd_base=None, seed=None,
                       sensitivity_seeds=None, dense_limit=None) -> LandscapeSettings:
    """Resolve notebook 07's parameters against ``profile``, the run's resolved configuration
    (:func:`judgelab.config.of`): ``collections`` (list or comma-separated), ``jsd_base``
    ("e" or a number > 1), the main UMAP ``seed``, how many ``sensitivity_seeds`` follow it, and
    the ``dense_limit`` above which a collection takes the sparse nearest-neighbour route."""
    cfg = config.of(profile)
    knobs = dict(cfg.knobs("narrative"))
    limit = as_optional_int(dense_limit, name="DENSE_LIMIT")
    if limit is not None:
        if limit < 1:
            raise ValueError(f"DENSE_LIMIT must be >= 1, got {limit}")
        knobs["dense_limit"] = limit
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
    return LandscapeSettings(cfg.profile, knobs, _check_collections(names, knobs), main_seed,
                             [main_seed + i for i in range(n_seeds)], base, bases,
                             embedding_url=cfg.embeddings["base_url"].value)


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

    def choices(self, jsd_bases: dict[str, float], params: dict[str, str] | None = None) -> dict:
        """The analysis choices the paths rest on, for the outputs' sidecars: the landscape's JSD
        base (``jsd_bases``: per collection, as notebook 07 stored it), the graph's temporal rule,
        the random baseline's date rule, the endpoint strata, and per collection the pairs, the
        embedding and the parameter set (``params``: the landscape's, else the profile's knobs)."""
        bases = {f"{b:.6g}" for b in jsd_bases.values()}
        out = {"jsd_base": bases.pop() if len(bases) == 1 else ",".join(sorted(bases)), "temporal": str(self.temporal),
               "date_rule": "strict" if self.strict_dates else "inclusive",
               "endpoint_strata": "paper proportions, quartile cut-offs (judgelab.narrative.paths.endpoints.STRATA)"}
        for c in jsd_bases:
            k = self.knobs["collections"][c]
            out.update({f"n_pairs.{c}": str(self.pairs_for(c)), f"embedding.{c}": str(k.get("embedding")),
                        f"parameter_set.{c}": (params or {}).get(c) or f"{k.get('n_neighbors')}/{k.get('min_cluster_size')}"})
        return out

    def alt_params(self, name: str) -> str | None:
        """The other published parameter set for ``name`` (a key of :data:`PARAM_SETS`), or None."""
        key = self.knobs["collections"][name].get("alt_params")
        if key is not None and key not in PARAM_SETS:
            raise ValueError(f"{name}: alt_params {key!r} not in {sorted(PARAM_SETS)}")
        return key


def path_settings(profile: config.Config | str, n_pairs=None, temporal=None, investigate_lengths=None) -> PathSettings:
    """Resolve notebook 08's parameters against the run's configuration (:func:`judgelab.config.of`):
    ``n_pairs``, ``temporal`` (yes/no) and ``investigate_lengths`` (None: the profile's ``temporal`` /
    ``investigate_lengths``)."""
    cfg = config.of(profile)
    knobs = cfg.knobs("narrative")
    pairs = as_optional_int(n_pairs, name="N_PAIRS")
    if pairs is not None and pairs < 1:
        raise ValueError(f"N_PAIRS must be >= 1, got {pairs}")
    invest = (bool(knobs.get("investigate_lengths", False)) if is_unset(investigate_lengths)
              else as_bool(investigate_lengths, name="INVESTIGATE_LENGTHS"))
    temporal = bool(knobs["temporal"]) if is_unset(temporal) else as_bool(temporal, name="TEMPORAL")
    return PathSettings(cfg.profile, knobs, pairs, temporal, invest)


K_BY_COLLECTION: dict[str, int] = {"news": 5, "vispub": 3}
"""The paper's number of agents per collection (section 3.3)."""

DEFAULT_K = 3
"""K for a collection the paper did not judge."""


def k_for(collection: str, k: int | None) -> int:
    """The number of agents: ``k`` when given, else the paper's K for the collection."""
    if k is not None:
        if int(k) < 1:
            raise ValueError(f"K must be >= 1, got {k}")
        return int(k)
    return K_BY_COLLECTION.get(collection, DEFAULT_K)


def _agents(k) -> int | None:
    """``K``: a whole number >= 1, or None ("all": the paper's K per collection, or notebook 09's)."""
    n = as_optional_int(k, name="K")
    if n is not None and n < 1:
        raise ValueError(f"K: agents per narrative must be >= 1, got {k!r}")
    return n


def _modes(value, name: str) -> tuple[str, ...]:
    return tuple(check_mode(m) for m in as_list(value, name=name))


def judge_knobs(profile: config.Config | str, *, k=None, modes=None, n_pairs=None, explanations=None) -> dict:
    """Notebook 09's knobs with its overrides: ``k`` (:func:`_agents`), ``n_pairs`` a whole number
    ("all": every pair), ``modes`` a comma-separated list, ``explanations`` a yes/no word."""
    knobs = config.of(profile).knobs("narrative_judges")
    if not is_unset(k):
        knobs["k"] = _agents(k)
    if not is_unset(n_pairs):
        knobs["n_pairs"] = as_optional_int(n_pairs, name="N_PAIRS")
    if not is_unset(modes):
        knobs["modes"] = _modes(modes, "MODES")
    if not is_unset(explanations):
        knobs["explanations"] = as_bool(explanations, name="EXPLANATIONS")
    return knobs


def cost_ood_knobs(profile: config.Config | str, *, n_cost_sample=None, n_ood=None, n_perturbed=None, k=None,
                   ood_modes=None) -> dict:
    """Notebook 10's knobs with its overrides, and the joint landscape's ``jsd_base`` (notebook
    07's). ``n_cost_sample`` counts narratives, two per endpoint pair; ``n_perturbed`` may be
    "all"; ``k`` as :func:`_agents`; ``ood_modes`` a comma-separated list."""
    cfg = config.of(profile)
    knobs = cfg.knobs("cost_ood")
    if not is_unset(n_cost_sample):
        knobs["n_cost_pairs"] = max(1, _positive(n_cost_sample, "N_COST_SAMPLE") // 2)
    if not is_unset(n_ood):
        knobs["n_ood"] = _positive(n_ood, "N_OOD")
    if not is_unset(n_perturbed):
        knobs["n_perturbed"] = as_optional_int(n_perturbed, name="N_PERTURBED")
    if not is_unset(k):
        knobs["k"] = _agents(k)
    if not is_unset(ood_modes):
        knobs["ood_modes"] = _modes(ood_modes, "OOD_MODES")
    knobs["jsd_base"] = log_base(cfg["narrative.jsd_base"])
    return knobs


def _positive(value, name: str) -> int:
    n = as_optional_int(value, name=name, all_words=())
    if n is None or n < 1:
        raise ValueError(f"{name}: expected a whole number >= 1, got {value!r}")
    return n
