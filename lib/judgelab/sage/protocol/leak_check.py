"""An independent check that a content-limit text does not name its work or betray its origin.

Written apart from the masking code (:mod:`judgelab.sage.protocol.text_prep`) on purpose: a check
that reused the masking patterns could only find what the masking already removes. Here the text
is normalised its own way (Unicode NFKD, accents dropped, lower case, words only) and searched as
a word sequence, so punctuation, line breaks or typography between words do not hide a match.

What counts as a leak (each a row of :func:`find_leaks`): a ``title part`` of two or more content
words anywhere (a one-word title names an ordinary thing the story is about: checked as a heading
only), a ``title line``, the ``author name``, a ``surname`` used by no other story of the corpus
("Maupassant", not "London" or "Crane"), ``markdown`` markers (only LLM stories carry them), a
``chapter marker`` heading, and a ``meta note`` to the reader (a generation's own degenerate words
inside the story are its text and are not flagged).
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Iterable

STOPWORDS = frozenset(
    "a an the of and or in on at to for from by with la le les de du des der die das el il lo "
    "un une".split()
)
_MARKDOWN = re.compile(r"(^|\n)\s{0,3}#{1,6}\s|\*\*[^*\n]+\*\*|(?<![\w*])\*[^*\s][^*\n]*?\*(?![\w*])|__[^_\n]+__")
_CHAPTER = re.compile(r"^\W*(chapter\s+(\d+|[ivxlc]+|[a-z]+)\b|epilogue\b|prologue\b|end of chapter\b)", re.I)
# Notes to the reader set apart from the text (any category): a word-count line, a paragraph
# opening "Note:", a "Final line:" label, a "Let me know if you'd like ..." offer, a footnote
# block. Inside a story, a generation's own words ("Some potential or1000-word limit.", or a
# character's "Let me know if you need any help studying!" in Art or Artifice's "List") are its
# text and are not flagged: only what the preparation's rules call an artefact is.
_META = re.compile(
    r"^\W*word\s*count\W*[\d,]*\W*$|^\W*note\s*:|^[\W_]*let me know if you(?:'d| would) like\b|"
    r"^\W*(the\s+)?final line\s*:?\W*$|"
    r"^\[footnote\b",
    re.I | re.M,
)


@dataclass(frozen=True)
class Leak:
    """One leak: its kind, what matched, and where (character offset of the paragraph)."""

    kind: str
    match: str
    where: int


def fold(text: str) -> str:
    """Lower case, accents dropped (NFKD), curly quotes straightened."""
    text = unicodedata.normalize("NFKD", text or "")
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return text.replace("’", "'").replace("‘", "'").lower()


def word_seq(text: str) -> list[str]:
    """The text as a list of words (letters and digits; apostrophes kept inside words)."""
    return re.findall(r"[a-z0-9]+(?:'[a-z]+)?", fold(text))


def title_parts(title: str) -> list[list[str]]:
    """The parts of a title as word lists: "A (B)" -> [A, B]; "A; or, B" -> [A, B]; a leading
    article dropped from each part."""
    raw = re.split(r"[()\[\]]|;\s*or,?|:\s", title or "")
    parts = []
    for piece in raw:
        words = word_seq(piece)
        while words and words[0] in ("the", "a", "an", "la", "le", "les", "der", "die", "das"):
            words = words[1:]
        if words:
            parts.append(words)
    return parts


def content_words(words: Iterable[str]) -> list[str]:
    return [w for w in words if w not in STOPWORDS]


def _contains(hay: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return n > 0 and any(hay[i:i + n] == needle for i in range(len(hay) - n + 1))


def author_tokens(author: str) -> list[str]:
    """The author's name as words, titles and suffixes dropped ("Sir", "Jr.")."""
    return [w for w in word_seq(author) if w not in ("sir", "jr", "sr", "dr", "mr", "mrs", "phd")]


def distinctive_surnames(authors_texts: Iterable[tuple[str, str]]) -> set[str]:
    """Surnames (last name word of an author with two or more name words) that appear in no other
    author's text: the set :func:`find_leaks` checks alone. ``authors_texts``: (author, text)."""
    pairs = list(authors_texts)
    vocab_by_author: dict[str, set[str]] = {}
    for author, text in pairs:
        vocab_by_author.setdefault(author, set()).update(word_seq(text))
    out = set()
    for author in vocab_by_author:
        tokens = author_tokens(author)
        if len(tokens) < 2 or len(tokens[-1]) < 3:
            continue
        surname = tokens[-1]
        if not any(surname in vocab for other, vocab in vocab_by_author.items() if other != author):
            out.add(surname)
    return out


def find_leaks(text: str, title: str, author: str, *, surnames: set[str] | frozenset = frozenset(),
               check_title_in_body: bool = True) -> list[Leak]:
    """Every leak of ``text`` (see the module docstring); an empty list means clean."""
    leaks: list[Leak] = []
    parts = title_parts(title)
    name = author_tokens(author)
    surname = name[-1] if len(name) >= 2 else None
    offset = 0
    for para in re.split(r"\n\s*\n", text or ""):
        words = word_seq(para)
        bare = words[1:] if words[:1] and words[0] in ("the", "a", "an", "la", "le", "les") else words
        for part in parts:
            if words == part or bare == part:
                leaks.append(Leak("title line", para.strip()[:80], offset))
            elif check_title_in_body and len(content_words(part)) >= 2 and _contains(words, part):
                leaks.append(Leak("title part", " ".join(part), offset))
        if len(name) >= 2 and _contains(words, name):
            leaks.append(Leak("author name", " ".join(name), offset))
        if surname and surname in surnames and surname in words:
            leaks.append(Leak("surname", surname, offset))
        if _MARKDOWN.search(para):
            leaks.append(Leak("markdown", _MARKDOWN.search(para).group(0).strip()[:40], offset))
        if _CHAPTER.match(para.strip()) and len(words) <= 15:
            leaks.append(Leak("chapter marker", para.strip()[:60], offset))
        if _META.search(para):
            leaks.append(Leak("meta note", _META.search(para).group(0)[:40], offset))
        offset += len(para) + 2
    return leaks
