"""The two SAGE input modes: content-limit (text only) and title-limit (title and author only).

Content-limit mode must not tell the model which work it reads. :func:`content_limit_text`
removes the paratext that magazines and editions print around a story — the heading, the byline
("By PHILIP K. DICK"), illustrator credits, "Author of ..." lines, the editor's blurb, epigraph
blocks set before the first narrative paragraph, and a trailing signature or "THE END" — then
masks any remaining occurrence of the author's name and of the title phrase, and finally verifies
(:func:`find_leaks`) that neither remains anywhere in the text; a leak raises
:class:`ContentLeakError` rather than reaching the model.

Why mask the title phrase inside the narrative: many titles recur in their stories ("young
Goodman Brown", "the birthmark"); left in, they let a model recognise the work, which is what the
mode rules out. The cost is that such phrases read ``[withheld]``. A title of one or two letters
("He") cannot be masked without destroying the text and identifies nothing, so it is checked only
as a heading line. The policy is a parameter (``mask_title_in_body``).

Title-limit mode sends title and author only (see :func:`judgelab.sage.protocol.prompts.material`).

The corpus text (notebook 01) has one paragraph per line and blank lines between paragraphs;
raw mirror files with hard-wrapped lines are handled too (lines are joined per paragraph).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from judgelab.sage.protocol import prompts

MASK = "[withheld]"
_ARTICLE = re.compile(r"^(the|a|an)\s+", re.IGNORECASE)
_CREDIT = re.compile(
    r"illustrated\s+by|illustrations?\s+by|author\s+of\b|complete\s+in\s+this\s+issue|copyright|"
    r"transcriber|editor'?s\s+note",
    re.IGNORECASE,
)
_SEPARATOR = re.compile(r"[\s*\-_=~.#·•]+")
_END_MARK = re.compile(r"[\W_]*(the\s+end|end|finis)[\W_]*", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")
_BYLINE_WORDS = {"by", "sir", "jr", "sr", "ph", "d", "phd", "dr", "mr", "mrs", "written"}
#: Stop classifying paratext once this many words of narrative prose have been seen.
FRONT_PROSE_WORDS = 150
#: A magazine blurb right after an illustrator credit is at most this many words.
BLURB_MAX_WORDS = 45


class ContentLeakError(ValueError):
    """The text still names its title or author after stripping and masking."""


class ContextTooLongError(ValueError):
    """A text exceeds the token budget under ``context_policy="error"``."""


# ---------------------------------------------------------------- names and patterns

def _norm(s: str) -> str:
    return re.sub(r"[^0-9a-z]", "", s.lower())


def _words(s: str) -> list[str]:
    return _WORD.findall(s)


def _name_tokens(author: str) -> list[str]:
    tokens = re.findall(r"[^\W\d_][^\W\d_'’\-]*(?:['’\-][^\W\d_]+)*", author or "")
    return [t for t in tokens if t.lower() not in {"jr", "sr", "sir", "phd", "dr", "mr", "mrs", "ph", "d"}]


def author_pattern(author: str) -> re.Pattern | None:
    """Regex for the author's name as printed: the full name, first + last name, or initials +
    last name ("H.P. LOVECRAFT", "Philip K. Dick", "Robert E Howard"); case-insensitive.

    The surname alone is not matched: surnames like London, Crane, James or Brand are ordinary
    words inside stories.
    """
    tokens = _name_tokens(author)
    if not tokens:
        return None
    sep = r"[\s.,]*"
    if len(tokens) == 1:
        alts = [re.escape(tokens[0])]
    else:
        first, last = tokens[:-1], tokens[-1]
        alts = {sep.join(re.escape(t) for t in tokens),
                re.escape(first[0]) + sep + re.escape(last),
                sep.join(re.escape(t[0]) for t in first) + sep + re.escape(last)}
        # initials in the name itself ("H. P.") stay as single letters
        alts = sorted(alts, key=len, reverse=True)
    return re.compile(r"(?<![^\W_])(?:" + "|".join(alts) + r")(?![^\W_])", re.IGNORECASE)


def title_phrase(title: str) -> str:
    """The title without a leading article and outer quotes/punctuation (lower case)."""
    t = (title or "").strip().strip("“”\"'‘’.,;:!? ").lower()
    return _ARTICLE.sub("", t).strip()


def title_pattern(title: str) -> re.Pattern | None:
    """Regex for the title phrase (article dropped) anywhere in a text, or None when the phrase
    has fewer than 3 letters/digits (too short to identify a work, e.g. "He")."""
    words = re.findall(r"[0-9a-z]+", title_phrase(title))
    if len("".join(words)) < 3:
        return None
    body = r"[\W_]*".join(re.escape(w) for w in words)
    return re.compile(r"(?<![^\W_])" + body + r"(?![^\W_])", re.IGNORECASE)


# ---------------------------------------------------------------- paragraphs

def split_paragraphs(text: str) -> list[str]:
    """Paragraphs (blank-line separated), each with its internal whitespace collapsed."""
    paras = [re.sub(r"\s+", " ", b).strip() for b in re.split(r"\n\s*\n", text or "")]
    return [p for p in paras if p]


def classify(par: str, title: str, author: str) -> str:
    """Kind of a paragraph near the start or end of a story.

    ``title`` (the heading), ``author`` (the author's name with at most one other word besides "By",
    "Sir", "Jr.", "Ph.D.": a byline or a signature),
    ``byline`` (a bare "By" or "by" + a short capitalised name), ``credit`` (illustrator,
    "Author of ...", "Complete in this issue"), ``separator`` ("* * *"), ``italic`` (a block set
    in _italics_: blurbs and epigraphs), ``caps`` (a short line without lower-case letters:
    headings, section numerals, "THE END"), else ``prose``.
    """
    n = len(_words(par))
    if _norm(par) and _norm(par) == _norm(title):
        return "title"
    pat = author_pattern(author)
    if pat and pat.search(par):
        rest = [w for w in _words(pat.sub(" ", par)) if w.lower() not in _BYLINE_WORDS]
        if len(rest) <= 1:
            return "author"  # the name plus "By", "Sir", "Jr." ...: a byline or a signature
    if re.fullmatch(r"[\W_]*by[\W_]*", par, re.IGNORECASE):
        return "byline"
    m = re.match(r"[\W_]*by\b(.*)", par, re.IGNORECASE)
    if m and n <= 7 and all(w[:1].isupper() for w in _words(m.group(1))):
        return "byline"
    if _CREDIT.search(par) and n <= 40:
        return "credit"
    if _SEPARATOR.fullmatch(par):
        return "separator"
    if par.startswith("_") or par.endswith("_") or par.startswith("(_"):
        return "italic"
    if not re.search(r"[a-z]", par) and n <= 15:
        return "caps"
    return "prose"


@dataclass
class StrippedText:
    """What :func:`strip_paratext` did: the text sent and what was removed or masked."""

    text: str
    dropped_front: list[str] = field(default_factory=list)
    dropped_back: list[str] = field(default_factory=list)
    n_author_masked: int = 0
    n_title_masked: int = 0


def strip_paratext(text: str, title: str, author: str, *, mask_title_in_body: bool = True) -> StrippedText:
    """Remove heading, byline, credits, blurb and signature; mask the author's name and the title.

    Front: among the first paragraphs (until :data:`FRONT_PROSE_WORDS` words of prose have been
    read), everything up to the last paratext marker (title, byline, author, credit; a separator
    counts once a byline or credit was seen) is dropped, then any italic/caps/separator blocks
    that follow it (blurbs, epigraphs, section numerals), then — after an illustrator credit —
    one short prose blurb (at most :data:`BLURB_MAX_WORDS` words). Back: trailing separators,
    "THE END" and signature lines naming the author are dropped.
    """
    paras = split_paragraphs(text)
    kinds = [classify(p, title, author) for p in paras]
    end = len(paras)
    while end > 0 and (kinds[end - 1] in ("separator", "author")
                       or _END_MARK.fullmatch(paras[end - 1])
                       or (paras[end - 1].startswith(("--", "—")) and kinds[end - 1] == "caps")):
        end -= 1
    last, prose_words, seen_byline = -1, 0, False
    for i in range(end):
        p, k = paras[i], kinds[i]
        if k in ("title", "author", "byline", "credit"):
            last = i
            seen_byline = seen_byline or k != "title"
        elif k == "separator" and seen_byline:
            last = i
        elif k == "prose":
            prose_words += len(_words(p))
            if prose_words > FRONT_PROSE_WORDS:
                break
    start = last + 1
    while start < end and kinds[start] in ("italic", "caps", "separator", "title"):
        start += 1
    if (last >= 0 and start == last + 1 and kinds[last] == "credit"
            and re.search(r"illustrat", paras[last], re.I)
            and start < end - 1 and kinds[start] == "prose"
            and len(_words(paras[start])) <= BLURB_MAX_WORDS):
        start += 1
    out = StrippedText(text="", dropped_front=paras[:start], dropped_back=paras[end:])
    body = "\n\n".join(paras[start:end])
    apat = author_pattern(author)
    if apat:
        body, out.n_author_masked = apat.subn(MASK, body)
    tpat = title_pattern(title)
    if tpat and mask_title_in_body:
        body, out.n_title_masked = tpat.subn(MASK, body)
    out.text = body
    return out


def find_leaks(text: str, title: str, author: str, *, check_title_phrase: bool = True) -> list[str]:
    """Every place where ``text`` still names its title or author (empty list = clean).

    Checks: the author's name (:func:`author_pattern`) anywhere; a paragraph that is the title;
    the title phrase (:func:`title_pattern`) anywhere, when ``check_title_phrase``.
    """
    leaks = []
    apat = author_pattern(author)
    if apat:
        leaks += [f"author name {m.group(0)!r} at {m.start()}" for m in apat.finditer(text)]
    for p in split_paragraphs(text):
        if _norm(p) and _norm(p) == _norm(title):
            leaks.append(f"title line {p!r}")
    tpat = title_pattern(title)
    if tpat and check_title_phrase:
        leaks += [f"title phrase {m.group(0)!r} at {m.start()}" for m in tpat.finditer(text)]
    return leaks


def content_limit_text(text: str, title: str, author: str, *, mask_title_in_body: bool = True) -> str:
    """The story text for content-limit mode: paratext stripped, names masked, leaks verified.

    Raises :class:`ContentLeakError` if the title or the author's name still appears, or if
    nothing is left of the text.
    """
    stripped = strip_paratext(text, title, author, mask_title_in_body=mask_title_in_body)
    leaks = find_leaks(stripped.text, title, author, check_title_phrase=mask_title_in_body)
    if leaks:
        raise ContentLeakError(f"content-limit text of {title!r} still names its work: {leaks[:5]}")
    if not stripped.text.strip():
        raise ContentLeakError(f"content-limit text of {title!r} is empty after stripping paratext")
    return stripped.text


# ---------------------------------------------------------------- tokens and truncation

def approx_tokens(text: str) -> int:
    """Token estimate for budgets: ``ceil(1.35 * words + 0.1 * other symbols)``.

    Deliberately tokenizer-free (the same number for every backend); English prose runs at
    ~1.3 tokens per word in the BPE vocabularies of GPT-4o and SmolLM2, so the budget errs on the
    safe side. The gateway reports the real counts.
    """
    words = len(_words(text))
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
    omitted = max(0, len(_words(text)) - len(_words(" ".join(head + tail))))
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
                  context_policy: str = "head_tail") -> PreparedInput:
    """Content mode: :func:`content_limit_text`, then the context policy (``head_tail`` cuts the
    middle, ``error`` raises :class:`ContextTooLongError`). Title mode: title and author only."""
    if mode == "title":
        mat = prompts.material("title", title=title, author=author)
        return PreparedInput(mode, mat, False, 0, 0)
    if mode != "content":
        raise ValueError(f"unknown mode {mode!r}")
    body = content_limit_text(text or "", title, author)
    n = approx_tokens(body)
    if n > max_text_tokens:
        if context_policy == "error":
            raise ContextTooLongError(
                f"{title!r}: ~{n} tokens exceed the budget of {max_text_tokens} "
                "(context_policy='error'; use 'head_tail' to cut the middle, or a larger-context model)")
        if context_policy != "head_tail":
            raise ValueError(f"unknown context_policy {context_policy!r}; use 'head_tail' or 'error'")
        body, _ = truncate_head_tail(body, max_text_tokens)
        leaks = find_leaks(body, title, author)
        if leaks:  # the marker cannot add a name, but check what is actually sent
            raise ContentLeakError(f"truncated text of {title!r} names its work: {leaks[:3]}")
        return PreparedInput(mode, prompts.material("content", text=body), True, approx_tokens(body), n)
    return PreparedInput(mode, prompts.material("content", text=body), False, n, n)
