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
# The practical verdict of the Narrative Trails judge study (paper 002, sections 5.6–5.9,
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

# %% tags=["parameters"]
PROFILE = "demo"
BACKEND = None        # None: $JUDGELAB_BACKEND, else the embedded llama.cpp model
MODEL = None
BASE_URL = None
CACHE_MODE = None     # normal | replay | refresh (None: $JUDGELAB_CACHE_MODE, else normal)
N_COST_SAMPLE = None  # narratives in the cost sample (2 per endpoint pair); None: the profile's (paper: 60)
N_OOD = None          # narratives of each OOD kind; None: the profile's (paper: 30)
N_PERTURBED = None    # narratives of each perturbation family; None: the profile's
K = None              # agents per OOD / perturbed narrative; None: the profile's (None = as notebook 09)
OOD_MODES = None      # e.g. "simple,standard"; None: the profile's

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from judgelab import paths, profiles, reporting
from judgelab.gateway import Gateway
from judgelab.narrative import (cost, cost_ood_figures, cost_ood_settings, cost_ood_tables, followups, judges,
                                judge_tables, agreement, ood, settings, validity)
from judgelab.narrative import interim as narr_interim

profiles.check(PROFILE)
knobs = profiles.pick(cost_ood_settings.COST_OOD_PROFILES, PROFILE)
if N_COST_SAMPLE is not None:
    knobs["n_cost_pairs"] = max(1, int(N_COST_SAMPLE) // 2)
if N_OOD is not None:
    knobs["n_ood"] = int(N_OOD)
if N_PERTURBED is not None:
    knobs["n_perturbed"] = int(N_PERTURBED)
if K is not None:
    knobs["k"] = int(K)
if OOD_MODES:
    knobs["ood_modes"] = tuple(m.strip() for m in str(OOD_MODES).split(",") if m.strip())
SEED = knobs["seed"]
pd.set_option("display.precision", 3)
pd.set_option("display.width", 160)
knobs

# %% [markdown]
# ## The judge
#
# Every call goes through the gateway (cache, structured output, ledger). When the bundled
# SmolLM2-135M answers, its scores are close to random: the numbers below show that the pipeline
# runs, not what the paper found.

# %%
gw = Gateway.from_settings(backend=BACKEND, model=MODEL, base_url=BASE_URL, cache_mode=CACHE_MODE)
CAPTION = reporting.provenance(PROFILE, gw.backend_name, gw.model_name)
display(Markdown(reporting.model_banner(gw.backend_name, gw.model_name)))

# %% [markdown]
# ## Inputs from notebooks 07–09

# %%
interim = paths.interim_dir()
all_paths = pd.read_parquet(interim / "narr_paths.parquet")
scores = pd.read_parquet(interim / "narr_judge_scores.parquet")
present = sorted(all_paths["collection"].unique())
docs = {c: narr_interim.load_documents(c) for c in present}
lands = {}
for c in present:
    with np.load(narr_interim.landscape_path(c)) as z:   # only the two arrays this notebook reads
        lands[c] = {"coherence": z["coherence"], "umap2d": z["umap2d"]}
titles_by_collection = {c: d.sort_values("doc")["title"].tolist() for c, d in docs.items()}
judge_seed = int(scores["seed"].min()) if len(scores) else SEED
k_by_collection = scores.groupby("collection")["agent"].nunique().to_dict()
print(f"paths: {all_paths.groupby(['collection', 'method']).size().to_dict()}")
print(f"judge rows (09): {len(scores)}, agents per collection: {k_by_collection}, base seed {judge_seed}")

# %% [markdown]
# ## Table 5 · Tokens, seconds and dollars per narrative
#
# As in the paper: a sample of endpoint pairs (both their max-capacity and random paths), each
# narrative judged once (K = 1) in every mode, from VisPub when notebook 08 extracted VisPub paths.
# The single agent sits at the midpoint temperature, so these are new cache entries (not notebook
# 09's agents); when a re-run finds them cached, its times are excluded and `n_cached` says so
# (run with `CACHE_MODE="refresh"` to time the calls again).

# %%
cost_collection = "vispub" if "vispub" in present else present[0]
sample = judges.select_pairs(all_paths[all_paths["collection"] == cost_collection], knobs["n_cost_pairs"], SEED)
n_before = len(gw.ledger_frame())
cost_scores = judges.run_judges(gw, sample, modes=knobs["cost_modes"], k=1, seed=SEED,
                                max_tokens=knobs["max_tokens"], reasoning_chars=knobs["reasoning_chars"], profile=PROFILE)
cost_ledger = gw.ledger_frame().iloc[n_before:]
prompt_counts = cost.prompt_token_table(sample, knobs["cost_modes"], model=gw.model_name)
calls = cost.cost_calls(cost_ledger, prompt_counts)
print(f"cost sample: {len(sample)} {cost_collection} narratives x {len(knobs['cost_modes'])} modes, K = 1")
cost.fresh_cached_split(cost_ledger)

# %%
table05 = cost_ood_tables.table05(cost.cost_table(calls))
reporting.save_table(table05, "narr_table05_cost")
table05

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

# %%
judged = validity.judged_paths(validity.narrative_scores(scores), all_paths)
corr = validity.correlation_table(judged)
corr_c = corr[corr["collection"] == cost_collection]
cost_perf = cost_ood_tables.cost_performance_with_paper(
    cost.cost_performance(table05, corr_c, r_column="pearson_avg"), cost.paper_cost_performance())
reporting.save_table(cost_perf, "narr_cost_performance")
cost_perf

# %% [markdown]
# ## Out-of-distribution narratives (section 5.7)
#
# One shared embedding space: both collections embedded with the bundled MiniLM (the mirror has
# the authors' OpenAI vectors for news only, so mixing them with anything else would compare
# vectors from different spaces). The joint landscape is fitted as in notebook 07 (UMAP 48-d,
# cosine; HDBSCAN soft memberships) and coherence θ = √(S·T) is read on it.

# %%
union = ood.union_documents(docs, ("news", "vispub"), subset={"vispub": knobs["vispub_subset"]})
jsd_base = settings.log_base(profiles.pick(settings.NARR_PROFILES, PROFILE)["jsd_base"])
joint = ood.joint_collection(union, n_neighbors=knobs["joint_neighbors"],
                             min_cluster_size=knobs["joint_min_cluster_size"], seed=SEED, jsd_base=jsd_base)
print(f"joint collection: {joint.docs.groupby('collection').size().to_dict()} documents, "
      f"{joint.n_topics} topics, embeddings {joint.embedding_source}")

# %%
lengths = all_paths.loc[all_paths["method"] == "maxcap", "length"].to_numpy()
mixed = pd.concat([ood.alternating_narratives(joint.collection_of, knobs["n_ood"], lengths, SEED),
                   ood.random_mixed_narratives(joint.collection_of, knobs["n_ood"], lengths, SEED + 1)],
                  ignore_index=True)
mixed = ood.add_coherence(mixed, lambda _c: joint.coherence)
mixed["titles"] = ood.titles_for(mixed, {}, joint)
mixed[["kind", "narrative_id", "length", "collections", "min_coherence", "mean_coherence"]].head(8)

# %% [markdown]
# ### Two perturbation families beyond the paper
#
# From notebook 09's judged max-capacity paths with three or more documents: the same documents
# shuffled, and one interior document replaced by an off-topic document of the same collection
# (drawn among the candidates least coherent with the rest of the path). Coherence is read on the
# collection's own landscape, so each perturbed narrative can be compared with its original.

# %%
judged_keys = scores[["collection", "pair_id", "method"]].drop_duplicates()
judged_maxcap = all_paths.merge(judged_keys, on=["collection", "pair_id", "method"])
judged_maxcap = judged_maxcap[judged_maxcap["method"] == "maxcap"]
perturbed = pd.concat([
    ood.shuffled_narratives(judged_maxcap, SEED, knobs["n_perturbed"]),
    ood.off_topic_narratives(judged_maxcap, {c: lands[c]["coherence"] for c in present}, SEED,
                             knobs["n_perturbed"], knobs["off_topic_quantile"]),
], ignore_index=True)
perturbed = ood.add_coherence(perturbed, lambda c: lands[c]["coherence"])
perturbed["titles"] = ood.titles_for(perturbed, titles_by_collection)
print(perturbed.groupby("kind").size().to_dict() if len(perturbed) else "no max-capacity path with 3+ documents")

# %% [markdown]
# ### The judges on OOD and perturbed narratives
#
# Same agents as notebook 09 (its K per collection and base seed) unless `K` is set; mixed
# narratives are introduced as "news articles and scientific articles".

# %%
narratives = pd.concat([mixed, perturbed], ignore_index=True)
# notebook 09's K when it used one K everywhere; else the paper's K per collection (judge_settings.k_for)
ks = set(k_by_collection.values())
k_ood = knobs["k"] if knobs["k"] is not None else (ks.pop() if len(ks) == 1 else None)
ood_raw = judges.run_judges(gw, ood.judge_frame(narratives), modes=knobs["ood_modes"], k=k_ood, seed=judge_seed,
                            max_tokens=knobs["max_tokens"], reasoning_chars=knobs["reasoning_chars"],
                            wording=ood.OOD_WORDING, profile=PROFILE)
ood_long = ood.judged_narratives(narratives, ood_raw)
print(ood_raw.groupby(["method", "status"]).size().to_dict())

# %%
long = followups.narrative_scores(
    followups.add_complexity(all_paths, {c: lands[c]["umap2d"] for c in present}), scores)
in_dist = ood.in_distribution_long(long)
in_dist = in_dist[in_dist["mode"].isin(knobs["ood_modes"])]
kinds = list(ood.IN_DISTRIBUTION_KINDS + ood.OOD_KINDS + ood.PERTURBATION_KINDS)
comparison = cost_ood_tables.ood_comparison(
    ood.kind_summary(pd.concat([in_dist, ood_long], ignore_index=True), by=("kind", "collection", "mode")))
reporting.save_table(comparison, "narr_ood_comparison")
comparison

# %% [markdown]
# The tests: alternating vs random mixed (Student's t, Cohen's d on the pooled SD; the paper:
# t = −2.93, p = 0.0048, d = −0.77), and each perturbation against its own original (paired t,
# d_z). Then the correlation of coherence with the score over the OOD narratives (paper: r = 0.729).

# %%
originals = in_dist[in_dist["kind"] == "maxcap"].rename(columns={"base_pair_id": "pair_id"})
ood_tests = cost_ood_tables.ood_tests(ood.kind_tests(ood_long, originals))
reporting.save_table(ood_tests, "narr_ood_tests")
display(ood_tests)
ood_corr = cost_ood_tables.ood_correlations(ood.kind_correlations(ood_long))
reporting.save_table(ood_corr, "narr_ood_correlations")
ood_corr

# %%
fig = cost_ood_figures.ood_scores(pd.concat([in_dist, ood_long], ignore_index=True), kinds)
reporting.save_figure(fig, "narr_ood_scores", caption="LLM score and minimum coherence by narrative kind "
                      "(in-distribution, OOD, perturbed); one point per narrative (mean over K agents). " + CAPTION)
plt.show()

# %% [markdown]
# ## Follow-up analyses (sections 5.8–5.9)
#
# One row per judged narrative and mode: the path's metrics from notebook 08 (plus path efficiency
# and a complexity score computed here) and the K-agent mean score from notebook 09.

# %%
long = followups.temporal_span(long)
long[["collection", "pair_id", "method", "mode", "length", "min_coherence", "mean_coherence",
      "path_efficiency", "complexity_score", "score_mean", "score_sd", "n_agents"]].head()

# %% [markdown]
# ### Table 6 · Predicting the LLM score from the coherence metrics
#
# Linear, ridge, random forest (and the paper's fourth row, degree-2 polynomial) on minimum
# coherence, average coherence and path length; R² on held-out folds (5-fold, folds over endpoint
# pairs), mean ± SD.

# %%
table06 = cost_ood_tables.table06(followups.predictive_table(long, n_splits=knobs["n_splits"], seed=SEED,
                                                             n_estimators=knobs["n_estimators"]))
reporting.save_table(table06, "narr_table06_predictive")
table06

# %% [markdown]
# ### Table 7 · Which metric does the forest lean on?

# %%
table07 = cost_ood_tables.table07(followups.feature_importance_table(long, seed=SEED, n_estimators=knobs["n_estimators"]))
reporting.save_table(table07, "narr_table07_feature_importance")
table07

# %% [markdown]
# ### Table 8 · Agent disagreement by mode, and by score range
#
# Mean over narratives of the K agents' SD and coefficient of variation (notebook 09's agreement
# functions), then the SD by the narrative's mean-score range (the paper: disagreement peaks at
# 5–7).

# %%
table08 = judge_tables.disagreement_with_paper(agreement.agent_disagreement(scores))
reporting.save_table(table08, "narr_table08_disagreement")
display(table08)
by_range = followups.disagreement_by_score_range(long)
reporting.save_table(by_range, "narr_disagreement_by_score_range")
by_range

# %% [markdown]
# ### Temporal span and path complexity
#
# Spans in days for news and years for VisPub, as in the paper.

# %%
temporal = cost_ood_tables.temporal_with_paper(followups.temporal_analysis(long))
reporting.save_table(temporal, "narr_temporal_span")
display(temporal)
display(followups.span_bins(long))
complexity = cost_ood_tables.complexity_with_paper(followups.complexity_analysis(long))
reporting.save_table(complexity, "narr_path_complexity")
complexity

# %% [markdown]
# ### Stability over five folds (section 5.9)
#
# Per fold of endpoint pairs: r on the training part vs the held-out part, and Cohen's d (max
# capacity vs random) on the held-out part.

# %%
folds, stability = followups.cv_stability(long, n_splits=knobs["n_splits"], seed=SEED)
stability = cost_ood_tables.stability_with_paper(stability)
reporting.save_table(stability, "narr_cv_stability")
stability

# %% [markdown]
# ### Figure 9

# %%
panels = [
    ("a_predictive", cost_ood_figures.predictive_r2(table06), "Fig. 9(a) cross-validated R² by model and mode."),
    ("b_disagreement", cost_ood_figures.disagreement_by_mode(table08), "Fig. 9(b) mean SD across K agents per mode (bars) and the paper's (dashes)."),
    ("c_temporal", cost_ood_figures.temporal_scatter(long), "Fig. 9(c) temporal span vs minimum coherence, coloured by the LLM score."),
    ("d_complexity", cost_ood_figures.complexity_hexbin(long), "Fig. 9(d) path complexity vs LLM score."),
    ("e_errors", cost_ood_figures.error_histogram(followups.evaluation_errors(long)), "Fig. 9(e) normalised score minus normalised minimum coherence."),
    ("f_methods", cost_ood_figures.method_comparison(followups.method_summary(long)), "Fig. 9(f) coherence and scaled LLM score by method."),
]
for name, fig, caption in panels:
    reporting.save_figure(fig, f"narr_fig09_{name}", caption=caption + " " + CAPTION)
    plt.show()

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
