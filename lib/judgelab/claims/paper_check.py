"""What a paper's own numbers imply for its claim: the paper-consistency column of the scorecard.

For a claim about two groups whose paper gives each group's SD (the register's ``power.paper_sd``)
and size (``power.share``, cited from the paper's design, e.g. SAGE's 50 canonical, 30 pulp and
20 LLM stories), the paper's reported difference is put through the same interval code and the
same verdict rule as our run: a Student t interval and p for a difference of means, the
Hedges-Olkin normal interval for a d. The result says where a claim cannot be reproduced by anyone
at the paper's design: SAGE's canonical - pulp gaps of Table 11 give p = 0.16, 0.10 and 0.04 from
its own means, SDs and 50 / 30 stories, where the claim reads "all p < 0.001".

For a bound claim whose paper also reports the value itself (NT's "ICC > 0.96" beside its own
Table 3), the check says whether that value meets the bound, less the margin: a point, with no
interval, so it says only whether the paper agrees with itself. Other claims get an empty check.
"""
from __future__ import annotations

import math

from judgelab.claims import intervals
from judgelab.claims.register import Claim, _lookup
from judgelab.claims.verdicts import decide

EMPTY = {"paper_check": "", "paper_check_verdict": ""}
PAPER_MEETS = "the paper's value meets its bound"
PAPER_FAILS = "the paper's own value fails its bound"


def _sizes(claim: Claim) -> tuple[float, float] | None:
    share = (claim.power or {}).get("share")
    if not share or len(share) != 2:
        return None
    a, b = (_lookup(p["ref"], p.get("keys", []), claim.id) for p in share)
    return a, b


def check(claim: Claim) -> dict:
    """``paper_check`` (the paper's own interval and p, in words) and ``paper_check_verdict`` (the
    claim's rule applied to them) for one claim; empty strings where the paper's numbers do not
    suffice."""
    pv = claim.paper_value()
    bound_only = pv is not None and math.isclose(pv, claim.rule.get("bound", math.nan))
    if bound_only:   # the paper states the bound and no value of its own ("> 94%"): nothing to check
        return dict(EMPTY)
    if claim.rule["type"] in ("above", "below") and pv is not None and "bound" in claim.rule:
        b, m = claim.rule["bound"], claim.margin
        t = b - m if claim.rule["type"] == "above" else b + m
        meets = pv > t if claim.rule["type"] == "above" else pv < t
        side = ">" if claim.rule["type"] == "above" else "<"
        return {"paper_check": f"the paper's own value {pv:g} against its bound {side} {b:g} (margin {m:g})",
                "paper_check_verdict": PAPER_MEETS if meets else PAPER_FAILS}
    sizes = _sizes(claim)
    if pv is None or sizes is None or claim.kind not in ("mean_diff", "cohens_d"):
        return dict(EMPTY)
    n_a, n_b = sizes
    p = math.nan
    if claim.kind == "mean_diff":
        sd = (claim.power or {}).get("paper_sd", {})
        if not {"sd_a", "sd_b"} <= set(sd):
            return dict(EMPTY)
        s_a, s_b = (_lookup(sd[k]["ref"], sd[k].get("keys", []), claim.id) for k in ("sd_a", "sd_b"))
        est, lo, hi, p = (float(v) for v in intervals.mean_diff(pv, s_a, n_a, 0.0, s_b, n_b))
        how = f"Student t on the paper's means, SDs and {n_a:g} / {n_b:g} units"
    else:
        est, lo, hi = (float(v) for v in intervals.cohens_d(pv, n_a, n_b))
        how = f"normal interval of the paper's d with {n_a:g} / {n_b:g} units"
    v = decide(claim.rule, paper_value=pv, estimate=est, ci_low=lo, ci_high=hi, p=None if math.isnan(p) else p)
    text = f"{how}: {est:.3g} [{lo:.3g}, {hi:.3g}]" + (f", p = {p:.2g}" if not math.isnan(p) else "")
    return {"paper_check": text, "paper_check_verdict": v.verdict}
