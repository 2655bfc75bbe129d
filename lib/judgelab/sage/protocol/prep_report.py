"""The preparation report: what each story's judge is shown, per mode, and what was taken out.

:func:`preparation_report` gives one row per story and mode:

- ``content``: characters and words in and out (is the cleanup even-handed?), the characters each
  rule of :data:`RULES` removed, the marks each typographic rule changed, the masks applied, and
  the leaks the independent checker still finds in the material sent (title parts in the body
  only when ``mask_title_in_body`` is on; off, ``title_phrase_paragraphs`` counts where the title
  phrase stays);
- ``title``: ``leaks`` are the 8-word windows of the story found in the material
  (:func:`text_windows_in`); windows of the title, the author and "by" only are the heading and
  byline that title mode shows by design, and do not count.

``chars_in - chars_out`` is not the sum of the rule columns: whitespace is collapsed and masks
replace names.
"""
from __future__ import annotations

import re

import pandas as pd

from judgelab.corpus.text import count_words
from judgelab.sage.protocol import leak_check, prompts, text_prep

#: The rules of :func:`text_prep.prepare_text`, in the order of its module docstring.
RULES = ("heading", "byline", "subtitle", "blurb", "signature", "section_marker", "markdown", "meta_note",
         "epigraph", "footnote", "translator_note")
#: The typographic rules of :func:`judgelab.corpus.typography.normal_form` (marks changed, words kept).
TYPO_RULES = ("quotes", "dashes", "ellipses", "book_capitals", "footnote_ref")
#: A passage this many words long, found verbatim in the title-mode material, counts as a leak.
WINDOW_WORDS = 8
REPORT_COLUMNS = (["story_id", "category", "mode", "chars_in", "chars_out", "words_in", "words_out",
                   "words_removed", "pct_words_removed", "emphasis_words"]
                  + [f"removed_{r}" for r in RULES] + [f"typo_{r}" for r in TYPO_RULES]
                  + ["title_masks", "author_masks", "title_phrase_paragraphs", "leaks", "leak_kinds"])
#: sage-v4's preparation (before the typographic normal form), for the surface-cue audit's "before" texts.
V4_PREPARATION = {"normal_form": False, "section_break": "marker", "mask_title_in_body": True}


def _windows(text: str, n: int) -> set[tuple[str, ...]]:
    """The ``n``-word windows of ``text``: lower-cased runs of letters and digits (Unicode),
    everything else a separator."""
    toks = re.findall(r"[^\W_]+", (text or "").casefold())
    return {tuple(toks[i:i + n]) for i in range(len(toks) - n + 1)}


def text_windows_in(text: str, material: str, n: int = WINDOW_WORDS, allowed: str = "") -> int:
    """Number of distinct ``n``-word windows of ``text`` that occur in ``material``, leaving out
    windows made only of the words of ``allowed`` (the title, author and "by" in title mode)."""
    allowed_words = {w for window in _windows(allowed, 1) for w in window}
    shared = _windows(text, n) & _windows(material, n)
    return sum(not set(w) <= allowed_words for w in shared)


def _content_row(story, surnames: set[str], mask_title_in_body: bool) -> dict:
    prepared = text_prep.prepare_text(story.text, story.title, story.author, story_id=story.story_id,
                                      mask_title_in_body=mask_title_in_body)
    words_in, words_out = count_words(story.text or ""), count_words(prepared.text)
    unknown = set(prepared.removed_chars) - set(RULES)
    if unknown:
        raise ValueError(f"story {story.story_id}: text_prep used rules {sorted(unknown)} that the "
                         f"preparation report does not know; add them to prep_report.RULES")
    material = prompts.material("content", text=prepared.text)
    leaks = leak_check.find_leaks(material, story.title, story.author, surnames=surnames,
                                  check_title_in_body=mask_title_in_body)
    # with the mask off (the default) the text's own title phrases stay, as its other names do:
    # counted here, not leaks
    phrases = sum(lk.kind == "title part" for lk in leak_check.find_leaks(
        prepared.text, story.title, story.author, check_title_in_body=True))
    return {"chars_out": len(prepared.text), "words_out": words_out, "words_removed": words_in - words_out,
            "pct_words_removed": 100.0 * (words_in - words_out) / max(words_in, 1),
            "emphasis_words": prepared.emphasis_words,
            **{f"removed_{r}": int(prepared.removed_chars.get(r, 0)) for r in RULES},
            **{f"typo_{r}": int(prepared.typography.get(r, 0)) for r in TYPO_RULES},
            "title_masks": prepared.n_title_masked, "author_masks": prepared.n_author_masked,
            "title_phrase_paragraphs": phrases, "leaks": len(leaks), "leak_kinds": "; ".join(sorted({lk.kind for lk in leaks}))}


def _title_row(story) -> dict:
    material = prompts.material("title", title=story.title, author=story.author)
    n = text_windows_in(story.text, material, allowed=f"{story.title} by {story.author}")
    return {"chars_out": len(material), "words_out": count_words(material), "words_removed": 0,
            "pct_words_removed": 0.0, "emphasis_words": 0,
            **{f"removed_{r}": 0 for r in RULES}, **{f"typo_{r}": 0 for r in TYPO_RULES},
            "title_masks": 0, "author_masks": 0, "title_phrase_paragraphs": 0, "leaks": n, "leak_kinds": "text passage" if n else ""}


def preparation_report(corpus: pd.DataFrame, mask_title_in_body: bool = False) -> pd.DataFrame:
    """One row per story x mode in :data:`REPORT_COLUMNS` (module docstring); the distinctive
    surnames are those of the whole ``corpus``."""
    missing = [c for c in ("story_id", "category", "title", "author", "text") if c not in corpus]
    if missing:
        raise ValueError(f"preparation_report: corpus table lacks column(s) {missing}")
    surnames = leak_check.distinctive_surnames(zip(corpus["author"], corpus["text"]))
    rows = []
    for story in corpus.itertuples(index=False):
        base = {"story_id": story.story_id, "category": story.category, "chars_in": len(story.text or ""),
                "words_in": count_words(story.text or "")}
        rows.append({**base, "mode": "content", **_content_row(story, surnames, mask_title_in_body)})
        rows.append({**base, "mode": "title", **_title_row(story)})
    return pd.DataFrame(rows, columns=REPORT_COLUMNS)


# ---------------------------------------------------------------- what notebook 01 shows

def removed_by_category(report: pd.DataFrame) -> pd.DataFrame:
    """Characters removed by each rule, summed per category (content mode), with the masks and
    leaks; a last row ``all`` sums the categories."""
    content = report[report["mode"] == "content"]
    cols = [f"removed_{r}" for r in RULES] + ["title_masks", "author_masks", "title_phrase_paragraphs", "leaks"]
    out = content.groupby("category")[cols].sum()
    out.loc["all"] = out.sum()
    return out


def preparation_note(report: pd.DataFrame) -> str:
    """Markdown: stories, characters removed, masks, and leaks per mode (which must be 0)."""
    content = report[report["mode"] == "content"]
    removed = int(content[[f"removed_{r}" for r in RULES]].to_numpy().sum())
    leaks = report.groupby("mode")["leaks"].sum()
    verdict = "none" if int(leaks.sum()) == 0 else "**LEAKS FOUND: these stories must not be sent**"
    return (f"{content['story_id'].nunique()} stories: {removed:,} characters removed by the rules in "
            f"content mode, {int(content['title_masks'].sum())} title-part masks and "
            f"{int(content['author_masks'].sum())} author-name masks; leaks in content mode "
            f"{int(leaks.get('content', 0))}, in title mode {int(leaks.get('title', 0))} ({verdict}).")


def most_removed(report: pd.DataFrame, n: int = 10) -> pd.DataFrame:
    """The ``n`` content-mode stories with the most characters removed by the rules."""
    content = report[report["mode"] == "content"].copy()
    content["removed"] = content[[f"removed_{r}" for r in RULES]].sum(axis=1)
    cols = (["story_id", "category", "chars_in", "removed", "words_removed", "pct_words_removed"]
            + [f"removed_{r}" for r in RULES] + ["title_masks", "author_masks"])
    return content.nlargest(n, "removed")[cols].reset_index(drop=True)


#: The bound of :func:`removal_by_category` checked by the tests: the mean share of a category's
#: words removed in content mode stays at or below this (percent).
MEAN_REMOVAL_BOUND_PCT = 1.5


def removal_by_category(report: pd.DataFrame) -> pd.DataFrame:
    """Words removed in content mode per category (a cleanup that removes more from one category marks it): stories, mean and max share
    of a story's words removed (percent), words removed per story, words in emphasis per story
    (kept; only their markers go), and the sums of the typographic changes."""
    content = report[report["mode"] == "content"]
    g = content.groupby("category")
    out = pd.DataFrame({
        "stories": g.size(),
        "mean_pct_words_removed": g["pct_words_removed"].mean(),
        "max_pct_words_removed": g["pct_words_removed"].max(),
        "mean_words_removed": g["words_removed"].mean(),
        "mean_emphasis_words": g["emphasis_words"].mean(),
        **{f"typo_{r}": g[f"typo_{r}"].sum() for r in TYPO_RULES},
        "mask_tokens": g["title_masks"].sum() + g["author_masks"].sum(),
    })
    out["unit"] = "story"
    return out


def sent_texts(corpus: pd.DataFrame, **settings) -> pd.DataFrame:
    """story_id, category, text: each story's content-limit text as
    :func:`text_prep.prepare_text` makes it with ``settings`` (default: the current preparation;
    :data:`V4_PREPARATION`: the one before the typographic normal form). The whole text, before any context cut."""
    rows = [{"story_id": s.story_id, "category": s.category,
             "text": text_prep.prepare_text(s.text, s.title, s.author, story_id=s.story_id, **settings).text}
            for s in corpus.itertuples(index=False)]
    return pd.DataFrame(rows)


def surface_cue_versions(corpus: pd.DataFrame, mask_title_in_body: bool = False) -> dict[str, pd.DataFrame]:
    """The texts of the surface-cue audit: ``before`` (sage-v4's preparation, masks on) and
    ``after`` (the typographic normal form, ``mask_title_in_body`` as the profile says)."""
    return {"before (sage-v4 preparation)": sent_texts(corpus, **V4_PREPARATION),
            "after (typographic normal form)": sent_texts(corpus, mask_title_in_body=mask_title_in_body)}
