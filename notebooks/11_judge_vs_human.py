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
# # 11 · Appendix: judges against people
#
# Both papers compare LLM judges with each other and with mathematics, never with people; both
# name that as their main limitation. This appendix sets the configured judge against public
# human ratings of the same stories:
#
# * **A Confederacy of Models** (Gómez-Rodríguez & Williams, Findings of EMNLP 2023): 60 stories
#   by 12 LLMs and 5 by human writers, all answering one prompt, each rated 0–10 on 10 rubric
#   items by 2 of 10 raters (5 groups of 13 stories).
# * **Art or Artifice** (Chakrabarty et al., CHI 2024): 36 LLM stories (GPT-3.5, GPT-4,
#   Claude v1.3) written from New Yorker plots, each judged Yes/No on the 14 Torrance Tests of
#   Creative Writing by 3 of 11 experts.
#
# Steps: load the ratings into one tidy table; measure how well the **humans agree with each
# other** (ICC, Krippendorff's α, leave-one-rater-out rank correlation) — the ceiling for any
# judge; run two judges through the gateway — **SAGE L5** (emotional-psychological, content-limit
# mode, the full evaluator + validator protocol) and a short **holistic 1–10 judge** in the style
# of the narrative study's simple mode (`prompts/human/holistic.md`); report Spearman and Kendall
# correlations with the mean human rating per criterion that maps sensibly, with bootstrap CIs,
# beside the human ceiling; and compare the ranking of the story sources by people and by the judge.
#
# Neither paper reports these numbers, so there are no `paper_*` columns: everything here is new.

# %% tags=["parameters"]
# BACKEND / MODEL / BASE_URL: None = from $JUDGELAB_BACKEND etc., else the embedded llama.cpp model.
# CACHE_MODE: normal | replay | refresh (None = $JUDGELAB_CACHE_MODE, else normal).
# N_STORIES: stories judged per data set (None = the profile's; smoke 2, demo 26 + 6, paper all).
# DATASETS: "confederacy", "artifice" or both, comma-separated (None = both).
# RUN_SAGE: also run SAGE L5 on the stories (the holistic judge always runs); true/false, on/off, 1/0
# (None = the profile's human.run_sage).
PROFILE = "demo"
BACKEND = None
MODEL = None
BASE_URL = None
CACHE_MODE = None
N_STORIES = None
DATASETS = None
RUN_SAGE = None

# %%
import pandas as pd
from IPython.display import Markdown, display

from judgelab import exchange
from judgelab.study_models import open_gateway
from judgelab.claims import design
from judgelab.human import appendix, figures
from judgelab.run import Run

run = Run.open("11", profile=PROFILE, params=globals())
knobs = run.knobs(run.config.knobs("human"))
datasets = appendix.check_datasets(DATASETS)
n_stories = appendix.stories_per_dataset(knobs, datasets, N_STORIES)
pd.set_option("display.precision", 3)
pd.set_option("display.width", 160)
pd.set_option("display.max_colwidth", 60)
appendix.run_settings(PROFILE, knobs, n_stories)

# %% [markdown]
# ## The judge
#
# Every call goes through the gateway (cache, structured output, retries, ledger).

# %%
gw = run.use(open_gateway("holistic", config=run.config))
run.choose({"reasoning_effort": design.effort_of(run.backend, run.model, gw.reasoning)})  # in every sidecar
run.banner()
display(Markdown(appendix.judge_note(gw)))

# %% [markdown]
# ## The human ratings
#
# One row per single rating: (dataset, story, source, criterion, rater, value). Derived per-rater
# scores are appended: Confederacy `overall` (mean of the 10 rubric items), Art or Artifice
# `tests_passed` (0–14) and `dim_<dimension>` (share of a Torrance dimension's tests passed).

# %%
human = appendix.load_human(datasets)
appendix.human_overview(human)

# %% [markdown]
# ## How well do people agree? The ceiling
#
# Each story has its own raters (Confederacy: 2 per story; Art or Artifice: 3 per story), so the
# ICC is the one-way random-effects ICC(1) for a single rating and ICC(1,k) for the mean of the
# k ratings; Krippendorff's α is interval for scores and nominal for Yes/No verdicts. The
# leave-one-rater-out (LOO) Spearman — each rater against the mean of the others on the same
# stories, averaged over raters — is how well one person agrees with the rest of the panel. The
# ICC intervals are F-based and unrounded (pingouin rounds them to 2 decimals).

# %%
ceiling = appendix.human_ceiling(human)
run.table(ceiling, "sage_human_reliability")
ceiling[["dataset", "criterion", "n_raters", "k", "n_stories", "icc1", "icc1_lo", "icc1_hi", "icc1k",
         "alpha", "alpha_level", "loo_spearman_mean", "loo_kendall_mean"]]

# %% [markdown]
# ### For reference: the Art-or-Artifice study's own LLM judges
#
# The study published the answers of seven LLM judges (GPT-3.5, GPT-4, Gemini Pro, Claude
# v1.3/2/2.1/3 Opus) to the same 14 tests. Against the expert majority: verdict agreement and
# Cohen's κ, and the rank correlation of each judge's number of tests passed with the experts'
# mean, per story. No model is called here; these are recorded answers (unparsed ones, e.g.
# refusals, are counted, not scored).

# %%
if "artifice" in datasets:
    published = appendix.published_judges_vs_experts(human, knobs)
    run.table(published, "sage_published_judges_vs_human")
    display(published[["judge", "n_verdicts", "n_unparsed", "agreement", "kappa", "judge_yes_rate",
                       "expert_yes_rate", "tests_passed_spearman", "tests_passed_spearman_lo",
                       "tests_passed_spearman_hi"]])

# %% [markdown]
# ## The stories judged
#
# Stratified by source so that every model appears once before any appears twice (smoke: the
# shortest stories, for speed).

# %%
stories = appendix.stories_for(n_stories, knobs)
stories[["dataset", "story", "source", "words"]]

# %% [markdown]
# ## Judge 1: the holistic 1–10 score

# %%
holistic_rows = appendix.run_holistic(gw, stories, knobs, PROFILE)
holistic_rows[["dataset", "story", "score", "status", "input_tokens", "output_tokens", "cached"]]

# %% [markdown]
# ## Judge 2: SAGE L5 (emotional-psychological), content-limit mode
#
# The full protocol of notebooks 02–04 (5 evaluator rounds, blind validator, review) with SAGE's
# knobs for this profile (smoke: on the first story only — 7 calls per story). Measures: `sage_l5_overall` (mean of the four round-5 dimension scores)
# and one per dimension (AC affective complexity, PI psychological interiority, EG emotional
# granularity, ENC emotional-narrative coherence).

# %%
sage_run = appendix.run_sage(gw, stories, knobs, run.config, enabled=run.config["human.run_sage"])
appendix.sage_overview(sage_run)

# %%
scores = appendix.collect_scores(holistic_rows, sage_run, layer=knobs["sage_layer"])
run.table(appendix.with_provenance(scores, backend=gw.backend_name, model=gw.model_name, profile=PROFILE),
          "sage_judge_vs_human_scores")
appendix.scores_wide(scores)

# %% [markdown]
# ## Judge against people
#
# One row per comparison that maps sensibly (`judgelab.human.compare.CRITERION_MAP`, each with
# its rationale). Unit: the story.
#
# **Like for like**. A judge is compared with people against the *same* reference. For
# each rater r and the judged stories r rated with another rater, the reference is the mean of the
# *other* raters of each story, m₋ᵣ. Then `human_loo` = mean over raters of ρ(rater r, m₋ᵣ) — the
# human ceiling — and `judge_loo` = mean over the same raters of ρ(judge, m₋ᵣ): the judge in the
# left-out rater's place, on the same stories, against the same k − 1 ratings. `loo_gap` =
# `judge_loo` − `human_loo` > 0 means the judge agrees with the panel better than the person it
# replaces. 95% CIs: a seeded cluster bootstrap over stories (`loo_ci_method`). (Correlating the
# judge with the mean of *all* k raters while each human is correlated with k − 1 favoured the
# judge: one exactly as noisy as a person "beat" that ceiling in 71% of simulations at k = 2; with
# this construction, in half — `tests/test_human_compare.py`.)
#
# For context the table keeps Spearman's ρ and Kendall's τ-b between the judge's score and the mean
# of all the story's ratings (`spearman`, `kendall`, percentile-bootstrap CIs) and the panel's LOO
# over every rated story (`ceiling_spearman`); these two are not comparable with each other. With
# fewer than 3 stories there is no correlation: `status` says so.

# %%
table = appendix.comparison(scores, human, ceiling, knobs, backend=gw.backend_name, model=gw.model_name,
                            profile=PROFILE)
run.table(table, "sage_judge_vs_human")
table[["dataset", "measure", "criterion", "status", "n", "judge_loo", "judge_loo_ci_low", "judge_loo_ci_high",
       "human_loo", "human_loo_ci_low", "human_loo_ci_high", "loo_gap", "loo_gap_ci_low", "loo_gap_ci_high",
       "loo_n_raters", "spearman", "spearman_lo", "spearman_hi", "ceiling_spearman", "loo_note"]]

# %%
fig = figures.plot_judge_vs_human(table, scores, human, measure="holistic",
                                  title=f"Judge vs people ({gw.backend_name}:{gw.model_name})")
run.figure(fig, "sage_fig_judge_vs_human",
           "Left: holistic judge score vs mean human overall rating per story. Right, like for "
           "like: the judge's Spearman rho with the mean of the other raters (averaged over "
           "which rater is left out; 95% CI, cluster bootstrap over stories) per mapped "
           "comparison; diamonds: each rater against the same reference on the same stories "
           "(the human ceiling).")

# %% [markdown]
# ## Which models write better? People vs the judge
#
# Sources (the LLMs, and the human writers in Confederacy) ranked by their mean overall human
# rating and by the judge's mean score over the same judged stories (1 = best).

# %%
ranks, rank_agreement = appendix.rankings(scores, human)
if len(ranks):
    run.table(appendix.with_provenance(ranks, backend=gw.backend_name, model=gw.model_name, profile=PROFILE),
              "sage_judge_vs_human_rankings")
    display(rank_agreement)
ranks

# %% [markdown]
# ## What it cost

# %%
appendix.cost_summary(gw.ledger_frame())

# %% [markdown]
# ## Reading the results
#
# * A judge whose `judge_loo` reaches `human_loo` (a `loo_gap` CI covering 0 or above it) agrees
#   with the rest of the panel about as well as the person it replaces. Both are on the judged
#   stories only, so with few stories the CIs are wide.
# * Confederacy's stories all answer one comic prompt and are short (59–1,223 words), and its
#   rubric rewards prompt-specific items (John Kennedy Toole's style, the combat, Ignatius): an
#   emotional-psychological layer (SAGE L5) is not designed for them, so its mapped comparisons
#   are the loose ones; the holistic score is the fair test.
# * The published Art-or-Artifice judges show what capable models do on the same stories: their
#   verdicts barely agree with the experts' (κ near zero), as that paper reports.
# * With the bundled 135M model every judge number above is noise (at temperature 0 it tends to
#   give every story the same score, and then no correlation exists at all).

# %%
# The judge at work: the holistic judge on one human-rated story,
# as sent and as answered. Read from this run's cache and transcripts (judgelab.exchange; no
# call is made); long texts are cut in the middle.
exchange.show({"study": "human"});
