"""What notebook 01 shows of the corpus (judgelab.corpus.figures), with known answers."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from figure_geometry import text_overlaps
from judgelab import reporting
from judgelab.corpus import figures


@pytest.fixture
def out_root(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    return tmp_path


def test_shortfall_note_names_every_short_category():
    design = pd.DataFrame({"category": ["canonical", "pulp", "llm"], "design": [50, 30, 20],
                           "have": [50, 25, 18], "shortfall": [0, 5, 2]})
    note = figures.shortfall_note(design)
    assert note.startswith("**Shortfall:** pulp: 25 of 30; llm: 18 of 20.")
    assert figures.shortfall_note(design.assign(shortfall=0)) == ""


def test_corpus_tables_and_figure(out_root):
    corpus = pd.DataFrame({"category": ["canonical", "canonical", "llm", "llm", "llm"],
                           "tier": ["", "", "high", "high", "low"], "model": ["", "", "m1", "m2", "m1"],
                           "words": [1000, 3000, 2500, 2600, 9000], "in_range": [False, True, True, True, False],
                           "year": [1890, 1901, np.nan, np.nan, np.nan]})
    tiers = figures.llm_stories_by_tier(corpus)
    assert tiers["stories"].to_dict() == {("high", "m1"): 1, ("high", "m2"): 1, ("low", "m1"): 1}
    words = figures.words_by_category(corpus)
    assert words.loc["canonical", "mean"] == 2000 and words.loc["llm", "max"] == 9000
    fig = figures.plot_corpus_words_years(corpus, (2000, 8000))
    left = fig.axes[0]
    dashed = [ln.get_xdata()[0] for ln in left.get_lines() if ln.get_linestyle() == "--"]
    assert dashed == [2000, 8000] and left.get_title() == "Word count by category"
    reporting.save_figure(fig, "corpus_test", caption="A caption long enough to wrap " * 8)
    assert text_overlaps(fig) == []


def test_the_same_data_draw_the_same_dots_whatever_numpy_drew_before():
    """The strip plot's jitter comes from numpy's global generator: without a fixed seed the
    figure (and its sha256 in the run record) changes from one run to the next."""
    corpus = pd.DataFrame({"category": ["canonical"] * 4 + ["pulp"] * 4, "words": [1000, 1200, 1500, 1700] * 2,
                           "in_range": [True] * 8, "year": [1900] * 8})

    def dots(seed):
        np.random.seed(seed)  # whatever ran before in the process
        fig = figures.plot_corpus_words_years(corpus, (500, 2000))
        return np.vstack([c.get_offsets() for c in fig.axes[0].collections])

    np.testing.assert_array_equal(dots(1), dots(2))
    np.random.seed(5)
    before = np.random.get_state()[1].copy()
    figures.plot_corpus_words_years(corpus, (500, 2000))
    np.testing.assert_array_equal(np.random.get_state()[1], before)  # the caller's generator is left as it was
