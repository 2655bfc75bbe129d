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
# # 10 · What the judges cost, whether they catch adversarial narratives, and follow-ups
#
# The practical verdict of the Narrative Trails judge study (the Narrative paper, sections 5.6–5.9,
# Tables 5–8, Figure 9):
#
# * **Cost (Table 5).** Per prompt mode: input tokens per narrative counted with tiktoken and as
#   the backend reported them, output tokens, seconds per narrative (fresh calls only; cache hits
#   counted apart), dollars per 1,000 narratives; then how much correlation with coherence each
#   extra token buys relative to the simple mode.
# * **Out-of-distribution narratives (5.7).** Alternating (the collection switches at every step)
#   and random mixed narratives drawn from news + VisPub embedded in ONE space, their coherence on
#   the joint landscape and their judge scores; plus two perturbation families the paper does not
#   have: shuffled order, and one document swapped for an off-topic one.
# * **Follow-ups (5.8–5.9).** Predicting the LLM score from the coherence metrics (Table 6), the
#   forest's feature importances (Table 7), agent disagreement (Table 8), temporal span,
#   path complexity, and the stability of the findings over five folds (Figure 9).
#
# Inputs: `narr_paths.parquet` (08), `narr_judge_scores.parquet` (09), `narr_documents_*` and
# `narr_landscape_*` (07). The paper's values sit beside ours in `paper_*` columns.
#
# **Unit and uncertainty.** As in notebook 09, the independent unit of the follow-ups is the
# endpoint pair (a pair's two narratives share their endpoints; a narrative's K agents are
# summarised by their mean). Their intervals (`X_ci_low` / `X_ci_high`, `ci_method`, `unit`) are
# seeded percentile cluster bootstraps over endpoint pairs; correlations reported together carry a
# bootstrap p over pairs adjusted within the table (`mc_family`, `p_holm`, `p_bonferroni`).

# %% tags=["parameters"]
# BACKEND / MODEL / BASE_URL: None = $JUDGELAB_BACKEND etc., else the embedded llama.cpp model.
# CACHE_MODE: normal | replay | refresh (None = $JUDGELAB_CACHE_MODE, else normal).
# N_COST_SAMPLE: narratives in the cost sample, 2 per endpoint pair (None = the profile's; paper: 60).
# N_OOD: narratives of each OOD kind (None = the profile's; paper: 30).
# N_PERTURBED: narratives of each perturbation family (None = the profile's, "all" = every eligible path).
# K: agents per OOD / perturbed narrative (None = the profile's; "all" or a profile's None = as notebook 09).
# OOD_MODES: judge modes for them, e.g. "simple,standard" (None = the profile's).
PROFILE = "demo"
BACKEND = None
MODEL = None
BASE_URL = None
CACHE_MODE = None
N_COST_SAMPLE = None
N_OOD = None
N_PERTURBED = None
K = None
OOD_MODES = None

# %%
import pandas as pd
from IPython.display import display

from judgelab.study_models import open_gateway
from judgelab.narrative.analyses import (correlations, cost, disagreement, inputs, joint_collection, ood_study,
                                         prediction, stability)
from judgelab.narrative.analyses import figures as analyses_figures, paper_tables as analyses_tables
from judgelab.narrative.judges import agreement, paper_tables as judge_tables
from judgelab.narrative.settings import cost_ood_knobs
from judgelab.claims import design
from judgelab.run import Run

run = Run.open("10", profile=PROFILE, params=globals())  # N_OOD, OOD_MODES, BACKEND ... resolved into run.config
knobs = run.knobs(cost_ood_knobs(run.config, n_cost_sample=N_COST_SAMPLE, n_perturbed=N_PERTURBED, k=K))
SEED = knobs["seed"]
pd.set_option("display.precision", 3)
knobs

# %% [markdown]
# ## The judge
#
# Every call goes through the gateway (cache, structured output, ledger). When the bundled
# SmolLM2-135M answers, its scores are close to random: the numbers below show that the pipeline
# runs, not what the paper found.

# %%
gw = run.use(open_gateway("narrative", config=run.config))
run.banner()

# %% [markdown]
# ## Inputs from notebooks 07–09
#
# The paths of 08, the judge scores of 09, and for each collection notebook 07's documents and
# landscape (of which this notebook reads the coherence matrix and the 2-D map), loaded and
# checked against their contracts by `narrative.analyses.inputs`.

# %%
found = inputs.load()
all_paths, scores = found.paths, found.scores
run.choose(design.judge_choices(scores, run.backend, run.model, gw.reasoning))  # notebook 09's K, pairs; the effort
print(found.summary())

# %% [markdown]
# ## Table 5 · Tokens, seconds and dollars per narrative
#
# As in the paper: a sample of endpoint pairs (both their max-capacity and random paths), each
# narrative judged once (K = 1) in every mode, from VisPub when notebook 08 extracted VisPub paths.
# The single agent sits at the midpoint temperature, so these are new cache entries (not notebook
# 09's agents); when a re-run finds them cached, its times are excluded and `n_cached` says so
# (run with `CACHE_MODE="refresh"` to time the calls again).

# %%
measured = cost.run_cost_sample(gw, all_paths, n_pairs=knobs["n_cost_pairs"], modes=knobs["cost_modes"], seed=SEED,
                                max_tokens=knobs["max_tokens"], reasoning_chars=knobs["reasoning_chars"], profile=PROFILE)
print(f"cost sample: {len(measured.sample)} {measured.collection} narratives x {len(knobs['cost_modes'])} modes, K = 1")
measured.split

# %%
table05 = analyses_tables.table05(cost.cost_table(measured.calls))
run.table(table05, "narr_table05_cost")

# %% [markdown]
# `tiktoken_input` counts the rendered prompt (system + user, chat framing included) with the
# judge model's tiktoken encoding (`encoding`); `reported_input` is what the backend counted with
# its own tokenizer (for SmolLM2 that is its own BPE, so the two differ). `usd_per_1k` prices the
# calls at the judge model's rate in the gateway's price table (zero for a local model);
# `usd_per_1k_ref` prices the same prompts at the paper's judge (`gpt-4.1`).
#
# ### Cost–performance: correlation gained per extra token
#
# Pearson r of the mean score with average coherence (notebook 09's judged narratives of the same
# collection) against the mean tiktoken input per mode, relative to simple; beside it the same
# quantities derived from the paper's Tables 2 and 5 (its "7% improvement at 83% more tokens").
# r, the gain Δr and the relative gain Δr / r_simple carry 95% intervals from one cluster
# bootstrap over endpoint pairs shared by all modes (`r_gain_rel_ci_*`: e.g. complex vs simple).

# %%
cost_perf = analyses_tables.cost_performance_with_paper(
    cost.judged_cost_performance(table05, all_paths, scores, measured.collection, seed=SEED),
    cost.paper_cost_performance())
run.table(cost_perf, "narr_cost_performance")

# %% [markdown]
# ## Out-of-distribution narratives (section 5.7)
#
# One shared embedding space: both collections embedded with the bundled MiniLM (the mirror has
# the authors' OpenAI vectors for news only, so mixing them with anything else would compare
# vectors from different spaces). The joint landscape is fitted as in notebook 07 (UMAP 48-d,
# cosine; HDBSCAN soft memberships) and coherence θ = √(S·T) is read on it.

# %%
joint = joint_collection.build_joint_collection(
    found.docs, ("news", "vispub"), subset={"vispub": knobs["vispub_subset"]}, n_neighbors=knobs["joint_neighbors"],
    min_cluster_size=knobs["joint_min_cluster_size"], seed=SEED, jsd_base=knobs["jsd_base"])
print(f"joint collection: {joint.docs.groupby('collection').size().to_dict()} documents, "
      f"{joint.n_topics} topics, embeddings {joint.embedding_source}")

# %% [markdown]
# ### The narratives and their judges
#
# *Alternating* and *random mixed* narratives on the joint collection, their lengths drawn from
# notebook 08's max-capacity paths. Two perturbation families beyond the paper, from notebook 09's
# judged max-capacity paths with three or more documents: the same documents shuffled, and one
# interior document replaced by an off-topic document of the same collection (drawn among the
# candidates least coherent with the rest of the path); their coherence is read on the
# collection's own landscape, so each can be compared with its original. The judges are notebook
# 09's agents (its K per collection and base seed) unless `K` is set; mixed narratives are
# introduced as "news articles and scientific articles".

# %%
ood = ood_study.run_ood_study(
    gw, joint, all_paths, scores, found.coherence, found.titles,
    n_ood=knobs["n_ood"], n_perturbed=knobs["n_perturbed"], modes=knobs["ood_modes"], k=knobs["k"], seed=SEED,
    off_topic_quantile=knobs["off_topic_quantile"], max_tokens=knobs["max_tokens"],
    reasoning_chars=knobs["reasoning_chars"], profile=PROFILE)
print(f"narratives: {ood.narratives.groupby('kind').size().to_dict()}; judged with K = {ood.k or 'as notebook 09'}, "
      f"base seed {ood.seed}; calls: {ood.raw_scores.groupby(['method', 'status']).size().to_dict()}")
ood.narratives[["kind", "narrative_id", "length", "collections", "min_coherence", "mean_coherence"]].head(8)

# %%
run.table(analyses_tables.ood_comparison(ood.summary), "narr_ood_comparison")

# %% [markdown]
# The tests: alternating vs random mixed (Student's t, Cohen's d on the pooled SD; the paper:
# t = −2.93, p = 0.0048, d = −0.77), and each perturbation against its own original (paired t,
# d_z). Then the correlation of coherence with the score over the OOD narratives (paper: r = 0.729).

# %%
display(run.table(analyses_tables.ood_tests(ood.tests), "narr_ood_tests"))
run.table(analyses_tables.ood_correlations(ood.correlations), "narr_ood_correlations")

# %%
fig = analyses_figures.ood_scores(ood.long, ood.kinds)
run.figure(fig, "narr_ood_scores", "LLM score and minimum coherence by narrative kind "
           "(in-distribution, OOD, perturbed); one point per narrative (mean over K agents).")

# %% [markdown]
# ## Follow-up analyses (sections 5.8–5.9)
#
# One row per judged narrative and mode: the path's metrics from notebook 08 (plus path efficiency,
# a complexity score and the temporal span in the collection's unit, computed here) and the
# K-agent score summary of notebook 09.

# %%
long = inputs.narrative_table(all_paths, scores, found.umap2d)
long[["collection", "pair_id", "method", "mode", "length", "min_coherence", "mean_coherence",
      "path_efficiency", "complexity_score", "score_mean", "score_sd", "n_agents"]].head()

# %% [markdown]
# ### Table 6 · Predicting the LLM score from the coherence metrics
#
# Linear, ridge, random forest (and the paper's fourth row, degree-2 polynomial) on minimum
# coherence, average coherence and path length; R² on held-out folds (5-fold, folds over endpoint
# pairs), mean ± SD, and the 95% interval of the mean by a cluster bootstrap over endpoint pairs of
# the held-out predictions (models not refitted: `ci_method`).

# %%
table06 = analyses_tables.table06(prediction.predictive_table(long, n_splits=knobs["n_splits"], seed=SEED,
                                                                n_estimators=knobs["n_estimators"]))
run.table(table06, "narr_table06_predictive")

# %% [markdown]
# ### Table 7 · Which metric does the forest lean on?
#
# Impurity importances of one forest fitted on all narratives, with a 95% cluster bootstrap over
# endpoint pairs that refits the forest on each resample. The interval shows how far a forest's
# importance moves at this many pairs; it is no interval for the population's importance, which a
# forest this small misjudges (`ci_method`; docs/claims.md, "Intervals valid at their n").

# %%
run.table(analyses_tables.table07(prediction.feature_importance_table(long, seed=SEED, n_estimators=knobs["n_estimators"],
          n_boot=knobs["importance_boot"])), "narr_table07_feature_importance")

# %% [markdown]
# ### Table 8 · Agent disagreement by mode, and by score range
#
# Mean over narratives of the K agents' SD and coefficient of variation (notebook 09's agreement
# functions; 95% cluster bootstrap interval over endpoint pairs), then the SD by the narrative's
# mean-score range (the paper: disagreement peaks at 5–7).

# %%
table08 = judge_tables.disagreement_with_paper(agreement.agent_disagreement(scores, seed=SEED))
run.table(table08, "narr_table08_disagreement")

# %%
run.table(disagreement.disagreement_by_score_range(long), "narr_disagreement_by_score_range")

# %% [markdown]
# ### Temporal span and path complexity
#
# Spans in days for news and years for VisPub, as in the paper; then the mean coherence and score
# by span quartile.

# %%
display(run.table(analyses_tables.temporal_with_paper(correlations.temporal_analysis(long, seed=SEED)),
                  "narr_temporal_span"))
correlations.span_bins(long)

# %%
run.table(analyses_tables.complexity_with_paper(correlations.complexity_analysis(long, seed=SEED)),
                      "narr_path_complexity")

# %% [markdown]
# ### Stability over five folds (section 5.9)
#
# Per fold of endpoint pairs: r on the training part vs the held-out part, and Cohen's d (max
# capacity vs random) on the held-out part.

# %%
folds, stability_summary = stability.cv_stability(long, n_splits=knobs["n_splits"], seed=SEED)
run.table(analyses_tables.stability_with_paper(stability_summary), "narr_cv_stability")

# %% [markdown]
# ### Figure 9

# %%
for name, fig, caption in analyses_figures.figure9_panels(table06, table08, long):
    run.figure(fig, f"narr_fig09_{name}", caption)

# %% [markdown]
# ## What differs from the paper, and why
#
# * **The judge.** The paper used GPT-4.1; by default this runs the bundled SmolLM2-135M (banner
#   above), whose scores are near random and whose seconds come from a 2-core CPU, not an API.
#   Time per narrative is therefore not comparable with the paper's; token counts are.
# * **Token counts.** tiktoken under the judge model's encoding, with chat framing (≈4 tokens per
#   message + 3); our prompts are our own wording, so counts differ from the paper's 123–279.
#   Output tokens and USD per 1,000 narratives are additions.
# * **Shared embedding space for OOD.** Both collections are embedded with MiniLM; the paper
#   embedded both with OpenAI text-embedding-3-small. Random mixed narratives are redrawn until
#   both collections appear (otherwise many would be plain VisPub samples). The paper does not
#   say which coherence statistic it reports for OOD narratives; minimum and average are both here,
#   the paper's values sit beside the minimum.
# * **Perturbations** (shuffled, off-topic) are beyond the paper.
# * **Cross-validation folds** are drawn over endpoint pairs so a max-capacity path and its random
#   twin never sit on both sides of a split; the paper does not say how it split.
# * **Path efficiency** (undefined in the paper) is the straightness index of the path on the 2-D
#   landscape map; the complexity score is the mean of the z-scored coherence variance, weak-link
#   ratio and 1 − efficiency.
