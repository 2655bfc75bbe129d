"""Self-preference: does a judge favour stories its own model family wrote, beyond what other
judges see in them?

**Families** (:func:`family_of`): the maker of a model, read from its whole name (an ``org/``
prefix included) by the first matching pattern of :data:`FAMILY_PATTERNS`.

**Why a panel** (docs/panel.md): one judge's own-family contrast mixes self-preference with real
differences between the writers; other judges reading the same stories remove them. With judge
family F and O the panel's other judges, per story s, u_s = mean score by F's judges - mean score
by O's judges; per **matched set** m (the LLM stories several models wrote to one prompt, named by
the story's title) the difference-in-differences

    D_m = mean(u_s: s in m written by F) - mean(u_s: s in m written by a family with no judge on the panel)

cancels the writers' quality, each judge group's leniency and the prompt; families *off* the panel
keep O's own self-preference out of F's contrast. The estimate is the mean of D_m, with Student's t
interval over the matched sets: at the corpus' 1-5 sets per family the percentile bootstrap
undercovers (85% and 77% in simulation; ``tests/test_panel.py``). Content mode only: in title mode
the author line is the model's id, so a contrast there would measure brand recognition.

With one judge family there is no O: the table says :data:`NOT_IDENTIFIABLE` and gives no estimate.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from judgelab.stats import intervals, rules

FAMILY_PATTERNS: tuple[tuple[str, str], ...] = (
    ("openai", r"(^|[^a-z])(gpt|chatgpt|o[134](-|$|[^a-z0-9]))"),
    ("anthropic", r"claude"),
    ("google", r"gemini|gemma"),
    ("deepseek", r"deepseek"),
    ("mistral", r"mistral|mixtral|ministral|magistral|codestral"),
    ("qwen", r"qwen|qwq"),
    ("meta", r"llama"),
    ("cohere", r"command|c4ai|cohere"),
    ("xai", r"grok"),
    ("microsoft", r"(^|[^a-z])phi-?\d"),
    ("huggingface", r"smollm"),
)
NOT_IDENTIFIABLE = "not identifiable with one judge family"
UNIT = "matched set (LLM stories written to one prompt by several model families)"
CI_METHOD = "Student t over matched sets"
COLUMNS = ["layer", "mode", "judge_family", "status", "judges_own", "judges_other", "n_sets", "n_own_stories",
           "n_other_stories", "did", "ci_low", "ci_high", "note", "unit", "ci_method"]


def family_of(model: str | None) -> str | None:
    """The model family of a model name (see the module docstring), None when no pattern matches."""
    if not model:
        return None
    name = str(model).lower()
    for fam, pattern in FAMILY_PATTERNS:
        if re.search(pattern, name):
            return fam
    return None


def matched_sets(corpus: pd.DataFrame) -> pd.DataFrame:
    """The LLM stories of prompts written by at least two model families (prompt: the title)."""
    llm = corpus.loc[corpus["category"] == "llm", ["story_id", "title", "model"]].rename(
        columns={"title": "prompt", "model": "writer"})
    llm["family"] = llm["writer"].map(family_of)
    several = llm.groupby("prompt")["family"].transform("nunique") >= 2
    return llm[several & llm["family"].notna()].reset_index(drop=True)


def set_contrasts(u: np.ndarray, sets: np.ndarray, own: np.ndarray, other: np.ndarray) -> np.ndarray:
    """D_m of every set holding a finite u of an ``own`` story and of an ``other`` (module docstring)."""
    ok = np.isfinite(u)
    out = []
    for m in pd.unique(sets):
        a, b = ok & (sets == m) & own, ok & (sets == m) & other
        if a.any() and b.any():
            out.append(u[a].mean() - u[b].mean())
    return np.asarray(out, float)


def did_interval(d: np.ndarray) -> tuple[float, float, float, str]:
    """(mean D, t interval, note) over matched sets; NaN with a note when too few or no variation."""
    if len(d) < rules.MIN_PAIRED:
        return (float(d.mean()) if len(d) else np.nan, np.nan, np.nan,
                rules.too_few(len(d), rules.MIN_PAIRED, "matched sets"))
    if rules.is_constant(d):
        return float(d.mean()), np.nan, np.nan, f"{rules.CONSTANT}: no variation across matched sets, no interval"
    lo, hi = intervals.t_interval(d)
    return float(d.mean()), lo, hi, ""


def self_preference_table(scores: pd.DataFrame, corpus: pd.DataFrame) -> pd.DataFrame:
    """Per layer and judge family, the difference-in-differences of the module docstring."""
    sets = matched_sets(corpus)
    content = scores[scores["mode"] == "content"].copy()
    declared = content["judge_family"] if "judge_family" in content else pd.Series(None, index=content.index)
    content["judge_family"] = declared.where(declared.notna(), content["model"].map(family_of)).fillna("unknown")
    fams = content.groupby("judge")["judge_family"].first()
    rows = []
    for layer, g in content.groupby("layer", sort=True):
        base = {"layer": layer, "mode": "content", "unit": UNIT, "ci_method": CI_METHOD}
        if fams[g["judge"].unique()].nunique() < 2:
            rows.append({**base, "judge_family": ", ".join(sorted(set(fams))), "status": NOT_IDENTIFIABLE,
                         "note": "one family judged: its own-family contrast would mix self-preference with the "
                                 "writers' quality; a panel of judge families gives the crossed design (make panel)"})
            continue
        y = g.pivot_table(index="story_id", columns="judge", values="overall_score", aggfunc="mean")
        y = y.reindex(sets["story_id"])
        on_panel = set(fams[y.columns])
        for fam in sorted(on_panel):
            mine = [j for j in y.columns if fams[j] == fam]
            others = [j for j in y.columns if fams[j] != fam]
            u = (y[mine].mean(axis=1) - y[others].mean(axis=1)).to_numpy(float)
            own = (sets["family"] == fam).to_numpy()
            other = ~sets["family"].isin(on_panel).to_numpy()
            d = set_contrasts(u, sets["prompt"].to_numpy(), own, other)
            did, lo, hi, note = did_interval(d)
            status = "ok" if len(d) else f"no matched set holds a story by {fam} and one by a family off the panel"
            rows.append({**base, "judge_family": fam, "status": status, "judges_own": ", ".join(mine),
                         "judges_other": ", ".join(others), "n_sets": len(d),
                         "n_own_stories": int((own & np.isfinite(u)).sum()),
                         "n_other_stories": int((other & np.isfinite(u)).sum()),
                         "did": did, "ci_low": lo, "ci_high": hi, "note": note})
    if not rows:
        rows.append({"mode": "content", "status": NOT_IDENTIFIABLE, "note": "no content-mode scores",
                     "unit": UNIT, "ci_method": CI_METHOD})
    return pd.DataFrame(rows, columns=COLUMNS)
