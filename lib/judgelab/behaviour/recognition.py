"""The recognition probe: does the judge know the work it scores?

One short call per story and SAGE mode, shown the material exactly as SAGE's judge sees it, with
its own schema (:func:`probe_schema`) and prompt (``prompts/behaviour/recognition.md``).

**Matching rule** (:func:`match_guess`). Titles and names are normalised (accents and case
folded, punctuation to spaces, ``&`` to "and"); a title's *content words* are its words less
:data:`FUNCTION_WORDS`.

- ``title_match``: guess and title content words overlap with a Jaccard index above 0.5 ("House
  of Usher" matches "The Fall of the House of Usher": 2 of 3; "Usher" alone does not: a name the
  text itself holds is not enough to count as knowing the work);
- ``author_match``: the manifest author's surname (last word) is a word of the author guess;
- ``recognised``: the judge claims to recognise the work *and* the title matches (``claimed``
  keeps the bare claim). In title mode the title is in the material, so a match there is an
  **echo** of the prompt, reported apart.

**Controls.** Works nobody can have read give the false-claim rate (:func:`claim_contrast`): the
LLM stories (content mode: written for SAGE, never published before the judges' training) and
:func:`fabricated_works` (title mode).

**Continuation probe** (:func:`cloze_requests`, ``prompts/behaviour/cloze.md``): the first
``cloze_opening_words`` words and a request for the next ``cloze_words``, scored by
:func:`cloze_overlap`: the longest common subsequence of the normalised words of the reply and of
the true continuation over the continuation's length (1 = word for word; the LLM stories give what
a judge guesses from the opening alone).
"""
from __future__ import annotations

import re
import unicodedata
from string import Template
from typing import Literal, Sequence

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, create_model

import numpy as np

from judgelab import paths
from judgelab.behaviour.planted import unit_mean
from judgelab.gateway.types import sent_columns
from judgelab.prompting import parse_template
from judgelab.stats import bootstrap, intervals, rules

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


def _template(name: str = "recognition"):
    path = paths.prompts_dir() / "behaviour" / f"{name}.md"
    return parse_template(path.read_text(encoding="utf-8"), name, path)


# ---------------------------------------------------------------- the invented works

_FIRST = ("Edwin", "Maud", "Oswin", "Thea", "Caspar", "Lenora", "Ambrose", "Ilse", "Fenwick", "Rosalind")
_LAST = ("Harrowgate", "Quillmore", "Ardenwick", "Pellingham", "Tavistrand", "Morrowby", "Crandel", "Vexley")
_ADJ = ("Silent", "Copper", "Drowned", "Ninth", "Hollow", "Amber", "Weeping", "Lantern-lit")
_NOUN = ("Orchard", "Ledger", "Lighthouse", "Carriage", "Sextant", "Aviary", "Cistern", "Parlour")
_PLACE = ("Marrow Street", "Gallow Fen", "Old Quarry Lane", "Saint Oda's", "the Tollhouse", "Brindle Cove")


def fabricated_works(n: int, seed: int, avoid_titles: Sequence[str] = ()) -> pd.DataFrame:
    """``n`` invented works (story_id ``fabricated-<i>``, category ``fabricated``): "The <adjective>
    <noun> of <place>" by "<first name> <surname>", seeded, none matching a title of
    ``avoid_titles`` (:func:`title_matches`): a judge that claims one claims a work that does not
    exist."""
    if int(n) > len(_ADJ) * len(_NOUN) * len(_PLACE) // 2:
        raise ValueError(f"fabricated works: {n} asked, the word lists make too few distinct titles")
    rng = np.random.default_rng(seed)
    rows, seen = [], set()
    while len(rows) < int(n):
        title = f"The {rng.choice(_ADJ)} {rng.choice(_NOUN)} of {rng.choice(_PLACE)}"
        if title in seen or any(title_matches(title, t) for t in avoid_titles):
            continue
        seen.add(title)
        rows.append({"story_id": f"fabricated-{len(rows) + 1}", "category": "fabricated", "tier": "",
                     "title": title, "author": f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"})
    return pd.DataFrame(rows, columns=["story_id", "category", "tier", "title", "author"])


def fabricated_items(works: pd.DataFrame, layer: str = "L4") -> list:
    """Title-mode items of the invented works, prepared as SAGE prepares a title-mode input."""
    from judgelab.sage.protocol.evaluation import EvalItem
    from judgelab.sage.protocol.modes import prepare_input

    return [EvalItem(w.story_id, w.category, "", layer, "title",
                     prepare_input("title", text=None, title=w.title, author=w.author, max_text_tokens=1))
            for w in works.itertuples(index=False)]


def build_requests(items: Sequence, knobs: dict) -> tuple[list[dict], list]:
    """One probe request per SAGE item (``EvalItem``), with its metadata row."""
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
    """One row per probe call, its reply matched against the manifest's title and author."""
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

READINGS = {"content": "recognition (the text only)", "title": "echo (the title is in the prompt)"}
CONTROLS = {"llm": "false-claim control: unpublished LLM stories", "fabricated": "false-claim control: invented works"}
#: (category, mode) of the controls: in title mode an LLM story's author line is the model's id, so
#: its row is no control (the judge may know the model)
CONTROL_GROUPS = {("llm", "content"), ("fabricated", "title")}


def rate_table(probe: pd.DataFrame) -> pd.DataFrame:
    """Recognition and claim rates by category and mode (and over the human categories), with
    Wilson 95% intervals; ``reading`` says what a title-mode "recognition" is (an echo) and
    ``control`` marks the works nobody can have read. Unit: story; failed probes left out."""
    rows = []
    modes = sorted(probe["mode"].unique())
    groups = [(c, m) for m in modes for c in sorted(probe.loc[probe["mode"] == m, "category"].unique())]
    groups += [("human (canonical + pulp)", m) for m in modes]
    for cat, mode in groups:
        in_cat = probe["category"].isin(["canonical", "pulp"]) if cat.startswith("human") else probe["category"] == cat
        g = probe[(probe["mode"] == mode) & in_cat]
        ok = g[g["status"] == "ok"]
        rate = intervals.proportion_ci(int(ok["recognised"].astype(bool).sum()), len(ok))
        claim = intervals.proportion_ci(int(ok["claimed"].astype(bool).sum()), len(ok))
        control = CONTROLS.get(cat, "") if (cat, mode) in CONTROL_GROUPS else ""
        rows.append({"category": cat, "mode": mode, "reading": READINGS.get(mode, mode), "control": control,
                     "n": len(ok), "n_failed": int(len(g) - len(ok)),
                     "recognition_rate": rate[0], "recognition_rate_ci_low": rate[1], "recognition_rate_ci_high": rate[2],
                     "claim_rate": claim[0], "claim_rate_ci_low": claim[1], "claim_rate_ci_high": claim[2],
                     "author_match_rate": float(ok["author_match"].astype(bool).mean()) if len(ok) else float("nan"),
                     "note": "" if len(ok) else "no answered probe"})
    out = pd.DataFrame(rows)
    return out.assign(unit="story", ci_method="Wilson score interval")


#: the fewest stories per group at which :func:`diff_with_note` gives an interval: the two-sample
#: percentile bootstrap of a difference of means covers within 2 points of 95% from here on
#: (normal data; 89% at 5 per group, 92% at 10; simulated in tests/test_behaviour_known.py)
MIN_PER_GROUP = 20


def diff_with_note(x, y, n_boot: int, seed: int, what: tuple[str, str] = ("x", "y")) -> dict:
    """mean(x) - mean(y), two-sample percentile bootstrap; no interval below :data:`MIN_PER_GROUP`
    values in either group ("too few units (n)") nor when both are constant, with a note saying so."""
    a, b = (np.asarray(v, float) for v in (x, y))
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    d, lo, hi = intervals.diff_ci(a, b, n_boot, seed)
    few = rules.join(*(f"too few units ({len(v)} {w})" for v, w in zip((a, b), what) if len(v) < MIN_PER_GROUP))
    if few:
        return {"diff": d, "ci_low": np.nan, "ci_high": np.nan,
                "note": few + f": no interval below {MIN_PER_GROUP} per group, where it would cover less than 93%"}
    if rules.is_constant(a) and rules.is_constant(b):
        return {"diff": d, "ci_low": np.nan, "ci_high": np.nan, "note": "no variation within either side: no interval"}
    return {"diff": d, "ci_low": lo, "ci_high": hi, "note": ""}


CRITERIA = {"claim": ("claimed", "the judge says it knows the work"),
            "title named": ("recognised", "the judge says it knows the work and names its title (Jaccard rule)")}


def claim_contrast(probe: pd.DataFrame, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per mode and criterion (:data:`CRITERIA`: the bare claim; the claim with the title named),
    the human stories' rate against the same criterion's rate on that mode's control (content: the
    LLM stories; title: the invented works), and the difference with a two-sample percentile-bootstrap
    interval over stories. One criterion on both sides: a control's title can be named too (its own
    title, from the text or, in title mode, from the prompt)."""
    rows = []
    ok = probe[probe["status"] == "ok"]
    for mode, control in (("content", "llm"), ("title", "fabricated")):
        g = ok[ok["mode"] == mode]
        for criterion, (col, meaning) in CRITERIA.items():
            human = g[g["category"].isin(["canonical", "pulp"])][col].astype(float)
            false = g[g["category"] == control][col].astype(float)
            d = diff_with_note(human, false, n_boot, seed, ("human stories", CONTROLS[control]))
            rows.append({"mode": mode, "reading": READINGS[mode], "criterion": criterion, "meaning": meaning,
                         "control": CONTROLS[control], "n_human": len(human), "n_control": len(false),
                         "human_rate": human.mean() if len(human) else np.nan,
                         "control_rate": false.mean() if len(false) else np.nan,
                         "excess_over_control": d["diff"], "ci_low": d["ci_low"], "ci_high": d["ci_high"],
                         "note": d["note"]})
    return pd.DataFrame(rows).assign(unit="story", ci_method=intervals.BOOT_METHOD.format(unit="stories", n=n_boot)
                                     + " (two samples)")


def scores_by_recognition(probe: pd.DataFrame, summaries: pd.DataFrame, n_boot: int = 2000,
                          seed: int = 0) -> pd.DataFrame:
    """Within category, do recognised stories (content-mode probe) score differently? Per layer x
    category and SAGE score (content, title, content - title): recognised - not recognised,
    two-sample percentile bootstrap over stories; per layer the pooled within-category contrast
    (category contrasts weighted by stories, cluster bootstrap of stories within category). ``summaries``:
    ``sage_summary_<layer>`` rows. NaN with a note where a category lacks either group: recognised
    stories are mostly canonical, so a pooled split would compare genres. The pooled row counts the
    stories of the categories having both groups, and has an interval only from :data:`MIN_POOLED`
    stories in each ("too few units (n)" below)."""
    rec = probe[(probe["mode"] == "content") & (probe["status"] == "ok")].set_index("story_id")["recognised"]
    wide = summaries.pivot_table(index=["layer", "story_id", "category"], columns="mode", values="overall_score").reset_index()
    for m in ("content", "title"):
        if m not in wide:
            wide[m] = float("nan")
    wide["mode_difference"] = wide["content"] - wide["title"]
    wide["recognised"] = wide["story_id"].map(rec)
    wide = wide.dropna(subset=["recognised"]).assign(recognised=lambda d: d["recognised"].astype(bool))
    stats = ("content", "title", "mode_difference")
    rows = []
    for layer, lg in wide.groupby("layer", sort=True):
        for cat, g in lg.groupby("category", sort=True):
            for stat in stats:
                yes, no = g.loc[g["recognised"], stat], g.loc[~g["recognised"], stat]
                d = diff_with_note(yes, no, n_boot, seed, ("recognised", "not recognised"))
                rows.append({"layer": layer, "category": cat, "statistic": stat, "n_recognised": int(yes.notna().sum()),
                             "n_not_recognised": int(no.notna().sum()), "mean_recognised": yes.mean(),
                             "mean_not_recognised": no.mean(), **d})
        rows += _pooled(lg, layer, stats, n_boot, seed)
    cols = ["layer", "category", "statistic", "n_recognised", "n_not_recognised", "mean_recognised",
            "mean_not_recognised", "diff", "ci_low", "ci_high", "note"]
    out = pd.DataFrame(rows, columns=cols)
    return out.assign(unit="story", ci_method=intervals.BOOT_METHOD.format(unit="stories", n=n_boot)
                      + " (two samples); pooled: cluster bootstrap over stories within category, "
                      f"from {MIN_POOLED} stories per group")


#: the fewest recognised and the fewest unrecognised stories (over the categories having both) at
#: which the pooled within-category contrast gets an interval: its stratified percentile bootstrap
#: covers within 2 points of 95% from here on at the paper's design (50 canonical + 30 pulp
#: stories, normal and skewed scores; 93.2-94.0% at 25, 92.4-93.2% at 15, 60-65% at 2; simulated in
#: tests/test_behaviour_known.py)
MIN_POOLED = 25


def _both_groups(frame: pd.DataFrame, stat: str):
    """(category, recognised values, unrecognised values) of each category having both groups."""
    for cat, g in frame.groupby("category"):
        yes, no = g.loc[g["recognised"], stat].dropna(), g.loc[~g["recognised"], stat].dropna()
        if len(yes) and len(no):
            yield cat, yes, no


def _within(frame: pd.DataFrame, stat: str) -> float:
    """Stories-weighted mean over categories having both groups of recognised - not recognised."""
    parts = [(yes.mean() - no.mean(), len(yes) + len(no)) for _, yes, no in _both_groups(frame, stat)]
    return float(np.average([d for d, _ in parts], weights=[w for _, w in parts])) if parts else float("nan")


def pooled_units(frame: pd.DataFrame, stat: str) -> tuple[int, int]:
    """(recognised, not recognised) stories with a ``stat`` score in the categories having both:
    the units the pooled contrast rests on, whose smaller count gates its interval."""
    counts = [(len(yes), len(no)) for _, yes, no in _both_groups(frame, stat)]
    return sum(c[0] for c in counts), sum(c[1] for c in counts)


def _pooled(lg: pd.DataFrame, layer: str, stats: Sequence[str], n_boot: int, seed: int) -> list[dict]:
    """The pooled within-category rows of one layer: the estimate always, the stratified cluster
    bootstrap's interval only where both groups reach :data:`MIN_POOLED` stories."""
    est = {s: _within(lg, s) for s in stats}
    units = {s: pooled_units(lg, s) for s in stats}
    rows = {s: {"layer": layer, "category": "within category (pooled)", "statistic": s,
                "n_recognised": units[s][0], "n_not_recognised": units[s][1], "diff": est[s],
                "ci_low": np.nan, "ci_high": np.nan, "note": ""} for s in stats}
    shown = []
    for s in stats:
        yes, no = units[s]
        if not np.isfinite(est[s]):
            rows[s]["note"] = "no category has both recognised and unrecognised stories"
        elif min(yes, no) < MIN_POOLED:
            rows[s]["note"] = (f"too few units ({yes} recognised, {no} not recognised, in the categories having "
                               f"both): no interval below {MIN_POOLED} per group, where it would cover less than 93%")
        else:
            shown.append(s)
    if shown:
        boot = bootstrap.cluster_bootstrap(lg, lambda f: {s: _within(f, s) for s in shown}, cluster="story_id",
                                           strata="category", n_boot=n_boot, seed=seed,
                                           unit="story").set_index("statistic")
        for s in shown:
            rows[s].update(ci_low=boot.loc[s, "ci_low"], ci_high=boot.loc[s, "ci_high"], note=boot.loc[s, "note"])
    return [rows[s] for s in stats]


# ---------------------------------------------------------------- the continuation (cloze) probe

def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two word lists (dynamic programming)."""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def cloze_overlap(reply: str, truth: str) -> float:
    """The stated scoring rule: LCS of the normalised words of ``reply`` (its first as many words as
    ``truth`` has, so that a long reply gains nothing) and ``truth``, over ``truth``'s length."""
    t = normalise(truth)
    if not t:
        raise ValueError("cloze: the true continuation has no words")
    return lcs_length(normalise(reply)[:len(t)], t) / len(t)


def cloze_schema(chars: int) -> type[BaseModel]:
    return create_model(f"ClozeProbe{int(chars)}", __config__=ConfigDict(extra="forbid"),
                        __doc__="The words that come next in the story.",
                        continuation=(str, Field(..., max_length=int(chars), description="the next words of the story")))


def cloze_requests(stories: pd.DataFrame, knobs: dict) -> tuple[list[dict], list]:
    """One continuation request per story: the opening (first ``cloze_opening_words`` words of the
    corpus text), the true continuation (the next ``cloze_words``) kept in the metadata."""
    from judgelab.gateway import ChatRequest, Message, Sampling

    tpl = _template("cloze")
    n_open, n_next = int(knobs["cloze_opening_words"]), int(knobs["cloze_words"])
    schema = cloze_schema(12 * n_next)
    sampling = Sampling(temperature=knobs["temperature"], seed=knobs["seed"], max_tokens=knobs["cloze_max_tokens"],
                        reasoning_effort=knobs["reasoning_effort"])
    meta, reqs = [], []
    for s in stories.itertuples(index=False):
        words = str(s.text).split()
        if len(words) < n_open + n_next:
            raise ValueError(f"cloze: story {s.story_id} has {len(words)} words, fewer than {n_open + n_next}")
        user = Template(tpl.user).substitute(opening=" ".join(words[:n_open]), n_words=n_next)
        reqs.append(ChatRequest(messages=[Message(role="system", content=tpl.system), Message(role="user", content=user)],
                                schema=schema, sampling=sampling, template_version=tpl.version,
                                tags={"study": "behaviour", "notebook": "12", "probe": "cloze", "item": s.story_id}))
        meta.append({"story_id": s.story_id, "category": s.category, "truth": " ".join(words[n_open:n_open + n_next])})
    return meta, reqs


def cloze_tidy(meta: list[dict], results: list, profile: str) -> pd.DataFrame:
    """One row per cloze call: the reply, its overlap with the true continuation (NaN if failed)."""
    rows = []
    for m, r in zip(meta, results):
        ok = r.status == "ok" and r.parsed is not None
        reply = r.parsed.continuation if ok else None
        rows.append({**m, "reply": reply, "overlap": cloze_overlap(reply, m["truth"]) if ok else np.nan,
                     "status": "ok" if ok else "failed", "cached": bool(r.cached), **sent_columns(r),
                     "backend": r.backend, "model": r.model, "profile": profile})
    return pd.DataFrame(rows)


def chance_overlap(cloze: pd.DataFrame) -> dict:
    """The continuation probe's chance level: the mean :func:`cloze_overlap` of each answered reply
    against every *other* story's true continuation (what a reply scores on a text it was not
    written for: common words, the scoring rule's floor)."""
    ok = cloze[(cloze["status"] == "ok")] if "status" in cloze else cloze
    replies, truths = list(ok["reply"]), list(ok["truth"])
    vals = [cloze_overlap(r, t) for i, r in enumerate(replies) for j, t in enumerate(truths) if i != j]
    if not vals:
        return {"n": len(replies), "value": np.nan, "note": rules.too_few(len(replies), 2, "answered replies")}
    return {"n": len(replies), "value": float(np.mean(vals)), "note": f"mean over {len(vals)} mismatched pairs"}


def cloze_table(cloze: pd.DataFrame, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Mean overlap per category (cluster bootstrap over stories), each human one vs LLM."""
    rows = []
    for cat, g in cloze.groupby("category", sort=True):
        m = unit_mean(g["overlap"], g["story_id"], "stories")
        rows.append({"category": cat, "comparison": "mean overlap", "n": m["n_units"], "value": m["mean"],
                     "ci_low": m["ci_low"], "ci_high": m["ci_high"], "note": m["note"]})
    chance = chance_overlap(cloze)
    rows.append({"category": "every story", "comparison": "chance: each reply against the other stories' "
                 "continuations", "n": chance["n"], "value": chance["value"], "ci_low": np.nan, "ci_high": np.nan,
                 "note": chance["note"]})
    llm = cloze.loc[cloze["category"] == "llm", "overlap"]
    for cat in sorted(set(cloze["category"]) - {"llm"}):
        d = diff_with_note(cloze.loc[cloze["category"] == cat, "overlap"], llm, n_boot, seed, (cat, "llm"))
        rows.append({"category": cat, "comparison": "minus the LLM stories (control)",
                     "n": int((cloze["category"] == cat).sum()), "value": d["diff"], "ci_low": d["ci_low"],
                     "ci_high": d["ci_high"], "note": d["note"]})
    return pd.DataFrame(rows).assign(unit="story", rule="LCS of normalised words / continuation length",
                                     ci_method="mean overlap: Student t over stories (none below 10); differences: "
                                               + intervals.BOOT_METHOD.format(unit="stories", n=n_boot)
                                               + " (two samples)")


def run_probe(gw, items: Sequence, knobs: dict, stories: pd.DataFrame, profile: str,
              concurrency: int | None = None) -> pd.DataFrame:
    """Probe every item through the gateway and return :func:`tidy`'s frame."""
    meta, reqs = build_requests(items, knobs)
    return tidy(meta, gw.run_batch(reqs, concurrency=concurrency, desc="recognition probe"), stories, profile)


def run_cloze(gw, stories: pd.DataFrame, knobs: dict, profile: str) -> pd.DataFrame:
    """The continuation probe on every story through the gateway; :func:`cloze_tidy`'s frame."""
    meta, reqs = cloze_requests(stories, knobs)
    return cloze_tidy(meta, gw.run_batch(reqs, desc="continuation probe"), profile)


def run_with_controls(gw, items: Sequence, stories: pd.DataFrame, corpus: pd.DataFrame, knobs: dict,
                      profile: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The probe on ``items`` (the stories in both modes) and on ``knobs["fabricated"]`` invented
    works (the title probe's false-claim control), then the continuation probe on the stories:
    (probe, invented works, cloze)."""
    works = fabricated_works(knobs["fabricated"], knobs["seed"], corpus["title"])
    probe = run_probe(gw, list(items) + fabricated_items(works), knobs,
                      pd.concat([stories, works], ignore_index=True), profile)
    return probe, works, run_cloze(gw, stories, knobs, profile)


def tables(probe: pd.DataFrame, cloze: pd.DataFrame, summaries: pd.DataFrame, knobs: dict) -> dict:
    """Notebook 12's recognition tables by output name: the calls, the rates, the claims against
    the controls, the cloze overlap and the SAGE scores by recognition."""
    b, s = knobs["n_boot"], knobs["boot_seed"]
    return {"behaviour_recognition_probe": probe,
            "behaviour_recognition_rates": rate_table(probe),
            "behaviour_recognition_vs_controls": claim_contrast(probe, b, s),
            "behaviour_recognition_cloze_calls": cloze,
            "behaviour_recognition_cloze": cloze_table(cloze, b, s),
            "behaviour_sage_scores_by_recognition": scores_by_recognition(probe, summaries, b, s)}
