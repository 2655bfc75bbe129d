"""The statistics both studies and the appendix share (the "floor" under ``sage``, ``narrative``
and ``human``), shaped like pingouin: plain functions over arrays or long DataFrames named by
columns, an explicit ``nan_policy``, and one result row per estimate (with its CI where one
exists) carrying a ``note`` that says why a value is NaN. :mod:`~judgelab.stats.rules` is the one
rule for small or degenerate input; :func:`judgelab.stats.tests.adjust` the one Holm / Bonferroni /
BH entry point; :mod:`~judgelab.stats.intervals` the one Wilson, t and percentile bootstrap
interval; :mod:`~judgelab.stats.bootstrap` and :mod:`~judgelab.stats.resampling` the cluster
bootstraps (of a DataFrame; by resampling weights, vectorised).

No study module writes its own copy of these (``tests/test_stats_floor.py`` checks it); the one
exception is :mod:`judgelab.claims.intervals`, which recomputes the scorecard's intervals from
summary numbers, vectorised over the power simulation's draws.

Import from the module that says what a function is (``from judgelab.stats.effects import
cohens_d``); the package re-exports nothing, so ``judgelab.stats.correlation`` is always the module.
"""
