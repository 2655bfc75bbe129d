"""Knobs of the appendix notebook 11 (judges against people), one dict per profile.

``smoke`` — the 2 shortest Confederacy stories (59 and 79 words), a score-only holistic reply on
both and the SAGE L5 content-limit evaluation (7 calls, SAGE's smoke knobs) on the shortest one:
a few minutes on the embedded SmolLM2-135M (~2.5 CPU-minutes measured). Two stories give no
correlation (n < 3): the tables say so with NaN and a status.
``demo`` — 13 Confederacy stories (one per source) and 3 Art-or-Artifice stories (one per
model), seeded, on the embedded model; the SAGE L5 evaluation on 3 of them (21 calls, the fewest
with a correlation).
``paper`` — every rated story with text: 65 Confederacy + 36 Art-or-Artifice.

Knobs: ``n_stories`` per data set; ``selection`` (``shortest`` or ``random``, stratified by
source, see :func:`judgelab.human.select.select_stories`); ``selection_seed``;
``holistic_max_tokens``, ``holistic_reason_chars`` (None = score only),
``holistic_reasoning_effort`` (sent to reasoning models only; paper: medium, as SAGE's
gpt-5-mini), ``temperature``, ``seed``;
``sage_layer``/``sage_mode`` (the SAGE evaluation run on the stories; the SAGE protocol's own
knobs come from ``judgelab.sage.settings.SAGE_PROFILES`` of the same profile);
``sage_max_stories`` (None = every judged story; smoke: the first one only, as SAGE costs 7 calls
per story);
``n_boot``, ``ci``, ``boot_seed`` for the bootstrap.
"""
from __future__ import annotations

from typing import Any

DATASETS: tuple[str, ...] = ("confederacy", "artifice")

HUMAN_PROFILES: dict[str, dict[str, Any]] = {
    "smoke": {
        "n_stories": {"confederacy": 2, "artifice": 0},
        "selection": "shortest",
        "selection_seed": 11,
        "holistic_max_tokens": 16,
        "holistic_reason_chars": None,
        "holistic_reasoning_effort": None,
        "temperature": 0.0,
        "seed": 7,
        "sage_layer": "L5",
        "sage_mode": "content",
        "sage_max_stories": 1,
        "n_boot": 500,
        "ci": 0.95,
        "boot_seed": 2024,
    },
    "demo": {
        "n_stories": {"confederacy": 13, "artifice": 3},
        "selection": "random",
        "selection_seed": 11,
        "holistic_max_tokens": 16,
        "holistic_reason_chars": None,
        "holistic_reasoning_effort": None,
        "temperature": 0.0,
        "seed": 7,
        "sage_layer": "L5",
        "sage_mode": "content",
        "sage_max_stories": 3,  # SAGE costs 7 calls a story; 3, the fewest with a correlation
        "n_boot": 2000,
        "ci": 0.95,
        "boot_seed": 2024,
    },
    "paper": {
        "n_stories": {"confederacy": 65, "artifice": 36},
        "selection": "random",
        "selection_seed": 11,
        "holistic_max_tokens": 4000,
        "holistic_reason_chars": 300,
        "holistic_reasoning_effort": "medium",
        "temperature": None,
        "seed": 7,
        "sage_layer": "L5",
        "sage_mode": "content",
        "sage_max_stories": None,
        "n_boot": 5000,
        "ci": 0.95,
        "boot_seed": 2024,
    },
}
