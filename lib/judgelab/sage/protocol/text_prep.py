"""What the judge reads in content-limit mode: the story's prose, and nothing that names the work
or betrays where the text comes from.

:func:`prepare_text` removes, and counts by rule (characters removed per rule):

- ``heading``: the title line (any part of a title "A (B)" or "A; or, B");
- ``byline``: "By PHILIP K. DICK", the author's name alone, illustrator credits, "Author of ...";
- ``subtitle``: a short line between the title and the first section numeral;
- ``blurb``: an editor's blurb or epigraph block before the narrative, and the curated blurbs of
  ``data/corpus/paratext.csv`` that no rule can tell from a first sentence;
- ``signature``: trailing "THE END", separators and the author's name at the end;
- ``section_marker``: chapter headings, numbered section titles, section numerals and separators.
  By default (``section_break="none"``) nothing replaces them: a neutral ``* * *`` still counted
  an LLM's chapters (3.6 per 1,000 words against 0.5 in human texts);
- ``markdown``: emphasis and heading markers, the words kept;
- ``meta_note``: notes to the reader in any category, and an LLM reply's framing before or after
  the story ("Here is the revised Chapter 5"); a generation's degenerate lines inside the story
  are its own text and stay;
- ``epigraph``, ``footnote``, ``translator_note``: a head epigraph with its attribution,
  footnote blocks and their anchors, a "Notes:" block of numbered notes after the story.

With ``normal_form=True`` the kept paragraphs are put in one typographic form for every category
(:mod:`judgelab.corpus.typography`). Then the author's name as printed is masked and, when
``mask_title_in_body`` (off by default: ``[withheld]`` appeared in 30 human stories and no LLM
story, so the mask itself marked the category), every title part of two or more content words; a
one-word title names the story's central noun and is masked only with ``mask_single_word_titles``.
The independent checker :mod:`judgelab.sage.protocol.leak_check` verifies the result.
"""
from __future__ import annotations

import csv
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from judgelab import paths
from judgelab.corpus import typography

MASK = "[withheld]"
#: The neutral break of ``section_break="marker"`` (a sensitivity setting).
SECTION_BREAK = "* * *"
SECTION_BREAKS = ("none", "marker")
#: Stop classifying front paratext once this many words of narrative prose have been seen.
FRONT_PROSE_WORDS = 150
#: A blurb, teaser or subtitle is at most this many words.
BLURB_MAX_WORDS = 45

_ARTICLES = {"the", "a", "an", "la", "le", "les", "der", "die", "das"}
_FUNCTION_WORDS = _ARTICLES | {"of", "and", "or", "in", "on", "at", "to", "for", "from", "by", "with", "de", "du"}
_CREDIT = re.compile(
    r"illustrated\s+by|illustrations?\s+by|author\s+of\b|complete\s+in\s+this\s+issue|copyright|"
    r"transcriber|editor'?s\s+note",
    re.IGNORECASE,
)
_SEPARATOR = re.compile(r"[\s*\-_=~.#·•/]+|[\s*]*—+[\s*]*")
_END_MARK = re.compile(r"[\W_]*(the\s+end|end|finis)[\W_]*", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")
_BYLINE_WORDS = {"by", "sir", "jr", "sr", "ph", "d", "phd", "dr", "mr", "mrs", "written"}
_ROMAN = re.compile(r"[\W_]*(?:[IVXLC]+|\d{1,2})[\W_]*")
_CHAPTER = re.compile(
    r"^[\W_]*(?:#{1,6}\s*)?[\W_]*(chapter\s+[\w.]+|part\s+(?:[ivxlc]+|\d+|one|two|three|four|five)\b|"
    r"epilogue|prologue|end\s+of\s+chapter\s+\w+)",
    re.IGNORECASE,
)
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+")
# a section numbered in words, alone on its line (The Red Circle's "Two"); a quoted "Two." is speech
_SPELLED_NUMERAL = re.compile(r"[*_#\s]*(?:Part\s+)?(?:One|Two|Three|Four|Five|Six|Seven|Eight|Nine|Ten|Eleven|"
                              r"Twelve|ONE|TWO|THREE|FOUR|FIVE|SIX|SEVEN|EIGHT|NINE|TEN|ELEVEN|TWELVE)[.*_\s]*")
_NUMBERED_TITLE = re.compile(r"[*_\s]*(?:\d{1,2}|[IVXLC]+)\.\s+([^\W\d_][^.!?*_]*)\.?[*_\s]*")
# an asterisk footnote (Poe's "men * have thought" with "* Watson, Dr. Percival, ..." below it)
_ASTERISK_NOTE = re.compile(r"\*\s+[A-Z]")
_ASTERISK_ANCHOR = re.compile(r"(?<=[^\W\d_]) \*(?= |[,.;:)])")
_META = re.compile(
    r"word\s*count|^[*_(\s]*note\s*:|let me know|requested length|\bword[- ](target|limit)\b|"
    r"expand(ed)? as needed|themes resolved|human touches|maintained brevity|kept concise|"
    r"^[*_\s]*here(?:'s| is) (?:the )?(?:revised|rewritten|next|final)\b|^[*_\s]*(?:the )?final line\s*:?[*_\s]*$|"
    r"^as we continued to chapter",
    re.IGNORECASE,
)
# Paratext inside human texts: "[Footnote 1: ...]" blocks, an epigraph's attribution
# ("—_De Béranger_.", "--Lactantius.") and the translator's notes set after a story ("Notes:",
# then "1. One hundred kopeks make a rouble.").
_FOOTNOTE = re.compile(r"^\[(?:Footnote|Note)\s*[\w*]*\s*:.*\]$", re.IGNORECASE | re.DOTALL)
_FOOTNOTE_ANCHOR = re.compile(r"^\[\d{1,3}\]$")
_ATTRIBUTION = re.compile(r"^[\W_]*(?:--|—|–)\s*[_*]*[A-Z][^\n]{0,60}$")
_QUOTED_ATTRIBUTED = re.compile(r"[\"”»][_*]*\s*(?:--|—|–)\s*[_*]*[A-Z][\w .,'’]{1,50}[_*.]*$")
_NOTES_HEAD = re.compile(r"^[*_\s]*(?:notes?|translator'?s notes?|footnotes?)\s*:?[*_\s]*$", re.IGNORECASE)
_NUMBERED_NOTE = re.compile(r"^\d{1,3}[.)]\s+\S")
_FINAL_LINE_LABEL = re.compile(r"[*_\s]*(?:the\s+)?final\s+line\s*:?[*_\s]*", re.IGNORECASE)
_WORD_COUNT_LINE = re.compile(r"[\W_]*(?:word\s*count|words)[\W_]*(?:approx\.?|about|~)?\s*[\d,]+(?:\s*words)?[\W_]*",
                              re.IGNORECASE)
_WRAPPED_ASIDE = re.compile(r"^[*_]+\(.*\)[*_.]*$", re.DOTALL)
_LABEL = re.compile(r"^\*\*(final line)\s*:?\*\*\s*:?\s*", re.IGNORECASE)


# ---------------------------------------------------------------- names and titles

def _norm(s: str) -> str:
    return re.sub(r"[^0-9a-z]", "", (s or "").lower())


def words(s: str) -> list[str]:
    return _WORD.findall(s or "")


def _name_tokens(author: str) -> list[str]:
    tokens = re.findall(r"[^\W\d_][^\W\d_'’\-]*(?:['’\-][^\W\d_]+)*", author or "")
    return [t for t in tokens if t.lower() not in {"jr", "sr", "sir", "phd", "dr", "mr", "mrs", "ph", "d"}]


def author_pattern(author: str) -> re.Pattern | None:
    """Regex for the author's name as printed: the full name, first + last name, or initials +
    last name ("H.P. LOVECRAFT", "Philip K. Dick", "Robert E Howard"); case-insensitive.

    The surname alone is not matched: surnames like London, Crane, James or Brand are ordinary
    words inside stories (the leak checker flags a distinctive surname alone, should one occur).
    """
    tokens = _name_tokens(author)
    if not tokens:
        return None
    sep = r"[\s.,]*"
    if len(tokens) == 1:
        alts = [re.escape(tokens[0])]
    else:
        first, last = tokens[:-1], tokens[-1]
        alts = sorted({sep.join(re.escape(t) for t in tokens),
                       re.escape(first[0]) + sep + re.escape(last),
                       sep.join(re.escape(t[0]) for t in first) + sep + re.escape(last)},
                      key=len, reverse=True)
    return re.compile(r"(?<![^\W_])(?:" + "|".join(alts) + r")(?![^\W_])", re.IGNORECASE)


def title_parts(title: str) -> list[str]:
    """The parts of a title, each without a leading article, in lower case:
    "The Mantle (The Overcoat)" -> ["mantle", "overcoat"]; "X; or, Y" -> ["x", "y"]."""
    pieces = re.split(r"[()\[\]]|;\s*or\b,?", title or "")
    out = []
    for piece in pieces:
        # hyphens split words here ("Bell-Tower" is the two words a text may print apart)
        ws = [w.lower() for w in re.findall(r"[^\W_]+(?:['’][^\W_]+)*", piece)]
        while ws and ws[0] in _ARTICLES:
            ws = ws[1:]
        if ws:
            out.append(" ".join(ws))
    return out


def part_pattern(part: str) -> re.Pattern:
    """Regex for a title part anywhere in a text, any punctuation or spacing between its words."""
    body = r"[\W_]*".join(re.escape(w) for w in part.split())
    return re.compile(r"(?<![^\W_])" + body + r"(?![^\W_])", re.IGNORECASE)


def is_multiword(part: str) -> bool:
    """Two or more content words (articles, prepositions and conjunctions do not count)."""
    return len([w for w in part.split() if w not in _FUNCTION_WORDS]) >= 2


# ---------------------------------------------------------------- paragraphs

def split_paragraphs(text: str) -> list[str]:
    """Paragraphs (blank-line separated), each with its internal whitespace collapsed."""
    paras = [re.sub(r"\s+", " ", b).strip() for b in re.split(r"\n\s*\n", text or "")]
    return [p for p in paras if p]


def _title_cased(par: str) -> bool:
    content = [w for w in words(par) if w.lower() not in _FUNCTION_WORDS]
    return bool(content) and sum(w[:1].isupper() or w[:1].isdigit() for w in content) >= 0.75 * len(content)


def is_section_marker(par: str, headings_by_form: bool = False) -> bool:
    """A chapter heading, a markdown heading, a section numeral (in figures, Roman or words) or a
    separator line.

    ``headings_by_form`` (the normal form): a markdown ``#`` line is a heading only if it reads as
    one (a chapter heading, or title-cased words); "# potentially." in a degenerate generation is
    the story's own text and keeps its words (its ``#`` is stripped as markdown)."""
    if _SEPARATOR.fullmatch(par) or _ROMAN.fullmatch(par) or _SPELLED_NUMERAL.fullmatch(par):
        return True
    if _MD_HEADING.match(par) and len(words(par)) <= 15:
        return not headings_by_form or bool(_CHAPTER.match(par)) or _title_cased(par)
    # a numbered section title ("1. The Horror in Clay."): a heading like an LLM's "Chapter 1: ...",
    # which is removed too; a numbered note ("1. One hundred kopeks make a rouble.") is not title-cased
    numbered = _NUMBERED_TITLE.fullmatch(par) if headings_by_form else None
    if numbered and len(words(numbered.group(1))) <= 10 and _title_cased(numbered.group(1)):
        return True
    return bool(_CHAPTER.match(par)) and len(words(par)) <= 15


def is_meta_note(par: str) -> bool:
    """A word count or a note to the reader ("*(Note: ...)*", "(Word count: 1000)")."""
    return bool(_META.search(par)) or bool(_WRAPPED_ASIDE.fullmatch(par) and len(words(par)) >= 3
                                          and par.lstrip("*_").startswith("("))


def classify(par: str, title: str, author: str) -> str:
    """Kind of a paragraph near the start or end of a story: ``title``, ``author`` (a byline or a
    signature), ``byline``, ``credit``, ``separator``, ``italic`` (blurbs, epigraphs), ``caps``
    (a short line without lower-case letters), else ``prose``."""
    n = len(words(par))
    bare = _norm(re.sub(r"^[\W_]*(the|a|an)\s+", "", par, flags=re.IGNORECASE))
    if _norm(par) and (_norm(par) == _norm(title) or bare in {_norm(p) for p in title_parts(title)}):
        return "title"
    pat = author_pattern(author)
    if pat and pat.search(par):
        rest = [w for w in words(pat.sub(" ", par)) if w.lower() not in _BYLINE_WORDS]
        if len(rest) <= 1:
            return "author"
    if re.fullmatch(r"[\W_]*by[\W_]*", par, re.IGNORECASE):
        return "byline"
    m = re.match(r"[\W_]*by\b(.*)", par, re.IGNORECASE)
    if m and n <= 7 and all(w[:1].isupper() for w in words(m.group(1))):
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


# ---------------------------------------------------------------- curated paratext

@lru_cache(maxsize=None)
def _curated(path: Path) -> dict[str, tuple[str, ...]]:
    if not path.exists():
        return {}
    out: dict[str, list[str]] = {}
    with path.open(encoding="utf-8", newline="") as fh:
        for i, row in enumerate(csv.DictReader(fh), start=2):
            missing = [k for k in ("story_id", "starts_with", "reason") if not (row.get(k) or "").strip()]
            if missing:
                raise ValueError(f"{path}: line {i}: empty {', '.join(missing)}")
            out.setdefault(row["story_id"].strip(), []).append(row["starts_with"].strip())
    return {k: tuple(v) for k, v in out.items()}


def curated_blurbs(story_id: str | None, path: Path | None = None) -> tuple[str, ...]:
    """Opening words of the paragraphs ``data/corpus/paratext.csv`` marks as paratext of a story
    (blurbs that no rule can tell from a first sentence), each with its reason in the file."""
    if not story_id:
        return ()
    return _curated(Path(path or paths.corpus_dir() / "paratext.csv")).get(story_id, ())


# ---------------------------------------------------------------- the preparation

@dataclass
class PreparedText:
    """The content-limit text and what was done to it."""

    text: str
    removed_chars: Counter = field(default_factory=Counter)
    n_author_masked: int = 0
    n_title_masked: int = 0
    dropped: list[tuple[str, str]] = field(default_factory=list)
    #: marks changed by each typographic rule (:func:`judgelab.corpus.typography.normal_form`)
    typography: Counter = field(default_factory=Counter)
    #: words that were inside emphasis markers (kept; their markers stripped or unified)
    emphasis_words: int = 0

    def drop(self, rule: str, par: str) -> None:
        self.removed_chars[rule] += len(par)
        self.dropped.append((rule, par))


_FRONT_RULE = {"title": "heading", "author": "byline", "byline": "byline", "credit": "byline",
               "separator": "blurb", "italic": "blurb", "caps": "blurb", "prose": "blurb"}


def _front_end(paras: list[str], kinds: list[str], end: int) -> int:
    """Index of the first narrative paragraph: after the last title/byline/credit marker among the
    opening paragraphs, then past italic/caps/separator blocks and a teaser after a credit."""
    last, prose_words, seen_byline = -1, 0, False
    for i in range(end):
        k = kinds[i]
        if k in ("title", "author", "byline", "credit"):
            last, seen_byline = i, seen_byline or k != "title"
        elif k == "separator" and seen_byline:
            last = i
        elif k == "prose":
            prose_words += len(words(paras[i]))
            if prose_words > FRONT_PROSE_WORDS:
                break
    start = last + 1
    while start < end and kinds[start] in ("italic", "caps", "separator", "title") and not _ROMAN.fullmatch(paras[start]):
        start += 1
    if (last >= 0 and start == last + 1 and kinds[last] == "credit"
            and re.search(r"illustrat", paras[last], re.I)
            and start < end - 1 and kinds[start] == "prose"
            and len(words(paras[start])) <= BLURB_MAX_WORDS):
        start += 1
    return start


def _strip_front_back(paras: list[str], title: str, author: str, story_id: str | None,
                      out: PreparedText) -> list[str]:
    kinds = [classify(p, title, author) for p in paras]
    end = len(paras)
    while end > 0 and (kinds[end - 1] in ("separator", "author") or _END_MARK.fullmatch(paras[end - 1])
                       or (paras[end - 1].startswith(("--", "—")) and kinds[end - 1] == "caps")):
        end -= 1
    start = _front_end(paras, kinds, end)
    for p, k in zip(paras[:start], kinds[:start]):
        out.drop(_FRONT_RULE[k], p)
    for p in paras[end:]:
        out.drop("signature", p)
    body = paras[start:end]
    # a subtitle: one short line between the title and the first section numeral
    if len(body) >= 2 and len(words(body[0])) <= BLURB_MAX_WORDS and is_section_marker(body[1]) \
            and not is_section_marker(body[0]) and any(k == "title" for k in kinds[:start]):
        out.drop("subtitle", body[0])
        body = body[1:]
    curated = curated_blurbs(story_id)
    kept = []
    for i, p in enumerate(body):
        if i < 5 and any(p.startswith(c) for c in curated):
            out.drop("blurb", p)
        else:
            kept.append(p)
    return kept


def is_note_to_reader(par: str) -> bool:
    """A note about the text set apart from it: a word-count label, a paragraph opening "Note:",
    an aside in emphasis and parentheses, a "[Footnote 1: ...]" block or its anchor."""
    return bool(_WORD_COUNT_LINE.fullmatch(par) or _FINAL_LINE_LABEL.fullmatch(par) or re.match(r"^[*_(\s]*note\s*:", par, re.IGNORECASE)
                or (_WRAPPED_ASIDE.fullmatch(par) and len(words(par)) >= 3 and par.lstrip("*_").startswith("("))
                or _FOOTNOTE.fullmatch(par) or _FOOTNOTE_ANCHOR.fullmatch(par))


def _is_name_line(rest: str) -> bool:
    ws = words(rest)
    return 1 <= len(ws) <= 6 and all(w[:1].isupper() or w.lower() in _FUNCTION_WORDS for w in ws)


def _drop_epigraphs(body: list[str], out: PreparedText) -> list[str]:
    """An epigraph in the first three paragraphs: a quotation closed by its attribution
    ("...”--Lactantius."), or quotations then an attribution line in italics or after a closing
    quote ("—_De Béranger_."); a dialogue line opening with a dash ("—No.") is neither."""
    for i in range(min(len(body), 3)):
        p = body[i]
        m = _QUOTED_ATTRIBUTED.search(p)
        if m and len(words(p)) <= 2 * BLURB_MAX_WORDS and _is_name_line(re.sub(r"^\W+", "", m.group(0))):
            for q in body[:i + 1]:
                out.drop("epigraph", q)
            return body[i + 1:]
        italic = "_" in p or "*" in p
        after_quote = i > 0 and re.search(r"[\"”»'’][_*]*\s*$", body[i - 1])
        # a bare attribution ("Hindu Proverb.") only after paragraphs that are all quotations
        bare = i > 0 and all(re.match(r"[\"“«'‘]", q) and re.search(r"[\"”»'’][.]?$", q) for q in body[:i])
        if (i > 0 and (_ATTRIBUTION.fullmatch(p) or bare) and _is_name_line(p) and (italic or after_quote)
                and all(len(words(q)) <= 2 * BLURB_MAX_WORDS for q in body[:i])):
            for q in body[:i + 1]:
                out.drop("epigraph", q)
            return body[i + 1:]
    return body


def _drop_back_notes(paras: list[str], out: PreparedText) -> list[str]:
    """Translator's or editor's notes set after the story: a "Notes:" line followed only by
    numbered notes ("1. One hundred kopeks make a rouble.") and footnote blocks."""
    for i in range(len(paras) - 1, max(-1, len(paras) - 40), -1):
        if _NOTES_HEAD.fullmatch(paras[i]):
            tail = paras[i + 1:]
            if tail and all(_NUMBERED_NOTE.match(q) or _FOOTNOTE.fullmatch(q) for q in tail):
                for q in paras[i:]:
                    out.drop("translator_note", q)
                return paras[:i]
    return paras


def _drop_asterisk_notes(body: list[str], out: PreparedText) -> list[str]:
    """A paragraph opening "* " after one holding its anchor ("other men * have thought"): note
    and anchor dropped. Without an anchor above it a "* " line stays (a list item, a break)."""
    kept: list[str] = []
    for p in body:
        # the anchors are looked for only above a note: looked for above every paragraph, this
        # loop was quadratic in a story's paragraphs (half of the preparation's time)
        anchored = [j for j, q in enumerate(kept) if _ASTERISK_ANCHOR.search(q)] if _ASTERISK_NOTE.match(p) else []
        if anchored:
            out.drop("footnote", p)
            j, before = anchored[-1], kept[anchored[-1]]
            kept[j] = _ASTERISK_ANCHOR.sub("", before)
            out.removed_chars["footnote"] += len(before) - len(kept[j])
            continue
        kept.append(p)
    return kept


def _strip_meta_frame(body: list[str], out: PreparedText) -> list[str]:
    """The reply's framing: runs of meta paragraphs at either end only ("Let me know if ...").
    Inside the text they stay: removing them would clean LLM stories more than human ones."""
    start, end = 0, len(body)
    while start < end and (is_meta_note(body[start]) or is_note_to_reader(body[start])):
        start += 1
    while end > start and (is_meta_note(body[end - 1]) or is_note_to_reader(body[end - 1])):
        end -= 1
    for p in body[:start] + body[end:]:
        out.drop("meta_note", p)
    return body[start:end]


def _normalise_formatting(body: list[str], title: str, out: PreparedText, *, normal_form: bool = False,
                          section_break: str = "marker", emphasis: str = "strip") -> list[str]:
    """Section markers -> one neutral break (``section_break="marker"``) or none; running heads,
    meta notes and markdown markers dropped. With ``normal_form`` only notes to the reader are
    dropped inside the text, and the paragraphs are put in the one typographic form."""
    if section_break not in SECTION_BREAKS:
        raise ValueError(f"unknown section_break {section_break!r}; choose one of {SECTION_BREAKS}")
    kept: list[str] = []
    starts: set[int] = set()
    for p in body:
        if classify(p, title, "") == "title":
            out.drop("heading", p)
            continue
        if (is_note_to_reader(p) if normal_form else is_meta_note(p)):
            out.drop("footnote" if _FOOTNOTE.fullmatch(p) or _FOOTNOTE_ANCHOR.fullmatch(p) else "meta_note", p)
            continue
        if is_section_marker(p, headings_by_form=normal_form):
            if section_break == "marker":
                out.removed_chars["section_marker"] += max(0, len(p) - len(SECTION_BREAK))
                out.dropped.append(("section_marker", p))
                if kept and kept[-1] != SECTION_BREAK:
                    kept.append(SECTION_BREAK)
            else:
                out.drop("section_marker", p)
                starts.add(len(kept))
            continue
        label = _LABEL.match(p)
        if label:
            out.removed_chars["meta_note"] += label.end()
            p = p[label.end():]
        if normal_form:
            plain = _MD_HEADING.sub("", p)
        else:
            plain, previous = p, None
            while plain != previous:
                previous = plain
                for pattern in typography._EMPHASIS:   # the normal form's patterns, markers only
                    plain = pattern.sub(r"\1", plain)
            plain = _MD_HEADING.sub("", plain)
        out.removed_chars["markdown"] += len(p) - len(plain)
        if kept and kept[-1] == SECTION_BREAK:
            starts.add(len(kept))
        kept.append(plain)
    while kept and kept[-1] == SECTION_BREAK:
        kept.pop()
    if not normal_form:
        return kept
    typeset = typography.normal_form(kept, starts, emphasis_mode=emphasis)
    out.typography.update(typeset.changes)
    out.emphasis_words += typeset.emphasis_words
    out.removed_chars["markdown"] += typeset.marker_chars
    return typeset.paragraphs


def prepare_text(text: str, title: str, author: str, *, story_id: str | None = None,
                 mask_title_in_body: bool = False, mask_single_word_titles: bool = False,
                 normal_form: bool = True, section_break: str = "none",
                 emphasis: str = "strip") -> PreparedText:
    """The content-limit text of a story, with what each rule removed (module docstring).
    ``normal_form=False, section_break="marker", mask_title_in_body=True`` is the sage-v4
    preparation that notebook 01's surface-cue audit compares."""
    out = PreparedText(text="")
    paras = split_paragraphs(text)
    if normal_form:
        paras = _drop_back_notes(paras, out)
    body = _strip_front_back(paras, title, author, story_id, out)
    if normal_form:
        body = _drop_asterisk_notes(_drop_epigraphs(_strip_meta_frame(body, out), out), out)
    body = _normalise_formatting(body, title, out, normal_form=normal_form, section_break=section_break,
                                 emphasis=emphasis)
    joined = "\n\n".join(body)
    apat = author_pattern(author)
    if apat:
        joined, out.n_author_masked = apat.subn(MASK, joined)
    if mask_title_in_body:
        for part in title_parts(title):
            if is_multiword(part) or (mask_single_word_titles and len(_norm(part)) >= 3):
                joined, n = part_pattern(part).subn(MASK, joined)
                out.n_title_masked += n
    out.text = joined
    return out
