"""The verdict rules of the claims register, fixed before any run (docs/claims.md, "Six
verdicts" and "The rules", states each in a table).

One claim, one rule; the rule sees the paper's value (or bound), this run's estimate with its 95%
interval and the claim's **margin of equivalence** ``m``: the smallest difference that would
matter, stated per claim family in ``claims.yaml`` with its reason (never derived from an
interval's width). :func:`decide` gives ``reproduced``, ``not reproduced`` or ``inconclusive``
(the interval too wide to tell; ``decisive_width`` says how wide an interval on the same estimate
may be for the rule to decide); :mod:`judgelab.claims.scorecard` gives ``not comparable``, ``not
testable by this judge`` and ``not run`` before a rule is applied. Rule types (``rule.type``):
``value``, ``above`` and ``below`` (threshold ``b - m`` / ``b + m``: a value less than ``m``
beyond the bound does not contradict the claim), ``equivalence`` and ``direction``.

With a 95% interval each decided verdict errs with probability about 5% when the truth sits at a
rule's threshold (less away from it): over k decided claims expect about 0.05 k verdicts by
chance (:func:`expected_by_chance`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
INCONCLUSIVE = "inconclusive"
NOT_COMPARABLE = "not comparable"
NOT_TESTABLE = "not testable by this judge"
NOT_RUN = "not run"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_COMPARABLE, NOT_TESTABLE, NOT_RUN)
DECIDED = (REPRODUCED, NOT_REPRODUCED)
RULE_TYPES = ("value", "above", "below", "equivalence", "direction")
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Verdict:
    verdict: str
    reason: str
    ci_width: float
    decisive_width: float = math.nan   # the widest interval (same centre) the rule would decide on


def _finite(*xs) -> bool:
    return all(x is not None and isinstance(x, (int, float)) and math.isfinite(x) for x in xs)


def _margin(rule: dict) -> float:
    m = rule.get("margin")
    if not _finite(m) or m < 0:
        raise ValueError(f"rule {rule.get('type')}: needs a margin >= 0 (got {m!r})")
    if rule["type"] in ("value", "equivalence") and m == 0:
        raise ValueError(f"rule {rule['type']}: needs a positive margin (an interval never has width 0)")
    return float(m)


def _inconclusive(why: str, width: float, decisive: float) -> Verdict:
    tail = f"; an interval narrower than {decisive:.3g} would decide" if _finite(decisive) and decisive > 0 else ""
    return Verdict(INCONCLUSIVE, why + tail, width, decisive)


def decide(rule: dict, *, paper_value: float | None, estimate: float | None, ci_low: float | None,
           ci_high: float | None, p: float | None = None) -> Verdict:
    """The verdict of one claim by its ``rule`` (module docstring): reproduced, not reproduced or
    inconclusive. ``rule`` carries ``type`` and the resolved absolute ``margin`` (and ``bound``,
    ``sign``, ``alpha`` by type)."""
    kind = rule.get("type")
    if kind not in RULE_TYPES:
        raise ValueError(f"rule type {kind!r}: expected one of {', '.join(RULE_TYPES)}")
    m = _margin(rule)
    width = ci_high - ci_low if _finite(ci_low, ci_high) else math.inf
    if _finite(ci_low, ci_high) and ci_low > ci_high:
        raise ValueError(f"CI low {ci_low} above CI high {ci_high}")
    if kind in ("value", "equivalence"):
        c = 0.0 if kind == "equivalence" else paper_value
        if not _finite(c):
            raise ValueError("rule value needs the paper's value")
        decisive = 2 * abs(m - abs(estimate - c)) if _finite(estimate) else math.nan
        if not _finite(estimate, ci_low, ci_high):
            return _inconclusive("no interval from this run (too few units)", width, decisive)
        lo, hi = ci_low, ci_high
        band = f"[{c - m:.3g}, {c + m:.3g}] (margin ±{m:g} around {c:g})"
        if c - m <= lo and hi <= c + m:
            return Verdict(REPRODUCED, f"CI [{lo:.3g}, {hi:.3g}] inside {band}", width, decisive)
        if lo > c + m or hi < c - m:
            return Verdict(NOT_REPRODUCED, f"CI [{lo:.3g}, {hi:.3g}] wholly outside {band}", width, decisive)
        return _inconclusive(f"CI [{lo:.3g}, {hi:.3g}] overlaps the edge of {band}", width, decisive)
    if kind in ("above", "below"):
        b = rule.get("bound", paper_value)
        if not _finite(b):
            raise ValueError(f"rule {kind} needs a bound")
        t = b - m if kind == "above" else b + m
        decisive = 2 * abs(estimate - t) if _finite(estimate) else math.nan
        if not _finite(estimate, ci_low, ci_high):
            return _inconclusive("no interval from this run (too few units)", width, decisive)
        lo, hi = ci_low, ci_high
        side = ">" if kind == "above" else "<"
        good, bad = (lo > t, hi < t) if kind == "above" else (hi < t, lo > t)
        what = f"{b:g} {'-' if kind == 'above' else '+'} margin {m:g} = {t:.3g}"
        if good:
            return Verdict(REPRODUCED, f"CI [{lo:.3g}, {hi:.3g}] entirely {side} {what}", width, decisive)
        if bad:
            return Verdict(NOT_REPRODUCED, f"CI [{lo:.3g}, {hi:.3g}] on the wrong side of {what}", width, decisive)
        return _inconclusive(f"CI [{lo:.3g}, {hi:.3g}] straddles {what}", width, decisive)
    # direction
    sign = rule.get("sign", 1)
    if sign not in (1, -1):
        raise ValueError("rule direction: sign must be +1 or -1")
    alpha = rule.get("alpha", 0.05)
    if not _finite(estimate):
        return _inconclusive("no estimate from this run (too few units)", width, math.nan)
    x = sign * estimate                                   # the effect on the claimed side
    decisive = max(2 * x if x > 0 else 0.0, 2 * (m - x) if x < m else 0.0)
    if not _finite(ci_low, ci_high):
        return _inconclusive("no interval from this run (too few units)", width, decisive)
    lo, hi = sorted((sign * ci_low, sign * ci_high))      # the interval on the claimed side's axis
    significant = p < alpha if _finite(p) else lo > 0
    if x > 0 and significant:
        test = f"p = {p:.3g} < {alpha:g}" if _finite(p) else "CI excludes 0"
        return Verdict(REPRODUCED, f"estimate {estimate:.3g} on the claimed side; {test}", width, decisive)
    if hi < m:
        return Verdict(NOT_REPRODUCED, f"CI [{ci_low:.3g}, {ci_high:.3g}] excludes every effect of {m:g} or more "
                                       "on the claimed side", width, decisive)
    why = f"p = {p:.3g} ≥ {alpha:g}" if _finite(p) else "CI includes 0"
    return _inconclusive(f"not significant at the paper's α ({why}) and an effect of {m:g} not excluded",
                         width, decisive)


def expected_by_chance(n_decided: int, confidence: float = CONFIDENCE) -> float:
    """Verdicts a register of ``n_decided`` decided claims gets wrong by chance alone: each 95%
    interval misses its true value with probability 1 - confidence, so about (1 - 0.95) n."""
    return (1 - confidence) * n_decided
