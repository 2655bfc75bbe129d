"""Knobs of the SAGE L4–L6 evaluations, one dict per profile (read with ``profiles.pick``).

``smoke`` — one story, both modes, text cut head+tail to ~400 tokens, terse evidence and notes:
each of notebooks 02–04 finishes in about a minute and a half on the embedded SmolLM2-135M.
``demo`` — two stories per category x both modes on the embedded model (6 stories), texts cut to
~400 tokens, short free-text fields; the anonymous-author run on one LLM story.
``paper`` — the paper's design: 50 canonical + 30 pulp + 20 LLM stories x both modes, full texts
(context policy ``error``: a text that does not fit is an error, never silently cut).

Knobs:

- ``per_category``: stories drawn per category (seeded, from the in-range stories first).
- ``modes``: ``content`` (text only) and/or ``title`` (title + author only).
- ``max_text_tokens``: budget for the story text in content mode, in tokens of the backend's own
  tokenizer (``Gateway.count_tokens``).
- ``context_policy``: ``"head_tail"`` keeps the head and the tail of a text longer than the budget
  and records ``truncated=True`` in the rows; ``"error"`` refuses such a text before any call.
- ``mask_title_in_body``: in content mode, mask every title part of two or more content words
  where it recurs in the story's body (``[withheld]``; :mod:`judgelab.sage.protocol.text_prep`);
  headings, bylines and the author's name are removed or masked either way. Off by default in
  every profile (``[withheld]`` appeared only in human stories, so the mask itself told
  the categories apart); on is a labelled sensitivity setting. Notebooks 02–04 can override it
  (``MASK_TITLE_IN_BODY``).
- ``anonymous_author``: title mode names the author as printed; for LLM stories that is the
  model ("by chatgpt-4o-..."), which discloses the category (stated in Table 9's notes). True
  sends "an unknown author" for every story instead (a sensitivity setting).
- ``anonymous_author_sensitivity``: after the main run, run title mode once more with
  ``anonymous_author=True`` for the same stories and write ``sage_rows_anonymous_<layer>``;
  notebook 05 reports it as Table 9's sensitivity rows (content vs title with "an unknown
  author"), so a reader sees whether the mode comparison rests on the model's name in the byline.
  Title-mode calls carry no text: in the paper profile they add ~2,100 short calls
  (priced by ``make estimate``). Notebooks 02–04 can turn it off (``ANONYMOUS_AUTHOR_SENSITIVITY``).
- ``anonymous_per_category``: stories per category of that sensitivity run (the first of the main
  run's, in its order); None = every story of the main run. The demo runs one LLM story, the
  one whose byline names its category (the model): what the sensitivity asks of it is shown by one
  content/title pair, not the whole design.
- ``max_tokens``: output budget per reply; ``evidence_chars`` / ``note_chars``: ``maxLength`` of
  the evidence string per dimension and of the free-text notes (the llama.cpp grammar enforces
  ``maxLength``, so small values keep replies short and fast); ``reasoning_chars``: ``maxLength``
  of each dimension's Round 1 reasoning (sage-v5, the paper's per-dimension R1 reasoning; four
  per reply, so smoke and demo keep it short: the 135M model writes ~100 tokens/s).
- ``temperature``, ``seed``: sampling (reasoning models get ``reasoning_effort`` instead). Smoke
  decodes greedily; greedy decoding makes the 135M model pick the first value of the score enum
  (1.0) for everything, so demo samples at 0.7 (seeded, and cached) to give the statistics
  notebooks scores with some spread to work on — they are still near random.
- ``convergence_threshold``: |R5 - R4| below which a dimension counts as converged (paper: 0.3).
- ``agreement_threshold``: evaluator-validator difference flagged for review (paper: 0.5).
- ``concurrency``: evaluations run at once (None = the gateway's default for the backend).
"""
from __future__ import annotations

from typing import Any

LAYERS: tuple[str, ...] = ("L4", "L5", "L6")
MODES: tuple[str, ...] = ("content", "title")
CATEGORIES: tuple[str, ...] = ("canonical", "pulp", "llm")
CONTEXT_POLICIES: tuple[str, ...] = ("head_tail", "error")

SAGE_PROFILES: dict[str, dict[str, Any]] = {
    "smoke": {
        "per_category": {"canonical": 1, "pulp": 0, "llm": 0},
        "modes": ("content", "title"),
        # the smallest sizes that still exercise every path (a cut text, every field): what the
        # smoke run costs is generation (make test runs notebooks 02-04 in it)
        "max_text_tokens": 400,
        "context_policy": "head_tail",
        "mask_title_in_body": False,
        "anonymous_author": False,
        "anonymous_author_sensitivity": True,
        "anonymous_per_category": None,
        "max_tokens": 400,
        "evidence_chars": 24,
        "note_chars": 32,
        "reasoning_chars": 16,
        "temperature": 0.0,
        "seed": 7,
        "selection_seed": 11,
        "convergence_threshold": 0.3,
        "agreement_threshold": 0.5,
        "concurrency": None,
        "reasoning_effort": None,
    },
    "demo": {
        # Two stories per category, the fewest for which Table 11's SDs, t-tests and d are defined:
        # 12 evaluations x 7 calls per layer, each call ~7 s on one thread beside another notebook
        # (it processes the last reply and the next round's instruction, ~330 tokens, and writes
        # ~180, most of them the reply's fixed JSON); two of the three layer notebooks run one after
        # the other before notebook 12, so their calls set make all's time. What keeps it inside 30
        # minutes: the anonymous-author run on the one story whose byline names its category (an
        # LLM story; a single pair, so its rows give the difference and say why no test), short
        # evidence, notes and R1 reasoning (what the model samples), the story cut head+tail to
        # 400 tokens (the first call of each story prefills it). Also: the sage-v4 layout
        # (the story before the layer, its KV state kept across layers), the decoding of
        # gateway/backends/, two notebooks at a time with one llama.cpp thread each (Makefile).
        "per_category": {"canonical": 2, "pulp": 2, "llm": 2},
        "modes": ("content", "title"),
        "max_text_tokens": 400,
        "context_policy": "head_tail",
        "mask_title_in_body": False,
        "anonymous_author": False,
        "anonymous_author_sensitivity": True,
        "anonymous_per_category": {"canonical": 0, "pulp": 0, "llm": 1},
        "max_tokens": 400,
        "evidence_chars": 16,
        "note_chars": 16,
        "reasoning_chars": 8,
        "temperature": 0.7,
        "seed": 7,
        "selection_seed": 11,
        "convergence_threshold": 0.3,
        "agreement_threshold": 0.5,
        "concurrency": None,
        "reasoning_effort": None,
    },
    "paper": {
        "per_category": {"canonical": 50, "pulp": 30, "llm": 20},
        "modes": ("content", "title"),
        "max_text_tokens": 100_000,
        "context_policy": "error",
        "mask_title_in_body": False,
        "anonymous_author": False,
        "anonymous_author_sensitivity": True,
        "anonymous_per_category": None,
        "max_tokens": 16_000,
        "evidence_chars": 400,
        "note_chars": 600,
        "reasoning_chars": 400,
        "temperature": None,
        "seed": 7,
        "selection_seed": 11,
        "convergence_threshold": 0.3,
        "agreement_threshold": 0.5,
        "concurrency": None,
        "reasoning_effort": "medium",
    },
}


INDEPENDENCE_PROFILES: dict[str, dict[str, Any]] = {
    # n_permutations: label permutations of the test whether L1-L3 features alone separate the
    # categories (notebook 06, ``independence.classify_category_cv``); 0 skips the test (smoke).
    "smoke": {"n_permutations": 0},
    "demo": {"n_permutations": 100},
    "paper": {"n_permutations": 100},
}
