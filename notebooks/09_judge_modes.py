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
# # 09 · LLM judges of extracted narratives: four prompt modes, K agents
#
# The central experiment of the Narrative Trails judge study (the Narrative paper, sections 3.3–3.4 and
# 5.2–5.5): can an LLM, shown only the titles of a narrative's documents as a numbered list,
# stand in for the mathematical coherence of the path?
#
# * **Narratives.** The max-capacity and random chronological paths that notebook 08 extracted
#   (`narr_paths.parquet`), for a seeded selection of endpoint pairs.
# * **Four prompt modes** (`prompts/narrative/judge_<mode>.md`, written for this compendium):
#   *simple* (one 1–10 score, no anchors), *cot* (three short reasoning steps, then a score on
#   ranges 1–3 / 4–6 / 7–9 / 10), *standard* (four dimensions, anchors 5 / 7 / 10, overall = their
#   mean), *complex* (six criteria, behavioural anchors, overall = their mean).
# * **K agents** per narrative and mode, temperatures spread evenly over 0.3–0.7 and seeds
#   `seed + j`; each agent is its own cache entry (replicate index = agent).
# * **Analyses**: Table 2 (Pearson/Spearman of the mean score with minimum and average
#   coherence), Table 3 (ICC(2,1), ICC(2,K), Krippendorff's α, Kendall's W, mean absolute
#   deviation, exact and within-1 agreement), Table 4 (Cohen's d and AUC-ROC, max capacity vs
#   random: the LLM rows, and a view beside notebook 08's mathematical rows) and Figure 8's judge
#   panels.
#
# The paper's reported values sit beside the recomputed ones in `paper_*` columns
# (`judgelab.narrative.judges.paper_values`).
#
# **Unit and uncertainty.** The judge scores narratives, but the independent unit is the
# *endpoint pair*: a pair's max-capacity path and its random twin share their endpoints, and the
# K agents of one narrative are summarised by their mean before any statistic (never counted as K
# observations). Every interval (`X_ci_low` / `X_ci_high`, method in `ci_method`, unit in `unit`)
# is a seeded percentile cluster bootstrap over endpoint pairs, both narratives of a drawn pair
# kept together; max-capacity vs random comparisons are paired over pairs. P-values reported
# together are adjusted within the table's family (`mc_family`) by Holm (`p_holm`, our reading)
# and Bonferroni (`p_bonferroni`, the paper's).

# %% tags=["parameters"]
# BACKEND / MODEL / BASE_URL: None = from $JUDGELAB_BACKEND etc., else the embedded llama.cpp model.
# CACHE_MODE: normal | replay | refresh (None = $JUDGELAB_CACHE_MODE, else normal).
# K: agents per narrative and mode (None = the profile's; paper: 5 news, 3 VisPub).
# MODES: e.g. "simple,cot" (None = all four). N_PAIRS: endpoint pairs per collection
# (None = the profile's, "all" = every pair). EXPLANATIONS: ask for explanation fields (paper: off).
PROFILE = "demo"
BACKEND = None
MODEL = None
BASE_URL = None
CACHE_MODE = None
K = None
MODES = None
N_PAIRS = None
EXPLANATIONS = None

# %%
import pandas as pd
from IPython.display import Markdown, display

from judgelab import exchange, interim
from judgelab.study_models import open_gateway
from judgelab.narrative.judges import agreement
from judgelab.narrative.judges import figures as judge_figures
from judgelab.narrative.judges import paper_tables as judge_tables
from judgelab.narrative.judges import run as judges
from judgelab.narrative.judges import scores as judge_scores
from judgelab.narrative.judges import validity
from judgelab.narrative.settings import judge_knobs
from judgelab.claims import design
from judgelab.run import Run

run = Run.open("09", profile=PROFILE, params=globals())  # MODES, EXPLANATIONS, BACKEND ... resolved into run.config
knobs = run.knobs(judge_knobs(run.config, k=K, n_pairs=N_PAIRS))
pd.set_option("display.precision", 3)
knobs

# %% [markdown]
# ## The judge
#
# Every call goes through the gateway (cache, structured output, retries, ledger). When the
# bundled SmolLM2-135M answers, the scores are close to random: the run shows that the pipeline
# works, not what the paper found.

# %%
gw = run.use(open_gateway("narrative", config=run.config))
run.banner()

# %% [markdown]
# ## The narratives
#
# Notebook 08's paths; each selected endpoint pair contributes its max-capacity and its random
# chronological path.

# %%
all_paths = interim.read("narr_paths")
judged_set = judges.select_pairs(all_paths, knobs["n_pairs"], knobs["seed"])
print(f"{len(judged_set)} narratives from {judged_set.groupby('collection')['pair_id'].nunique().to_dict()} "
      f"endpoint pairs; of {len(all_paths)} paths in narr_paths.parquet")
judged_set[["collection", "pair_id", "stratum", "method", "length", "min_coherence", "mean_coherence"]].head(10)

# %% [markdown]
# ## The four prompts
#
# As the judge sees them for the first narrative (system message, then the user message).

# %%
first = judged_set.iloc[0]
display(Markdown(judges.prompt_preview(first["titles"], first["collection"], knobs["modes"], knobs["explanations"])))

# %% [markdown]
# ## K agents per narrative and mode

# %%
judges.agents_table(judged_set["collection"].unique(), knobs["k"], knobs["temperature_range"], knobs["seed"])

# %%
scores = judges.run_judges(
    gw, judged_set, modes=knobs["modes"], k=knobs["k"], temperature_range=knobs["temperature_range"],
    seed=knobs["seed"], max_tokens=knobs["max_tokens"], explanations=knobs["explanations"],
    reasoning_chars=knobs["reasoning_chars"], profile=PROFILE, concurrency=knobs["concurrency"],
)
interim.write(scores, "narr_judge_scores")
run.choose(design.judge_choices(scores, run.backend, run.model, gw.reasoning))  # K, pairs, effort: in every sidecar
judges.call_summary(scores)

# %% [markdown]
# Failed calls (no parseable reply within the token budget and the repair retries) stay in the
# table with `status = "failed"` and no score; they count as missing ratings below, never as
# zeros. Per narrative and mode: the mean of the agents' scores (`score_mean`), their SD, and how
# many agents answered (`n_agents`) or failed (`n_failed`).

# %%
judged = judge_scores.judged_paths(judge_scores.narrative_scores(scores), judged_set)
judged.head()

# %% [markdown]
# ## Table 2 · Do the judges track mathematical coherence?
#
# Pearson (and Spearman) correlation of the mean score of the K agents with the path's minimum
# and average coherence, one row per collection and mode; n counts narratives (pairs x 2 methods),
# `n_pairs` the endpoint pairs, the unit of the interval `pearson_<m>_ci_*` and of the bootstrap
# p-value `pearson_p_boot_<m>`, which Holm and Bonferroni adjust over the whole table (every
# collection × mode × metric). scipy's p (`pearson_p_<m>`) and the Fisher-z interval
# (`_fisher`) treat the narratives as independent and are shown as that reading only.

# %%
run.table(judge_tables.table02(validity.correlation_table(judged, seed=knobs["seed"])), "narr_table02_correlations")

# %% [markdown]
# ## Table 3 · How much do the K agents agree?
#
# ICC(2,1) and ICC(2,K) (two-way random, absolute agreement; pingouin), Krippendorff's α
# (interval), Kendall's W (tie-corrected), mean absolute deviation from the item mean, and the
# share of agent pairs that agree exactly / within one point. The paper's Table 3 has no CoT
# column, so its `paper_*` cells are empty there. Intervals: the cluster bootstrap over endpoint
# pairs (`icc2_1_ci_*` ...); the Shrout–Fleiss F interval, which treats the narratives as
# independent, is beside it (`icc2_1_ci_low_f` ...). α and W are shown without an interval.

# %%
run.table(judge_tables.table03(agreement.agreement_table(scores, seed=knobs["seed"])), "narr_table03_agreement")

# %% [markdown]
# ## Table 4 · Do the judges tell max-capacity from random paths?
#
# Cohen's d (`d`, pooled SD; the RMS-of-SDs variant the original code used is `d_avg_sd`) and
# AUC-ROC with max capacity as the positive class, each with its pair-bootstrap interval; the
# paired t-test over endpoint pairs (`p`, adjusted over the LLM rows: `mc_family`, `p_holm`,
# `p_bonferroni`) and the Wilcoxon signed-rank test (`wilcoxon_p`); Welch's t-test and
# Mann–Whitney U (`t_p`, `mw_p`) treat the paths as independent and are kept for Figure 8(l). This
# notebook writes the LLM rows (`narr_table04_llm_rows.csv`); notebook 08 wrote the mathematical
# rows (`narr_table04_effect_sizes.csv`, left as it is: strict date rule and its inclusive
# sensitivity row).

# %%
effects = validity.effect_size_table(judged, seed=knobs["seed"])
run.table(judge_tables.table04_rows(effects, "llm"), "narr_table04_llm_rows")

# %% [markdown]
# The whole of Table 4 in one view (`narr_table04_math_and_llm.csv`): notebook 08's mathematical
# rows followed by the LLM rows above; when notebook 08's table is absent, the mathematical rows
# are computed over the judged narratives.

# %%
math_rows = judge_tables.read_math_table04()
table04 = judge_tables.merge_table04(math_rows, effects)
run.table(table04, "narr_table04_math_and_llm")
print("mathematical rows from", "notebook 08" if math_rows is not None else "the judged narratives (08's table absent)")
table04

# %% [markdown]
# ## Figure 8 · The judge panels
#
# (c, d) minimum coherence against the mean score, error bars = SD over the K agents.

# %%
fig = judge_figures.judge_vs_coherence(judged, modes=("simple", "cot"))
run.figure(fig, "narr_fig08_judge_vs_coherence",
           "Fig. 8(c,d) minimum coherence vs mean LLM score (error bars: SD over K agents).")

# %% [markdown]
# (f) scores by mode and path method; (k) mean score per mode and method.

# %%
fig = judge_figures.scores_by_mode(judged)
run.figure(fig, "narr_fig08_scores_by_mode", "Fig. 8(f) mean LLM score by mode and method.")
fig = judge_figures.mean_scores_by_method(judged, effects)
run.figure(fig, "narr_fig08_mean_scores_by_method", "Fig. 8(k) mean LLM score per mode, max capacity vs random "
           "(error bars: 95% cluster bootstrap interval over endpoint pairs).")

# %% [markdown]
# (g) agreement across the K agents: mean SD and coefficient of variation per mode (the paper's
# Table 8 values beside).

# %%
disagreement = judge_tables.disagreement_with_paper(agreement.agent_disagreement(scores, seed=knobs["seed"]))
display(disagreement)
fig = judge_figures.agent_agreement(disagreement)
run.figure(fig, "narr_fig08_agent_agreement", "Fig. 8(g) mean SD and CoV across K agents "
           "(error bars: 95% cluster bootstrap interval over endpoint pairs).")

# %% [markdown]
# (i) effect sizes, (j) correlations, (l) p-values of the two tests. (Panels a, b, e and h —
# the paths' coherence and length alone — are drawn by notebook 08.)

# %%
fig = judge_figures.effect_sizes(effects)
run.figure(fig, "narr_fig08_effect_sizes", "Fig. 8(i) Cohen's d, max capacity vs random "
           "(error bars: 95% cluster bootstrap interval over endpoint pairs).")
fig = judge_figures.correlation_heatmap(judged)
run.figure(fig, "narr_fig08_correlation_heatmap", "Fig. 8(j) Pearson correlations, coherence metrics and LLM scores.")
fig = judge_figures.p_values(effects)
run.figure(fig, "narr_fig08_pvalues", "Fig. 8(l) p-values, Welch t-test and Mann-Whitney U "
           "(the paper's tests, unadjusted, paths as independent; Table 4 has the paired tests).")

# %% [markdown]
# ## Cost of this run
#
# Tokens and time per mode from the gateway's ledger (notebook 10 turns these into the paper's
# Table 5).

# %%
judges.ledger_by_mode(gw.ledger_frame())

# %% [markdown]
# ## What differs from the paper, and why
#
# * **The judge.** The paper used GPT-4.1. By default this notebook runs the bundled SmolLM2-135M
#   through llama.cpp (see the banner): its scores are near random, so agreement and validity
#   numbers here do not test the paper's claims. Set `BACKEND="openai"`, `MODEL="gpt-4.1"` (or any
#   OpenAI-compatible server) to do that.
# * **Prompts.** Written for this compendium after the paper's described design (section 3.4);
#   the paper's own wording is not reused.
# * **Scores** are an enum of 1..10 in the output schema (llama.cpp's grammar ignores integer
#   bounds); standard and complex overall scores are computed as the mean of their dimensions
#   rather than asked from the model (paper 3.4.3: "the overall score averages these dimensions").
# * **Exact / within-1 agreement** is the share of agreeing agent pairs; the paper does not state
#   its denominator. Kendall's W is tie-corrected (the scores are heavily tied).
# * **Cohen's d** uses the pooled SD; the RMS-of-SDs version the original code used is reported
#   too (`d_avg_sd`).
# * **Failed calls** are recorded and excluded, never scored 0.

# %%
# The judge at work: one judged narrative (a path x prompt mode x agent),
# as sent and as answered. Read from this run's cache and transcripts (judgelab.exchange; no
# call is made); long texts are cut in the middle.
exchange.show({"study": "narrative", "notebook": "09"});
