"""Invariants every verdict rule keeps, on constructed intervals over a seeded grid of every rule
type (judgelab.claims.verdicts): the expected verdicts come from the invariants themselves and from
an independent normal-interval formula, never from the rule's code."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from judgelab.claims import verdicts as V
from judgelab.claims.verdicts import (INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED, REPRODUCED_WITHIN, decide,
                                      decide_many)

CODE = {v: i for i, v in enumerate(V.CODES)}
REPRODUCING = [CODE[REPRODUCED], CODE[REPRODUCED_WITHIN]]
N = 20000


def _grid(seed, centre=0.0, spread=1.0):
    """Estimates with asymmetric intervals around them, widths from tiny to wide."""
    rng = np.random.default_rng(seed)
    est = centre + spread * rng.normal(0, 1, N)
    lo = est - spread * rng.exponential(0.4, N)
    hi = est + spread * rng.exponential(0.4, N)
    return est, lo, hi


RULES = [
    ({"type": "value", "margin": 0.3}, 0.5),
    ({"type": "equivalence", "margin": 0.3}, 0.1),
    ({"type": "above", "bound": 0.2, "margin": 0.25}, 0.6),
    ({"type": "above", "bound": 0.2, "margin": 0.25}, 0.1),      # the paper's own value misses its bound
    ({"type": "below", "bound": -0.1, "margin": 0.2}, -0.4),
    ({"type": "above", "bound": 0.0, "margin": 0.0}, None),      # the bound alone, no tolerance
    ({"type": "direction", "margin": 0.3, "alpha": 0.05}, 0.1),  # paper's effect below the margin
    ({"type": "direction", "margin": 0.1, "alpha": 0.001}, 0.5),
    ({"type": "direction", "sign": -1, "margin": 0.2, "alpha": 0.01}, -0.05),
    ({"type": "direction", "margin": 0.2}, None),
]


@pytest.mark.parametrize("rule,paper", RULES, ids=[f"{r['type']}-{i}" for i, (r, _) in enumerate(RULES)])
def test_every_rule_keeps_the_invariants(rule, paper):
    est, lo, hi = _grid(len(rule) + int(1000 * (paper or 0)) % 97)
    code = decide_many(rule, paper_value=paper, estimate=est, ci_low=lo, ci_high=hi)
    kind = rule["type"]
    # 1. an interval wholly on the wrong side of the bound (of 0 for a direction) is never reproduced
    if kind in ("above", "below", "direction"):
        if kind == "direction":
            wrong = rule.get("sign", 1) * np.where(rule.get("sign", 1) > 0, hi, lo) < 0
        else:
            wrong = hi < rule["bound"] if kind == "above" else lo > rule["bound"]
        assert wrong.sum() > 100
        assert not np.isin(code[wrong], REPRODUCING).any()
    else:
        c = paper if kind == "value" else 0.0
        outside = (hi < c - rule["margin"]) | (lo > c + rule["margin"])
        assert outside.sum() > 100 and not np.isin(code[outside], REPRODUCING).any()
    # 2. an interval that holds the paper's own value is never "not reproduced"
    if paper is not None:
        holds = (lo <= paper) & (paper <= hi)
        assert holds.sum() > 100
        assert not (code[holds] == CODE[NOT_REPRODUCED]).any()
    # 3. narrowing around the same estimate never turns a verdict into its opposite
    for s in (0.9, 0.5, 0.1):
        narrow = decide_many(rule, paper_value=paper, estimate=est, ci_low=est - s * (est - lo),
                             ci_high=est + s * (hi - est))
        flips = (np.isin(code, REPRODUCING) & (narrow == CODE[NOT_REPRODUCED])) | \
                ((code == CODE[NOT_REPRODUCED]) & np.isin(narrow, REPRODUCING))
        assert not flips.any(), (rule, s, np.flatnonzero(flips)[:3])
        # and a decided verdict stays decided
        assert not ((code != CODE[INCONCLUSIVE]) & (narrow == CODE[INCONCLUSIVE]) & ~np.isin(code, REPRODUCING[1:])).any()
    # every verdict occurs on the grid (the invariants are not kept by deciding nothing)
    assert {CODE[REPRODUCED], CODE[NOT_REPRODUCED], CODE[INCONCLUSIVE]} <= set(np.unique(code))


def test_the_scalar_verdict_is_the_vectorised_one():
    est, lo, hi = _grid(5)
    for rule, paper in RULES:
        many = decide_many(rule, paper_value=paper, estimate=est[:300], ci_low=lo[:300], ci_high=hi[:300])
        one = [decide(rule, paper_value=paper, estimate=e, ci_low=a, ci_high=b).verdict
               for e, a, b in zip(est[:300], lo[:300], hi[:300])]
        assert [V.CODES[c] for c in many] == one


def test_a_bound_missed_is_never_reproduced_and_within_the_margin_is_its_own_verdict():
    rule = {"type": "above", "bound": 0.92, "margin": 0.02}
    assert decide(rule, paper_value=None, estimate=0.905, ci_low=0.901, ci_high=0.909).verdict == INCONCLUSIVE
    v = decide(rule, paper_value=None, estimate=0.925, ci_low=0.915, ci_high=0.935)
    assert v.verdict == REPRODUCED_WITHIN and "by less than the margin" in v.reason
    assert decide(rule, paper_value=None, estimate=0.93, ci_low=0.925, ci_high=0.935).verdict == REPRODUCED
    assert decide(rule, paper_value=None, estimate=0.88, ci_low=0.87, ci_high=0.89).verdict == NOT_REPRODUCED
    below = {"type": "below", "bound": 0.3, "margin": 0.05}
    assert decide(below, paper_value=None, estimate=0.32, ci_low=0.31, ci_high=0.33).verdict == INCONCLUSIVE
    assert decide(below, paper_value=None, estimate=0.31, ci_low=0.29, ci_high=0.33).verdict == REPRODUCED_WITHIN


def test_a_faithful_replication_of_a_small_effect_is_not_refuted():
    # the paper's L6 < L4 by 0.05 with a margin of 0.1: data around 0.05 never refute it
    rule = {"type": "direction", "margin": 0.1}
    assert decide(rule, paper_value=0.05, estimate=0.05, ci_low=0.0, ci_high=0.09).verdict == INCONCLUSIVE
    assert decide(rule, paper_value=0.05, estimate=0.025, ci_low=0.01, ci_high=0.04).verdict == REPRODUCED
    assert decide(rule, paper_value=0.05, estimate=0.025, ci_low=-0.01, ci_high=0.06).verdict == INCONCLUSIVE
    assert decide(rule, paper_value=0.05, estimate=-0.01, ci_low=-0.03, ci_high=0.01).verdict == NOT_REPRODUCED


@pytest.mark.parametrize("alpha", [0.001, 0.01, 0.05, 0.1])
def test_a_direction_verdict_reads_an_interval_at_the_papers_alpha(alpha):
    est, lo, hi = _grid(11, centre=0.5, spread=0.4)
    rule = {"type": "direction", "margin": 0.1, "alpha": alpha}
    code = decide_many(rule, paper_value=0.3, estimate=est, ci_low=lo, ci_high=hi)
    # reference: the lower end of the (1 - alpha) normal interval from the 95% one's lower half-width
    se_low = (est - lo) / stats.norm.ppf(0.975)
    shown = (est > 0) & (est - stats.norm.ppf(1 - alpha / 2) * se_low > 0)
    assert np.array_equal(code == CODE[REPRODUCED], shown)
    # a p value, where the table has one, is read at alpha instead of any interval
    p = np.where(np.arange(N) % 2, alpha / 2, 2 * alpha)
    with_p = decide_many(rule, paper_value=0.3, estimate=est, ci_low=lo, ci_high=hi, p=p)
    assert np.array_equal(with_p == CODE[REPRODUCED], (est > 0) & (p < alpha))


def test_a_missing_p_is_not_a_95_percent_interval_at_alpha_0001():
    rule = {"type": "direction", "margin": 0.1, "alpha": 0.001}
    assert decide(rule, paper_value=0.2, estimate=0.15, ci_low=0.01, ci_high=0.30).verdict == INCONCLUSIVE
    assert decide(rule, paper_value=0.2, estimate=0.15, ci_low=0.01, ci_high=0.30, p=0.04).verdict == INCONCLUSIVE
    assert decide(rule, paper_value=0.2, estimate=0.15, ci_low=0.01, ci_high=0.30, p=0.0004).verdict == REPRODUCED
    # the same interval given as a 99.9% one decides
    assert decide(rule, paper_value=0.2, estimate=0.15, ci_low=0.01, ci_high=0.30,
                  confidence=0.999).verdict == REPRODUCED


def test_a_zero_width_interval_decides_nothing():
    for rule, paper in RULES:
        assert decide(rule, paper_value=paper, estimate=1.0, ci_low=1.0, ci_high=1.0).verdict == INCONCLUSIVE
