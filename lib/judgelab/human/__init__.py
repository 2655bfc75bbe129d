"""Judges against people: human-rated story sets and the comparison of a judge with them
(appendix notebook ``11_judge_vs_human``).

The data sets are *A Confederacy of Models* (:mod:`~judgelab.human.confederacy`) and *Art or
Artifice* (:mod:`~judgelab.human.artifice`). Every loader returns the same tidy table, one row per
single human rating::

    dataset, story, source, criterion, rater, value
"""

TIDY_COLUMNS: tuple[str, ...] = ("dataset", "story", "source", "criterion", "rater", "value")
"""Columns of the tidy human-ratings table returned by every loader."""
