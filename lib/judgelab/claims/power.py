"""How many units a run needs: the smallest n at which a claim's own verdict rule returns
``reproduced`` with 80% probability when the truth is the paper's value, by seeded simulation.

The data are drawn from the paper's reported effect with a spread taken either from the paper's
own SDs (where it gives them) or from the variance this run measured; each simulated data set
goes through the same interval code as the scorecard (:mod:`judgelab.claims.intervals`) and the
same rule (:func:`judgelab.claims.verdicts.decide`). For a directional rule this is the classical
power of the test at the paper's α (tests check it against statsmodels' analytic t-test power);
for a value rule it is the chance that the CI lies within the claim's margin of the paper's value;
for a bound it is the chance that the whole CI lies above (below) the bound less (plus) the margin.

Truth parameters by kind (``n`` is always the total number of units of the claim):

``proportion``   ``p``
``mean`` / ``paired_diff``  ``mean``, ``sd``
``mean_diff``    ``delta`` (group a - group b), ``sd_a``, ``sd_b``, ``share_a`` (a's share of n)
``cohens_d``     ``d``, ``share_a``
``correlation``  ``r``
``icc``          ``icc`` (ICC(2,1)), ``k`` (raters per target), ``rater_share`` (the raters' offsets'
                 share of the variance; default 0)
"""
from __future__ import annotations

import math

import numpy as np

from judgelab.claims import intervals
from judgelab.claims.verdicts import REPRODUCED, decide

TARGET_POWER = 0.8
SIM_KINDS = ("proportion", "mean", "paired_diff", "mean_diff", "cohens_d", "correlation", "icc")


def _groups(n: int, share_a: float) -> tuple[int, int]:
    n_a = min(max(int(round(n * share_a)), 2), n - 2)  # two per group at least: an SD needs two
    return n_a, n - n_a


def simulate(kind: str, truth: dict, n: int, n_sim: int, rng: np.random.Generator) -> dict:
    """``n_sim`` data sets of ``n`` units drawn from ``truth``: arrays ``est``, ``lo``, ``hi``, ``p``."""
    p = np.full(n_sim, np.nan)
    if kind == "proportion":
        est, lo, hi = intervals.proportion(rng.binomial(n, truth["p"], n_sim), n)
    elif kind in ("mean", "paired_diff"):
        x = rng.normal(truth["mean"], truth["sd"], (n_sim, n))
        est, lo, hi = intervals.mean(x.mean(1), x.std(1, ddof=1), n)
    elif kind in ("mean_diff", "cohens_d"):
        n_a, n_b = _groups(n, truth.get("share_a", 0.5))
        if kind == "mean_diff":
            sd_a, sd_b, delta = truth["sd_a"], truth["sd_b"], truth["delta"]
        else:
            sd_a = sd_b = 1.0
            delta = truth["d"]
        a = rng.normal(delta, sd_a, (n_sim, n_a))
        b = rng.normal(0.0, sd_b, (n_sim, n_b))
        ma, sa, mb, sb = a.mean(1), a.std(1, ddof=1), b.mean(1), b.std(1, ddof=1)
        est, lo, hi, p = intervals.mean_diff(ma, sa, n_a, mb, sb, n_b)
        if kind == "cohens_d":
            sp = np.sqrt(((n_a - 1) * sa ** 2 + (n_b - 1) * sb ** 2) / (n_a + n_b - 2))
            est, lo, hi = intervals.cohens_d((ma - mb) / sp, n_a, n_b)
    elif kind == "correlation":
        r = truth["r"]
        x = rng.standard_normal((n_sim, n))
        y = r * x + math.sqrt(1 - r ** 2) * rng.standard_normal((n_sim, n))
        xc, yc = x - x.mean(1, keepdims=True), y - y.mean(1, keepdims=True)
        rr = (xc * yc).sum(1) / np.sqrt((xc ** 2).sum(1) * (yc ** 2).sum(1))
        est, lo, hi = intervals.correlation(rr, n)
    elif kind == "icc":
        # raters x items, two-way: a target effect, an offset per rater (share ``rater_share`` of the
        # variance, 0 unless the truth says), an error; read as ICC(2,1), the statistic of the claim
        rho, k, r = truth["icc"], int(truth["k"]), truth.get("rater_share", 0.0)
        target = rng.normal(0, math.sqrt(rho), (n_sim, n, 1))
        rater = rng.normal(0, math.sqrt(r), (n_sim, 1, k))
        error = rng.normal(0, math.sqrt(max(1 - rho - r, 0.0)), (n_sim, n, k))
        est, lo, hi = intervals.icc2_1(target + rater + error)
    else:
        raise ValueError(f"no simulator for kind {kind!r} (simulated: {', '.join(SIM_KINDS)})")
    return {"est": np.asarray(est), "lo": np.asarray(lo), "hi": np.asarray(hi), "p": p}


def power_at(kind: str, truth: dict, rule: dict, paper_value: float | None, n: int, *,
             n_sim: int = 1000, seed: int = 0) -> float:
    """The share of ``n_sim`` simulated runs of ``n`` units whose verdict is ``reproduced``."""
    rng = np.random.default_rng([seed, n])
    sims = simulate(kind, truth, n, n_sim, rng)
    hits = 0
    for est, lo, hi, p in zip(sims["est"], sims["lo"], sims["hi"], sims["p"]):
        v = decide(rule, paper_value=paper_value, estimate=float(est), ci_low=float(lo), ci_high=float(hi),
                   p=None if np.isnan(p) else float(p))
        hits += v.verdict == REPRODUCED
    return hits / n_sim


def n_required(kind: str, truth: dict, rule: dict, paper_value: float | None, *, power: float = TARGET_POWER,
               n_min: int = 5, n_max: int = 20000, n_sim: int = 1000, seed: int = 0) -> float:
    """The smallest n in [n_min, n_max] with :func:`power_at` ≥ ``power`` (doubling, then bisection;
    the simulated power is not exactly monotone in n, so the answer carries Monte-Carlo error);
    ``inf`` when even ``n_max`` units fall short (e.g. a CI that can never cover the paper's value)."""
    def ok(n):
        return power_at(kind, truth, rule, paper_value, n, n_sim=n_sim, seed=seed) >= power

    lo, hi = n_min, n_min
    while not ok(hi):
        if hi >= n_max:
            return math.inf
        lo, hi = hi, min(hi * 2, n_max)
    if hi == n_min:
        return float(n_min)
    while hi - lo > 1:  # invariant: ok(hi), not ok(lo)
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return float(hi)
