"""The statistics both studies and the appendix share (the "floor" under ``sage``, ``narrative``
and ``human``), shaped like pingouin: plain functions over arrays or long DataFrames named by
columns, an explicit ``nan_policy``, and one result row per estimate (with its CI where one
exists) carrying a ``note`` that says why a value is NaN.

- :mod:`~judgelab.stats.rules`: the one rule for small or degenerate input (minimums, notes,
  ``nan_policy``);
- :mod:`~judgelab.stats.effects`: Cohen's d (pooled and average SD), AUC, d from summaries;
- :mod:`~judgelab.stats.tests`: Student / Welch / paired t, Wilcoxon, Mann-Whitney, one-way
  ANOVA, Holm / Bonferroni over a stated family;
- :mod:`~judgelab.stats.reliability`: ICC (one pingouin adapter), Krippendorff's alpha,
  Kendall's W;
- :mod:`~judgelab.stats.agreement`: mean absolute deviation, exact / within-t agreement;
- :mod:`~judgelab.stats.correlation`: Pearson / Spearman / Kendall with Fisher-z or bootstrap CIs;
- :mod:`~judgelab.stats.bootstrap`: the seeded cluster bootstrap (percentile CIs of any statistics
  of clustered data, resampling units such as stories within strata), t and Wilson intervals.

Degeneracy is one rule everywhere (:mod:`~judgelab.stats.rules`): values within 1e-9 of the data's
scale are equal; multiple comparisons: :func:`judgelab.stats.tests.adjust` (Holm, Bonferroni) over
a family of stated size.

Import from the module that says what a function is (``from judgelab.stats.effects import
cohens_d``); the package re-exports nothing, so ``judgelab.stats.correlation`` is always the module.
"""
