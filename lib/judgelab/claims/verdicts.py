"""The verdict rules of the claims register, fixed before any run (docs/claims.md, "The rules",
states each in a table).

One claim, one rule; the rule sees the paper's value (or bound), this run's estimate with its
interval (95% unless ``confidence`` says otherwise) and the claim's **margin of equivalence**
``m``: the smallest difference that would matter, stated per claim family in ``claims.yaml`` with
its reason (never derived from an interval's width). Rule types (``rule.type``):

``value``        θ = v: reproduced when the interval lies inside [v − m, v + m], not reproduced
                 when it lies wholly outside it.
``equivalence``  |θ| ≤ m: the same with v = 0.
``above``        θ > b: **reproduced** when the interval lies wholly above b; **reproduced within
                 the margin** when it lies above b − m and still reaches b (the bound is not missed
                 by m or more, and the data are consistent with it); not reproduced when it lies
                 wholly below b − m. An interval wholly below b is never a reproduction of either
                 kind.
``below``        θ < b: the mirror image.
``direction``    θ > 0 (``sign`` −1: θ < 0) at the paper's α: reproduced when the estimate is on
                 the claimed side and p < α (no p: the (1 − α) interval excludes 0; a 95% interval
                 is widened to 1 − α by the normal approximation of its half-widths, never read in
                 its place); not reproduced when the estimate is not on the claimed side and the
                 (1 − α) interval excludes every effect of t = min(m, the paper's effect) or more on
                 it (so that a true paper value is refuted at most α / 2 of the time).

Invariants every rule keeps (tests/test_claims_invariants.py): an interval wholly on the wrong
side of a bound, or of 0 for a direction, is never reproduced; an interval that holds the paper's
own value is never not reproduced; narrowing an interval around the same estimate never turns a
verdict into its opposite; a zero-width interval (a bootstrap of a constant) decides nothing.

:func:`decide` gives one claim's verdict with its reason; :func:`decide_many` the same verdicts for
arrays of simulated runs (one implementation: :func:`decide` calls it), for the operating
characteristics (:mod:`judgelab.claims.operating`) and the robustness notebook. The scorecard
(:mod:`judgelab.claims.scorecard`) gives ``not comparable``, ``not testable by this judge`` and
``not run`` before a rule is applied.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

REPRODUCED = "reproduced"
REPRODUCED_WITHIN = "reproduced within the margin"
NOT_REPRODUCED = "not reproduced"
INCONCLUSIVE = "inconclusive"
NOT_COMPARABLE = "not comparable"
NOT_TESTABLE = "not testable by this judge"
NOT_RUN = "not run"
VERDICTS = (REPRODUCED, REPRODUCED_WITHIN, NOT_REPRODUCED, INCONCLUSIVE, NOT_COMPARABLE, NOT_TESTABLE, NOT_RUN)
DECIDED = (REPRODUCED, REPRODUCED_WITHIN, NOT_REPRODUCED)
#: the verdicts that side with the paper (a bound met outright, or missed by less than its margin)
REPRODUCING = (REPRODUCED, REPRODUCED_WITHIN)
RULE_TYPES = ("value", "above", "below", "equivalence", "direction")
CONFIDENCE = 0.95
#: what "reproduced within the margin" says, on the page and in every such row's reason
WITHIN_MEANING = ("the interval reaches the paper's bound and excludes every value {m:g} or more on its wrong "
                  "side: the bound may be missed, but by less than the margin")
#: codes of :func:`decide_many`, in the order of this tuple
CODES = (INCONCLUSIVE, REPRODUCED, REPRODUCED_WITHIN, NOT_REPRODUCED)
_I, _R, _W, _N = range(4)


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


def _check(rule: dict) -> tuple[str, float]:
    kind = rule.get("type")
    if kind not in RULE_TYPES:
        raise ValueError(f"rule type {kind!r}: expected one of {', '.join(RULE_TYPES)}")
    m = _margin(rule)
    if kind == "direction":
        if rule.get("sign", 1) not in (1, -1):
            raise ValueError("rule direction: sign must be +1 or -1")
        a = rule.get("alpha", 0.05)
        if not _finite(a) or not 0 < a < 1:
            raise ValueError(f"rule direction: alpha must lie in (0, 1) (got {a!r})")
    return kind, m


def at_alpha(estimate, ci_low, ci_high, alpha: float, confidence: float = CONFIDENCE):
    """The (1 − α) interval from a ``confidence`` one around ``estimate``: each half-width scaled
    by z(1 − α/2) / z((1 + confidence) / 2) (the normal approximation; asymmetric intervals keep
    their asymmetry). The identity when 1 − α equals ``confidence``."""
    f = stats.norm.ppf(1 - alpha / 2) / stats.norm.ppf((1 + confidence) / 2)
    est, lo, hi = (np.asarray(v, float) for v in (estimate, ci_low, ci_high))
    if math.isclose(1 - alpha, confidence):
        return lo, hi
    return est - f * (est - lo), est + f * (hi - est)


def _threshold(kind: str, rule: dict, m: float, paper_value) -> float:
    """The value a bound rule is read against, or a direction rule's smallest refuted effect."""
    if kind in ("above", "below"):
        b = rule.get("bound", paper_value)
        if not _finite(b):
            raise ValueError(f"rule {kind} needs a bound")
        return float(b)
    if kind == "direction":
        v = rule.get("sign", 1) * paper_value if _finite(paper_value) else math.nan
        return min(m, v) if _finite(v) and v > 0 else m
    c = 0.0 if kind == "equivalence" else paper_value
    if not _finite(c):
        raise ValueError("rule value needs the paper's value")
    return float(c)


def decide_many(rule: dict, *, paper_value: float | None, estimate, ci_low, ci_high, p=None,
                confidence: float = CONFIDENCE) -> np.ndarray:
    """The rule's verdict codes (indices into :data:`CODES`) for arrays of runs: ``estimate``,
    ``ci_low``, ``ci_high`` (a ``confidence`` interval) and optionally ``p`` (NaN: none)."""
    kind, m = _check(rule)
    t = _threshold(kind, rule, m, paper_value)
    est, lo, hi = np.broadcast_arrays(*(np.asarray(v, float) for v in (estimate, ci_low, ci_high)))
    pv = np.full(est.shape, np.nan) if p is None else np.broadcast_to(np.asarray(p, float), est.shape)
    out = np.full(est.shape, _I, dtype=np.int8)
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(est) & np.isfinite(lo) & np.isfinite(hi) & (hi > lo)   # a zero width decides nothing
        if kind in ("value", "equivalence"):
            r = (lo >= t - m) & (hi <= t + m)
            n = (lo > t + m) | (hi < t - m)
            out[ok & r] = _R
            out[ok & n] = _N
        elif kind in ("above", "below"):
            if kind == "below":   # mirror onto "above"
                est, lo, hi, t = -est, -hi, -lo, -t
            out[ok & (lo > t - m) & (hi >= t)] = _W
            out[ok & (lo > t)] = _R
            out[ok & (hi < t - m)] = _N
        else:
            sign, alpha = rule.get("sign", 1), rule.get("alpha", 0.05)
            a_lo, a_hi = at_alpha(est, lo, hi, alpha, confidence)
            x, a_lo, a_hi = sign * est, *np.sort(np.stack([sign * a_lo, sign * a_hi]), axis=0)
            significant = np.where(np.isfinite(pv), pv < alpha, a_lo > 0)
            out[ok & (x > 0) & significant] = _R
            out[ok & (x <= 0) & (a_hi < t)] = _N
            lo, hi = a_lo, a_hi   # the interval the verdict read, for the paper's-value guard
            pv_axis = sign * paper_value if _finite(paper_value) else math.nan
        if kind != "direction":
            pv_axis = paper_value if _finite(paper_value) else math.nan
            if kind == "below":
                pv_axis = -pv_axis
        if _finite(pv_axis):   # an interval holding the paper's own value never refutes it
            out[(out == _N) & (lo <= pv_axis) & (pv_axis <= hi)] = _I
    return out


def _inconclusive(why: str, width: float, decisive: float) -> Verdict:
    tail = f"; an interval narrower than {decisive:.3g} would decide" if _finite(decisive) and decisive > 0 else ""
    return Verdict(INCONCLUSIVE, why + tail, width, decisive)


def decide(rule: dict, *, paper_value: float | None, estimate: float | None, ci_low: float | None,
           ci_high: float | None, p: float | None = None, confidence: float = CONFIDENCE) -> Verdict:
    """The verdict of one claim by its ``rule`` (module docstring) with its reason in words.

    Parameters: ``rule`` — ``type`` and the resolved absolute ``margin`` (and ``bound``, ``sign``,
    ``alpha`` by type); ``paper_value`` — the paper's number (None where it cites only a bound);
    ``estimate``, ``ci_low``, ``ci_high`` — this run's value and its ``confidence`` interval (None
    or NaN: no interval); ``p`` — the test's p value where the table has one.
    Returns a :class:`Verdict`: one of reproduced, reproduced within the margin (bounds only), not
    reproduced, inconclusive; ``decisive_width`` the widest interval on the same estimate that the
    rule would decide on."""
    kind, m = _check(rule)
    t = _threshold(kind, rule, m, paper_value)
    if _finite(ci_low, ci_high) and ci_low > ci_high:
        raise ValueError(f"CI low {ci_low} above CI high {ci_high}")
    width = ci_high - ci_low if _finite(ci_low, ci_high) else math.inf
    est = estimate if _finite(estimate) else math.nan
    if kind in ("value", "equivalence"):
        decisive = 2 * abs(m - abs(est - t)) if _finite(estimate) else math.nan
    elif kind in ("above", "below"):
        decisive = 2 * abs(est - t) if _finite(estimate) else math.nan
    else:
        x = rule.get("sign", 1) * est
        decisive = (2 * x if x > 0 else 2 * (t - x)) if _finite(estimate) else math.nan
    if not _finite(estimate, ci_low, ci_high):
        return _inconclusive("no interval from this run (too few units)", width, decisive)
    if width == 0:
        return _inconclusive(f"a zero-width interval [{ci_low:.3g}, {ci_high:.3g}] (a resampling of a constant) "
                             "decides nothing", width, decisive)
    code = int(decide_many(rule, paper_value=paper_value, estimate=est, ci_low=ci_low, ci_high=ci_high,
                           p=math.nan if p is None else p, confidence=confidence))
    verdict = CODES[code]
    ci = f"CI [{ci_low:.3g}, {ci_high:.3g}]"
    held = (f"; it holds the paper's own value {paper_value:g}, which no interval refutes"
            if _finite(paper_value) and ci_low <= paper_value <= ci_high else "")
    if kind in ("value", "equivalence"):
        band = f"[{t - m:.3g}, {t + m:.3g}] (margin ±{m:g} around {t:g})"
        why = {_R: f"{ci} inside {band}", _N: f"{ci} wholly outside {band}",
               _I: f"{ci} overlaps the edge of {band}{held}"}[code]
    elif kind in ("above", "below"):
        side, off, sgn = (">", "below", "-") if kind == "above" else ("<", "above", "+")
        edge = t - m if kind == "above" else t + m
        why = {_R: f"{ci} entirely {side} the bound {t:g}",
               _W: f"{ci} reaches the bound {t:g} and lies {side} {t:g} {sgn} margin {m:g} = {edge:.3g}: "
                   f"the bound may be missed, but by less than the margin",
               _N: f"{ci} wholly on the wrong side of {t:g} {sgn} margin {m:g} = {edge:.3g}",
               _I: (f"{ci} straddles {t:g} {sgn} margin {m:g} = {edge:.3g}" if (ci_low <= edge <= ci_high)
                    else f"{ci} misses the bound {t:g} by less than the margin {m:g}: neither met nor refuted")
                   + held}[code]
    else:
        alpha = rule.get("alpha", 0.05)
        a_lo, a_hi = (float(v) for v in at_alpha(est, ci_low, ci_high, alpha, confidence))
        level = f"{100 * (1 - alpha):.4g}% interval [{a_lo:.3g}, {a_hi:.3g}]"
        if not math.isclose(1 - alpha, confidence):
            level += f" (the {100 * confidence:g}% one widened to the paper's α = {alpha:g})"
        test = f"p = {p:.3g} < {alpha:g}" if _finite(p) else f"the {level} excludes 0"
        why = {_R: f"estimate {est:.3g} on the claimed side; {test}",
               _N: f"estimate {est:.3g} not on the claimed side and the {level} excludes every effect of "
                   f"{t:.3g} or more on it",
               _I: f"not shown at the paper's α ({f'p = {p:.3g}' if _finite(p) else level}) and not refuted ("
                   + ("the estimate is on the claimed side" if est * rule.get("sign", 1) > 0
                      else f"an effect of {t:.3g} on the claimed side is not excluded") + ")" + held}[code]
    if verdict == INCONCLUSIVE:
        return _inconclusive(why, width, decisive)
    return Verdict(verdict, why, width, decisive)


def expected_by_chance(n_decided: int, confidence: float = CONFIDENCE) -> float:
    """Verdicts a register of ``n_decided`` decided claims gets wrong by chance alone: each 95%
    interval misses its true value with probability 1 - confidence, so about (1 - 0.95) n."""
    return (1 - confidence) * n_decided
