"""The verdict rules of the claims register, fixed before any run.

One claim, one rule; the rule sees the paper's value (or bound), this run's estimate with its 95%
interval, and whether this run's judge can test the claim at all. Four verdicts:

* ``consistent`` / ``inconsistent`` — what the rule says of the paper's value and our interval;
* ``underpowered`` — the interval is too wide to tell (wider than the claim's ``max_ci_width``,
  straddling the claim's bound, or not computable from this run's few units); the width is shown;
* ``not testable by this judge`` — the claim is about an LLM's judgements and this run's judge is
  the embedded 135M model (it shows that the pipeline runs, not the finding).

Rule types (``rule.type`` in ``claims.yaml``):

``inside_ci``   a point value: consistent when the paper's value lies inside our CI, inconsistent
                when the CI excludes it.
``above``       "θ > b": consistent when the whole CI lies above b, inconsistent when it lies
                wholly below b, underpowered when it straddles b.
``below``       "θ < b": the mirror image.
``equivalence`` "|θ| ≤ m" (no effect, e.g. mode invariance): consistent when the CI lies inside
                [-m, m], inconsistent when it lies wholly outside, underpowered otherwise.
``direction``   "θ > 0 at the paper's α" (``sign: +1``) or "θ < 0" (``sign: -1``): consistent when
                the estimate has the claimed sign and p < α (with ``p`` given) or, without a
                p-value, the CI excludes 0 on the claimed side; inconsistent when the CI lies wholly
                on the other side of 0; underpowered otherwise.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

CONSISTENT = "consistent"
INCONSISTENT = "inconsistent"
UNDERPOWERED = "underpowered"
NOT_TESTABLE = "not testable by this judge"
VERDICTS = (CONSISTENT, INCONSISTENT, UNDERPOWERED, NOT_TESTABLE)
RULE_TYPES = ("inside_ci", "above", "below", "equivalence", "direction")


@dataclass(frozen=True)
class Verdict:
    verdict: str
    reason: str
    ci_width: float


def _finite(*xs) -> bool:
    return all(x is not None and isinstance(x, (int, float)) and math.isfinite(x) for x in xs)


def decide(rule: dict, *, paper_value: float | None, estimate: float | None, ci_low: float | None,
           ci_high: float | None, llm_claim: bool, embedded_judge: bool, p: float | None = None) -> Verdict:
    """The verdict of one claim by its ``rule`` (module docstring). ``llm_claim``: the claim is about
    an LLM's judgements; ``embedded_judge``: this run's judge is the embedded small model."""
    kind = rule.get("type")
    if kind not in RULE_TYPES:
        raise ValueError(f"rule type {kind!r}: expected one of {', '.join(RULE_TYPES)}")
    width = ci_high - ci_low if _finite(ci_low, ci_high) else math.inf
    if llm_claim and embedded_judge:
        return Verdict(NOT_TESTABLE, "an LLM-judgement claim; this run's judge is the embedded 135M model", width)
    if not _finite(estimate, ci_low, ci_high):
        return Verdict(UNDERPOWERED, "no estimate with an interval from this run (too few units)", width)
    if ci_low > ci_high:
        raise ValueError(f"CI low {ci_low} above CI high {ci_high}")
    max_width = rule.get("max_ci_width")
    if max_width is not None and width > max_width:
        return Verdict(UNDERPOWERED, f"CI width {width:.3g} > {max_width:g} allowed", width)
    lo, hi = ci_low, ci_high
    if kind == "inside_ci":
        if not _finite(paper_value):
            raise ValueError("rule inside_ci needs the paper's value")
        if lo <= paper_value <= hi:
            return Verdict(CONSISTENT, f"paper {paper_value:g} inside [{lo:.3g}, {hi:.3g}]", width)
        return Verdict(INCONSISTENT, f"paper {paper_value:g} outside [{lo:.3g}, {hi:.3g}]", width)
    if kind in ("above", "below"):
        b = rule.get("bound", paper_value)
        if not _finite(b):
            raise ValueError(f"rule {kind} needs a bound")
        good, bad = (lo > b, hi < b) if kind == "above" else (hi < b, lo > b)
        side = ">" if kind == "above" else "<"
        if good:
            return Verdict(CONSISTENT, f"CI [{lo:.3g}, {hi:.3g}] entirely {side} {b:g}", width)
        if bad:
            return Verdict(INCONSISTENT, f"CI [{lo:.3g}, {hi:.3g}] excludes every value {side} {b:g}", width)
        return Verdict(UNDERPOWERED, f"CI [{lo:.3g}, {hi:.3g}] straddles {b:g}", width)
    if kind == "equivalence":
        m = rule.get("margin")
        if not _finite(m) or m <= 0:
            raise ValueError("rule equivalence needs a positive margin")
        if -m <= lo and hi <= m:
            return Verdict(CONSISTENT, f"CI [{lo:.3g}, {hi:.3g}] inside ±{m:g}", width)
        if lo > m or hi < -m:
            return Verdict(INCONSISTENT, f"CI [{lo:.3g}, {hi:.3g}] outside ±{m:g}", width)
        return Verdict(UNDERPOWERED, f"CI [{lo:.3g}, {hi:.3g}] not inside ±{m:g}", width)
    # direction
    sign = rule.get("sign", 1)
    if sign not in (1, -1):
        raise ValueError("rule direction: sign must be +1 or -1")
    alpha = rule.get("alpha", 0.05)
    right = sign * estimate > 0
    if right and (p < alpha if _finite(p) else (lo > 0 if sign > 0 else hi < 0)):
        test = f"p = {p:.3g} < {alpha:g}" if _finite(p) else "CI excludes 0"
        return Verdict(CONSISTENT, f"estimate {estimate:.3g} has the claimed sign; {test}", width)
    if (sign > 0 and hi < 0) or (sign < 0 and lo > 0):
        return Verdict(INCONSISTENT, f"CI [{lo:.3g}, {hi:.3g}] wholly on the other side of 0", width)
    why = f"p = {p:.3g} ≥ {alpha:g}" if _finite(p) else f"CI [{lo:.3g}, {hi:.3g}] includes 0"
    return Verdict(UNDERPOWERED, f"not significant at the paper's α: {why}", width)
