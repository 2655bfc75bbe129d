"""How many units a run needs: the smallest n at which a claim's own verdict rule returns
``reproduced`` with 80% probability when the truth is the paper's value, by seeded simulation.

Each simulated run is drawn at the unit of the design the claim's table reads (docs/claims.md,
"Power"): a story (SAGE Tables 8, 9, 11), an endpoint pair (narrative Table 4) or raters x
items (ICC(2,1), Table 3), and goes through the interval that table uses (``power.resample``:
``story`` or ``pair`` names its cluster bootstrap, :data:`SIM_BOOT` resamples by
:mod:`judgelab.stats.resampling`'s weights, one matrix product for all runs; else the scorecard's
analytic interval, :mod:`judgelab.claims.intervals`) and the claim's own rule
(:func:`judgelab.claims.verdicts.decide`). For a directional rule this is the classical power of
the test at the paper's α (tests check it against statsmodels' analytic power).

The spread is the paper's own (its SDs) or an assumption stated in the register beside the claim
(``power.assume``), never a run's: an embedded model's spread says nothing of the paper's judge.

Truth parameters by kind (``n`` is always the total number of units of the claim's power unit):

``proportion``   ``p``; with ``resample: story`` also ``per_story`` (scores per story) and ``icc``
``mean``         ``mean``, ``sd``
``paired_diff``  ``mean`` (of the differences), ``sd`` (of one member's score), ``rho``
``mean_diff``    ``delta`` (group a - group b), ``sd_a``, ``sd_b``, ``share_a`` (a's share of n)
``cohens_d``     ``d``, ``share_a``; with ``resample: pair`` also ``rho`` (n = 2 x pairs)
``correlation``  ``r``
``icc``          ``icc`` (ICC(2,1)), ``k`` (raters per target), ``rater_share`` (the raters' offsets'
                 share of the variance; default 0)
"""
from __future__ import annotations

import math

import numpy as np

from judgelab.claims import intervals
from judgelab.claims.verdicts import CODES, REPRODUCING, decide_many
from judgelab.stats import effects
from judgelab.stats import resampling as rs
from judgelab.stats.intervals import proportion_ci_design_effect

TARGET_POWER = 0.8
SIM_KINDS = ("proportion", "mean", "paired_diff", "mean_diff", "cohens_d", "correlation", "icc")
RESAMPLE_UNITS = ("story", "pair")
#: bootstrap resamples per simulated run: enough for a 95% percentile interval's Monte-Carlo error
#: to be small beside the power's own (a few hundredths), few enough to run in seconds
SIM_BOOT = 200
#: the relative precision of n_required's search: finer than the simulated power's own error
N_TOLERANCE = 0.03


def _groups(n: int, share_a: float) -> tuple[int, int]:
    n_a = min(max(int(round(n * share_a)), 2), n - 2)  # two per group at least: an SD needs two
    return n_a, n - n_a


def _percentiles(boot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each simulated run's percentile interval (rows of ``boot``, (S, B)), by the tables' rule."""
    if np.isfinite(boot).all():  # every resample defined: the rule is the plain percentiles, all rows at once
        lo, hi = np.quantile(boot, [(1 - rs.CI) / 2, (1 + rs.CI) / 2], axis=1)
        return lo, hi
    ivs = [rs.percentile_interval(b) for b in boot]
    return np.array([i.low for i in ivs]), np.array([i.high for i in ivs])


def _weights(n: int, rng: np.random.Generator) -> np.ndarray:
    return rs.cluster_weights(np.arange(n), SIM_BOOT, int(rng.integers(2 ** 31)))


def simulate(kind: str, truth: dict, n: int, n_sim: int, rng: np.random.Generator,
             resample: str | None = None) -> dict:
    """``n_sim`` data sets of ``n`` units drawn from ``truth``: arrays ``est``, ``lo``, ``hi``, ``p``;
    ``resample``: the table's cluster-bootstrap unit (None: the analytic interval)."""
    if resample is not None and resample not in RESAMPLE_UNITS:
        raise ValueError(f"power.resample {resample!r}: not one of {', '.join(RESAMPLE_UNITS)}")
    p = np.full(n_sim, np.nan)
    if kind == "proportion" and resample:
        # stories of ``per_story`` scores: a story's rate ~ Beta with mean p and intra-story correlation icc
        m, icc, pt = int(truth["per_story"]), truth["icc"], truth["p"]
        if 0 < pt < 1 and icc > 0:
            rate = rng.beta(pt * (1 - icc) / icc, (1 - pt) * (1 - icc) / icc, (n_sim, n))
        else:
            rate = np.full((n_sim, n), pt)
        share = rng.binomial(m, rate) / m
        est = share.mean(1)
        # the scorecard's interval of a clustered share: Wilson at the effective n, the design
        # effect from the cluster bootstrap's SE (a percentile bootstrap undercovers near 0 and 1)
        se = rs.weighted_mean(share, _weights(n, rng)).std(1, ddof=1)
        est, lo, hi = proportion_ci_design_effect(est, n * m, se)
    elif kind == "proportion":
        est, lo, hi = intervals.proportion(rng.binomial(n, truth["p"], n_sim), n)
    elif kind == "mean":
        x = rng.normal(truth["mean"], truth["sd"], (n_sim, n))
        est, lo, hi = intervals.mean(x.mean(1), x.std(1, ddof=1), n)
        if resample:
            lo, hi = _percentiles(rs.weighted_mean(x, _weights(n, rng)))
    elif kind == "paired_diff":
        # each unit's two scores, correlated rho; Table 9 reads the paired t interval of their difference
        sd, rho = truth["sd"], truth["rho"]
        a = rng.standard_normal((n_sim, n))
        b = rho * a + math.sqrt(1 - rho ** 2) * rng.standard_normal((n_sim, n))
        x = truth["mean"] + sd * (b - a)
        est, lo, hi = intervals.paired_diff(x.mean(1), x.std(1, ddof=1), n)
    elif kind in ("mean_diff", "cohens_d"):
        if kind == "mean_diff":
            sd_a, sd_b, delta = truth["sd_a"], truth["sd_b"], truth["delta"]
        else:
            sd_a = sd_b = 1.0
            delta = truth["d"]
        if resample == "pair":  # an endpoint pair's max-capacity and random path, correlated rho
            n_a = n_b = max(n // 2, 2)
            za = rng.standard_normal((n_sim, n_a))
            zb = truth.get("rho", 0.0) * za + math.sqrt(1 - truth.get("rho", 0.0) ** 2) * rng.standard_normal((n_sim, n_b))
        else:
            n_a, n_b = _groups(n, truth.get("share_a", 0.5))
            za, zb = rng.standard_normal((n_sim, n_a)), rng.standard_normal((n_sim, n_b))
        a, b = delta + sd_a * za, sd_b * zb
        ma, sa, mb, sb = a.mean(1), a.std(1, ddof=1), b.mean(1), b.std(1, ddof=1)
        est, lo, hi, p = intervals.mean_diff(ma, sa, n_a, mb, sb, n_b)
        if kind == "cohens_d":
            est, lo, hi = intervals.cohens_d(effects.cohens_d_from_summary(ma, sa, n_a, mb, sb, n_b), n_a, n_b)
        if resample:
            # the pair's rows drawn together (one weight per pair), or the stories of each group apart
            wa = _weights(n_a, rng)
            wb = wa if resample == "pair" else _weights(n_b, rng)
            boot = (rs.weighted_cohens_d(a, wa, b, wb) if kind == "cohens_d"
                    else rs.weighted_mean(a, wa) - rs.weighted_mean(b, wb))
            lo, hi = _percentiles(boot)
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
             n_sim: int = 1000, seed: int = 0, resample: str | None = None) -> float:
    """The share of ``n_sim`` simulated runs of ``n`` units whose verdict sides with the paper
    (``reproduced``, or for a bound ``reproduced within the margin``)."""
    rng = np.random.default_rng([seed, n])
    sims = simulate(kind, truth, n, n_sim, rng, resample)
    codes = decide_many(rule, paper_value=paper_value, estimate=sims["est"], ci_low=sims["lo"], ci_high=sims["hi"],
                        p=sims["p"])
    return float(np.isin(codes, [CODES.index(v) for v in REPRODUCING]).mean())


def n_required(kind: str, truth: dict, rule: dict, paper_value: float | None, *, power: float = TARGET_POWER,
               n_min: int = 5, n_max: int = 20000, n_sim: int = 1000, seed: int = 0,
               resample: str | None = None) -> float:
    """The smallest n in [n_min, n_max] with :func:`power_at` ≥ ``power`` (doubling, then bisection
    to within :data:`N_TOLERANCE`: the simulated power carries Monte-Carlo error of about that size
    anyway); ``inf`` when even ``n_max`` units fall short."""
    def ok(n):
        return power_at(kind, truth, rule, paper_value, n, n_sim=n_sim, seed=seed, resample=resample) >= power

    lo, hi = n_min, n_min
    while not ok(hi):
        if hi >= n_max:
            return math.inf
        lo, hi = hi, min(hi * 2, n_max)
    if hi == n_min:
        return float(n_min)
    while hi - lo > max(1, N_TOLERANCE * hi):  # invariant: ok(hi), not ok(lo)
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return float(hi)


# ------------------------------------------------------------------ operating characteristics
#: the truth parameter of each simulated kind that carries the claim's statistic
STATISTIC_KEY = {"proportion": "p", "mean": "mean", "paired_diff": "mean", "mean_diff": "delta", "cohens_d": "d",
                 "correlation": "r", "icc": "icc"}
#: the range a truth may take (a scenario outside it is not simulated: a share of 1.04 has no data)
DOMAIN = {"p": (0.0, 1.0), "r": (-0.99, 0.99), "icc": (0.0, 0.99)}
#: the error a verdict rule may make at a truth: refute a true paper value, or reproduce a false one
ERROR_LIMIT = 0.05
TRUE, EDGE, FALSE = "true", "edge of the margin (false)", "beyond the margin (false)"


def scenarios(rule: dict, paper_value: float | None) -> list[tuple[str, float, str]]:
    """(what, truth, status) of each truth a claim's operating characteristics are simulated at:
    the paper's value, the edge of the margin, and beyond it on each side (``status``: the claim
    is :data:`TRUE` there, or false at the :data:`EDGE` or :data:`FALSE` beyond it)."""
    kind, m = rule["type"], float(rule["margin"])
    if kind in ("value", "equivalence"):
        c = 0.0 if kind == "equivalence" else float(paper_value)
        what = "the paper's value" if kind == "value" else "no effect (the claim)"
        return [(what, c, TRUE), ("its margin's lower edge", c - m, EDGE), ("its margin's upper edge", c + m, EDGE),
                ("beyond the margin, below", c - 2 * m, FALSE), ("beyond the margin, above", c + 2 * m, FALSE)]
    if kind in ("above", "below"):
        s = 1 if kind == "above" else -1
        b = float(rule.get("bound", paper_value))
        step = m if m > 0 else 0.1 * max(abs(b), 0.1)
        out = []
        if paper_value is not None and math.isfinite(paper_value) and not math.isclose(paper_value, b):
            out.append(("the paper's value", float(paper_value), TRUE))
        return out + [("the bound", b, TRUE), ("beyond the bound, on the claim's side", b + s * step, TRUE),
                      ("the margin's edge", b - s * m, EDGE), ("beyond the margin", b - s * (m + step), FALSE)]
    # direction
    s = rule.get("sign", 1)
    v = float(paper_value) if paper_value is not None and math.isfinite(paper_value) and s * paper_value > 0 else s * m
    step = max(abs(v), m)
    return [("the paper's value", v, TRUE), ("beyond it, on the claimed side", v + s * step, TRUE),
            ("no effect", 0.0, EDGE), ("the opposite effect", -s * step, FALSE)]


def verdict_rates(kind: str, truth: dict, rule: dict, paper_value: float | None, n: int, *, n_sim: int,
                  seed: int = 0, resample: str | None = None) -> dict:
    """The share of ``n_sim`` simulated runs of ``n`` units drawn from ``truth`` given each verdict
    by the claim's own rule (keys: the verdicts of :data:`judgelab.claims.verdicts.CODES`)."""
    sims = simulate(kind, truth, n, n_sim, np.random.default_rng([seed, n]), resample)
    codes = decide_many(rule, paper_value=paper_value, estimate=sims["est"], ci_low=sims["lo"], ci_high=sims["hi"],
                        p=sims["p"])
    return {v: float((codes == i).mean()) for i, v in enumerate(CODES)}


def operating(kind: str, truth: dict, rule: dict, paper_value: float | None, n: int, *, n_sim: int,
              seed: int = 0, resample: str | None = None) -> list[dict]:
    """One row per scenario (:func:`scenarios`): the truth, its status, the verdicts' shares and
    ``error``: P(not reproduced) where the claim is true, P(reproduced, within the margin
    included) where it is false. Scenarios outside the statistic's range are left out."""
    key = STATISTIC_KEY[kind]
    lo, hi = DOMAIN.get(key, (-math.inf, math.inf))
    rows = []
    for i, (what, value, status) in enumerate(scenarios(rule, paper_value)):
        if not lo <= value <= hi:
            continue
        rates = verdict_rates(kind, {**truth, key: value}, rule, paper_value, n, n_sim=n_sim, seed=seed + i,
                              resample=resample)
        error = rates[CODES[3]] if status == TRUE else rates[CODES[1]] + rates[CODES[2]]
        rows.append({"scenario": what, "truth": value, "status": status, **rates, "error": error})
    return rows
