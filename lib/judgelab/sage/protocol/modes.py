"""The two SAGE input modes: content-limit (text only) and title-limit (title and author only).

Content-limit mode must not tell the model which work it reads, nor where the text comes from:
:func:`content_limit_text` prepares the text (:mod:`~judgelab.sage.protocol.text_prep`) and
verifies it with the independent checker (:mod:`~judgelab.sage.protocol.leak_check`); a leak
raises :class:`ContentLeakError` rather than reaching the model.

Title-limit mode sends title and author only. For an LLM story the author is the generating
model, which tells the judge the category: :data:`TITLE_AUTHOR_NOTE` says so beside Table 9;
``anonymous_author=True`` (a sensitivity setting) sends "an unknown author" for every story.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable

from judgelab.sage.protocol import leak_check, prompts, text_prep
from judgelab.sage.protocol.text_prep import split_paragraphs


#: What title mode's author line is, stated beside every table that compares the two modes.
TITLE_AUTHOR_NOTE = (
    "title-limit material names each story's author as the manifest prints it: for the LLM stories "
    "that is the generating model (e.g. 'by chatgpt-4o-latest-2025-03-27'), which discloses the "
    "category to the judge; the sensitivity setting anonymous_author=True sends 'an unknown author' "
    "for every story")
TITLE_AUTHOR_NOTE_ANONYMOUS = ("title-limit material gave every story's author as 'an unknown author' "
                               "(sensitivity setting anonymous_author=True)")


def with_title_author_note(table, anonymous_author: bool = False):
    """``table`` with a ``title_author_note`` column (:data:`TITLE_AUTHOR_NOTE`, or the anonymous
    setting's note): Table 9 (content vs title mode) states who title mode named as author."""
    out = table.copy()
    out["title_author_note"] = TITLE_AUTHOR_NOTE_ANONYMOUS if anonymous_author else TITLE_AUTHOR_NOTE
    return out


class ContentLeakError(ValueError):
    """The text still names its title or author, or carries formatting that betrays its origin."""


class ContextTooLongError(ValueError):
    """A text exceeds the token budget under ``context_policy="error"``."""


def content_limit_text(text: str, title: str, author: str, *, story_id: str | None = None,
                       mask_title_in_body: bool = False, surnames: frozenset | set = frozenset()) -> str:
    """The story text for content-limit mode; :class:`ContentLeakError` naming the story and the
    leaks if anything that names the work or betrays its origin remains, or nothing is left."""
    prepared = text_prep.prepare_text(text, title, author, story_id=story_id,
                                      mask_title_in_body=mask_title_in_body)
    check_clean(prepared.text, title, author, story_id=story_id, surnames=surnames,
                check_title_in_body=mask_title_in_body)
    return prepared.text


def check_clean(text: str, title: str, author: str, *, story_id: str | None = None,
                surnames: frozenset | set = frozenset(), check_title_in_body: bool = True) -> None:
    """Raise :class:`ContentLeakError` if :func:`leak_check.find_leaks` finds anything."""
    leaks = leak_check.find_leaks(text, title, author, surnames=surnames,
                                  check_title_in_body=check_title_in_body)
    if leaks:
        shown = [f"{lk.kind} {lk.match!r} at {lk.where}" for lk in leaks[:5]]
        raise ContentLeakError(f"content-limit text of {story_id or title!r} still betrays its work: {shown}")
    if not text.strip():
        raise ContentLeakError(f"content-limit text of {story_id or title!r} is empty after preparation")


# ---------------------------------------------------------------- tokens and truncation

def approx_tokens(text: str) -> int:
    """A tokenizer-free estimate, ``ceil(1.35 * words + 0.1 * other symbols)``; it can undercount
    a BPE tokenizer by ~15% on dialogue: budgets use the backend's tokenizer when there is one."""
    words = len(text_prep.words(text))
    symbols = len(re.findall(r"[^\w\s]", text))
    return math.ceil(1.35 * words + 0.1 * symbols)


def omission_marker(n_words: int) -> str:
    return f"[... about {n_words} words omitted from the middle of the text ...]"


def truncate_head_tail(text: str, max_tokens: int, count=approx_tokens) -> tuple[str, bool]:
    """Keep the head and the tail of ``text`` within ``max_tokens`` (half each), whole
    paragraphs where possible, joined by an omission marker. Returns ``(text, truncated)``."""
    if count(text) <= max_tokens:
        return text, False
    paras = split_paragraphs(text)
    half = max(1, (max_tokens - 20) // 2)

    def take(seq: list[str]) -> list[str]:
        kept, used = [], 0
        for p in seq:
            c = count(p)
            if used + c > half:
                if not kept:  # one long paragraph: cut it by words
                    words = p.split()
                    n = max(1, int(len(words) * (half - used) / max(c, 1)))
                    kept.append(" ".join(words[:n]))
                break
            kept.append(p)
            used += c
        return kept

    head = take(paras)
    tail = take(paras[::-1])[::-1]
    if not tail[0] in paras:  # a cut long paragraph at the end keeps its last words
        last = paras[-1].split()
        tail = [" ".join(last[-len(tail[0].split()):])]
    omitted = max(0, len(text_prep.words(text)) - len(text_prep.words(" ".join(head + tail))))
    return "\n\n".join(head + [omission_marker(omitted)] + tail), True


# ---------------------------------------------------------------- what the model is given

@dataclass(frozen=True)
class PreparedInput:
    """The material of one evaluation: the first user message's story part, and bookkeeping."""

    mode: str
    material: str
    truncated: bool
    text_tokens: int
    original_tokens: int


def prepare_input(mode: str, *, text: str | None, title: str, author: str, max_text_tokens: int,
                  context_policy: str = "head_tail", story_id: str | None = None,
                  mask_title_in_body: bool = False, surnames: frozenset | set = frozenset(),
                  count_tokens: Callable[[str], int] | None = None,
                  anonymous_author: bool = False) -> PreparedInput:
    """Content mode: :func:`content_limit_text`, then the context policy (``head_tail`` cuts the
    middle, ``error`` raises :class:`ContextTooLongError`) measured by ``count_tokens`` (None:
    :func:`approx_tokens`). Title mode: title and author only ("an unknown author" if anonymous)."""
    count = count_tokens or approx_tokens
    if mode == "title":
        mat = prompts.material("title", title=title, author=None if anonymous_author else author)
        return PreparedInput(mode, mat, False, 0, 0)
    if mode != "content":
        raise ValueError(f"unknown mode {mode!r}")
    body = content_limit_text(text or "", title, author, story_id=story_id,
                              mask_title_in_body=mask_title_in_body, surnames=surnames)
    n = count(body)
    if n > max_text_tokens:
        if context_policy == "error":
            raise ContextTooLongError(
                f"{title!r}: ~{n} tokens exceed the budget of {max_text_tokens} "
                "(context_policy='error'; use 'head_tail' to cut the middle, or a larger-context model)")
        if context_policy != "head_tail":
            raise ValueError(f"unknown context_policy {context_policy!r}; use 'head_tail' or 'error'")
        body, _ = truncate_head_tail(body, max_text_tokens, count=count)
        # the marker cannot add a name, but check what is actually sent
        check_clean(body, title, author, story_id=story_id, surnames=surnames,
                    check_title_in_body=mask_title_in_body)
        return PreparedInput(mode, prompts.material("content", text=body), True, count(body), n)
    return PreparedInput(mode, prompts.material("content", text=body), False, n, n)
