"""Can a classifier tell LLM from human stories by surface marks alone? If it can, the judge may
read the category off the page instead of judging the story (the even-handedness principle of
docs/design.md).

Two feature sets, measured on a text as it is sent to the judge:

- :data:`STYLE_FEATURES`, three surface statistics often said to mark LLM prose: em dashes per 1,000 words, mean
  paragraph length (words), share of paragraphs opening with a quotation mark. They are partly
  style (LLM paragraphs are short), which is the author's and stays: their result is reported,
  not removed.
- :data:`TYPO_FEATURES`, marks of transcription and of our own cleanup: double hyphens, en
  dashes, spaced em dashes, curly quotes, the ``…`` character, section-break markers, emphasis
  markers, the ``[withheld]`` mask, a book-style capitals opening, bracketed footnote marks. The
  typographic normal form (:mod:`judgelab.corpus.typography`) is meant to leave these at chance.

:func:`classify_cv` fits a scikit-learn logistic regression (standardised features, stratified
5-fold cross-validation, seeded) and reports, for LLM (1) against human (0): out-of-fold
accuracy with its Wilson 95% interval (unit: story; :func:`judgelab.stats.intervals.proportion_ci`),
the majority-class accuracy (chance), AUC with a percentile bootstrap 95% interval over stories
(out-of-fold scores resampled: :func:`judgelab.stats.resampling.weighted_auc`), and the
permutation p-value of the cross-validated AUC (``sklearn.model_selection.permutation_test_score``:
labels permuted, the whole CV redone each time; p = (1 + #perm >= observed) / (1 + n)).
:func:`audit_table` runs it per feature set and text version and adjusts the p-values within the
table (Holm by default, Bonferroni beside it; :func:`judgelab.stats.tests.adjust`).
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from judgelab.corpus.text import count_words
from judgelab.stats.intervals import proportion_ci
from judgelab.stats.resampling import percentile_interval, weighted_auc
from judgelab.stats.tests import adjust

STYLE_FEATURES = ("em_dash_per_1k", "mean_paragraph_words", "share_quote_openings")
TYPO_FEATURES = ("double_hyphen_per_1k", "en_dash_per_1k", "spaced_em_dash_per_1k", "curly_quote_share",
                 "ellipsis_char_per_1k", "section_break_per_1k", "emphasis_marker_per_1k", "mask_per_1k",
                 "book_capitals_opening", "bracket_mark_per_1k")
FEATURE_SETS = {"style (three surface statistics)": STYLE_FEATURES, "typographic": TYPO_FEATURES}
TABLE_COLUMNS = ["text", "features", "n_stories", "n_llm", "accuracy", "accuracy_ci_low", "accuracy_ci_high",
                 "chance_accuracy", "auc", "auc_ci_low", "auc_ci_high", "p_perm", "p_holm", "p_bonferroni",
                 "n_permutations", "unit", "ci_method", "mc_family"]

_QUOTE_OPEN = re.compile(r"^[\"“‘'«„]")
_SECTION = re.compile(r"^\s*(?:\*\s*){3,}$|^\s*[#*\-_=~·•/]{3,}\s*$", re.M)
_EMPH = re.compile(r"(?<![\w*])\*{1,2}(?=\S)|(?<=\S)\*{1,2}(?![\w*])|(?<![\w_])_{1,2}(?=\S)|(?<=\S)_{1,2}(?![\w_])")
_BOOK_CAPS = re.compile(r"^[\"'“‘(]*[A-Z]{2,}\s+[a-z]")


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", text or "") if p.strip()]


def surface_features(text: str) -> dict[str, float]:
    """Both feature sets of one text (rates per 1,000 words of :func:`count_words`)."""
    paras = _paragraphs(text)
    n_words = max(count_words(text), 1)
    per_k = 1000.0 / n_words
    curly = len(re.findall(r"[“”‘’]", text))
    straight = len(re.findall(r"[\"']", text))
    return {
        "em_dash_per_1k": text.count("—") * per_k,
        "mean_paragraph_words": float(np.mean([count_words(p) for p in paras])) if paras else 0.0,
        "share_quote_openings": float(np.mean([bool(_QUOTE_OPEN.match(p)) for p in paras])) if paras else 0.0,
        "double_hyphen_per_1k": len(re.findall(r"-{2,}", text)) * per_k,
        "en_dash_per_1k": len(re.findall(r"(?<!\d)–|–(?!\d)", text)) * per_k,
        "spaced_em_dash_per_1k": len(re.findall(r"[ \t]—|—[ \t]", text)) * per_k,
        "curly_quote_share": curly / (curly + straight) if curly + straight else 0.0,
        "ellipsis_char_per_1k": text.count("…") * per_k,
        "section_break_per_1k": len(_SECTION.findall(text)) * per_k,
        "emphasis_marker_per_1k": len(_EMPH.findall(text)) * per_k,
        "mask_per_1k": text.count("[withheld]") * per_k,
        "book_capitals_opening": float(any(_BOOK_CAPS.match(p) for p in paras[:1])),
        "bracket_mark_per_1k": len(re.findall(r"\[\d{1,3}\]|\[Footnote", text)) * per_k,
    }


def feature_table(texts: pd.DataFrame) -> pd.DataFrame:
    """One row per story: ``story_id``, ``category``, ``is_llm`` and every feature of
    :func:`surface_features`. ``texts`` needs columns story_id, category, text."""
    missing = [c for c in ("story_id", "category", "text") if c not in texts]
    if missing:
        raise ValueError(f"feature_table: the texts table lacks column(s) {missing}")
    rows = [{"story_id": r.story_id, "category": r.category, "is_llm": int(r.category == "llm"),
             **surface_features(r.text)} for r in texts.itertuples(index=False)]
    return pd.DataFrame(rows)


def _pipeline():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    # liblinear: single-threaded and fast on 100 x 10 (no BLAS threads fighting on a shared machine)
    return make_pipeline(StandardScaler(), LogisticRegression(solver="liblinear", max_iter=1000))


def classify_cv(features: pd.DataFrame, columns, *, n_permutations: int = 999, seed: int = 0,
                n_boot: int = 2000, folds: int = 5) -> dict:
    """Cross-validated LLM-vs-human logistic regression on ``columns`` (module docstring)."""
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold, cross_val_predict, permutation_test_score

    x = features[list(columns)].to_numpy(dtype=float)
    y = features["is_llm"].to_numpy(dtype=int)
    if len(set(y)) < 2 or min(np.bincount(y)) < folds:
        raise ValueError(f"classify_cv: needs at least {folds} stories of each class, got {np.bincount(y, minlength=2).tolist()}")
    cv = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    # a constant column (every story the same: the normal form removed the mark) carries no
    # signal; StandardScaler maps it to 0, so it is kept and does not break the fit
    proba = cross_val_predict(_pipeline(), x, y, cv=cv, method="predict_proba")[:, 1]
    pred = (proba >= 0.5).astype(int)
    correct = int((pred == y).sum())
    _, acc_lo, acc_hi = proportion_ci(correct, len(y))
    auc = float(roc_auc_score(y, proba))
    # stories drawn with replacement, as weights (times drawn) for the floor's vectorised AUC; a
    # resample holding one class only has no AUC (NaN) and is left out of the percentiles
    rng = np.random.default_rng(seed)
    w = np.stack([np.bincount(rng.integers(0, len(y), len(y)), minlength=len(y)) for _ in range(n_boot)])
    pos = y == 1
    boot = percentile_interval(weighted_auc(proba[pos], w[:, pos], proba[~pos], w[:, ~pos]))
    p_perm = np.nan
    if n_permutations > 0:
        _, _, p_perm = permutation_test_score(_pipeline(), x, y, cv=cv, scoring="roc_auc",
                                              n_permutations=n_permutations, random_state=seed)
    return {"n_stories": len(y), "n_llm": int(y.sum()), "accuracy": correct / len(y),
            "accuracy_ci_low": acc_lo, "accuracy_ci_high": acc_hi,
            "chance_accuracy": max(y.mean(), 1 - y.mean()), "auc": auc,
            "auc_ci_low": boot.low, "auc_ci_high": boot.high,
            "p_perm": float(p_perm), "n_permutations": n_permutations}


def audit_table(versions: dict[str, pd.DataFrame], *, n_permutations: int = 999, seed: int = 0) -> pd.DataFrame:
    """:func:`classify_cv` for every text version (``{"before": texts, "after": texts}``) and
    feature set of :data:`FEATURE_SETS`, in :data:`TABLE_COLUMNS`; p-values adjusted over the
    table's rows (``mc_family``)."""
    rows = []
    for name, texts in versions.items():
        feats = feature_table(texts)
        for label, cols in FEATURE_SETS.items():
            rows.append({"text": name, "features": label, **classify_cv(feats, cols, n_permutations=n_permutations, seed=seed)})
    out = pd.DataFrame(rows)
    # the family: the rows with a permutation p (none without permutations)
    out["p_holm"], out["p_bonferroni"] = adjust(out["p_perm"], method="holm"), adjust(out["p_perm"], method="bonferroni")
    out["unit"] = "story"
    out["ci_method"] = "accuracy: Wilson; AUC: percentile bootstrap over stories of out-of-fold scores (2,000)"
    out["mc_family"] = f"the {len(out)} rows of this table (text version x feature set)"
    return out[TABLE_COLUMNS]


def feature_means(versions: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Mean of every feature per text version and category (what the classifier sees)."""
    frames = []
    for name, texts in versions.items():
        f = feature_table(texts)
        m = f.groupby("category")[list(STYLE_FEATURES + TYPO_FEATURES)].mean()
        m.insert(0, "text", name)
        frames.append(m.reset_index())
    return pd.concat(frames, ignore_index=True)
