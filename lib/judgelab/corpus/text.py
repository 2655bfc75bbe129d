"""Cleaning story texts: Project Gutenberg boilerplate, Unicode, whitespace, paragraphs, words.

Why NFKC: typographic ligatures and compatibility forms (ﬁ, full-width letters) would otherwise
count as distinct words; curly quotes and dashes are kept, they are not compatibility forms.
"""
from __future__ import annotations

import re
import unicodedata

# Project Gutenberg's start/end markers have varied over the decades; these cover the
# "*** START OF THIS/THE PROJECT GUTENBERG EBOOK ..." family and the older "*END*THE SMALL PRINT".
_PG_START = re.compile(
    r"^\s*\*{3}\s*START OF (?:THIS|THE) PROJECT GUTENBERG E-?BOOK.*?\*{3}\s*$"
    r"|^\s*\*END\*THE SMALL PRINT.*$",
    re.IGNORECASE | re.MULTILINE,
)
_PG_END = re.compile(
    r"^\s*\*{3}\s*END OF (?:THIS|THE) PROJECT GUTENBERG E-?BOOK.*$"
    r"|^\s*End of (?:the |this )?Project Gutenberg.*$",
    re.IGNORECASE | re.MULTILINE,
)
_WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*", re.UNICODE)


def strip_gutenberg(text: str) -> str:
    """Drop everything up to the Gutenberg START marker and from the END marker on (licence
    included); a text without markers (the mirrored excerpts) is returned unchanged."""
    start = _PG_START.search(text)
    if start:
        text = text[start.end():]
    end = _PG_END.search(text)
    if end:
        text = text[: end.start()]
    return text


def normalise(text: str) -> str:
    """NFKC-normalise, unify line endings, drop control characters; lines inside a paragraph
    joined (hard wraps are not sentence breaks), paragraphs separated by one blank line."""
    text = unicodedata.normalize("NFKC", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\ufeff", "")
    text = "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch)[0] != "C")
    paragraphs = []
    for block in re.split(r"\n\s*\n", text):
        line = re.sub(r"\s+", " ", block).strip()
        if line:
            paragraphs.append(line)
    return "\n\n".join(paragraphs)


def clean_story(raw: str) -> str:
    """Gutenberg boilerplate removed, then normalised (see :func:`normalise`)."""
    return normalise(strip_gutenberg(raw))


def paragraphs(text: str) -> list[str]:
    """The paragraphs of a cleaned text."""
    return [p for p in text.split("\n\n") if p.strip()]


def count_words(text: str) -> int:
    """Words as runs of letters/digits, with internal apostrophes and hyphens ("don't", "half-sentient")."""
    return len(_WORD.findall(text))


def decode_bytes(data: bytes, where: str) -> str:
    """Decode UTF-8 (BOM allowed); undecodable bytes are an error naming the file and byte offset."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{where}: bytes at offset {exc.start} are not valid UTF-8 ({exc.reason}); "
            "re-save the file as UTF-8 or re-acquire it with `make data`"
        ) from exc
