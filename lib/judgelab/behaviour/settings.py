"""Knobs of notebook 12, one dict per profile (read with ``profiles.pick``).

Calls per profile (embedded model in smoke and demo; what ``make estimate`` prices in paper):

- ``smoke`` — recognition: the SAGE smoke story x 2 modes = 2 calls; planted (SAGE): 1 story x L4 x
  1 perturbation x (plain, hardened) + 1 hardened baseline = 3 calls (the plain baseline is notebook
  02's cached blind call); planted (narrative): 1 narrative x ``simple`` x the same 3 = 3 calls (the
  plain baseline is notebook 09's cached agent 0). 8 fresh calls: the SAGE ones send the story
  (about 700 tokens) and write up to 400, so they dominate (seconds each on an idle machine).
- ``demo`` — recognition: the 6 SAGE demo stories x 2 modes = 12; planted SAGE: 2 stories x L4 x
  2 perturbations x 2 + 1 = 5; planted narrative: 1 narrative x simple x (4 + 1) = 5. 22 fresh calls.
- ``paper`` — recognition: every SAGE paper story (100) x 2 = 200; planted SAGE: 30 stories (10 per
  category) x L4 x 25 = 750; planted narrative: 10 pairs x 2 methods x 2 collections x 4 modes x 25 =
  4,000 (the plain baselines, 30 + 160, are notebooks 02's and 09's cached calls).

Knobs:

- ``recognition_max_tokens``, ``guess_chars``: output budget and ``maxLength`` of the probe's guesses.
- ``planted_layer``: the SAGE layer whose blind validator call is perturbed.
- ``planted_per_category``: stories per category (taken in order from the SAGE run's selection).
- ``planted_pairs``: endpoint pairs per collection (from notebook 09's selection, in its order);
  ``planted_methods``: which of each pair's paths; ``planted_modes``: narrative modes (None = 09's).
- ``perturbations``: ids of :data:`judgelab.behaviour.planted.FAMILY` to use (None = all 12).
- ``harden``: also run every perturbation (and the baseline) hardened.
- ``temperature``, ``seed``, ``reasoning_effort``: the recognition probe's sampling (the planted calls
  keep SAGE's and notebook 09's own, so that their baselines are cache hits).
- ``n_boot``, ``boot_seed``: percentile bootstrap over the units (stories, narratives).
"""
from __future__ import annotations

from typing import Any

#: the demo's planted instructions: both directions, both disguises, two positions (ids of
#: ``behaviour.planted.FAMILY``), so that each direction's hardening contrast has a value
DEMO_PERTURBATIONS = ("raise-plain-start", "lower-editor-end")

BEHAVIOUR_PROFILES: dict[str, dict[str, Any]] = {
    "smoke": {
        "recognition_max_tokens": 96, "guess_chars": 40, "temperature": 0.0, "seed": 7, "reasoning_effort": None,
        "planted_layer": "L4", "planted_per_category": {"canonical": 1, "pulp": 0, "llm": 0},
        "planted_pairs": 1, "planted_methods": ("maxcap",), "planted_modes": ("simple",),
        "perturbations": ("raise-plain-start",), "harden": True,
        "n_boot": 500, "boot_seed": 12,
    },
    "demo": {
        # the fewest calls that fill each table: recognition on the SAGE demo stories, two planted
        # instructions (one raise, one lower) on one story and one narrative (simple mode), each
        # plain and hardened. A planted SAGE call re-reads its perturbed story (~15 s on one
        # thread), and notebook 12 is the last notebook of make all, so its calls add to the wall time
        # directly
        "recognition_max_tokens": 96, "guess_chars": 40, "temperature": 0.0, "seed": 7, "reasoning_effort": None,
        "planted_layer": "L4", "planted_per_category": {"canonical": 1, "pulp": 0, "llm": 0},
        "planted_pairs": 1, "planted_methods": ("maxcap",), "planted_modes": ("simple",),
        "perturbations": DEMO_PERTURBATIONS, "harden": True,
        "n_boot": 2000, "boot_seed": 12,
    },
    "paper": {
        "recognition_max_tokens": 2000, "guess_chars": 120, "temperature": None, "seed": 7, "reasoning_effort": "low",
        "planted_layer": "L4", "planted_per_category": {"canonical": 10, "pulp": 10, "llm": 10},
        "planted_pairs": 10, "planted_methods": ("maxcap", "random"), "planted_modes": None,
        "perturbations": None, "harden": True,
        "n_boot": 2000, "boot_seed": 12,
    },
}
