"""One typographic normal form for every story, whatever its category, so that no transcription mark tells the judge which category a story is.

Human stories come from Gutenberg transcriptions (``--``, ``_x_``, "IT was said" book capitals);
LLM stories come as markdown (``*x*``, em-dashes, curly quotes). Left as they are, these marks
tell a judge which stories are machine-written without a word of the prose being read.
:func:`normal_form` maps them to one form for every category; the words are not touched:

- **dashes**: ``--``, a spaced hyphen, an en dash used as a dash (not "1914–1918") and a spaced
  em dash become one unspaced em dash, the form both sources use most;
- **quotes**: curly quotes become straight ones (which cannot be mis-paired);
- **ellipses**: ``…``, ``. . .`` and runs of dots become ``...`` close to the word before it (the
  spaced form is Gutenberg's transcription: 18 of 80 human stories, no LLM story);
- **emphasis**: ``"strip"`` (the default) removes the markers and keeps the words, since markup
  depends on the transcription and source, not the author (the cost is L5's: an italicised inner
  thought loses its italics in every category); ``"underscore"`` keeps every emphasis as ``_x_``,
  the sensitivity setting that keeps the cue (LLM stories carry ~25 times more of it);
- **book capitals**: a capitals first word of the text or a section becomes capitalised ("IT
  was" -> "It was") unless the text uses it in capitals elsewhere (an acronym);
- **footnote markers**: "[1]" after a word is removed.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

EMPHASIS_MODES = ("strip", "underscore")

_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "«": '"', "»": '"', "‟": '"', "″": '"',
                         "‘": "'", "’": "'", "‚": "'", "‛": "'", "′": "'"})
_ELLIPSIS = re.compile(r"(?:(?<=\S)[ \t]+)?(?:…|\.(?:\s?\.){2,})")
_HYPHENS = re.compile(r"-{2,}")
_SPACED_HYPHEN = re.compile(r"(?<=\S) - (?=\S)")
_EN_DASH = re.compile(r"(?<!\d)\s*–\s*|\s*–\s*(?!\d)")
_SPACED_EM = re.compile(r"[ \t]*—[ \t]*")
_FOOTNOTE_REF = re.compile(r"(?<=[^\W\d_]|[.,;:!?\"'])\[\d{1,3}\]")
# Innermost pairs first (no marker inside), repeated until nothing changes, so that nested
# emphasis ("*He said, *now*.*") loses every marker.
_EMPHASIS = (
    re.compile(r"\*\*([^*]+?)\*\*"),
    re.compile(r"__([^_]+?)__"),
    re.compile(r"(?<![\w*])\*(?!\s)([^*]+?)(?<!\s)\*(?![\w])"),
    re.compile(r"(?<![\w_])_(?!\s)([^_]+?)(?<!\s)_(?![\w])"),
)
# an underscore left unpaired at a word's edge ("_a brute beast _—") is a transcriber's italic
# mark too; one inside a word ("snake_case") is not
_STRAY_UNDERSCORE = re.compile(r"(?<![^\W_])_+|_+(?![^\W_])")
# an unpaired asterisk at a word's edge ("*Dante, 19, hunched", an italic never closed) likewise
_STRAY_ASTERISK = re.compile(r"(?<![\w*])\*+(?=\w)|(?<=\w)\*+(?![\w*])")
_WORDS = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")   # as corpus.text.count_words counts them
_BOOK_CAPS = re.compile(r"^([\"'“‘(]*)([A-Z][A-Z'’]+)(?=\s+[a-z])")


@dataclass
class Typeset:
    """A paragraph list in the normal form, with how many marks each rule changed."""

    paragraphs: list[str]
    changes: Counter = field(default_factory=Counter)
    #: words inside emphasis markers (stripped or re-marked), the "emphasis words" of the preparation report
    emphasis_words: int = 0
    #: characters of emphasis markers removed
    marker_chars: int = 0


def _count(pattern: re.Pattern, text: str) -> int:
    return len(pattern.findall(text))


def dashes(text: str) -> str:
    """Every dash used as a dash as one unspaced em dash (module docstring)."""
    text = _HYPHENS.sub("—", text)
    text = _SPACED_HYPHEN.sub("—", text)
    text = _EN_DASH.sub("—", text)
    return _SPACED_EM.sub("—", text)


def quotes(text: str) -> str:
    """Curly and angle quotes as straight quotes."""
    return text.translate(_QUOTES)


def ellipses(text: str) -> str:
    return _ELLIPSIS.sub("...", text)


def emphasis(text: str, mode: str = "strip") -> tuple[str, int]:
    """Emphasis markers removed (``strip``) or rewritten as ``_x_`` (``underscore``), and the
    number of words that were marked."""
    if mode not in EMPHASIS_MODES:
        raise ValueError(f"unknown emphasis mode {mode!r}; choose one of {EMPHASIS_MODES}")
    marked = 0
    plain, previous = text, None
    while plain != previous:
        previous = plain
        for pattern in _EMPHASIS:
            marked += sum(len(_WORDS.findall(m.group(1))) for m in pattern.finditer(plain))
            plain = pattern.sub(r"\1", plain)
    if mode == "strip":
        plain = _STRAY_ASTERISK.sub("", _STRAY_UNDERSCORE.sub("", plain))
    if mode == "underscore" and marked:
        # re-mark the same spans in one form: run the patterns again on the original, innermost
        # spans rewritten as _x_ (nesting collapses to one level)
        out, previous = text, None
        while out != previous:
            previous = out
            for pattern in _EMPHASIS:
                out = pattern.sub(lambda m: "\x00" + m.group(1).replace("\x00", "") + "\x01", out)
        plain = out.replace("\x00", "_").replace("\x01", "_")
    return plain, marked


def book_capitals(par: str, elsewhere: set[str] = frozenset()) -> str:
    """"IT was said" -> "It was said": the first word in capitals, before a lower-case word,
    capitalised, unless it is in ``elsewhere`` (capitals words the text uses again: acronyms)."""
    m = _BOOK_CAPS.match(par)
    if not m or m.group(2) in elsewhere or len(m.group(2).strip("'’")) < 2:
        return par
    word = m.group(2)
    return par[:m.start(2)] + word[0] + word[1:].lower() + par[m.end(2):]


def caps_words_elsewhere(paragraphs: list[str]) -> set[str]:
    """Capitals words (2+ letters) the text uses other than as a paragraph's first word."""
    out: set[str] = set()
    for p in paragraphs:
        words = p.split()
        out.update(w.strip("\"'(),.;:!?") for w in words[1:] if re.fullmatch(r"[\"'(]*[A-Z]{2,}[),.;:!?'\"]*", w))
    return out


def normal_form(paragraphs: list[str], section_starts: set[int] = frozenset(), *,
                emphasis_mode: str = "strip") -> Typeset:
    """The paragraphs in the one typographic form (module docstring). ``section_starts``: the
    indices of the paragraphs that open a section (the first paragraph always does)."""
    out = Typeset(paragraphs=[])
    elsewhere = caps_words_elsewhere(paragraphs)
    for i, p in enumerate(paragraphs):
        q = p
        n_refs = _count(_FOOTNOTE_REF, q)
        q = _FOOTNOTE_REF.sub("", q)
        out.changes["footnote_ref"] += n_refs
        before = q
        q = quotes(q)
        out.changes["quotes"] += sum(a != b for a, b in zip(before, q))
        before = q
        q = ellipses(q)
        out.changes["ellipses"] += _count(_ELLIPSIS, before)
        before = q
        q, marked = emphasis(q, emphasis_mode)
        out.emphasis_words += marked
        out.marker_chars += len(before) - len(q)
        # dashes after emphasis: a stripped mark can leave a space beside a dash
        before = q
        q = dashes(q)
        out.changes["dashes"] += int(before != q) and (
            _count(_HYPHENS, before) + _count(_SPACED_HYPHEN, before) + before.count("–")
            + _count(re.compile(r"\s—|—\s"), before))
        if i == 0 or i in section_starts:
            capped = book_capitals(q, elsewhere)
            out.changes["book_capitals"] += int(capped != q)
            q = capped
        out.paragraphs.append(q)
    return out
