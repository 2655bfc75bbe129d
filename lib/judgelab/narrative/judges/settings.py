"""Knobs of the narrative judge experiment (notebook 09), keyed by profile.

Read with :func:`resolve` (the profile's knobs with notebook 09's overrides).

- ``n_pairs``: endpoint pairs judged per collection (each gives a max-capacity and a random path,
  so 2 x n_pairs narratives); None = every pair notebook 08 wrote (the paper: 200 news, 100
  VisPub, section 3.2).
- ``k``: agents per narrative and mode; None = the paper's per-collection K
  (:data:`K_BY_COLLECTION`: 5 for news, 3 for VisPub, section 3.3).
- ``temperature_range``: the agents' temperatures are spread evenly over it (paper: 0.3 to 0.7).
- ``max_tokens``: output budget per mode. The smoke profile's tiny budgets and short CoT
  reasoning (``reasoning_chars``) make notebook 09 finish in about two minutes on the bundled
  135M model; the JSON grammar still guarantees a parseable score whenever the budget suffices.
- ``explanations``: ask for the optional explanation fields (paper: off).
- ``seed``: base seed; agent j uses ``seed + j`` and the pair selection uses ``seed``.
"""
from __future__ import annotations

from judgelab import profiles
from judgelab.narrative.judges.prompts import MODES, check_mode
from judgelab.params import as_bool, as_list, as_optional_int, is_unset

K_BY_COLLECTION: dict[str, int] = {"news": 5, "vispub": 3}
"""The paper's number of agents per collection (section 3.3)."""

DEFAULT_K = 3
"""K for a collection the paper did not judge."""

JUDGE_PROFILES: dict[str, dict] = {
    "smoke": {
        "n_pairs": 2, "k": 2, "modes": MODES, "temperature_range": (0.3, 0.7),
        "max_tokens": {"simple": 24, "cot": 110, "standard": 72, "complex": 104},
        "reasoning_chars": 40, "explanations": False, "seed": 2025, "concurrency": 1,
    },
    "demo": {
        # 4 pairs x 2 methods x 4 modes x 2 agents = 64 calls (a paired effect with 4 units, an
        # agreement over 2 agents); CoT reasoning of 120 characters keeps generation short
        "n_pairs": 4, "k": 2, "modes": MODES, "temperature_range": (0.3, 0.7),
        "max_tokens": {"simple": 32, "cot": 200, "standard": 96, "complex": 128},
        "reasoning_chars": 120, "explanations": False, "seed": 2025, "concurrency": 1,
    },
    "paper": {
        "n_pairs": None, "k": None, "modes": MODES, "temperature_range": (0.3, 0.7),
        "max_tokens": {"simple": 64, "cot": 800, "standard": 160, "complex": 224},
        "reasoning_chars": 600, "explanations": False, "seed": 2025, "concurrency": None,
    },
}


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
    knobs = profiles.pick(JUDGE_PROFILES, profile)
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
