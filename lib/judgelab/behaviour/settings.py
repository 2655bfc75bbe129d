"""Knobs of notebook 12, one dict per profile (read with ``profiles.pick``).

Fresh calls per profile (embedded model in smoke and demo; what ``make estimate`` prices in paper).
A SAGE-sized call sends a story (~700 tokens) and writes up to 400 (~15 s in the demo); a
recognition, cloze or narrative call is short. Baselines are notebooks 02's and 09's cached calls.

- ``smoke`` (every path once) -- recognition: 1 story x 2 modes + 1 invented work + 1 cloze = 4;
  planted SAGE: 1 story x (neutral, raise, lower, 1 repeat) = 4; planted narrative: 1 narrative x
  simple x (2 neutrals + 3 instructions, the same 5 hardened + the hardened baseline, 1 repeat) =
  12; length: 1 story x 2 fractions = 2. 22 calls, 6 of them SAGE-sized.
- ``demo`` -- recognition: 6 stories x 2 modes + 2 invented works + 6 cloze = 20; planted SAGE:
  2 stories x (neutral, raise, 1 repeat) = 6; planted narrative: 2 narratives x simple x 12 = 24;
  length: 2 stories x 2 fractions = 4. 54 fresh calls (22 before these controls), 10 SAGE-sized (5
  before): about 2 minutes more.
- ``paper`` -- recognition: 100 stories x 2 + 20 invented + 100 cloze = 320; planted SAGE: 30
  stories x (12 neutrals + 24 instructions, all hardened too, + the hardened baseline, 2 repeats)
  = 30 x 75 = 2,250; planted narrative: 160 narrative x mode cells x 75 = 12,000; length: 30 x 2 = 60.

Knobs:

- ``recognition_max_tokens``, ``guess_chars``: output budget and ``maxLength`` of the probe's guesses.
- ``fabricated``: invented works (title and author made up in code) shown in title mode: the
  false-claim control of the title probe.
- ``cloze_words``, ``cloze_opening_words``, ``cloze_max_tokens``: the continuation probe: the
  story's first ``cloze_opening_words`` words given, the next ``cloze_words`` asked for.
- ``planted_layer``: the SAGE layer whose blind validator call is perturbed (and cut or padded).
- ``planted_per_category``: stories per category (taken in order from the SAGE run's selection).
- ``planted_pairs``: endpoint pairs per collection (from notebook 09's selection, in its order);
  ``planted_methods``: which of each pair's paths; ``planted_modes``: narrative modes (None = 09's).
- ``perturbations``: per study, ids of :data:`judgelab.behaviour.planted.FAMILY` (None = all 24);
  each gets the neutral control of its disguise and place.
- ``harden``: the studies that also run every arm hardened.
- ``noise_repeats``: repeats of the unperturbed request (fresh draws: seed + r) for the noise floor.
- ``length_fractions``: the story cut (< 1) or padded with its own paragraphs (> 1) to these
  fractions of its words as sent.
- ``temperature``, ``seed``, ``reasoning_effort``: the recognition and cloze probes' sampling (the
  planted and length calls keep SAGE's and notebook 09's own, so that their baselines are cache hits).
- ``n_boot``, ``boot_seed``: cluster bootstrap over the units (stories, endpoint pairs).
"""
from __future__ import annotations

from typing import Any

#: narrative arms of smoke and demo: raise and lower at one place (the contrast), and the held-out
#: fence-escape attack (hardening out of sample); SAGE's calls are slow, so SAGE runs raise only in demo
NARR_PERTURBATIONS = ("raise-plain-start", "lower-plain-start", "raise-fence-start")

BEHAVIOUR_PROFILES: dict[str, dict[str, Any]] = {
    "smoke": {
        "recognition_max_tokens": 96, "guess_chars": 40, "temperature": 0.0, "seed": 7, "reasoning_effort": None,
        "fabricated": 1,  # invented works in the title probe
        "cloze_opening_words": 60, "cloze_words": 12, "cloze_max_tokens": 64,  # the continuation probe
        "planted_layer": "L4", "planted_per_category": {"canonical": 1, "pulp": 0, "llm": 0},
        "planted_pairs": 1, "planted_methods": ("maxcap",), "planted_modes": ("simple",),
        "perturbations": {"sage": ("raise-plain-start", "lower-plain-start"), "narrative": NARR_PERTURBATIONS},
        "harden": ("narrative",),  # studies with the hardened arm
        "noise_repeats": 1,  # fresh repeats of the unperturbed request
        "length_fractions": (0.5, 1.5),  # cut to half, padded to one and a half
        "n_boot": 500, "boot_seed": 12,
    },
    "demo": {
        # the fewest calls that fill each table (two units each, so that intervals exist): a SAGE
        # call re-reads its story (~15 s on one thread) and notebook 12 is the last notebook of make
        # all, so SAGE runs raise + neutral + one repeat and the cut and padded story; the short
        # narrative calls carry lower, the contrast, hardening and the held-out fence escape
        "recognition_max_tokens": 96, "guess_chars": 40, "temperature": 0.0, "seed": 7, "reasoning_effort": None,
        "fabricated": 2,  # invented works in the title probe
        "cloze_opening_words": 60, "cloze_words": 12, "cloze_max_tokens": 64,  # the continuation probe
        "planted_layer": "L4", "planted_per_category": {"canonical": 1, "pulp": 0, "llm": 1},
        "planted_pairs": 2, "planted_methods": ("maxcap",), "planted_modes": ("simple",),
        "perturbations": {"sage": ("raise-plain-start",), "narrative": NARR_PERTURBATIONS},
        "harden": ("narrative",),  # studies with the hardened arm
        "noise_repeats": 1,  # fresh repeats of the unperturbed request
        "length_fractions": (0.5, 1.5),  # cut to half, padded to one and a half
        "n_boot": 2000, "boot_seed": 12,
    },
    "paper": {
        "recognition_max_tokens": 2000, "guess_chars": 120, "temperature": None, "seed": 7, "reasoning_effort": "low",
        "planted_layer": "L4", "planted_per_category": {"canonical": 10, "pulp": 10, "llm": 10},
        "planted_pairs": 10, "planted_methods": ("maxcap", "random"), "planted_modes": None,
        "fabricated": 20,  # invented works in the title probe
        "cloze_opening_words": 60, "cloze_words": 12, "cloze_max_tokens": 2000,  # the continuation probe
        "perturbations": {"sage": None, "narrative": None},
        "harden": ("sage", "narrative"),  # studies with the hardened arm
        "noise_repeats": 2,  # fresh repeats of the unperturbed request
        "length_fractions": (0.5, 1.5),  # cut to half, padded to one and a half
        "n_boot": 2000, "boot_seed": 12,
    },
}
