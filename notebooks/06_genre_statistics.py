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
# # 06 · SAGE genre statistics: discrimination, effect sizes, cross-layer correlation
#
# Does the LLM judge separate canonical literature, pulp fiction and LLM-generated stories (RQ2),
# and do the three LLM-judged layers measure different things (RQ4)? The paper answers with
# **Table 11** (mean and SD per layer and category, differences, p), **Figure 3** (the means with SD
# error bars), **Figure 4** (Cohen's d, canonical vs LLM, against the d = 0.8 "large effect" line),
# **Table 10** (Pearson and Spearman correlations between layers) and a dimension-level analysis.
# This notebook recomputes them from the rows of notebooks 02–04, with the paper's value beside
# each number.
#
# **The paper's method** ("Statistical Analysis"): independent-samples t-tests between categories
# per layer, Cohen's d, one-way ANOVA with Bonferroni-corrected post-hoc pairs, Pearson and Spearman
# correlations between layers over the 200 story-mode observations, and a dimension-level analysis.
#
# **What we do differently, and why:**
#
# - *Cohen's d convention.* The original code divided by sqrt((s1² + s2²)/2); that convention
#   ignores group sizes (50 canonical vs 20 LLM stories). We report **both**: `d_pooled_sd`
#   (the pooled SD, Cohen's standard definition) and `d_sqrt_mean_var` (the paper's convention —
#   recomputing d from the paper's own Table 11 means and SDs below confirms it is the one used).
#   The paper's d stands beside the same-convention value.
# - *Welch's t beside Student's t*, since the categories' SDs differ (paper: 0.41 vs 0.62 in L4).
# - *Observation unit: the story*. The paper treats each story-mode evaluation as one
#   observation (N = 200 per layer), so each story counts twice and its p-values are too small.
#   Tables 10 and 11 here have one block per analysis (column `analysis`, its `unit` beside):
#   `story` (the main rows: a story's two modes averaged), `content` and `title` (mode as a
#   within-story factor: one table per mode), and `story_x_mode`, the paper's pooled reading, kept
#   as a labelled sensitivity row. A mixed model with a story random intercept (statsmodels
#   `MixedLM`) uses both modes without counting a story twice. `GENRE_UNIT` now only sets the unit
#   of the pairwise-tests table saved under its old name (default: the paper's, for comparison).
# - *Intervals on every headline number.* Means, differences, relative gaps and d carry 95% CIs
#   (`X_ci_low`, `X_ci_high`) from a seeded cluster bootstrap over stories, resampled within
#   category (`ci_method`); correlations of stories a Fisher-z interval (Bonett–Wright for ρ), the
#   pooled story × mode correlations a cluster bootstrap over stories. The figures draw these CIs.
# - *Multiple comparisons* (`mc_family`): Holm by default and Bonferroni (the paper's reading) over
#   each table's family — Table 11: the 12 pairwise Student tests of an analysis (3 pairs × L4, L5,
#   L6, average), the 12 Welch tests, the 4 ANOVAs; Table 10: the 3 layer pairs. A test undefined
#   for lack of a category still counts in its family. The post-hoc pairs are unprotected (not
#   conditioned on the ANOVA), as the column `post_hoc` states. The paper corrected per layer (× 3).
# - *Relative gap* = difference / canonical mean (the paper's 35.6% for L4 is 1.41 / 3.96). The
#   paper's overall canonical–pulp gap of 4.4% matches 0.17 / 3.85 (the pulp mean) instead: the
#   paper is not consistent there; we use the canonical mean throughout.
# - A story's layer score is the mean of the evaluator's four Round-5 dimension scores; a failed
#   reply is never scored, and an evaluation missing a dimension is left out.
# - *Scale and truncation stated.* Dimension scores are 1.0–5.0 with one decimal (each table's
#   `scale` column). Each table row also gives `share_truncated`, the share of its observations whose
#   content-limit text was cut to head + tail (a score of an excerpt; a story-mean or layer-average
#   observation counts when any of its parts was), with `truncation_note` where it is above 0.
#
# Functions: `judgelab.sage.analysis.genre` (tests: `tests/test_sage_stats_genre.py`); tables:
# `judgelab.sage.analysis.paper_tables`; figures: `judgelab.sage.analysis.paper_figures`.

# %% tags=["parameters"]
PROFILE = "demo"
# GENRE_UNIT: the unit of the saved pairwise-tests table, "story_mode" (the paper's reading), "story",
# "content" or "title"; Tables 10 and 11 show every unit (None = the profile's sage_analysis.genre_unit)
GENRE_UNIT = None
# DIMENSION_UNIT: the unit of the dimension-level table: "story" (a story's modes averaged), "content",
# "title", "story_mode" (None = the profile's sage_analysis.dimension_unit)
DIMENSION_UNIT = None
# LAYERS: the layers analysed (None = the profile's sage_analysis.layers)
LAYERS = None

# %%
import pandas as pd
from IPython.display import Markdown, display

from judgelab import interim, profiles
from judgelab.claims import design
from judgelab.run import Run
from judgelab.sage.analysis import evaluations, genre, paper_figures, paper_tables, scores
from judgelab.sage.analysis import independence as indep
from judgelab.sage.analysis import paper_values as pv

run = Run.open("06", profile=PROFILE, params=globals())
GENRE_UNIT, DIMENSION_UNIT = run.config["sage_analysis.genre_unit"], run.config["sage_analysis.dimension_unit"]
LAYERS = list(run.config["sage_analysis.layers"])
BOOT = run.knobs(scores.bootstrap_knobs(run.config))  # cluster-bootstrap resamples and seed for the intervals
pd.set_option("display.max_columns", 60, "display.width", 160, "display.precision", 3)

ev = evaluations.load_evaluations(LAYERS)
rows = ev.rows
run.judge(ev.backend, ev.model)  # the judge of notebooks 02-04's rows
run.choose(design.sage_choices(rows, ev.backend, ev.model, getattr(run.config.gateways.get("sage"), "reasoning", None)))
run.banner()
display(ev.coverage())
display(Markdown(ev.notes_markdown()))

# %% [markdown]
# ## Observation units
#
# One score per story, layer and mode (mean of the four final dimension scores), then the unit
# chosen by `GENRE_UNIT`.

# %%
story = scores.story_scores(rows)
units = scores.observation_units(story, GENRE_UNIT)
print(f"unit = {GENRE_UNIT}: {len(units)} observations")
display(scores.unit_counts(units))

# %% [markdown]
# ## Table 11 · Genre comparison per layer
#
# Mean and SD per category, canonical − pulp and canonical − LLM differences and relative gaps,
# one-way ANOVA p and pairwise p (Student and Welch, each with `_holm` and `_bonferroni` over the
# family in `mc_family`), Cohen's d canonical vs LLM in both conventions, each with its 95% CI.
# The `average` row averages each story's three layers (the paper's "Average"). Rows: one block per
# `analysis` — `story` first (the unit), then `content`, `title`, and the paper's pooled
# `story_x_mode` reading (sensitivity). `share_truncated`: share of the row's observations scored
# from an excerpt.

# %%
table11 = paper_tables.table11_genre_comparison(story, n_boot=BOOT["n_boot"], seed=BOOT["boot_seed"])
run.table(table11, "sage_table11_genre_comparison")
print("Intervals:", table11["ci_method"].iloc[0])
print("Families:", "; ".join(table11["mc_family"].unique()))
display(table11[table11["analysis"].isin(["story", "story_x_mode"])].set_index(["analysis", "layer"]).T)

# %% [markdown]
# **Both modes, one story: a mixed model.** Per layer, score ~ category + mode with a random
# intercept per story (statsmodels `MixedLM`, REML); the category contrasts with Wald 95% CIs,
# Holm / Bonferroni over the 6 contrasts. Where a category has no stories (smoke), the row says so.
# Where a story's modes score alike, the residual variance collapses (REML on its boundary, with
# Wald SEs that are far too small): that layer's rows are then the regression on story means, and
# their `note` and `ci_method` say so.

# %%
mixed = genre.genre_mixed_model(story)
run.table(mixed, "sage_genre_mixed_model")

# %% [markdown]
# **Which SD did the paper use for d?** Cohen's d recomputed from the paper's own Table 11 means and
# SDs (group sizes: Table 5 stories × 2 modes), under both conventions, beside the d it prints.

# %%
d_check = paper_tables.paper_d_check()
run.table(d_check, "sage_cohens_d_convention_check")

# %% [markdown]
# ## Figure 3 · Genre means per layer
#
# Bars: recomputed means over stories (Table 11's `story` rows), error bars their 95% CI (cluster
# bootstrap over stories within category); white diamonds: the paper's Table 11 means.

# %%
desc = paper_tables.figure3_means(table11, "story", LAYERS)
fig = paper_figures.plot_genre_means(desc, paper_tables.paper_genre_means(LAYERS), layers=LAYERS)
run.figure(fig, "sage_fig03_genre_comparison",
           f"Figure 3 (recomputed): mean score per category and layer over stories (a story's "
           f"modes averaged), error bars = 95% CI (cluster bootstrap over stories, B={BOOT['n_boot']}).")

# %% [markdown]
# ## Figure 4 · Effect size, canonical vs LLM-generated
#
# Cohen's d per layer in both SD conventions over stories (Table 11's `story` rows) with 95% CIs,
# the paper's d (white diamonds) and the d = 0.8 line. Below it, the pairwise tests in the unit
# `GENRE_UNIT` (default: the paper's story × mode reading, for comparison with its numbers).

# %%
effects = paper_tables.figure4_effects(table11, "story", LAYERS)
fig = paper_figures.plot_effect_sizes(effects, paper_tables.paper_cohens_d(LAYERS), layers=LAYERS,
                                     threshold=pv.LARGE_EFFECT_D.value)
run.figure(fig, "sage_fig04_cohens_d",
           f"Figure 4 (recomputed): Cohen's d, canonical vs LLM, over stories, pooled-SD and "
           f"sqrt((s1^2+s2^2)/2) conventions, error bars = 95% CI (cluster bootstrap over "
           f"stories, B={BOOT['n_boot']}); dashed line d = 0.8.")
pairwise = genre.genre_pairwise(units, by="layer").assign(unit=GENRE_UNIT)
run.table(pairwise, "sage_genre_pairwise_tests")
display(pairwise[["layer", "group_a", "group_b", "unit", "n_a", "n_b", "diff", "p_student", "p_holm", "p_bonferroni",
                  "p_welch", "p_welch_holm", "d_pooled_sd", "d_sqrt_mean_var", "mc_family", "note"]])

# %% [markdown]
# ## Table 10 · Cross-layer correlation
#
# Pearson r and Spearman ρ between layers, with 95% CIs and Holm / Bonferroni over the 3 layer
# pairs, per analysis: over stories (a story's modes averaged; Fisher-z intervals), per mode, and
# over the paper's story-mode observations (N = 200 there; a cluster bootstrap over stories, as a
# story's two modes are not independent). The paper reads r < 0.7 as "distinct dimensions".
# `share_truncated` is the share of the 2N evaluations behind a row whose content text was cut to
# head + tail. Spearman ranks ties within 1e-9 of the scale as ties (story means one ulp apart).

# %%
table10 = paper_tables.table10_cross_layer(story, n_boot=BOOT["n_boot"], seed=BOOT["boot_seed"])
run.table(table10, "sage_table10_cross_layer")
display(table10[["analysis", "layer_pair", "n", "n_stories", "pearson_r", "pearson_r_ci_low", "pearson_r_ci_high",
                 "paper_pearson_r", "p_pearson", "p_pearson_holm", "spearman_rho", "spearman_rho_ci_low",
                 "spearman_rho_ci_high", "p_spearman_holm", "ci_method", "note"]])

# %% [markdown]
# ## Dimension-level discrimination
#
# For each of the twelve dimensions: canonical vs LLM difference, t-test (Holm and Bonferroni over
# the 12 dimensions: `mc_family`) and d, sorted within each layer by the pooled-SD d; unit
# `DIMENSION_UNIT` (default the story, its modes averaged). The paper states that all four
# L4 dimensions show "uniformly large effect sizes" without printing them.

# %%
dimension_table = paper_tables.dimension_discrimination_table(rows, DIMENSION_UNIT).assign(unit=DIMENSION_UNIT)
run.table(dimension_table, "sage_dimension_discrimination")

# %% [markdown]
# ## LLM quality tiers
#
# The LLM stories come in quality tiers (the paper: 10 high, 5 average, 5 low). Does the judge's
# score follow the tier? Per layer: mean per tier, high − low difference and d, one-way ANOVA over
# tiers, and Spearman ρ between tier rank and score.

# %%
tiers = genre.llm_tiers(scores.observation_units(story, "story"), by="layer")  # one observation per story
run.table(tiers, "sage_llm_tiers")

# %% [markdown]
# ## L1–L3 vs L4–L6: the independence hypothesis
#
# The paper validates only the LLM-judged layers and leaves "integration with the rule-based
# computational metrics of L1–L3 for future work" (Conclusion). The hypothesis the layered design
# implies: the rule-based lexical, structural and thematic features of L1–L3 (notebook 01,
# `sage_l123_features.parquet`) measure something different from the interpretive L4–L6 scores
# above, so they should correlate only weakly with them.

# %% [markdown]
# ### Testing it
#
# The SAGE paper builds its hierarchy on "an empirically testable hypothesis: formal textual
# features and interpretive literary qualities constitute largely independent dimensions", and
# leaves the rule-based layers L1–L3 for future work. With the L1–L3 features of notebook 01 and
# the L4–L6 scores of notebooks 02–04 (content mode: both read the text), three tests
# (`judgelab.sage.analysis.independence`):
#
# 1. the correlation (Spearman) of every L1–L3 feature with every L4–L6 overall score,
#    corrected for the number of tests (Benjamini–Hochberg FDR and Bonferroni);
# 2. how much of each L4–L6 score the L1–L3 features predict out of sample (ridge regression,
#    5-fold cross-validated R²; independence predicts R² ≤ 0);
# 3. whether the L1–L3 features alone tell canonical, pulp and LLM stories apart
#    (cross-validated accuracy of a logistic regression against majority-class and stratified
#    chance, with a label-permutation p-value).
#
# If the LLM judge tracks the categories (notebook 06 above) while L1–L3 also separate them, the
# two families of measures share at least that variance, whatever the hypothesis says.

# %%
indep_data = indep.load_independence_data(mode="content")
display(Markdown(indep_data.description(PROFILE)))

# %% [markdown]
# ### 1. Correlations between L1–L3 features and L4–L6 scores

# %%
l123_corr = indep.feature_score_correlations(indep_data.joined, features=indep_data.feature_names, method="spearman")
run.table(l123_corr, "sage_l123_vs_l456")
print(indep.correlation_summary(l123_corr))
display(l123_corr.head(15).round(3))

# %% [markdown]
# ### 2. How much of each L4–L6 score do the L1–L3 features predict?

# %%
l123_r2 = indep.predict_scores_cv(indep_data.joined, features=indep_data.feature_names)
run.table(l123_r2, "sage_l123_predict_l456")
display(l123_r2.round(3))

# %% [markdown]
# ### 3. Do L1–L3 alone separate the categories?
#
# This needs no LLM score, so it uses every story with features.

# %%
l123_knobs = run.knobs(profiles.knobs("independence", PROFILE))
l123_acc = indep.classify_category_cv(indep_data.features, n_permutations=l123_knobs["n_permutations"])
run.table(l123_acc, "sage_l123_category_accuracy")
display(l123_acc.round(3))
print(indep.first_note(l123_acc))

# %% [markdown]
# ### Emotional arcs by category
#
# VADER sentiment of every sentence, smoothed with a low-pass discrete cosine transform (five
# components, as in Jockers' syuzhet) over narrative time, for the first three stories of each
# category. The arc-shape features of L2 (range, net change, turning points) summarise these curves.

# %%
l123_arcs = indep.emotional_arcs(interim.read("corpus"), story_ids=indep.arc_story_ids(indep_data.features))
l123_fig = indep.plot_emotional_arcs(l123_arcs)
run.figure(l123_fig, "sage_fig_emotional_arcs", judged=False,  # VADER, no judge
           caption=f"Emotional arcs (VADER, DCT low-pass, 5 components) of {l123_arcs['story_id'].nunique()} stories.")
