"""The surface-cue audit and the bound on cleanup per category (item 2)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab.corpus import surface_cues as sc


def test_features_of_a_known_text():
    text = ("“Go,” he said--twice.\n\n* * *\n\nIT was *late* – and [withheld] slept…\n\n"
            "She waited—then left — quietly.")
    f = sc.surface_features(text)
    from judgelab.corpus.text import count_words
    words = count_words(text)
    per_k = 1000 / words
    assert f["double_hyphen_per_1k"] == pytest.approx(per_k)
    assert f["en_dash_per_1k"] == pytest.approx(per_k)
    assert f["em_dash_per_1k"] == pytest.approx(2 * per_k)
    assert f["spaced_em_dash_per_1k"] == pytest.approx(per_k)              # " — ": one spaced dash
    assert f["section_break_per_1k"] == pytest.approx(per_k)
    assert f["emphasis_marker_per_1k"] == pytest.approx(2 * per_k)
    assert f["mask_per_1k"] == pytest.approx(per_k) and f["ellipsis_char_per_1k"] == pytest.approx(per_k)
    assert f["curly_quote_share"] == 1.0 and f["book_capitals_opening"] == 0.0
    assert f["share_quote_openings"] == pytest.approx(1 / 4)
    assert f["mean_paragraph_words"] == pytest.approx(words / 4)


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


def _texts(n_h=20, n_l=10, llm_mark=""):
    rows = [{"story_id": f"h{i}", "category": "canonical", "text": f"He walked home {'and sat ' * i}at last."}
            for i in range(n_h)]
    rows += [{"story_id": f"l{i}", "category": "llm", "text": f"He walked home{llm_mark} {'and sat ' * i}at last."}
             for i in range(n_l)]
    return pd.DataFrame(rows)


def test_a_mark_only_one_category_carries_is_found_and_no_mark_is_chance():
    marked = sc.feature_table(_texts(llm_mark="--"))
    r = sc.classify_cv(marked, ["double_hyphen_per_1k"], n_permutations=9, seed=1, n_boot=200)
    assert r["auc"] == 1.0 and r["chance_accuracy"] == pytest.approx(2 / 3) and r["accuracy"] > 0.9
    assert r["p_perm"] == pytest.approx(1 / 10)               # no permutation reaches AUC 1
    plain = sc.feature_table(_texts())
    r0 = sc.classify_cv(plain, ["double_hyphen_per_1k", "mask_per_1k"], n_permutations=9, seed=1, n_boot=200)
    assert r0["auc"] == 0.5 and r0["p_perm"] == 1.0           # constant features: every score tied
    with pytest.raises(ValueError, match="at least 5 stories of each class"):
        sc.classify_cv(sc.feature_table(_texts(n_l=3)), ["mask_per_1k"], n_permutations=0)


def test_audit_table_has_the_interval_and_adjustment_columns():
    versions = {"before": _texts(llm_mark="--"), "after": _texts()}
    t = sc.audit_table(versions, n_permutations=4, seed=0)
    assert list(t.columns) == sc.TABLE_COLUMNS and len(t) == 4
    assert set(t["unit"]) == {"story"} and t["p_holm"].ge(t["p_perm"]).all()
    typo = t.set_index(["text", "features"]).loc[("after", "typographic")]
    assert typo["auc"] == 0.5 and typo["accuracy_ci_low"] < typo["accuracy"] <= typo["accuracy_ci_high"]
    assert np.isfinite(t["auc_ci_low"]).all()


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


def test_typographic_features_are_at_chance_after_the_normal_form(corpus):
    from judgelab.sage.protocol import prep_report as pr

    after = pr.sent_texts(corpus)
    r = sc.classify_cv(sc.feature_table(after), sc.TYPO_FEATURES, n_permutations=19, seed=0, n_boot=200)
    assert r["p_perm"] > 0.05 and r["auc_ci_low"] <= 0.5, r
