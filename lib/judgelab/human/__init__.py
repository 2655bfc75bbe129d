"""Judges against people: human-rated story sets and the comparison of a judge with them.

Modules (appendix notebook ``11_judge_vs_human``):

- :mod:`~judgelab.human.locate` — where the two data sets are (``data/raw`` first, then
  ``$DATA_MIRROR``).
- :mod:`~judgelab.human.confederacy` — *A Confederacy of Models* (Gómez-Rodríguez & Williams,
  Findings of EMNLP 2023): 65 stories rated by 10 people on 10 criteria (xlsx + de-anonymisation).
- :mod:`~judgelab.human.artifice` — *Art or Artifice* (Chakrabarty et al., CHI 2024): 48 stories,
  14 Torrance tests (TTCW), 3 expert Yes/No verdicts each.
- :mod:`~judgelab.human.reliability` — inter-rater reliability among the humans (ICC,
  Krippendorff's alpha, leave-one-rater-out correlation): the ceiling for any judge.
- :mod:`~judgelab.human.compare` — rank correlation of a judge with the mean human rating, with
  bootstrap confidence intervals; per-source rankings by people and by the judge.
- :mod:`~judgelab.human.holistic` — the short holistic 1–10 judge (``prompts/human/holistic.md``).

Every loader returns the same tidy table, one row per single human rating::

    dataset, story, source, criterion, rater, value
"""

TIDY_COLUMNS: tuple[str, ...] = ("dataset", "story", "source", "criterion", "rater", "value")
"""Columns of the tidy human-ratings table returned by every loader."""
