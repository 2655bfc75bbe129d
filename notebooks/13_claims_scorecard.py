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
# **verdict rule**, and the claim's **family**: its margin of equivalence and what its design
# depends on, fixed (with the date) before any run. This notebook reads the tables the other
# notebooks wrote and gives each claim one of seven verdicts, asking in this order:
#
# 1. **not run** — the claim's table is not in this run (the notebook to run is named), or, once
#    the judge can test it, the row it needs (with the design differences that explain why);
# 2. **not testable by this judge** — a claim about an LLM's judgements whose table was made by the
#    embedded 135M model, or by an unknown judge (no provenance sidecar): such a run shows that the
#    pipeline works, not the finding;
# 3. **not comparable** — the run's design differs from the paper's in something the claim depends
#    on: the judge model (the paper's, `judgelab.study_models.PAPER_JUDGES`), the embedding model
#    (text-embedding-3-small; VisPub and the OOD study's joint landscape use MiniLM here), a subset
#    of the collection, fewer units than the claim's minimum, a profile other than `paper`, an
#    analysis choice notebooks 07-08 recorded other than the paper's (JSD base, temporal rule,
#    parameter set), or tables written from uncommitted code (`judgelab.claims.design`; each
#    difference is named in `reason`);
# 4. only then does the rule read our interval against the paper's value and the margin *m*:
#    * **reproduced** — the interval lies within *m* of the paper's value, wholly on the claimed
#      side of its bound, or (a direction) excludes 0 on the paper's side at the paper's α (its p,
#      or the 95% interval widened to 1 − α; never the 95% one in its place);
#    * **reproduced within the margin** — a bound only: the interval reaches the bound and excludes
#      every value *m* or more on its wrong side (the bound may be missed, by less than *m*);
#    * **not reproduced** — the interval excludes the paper's value by more than *m*, lies beyond
#      the bound's margin on its wrong side, or (a direction) the estimate is not on the claimed
#      side and the interval excludes every effect of min(*m*, the paper's effect); an interval
#      that holds the paper's own value is never *not reproduced*;
#    * **inconclusive** — neither: too wide to tell; `decisive_width` is the width an interval on
#      the same estimate would need to decide. No interval at all (too few units), or one of zero
#      width, is inconclusive.
#
# A smoke or demo run of SAGE, or any run on the embedded model, therefore decides nothing about the
# papers: its verdicts say why. The mathematics of Narrative Trails (coherence, paths) needs no
# judge and is decided on any run over the whole news collection with at least 30 endpoint pairs.
#
# **Margins** come from the science, not from interval widths: each family in `claims.yaml` states
# the smallest difference that would matter and why (a tenth of a score point for a category's
# mean, half a standard deviation for a d, ...). The scorecard shows the margin beside the interval.
#
# **By chance.** Each interval is a 95% one: when a claim's truth sits on its rule's threshold a
# verdict errs 5% of the time, so over the decided verdicts expect about 5 in 100 wrong by chance
# alone (computed below for this run and for the whole register).
#
# **Intervals.** Where a table carries the convention's `X_ci_low` / `X_ci_high` (the SAGE tables
# over stories, read from their `analysis == story` rows; the narrative tables over endpoint pairs,
# read from the strict date rule's main rows), the scorecard reads them, its `ci_method` included;
# a row the table leaves empty (too few clusters, as in a smoke run) stays empty. Only where a
# table has none (token ratios, Table 5's times, the OOD tables) does it compute the interval
# itself from the table's summary columns (`judgelab.claims.scorecard.fallback_interval`, the one
# place that does); `ci_source` says which.
#
# **Power.** For each LLM claim, the number of units (stories, narratives, agents' targets) at
# which the claim's own rule would return *reproduced* with 80% probability if the paper's value
# were true (`n_80_paper`), by seeded simulation at the design's unit (a story with its modes and
# dimension scores, an endpoint pair with its two paths, raters x items) through the interval the
# claim's table uses (its cluster bootstrap where it has one), with the paper's SDs or a spread
# the register states as an assumption — never this run's (an embedded model's spread says nothing
# of the paper's judge). `n_paper` is the paper's own design in the same units; where `n_80_paper`
# exceeds it, the last section prices the run that would decide.
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

from judgelab import paths
from judgelab.claims import figure, register, scorecard
from judgelab.estimate import decide
from judgelab.run import Run

run = Run.open("13", profile=PROFILE, params=globals())
knobs = run.knobs(run.config.knobs("claims"))  # POWER_SIMULATIONS applied
pd.set_option("display.max_columns", 30, "display.width", 180, "display.precision", 3,
              "display.max_colwidth", 60)
knobs

# %% [markdown]
# ## The register
#
# One row per claim: where the paper makes it, the number it cites, the statistic, the rule, the
# margin with its reason and what the claim's design depends on.

# %%
claims = register.load(REGISTER)
ident = register.identity(REGISTER)  # sha256 and the commit that last changed it; another register says so
display(Markdown(f"Register: **{ident.label}**. Margins and designs fixed on **{claims[0].fixed}**; every later "
                 "change is a dated entry of the register's `changelog`."))
display(register.as_frame(claims)[["claim_id", "location", "paper_value", "statistic", "rule", "margin",
                                   "depends_on", "margin_reason"]])

# %% [markdown]
# ## The scorecard
#
# Each claim read against this run's tables (`results/tables/`) and their provenance sidecars.
# A table that no notebook wrote in this run gives `not run` (with the notebook to run).

# %%
card = scorecard.scorecard(claims, paths.tables_dir(), knobs, paths.interim_dir(), register_identity=ident)
# notebook 14's robustness beside each verdict it covers (absent, with a note, when 14 has not run)
card = scorecard.with_robustness(card, paths.tables_dir(), run.profile)
run.judge(*scorecard.run_judge(card))  # the judge behind the tables read
run.banner()
run.table(card, "claims_scorecard")
display(Markdown(scorecard.first_screen(card)))
display(scorecard.decided_first(card)[["claim_id", "verdict", "paper_value", "estimate", "ci_low", "ci_high", "margin",
                                       "decisive_width", "reason"]])

# %% [markdown]
# ## Across the analysis choices (notebook 14)
#
# For each claim notebook 14's specification grid covers (the news mathematics of Tables 1 and
# 4): over the *defensible* specifications (parameter set, JSD base, date rule, strata cut-offs,
# UMAP seed), how many reproduce the claim, the range of its estimate, and its label: *robust*
# (every one reproduces it), *fragile* (some reproduce it, some decide against it), *not
# reproduced under any*, *too wide to tell*, or *not comparable* (docs/robustness.md). The share
# describes the grid: its specifications share documents and most endpoints, so it is not a
# probability.

# %%
covered = card["robustness"].notna()
display(Markdown(f"**{covered.sum()} claims** labelled across the analysis choices." if covered.any()
                 else f"**No robustness column:** {card['robustness_note'].iloc[0]}."))
display(card.loc[covered, ["claim_id", "verdict", "estimate", "robustness", "robustness_n_reproduced",
                           "robustness_n_specifications", "robustness_estimate_min", "robustness_estimate_max"]])

# %% [markdown]
# Where the paper's estimand is not this compendium's main reading (SAGE's r and d are over story x
# mode rows, 200 for 100 stories; the tables lead with the story means), the claim reads the
# paper's and the other is shown beside it, each with its cluster-bootstrap interval over stories.

# %%
display(card.loc[card["other_reading"].notna(), ["claim_id", "verdict", "paper_value", "estimate", "ci_low", "ci_high",
                                                 "other_reading", "other_estimate", "other_ci_low", "other_ci_high"]])

# %%
display(scorecard.verdict_counts(card))
chance = scorecard.chance_statement(card)
display(Markdown(f"**By chance at 95%:** this run decided {chance['decided']} of {chance['claims']} claims; about "
                 f"{chance['expected_wrong_decided']:.1f} of those verdicts are expected wrong by chance alone "
                 f"({chance['expected_wrong_register']:.1f} were every claim of the register decided)."))
display(card.groupby(["study", "ci_source"], dropna=False).size().rename("claims").to_frame())

# %% [markdown]
# ## Figure · the scorecard at a glance
#
# Claims down the side; on one standardised axis per claim, the paper's value (black tick, at 0),
# our value (marker) and our 95% CI (bar), in units of the claim's margin (a value claim is
# reproduced when its bar lies within ±1); the verdict as a colour (Okabe–Ito) and, on the right,
# in words.

# %%
fig = figure.plot_scorecard(card, {c.id: c.rule for c in claims})
run.figure(fig, "claims_fig_scorecard", "Claims scorecard: paper value (|), our value and 95% CI in units of "
           "each claim's margin; verdict by colour and label.")

# %% [markdown]
# ## How often each rule errs: operating characteristics at the paper's design
#
# For every claim with a power model, its runs simulated at the paper's own design (the claim's
# unit and n, the interval its verdict reads, its own rule), with the truth at the paper's value,
# at the edge of the margin and beyond it on each side: the share of runs given each verdict.
# `error` is P(not reproduced) where the claim is true and P(reproduced, within the margin
# included) where it is false; `tests/test_claims_operating.py` fails when any exceeds 5%. A claim
# with no power model says why (`note`). A claim that is inconclusive at nearly every truth is one
# **the paper's own design cannot decide** at its margin.

# %%
operating = scorecard.operating_table(claims, n_sim=knobs["operating_simulations"], seed=knobs["power_seed"])
run.table(operating, "claims_operating_characteristics")
worst = scorecard.worst_errors(operating)
display(Markdown(f"Worst error of any claim, over {knobs['operating_simulations']} simulated runs per truth: refutes a "
                 f"true paper value {worst.iloc[:, 0].max():.1%}, reproduces a false one {worst.iloc[:, 1].max():.1%} "
                 f"({worst.notna().any(axis=1).sum()} claims simulated; "
                 f"{operating['error'].isna().sum()} without a power model, each with its reason)."))
display(worst.sort_values("reproduces a false one", ascending=False).head(10))
display(operating.loc[operating["error"].isna(), ["claim_id", "note"]].groupby("note").size().rename("claims").to_frame())

# %% [markdown]
# ## What a live run must include
#
# For each claim about an LLM's judgements: the units at which the paper's effect would be shown
# (the claim's rule returning *reproduced*) with 80% power (`n_80_paper`), beside the paper's own
# design (`n_paper`), with the assumption it rests on where the paper gives no spread
# (`power_note`). `inf` means the rule cannot be met at any size up to the search limit (e.g. a
# margin narrower than the interval the paper's own spread allows).

# %%
power_table = scorecard.power_table(card)
display(power_table)

# %% [markdown]
# ## The price of a run that would decide
#
# For each claim whose 80%-power size exceeds the paper's design: that design with the units the
# claim counts (its categories' stories, its collection's endpoint pairs) scaled up by
# `n_80_paper / n_paper`, and what the notebooks the claim reads would cost on the OpenAI backend
# at `lib/judgelab/gateway/prices.csv`'s prices, on each study's judge. **An estimate**, not a
# quote: `judgelab.estimate.sized` builds and counts the requests of three stories per category
# and three pairs per collection exactly as the run would send them, and multiplies the per-unit
# calls, tokens and dollars by the size (typical, with low – high from minimal to schema-capped
# replies); `make estimate PROFILE=paper SAGE_PER_CATEGORY=... NARRATIVE_PAIRS=...` prints the same.

# %%
price_table, measured = decide.price_to_decide(claims, power_table)
if measured is not None:
    display(Markdown(f"Estimated on the OpenAI backend, judges {measured.models} (tokens: {measured.tokenizer}); "
                     "USD at standard prices, an estimate."))
display(price_table if len(price_table) else Markdown("No claim needs more units than the paper's design."))

# %% [markdown]
# ## What the papers' own numbers imply
#
# For a claim about two groups whose paper gives each group's mean, SD and size, the paper's own
# numbers go through the same interval and the same rule as this run's (`judgelab.claims.scorecard.paper_check`):
# where even they do not give *reproduced*, no replication at the paper's design can be expected to.

# %%
display(card.loc[card["paper_check"].astype(str) != "", ["claim_id", "paper_value", "paper_check", "paper_check_verdict"]])
