# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 13 · The claims scorecard: which of the papers' claims this run can test, and what it finds
#
# Every headline claim of both papers (SAGE and Narrative Trails) is listed in one register,
# `lib/judgelab/claims/claims.yaml`, written before any run: the paper's wording and where it
# stands, the paper's number (a reference to the study's transcribed `paper_values`, never
# retyped), the statistic, the table and column this compendium computes it in, and the
# **verdict rule**. This notebook reads the tables the other notebooks wrote and gives each claim
# one of four verdicts:
#
# * **consistent** / **inconsistent** — the rule applied to the paper's value and our 95% interval
#   (inside / outside the CI; a bound met by the whole CI or excluded by it; the sign and the
#   test at the paper's α for a direction; an equivalence margin for "no effect");
# * **underpowered** — our CI is too wide to tell (its width is shown), straddles a bound, or
#   cannot be computed from this run's few units;
# * **not testable by this judge** — a claim about an LLM's judgements whose table was made by the
#   embedded 135M model (read from the table's provenance sidecar): such a run shows that the
#   pipeline works, not the finding. The mathematics of Narrative Trails (coherence, paths) and
#   token counts need no judge and are tested on any run.
#
# **Intervals.** Where a table carries the convention's `X_ci_low` / `X_ci_high` (issue 26: the
# SAGE tables over stories, read from their `analysis == story` rows; the narrative tables over
# endpoint pairs, read from the strict date rule's main rows), the scorecard reads them, its
# `ci_method` included; a row the table leaves empty (too few clusters, as in a smoke run) stays
# empty. Only where a table has none (token ratios, Table 5's times, the OOD tables) does it
# compute the interval itself from the table's summary columns
# (`judgelab.claims.scorecard.fallback_interval`, the one place that does); `ci_source` says which.
#
# **Power.** For each LLM claim, the number of units (stories, narratives, agents' targets) at
# which the claim's own rule would return *consistent* with 80% probability if the paper's value
# were true, by seeded simulation, with the paper's SDs (`n_80_paper`) and with the variance this
# run measured (`n_80_run`). `make estimate PROFILE=paper` prices a run of that size.
#
# Library: `judgelab.claims` (register, verdicts, intervals, power, scorecard, figure), tested in
# `tests/test_claims.py`.

# %% tags=["parameters"]
# REGISTER: path of a claims register (None = the committed lib/judgelab/claims/claims.yaml).
# POWER_SIMULATIONS: simulated runs per power estimate (None = the profile's).
PROFILE = "demo"
REGISTER = None
POWER_SIMULATIONS = None

# %%
import pandas as pd
from IPython.display import Markdown, display

from judgelab import paths, profiles, reporting
from judgelab.claims import figure, register, scorecard
from judgelab.claims.settings import scorecard_settings

profiles.check(PROFILE)
knobs = scorecard_settings(PROFILE)
if POWER_SIMULATIONS is not None:
    knobs["power_simulations"] = int(POWER_SIMULATIONS)
pd.set_option("display.max_columns", 30, "display.width", 180, "display.precision", 3,
              "display.max_colwidth", 60)
knobs

# %% [markdown]
# ## The register
#
# One row per claim: where the paper makes it, the number it cites, the statistic and the rule.

# %%
claims = register.load(REGISTER)
display(register.as_frame(claims)[["claim_id", "location", "paper_value", "statistic", "rule", "table", "column", "llm"]])

# %% [markdown]
# ## The scorecard
#
# Each claim read against this run's tables (`results/tables/`) and their provenance sidecars.
# A table that no notebook wrote in this run gives `not run` (with the notebook to run).

# %%
card = scorecard.scorecard(claims, paths.tables_dir(), knobs, paths.interim_dir())
judges = scorecard.run_judge(card)
CAPTION = reporting.provenance(PROFILE, *judges)
display(Markdown(reporting.model_banner(*judges)) if judges[0] else Markdown("> No LLM judge behind the tables read."))
reporting.saved_table(card, "claims_scorecard")
display(card[["claim_id", "verdict", "paper_value", "estimate", "ci_low", "ci_high", "ci_width", "reason"]])

# %%
display(scorecard.verdict_counts(card))
display(card.groupby(["study", "ci_source"], dropna=False).size().rename("claims").to_frame())

# %% [markdown]
# ## Figure · the scorecard at a glance
#
# Claims down the side; on one standardised axis per claim, the paper's value (black tick, at 0),
# our value (marker) and our 95% CI (bar), in units of the claim's tolerance; the verdict as a
# colour (Okabe–Ito) and, on the right, in words.

# %%
fig = figure.plot_scorecard(card, {c.id: c.rule for c in claims})
reporting.save_figure(fig, "claims_fig_scorecard",
                      caption=f"Claims scorecard: paper value (|), our value and 95% CI, standardised per claim; "
                              f"verdict by colour and label. {CAPTION}")

# %% [markdown]
# ## What a live run must include
#
# For each claim about an LLM's judgements: the units at which the paper's effect would be shown
# (the claim's rule returning *consistent*) with 80% power — from the paper's SDs where it gives
# them, and from the spread this run measured. `inf` means the rule cannot be met at any size up
# to the search limit (e.g. a CI that must exclude a bound the paper's own value nearly touches).

# %%
display(scorecard.power_table(card))
