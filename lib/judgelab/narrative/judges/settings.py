"""Notebook 09's agents and the resolution of its overrides against ``[<profile>.narrative_judges]``
(``profiles.toml``)."""
from __future__ import annotations

from judgelab import profiles
from judgelab.narrative.judges.prompts import MODES, check_mode
from judgelab.params import as_bool, as_list, as_optional_int, is_unset

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


def resolve(profile: str, *, k=None, modes=None, n_pairs=None, explanations=None) -> dict:
    """The profile's knobs with a notebook's overrides applied (None or "default" = the profile's).

    Overrides may arrive as strings from ``python -m judgelab.pipeline -p NAME=VALUE``; they are
    parsed with :mod:`judgelab.params`: ``k`` a whole number >= 1 ("all": the paper's K per
    collection), ``n_pairs`` a whole number ("all": every pair), ``modes`` a comma-separated
    list, ``explanations`` a yes/no word (true/false, on/off, yes/no, 1/0).
    """
    knobs = profiles.knobs("narrative_judges", profile)
    if not is_unset(k):
        knobs["k"] = as_optional_int(k, name="K")
        if knobs["k"] is not None and knobs["k"] < 1:
            raise ValueError(f"K: agents per narrative must be >= 1, got {k!r}")
    if not is_unset(n_pairs):
        knobs["n_pairs"] = as_optional_int(n_pairs, name="N_PAIRS")
    if not is_unset(modes):
        knobs["modes"] = tuple(check_mode(m) for m in as_list(modes, name="MODES"))
    if not is_unset(explanations):
        knobs["explanations"] = as_bool(explanations, name="EXPLANATIONS")
    return knobs
