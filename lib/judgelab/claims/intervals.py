"""95% intervals for the scorecard's statistic kinds, from summary numbers; vectorised, so that
the power simulation (:mod:`judgelab.claims.power`) computes its intervals with the very same code.
Every formula lives on the statistics floor (:mod:`judgelab.stats`); this module maps each kind
to the floor's function.

Kinds (``kind`` in ``claims.yaml``) and their methods (:data:`METHODS`):

``proportion``   k successes of n: Wilson score interval.
``mean``         one mean with its SD and n: Student t.
``paired_diff``  mean of n paired differences with their SD: Student t (the paired t-test's CI).
``mean_diff``    two independent groups' means, SDs, sizes: pooled-SD Student t (as the SAGE
                 paper's independent-samples t-tests), with its two-sided p.
``cohens_d``     Cohen's d of two groups of n1 and n2: normal approximation with the
                 Hedges–Olkin SE, sqrt((n1 + n2) / (n1 n2) + d² / (2 (n1 + n2))).
``auc``          AUC-ROC of n1 positives and n2 negatives: Hanley–McNeil SE, clipped to [0, 1].
``correlation``  Pearson r over n pairs: Fisher z.
``icc``          from summary numbers: ICC(1) of n targets by k raters from its F ratio (Shrout &
                 Fleiss 1979), a stand-in for ICC(2,1) when the raters have no systematic offsets;
                 from scores (the power simulation): ICC(2,1) itself, :func:`icc2_1`.
``ratio``        a ratio of two independent means (m1, s1, n1) / (m2, s2, n2): delta method on the
                 log ratio.
"""
from __future__ import annotations

import numpy as np
from scipy import stats

from judgelab.stats import correlation as floor_correlation
from judgelab.stats import effects, reliability
from judgelab.stats.intervals import (pooled_t_from_summary, proportion_ci, ratio_ci,
                                      t_interval_from_summary)

Z95 = float(stats.norm.ppf(0.975))

METHODS = {
    "proportion": "Wilson score",
    "mean": "Student t",
    "paired_diff": "paired Student t",
    "mean_diff": "pooled-SD Student t",
    "cohens_d": "normal approx., Hedges-Olkin SE",
    "auc": "Hanley-McNeil SE",
    "correlation": "Fisher z",
    "icc": "F-ratio (Shrout & Fleiss), ICC(1)",
    "ratio": "delta method on the log ratio",
}
KINDS = tuple(METHODS)
#: The fewest units (per group, for two groups) at which the scorecard computes a kind's interval
#: from summary numbers. Below it the interval would rest wholly on a distributional assumption
#: that so few units cannot check (a Student t on two latencies spans hundreds of seconds; a
#: normal d or AUC interval needs groups of several): the scorecard says "too few units" instead.
#: Wilson's interval is valid for any n >= 1.
MIN_UNITS = {"proportion": 1, "mean": 5, "paired_diff": 5, "mean_diff": 5, "cohens_d": 5, "auc": 5,
             "correlation": 5, "icc": 5, "ratio": 5}


def proportion(k, n):
    """(estimate, low, high): Wilson score interval of k successes in n trials."""
    return proportion_ci(k, n)


def mean(m, sd, n):
    """(estimate, low, high): Student-t interval of a mean (:func:`judgelab.stats.intervals.t_interval_from_summary`)."""
    return t_interval_from_summary(m, sd, n)


paired_diff = mean  # the CI of a mean of paired differences is a one-sample t interval


def mean_diff(m1, s1, n1, m2, s2, n2):
    """(m1 - m2, low, high, p): pooled-SD Student t interval and two-sided p
    (:func:`judgelab.stats.intervals.pooled_t_from_summary`)."""
    return pooled_t_from_summary(m1, s1, n1, m2, s2, n2)


def cohens_d(d, n1, n2):
    """(d, low, high): normal interval with the Hedges–Olkin standard error
    (:func:`judgelab.stats.effects.cohens_d_ci`)."""
    return effects.cohens_d_ci(d, n1, n2)


def auc(a, n1, n2):
    """(AUC, low, high): Hanley & McNeil (1982) standard error, interval clipped to [0, 1]
    (:func:`judgelab.stats.effects.auc_ci`)."""
    return effects.auc_ci(a, n1, n2)


def correlation(r, n):
    """(r, low, high): Fisher-z interval (needs n ≥ 4; :func:`judgelab.stats.correlation.fisher_z_ci`)."""
    r = np.asarray(r, float)
    # an r of exactly -+1 (a paper's rounded value) gets the interval of 0.999999, not [1, 1]
    lo, hi = floor_correlation.fisher_z_ci(np.clip(r, -0.999999, 0.999999), n)
    return np.where(np.asarray(n, float) < 4, np.nan, r * np.ones_like(lo)), lo, hi


def icc_from_f(f, n, k):
    """(ICC(1), low, high) from the one-way ANOVA F = MS_between / MS_within of n targets, k raters
    (:func:`judgelab.stats.reliability.icc_from_f`)."""
    return reliability.icc_from_f(f, n, k)


def icc2_1(scores):
    """(ICC(2,1), low, high) of a (..., n targets, k raters) array: the ICC of the narrative
    paper's Table 3, vectorised for the power simulation (:func:`judgelab.stats.reliability.icc2_1`)."""
    return reliability.icc2_1(scores)


def ratio(m1, s1, n1, m2, s2, n2):
    """(m1 / m2, low, high): delta method on log(m1 / m2), both means positive
    (:func:`judgelab.stats.intervals.ratio_ci`)."""
    return ratio_ci(m1, s1, n1, m2, s2, n2)
