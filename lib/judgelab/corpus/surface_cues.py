"""Can a classifier tell LLM from human stories by the surface of the text as sent? If it can, the
judge may read the category off the page instead of judging the story (docs/design.md).

The four :data:`FEATURE_SETS` are chosen without reference to the typographic normal form, so the
audit can fail after it (the marks it deletes would be at chance by construction); the n-gram sets
keep the 2,000 most frequent over each text's first :data:`NGRAM_CHARS` characters, fitted without
labels. What remains after the normal form is partly the authors' prose style
(:data:`STYLE_FEATURES`): named, not removed.

:func:`classify_cv`: logistic regression, seeded stratified 5-fold CV, the story as the unit:
out-of-fold accuracy (Wilson interval) against the majority-class rate, AUC (percentile bootstrap
over stories) and the permutation p of the cross-validated AUC; :func:`audit_table` adjusts the
p-values over its rows (Holm, Bonferroni).
"""
from __future__ import annotations

import re
import unicodedata

import numpy as np
import pandas as pd

from judgelab.corpus.text import count_words, paragraphs
from judgelab.stats.intervals import proportion_ci
from judgelab.stats.resampling import percentile_interval, weighted_auc
from judgelab.stats.tests import adjust

SHAPE_FEATURES = ("paragraph_words_mean", "paragraph_words_median", "paragraph_words_sd", "sentence_words_mean",
                  "sentence_words_median", "sentence_words_sd", "sentences_per_paragraph", "share_one_sentence_paragraphs")
FEATURE_SETS = ("punctuation (every mark per 1,000 words)", "character 2-3-grams (tf-idf)",
                "paragraph and sentence shape", "shape only (letters and digits blanked; character 2-4-grams)")
#: named as the authors' prose style in :func:`feature_means` (kept, not normalised)
STYLE_FEATURES = ("paragraph_words_mean", "sentence_words_mean", "per_1k ;", "contractions_per_1k")
TABLE_COLUMNS = ["text", "features", "n_features", "n_stories", "n_llm", "accuracy", "accuracy_ci_low",
                 "accuracy_ci_high", "chance_accuracy", "auc", "auc_ci_low", "auc_ci_high", "p_perm", "p_holm",
                 "p_bonferroni", "n_permutations", "unit", "ci_method", "mc_family"]

#: ~1,700 words, more than the smoke and demo judges are sent; sklearn counts n-grams in Python (slow)
NGRAM_CHARS = 10_000

_MARK = re.compile(r"\.\.\.|…|[^\w\s]")
# a sentence ends at . ! ? (closing quotes or brackets after it) before a capital: "no..." and left is one
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]*[A-Z])")
_CONTRACTION = re.compile(r"[^\W\d_]+['’](?:t|re|ve|ll|m|d)\b", re.IGNORECASE)
_LETTER_OR_DIGIT = re.compile(r"[^\W_]")


def marks(text: str) -> list[str]:
    """The punctuation marks of a text in order (``...`` one mark; Unicode category P only)."""
    return [m for m in _MARK.findall(text or "") if len(m) > 1 or unicodedata.category(m).startswith("P")]


def shape_features(text: str) -> dict[str, float]:
    """Paragraph and sentence shape (:data:`SHAPE_FEATURES`), words as :func:`count_words` counts them."""
    paras = paragraphs(text)   # a sent text's paragraphs are joined by one blank line
    sentences = [[count_words(s) for s in _SENTENCE_END.split(p) if count_words(s)] for p in paras]
    pw = np.array([count_words(p) for p in paras] or [0], float)
    sw = np.array([n for ss in sentences for n in ss] or [0], float)
    per_para = np.array([len(ss) for ss in sentences] or [0], float)
    return {"paragraph_words_mean": pw.mean(), "paragraph_words_median": float(np.median(pw)), "paragraph_words_sd": pw.std(),
            "sentence_words_mean": sw.mean(), "sentence_words_median": float(np.median(sw)), "sentence_words_sd": sw.std(),
            "sentences_per_paragraph": per_para.mean(), "share_one_sentence_paragraphs": float(np.mean(per_para == 1))}


def punctuation_rates(texts) -> pd.DataFrame:
    """Per 1,000 words, every mark found in ``texts`` (columns ``per_1k <mark>``, one row per text)."""
    counts = pd.DataFrame([pd.Series(marks(t), dtype=object).value_counts() for t in texts]).fillna(0.0)
    counts = counts.reindex(columns=sorted(counts.columns), fill_value=0.0)
    words = np.array([max(count_words(t), 1) for t in texts], float)
    out = counts.div(words / 1000.0, axis=0).reset_index(drop=True)
    out.columns = [f"per_1k {c}" for c in out.columns]
    return out


def blank(text: str) -> str:
    """Every letter and digit as ``x``: the text's shape only."""
    return _LETTER_OR_DIGIT.sub("x", text)


def feature_matrices(texts) -> dict[str, tuple[object, list[str]]]:
    """Each set of :data:`FEATURE_SETS` for ``texts`` (a sequence of strings): matrix, column names."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    texts = list(texts)
    punct = punctuation_rates(texts)
    shape = pd.DataFrame([shape_features(t) for t in texts])
    out = {FEATURE_SETS[0]: (punct.to_numpy(float), list(punct.columns)),
           FEATURE_SETS[2]: (shape.to_numpy(float), list(shape.columns))}
    heads = [t[:NGRAM_CHARS] for t in texts]
    for name, ngrams, docs in ((FEATURE_SETS[1], (2, 3), heads), (FEATURE_SETS[3], (2, 4), [blank(t) for t in heads])):
        vec = TfidfVectorizer(analyzer="char", ngram_range=ngrams, lowercase=False, sublinear_tf=True,
                              min_df=2, max_features=2000, dtype=np.float32)
        out[name] = (vec.fit_transform(docs), list(vec.get_feature_names_out()))
    return out


def _pipeline(sparse: bool):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    # liblinear: single-threaded and fast at 100 stories (no BLAS threads fighting on a shared machine)
    # balanced: 20 LLM against 80 human stories, so that accuracy is not the majority rate by default
    model = LogisticRegression(solver="liblinear", max_iter=1000, class_weight="balanced")
    return model if sparse else make_pipeline(StandardScaler(), model)


def classify_cv(x, y, *, n_permutations: int = 999, seed: int = 0, n_boot: int = 2000, folds: int = 5) -> dict:
    """Cross-validated LLM (1) vs human (0) logistic regression on the feature matrix ``x``
    (module docstring); ``x`` may be sparse (tf-idf)."""
    from scipy import sparse
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    y = np.asarray(y, dtype=int)
    if len(set(y)) < 2 or min(np.bincount(y)) < folds:
        raise ValueError(f"classify_cv: needs at least {folds} stories of each class, got {np.bincount(y, minlength=2).tolist()}")
    is_sparse = sparse.issparse(x)
    x = x if is_sparse else np.asarray(x, dtype=float)
    cv = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    # a constant column (every story the same) carries no signal; StandardScaler maps it to 0
    proba = cross_val_predict(_pipeline(is_sparse), x, y, cv=cv, method="predict_proba")[:, 1]
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
    p_perm = permutation_p(x, y, n_permutations, seed, folds) if n_permutations > 0 else np.nan
    return {"n_features": x.shape[1], "n_stories": len(y), "n_llm": int(y.sum()), "accuracy": correct / len(y),
            "accuracy_ci_low": acc_lo, "accuracy_ci_high": acc_hi,
            "chance_accuracy": max(y.mean(), 1 - y.mean()), "auc": auc,
            "auc_ci_low": boot.low, "auc_ci_high": boot.high,
            "p_perm": float(p_perm), "n_permutations": n_permutations}


def permutation_p(x, y, n_permutations: int, seed: int = 0, folds: int = 5) -> float:
    """The permutation p of :func:`classify_cv`'s cross-validated AUC (scikit-learn's
    ``permutation_test_score``: labels permuted, the CV redone; (k + 1) / (n_permutations + 1))."""
    from scipy import sparse
    from sklearn.model_selection import StratifiedKFold, permutation_test_score

    cv = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    _, _, p = permutation_test_score(_pipeline(sparse.issparse(x)), x, np.asarray(y, dtype=int), cv=cv,
                                     scoring="roc_auc", n_permutations=int(n_permutations), random_state=seed)
    return float(p)


def _labels(texts: pd.DataFrame, where: str) -> np.ndarray:
    missing = [c for c in ("story_id", "category", "text") if c not in texts]
    if missing:
        raise ValueError(f"{where}: the texts table lacks column(s) {missing}")
    return texts["category"].eq("llm").to_numpy(int)


def audit_table(versions: dict[str, pd.DataFrame], *, n_permutations: int = 999, seed: int = 0) -> pd.DataFrame:
    """:func:`classify_cv` for every text version (``{"before": texts, "after": texts}``, each with
    columns story_id, category, text) and feature set of :data:`FEATURE_SETS`, in
    :data:`TABLE_COLUMNS`; p-values adjusted over the table's rows (``mc_family``)."""
    rows = []
    for name, texts in versions.items():
        y = _labels(texts, "audit_table")
        for label, (x, _) in feature_matrices(texts["text"]).items():
            rows.append({"text": name, "features": label, **classify_cv(x, y, n_permutations=n_permutations, seed=seed)})
    out = pd.DataFrame(rows)
    out["p_holm"], out["p_bonferroni"] = adjust(out["p_perm"], method="holm"), adjust(out["p_perm"], method="bonferroni")
    out["unit"] = "story"
    out["ci_method"] = "accuracy: Wilson; AUC: percentile bootstrap over stories of out-of-fold scores (2,000)"
    out["mc_family"] = f"the {len(out)} rows of this table (text version x feature set)"
    return out[TABLE_COLUMNS]


def permutation_floor_note(n_permutations: int, n_rows: int) -> str:
    """What the audit's smallest p can be: with n permutations no p is below 1/(n+1), and Holm over
    the table's rows multiplies that floor by up to the number of rows."""
    floor = 1 / (n_permutations + 1)
    return (f"With {n_permutations} permutations the smallest p is {floor:.3f}, and {min(1.0, n_rows * floor):.2f} "
            f"after Holm over the {n_rows} rows: a p at that floor means no permutation did as well as the labels.")


def feature_means(versions: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Mean per text version and category of the shape features, contractions per 1,000 words and
    every mark's rate (what the classifier sees, and what is the authors' style: :data:`STYLE_FEATURES`)."""
    frames = []
    for name, texts in versions.items():
        _labels(texts, "feature_means")
        t = list(texts["text"])
        f = pd.concat([pd.DataFrame([shape_features(s) for s in t]),
                       pd.DataFrame({"contractions_per_1k": [1000 * len(_CONTRACTION.findall(s)) / max(count_words(s), 1) for s in t]}),
                       punctuation_rates(t)], axis=1)
        m = f.groupby(texts["category"].to_numpy()).mean()
        m.index.name = "category"
        m.insert(0, "text", name)
        frames.append(m.reset_index())
    return pd.concat(frames, ignore_index=True).fillna(0.0)


# ---------------------------------------------------------------- the audit's sensitivity

#: planted cues: (name, kind, dose). ``semicolons``: in every story of the planted group, ", "
#: becomes "; " until that many more semicolons per 1,000 words (5 is the size of the real LLM-human
#: gap); ``spaced ellipsis``: that share of the group gets three sentence ends written " ..." (the old
#: transcription cue's form); ``none``: nothing planted, the criterion's false-positive rate
CUE_DOSES = (("none", "per_1k", 0.0), ("semicolons", "per_1k", 1.0), ("semicolons", "per_1k", 5.0),
             ("semicolons", "per_1k", 20.0), ("spaced ellipsis", "share", 0.10), ("spaced ellipsis", "share", 0.25))
DETECTION_POWER = 0.8
#: label permutations of :func:`detected`'s test: the fewest for which p reaches 0.05
DETECTION_PERMUTATIONS = 19
_COMMA = re.compile(r", ")
_SENTENCE_STOP = re.compile(r"(?<=[a-z])\.(?=\s)")


def plant_cue(text: str, cue: str, amount: float, rng: np.random.Generator) -> str:
    """``text`` with a planted cue: ``semicolons`` (``amount`` per 1,000 words: that many ", " made
    "; ", as many as the text has), ``spaced ellipsis`` (``amount`` sentence ends made " ...") or
    ``none`` (unchanged)."""
    if cue == "none":
        return text
    if cue == "semicolons":
        spots = [m.start() for m in _COMMA.finditer(text)]
        k = min(len(spots), int(round(amount * count_words(text) / 1000.0)))
        pattern = ";"
    elif cue == "spaced ellipsis":
        spots = [m.start() for m in _SENTENCE_STOP.finditer(text)]
        k = min(len(spots), int(amount))
        pattern = " ..."
    else:
        raise ValueError(f"unknown planted cue {cue!r}; choose none, semicolons or spaced ellipsis")
    chosen = sorted(rng.choice(spots, size=k, replace=False)) if k else []
    out, last = [], 0
    for i in chosen:
        out += [text[last:i], pattern]
        last = i + 1
    return "".join(out) + text[last:]


def plant(texts: pd.DataFrame, cue: str, kind: str, dose: float, seed: int) -> pd.DataFrame:
    """``texts`` (story_id, category, text) with ``cue`` planted in the stories labelled ``llm`` at
    ``dose`` (``kind`` per_1k: in every one; share: in that share of them, three marks each)."""
    rng = np.random.default_rng(seed)
    llm = np.flatnonzero(texts["category"].eq("llm").to_numpy())
    if kind == "share":
        chosen = rng.choice(llm, size=max(1, int(round(dose * len(llm)))), replace=False)
        amount = 3.0
    else:
        chosen, amount = llm, dose
    out = texts.copy()
    col = out.columns.get_loc("text")
    for i in chosen:
        out.iat[i, col] = plant_cue(out.iat[i, col], cue, amount, rng)
    return out


def detected(x, y, seed: int) -> tuple[float, bool]:
    """(cross-validated AUC, detected): detected when the AUC's percentile interval over stories
    lies above 0.5 (:func:`classify_cv` without permutations) *and* the permutation test of the
    cross-validated AUC rejects at 5% (:func:`permutation_p`, :data:`DETECTION_PERMUTATIONS`; run
    only when the interval is above 0.5). The interval alone is liberal: it treats the out-of-fold
    scores as fixed and misses the refitting's variance (9 of 40 random splits of 80 + 20 simulated
    stories "detected", tests/test_surface_cues_judge.py); the permutation test holds 5%
    whatever the features, so the pair does too."""
    res = classify_cv(x, y, n_permutations=0, seed=seed, n_boot=500)
    if not res["auc_ci_low"] > 0.5:
        return res["auc"], False
    return res["auc"], bool(permutation_p(x, y, DETECTION_PERMUTATIONS, seed) <= 0.05)


def pseudo_split(texts: pd.DataFrame, seed: int) -> pd.DataFrame:
    """The human stories of ``texts`` with as many of them as there are LLM stories, drawn at
    random, labelled ``llm``: two groups with no cue between them but chance."""
    human = texts[texts["category"] != "llm"].reset_index(drop=True)
    n = int(texts["category"].eq("llm").sum())
    if not 5 <= n <= len(human) - 5:
        raise ValueError(f"sensitivity: needs at least 5 LLM and 5 more human stories than LLM ones, got "
                         f"{n} LLM and {len(human)} human")
    pick = np.random.default_rng(seed).choice(len(human), n, replace=False)
    cat = np.where(np.isin(np.arange(len(human)), pick), "llm", "human")
    return human.assign(category=cat)


def sensitivity_table(texts: pd.DataFrame, *, replicates: int = 10, seed: int = 0,
                      doses=CUE_DOSES) -> pd.DataFrame:
    """The audit's sensitivity: the human stories split at random into two groups of the real
    design's sizes (:func:`pseudo_split`, a new split per replicate), a cue planted in the one
    labelled LLM (:func:`plant`), the audit's classifier run on it. Per cue x dose x feature set:
    the share of ``replicates`` detected (:func:`detected`; the ``none`` row is the criterion's
    false-positive rate) and the mean AUC; per cue x feature set the smallest dose detected in >=
    80% (``smallest_dose``; NaN with a note when none was), so that an audit at chance reads as
    "no cue of this kind larger than the smallest dose"."""
    _labels(texts, "sensitivity_table")
    rows = []
    for cue, kind, dose in doses:
        hits, aucs = {}, {}
        for r in range(int(replicates)):
            planted_texts = plant(pseudo_split(texts, seed + r), cue, kind, dose, seed + r)
            y = planted_texts["category"].eq("llm").to_numpy(int)
            for label, (x, _) in feature_matrices(planted_texts["text"]).items():
                auc, hit = detected(x, y, seed + r)
                hits.setdefault(label, []).append(hit)
                aucs.setdefault(label, []).append(auc)
        for label in hits:
            k, n = int(sum(hits[label])), int(replicates)
            _, lo, hi = proportion_ci(k, n)
            rows.append({"cue": cue, "dose": dose, "dose_unit": "per 1,000 words, every story of the group"
                         if kind == "per_1k" else "share of the group's stories (3 marks each)", "features": label,
                         "replicates": n, "detection_rate": k / n, "detection_rate_ci_low": lo,
                         "detection_rate_ci_high": hi, "mean_auc": float(np.mean(aucs[label]))})
    out = pd.DataFrame(rows)
    found = out[(out["detection_rate"] >= DETECTION_POWER) & (out["cue"] != "none")]
    smallest = found.groupby(["cue", "features"])["dose"].min().rename("smallest_dose")
    out = out.merge(smallest, on=["cue", "features"], how="left")
    out["note"] = np.where(out["smallest_dose"].isna() & (out["cue"] != "none"),
                           f"no planted dose detected in {DETECTION_POWER:.0%} of replicates: the audit cannot rule "
                           "out a cue of this kind up to the largest dose", "")
    out.loc[out["cue"] == "none", "note"] = "nothing planted: the detection criterion's false-positive rate"
    return out.assign(unit="story", design="human stories split at random into groups of the real sizes, the "
                      "cue planted in the one labelled LLM, a new split per replicate",
                      detection=f"AUC's 95% percentile interval over stories above 0.5 (5-fold CV, 500 resamples) "
                      f"and permutation p <= 0.05 ({DETECTION_PERMUTATIONS} permutations); power "
                      f"{DETECTION_POWER:.0%}", ci_method="detection rate: Wilson over replicates")
