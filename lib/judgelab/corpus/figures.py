"""What notebook 01 shows of the corpus: the shortfall against the design, the LLM stories by
tier, the word counts by category, and the figure of word counts and years of publication.
Tested with known answers in ``tests/test_corpus_figures.py``.
"""
from __future__ import annotations

import pandas as pd


def shortfall_note(design: pd.DataFrame) -> str:
    """Markdown naming every category with fewer stories than the design (``""`` when none).

    ``design`` is :func:`judgelab.corpus.manifest.shortfall`'s table (category, design, have, shortfall)."""
    missing = design.loc[design["shortfall"] > 0]
    if missing.empty:
        return ""
    return ("**Shortfall:** " + "; ".join(f"{r.category}: {r.have} of {r.design}" for r in missing.itertuples())
            + ". The mirror holds fewer public-domain stories than the design; the statistics use what exists.")


def llm_stories_by_tier(corpus: pd.DataFrame) -> pd.DataFrame:
    """Number of LLM-written stories per quality tier and model."""
    llm = corpus.loc[corpus["category"] == "llm"]
    return llm.groupby(["tier", "model"]).size().rename("stories").to_frame()


def words_by_category(corpus: pd.DataFrame) -> pd.DataFrame:
    """count, mean, std, min, quartiles and max of the word counts per category, rounded to words."""
    return corpus.groupby("category")["words"].describe().round(0)


def plot_corpus_words_years(corpus: pd.DataFrame, word_range: tuple[int, int]):
    """Two panels: word counts by category (dots coloured by ``in_range``; dashed lines at the
    ends of ``word_range``), and the stacked histogram of years of first publication."""
    import seaborn as sns

    from judgelab import style

    fig, axes = style.subplots(2, 1, width=5.0, height=3.8)
    left, right = axes[0]
    with style.fixed_jitter():
        sns.stripplot(data=corpus, x="words", y="category", hue="in_range", ax=left, jitter=0.25, size=4)
    for w in word_range:
        left.axvline(w, color=style.GREY, ls="--", lw=0.8)
    left.set(title="Word count by category", xlabel="words (cleaned text)")
    years = corpus.dropna(subset=["year"])
    if len(years):
        sns.histplot(data=years, x="year", hue="category", multiple="stack", bins=30, ax=right)
    else:
        style.empty_panel(right, "no publication years")
    right.set(title="Year of first publication", xlabel="year")
    for ax in (left, right):  # legends beside the panels, never on the dots or bars
        if ax.get_legend() is not None:
            sns.move_legend(ax, "upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    return fig
