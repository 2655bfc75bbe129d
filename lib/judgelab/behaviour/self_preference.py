"""Self-preference: does a judge favour stories its own model family wrote?

**Families** (:func:`family_of`): the maker of a model, read from its name by the first matching
pattern of :data:`FAMILY_PATTERNS` (case-insensitive, on the whole name, an ``org__`` or ``org/``
prefix included; the first match in the table's order wins): OpenAI (gpt, chatgpt, o1/o3/o4), Anthropic (claude), Google (gemini, gemma), DeepSeek,
Mistral (mistral, mixtral, ministral, magistral, codestral), Qwen (qwen, qwq), Meta (llama), Cohere
(command, c4ai), xAI (grok), Microsoft (phi), Hugging Face (smollm). Gemini and Gemma share the
family "google": one maker, one training lineage.

**Comparison** (:func:`self_preference_table`): when the judge's family wrote some of the LLM
stories, per layer, mode and tier, SAGE's final score of the own-family stories against the other
LLM stories of the same tier (mean difference own - other, two-sample percentile bootstrap over
stories). Otherwise one row per layer and mode says "not applicable for this judge" and names the
families present.
"""
from __future__ import annotations

import re

import pandas as pd

from judgelab.stats import intervals

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
NOT_APPLICABLE = "not applicable for this judge"


def family_of(model: str | None) -> str | None:
    """The model family of a model name (see the module docstring), None when no pattern matches."""
    if not model:
        return None
    name = str(model).lower()
    for fam, pattern in FAMILY_PATTERNS:
        if re.search(pattern, name):
            return fam
    return None


def story_families(corpus: pd.DataFrame) -> pd.DataFrame:
    """The LLM stories with their author model and its family (``family`` None when unknown)."""
    llm = corpus[corpus["category"] == "llm"][["story_id", "model", "tier"]].copy()
    llm["family"] = llm["model"].map(family_of)
    return llm.reset_index(drop=True)


def families_present(families: pd.DataFrame) -> str:
    """"anthropic (1), openai (5), ..." from :func:`story_families`."""
    counts = families["family"].fillna("unknown").value_counts().sort_index()
    return ", ".join(f"{f} ({n})" for f, n in counts.items())


def self_preference_table(judge_model: str, summaries: pd.DataFrame, families: pd.DataFrame,
                          n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """See the module docstring. ``summaries``: SAGE summary rows (story_id, layer, mode, overall_score);
    ``families``: :func:`story_families` of the whole corpus (so "present" means in the corpus)."""
    judge_family = family_of(judge_model)
    present = families_present(families)
    scored = summaries.merge(families, on="story_id", how="inner").dropna(subset=["overall_score"])
    cols = ["layer", "mode", "tier", "judge_family", "status", "families_present", "n_own", "n_other",
            "mean_own", "mean_other", "diff", "diff_ci_low", "diff_ci_high"]
    rows = []
    own_ids = set(families.loc[families["family"] == judge_family, "story_id"]) if judge_family else set()
    for (layer, mode), g in summaries.groupby(["layer", "mode"], sort=True):
        base = {"layer": layer, "mode": mode, "judge_family": judge_family or "unknown", "families_present": present}
        if not own_ids:
            rows.append({**base, "tier": "", "status": NOT_APPLICABLE})
            continue
        s = scored[(scored["layer"] == layer) & (scored["mode"] == mode)]
        for tier, t in s.groupby("tier", sort=True):
            own, other = t[t["story_id"].isin(own_ids)], t[~t["story_id"].isin(own_ids)]
            d, lo, hi = intervals.diff_ci(own["overall_score"], other["overall_score"], n_boot, seed)
            status = "ok" if len(own) and len(other) else "no own-family or no other story judged in this tier"
            rows.append({**base, "tier": tier, "status": status, "n_own": len(own), "n_other": len(other),
                         "mean_own": own["overall_score"].mean() if len(own) else float("nan"),
                         "mean_other": other["overall_score"].mean() if len(other) else float("nan"),
                         "diff": d, "diff_ci_low": lo, "diff_ci_high": hi})
    out = pd.DataFrame(rows, columns=cols)
    return out.assign(unit="story", ci_method=intervals.BOOT_METHOD.format(unit="stories", n=n_boot) + " (two samples)")
