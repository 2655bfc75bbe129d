"""The typographic normal form: one form for every category, words untouched."""
from __future__ import annotations

import re

import pytest

from judgelab.corpus import typography as ty
from judgelab.corpus.text import count_words
from judgelab.sage.protocol import text_prep as tp


def test_dashes_become_one_unspaced_em_dash_and_ranges_stay():
    assert ty.dashes("True!--nervous--very") == "True!—nervous—very"
    assert ty.dashes("the town S---- was dull") == "the town S—was dull"
    assert ty.dashes("he said - quietly - no") == "he said—quietly—no"
    assert ty.dashes("wait – no — yes") == "wait—no—yes"
    assert ty.dashes("from 1914–1918, a well-known half-sentient") == "from 1914–1918, a well-known half-sentient"


def test_quotes_ellipses_and_the_counts_of_words_do_not_change():
    text = "“Don’t,” she said. ‘Wait…’ . . . and then... «non»"
    out = ty.ellipses(ty.quotes(text))
    assert out == "\"Don't,\" she said. 'Wait...'... and then... \"non\""
    # the spaced ellipsis is Gutenberg's ". . ." transcribed: set close, in every source
    assert ty.ellipses("was exactly ... but there . . . and\n\n... then") == "was exactly... but there... and\n\n... then"
    assert count_words(out) == count_words(text)


def test_emphasis_is_stripped_or_unified_the_same_way_for_every_source():
    llm, gutenberg = "She thought *what now*, and **ran**.", "She thought _what now_, and __ran__."
    for text in (llm, gutenberg):
        plain, marked = ty.emphasis(text)
        assert (plain, marked) == ("She thought what now, and ran.", 3)
        assert ty.emphasis(text, "underscore")[0] == "She thought _what now_, and _ran_."
    assert ty.emphasis("snake_case and 2 * 3 * 4")[0] == "snake_case and 2 * 3 * 4"   # not emphasis
    # unpaired marks at a word's edge are italics never closed, in any source
    assert ty.emphasis("And _a brute beast _—whose; *Dante, 19, hunched")[0] == "And a brute beast —whose; Dante, 19, hunched"
    with pytest.raises(ValueError, match="emphasis mode"):
        ty.emphasis("x", "bold")


def test_book_capitals_at_section_starts_only_and_acronyms_kept():
    paras = ["IT was said that a new person had appeared.", "WHEN he came, nobody spoke.",
             "MT brain takes over.", "The MT failed again."]
    out = ty.normal_form(paras, section_starts={2})
    assert out.paragraphs[0] == "It was said that a new person had appeared."
    assert out.paragraphs[1] == "WHEN he came, nobody spoke."       # not a section start: left alone
    assert out.paragraphs[2] == "MT brain takes over."              # "MT" is used again in capitals
    assert out.changes["book_capitals"] == 1
    assert ty.book_capitals("“WHEN the porter’s wife”") == "“When the porter’s wife”"
    assert ty.book_capitals("I went home.") == "I went home."


def test_normal_form_counts_changes_and_removes_footnote_marks():
    out = ty.normal_form(["A PARABLE.[1] He said--“no.”", "*Inner* thought…"])
    assert out.paragraphs == ['A PARABLE. He said—"no."', "Inner thought..."]
    assert out.changes["footnote_ref"] == 1 and out.changes["dashes"] == 1 and out.changes["quotes"] == 2
    assert out.changes["ellipses"] == 1 and out.emphasis_words == 1 and out.marker_chars == 2


# ---------------------------------------------------------------- paratext in human texts

def test_epigraph_with_its_attribution_is_removed_as_paratext():
    poe = ("THE FALL OF THE HOUSE OF USHER\n\nSon cœur est un luth suspendu;\nSitôt qu'on le touche il résonne.\n\n"
           "—_De Béranger_.\n\nDURING the whole of a dull, dark, and soundless day.")
    out = tp.prepare_text(poe, "The Fall of the House of Usher", "Edgar Allan Poe")
    assert out.text == "During the whole of a dull, dark, and soundless day."
    assert [r for r, _ in out.dropped] == ["heading", "epigraph", "epigraph"]
    festival = ("THE FESTIVAL\n\n“Efficiunt daemones, ut quae non sunt, sic tamen quasi sint.”--Lactantius.\n\n"
                "I was far from home.")
    assert tp.prepare_text(festival, "The Festival", "H. P. Lovecraft").text == "I was far from home."
    # a dialogue line that opens with a dash, later in the story, is prose
    prose = "A long first paragraph of the story itself, which goes on. " * 3
    dialogue = prose + "\n\n—Yes, she said, it is.\n\n—No."
    assert tp.prepare_text(dialogue, "X Y", "A B").text.endswith("—Yes, she said, it is.\n\n—No.")


def test_footnotes_and_translators_notes_are_removed():
    text = ("Once upon a time.[1]\n\n[1]\n\n[Footnote 1: Found among the papers of the late Mr. X.]\n\n"
            "The end came slowly.\n\nNotes:\n\n1. One hundred kopeks make a rouble.\n\n2. A drink made from rye.")
    out = tp.prepare_text(text, "Title Words", "Ann Writer")
    assert out.text == "Once upon a time.\n\nThe end came slowly."
    kinds = [r for r, _ in out.dropped]
    assert kinds.count("footnote") == 2 and kinds.count("translator_note") == 3
    # numbered paragraphs without a "Notes:" head are the story's
    kept = tp.prepare_text("He counted.\n\n1. And then he laughed, which no note explains", "T W", "A B")
    assert kept.text.endswith("laughed, which no note explains")


# ---------------------------------------------------------------- even-handed cleanup

def test_degenerate_lines_inside_a_generation_are_kept_its_framing_is_not():
    story = ("Here is the revised Chapter 5, within the 1000-word limit.\n\n"
             "Mara walked to the edge of the field and looked back.\n\n"
             "Some potential or1000-word limit.\n\n"
             "# potentially.\n\n"
             "# Chapter 6: The Stakes Rise\n\n"
             "She did not look back again.\n\n"
             "**Word Count:** 598\n\n"
             "Let me know if you'd like me to expand it!")
    out = tp.prepare_text(story, "Mushroom Season", "some-model")
    assert out.text == ("Mara walked to the edge of the field and looked back.\n\n"
                        "Some potential or1000-word limit.\n\npotentially.\n\nShe did not look back again.")
    assert sorted(r for r, _ in out.dropped) == ["meta_note", "meta_note", "meta_note", "section_marker"]
    from judgelab.sage.protocol import leak_check
    assert leak_check.find_leaks(out.text, "Mushroom Season", "some-model") == []


# ---------------------------------------------------------------- transcription marks in the real stories

@pytest.fixture(scope="module")
def corpus():
    from judgelab import paths
    from judgelab.corpus.manifest import load_corpus
    if not (paths.data_raw() / "stories").is_dir():
        pytest.skip("corpus not acquired: run `make data`")
    return load_corpus(acquire=False).set_index("story_id")


def _sent(corpus, story_id):
    s = corpus.loc[story_id]
    return tp.prepare_text(s.text, s.title, s.author, story_id=story_id)


def test_paratext_only_human_stories_carried_is_removed_and_the_prose_stays(corpus):
    usher = _sent(corpus, "poe_fall_of_the_house_of_usher")
    assert "Bishop of Landaff" not in usher.text and " * " not in usher.text
    assert "(for other men have thought thus,)" in usher.text
    assert ("footnote", next(p for r, p in usher.dropped if "Landaff" in p)) in usher.dropped
    pale = _sent(corpus, "kipling_beyond_the_pale")
    assert "Hindu Proverb" not in pale.text and "Love heeds not caste" not in pale.text
    assert pale.text.startswith("A man should, whatever happens, keep to his own caste")
    cthulhu = _sent(corpus, "lovecraft_call_of_cthulhu")
    for heading in ("The Horror in Clay", "The Tale of Inspector Legrasse", "The Madness from the Sea"):
        assert heading not in cthulhu.text
        assert any(r == "section_marker" and heading in p for r, p in cthulhu.dropped)
    assert cthulhu.text.startswith("The most merciful thing in the world")
    # a numbered note is not a heading
    assert not tp.is_section_marker("1. One hundred kopeks make a rouble.", headings_by_form=True)
    # a section numbered in words is (The Red Circle's "Two"); speech and prose that begin with one are not
    red = _sent(corpus, "doyle_red_circle")
    assert ("section_marker", "Two") in red.dropped and "\n\nTwo\n\n" not in red.text
    assert tp.is_section_marker("Two") and tp.is_section_marker("PART THREE.")
    for prose in ('"Two."', "Two great fires leaped and flickered.", "two"):
        assert not tp.is_section_marker(prose, headings_by_form=True), prose


def test_no_story_of_any_category_is_sent_a_spaced_ellipsis(corpus):
    """Gutenberg's ". . ." came through as "word ..." in 18 of 80 human stories and in no LLM one."""
    raw = [sid for sid, t in corpus["text"].items() if re.search(r"\S[ \t]+(?:…|\.(?:\s?\.){2})", t)]
    assert len(raw) >= 15 and not corpus.loc[raw, "category"].eq("llm").any()     # the stories that had it
    assert [sid for sid in raw if re.search(r"\S[ \t]+\.\.\.", _sent(corpus, sid).text)] == []
