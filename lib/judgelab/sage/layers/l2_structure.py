"""SAGE Layer 2, narrative structure: entity coherence, emotional arc, event-sequence patterns.

The SAGE paper (Table 1) names "entity coherence, emotional arc trajectories, event sequence
patterns" for this layer but no metrics; these are standard operationalisations of each
(``l2_*`` columns; undefined values are NaN). ``vaderSentiment`` scores sentences, ``scipy.fft``
smooths the arc; the entity grid, tense and dialogue counts are hand-written: no maintained
package computes them offline.
"""
from __future__ import annotations

import math
import re
from functools import lru_cache

import numpy as np
import pandas as pd
from scipy.fft import dct, idct

from judgelab.sage.layers.segment import Segmented, ensure_segmented, is_word

# --- entity grid ----------------------------------------------------------------------------------

# Pronouns are folded into one entity per person/number/gender, the usual stand-in for
# coreference when no resolver is available (a "he" column tracks the male protagonist(s)).
PRONOUN_ENTITIES = {
    **dict.fromkeys("i me my mine myself".split(), "PRON:i"),
    **dict.fromkeys("we us our ours ourselves".split(), "PRON:we"),
    **dict.fromkeys("he him his himself".split(), "PRON:he"),
    **dict.fromkeys("she her hers herself".split(), "PRON:she"),
    **dict.fromkeys("they them their theirs themselves".split(), "PRON:they"),
}


def entity_grid(text: str | Segmented, min_sentences: int = 2) -> pd.DataFrame:
    """The entity grid of Barzilay & Lapata (2008, Comput. Linguist. 34:1) reduced to presence
    (the roles S/O/X need a parser): one row per sentence, one column per proper name (NNP/NNPS)
    or pronoun class of ``PRONOUN_ENTITIES`` found in at least ``min_sentences`` sentences."""
    seg = ensure_segmented(text)
    rows: list[set[str]] = []
    for toks, tags in zip(seg.tokens, seg.tags):
        ents = set()
        for tok, tag in zip(toks, tags):
            low = tok.lower()
            if low in PRONOUN_ENTITIES:
                ents.add(PRONOUN_ENTITIES[low])
            elif tag in ("NNP", "NNPS") and is_word(tok) and tok != "I":
                ents.add(tok)
        rows.append(ents)
    counts: dict[str, int] = {}
    for ents in rows:
        for e in ents:
            counts[e] = counts.get(e, 0) + 1
    keep = sorted(e for e, c in counts.items() if c >= min_sentences)
    grid = pd.DataFrame([[e in ents for e in keep] for ents in rows], columns=keep, dtype=bool)
    grid.index.name = "sentence"
    return grid


def entity_coherence(text: str | Segmented) -> dict[str, float]:
    """Transition statistics of the entity grid between adjacent sentences (X present, - absent):

    - ``l2_grid_xx``, ``l2_grid_x_``, ``l2_grid__x``: P(X->X), P(X->-), P(-->X) (Barzilay &
      Lapata 2008);
    - ``l2_entity_continuity`` = P(X->X) / (P(X->X) + P(X->-)): the chance that an entity mentioned
      in one sentence is mentioned again in the next;
    - ``l2_entity_overlap`` = share of adjacent sentence pairs sharing at least one entity
      (Centering's "continue" condition without ranking; Grosz, Joshi & Weinstein 1995);
    - ``l2_entities_per_1k`` = recurring entities per 1,000 words (cast size, roughly).
    """
    seg = ensure_segmented(text)
    keys = ("l2_grid_xx", "l2_grid_x_", "l2_grid__x", "l2_entity_continuity", "l2_entity_overlap",
            "l2_entities_per_1k")
    grid = entity_grid(seg).to_numpy()
    if grid.shape[0] < 2:
        return {k: math.nan for k in keys}
    a, b = grid[:-1], grid[1:]
    n_words = len(seg.words)
    per_1k = 1000.0 * grid.shape[1] / n_words if n_words else math.nan
    if grid.shape[1] == 0:
        out = {k: math.nan for k in keys}
        out["l2_entity_overlap"] = 0.0
        out["l2_entities_per_1k"] = per_1k
        return out
    total = a.size
    xx, x_, _x = (a & b).sum() / total, (a & ~b).sum() / total, (~a & b).sum() / total
    return {
        "l2_grid_xx": float(xx),
        "l2_grid_x_": float(x_),
        "l2_grid__x": float(_x),
        "l2_entity_continuity": float(xx / (xx + x_)) if (xx + x_) > 0 else math.nan,
        "l2_entity_overlap": float((a & b).any(axis=1).mean()),
        "l2_entities_per_1k": per_1k,
    }


# --- emotional arc --------------------------------------------------------------------------------

ARC_POINTS = 100   # narrative time resampled to 100 points, as syuzhet's x_reverse_len
ARC_LOW_PASS = 5   # DCT coefficients kept, syuzhet's default low_pass_size (Jockers 2015)


@lru_cache(maxsize=1)
def _vader():
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer
    return SentimentIntensityAnalyzer()


def sentence_sentiment(text: str | Segmented) -> np.ndarray:
    """VADER compound score in [-1, 1] of every sentence, in narrative order.

    VADER (Hutto & Gilbert 2014, ICWSM): a valence lexicon with rules for negation, intensifiers,
    "but" and punctuation; compound = x / sqrt(x^2 + 15) for the summed valence x.
    """
    seg = ensure_segmented(text)
    sia = _vader()
    return np.array([sia.polarity_scores(s)["compound"] for s in seg.sentences], dtype=float)


def smooth_arc(values: np.ndarray, points: int = ARC_POINTS, low_pass: int = ARC_LOW_PASS) -> np.ndarray:
    """Low-pass DCT smoothing of a sentiment series as syuzhet's ``get_dct_transform`` (Jockers
    2015: keep the first ``low_pass`` DCT-II coefficients), interpolated from the sentence positions
    (i + 0.5)/n onto ``points`` steps of narrative time in [0, 1]."""
    values = np.asarray(values, dtype=float)
    n = values.size
    if n == 0:
        return np.full(points, np.nan)
    if n == 1:
        return np.full(points, values[0])
    coef = dct(values, type=2, norm="ortho")
    coef[low_pass:] = 0.0
    smooth = idct(coef, type=2, norm="ortho")
    x = (np.arange(n) + 0.5) / n
    return np.interp(np.linspace(0.0, 1.0, points), x, smooth)


def emotional_arc(text: str | Segmented, points: int = ARC_POINTS, low_pass: int = ARC_LOW_PASS) -> np.ndarray:
    """The smoothed emotional arc of a story: :func:`smooth_arc` of :func:`sentence_sentiment`."""
    return smooth_arc(sentence_sentiment(text), points=points, low_pass=low_pass)


def _turning_points(arc: np.ndarray, tol: float = 1e-9) -> int:
    """Number of local extrema: sign changes of the first difference, flat steps ignored."""
    d = np.diff(arc)
    s = np.sign(np.where(np.abs(d) < tol, 0.0, d))
    s = s[s != 0]
    return int(np.sum(s[1:] != s[:-1]))


def arc_features(text: str | Segmented) -> dict[str, float]:
    """Shape of the emotional arc (Reagan et al. 2016, EPJ Data Sci. 5:31; Jockers 2015, syuzhet).

    From the sentence scores s_i: ``l2_sentiment_mean``, ``l2_sentiment_sd`` (ddof=0),
    ``l2_negative_share`` (share with s_i < -0.05, VADER's own threshold) and
    ``l2_arc_volatility`` = mean |s_(i+1) - s_i|. From the smoothed arc a(t), t in [0, 1]:
    ``l2_arc_range`` = max a - min a, ``l2_arc_net_change`` = a(1) - a(0), ``l2_arc_min_pos`` and
    ``l2_arc_max_pos`` = t of the minimum and maximum (a "fall" ends low, a "rise" high), and
    ``l2_arc_turns`` = number of turning points (at most ``ARC_LOW_PASS - 1``).
    """
    s = sentence_sentiment(text)
    keys = ("l2_sentiment_mean", "l2_sentiment_sd", "l2_negative_share", "l2_arc_volatility", "l2_arc_range",
            "l2_arc_net_change", "l2_arc_min_pos", "l2_arc_max_pos", "l2_arc_turns")
    if s.size < 2:
        return {k: math.nan for k in keys}
    arc = smooth_arc(s)
    t = np.linspace(0.0, 1.0, arc.size)
    return {
        "l2_sentiment_mean": float(s.mean()),
        "l2_sentiment_sd": float(s.std()),
        "l2_negative_share": float((s < -0.05).mean()),
        "l2_arc_volatility": float(np.abs(np.diff(s)).mean()),
        "l2_arc_range": float(arc.max() - arc.min()),
        "l2_arc_net_change": float(arc[-1] - arc[0]),
        "l2_arc_min_pos": float(t[int(np.argmin(arc))]),
        "l2_arc_max_pos": float(t[int(np.argmax(arc))]),
        "l2_arc_turns": float(_turning_points(arc)),
    }


# --- event-sequence patterns ----------------------------------------------------------------------

PAST_TAGS = frozenset({"VBD"})
PRESENT_TAGS = frozenset({"VBZ", "VBP"})

# Temporal connectives that order events (Halliday & Hasan 1976, "Cohesion in English", ch. 5,
# temporal conjunction), single words and fixed phrases, matched case-insensitively.
TEMPORAL_CONNECTIVES = (
    "after", "afterwards", "afterward", "before", "then", "later", "meanwhile", "suddenly",
    "finally", "eventually", "soon", "when", "while", "until", "till", "once", "next",
    "immediately", "presently", "at last", "at once", "at length", "in the meantime",
    "the next day", "the next morning", "by the time",
)
_CONNECTIVE = re.compile(r"\b(?:" + "|".join(re.escape(c) for c in sorted(TEMPORAL_CONNECTIVES, key=len, reverse=True)) + r")\b",
                         re.IGNORECASE)
_SPAN_WORD = re.compile(r"[^\W\d_]+(?:['\-][^\W\d_]+)*")
_DOUBLE_QUOTE_SPAN = re.compile(r'"[^"]*(?:"|$)')
# Single-quote dialogue (British convention): opens after a space or line start before a letter,
# closes after a letter or punctuation before a space/punctuation/end, so that apostrophes inside
# words ("don't") do not close it.
_SINGLE_QUOTE_SPAN = re.compile(r"(?:(?<=\s)|^)'(?=[^\W\d_]).*?(?<=[\w.,!?;:\-])'(?=[\s.,!?;:\-]|$)")


def tense_pattern(text: str | Segmented) -> dict[str, float]:
    """Tense of the narration and its shifts: ``l2_past_share`` = VBD / (VBD + VBZ/VBP), and
    ``l2_tense_shift_rate``, the share of adjacent tensed sentences (by their majority tag) whose
    tense differs: dialogue, frame stories, historic present (Fleischman 1990)."""
    seg = ensure_segmented(text)
    past = present = 0
    tenses = []
    for tags in seg.tags:
        p = sum(t in PAST_TAGS for t in tags)
        q = sum(t in PRESENT_TAGS for t in tags)
        past, present = past + p, present + q
        if p != q:
            tenses.append("past" if p > q else "present")
    shifts = sum(a != b for a, b in zip(tenses, tenses[1:]))
    return {
        "l2_past_share": past / (past + present) if (past + present) else math.nan,
        "l2_tense_shift_rate": shifts / (len(tenses) - 1) if len(tenses) > 1 else math.nan,
    }


def dialogue_spans(paragraph: str, double: bool = True) -> list[str]:
    """The quoted stretches of one paragraph (double or single quotes); an unclosed double quote
    runs to the paragraph's end (a long speech closes only its last paragraph)."""
    return (_DOUBLE_QUOTE_SPAN if double else _SINGLE_QUOTE_SPAN).findall(paragraph)


def event_sequence(text: str | Segmented) -> dict[str, float]:
    """Tense pattern, ``TEMPORAL_CONNECTIVES`` per 1,000 words and the share of words inside
    quotation marks. Single quotes count only in stories without a double quote (which use single
    ones for apostrophes); dash-introduced dialogue ("—Good night, Gabriel") counts as narration.
    """
    seg = ensure_segmented(text)
    out = tense_pattern(seg)
    n_words = len(seg.words)
    if not n_words:
        out.update(l2_temporal_connectives_per_1k=math.nan, l2_dialogue_share=math.nan)
        return out
    paras = seg.paragraph_texts()
    connectives = sum(len(_CONNECTIVE.findall(p)) for p in paras)
    use_double = any('"' in p for p in paras)
    # Quoted and total words are counted with the same word pattern (not the tokenizer, which splits
    # "don't" into "do" + "n't"), so that the share is a ratio of like with like.
    total = sum(len(_SPAN_WORD.findall(p)) for p in paras)
    quoted = sum(len(_SPAN_WORD.findall(span)) for p in paras for span in dialogue_spans(p, use_double))
    out["l2_temporal_connectives_per_1k"] = 1000.0 * connectives / n_words
    out["l2_dialogue_share"] = quoted / total if total else math.nan
    return out


def l2_features(text: str | Segmented) -> dict[str, float]:
    """All Layer-2 features of one story (``l2_*`` columns)."""
    seg = ensure_segmented(text)
    out: dict[str, float] = {}
    for fn in (entity_coherence, arc_features, event_sequence):
        out.update(fn(seg))
    return out
