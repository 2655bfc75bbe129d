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
# # 03 · SAGE Layer 5 · emotional-psychological representation
#
# Layer 5 evaluates how a text represents emotions, psychological states and affective experience
# (SAGE paper, Wang & Zhou 2026, arXiv:2605.07102, "Layer 5: Emotional-Psychological
# Representation"). It draws on affect theory (Sedgwick, Berlant, Ngai), narrative psychology
# (Cohn, Bruner, Bakhtin), Barrett's emotion-granularity research and James Wood's notion of
# motivated emotion. Four dimensions:
#
# - **Affective Complexity (AC)** — the multiplicity, contradiction and evolution of emotional
#   states: layered, contradictory, changing affects rather than single ones; a structural
#   property, not intensity (Hemingway's iceberg: complexity can stay submerged).
# - **Psychological Interiority (PI)** — access to characters' inner worlds beyond behaviour:
#   thoughts, motives, self-awareness, through interior monologue, free indirect discourse and
#   psychological focalisation.
# - **Emotional Granularity (EG)** — the precision with which feeling states are told apart (grief
#   vs melancholy, resentment vs disappointment), by exact words or by behavioural and situational
#   markers.
# - **Emotional-Narrative Coherence (ENC)** — whether emotions arise from the situation and the
#   characters, with clear antecedents and in proportion to the stakes, or are unmotivated
#   (sentimentality, melodrama, unearned pathos).
#
# The paper's exemplar matrix (Table 3) shows the dimensions do not co-vary: "Hills Like White
# Elephants" is high on AC with almost no PI; Carver's "Cathedral" is low on EG and high on ENC.

# %% [markdown]
# ## How the layer is judged
#
# The four dimensions are scored on 1.0–5.0 (one decimal) with confidence 1–5 (paper, Methodology;
# Tables 1, 12, 13). Every story is evaluated in two modes, **content-limit** (the text only: title,
# byline, credits, blurb and signature stripped, LLM formatting and notes removed, the author's name
# masked; title phrases are masked in the body only when `MASK_TITLE_IN_BODY` is on, a sensitivity
# setting, since the mask itself marks human stories; notebook 01 reports every removal and checks
# for leaks) and **title-limit** (title and author only, no text; the LLM stories are "by" their
# model, so a sensitivity run with "an unknown author" for every story follows the main run, Table
# 9's anonymous rows in notebook 05), by two tracks:
#
# - an **iterative evaluator**, one conversation of five rounds:
#   R1 extraction and scores;
#   R2 a projection-bias check (restraint read as shallowness, one culture's display norms);
#   R3 layer boundary (did cultural power (L4) or philosophy (L6) creep into a score?);
#   R4 evidence sufficiency (confidence may change, scores may not — a changed score is kept and
#   flagged);
#   R5 consolidation;
# - an **independent validator**: a *blind* scoring first (it never sees the evaluator), then a
#   *review* of the evaluator's transcript (bias, hallucination, boundary, reasoning, calibration,
#   trust level). Both are kept.
#
# **What differs from the original study (and why).** Title-limit mode really sends no text (the
# original code still sent it); the validator scores blind before it reviews (the original showed it
# the evaluator's scores); a reply that fails validation is retried, then recorded as failed with no
# score (the original turned it into 0.0). With the embedded model's 8k context the demo profile
# keeps the head and the tail of each text (`truncated` in the rows); the paper profile refuses a
# text that does not fit (`context_policy="error"`). The budget is counted with the judge's own
# tokenizer (llama.cpp's for the embedded model, tiktoken for OpenAI).
#
# Logic: `judgelab.sage.protocol` (prompts, schemas, modes, evaluation, runner) and
# `judgelab.sage.report.layer_notebook` (everything this notebook shows, each part under its
# heading; notebooks 02–04 differ only in their layer and this text); prompts: `prompts/sage/`.

# %% tags=["parameters"]
PROFILE = "demo"
# BACKEND / MODEL / BASE_URL: None = from $JUDGELAB_BACKEND etc., else the embedded llama.cpp model.
BACKEND = None
MODEL = None
BASE_URL = None
# STORIES: story ids (a list, or comma-separated text); None = the profile's selection.
STORIES = None
# MODES: a list such as ["content"] or ["title"] (or "content,title"); None = both.
MODES = None
# CONTEXT_POLICY: "head_tail" or "error"; None = the profile's setting.
CONTEXT_POLICY = None
# MASK_TITLE_IN_BODY: mask multi-word title phrases where they recur in the text (true/false); None = the profile's setting.
MASK_TITLE_IN_BODY = None
# ANONYMOUS_AUTHOR_SENSITIVITY: after the run, title mode again with "an unknown author" (true/false); None = the profile's.
ANONYMOUS_AUTHOR_SENSITIVITY = None

# %%
from judgelab.run import Run
from judgelab.sage.report import layer_notebook

run = Run.open("03", profile=PROFILE, params=globals())
report = layer_notebook(run, "L5", BACKEND, MODEL, BASE_URL, stories=STORIES, modes=MODES,
                        context_policy=CONTEXT_POLICY, mask_title_in_body=MASK_TITLE_IN_BODY,
                        anonymous_author_sensitivity=ANONYMOUS_AUTHOR_SENSITIVITY)
