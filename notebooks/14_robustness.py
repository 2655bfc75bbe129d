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
# # 14 — Robustness: which findings survive the analyst's choices
#
# **Question.** Would a reasonable analyst get the same answer? Each number of notebooks 07 and 08
# rests on choices the Narrative Trails paper does not fix: the UMAP / HDBSCAN parameter set (the
# authors published two), the log base of the Jensen–Shannon distance, the reading of "between"
# for the random baseline's dates, the endpoint strata's cut-offs (ours), the UMAP seed — and the
# embedding, which is the paper's design on news (the authors' `text-embedding-3-small` vectors)
# but MiniLM on every VisPub and out-of-distribution row of this compendium. A **specification
# curve** (Simonsohn, Simmons & Nelson 2020; a multiverse analysis, Steegen et al. 2016) runs every
# combination and shows where each claim's estimate lands.
#
# **How.** `judgelab.narrative.analyses.robustness`: the same functions notebooks 07 and 08 call
# (UMAP + HDBSCAN fit, coherence, critical coherence, endpoint sampling, widest paths, random
# baseline, Tables 1 and 4's statistics with their cluster bootstrap over endpoint pairs); one fit
# per embedding × parameter set × seed (notebook 07's main fit reused), one coherence matrix per
# fit and JSD base, one endpoint sample per matrix and strata rule, both date rules on the same
# endpoints. The main specification (the profile's notebook 07/08 choices) is notebook 08's main
# row of Tables 1 and 4, number for number (tested). Each claim's verdict under each
# specification is the claims register's own rule and margin (`judgelab.claims.verdicts.decide`).
#
# **Labels.** A claim is *robust* when every defensible specification reproduces it, *fragile*
# when some reproduce it and others decide against it (the choice decides the verdict), *not
# reproduced under any* when some decide against and none reproduces, *too wide to tell* when none
# decides against and not all reproduce, *not comparable* when the run's design is not the paper's
# in what the claim depends on (a subset, too few pairs: as the scorecard). The declared choices (first
# table) say which values are defensible readings of the paper and why; MiniLM and endpoints
# without strata are not the paper's design: they are run and drawn, and left out of the label.
# Verdicts of correlated specifications are not independent tests: the share reproduced describes
# this grid, it is not a probability.

# %% tags=["parameters"]
# N_PAIRS: None = the profile's (each specification's endpoint pairs; robustness.n_pairs or the collection's)
PROFILE = "demo"
N_PAIRS = None

# %%
from judgelab.narrative.analyses import figures, robustness
from judgelab.params import as_optional_int
from judgelab.run import Run

run = Run.open("14", profile=PROFILE, params=globals())
grid = robustness.grid_settings(run.config, n_pairs=as_optional_int(N_PAIRS, name="N_PAIRS"))
run.knobs(grid.knobs)
print(f"{grid.n_specifications} specifications of {grid.collection}, {grid.n_pairs} endpoint pairs each")
{d: list(v) for d, v in grid.values.items()}

# %% [markdown]
# ## The choices, and why each is defensible

# %%
run.table(robustness.choices_table(), "narr_robustness_choices")

# %% [markdown]
# ## Run the grid
#
# Notebook 07's landscape and documents are read; an embedding other than the landscape's is
# computed (and cached) from the same documents.

# %%
inputs = robustness.load_inputs(grid)
result = robustness.run_grid(inputs, grid)
print(f"{len(result.specifications)} specifications from {result.n_fits} new UMAP + HDBSCAN fits")
run.table(result.specifications, "narr_robustness_specifications")

# %% [markdown]
# ## Every claim under every specification
#
# One row per specification × claim: estimate, 95% interval (percentile cluster bootstrap over
# endpoint pairs, as Tables 1 and 4), p where the claim's rule reads one, the paper's value, the
# margin and the verdict.

# %%
estimates = run.table(robustness.claim_estimates(result), "narr_robustness_verdicts")
estimates.pivot_table(index="claim_id", columns="verdict", values="spec_id", aggfunc="count", fill_value=0)

# %% [markdown]
# ## Robust or fragile: the table the scorecard joins on `claim_id`

# %%
summary = run.table(robustness.claims_robustness(estimates), "narr_claims_robustness")
summary[["claim_id", "n_specifications", "share_reproduced", "estimate_min", "estimate_max", "paper_value",
         "main_verdict", "robustness"]]

# %% [markdown]
# ## How often the label errs, at known truth
#
# By simulation at this grid's design: as many defensible specifications as here, each with the
# main specification's standard error, their estimates correlated 0 or 0.9 (they share documents
# and most endpoints), judged by each claim's own rule. At the paper's value, `share` of *robust*
# is the label's power; at the margin's edge, its false-robust rate; twice the margin away, the
# share that is wrongly not called *not reproduced under any*.

# %%
rates = run.table(robustness.label_error_rates(estimates, n_sim=int(grid.knobs["label_simulations"]), seed=grid.main["seed"]),
                  "narr_robustness_label_error_rates")
rates.pivot_table(index=["claim_id", "rho", "truth"], columns="label", values="share") if len(rates) else rates

# %% [markdown]
# ## Specification curves, one figure per claim family
#
# Above: each specification's estimate and 95% interval, sorted, coloured by its verdict; the
# paper's value dashed, its margin shaded. Below: the choices of each specification (the main one
# highlighted).

# %%
for family, ids in robustness.families(estimates).items():
    fig = figures.specification_curve_figure(estimates, ids, robustness.CHOICES, robustness.DIMENSIONS)
    run.figure(fig, f"narr_fig_robustness_{family.removeprefix('narr-').replace('-', '_')}",
               f"Specification curve, {family}: estimate and 95% cluster-bootstrap interval over endpoint pairs "
               f"per specification ({grid.n_pairs} pairs sought each), sorted; dashed = paper's value.")

# %% [markdown]
# ## What each choice does (mean estimate over the specifications sharing a value)

# %%
run.table(robustness.choice_effects(estimates), "narr_robustness_choice_effects")

# %% [markdown]
# ## The path-length discrepancy: does any choice reach the paper's 4.70 and 3.97?
#
# Our max-capacity paths are longer than the paper's Table 1. Per length claim and counting
# convention (documents with the endpoints, as this compendium and the paper's Figure 8h axis say;
# or edges, documents − 1), how many specifications the claim's rule calls reproduced, and which;
# the shortest path seen beside the paper's minimum of 2.

# %%
lengths = run.table(robustness.path_length_note(result, estimates), "narr_robustness_path_length")
lengths[["claim_id", "reading", "n_specifications", "n_reproduced", "estimate_min", "estimate_max",
         "main_estimate", "main_ci_low", "main_ci_high", "shortest_path", "paper_value", "paper_min"]]

# %% [markdown]
# ## The embedding: the authors' vectors against MiniLM, same documents, every other choice equal
#
# What every VisPub and OOD row rests on, measured where both embeddings exist (news).

# %%
emb = robustness.embedding_effect(estimates)
if len(emb):
    run.table(emb, "narr_robustness_embedding")
emb

# %% [markdown]
# ## SAGE: do the genre and mode findings depend on mode pooling, the unit and the test?
#
# The paper reads SAGE's statistics one way: every story × mode evaluation one observation, t-tests.
# Here each genre gap (canonical − pulp, canonical − LLM, per layer and on average) is tested with
# the two modes **pooled** (a story's modes averaged: the main analysis; or both modes as rows, the
# paper's story × mode reading, which counts a story twice) or **per mode** (content only, title
# only), by Welch's t (with its interval) and by Mann–Whitney U, and by a mixed model with a story
# random intercept (modes as repeated measures); each mode difference (title − content) by the
# paired t and Wilcoxon, over stories and over the paper's pooled story × layer pairs.
# `conclusion` is read at the paper's α = 0.05; a finding *depends on the analysis* when a defined
# analysis reaches another conclusion than the main one.
#
# **Verdicts per analysis.** Each analysis is then judged by every register claim about its finding
# (the genre gaps' values, canonical > pulp, mode invariance), by the claim's own rule and margin on
# the analysis's own interval (`rule_verdict`). `verdict` is the scorecard's: on the embedded 135M
# model's scores (named in the banner below) it is *not testable by this judge* — those numbers
# show the pipeline runs, not the paper's findings — and *not comparable* when the run's judge or
# profile is not the paper's.

# %%
from IPython.display import display

from judgelab.claims import design
from judgelab.sage.analysis import evaluations
from judgelab.sage.analysis import robustness as sage_robustness
from judgelab.sage.analysis import scores as sage_scores

try:
    ev = evaluations.load_evaluations()
except evaluations.SageStatsError as exc:   # no SAGE run in this output root (e.g. a mathematics-only run)
    ev = None
    print(f"No SAGE section: {exc}")
if ev is not None:
    run.judge(ev.backend, ev.model)  # the judge of notebooks 02-04's rows names the SAGE tables below
    run.banner()
    findings = run.table(sage_robustness.findings_under_choices(sage_scores.story_scores(ev.rows)),
                         "sage_robustness_findings")
    display(run.table(sage_robustness.finding_stability(findings), "sage_robustness_stability"))

# %%
if ev is not None:
    sage_profile = ", ".join(sorted(ev.rows["profile"].astype(str).unique()))
    sage_design = design.sage_choices(ev.rows, ev.backend, ev.model, getattr(run.config.gateways.get("sage"), "reasoning", None))
    sage_verdicts = run.table(sage_robustness.analysis_verdicts(findings, ev.backend, ev.model, sage_profile,
                                                                choices=sage_design), "sage_robustness_verdicts")
    display(sage_verdicts.pivot_table(index="claim_id", columns="rule_verdict", values="test", aggfunc="count",
                                      fill_value=0) if len(sage_verdicts) else sage_verdicts)
    display(sage_verdicts[["claim_id", "mode_pooling", "test", "diff", "ci_low", "ci_high", "paper_value",
                           "rule_verdict", "verdict"]].head(24) if len(sage_verdicts) else sage_verdicts)
