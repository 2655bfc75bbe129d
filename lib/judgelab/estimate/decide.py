"""What the runs that would decide a claim cost: for each claim whose n for 80% power exceeds the
paper's n, the run at that size (:func:`scorecard.run_sizes`) priced by the project's offline
estimate (:mod:`judgelab.estimate`) on the OpenAI backend, only the notebooks the claim reads."""
from __future__ import annotations

import pandas as pd

from judgelab.claims import scorecard
from judgelab.claims.register import Claim


def notebooks_of(claim: Claim) -> list[str]:
    """The LLM notebooks whose size decides ``claim``: its SAGE layer's notebook (all three for a
    claim about every layer), or notebook 09 for the narrative judges."""
    from judgelab.estimate.sage import NOTEBOOK as SAGE_NOTEBOOK

    if claim.study != "sage":
        return ["09"]
    layer = claim.where.get("layer")
    return [SAGE_NOTEBOOK[layer]] if layer in SAGE_NOTEBOOK else list(SAGE_NOTEBOOK.values())


def price_to_decide(claims: list[Claim], power_table: pd.DataFrame) -> tuple[pd.DataFrame, object]:
    """One row per claim the paper's design cannot decide (calls, typical tokens, USD typical and
    range at standard prices), and the measured estimate it was sized from (None when no claim
    needs a larger run: nothing is built then)."""
    from judgelab import estimate

    by_id = {c.id: c for c in claims}
    too_small = power_table[power_table["n_80_paper"] > power_table["n_paper"]].set_index("claim_id")
    sizes = {cid: scorecard.run_sizes(by_id[cid], r["n_80_paper"]) for cid, r in too_small.iterrows()}
    sizes = {cid: s for cid, s in sizes.items() if s}
    if not sizes:
        return pd.DataFrame(), None
    measured = estimate.measure("paper", backend="openai", notebooks=estimate.SIZED_NOTEBOOKS)
    rows = []
    for cid, size in sizes.items():
        nbs = notebooks_of(by_id[cid])
        summary = estimate.sized(measured, size["sage"] or None, size["narrative"] or None).summary
        total = summary[summary["notebook"].isin(nbs)].drop(columns=["notebook", "what", "model"]).sum()
        rows.append({"claim_id": cid, "n_80_paper": too_small.loc[cid, "n_80_paper"],
                     "n_paper": too_small.loc[cid, "n_paper"], "power_unit": too_small.loc[cid, "power_unit"],
                     "run": ", ".join(f"{k} {v}" for part in size.values() for k, v in part.items()),
                     "notebooks": ", ".join(nbs), "calls": int(total["calls"]),
                     "input_tokens_typical": int(total["input_typical"]),
                     "output_tokens_typical": int(total["output_typical"]),
                     "usd_typical": total["usd_standard_typical"], "usd_low": total["usd_standard_low"],
                     "usd_high": total["usd_standard_high"]})
    return pd.DataFrame(rows), measured
