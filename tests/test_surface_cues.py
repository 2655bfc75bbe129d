"""The surface-cue audit: features independent of the normal form, and an audit that can fail."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab.corpus import surface_cues as sc
from judgelab.corpus.text import count_words


def test_marks_and_shape_of_a_known_text():
    text = 'He said; "no..." and left.\n\nShe waited. Then she ran! Why?\n\nIt—ended…'
    assert sc.marks(text) == [";", '"', "...", '"', ".", ".", "!", "?", "—", "…"]
    rates = sc.punctuation_rates([text, "A plain text"])
    per_k = 1000 / count_words(text)
    assert rates.loc[0, "per_1k ;"] == pytest.approx(per_k) and rates.loc[0, "per_1k ."] == pytest.approx(2 * per_k)
    assert rates.loc[1].eq(0).all()                                   # no marks: every rate 0
    f = sc.shape_features(text)
    assert f["paragraph_words_mean"] == pytest.approx(np.mean([5, 6, 2]))
    assert f["sentences_per_paragraph"] == pytest.approx(np.mean([1, 3, 1]))
    assert f["share_one_sentence_paragraphs"] == pytest.approx(2 / 3)
    assert f["sentence_words_median"] == 2 and sc.blank("Ab1, c!") == "xxx, x!"


def test_the_bootstrap_auc_matches_scikit_learn():
    """The audit's bootstrap AUC (the floor's weighted AUC, a resample as weights) is sklearn's AUC
    of the resampled stories, ties included."""
    from sklearn.metrics import roc_auc_score

    from judgelab.stats.resampling import weighted_auc

    rng = np.random.default_rng(3)
    y = np.array([0] * 12 + [1] * 8)
    score = np.round(rng.normal(size=20) + y, 1)          # rounded: ties included
    idx = rng.integers(0, 20, 20)
    w = np.bincount(idx, minlength=20)[None, :]
    pos = y == 1
    assert weighted_auc(score[pos], w[:, pos], score[~pos], w[:, ~pos])[0] == pytest.approx(roc_auc_score(y[idx], score[idx]))


_WORDS = "the a house river night man woman door light old cold went saw said came long dark small".split()


def _story(rng, semicolons: bool) -> str:
    paras = []
    for _ in range(rng.integers(4, 8)):
        sents = []
        for _ in range(rng.integers(1, 5)):
            ws = list(rng.choice(_WORDS, rng.integers(6, 16)))
            ws[rng.integers(2, len(ws) - 2)] += ";" if semicolons else ","
            sents.append(" ".join(ws).capitalize() + ".")
        paras.append(" ".join(sents))
    return "\n\n".join(paras)


def _texts(plant: bool, seed: int = 0, n_h: int = 30, n_l: int = 15) -> pd.DataFrame:
    """Stories from one generator in both categories; ``plant``: the LLM ones put a semicolon where
    the human ones put a comma (the cue the audit must find)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame([{"story_id": f"s{i}", "category": "llm" if i >= n_h else "canonical",
                          "text": _story(rng, plant and i >= n_h)} for i in range(n_h + n_l)])


def test_the_audit_detects_a_planted_cue_and_reports_chance_without_one():
    # 9 permutations: the smallest p is 1/10, reached when no permutation does as well as the labels
    t = sc.audit_table({"no cue": _texts(False), "semicolons in one category": _texts(True)}, n_permutations=9, seed=0)
    assert list(t.columns) == sc.TABLE_COLUMNS and len(t) == 2 * len(sc.FEATURE_SETS)
    t = t.set_index(["text", "features"])
    for fs in (sc.FEATURE_SETS[0], sc.FEATURE_SETS[1], sc.FEATURE_SETS[3]):      # shape has no cue to find
        hit = t.loc[("semicolons in one category", fs)]
        assert hit["auc"] > 0.95 and hit["p_perm"] == pytest.approx(1 / 10) and hit["accuracy_ci_low"] > hit["chance_accuracy"] - 0.1
    for fs in sc.FEATURE_SETS:
        null = t.loc[("no cue", fs)]
        assert null["p_perm"] > 0.1 and null["auc_ci_low"] < 0.5 < null["auc_ci_high"], (fs, null)
    assert t["p_holm"].ge(t["p_perm"]).all() and set(t["unit"]) == {"story"}
    with pytest.raises(ValueError, match="at least 5 stories of each class"):
        sc.classify_cv(np.zeros((10, 2)), [0] * 7 + [1] * 3, n_permutations=0)
    with pytest.raises(ValueError, match=r"audit_table: the texts table lacks column\(s\) \['text'\]"):
        sc.audit_table({"x": _texts(False).drop(columns="text")})


# ---------------------------------------------------------------- on the real corpus

@pytest.fixture(scope="module")
def corpus():
    from judgelab import paths
    from judgelab.corpus.manifest import load_corpus
    if not (paths.data_raw() / "stories").is_dir():
        pytest.skip("corpus not acquired: run `make data`")
    return load_corpus(acquire=False)


def test_mean_removal_per_category_is_bounded(corpus):
    """Bound: every category's mean share of words removed <= prep_report.MEAN_REMOVAL_BOUND_PCT
    (1.5%). Exceptions, per story (not bounded): LLM stories whose generations carry chapter
    headings and notes to the user ("**Word Count:** 598", "*(Note: ...)*") between chapters
    (deepseek-r1, ~6%), and human texts with long translator's notes."""
    from judgelab.sage.protocol import prep_report as pr

    rep = pr.preparation_report(corpus)
    by = pr.removal_by_category(rep)
    assert (by["mean_pct_words_removed"] <= pr.MEAN_REMOVAL_BOUND_PCT).all(), by
    assert rep.loc[rep["mode"] == "content", "pct_words_removed"].max() < 10
    content = rep[rep["mode"] == "content"]
    assert (content["leaks"] == 0).all()


def test_on_the_texts_as_sent_the_audit_can_fail_and_finds_a_cue_planted_in_human_stories(corpus):
    """The punctuation rates still tell LLM from human stories after the normal form (the authors'
    style: the audit is not at chance by construction); among human stories alone, a random split is
    at chance until semicolons are planted in one half."""
    from judgelab.sage.protocol import prep_report as pr

    sent = pr.sent_texts(corpus)
    y = sent["category"].eq("llm").to_numpy(int)
    real = sc.classify_cv(sc.punctuation_rates(sent["text"]).to_numpy(), y, n_permutations=19, seed=0, n_boot=500)
    assert real["auc_ci_low"] > 0.5 and real["p_perm"] == pytest.approx(1 / 20), real
    human = sent[sent["category"] != "llm"].reset_index(drop=True)
    pseudo = np.zeros(len(human), int)
    pseudo[np.random.default_rng(1).choice(len(human), 20, replace=False)] = 1
    null = sc.classify_cv(sc.punctuation_rates(human["text"]).to_numpy(), pseudo, n_permutations=19, seed=0, n_boot=500)
    assert null["p_perm"] > 0.05 and null["auc_ci_low"] < 0.5 < null["auc_ci_high"], null
    planted = [t.replace(", ", "; ") if p else t for t, p in zip(human["text"], pseudo)]
    hit = sc.classify_cv(sc.punctuation_rates(planted).to_numpy(), pseudo, n_permutations=19, seed=0, n_boot=500)
    assert hit["auc"] > 0.95 and hit["p_perm"] == pytest.approx(1 / 20), hit


def _plain_corpus(n: int = 8, seed: int = 0, n_human: int = 30) -> pd.DataFrame:
    """``n_human`` human and ``n`` LLM stories drawn from one word model (no cue between them)."""
    rng = np.random.default_rng(seed)
    words = "the mill river lantern widow cart harbour winter letter sister candle bridge storm".split()
    rows = []
    for i in range(n + n_human):
        sentences = [" ".join(rng.choice(words, rng.integers(6, 14))).capitalize() + ", and "
                     + " ".join(rng.choice(words, rng.integers(3, 8))) + "." for _ in range(30)]
        rows.append({"story_id": f"s{i}", "category": "llm" if i >= n_human else "canonical",
                     "text": "\n\n".join(" ".join(sentences[k:k + 5]) for k in range(0, 30, 5))})
    return pd.DataFrame(rows)


def test_a_planted_cue_adds_exactly_its_dose():
    text = _plain_corpus(1).loc[0, "text"]
    rng = np.random.default_rng(1)
    out = sc.plant_cue(text, "semicolons", 20.0, rng)
    assert out.count(";") == round(20.0 * count_words(text) / 1000) and out.count(", ") == text.count(", ") - out.count(";")
    assert sc.plant_cue(text, "spaced ellipsis", 3, rng).count(" ...") == 3
    planted = sc.plant(_plain_corpus(), "spaced ellipsis", "share", 0.25, seed=2)
    assert planted["text"].str.contains(" \\.\\.\\.").sum() == 2 and not planted.loc[:29, "text"].str.contains(" \\.\\.\\.").any()
    split = sc.pseudo_split(_plain_corpus(), seed=4)
    assert len(split) == 30 and (split["category"] == "llm").sum() == 8


def test_the_audits_sensitivity_finds_a_large_dose_and_not_a_null_one():
    """On random splits of human stories: semicolons at +40 per 1,000 words in the group labelled LLM
    are detected by the punctuation set in every replicate (its smallest dose reported); with nothing
    planted each feature set is 'detected' in at most 1 of 5 splits (the criterion's false positives;
    its rate is tested in tests/test_surface_cues_judge.py)."""
    out = sc.sensitivity_table(_plain_corpus(), replicates=5, seed=3,
                               doses=(("none", "per_1k", 0.0), ("semicolons", "per_1k", 40.0)))
    punct = out[out["features"] == sc.FEATURE_SETS[0]].set_index("dose")
    assert punct.loc[40.0, "detection_rate"] == 1.0 and punct.loc[40.0, "smallest_dose"] == 40.0
    null = out[out["cue"] == "none"]
    assert (null["detection_rate"] <= 1 / 5).all(), null[["features", "detection_rate"]]
    assert null["note"].str.contains("false-positive").all()
