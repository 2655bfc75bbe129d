"""The statistics both studies and the appendix share (the "floor" under ``sage``, ``narrative``
and ``human``), shaped like pingouin: plain functions over arrays or long DataFrames named by
columns, an explicit ``nan_policy``, and one result row per estimate (with its CI where one
exists) carrying a ``note`` that says why a value is NaN. :mod:`~judgelab.stats.rules` is the one
rule for small or degenerate input; :func:`judgelab.stats.tests.adjust` the one Holm / Bonferroni /
BH entry point; :mod:`~judgelab.stats.intervals` the one Wilson and t interval (of values or of
summary numbers); :func:`judgelab.stats.bootstrap.bootstrap` the one bootstrap (its ``method``
says what is resampled: independent units, pairs, clusters of a DataFrame, clusters as weights)
with one NaN rule (:func:`judgelab.stats.bootstrap.percentile_ci`: no interval when fewer than half
the resamples are valid); :mod:`~judgelab.stats.resampling` the vectorised statistics of weighted
resamples.

No module outside this package writes its own copy of these, with no exception: the claims
scorecard's intervals from summary numbers (:mod:`judgelab.claims.intervals`) call the floor's
vectorised forms (:func:`~judgelab.stats.intervals.t_interval_from_summary`,
:func:`~judgelab.stats.correlation.fisher_z_ci`, :func:`~judgelab.stats.reliability.icc2_1`, ...).
``tests/test_stats_floor.py`` checks it, by name and by formula.

Import from the module that says what a function is (``from judgelab.stats.effects import
cohens_d``); the package re-exports nothing, so ``judgelab.stats.correlation`` is always the module.
"""
