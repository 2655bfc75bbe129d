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
# The SAGE paper (`../shared/papers/000_ba768751ac1d16ac.txt`, Methodology; Tables 1, 12, 13)
# judges four dimensions in this layer — Affective Complexity (AC), Psychological Interiority (PI), Emotional Granularity (EG), Emotional-Narrative Coherence (ENC) — on 1.0–5.0 (steps of 0.5) with confidence 1–5.
# Every story is evaluated in two modes, **content-limit** (the text only: title, byline, credits,
# blurb and signature stripped, the author's name and the title phrase masked, and checked) and
# **title-limit** (title and author only, no text), by two tracks:
#
# - an **iterative evaluator**, one conversation of five rounds: R1 extraction and scores, R2
#   a projection-bias check (restraint read as shallowness, one culture's display norms), R3 layer boundary, R4 evidence sufficiency (confidence may change, scores may not — a
#   changed score is kept and flagged), R5 consolidation;
# - an **independent validator**: a *blind* scoring first (it never sees the evaluator), then a
#   *review* of the evaluator's transcript (bias, hallucination, boundary, reasoning, calibration,
#   trust level). Both are kept.
#
# **What differs from the original study (and why).** Title-limit mode really sends no text (the
# original code still sent it); the validator scores blind before it reviews (the original showed it
# the evaluator's scores); a reply that fails validation is retried, then recorded as failed with no
# score (the original turned it into 0.0). With the embedded model's 8k context the demo profile
# keeps the head and the tail of each text (`truncated` in the rows); the paper profile refuses a
# text that does not fit (`context_policy="error"`).
#
# Logic: `judgelab.sage` (prompts, schemas, modes, protocol, runner); prompts: `prompts/sage/`.

# %% tags=["parameters"]
PROFILE = "demo"
BACKEND = None
MODEL = None
BASE_URL = None
STORIES = None          # story ids (list, or comma-separated text); None: the profile selection
MODES = None            # a list such as [content] or [title]; None: both
CONTEXT_POLICY = None   # head_tail or error; None: the profile setting

# %%
import time

import pandas as pd
from IPython.display import Markdown, display

from judgelab import paths, profiles, reporting
from judgelab.gateway import Gateway
from judgelab.sage import figures, runner
from judgelab.sage.settings import SAGE_PROFILES

LAYER = "L5"
profiles.check(PROFILE)
gw = Gateway.from_settings(backend=BACKEND, model=MODEL, base_url=BASE_URL)
display(Markdown(reporting.model_banner(gw.backend_name, gw.model_name)))
CAPTION = reporting.provenance(PROFILE, gw.backend_name, gw.model_name)
corpus = pd.read_parquet(paths.interim_dir() / "corpus.parquet")
settings = profiles.pick(SAGE_PROFILES, PROFILE)
print({k: settings[k] for k in ("per_category", "modes", "max_text_tokens", "context_policy", "max_tokens")})

# %% [markdown]
# ## Run: every story x mode, evaluator (5 rounds) + validator (blind, review)

# %%
t0 = time.perf_counter()
run = runner.run_layer(gw, corpus, LAYER, PROFILE, stories=STORIES, modes=MODES, context_policy=CONTEXT_POLICY)
wall_s = time.perf_counter() - t0
written = runner.write_interim(run)
n_eval = len(run.summary)
print(f"{n_eval} evaluations, {len(run.rows)} rows in {wall_s:.0f} s wall time; wrote {list(written.values())}")
if run.rows["truncated"].any():
    cut = run.summary.merge(run.rows.groupby(["story_id", "mode"])["truncated"].any().reset_index())
    display(Markdown(
        f"**Texts cut to fit the context:** {int(cut['truncated'].sum())} of {int((cut['mode'] == 'content').sum())} "
        f"content-mode evaluations kept only the head and the tail of the story "
        f"(budget ~{settings['max_text_tokens']} tokens, `context_policy={CONTEXT_POLICY or settings['context_policy']}`). "
        "Their scores judge an excerpt, not the whole story."))
display(run.summary)

# %%
flagged = runner.disagreements(run.rows, settings["agreement_threshold"])
print(f"Evaluator (R5) vs blind validator: {len(flagged)} dimension scores differ by more than "
      f"{settings['agreement_threshold']} (flagged for review, paper Table 12)")
display(flagged)

# %% [markdown]
# ## Final scores by dimension, category and mode

# %%
fig = figures.final_scores_figure(run.rows, LAYER)
reporting.save_figure(fig, f"sage_scores_{LAYER}", caption=f"SAGE {LAYER}: final (R5) evaluator scores. " + CAPTION)
dist = (run.rows.query("track == 'evaluator' and round == 5 and status == 'ok'")
        .groupby(["mode", "category", "dimension"])["score"].describe()[["count", "mean", "std", "min", "max"]])
reporting.save_table(dist.reset_index(), f"sage_score_distribution_{LAYER}")
display(dist)

# %% [markdown]
# ## Round-by-round trajectories (evaluator R1–R5, then the validator's blind and review scores)

# %%
fig = figures.trajectory_figure(run.rows, LAYER)
reporting.save_figure(fig, f"sage_trajectory_{LAYER}", caption=f"SAGE {LAYER}: mean score per round. " + CAPTION)
traj = figures.trajectory_table(run.rows)
reporting.save_table(traj, f"sage_trajectory_{LAYER}")
display(traj.pivot_table(index=["mode", "dimension"], columns="step", values="mean_score")[[s for s in figures.STEPS if s in set(traj["step"])]])
flagged = run.rows[run.rows["r4_score_changed"]]
print(f"R4 score changes (scores must not change in R4; kept and flagged): {len(flagged)} of "
      f"{int(((run.rows['track'] == 'evaluator') & (run.rows['round'] == 4) & (run.rows['status'] == 'ok')).sum())} dimension scores")

# %% [markdown]
# ## Failures (recorded, never scored)

# %%
fails = figures.failure_list(run.failures)
reporting.save_table(fails, f"sage_failures_{LAYER}")
display(Markdown(f"**{len(fails)} failed or not-run replies** in {int((run.summary['status'] == 'failed').sum())} of {n_eval} evaluations."))
display(fails)

# %% [markdown]
# ## Tokens per evaluation: stable prefix vs resending the story in every call

# %%
tok = runner.token_accounting(run.calls)
reporting.save_table(tok, f"sage_tokens_{LAYER}")
display(tok.groupby("mode")[["n_calls", "input_tokens", "cached_tokens", "processed_tokens", "output_tokens", "latency_s"]].mean().round(1))
display(Markdown(f"Wall time {wall_s:.0f} s for {n_eval} evaluations ({wall_s / max(n_eval, 1):.1f} s each). " + CAPTION))
