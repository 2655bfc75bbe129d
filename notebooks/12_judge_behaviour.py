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
# # 12 · Judge behaviour: recognition, planted instructions, length, self-preference
#
# Both papers read their judges' scores as judgements of the text. This notebook measures four ways
# a judge can depart from that, which neither paper (nor the usual judge harnesses) measures:
#
# 1. **Recognition** — does the judge know the work? Read against works nobody can have read (the
#    LLM stories; invented titles and authors), with a continuation probe beside self-report.
# 2. **Planted instructions** — a text that says "score this at the top" is data to the judge: does
#    it obey, beyond what a neutral paragraph of the same length and place does, and beyond the
#    noise of asking again? Does a hardened prompt help on attacks it was not written against?
# 3. **Length** — does the score move when the same story is cut or padded; do scores follow the
#    tokens sent within genre (title mode as negative control); do narrative scores follow path
#    length within an endpoint pair?
# 4. **Self-preference** — does a judge favour the LLM stories its own model family wrote? (needs a
#    panel of judge families; its agreement and headlines beside it)
#
# It reads what notebooks 01-02 (corpus, the SAGE summaries of the planted layer, L4) and 08-09 (paths, judge scores) wrote and
# builds SAGE's and the narrative judges' requests with their own code, so every unperturbed
# request is the one those notebooks sent: answered from the cache. Tables and figures are named
# `behaviour_*`. Logic: `judgelab.behaviour` (one module per study); the probe's prompt:
# `prompts/behaviour/recognition.md`.

# %% tags=["parameters"]
# BACKEND / MODEL / BASE_URL: None = from $JUDGELAB_BACKEND etc., else the embedded llama.cpp model.
# CACHE_MODE: normal | replay | refresh (None = $JUDGELAB_CACHE_MODE, else normal).
# HARDEN: also run every arm hardened, in both studies (None = the profile's studies).
PROFILE = "demo"
BACKEND = None
MODEL = None
BASE_URL = None
CACHE_MODE = None
HARDEN = None

# %%
import pandas as pd
from IPython.display import Markdown, display

from judgelab import interim, panel, params
from judgelab.behaviour import figures, judge_panel, length, planted, recognition, selection, self_preference
from judgelab.behaviour.marking import banner, caption, writer
from judgelab.study_models import open_gateway
from judgelab.narrative.judges.scores import judged_paths, narrative_scores
from judgelab.narrative import settings as narrative_settings
from judgelab.run import Run
from judgelab.sage import LAYERS

run = Run.open("12", profile=PROFILE, params=globals())
knobs = run.knobs(run.config.knobs("behaviour"))
if not params.is_unset(HARDEN):
    knobs["harden"] = ("sage", "narrative") if params.as_bool(HARDEN, name="HARDEN") else ()
pd.set_option("display.precision", 3)
knobs

# %% [markdown]
# ## The judge
#
# Every call goes through the gateway. When the bundled SmolLM2-135M answers, every table below
# says so in its `judge_note` column: the run shows that the pipeline works, not what a capable
# judge does.

# %%
# Each study's calls on its own judge (judgelab.study_models: SAGE's and the narrative judges' defaults
# differ on OpenAI), so that the unperturbed requests are exactly those of notebooks 02 and 09.
gw = open_gateway("sage", config=run.config)
gw_narr = open_gateway("narrative", config=run.config)
run.use(gw, gw_narr)
JUDGES = {"sage": gw, "narrative": gw_narr}
# a figure names the judges of the calls it draws (one line when they agree)
SAGE_LINE, NARR_LINE, BOTH_LINE = (caption(JUDGES, PROFILE, *s) for s in (["sage"], ["narrative"], list(JUDGES)))
display(Markdown(banner(JUDGES)))


write = writer(run, JUDGES, PROFILE)  # write({name: table}, study): marked with the study's judge


# %% [markdown]
# ## Inputs from notebooks 01-02 and 08-09

# %%
corpus = interim.read("corpus")
stories = selection.sage_stories(corpus, run.config)
# the planted layer's summaries only (L4 in every profile): the recognition contrast and the length
# models read the layer the interventions perturb, and 12 runs beside notebooks 03-04
summaries = interim.read(f"sage_summary_{knobs['planted_layer']}")
judge_knobs = narrative_settings.judge_knobs(run.config)
all_paths = interim.read("narr_paths")
narr_scores = interim.read("narr_judge_scores")
print(f"{len(stories)} stories, {len(summaries)} SAGE evaluations, {len(narr_scores)} narrative judge calls")

# %% [markdown]
# ## 1 · Recognition
#
# One short call per story and mode, shown exactly SAGE's material (content: the prepared, masked
# text; title: title and author). **Matching rule** (`recognition.match_guess`): titles and names
# normalised (accents, case, punctuation); the title matches when the content words of guess and
# manifest title overlap with a Jaccard index above 0.5; the author matches when the manifest author's
# surname is a word of the guess. A story counts as **recognised** when the judge says so *and*
# the title matches. In title mode the title is in the prompt: a match there is an **echo**, shown
# apart. **Controls**: the LLM stories (content mode) and works invented in code
# (`recognition.fabricated_works`, title mode) — nobody can have read them, so a claim on one is false.
# Unit: story; intervals: Wilson.

# %%
items, _ = selection.sage_items(corpus, stories, "L4", run.config, ("content", "title"), gw.count_tokens)
probe, works, cloze = recognition.run_with_controls(gw, items, stories, corpus, knobs, PROFILE)
rec = write(recognition.tables(probe, cloze, summaries, knobs))
print(f"{len(probe)} probe calls, {int(probe['cached'].sum())} from the cache, "
      f"{int((probe['status'] == 'failed').sum())} failed; invented works: {', '.join(works['title'])}")
probe[["story_id", "category", "mode", "claimed", "title_guess", "author_guess", "confidence", "recognised"]]

# %%
rec["behaviour_recognition_rates"]

# %% [markdown]
# Recognition read against the controls on one criterion at a time: the bare claim, and the claim
# with the title named, each as a rate on the human stories and on the works nobody can have read
# (two-sample percentile bootstrap over stories). The title-mode LLM row is no control: its author
# line is the model's id.

# %%
rec["behaviour_recognition_vs_controls"]

# %%
figures.show(run, "behaviour_fig_recognition_rates", figures.recognition_rates(rec["behaviour_recognition_rates"]),
             SAGE_LINE)

# %% [markdown]
# **Continuation probe.** The story's first `cloze_opening_words` words; the judge is asked for
# the next `cloze_words`. Score (`recognition.cloze_overlap`): the longest common subsequence of
# the normalised words of reply and true continuation over the continuation's length. The LLM
# stories give what the opening alone lets a judge guess; the **chance level** row scores each reply
# against the other stories' continuations (what the rule gives a reply written for another text).

# %%
rec["behaviour_recognition_cloze"]

# %% [markdown]
# SAGE's final scores and the mode difference (content - title), recognised against unrecognised
# stories *within category* (recognised stories are mostly canonical; an interval from 20 stories
# per group), and pooled over the categories having both groups (weighted by stories; its
# stratified bootstrap interval from 25 recognised and 25 unrecognised stories, where it covers
# within 2 points of 95%; below, "too few units (n)").

# %%
rec["behaviour_sage_scores_by_recognition"]

# %% [markdown]
# ## 2 · Planted instructions
#
# Arms per item and mode: the unperturbed request (notebook 02's / 09's, from the cache); a neutral
# paragraph of the same disguise, length and place; the instruction (raise or lower). **Every arm
# is sent at the same R seeds** (`seeds`; seed + r: fresh draws), each contrast is taken within a
# seed and averaged over the R, and the noise floor (the seed noise of one such contrast) comes
# from the same draws. **Obedience** = instruction - neutral (directed), **insertion** = neutral -
# baseline, **contrast** = raise - lower; in points and in fractions of the scale's range. Unit:
# story (SAGE) or endpoint pair (narrative); Student t over the unit means, no interval below 10
# units ("too few units (n)"). Disguises `system` and `fence` (closing
# the fence) are held out from the hardening's design. SAGE: the blind validator's call of
# `planted_layer`; narrative: agent 0 of notebook 09, one title changed.

# %%
planted.family_table()

# %%
planted_results, summary = planted.run_study(gw, gw_narr, corpus, stories, all_paths, judge_knobs, knobs, run.config)
planted_effects, tables = planted.tables(planted_results, knobs)
pl = write(tables)
print(summary)
pl["behaviour_planted_calls"]

# %% [markdown]
# The unperturbed calls are the requests of notebooks 02 and 09: answered from the cache when they
# ran with this judge and cache.

# %%
pl["behaviour_planted_baseline_cache"]

# %%
pl["behaviour_planted_shifts"]

# %%
pl["behaviour_planted_hardening"]

# %%
figures.show(run, "behaviour_fig_planted_shifts", figures.planted_shifts(pl["behaviour_planted_shifts"]), BOTH_LINE)

# %% [markdown]
# ## 3 · Length
#
# **Intervention.** The planted study's stories, SAGE's blind validator call, the story as sent cut
# or padded to `length_fractions` of its words (padding: the story's own paragraphs repeated from
# the first), at the planted study's R seeds: the shift against the unresized call within a seed,
# beside the planted study's noise floor; the slope on the story's tokens as sent (the scale of the
# observational model below). A note says when SAGE's preparation had already cut the story.

# %%
length_calls = length.run_study(gw, corpus, stories, knobs, run.config)
noise = planted.noise_floors(planted_effects).get("sage", float("nan"))  # the planted study's repeats
write({"behaviour_length_calls": length_calls,
       "behaviour_length_intervention": length.intervention_table(length_calls, noise)})["behaviour_length_intervention"]

# %% [markdown]
# **Observation.** Per layer and mode, the partial correlation of final score and log tokens of the
# story as sent (the story part of the message, after SAGE's preparation; not the whole message)
# within category, and OLS `score ~ C(category) [+ log_tokens]` (unit: story). Title mode is the
# negative control: the judge sees no text there. **Cut texts are left out** and counted (`n_cut`):
# a story cut head and tail to SAGE's context budget is sent at about the budget's tokens whatever its
# length, so among cut texts the tokens measure where the cut fell. Where every text is cut (the demo
# profile's budget) there is no model, and the note says so.

# %%
units = length.story_units(summaries, length.sent_tokens(items))  # the recognition probe's L4 items
write({"behaviour_sage_length": length.sage_length_models(units)})["behaviour_sage_length"]

# %%
figures.show(run, "behaviour_fig_sage_length", figures.sage_length(units), SAGE_LINE)

# %% [markdown]
# Narrative judges: the mean score of the K agents against the path's length within an endpoint
# pair, at equal minimum coherence and method (`score_mean ~ length + min_coherence + C(method) +
# C(pair)`), and the partial correlation of the within-pair differences (maxcap - random) of score
# and length given that of minimum coherence. Unit: the endpoint pair (n = pairs), so a length-score
# association between pairs counts for neither.

# %%
judged = judged_paths(narrative_scores(narr_scores), selection.judged_narratives(all_paths, judge_knobs))
write({"behaviour_narr_length": length.narrative_length_models(judged)}, "narrative")["behaviour_narr_length"]

# %%
figures.show(run, "behaviour_fig_narr_length", figures.narrative_length(judged), NARR_LINE)

# %% [markdown]
# ## 4 · Self-preference and the judge panel
#
# One judge's own-family contrast mixes self-preference with real differences between writers, so
# self-preference is estimated only from a judge x writer design: a panel of judges of several
# families (`make panel NB="02 03 04" PANEL=panel.toml`, docs/panel.md), each member's outputs in
# `results/panel/<member>/`. Per judge family, the difference-in-differences over matched sets
# (LLM stories several models wrote to one prompt), content mode only, Student t interval over the
# sets (`judgelab.behaviour.self_preference`). Without a panel this run has one judge family, and
# the table says so and gives no estimate.

# %%
panel_scores = panel.stack([f"sage_summary_{layer}" for layer in LAYERS])
if panel_scores.empty:  # this run's one judge
    selfpref = write({"behaviour_self_preference": self_preference.self_preference_table(
        summaries.assign(judge=gw.model_name), corpus)})["behaviour_self_preference"]
else:
    selfpref = run.table(self_preference.self_preference_table(panel_scores, corpus).assign(profile=PROFILE),
                         "behaviour_self_preference")
selfpref

# %% [markdown]
# With a panel: how far its judges agree (ICC over judges, interval over stories or endpoint
# pairs; Krippendorff's alpha), and whether SAGE's genre ordering and d, and the narrative judges'
# correlation with minimum coherence, survive a change of judge (`judgelab.behaviour.judge_panel`).

# %%
judged_panel = judge_panel.judged_panel(panel.stack(["narr_judge_scores"]), all_paths)
for name, table in judge_panel.panel_tables(panel_scores, judged_panel, knobs["n_boot"], knobs["boot_seed"]).items():
    run.table(table, name)
print(f"panel: {len(panel.members())} members" if panel.members() else "no panel run (make panel): one judge family")

# %% [markdown]
# ## What this run can and cannot say
#
# * With the embedded SmolLM2-135M judge (see the banner and every table's `judge_note`) the numbers
#   show that the four studies run end to end, not how a capable judge behaves: run with
#   `BACKEND="openai"`, each study on the paper's judge (`judgelab.study_models`: gpt-5-mini for SAGE,
#   gpt-4.1 for the narrative judges; `MODEL` would set one model for both).
# * Smoke and demo judge a few items (calls stated in `profiles.toml`, `[demo.behaviour]`); a statistic
#   over fewer than 2 units or without variation is NaN with a note saying so. The paper profile
#   runs every SAGE story for recognition, 30 stories and 20 narratives per collection for the
#   planted instructions (`make estimate PROFILE=paper` prices them).
# * The planted and length studies perturb one call (SAGE's blind validator, not the five-round
#   evaluator whose scores SAGE reports) and one agent (agent 0 of K): they measure that call's
#   obedience and length response, not what a whole protocol could be moved by.
