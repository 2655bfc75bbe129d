"""One segmentation of a story shared by the rule-based layers L1–L3, so that "a sentence" or "a
word" means the same in every metric and a story is segmented and tagged once:

- text: the corpus normalisation, then typographic quotes as ASCII (the taggers' and sentiment
  lexicons' entries spell "don't" with an ASCII apostrophe);
- paragraphs, sentences and tokens: ``syntok`` (F. Leitner's rule-based segmenter);
- Penn Treebank tags: the Brill-style tagger of Pattern as vendored in TextBlob (De Smedt &
  Daelemans, JMLR 13, 2012; Brill, ANLP 1992), its data inside the wheel, with the contextual rules
  TextBlob's ``PatternTagger`` skips (:class:`IndexedContext`). spaCy's model is not on the package
  index and NLTK's taggers need ``nltk.download`` (the internet).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

import syntok.segmenter as _syntok

from judgelab.corpus.text import normalise as _normalise_corpus

_QUOTES = str.maketrans({
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u00ab": '"', "\u00bb": '"',
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u02bc": "'",
})
_WORD = re.compile(r"^[^\W\d_]+(?:['\-][^\W\d_]+)*$")


def normalise(text: str) -> str:
    """The corpus normalisation (NFKC, whitespace, paragraphs) plus ASCII quotes and apostrophes."""
    return _normalise_corpus(text).translate(_QUOTES)


def is_word(token: str) -> bool:
    """A token made of letters, with internal apostrophes or hyphens allowed ("don't", "half-sentient")."""
    return _WORD.match(token) is not None


# Pattern's contextual-rule conditions, keyed by command; t is the token list padded with three
# ("STAART", "STAART") delimiters on each side, i the current position (textblob._text.Context.apply).
_CONTEXT_TESTS = {
    "prevtag": lambda t, i, x, y: x == t[i - 1][1],
    "nexttag": lambda t, i, x, y: x == t[i + 1][1],
    "prev2tag": lambda t, i, x, y: x == t[i - 2][1],
    "next2tag": lambda t, i, x, y: x == t[i + 2][1],
    "prev1or2tag": lambda t, i, x, y: x in (t[i - 1][1], t[i - 2][1]),
    "next1or2tag": lambda t, i, x, y: x in (t[i + 1][1], t[i + 2][1]),
    "prev1or2or3tag": lambda t, i, x, y: x in (t[i - 1][1], t[i - 2][1], t[i - 3][1]),
    "next1or2or3tag": lambda t, i, x, y: x in (t[i + 1][1], t[i + 2][1], t[i + 3][1]),
    "surroundtag": lambda t, i, x, y: x == t[i - 1][1] and y == t[i + 1][1],
    "curwd": lambda t, i, x, y: x == t[i][0],
    "prevwd": lambda t, i, x, y: x == t[i - 1][0],
    "nextwd": lambda t, i, x, y: x == t[i + 1][0],
    "prev1or2wd": lambda t, i, x, y: x in (t[i - 1][0], t[i - 2][0]),
    "next1or2wd": lambda t, i, x, y: x in (t[i + 1][0], t[i + 2][0]),
    "prevwdtag": lambda t, i, x, y: x == t[i - 1][0] and y == t[i - 1][1],
    "nextwdtag": lambda t, i, x, y: x == t[i + 1][0] and y == t[i + 1][1],
    "wdprevtag": lambda t, i, x, y: x == t[i - 1][1] and y == t[i][0],
    "wdnexttag": lambda t, i, x, y: x == t[i][0] and y == t[i + 1][1],
    "wdand2aft": lambda t, i, x, y: x == t[i][0] and y == t[i + 2][0],
    "wdand2tagbfr": lambda t, i, x, y: x == t[i - 2][1] and y == t[i][0],
    "wdand2tagaft": lambda t, i, x, y: x == t[i][0] and y == t[i + 2][1],
    "lbigram": lambda t, i, x, y: x == t[i - 1][0] and y == t[i][0],
    "rbigram": lambda t, i, x, y: x == t[i][0] and y == t[i + 1][0],
    "prevbigram": lambda t, i, x, y: x == t[i - 2][1] and y == t[i - 1][1],
    "nextbigram": lambda t, i, x, y: x == t[i + 1][1] and y == t[i + 2][1],
}


class IndexedContext:
    """Pattern's contextual rules (``textblob._text.Context``) indexed by the tag they rewrite:
    the same result as ``Context.apply`` (a test checks it), ~6x faster, since a rule can only fire
    on a token whose current tag is its first field or "*" (all matching rules fire in order)."""

    def __init__(self, rules):
        self.by_tag: dict[str, list[tuple[int, str, object, str, str]]] = {}
        for k, r in enumerate(rules):
            cmd = r[2].lower()
            test = _CONTEXT_TESTS.get(cmd)
            if test is None:  # an unknown command never fires in the original either
                continue
            self.by_tag.setdefault(r[0], []).append((k, r[1], test, r[3], r[4] if len(r) > 4 else ""))

    def apply(self, tokens):
        o = [("STAART", "STAART")] * 3
        t = o + tokens + o
        star = self.by_tag.get("*", [])
        for i in range(3, len(t) - 3):
            tag = t[i][1]
            rules = self.by_tag.get(tag, [])
            if star:
                rules = sorted(rules + star)
            for _, new_tag, test, x, y in rules:
                if test(t, i, x, y):
                    t[i] = [t[i][0], new_tag]
        return t[3:-3]


_TAGGER = None


def _tagger():
    """Pattern's Brill tagger from TextBlob, loaded once (lexicon and rule files are read lazily)."""
    global _TAGGER
    if _TAGGER is None:
        from textblob import _text
        from textblob.en import lexicon

        context = IndexedContext(list(lexicon.context))

        def tag(tokens: list[str]) -> list[str]:
            tagged = _text.find_tags(
                list(tokens), lexicon=lexicon, morphology=lexicon.morphology, context=context,
                entities=lexicon.entities, default=("NN", "NNP", "CD"), language="en",
            )
            return [t[1] for t in tagged]

        _TAGGER = tag
    return _TAGGER


def pos_tag(tokens: list[str]) -> list[str]:
    """Penn Treebank tags for one sentence's tokens (Pattern/TextBlob Brill tagger)."""
    return _tagger()(tokens) if tokens else []


@dataclass
class Segmented:
    """A story as sentences: ``sentences[i]``, ``tokens[i]``, ``tags[i]``, ``paragraph_of[i]``."""

    text: str
    sentences: list[str] = field(default_factory=list)
    tokens: list[list[str]] = field(default_factory=list)
    paragraph_of: list[int] = field(default_factory=list)

    @cached_property
    def tags(self) -> list[list[str]]:
        return [pos_tag(t) for t in self.tokens]

    @property
    def n_paragraphs(self) -> int:
        return (self.paragraph_of[-1] + 1) if self.paragraph_of else 0

    @cached_property
    def words(self) -> list[str]:
        """Lower-cased word tokens of the whole text (punctuation and numbers dropped)."""
        return [t.lower() for sent in self.tokens for t in sent if is_word(t)]

    @cached_property
    def sentence_words(self) -> list[list[str]]:
        """Lower-cased word tokens per sentence."""
        return [[t.lower() for t in sent if is_word(t)] for sent in self.tokens]

    def paragraph_texts(self) -> list[str]:
        """The text of each paragraph, rebuilt from its sentences."""
        out: list[list[str]] = [[] for _ in range(self.n_paragraphs)]
        for p, s in zip(self.paragraph_of, self.sentences):
            out[p].append(s)
        return [" ".join(x) for x in out]


def segment(text: str) -> Segmented:
    """Normalise ``text`` and split it into paragraphs, sentences and tokens; sentences without a
    word (a row of asterisks) are typography and would lower every per-sentence rate: dropped."""
    norm = normalise(text)
    seg = Segmented(text=norm)
    p_index = -1
    for paragraph in _syntok.analyze(norm):
        p_started = False
        for sentence in paragraph:
            toks = [t.value for t in sentence]
            if not any(is_word(t) for t in toks):
                continue
            if not p_started:
                p_index += 1
                p_started = True
            seg.sentences.append("".join(t.spacing + t.value for t in sentence).strip())
            seg.tokens.append(toks)
            seg.paragraph_of.append(p_index)
    return seg


def ensure_segmented(text_or_seg: str | Segmented) -> Segmented:
    """Accept raw text or an already segmented story (so a caller computing all layers segments once)."""
    return text_or_seg if isinstance(text_or_seg, Segmented) else segment(text_or_seg)
