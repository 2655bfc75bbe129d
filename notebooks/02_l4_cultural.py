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
# # 02 · SAGE Layer 4 · cultural representation
#
# Layer 4 evaluates how a text represents culture, power structures and social relations (SAGE
# paper, Wang & Zhou 2026, arXiv:2605.07102, "Layer 4: Cultural Representation"). It draws
# on Bourdieu's field theory and cultural capital, Said's critique of Orientalism, Spivak's work on
# subaltern representation, Geertz's thick description and structural anthropology, and assesses
# cultural representation independently of emotional depth or philosophical content. Four
# dimensions:
#
# - **Intersectional Power Dynamics (IPD)** — how far the text engages with power as a structuring
#   force in social relations (class, gender, race, kinship, occupation, age, religion,
#   institutional position): power asymmetries, symbolic violence, structural constraints, rather
#   than a superficial nod to social categories.
# - **Cultural Voice & Perspective (CVP)** — the epistemic position of the narrative voice towards
#   the cultures it represents: insider authority or an outsider's distance and exoticising gaze
#   (register, untranslated terms, focalisation, cultural knowledge treated as given or as strange);
#   independent of who the author is.
# - **Cultural Specificity (CSP)** — the density and precision of cultural particulars in time,
#   place, society and material life (Geertz's thick description): dates, places, ritual and
#   material practice, culturally embedded objects.
# - **Cultural Pattern Complexity (CPC, habitus)** — whether the text holds several cultural logics
#   at once or one coherent frame: multi-layered social relations or binaries, institutional or
#   personal conflict, critical reflexivity, archetypal depth or genre convention.
#
# The paper's exemplar matrix (Table 2) shows the four vary independently: *Animal Farm* is high on
# IPD and low on CSP, *The Great Gatsby* the reverse; Conrad and Achebe share IPD but sit at
# opposite ends of CVP.

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
#   R2 a hallucination check (fabricated cultural or historical detail);
#   R3 layer boundary (did feelings (L5) or philosophical themes (L6) creep into a score?);
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

run = Run.open("02", profile=PROFILE, params=globals())
report = layer_notebook(run, "L4", BACKEND, MODEL, BASE_URL, stories=STORIES, modes=MODES,
                        context_policy=CONTEXT_POLICY, mask_title_in_body=MASK_TITLE_IN_BODY,
                        anonymous_author_sensitivity=ANONYMOUS_AUTHOR_SENSITIVITY)
