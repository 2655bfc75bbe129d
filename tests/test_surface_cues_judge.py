"""The surface-cue audit against a judge that reads a surface cue (``tests/simulated_judge.py``:
``cue`` in the story as sent adds ``cue_bonus`` points). The stories go through the gateway to the
simulated judge on the fake server; the audit (``judgelab.corpus.surface_cues``) is run on the
stories as the judge received them. Its rates are checked at the design every profile audits (the
corpus: 80 human and 20 LLM stories): with the cue planted in the LLM stories it must detect it,
with none planted it must say so in at most 5% of random splits."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from judgelab.corpus import surface_cues as sc
from simulated_judge import Truth, judge_gateway, story_in  # noqa: F401 (a fixture)

WORDS = "the mill river lantern widow cart harbour winter letter sister candle bridge storm said went old cold night".split()
#: the cue the judge reads and the audit must find: semicolons, kept by the typographic normal form
CUE = ";"
#: the planted dose: semicolons per 1,000 words added to every story of the group labelled LLM (the
#: sensitivity table's largest dose; the real LLM-human gap is about 5)
DOSE = 20.0


def _corpus(rng, n_human: int = 80, n_llm: int = 20, sentences: int = 40) -> pd.DataFrame:
    """Stories from one word model in both categories, each with its own rates of commas, questions
    and exclamations and, in a third of them, a few semicolons (the natural variation the audit
    must not mistake for a cue): no cue between the categories but chance."""
    rows = []
    for i in range(n_human + n_llm):
        comma, semi, question = rng.uniform(0.3, 0.9), (rng.random() < 1 / 3) * rng.uniform(0.02, 0.1), rng.uniform(0, 0.2)
        out = []
        for _ in range(sentences):
            words = list(rng.choice(WORDS, rng.integers(6, 18)))
            for mark, p in ((",", comma), (";", semi)):
                if rng.random() < p:
                    words[rng.integers(1, len(words) - 2)] += mark
            out.append(" ".join(words).capitalize() + ("?" if rng.random() < question else "."))
        k = int(rng.integers(2, 7))
        rows.append({"story_id": f"s{i}", "category": "llm" if i >= n_human else "canonical",
                     "text": "\n\n".join(" ".join(out[j:j + k]) for j in range(0, sentences, k))})
    return pd.DataFrame(rows)


def _judged(gw, texts: pd.DataFrame) -> pd.DataFrame:
    """Each story's blind-validator score from the judge behind ``gw`` and the story as it received it."""
    from judgelab.behaviour import length
    from judgelab.sage.protocol.evaluation import EvalConfig, EvalItem
    from judgelab.sage.protocol.modes import prepare_input

    items = [EvalItem(s.story_id, s.category, "", "L4", "content",
                      prepare_input("content", text=s.text, title=f"Tale {s.story_id}", author="Ann Example",
                                    max_text_tokens=10_000)) for s in texts.itertuples(index=False)]
    calls = length.run_intervention(gw, items, EvalConfig(), [], "test")
    assert (calls["status"] == "ok").all()
    sent = {it.story_id: story_in(it.prepared.material) for it in items}
    return calls.assign(text=calls["story_id"].map(sent))


@pytest.mark.parametrize("planted", [False, True])
def test_a_judge_that_reads_a_cue_and_the_audit_of_what_it_was_sent(judge_gateway, planted):
    """20 human and 10 LLM stories scored by a judge that adds 1 point to a story carrying a
    semicolon; ``planted``: semicolons at +20 per 1,000 words in the LLM stories. The judge's LLM -
    human gap holds its known value (1 point x the difference in the share of stories sent with a
    semicolon, counted on the texts received), and the audit's punctuation classifier, run on the
    texts the judge received, detects the cue when planted and the gap is then about a point."""
    rng = np.random.default_rng(7)
    texts = _corpus(rng, 20, 10)
    if planted:
        texts = sc.plant(texts, "semicolons", "per_1k", DOSE, seed=1)
    gw, _ = judge_gateway(Truth(cue=CUE, cue_bonus=1.0, item_sd=0.2, seed_sd=0.05), story_of=story_in)
    judged = _judged(gw, texts)
    llm = judged["category"].eq("llm").to_numpy()
    has_cue = judged["text"].str.contains(CUE, regex=False).to_numpy()
    known = has_cue[llm].mean() - has_cue[~llm].mean()                  # what a 1-point cue should make
    gap = stats.ttest_ind(judged.loc[llm, "score"], judged.loc[~llm, "score"], equal_var=False)
    lo, hi = gap.confidence_interval(0.95)
    assert lo <= known <= hi, (known, lo, hi)
    auc, hit = sc.detected(sc.punctuation_rates(judged["text"]).to_numpy(), llm.astype(int), seed=0)
    assert hit == planted, auc
    if planted:
        assert known == pytest.approx(1 - has_cue[~llm].mean()) and lo > 0.3


def test_the_audits_detection_and_false_positive_rates_at_the_corpus_design():
    """80 human and 20 LLM stories (the corpus every profile audits), the punctuation feature set
    (the cue's own). With nothing between the groups (40 random splits of one corpus) the audit's
    detection criterion fires in no more than 5% of splits (exact one-sided binomial test at 2.5%:
    at most 5 of 40; the AUC interval alone fires in 9); with semicolons planted at +20 per 1,000
    words in the group labelled LLM it fires in each of 2 fresh corpora (the rates over 400 splits
    and 40 corpora are in the audit's notes)."""
    rng = np.random.default_rng(45)
    base = _corpus(rng)
    x = sc.punctuation_rates(base["text"]).to_numpy()
    splits, false_pos = 40, 0
    for r in range(splits):
        y = np.zeros(len(base), int)
        y[rng.choice(len(base), 20, replace=False)] = 1
        false_pos += sc.detected(x, y, seed=r)[1]
    assert stats.binomtest(false_pos, splits, 0.05, alternative="greater").pvalue >= 0.025, false_pos
    for r in range(2):
        texts = sc.plant(_corpus(np.random.default_rng(100 + r)), "semicolons", "per_1k", DOSE, seed=r)
        y = texts["category"].eq("llm").to_numpy(int)
        assert sc.detected(sc.punctuation_rates(texts["text"]).to_numpy(), y, seed=r)[1], r
