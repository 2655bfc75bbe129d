"""The recognition probe: does the judge know the work it scores?

One short call per story and SAGE mode, shown the material exactly as SAGE's judge sees it (the
prepared, masked text in content mode; title and author in title mode), with its own schema
(:func:`probe_schema`: recognised yes/no, title and author guesses, confidence 1-5) and prompt
(``prompts/behaviour/recognition.md``).

**Matching rule** (:func:`match_guess`), stated once and tested on hand-made guesses. Titles and
names are normalised (accents folded, case folded, punctuation to spaces, ``&`` to "and"), and a
title's *content words* are its words less the function words of :data:`FUNCTION_WORDS`.

- ``title_match``: the guess's and the manifest title's content words overlap with a Jaccard
  index above 0.5 (so "House of Usher" matches "The Fall of the House of Usher": 2 of 3; "Usher"
  alone does not: 1 of 3, nor "Cthulhu" for "The Call of Cthulhu": 1 of 2. A name the text
  itself holds is not enough to count as knowing the work);
- ``author_match``: the manifest author's surname (last word) is a word of the author guess;
- ``recognised`` (the study's reading): the judge says it recognises the work *and* the title
  matches. Claiming without a matching title counts as not recognised (``claimed`` keeps the claim;
  ``author_match`` is reported beside). In title mode the title is in the material, so there a
  match mostly confirms the claim.
"""
from __future__ import annotations

import re
import unicodedata
from string import Template
from typing import Literal, Sequence

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, create_model

from judgelab import paths
from judgelab.gateway.types import sent_columns
from judgelab.stats import intervals
from judgelab.prompting import parse_template

FUNCTION_WORDS = frozenset("the a an of and in on at to for from with by or".split())
TITLE_JACCARD = 0.5
PROBE_COLUMNS = ["story_id", "category", "tier", "mode", "claimed", "title_guess", "author_guess", "confidence",
                 "title_match", "author_match", "recognised", "status", "cached", "input_tokens", "output_tokens",
                 "temperature", "top_p", "reasoning_effort", "max_tokens", "seed", "backend", "model", "profile"]


def normalise(text: str) -> list[str]:
    """Words of ``text``: accents folded, case folded, ``&`` read as "and", punctuation as spaces."""
    s = unicodedata.normalize("NFKD", str(text or ""))
    s = "".join(ch for ch in s if not unicodedata.combining(ch)).casefold().replace("&", " and ")
    return re.sub(r"[^\w]+|_", " ", s).split()


def content_words(title: str) -> set[str]:
    return {w for w in normalise(title) if w not in FUNCTION_WORDS}


def title_matches(guess: str, title: str) -> bool:
    g, t = content_words(guess), content_words(title)
    if not g or not t:
        return False
    return len(g & t) / len(g | t) > TITLE_JACCARD


def author_matches(guess: str, author: str) -> bool:
    words = normalise(author)
    return bool(words) and words[-1] in set(normalise(guess))


def match_guess(claimed: bool, title_guess: str, author_guess: str, title: str, author: str) -> dict:
    """``title_match``, ``author_match`` and ``recognised`` (= claimed and title_match) of one reply."""
    tm, am = title_matches(title_guess, title), author_matches(author_guess, author)
    return {"title_match": tm, "author_match": am, "recognised": bool(claimed) and tm}


# ---------------------------------------------------------------- the request

def probe_schema(guess_chars: int = 60) -> type[BaseModel]:
    """The probe's reply: recognised (bool), title_guess, author_guess (``maxLength`` guess_chars),
    confidence (an enum 1..5, which llama.cpp's grammar enforces)."""
    return create_model(
        f"RecognitionProbe{int(guess_chars)}", __config__=ConfigDict(extra="forbid"),
        __doc__="Whether the judge recognises the work, and what it takes it to be.",
        recognised=(bool, Field(..., description="true if you recognise this specific published work")),
        title_guess=(str, Field(..., max_length=int(guess_chars), description="the work's title, or empty")),
        author_guess=(str, Field(..., max_length=int(guess_chars), description="the work's author, or empty")),
        confidence=(Literal[1, 2, 3, 4, 5], Field(..., description="1 = a guess, 5 = certain")),
    )


def _template():
    path = paths.prompts_dir() / "behaviour" / "recognition.md"
    return parse_template(path.read_text(encoding="utf-8"), "recognition", path)


def build_requests(items: Sequence, knobs: dict) -> tuple[list[dict], list]:
    """One probe request per SAGE item (``EvalItem``: story_id, category, tier, mode, prepared
    material), with its metadata row."""
    from judgelab.gateway import ChatRequest, Message, Sampling

    tpl = _template()
    schema = probe_schema(knobs["guess_chars"])
    sampling = Sampling(temperature=knobs["temperature"], seed=knobs["seed"],
                        max_tokens=knobs["recognition_max_tokens"], reasoning_effort=knobs["reasoning_effort"])
    meta, reqs = [], []
    for it in items:
        user = Template(tpl.user).substitute(material=it.prepared.material)
        reqs.append(ChatRequest(messages=[Message(role="system", content=tpl.system), Message(role="user", content=user)],
                                schema=schema, sampling=sampling, template_version=tpl.version,
                                tags={"study": "behaviour", "notebook": "12", "probe": "recognition",
                                      "item": it.story_id, "mode": it.mode}))
        meta.append({"story_id": it.story_id, "category": it.category, "tier": it.tier, "mode": it.mode})
    return meta, reqs


def tidy(meta: list[dict], results: list, stories: pd.DataFrame, profile: str) -> pd.DataFrame:
    """One row per probe call, its reply matched against the manifest's title and author (failed
    calls: ``status="failed"`` and no reading)."""
    truth = stories.set_index("story_id")
    rows = []
    for m, r in zip(meta, results):
        ok = r.status == "ok" and r.parsed is not None
        row = {**m, "claimed": None, "title_guess": None, "author_guess": None, "confidence": None,
               "title_match": None, "author_match": None, "recognised": None,
               "status": "ok" if ok else "failed", "cached": bool(r.cached),
               "input_tokens": r.usage.input_tokens, "output_tokens": r.usage.output_tokens,
               **sent_columns(r),  # the sampling as sent, not the knobs' (a reasoning model gets none)
               "backend": r.backend, "model": r.model, "profile": profile}
        if ok:
            p = r.parsed
            t = truth.loc[m["story_id"]]
            row.update(claimed=bool(p.recognised), title_guess=p.title_guess, author_guess=p.author_guess,
                       confidence=int(p.confidence),
                       **match_guess(p.recognised, p.title_guess, p.author_guess, t["title"], t["author"]))
        rows.append(row)
    return pd.DataFrame(rows, columns=PROBE_COLUMNS)


# ---------------------------------------------------------------- what the notebook shows

def rate_table(probe: pd.DataFrame) -> pd.DataFrame:
    """Recognition rate by category and mode (and over all categories), with Wilson 95% intervals;
    the claim rate beside. Unit: story; failed probes are left out (``n_failed``)."""
    rows = []
    groups = [(c, m) for c in sorted(probe["category"].unique()) for m in sorted(probe["mode"].unique())]
    groups += [("all", m) for m in sorted(probe["mode"].unique())]
    for cat, mode in groups:
        g = probe[(probe["mode"] == mode) & ((probe["category"] == cat) | (cat == "all"))]
        ok = g[g["status"] == "ok"]
        rate = intervals.proportion_ci(int(ok["recognised"].astype(bool).sum()), len(ok))
        claim = intervals.proportion_ci(int(ok["claimed"].astype(bool).sum()), len(ok))
        rows.append({"category": cat, "mode": mode, "n": len(ok), "n_failed": int(len(g) - len(ok)),
                     "recognition_rate": rate[0], "recognition_rate_ci_low": rate[1], "recognition_rate_ci_high": rate[2],
                     "claim_rate": claim[0], "claim_rate_ci_low": claim[1], "claim_rate_ci_high": claim[2],
                     "author_match_rate": float(ok["author_match"].astype(bool).mean()) if len(ok) else float("nan")})
    out = pd.DataFrame(rows)
    return out.assign(unit="story", ci_method="Wilson score interval")


def scores_by_recognition(probe: pd.DataFrame, summaries: pd.DataFrame, n_boot: int = 2000,
                          seed: int = 0) -> pd.DataFrame:
    """SAGE's final scores (content, title) and the mode difference (content - title), per layer,
    split by whether the judge recognised the story *from its text* (content-mode probe), with
    percentile-bootstrap 95% intervals over stories. ``summaries``: notebooks 02-04's
    ``sage_summary_<layer>`` rows (story_id, layer, mode, overall_score)."""
    rec = probe[(probe["mode"] == "content") & (probe["status"] == "ok")].set_index("story_id")["recognised"]
    wide = summaries.pivot_table(index=["layer", "story_id"], columns="mode", values="overall_score").reset_index()
    for m in ("content", "title"):
        if m not in wide:
            wide[m] = float("nan")
    wide["mode_difference"] = wide["content"] - wide["title"]
    wide["group"] = wide["story_id"].map(rec).map({True: "recognised", False: "not recognised"})
    wide["group"] = wide["group"].fillna("no probe reply")
    rows = []
    for (layer, group), g in wide.groupby(["layer", "group"], sort=True):
        for stat in ("content", "title", "mode_difference"):
            m, lo, hi = intervals.mean_ci(g[stat], n_boot, seed)
            rows.append({"layer": layer, "group": group, "statistic": stat if stat == "mode_difference" else f"{stat}_score",
                         "n": int(g[stat].notna().sum()), "mean": m, "mean_ci_low": lo, "mean_ci_high": hi})
    out = pd.DataFrame(rows, columns=["layer", "group", "statistic", "n", "mean", "mean_ci_low", "mean_ci_high"])
    return out.assign(unit="story", ci_method=intervals.BOOT_METHOD.format(unit="stories", n=n_boot))


def run_probe(gw, items: Sequence, knobs: dict, stories: pd.DataFrame, profile: str,
              concurrency: int | None = None) -> pd.DataFrame:
    """Probe every item through the gateway and return :func:`tidy`'s frame."""
    meta, reqs = build_requests(items, knobs)
    return tidy(meta, gw.run_batch(reqs, concurrency=concurrency, desc="recognition probe"), stories, profile)
