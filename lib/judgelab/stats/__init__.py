"""The statistics both studies and the appendix share (the "floor" under ``sage``, ``narrative``
and ``human``), shaped like pingouin: plain functions over arrays or long DataFrames named by
columns, an explicit ``nan_policy``, and one result row per estimate (with its CI where one
exists) carrying a ``note`` that says why a value is NaN.

- :mod:`~judgelab.stats.rules`: the one rule for small or degenerate input (minimums, notes,
  ``nan_policy``, one tolerance: values within ``REL_TOL`` = 1e-9 of the data's scale are equal);
- :mod:`~judgelab.stats.effects`: Cohen's d (pooled and average SD), AUC, d from summaries;
- :mod:`~judgelab.stats.tests`: Student / Welch / paired t, Wilcoxon, Mann-Whitney, one-way
  ANOVA, and :func:`~judgelab.stats.tests.adjust`, the one Holm / Bonferroni / BH entry point;
- :mod:`~judgelab.stats.reliability`: ICC (one pingouin adapter), Krippendorff's alpha,
  Kendall's W;
- :mod:`~judgelab.stats.agreement`: mean absolute deviation, exact / within-t agreement;
- :mod:`~judgelab.stats.correlation`: Pearson / Spearman / Kendall with Fisher-z or bootstrap CIs;
- :mod:`~judgelab.stats.intervals`: intervals of independent units -- the one Wilson interval of
  a share, the t interval of a mean, the percentile bootstrap of a mean or a difference (scipy);
- :mod:`~judgelab.stats.bootstrap`: the seeded cluster bootstrap of any statistics of a DataFrame
  (units such as stories resampled within strata);
- :mod:`~judgelab.stats.resampling`: the cluster bootstrap by resampling weights, statistics
  vectorised over the resamples (the narrative study's endpoint pairs).

No study module writes its own copy of these (``tests/test_stats_floor.py`` checks it); the one
exception is :mod:`judgelab.claims.intervals`, which recomputes the scorecard's intervals from
summary numbers, vectorised over the power simulation's draws.

Import from the module that says what a function is (``from judgelab.stats.effects import
cohens_d``); the package re-exports nothing, so ``judgelab.stats.correlation`` is always the module.
"""
