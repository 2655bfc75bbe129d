"""Content-limit text preparation and the independent leak checker (the
typographic normal form, paratext, even-handed cleanup, the title mask off by default)."""
from __future__ import annotations

import pytest

from judgelab.sage.protocol import leak_check as lc
from judgelab.sage.protocol import text_prep as tp
from judgelab.sage.protocol.modes import ContentLeakError, content_limit_text

LLM_STORY = """# Chapter 1: The Taste

The knife knows what to do. *Dice small*, she **can't** chew big pieces.

---

**Chapter 2: Three Weeks Before**

Carson watches from the doorway. She says *“it was the *moon*.”*

---

**Word count**: 1,000

*(Note: This is a condensed version to fit the 1,000-word target. Let me know!)*

**Final Line:** The kitchen never answers.
"""


def test_title_parts_split_alternative_titles_and_hyphens():
    assert tp.title_parts("The Mantle (The Overcoat)") == ["mantle", "overcoat"]
    assert tp.title_parts("A Piece of String (La Ficelle)") == ["piece of string", "ficelle"]
    assert tp.title_parts("Twice-Told; or, The Lantern") == ["twice told", "lantern"]
    assert tp.is_multiword("piece of string") and not tp.is_multiword("mantle")


def test_alternative_title_in_body_is_masked_but_a_one_word_title_is_not():
    text = "A PIECE OF STRING\n\nHe picked up a piece of string from the road. It was a piece-of string."
    # the default keeps the text's own words (the mask itself marked human stories)
    assert tp.prepare_text(text, "A Piece of String (La Ficelle)", "Guy de Maupassant").text == (
        "He picked up a piece of string from the road. It was a piece-of string.")
    out = tp.prepare_text(text, "A Piece of String (La Ficelle)", "Guy de Maupassant", mask_title_in_body=True)
    assert out.text == "He picked up a [withheld] from the road. It was a [withheld]."
    assert out.n_title_masked == 2 and out.removed_chars["heading"] == len("A PIECE OF STRING")
    mantle = tp.prepare_text("THE MANTLE\n\nHis mantle was old.", "The Mantle (The Overcoat)", "Nikolai Gogol")
    assert mantle.text == "His mantle was old." and mantle.n_title_masked == 0
    masked = tp.prepare_text("THE MANTLE\n\nHis mantle was old.", "The Mantle (The Overcoat)", "Nikolai Gogol",
                             mask_title_in_body=True, mask_single_word_titles=True)
    assert masked.text == "His [withheld] was old."


def test_llm_formatting_is_removed_and_section_breaks_are_dropped():
    out = tp.prepare_text(LLM_STORY, "Mushroom Season", "claude-opus-4")
    assert out.text == (
        "The knife knows what to do. Dice small, she can't chew big pieces.\n\n"
        'Carson watches from the doorway. She says "it was the moon."\n\n'
        "The kitchen never answers."
    )
    note = "*(Note: This is a condensed version to fit the 1,000-word target. Let me know!)*"
    assert out.removed_chars["meta_note"] == len("**Word count**: 1,000") + len(note) + len("**Final Line:** ")
    assert out.removed_chars["markdown"] == 2 + 4 + 2 + 2   # *Dice small*, **can't**, *"..."*, *moon*
    assert out.emphasis_words == 2 + 1 + 4 + 1              # nested: "moon" inside the quote's span
    assert lc.find_leaks(out.text, "Mushroom Season", "claude-opus-4") == []


def test_the_sage_v4_preparation_is_kept_as_a_setting():
    out = tp.prepare_text(LLM_STORY, "Mushroom Season", "claude-opus-4", normal_form=False, section_break="marker")
    assert out.text == (
        "The knife knows what to do. Dice small, she can't chew big pieces.\n\n* * *\n\n"
        "Carson watches from the doorway. She says “it was the moon.”\n\n* * *\n\n"
        "The kitchen never answers."
    )
    with pytest.raises(ValueError, match="section_break"):
        tp.prepare_text(LLM_STORY, "T", "a", section_break="stars")


def test_subtitle_before_the_first_section_numeral_is_removed():
    text = ("THE OPEN BOAT\n\nA Tale intended to be after the Fact. Being the Experience of Four Men\n\n"
            "I\n\nNone of them knew the colour of the sky.\n\nII\n\nThe cook said nothing.")
    out = tp.prepare_text(text, "The Open Boat", "Stephen Crane")
    assert out.text == "None of them knew the colour of the sky.\n\nThe cook said nothing."
    marked = tp.prepare_text(text, "The Open Boat", "Stephen Crane", section_break="marker")
    assert marked.text == "None of them knew the colour of the sky.\n\n* * *\n\nThe cook said nothing."
    assert out.removed_chars["subtitle"] == len("A Tale intended to be after the Fact. Being the Experience of Four Men")


def test_curated_blurb_from_the_paratext_file(tmp_path, monkeypatch):
    csv_path = tmp_path / "paratext.csv"
    csv_path.write_text("story_id,starts_with,reason\nx1,Larry bought a clock,teaser under the byline\n",
                        encoding="utf-8")
    monkeypatch.setattr(tp.paths, "corpus_dir", lambda: tmp_path)
    text = "BEYOND\n\n_by ... Philip K. Dick_\n\nLarry bought a clock for his wife.\n\nThat night he sat down."
    assert tp.prepare_text(text, "Beyond", "Philip K. Dick", story_id="x1").text == "That night he sat down."
    assert tp.prepare_text(text, "Beyond", "Philip K. Dick").text.startswith("Larry bought")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "paratext.csv").write_text("story_id,starts_with,reason\nx1,,\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 2: empty starts_with, reason"):
        tp.curated_blurbs("x1", bad / "paratext.csv")


def test_checker_is_independent_of_the_masking_patterns():
    # punctuation and line breaks between the words of a title part do not hide it
    leaks = lc.find_leaks("It was a diamond—\nnecklace of paste.", "The Diamond Necklace (La Parure)", "Guy de Maupassant")
    assert [x.kind for x in leaks] == ["title part"]
    # accents folded, the full name found; a one-word title in the body is not a leak
    leaks = lc.find_leaks("Guy de MAUPASSANT wrote this. Her parure shone.", "The Diamond Necklace (La Parure)",
                          "Guy de Maupassant")
    assert [x.kind for x in leaks] == ["author name"]
    assert [x.kind for x in lc.find_leaks("Maupassant.", "X", "Guy de Maupassant", surnames={"maupassant"})] == ["surname"]
    assert lc.find_leaks("London was foggy.", "X", "Jack London", surnames=set()) == []
    kinds = {x.kind for x in lc.find_leaks("# Chapter 2\n\n**Word count**: 900", "X", "m")}
    assert kinds == {"markdown", "chapter marker", "meta note"}


def test_distinctive_surnames_are_those_no_other_story_uses():
    pairs = [("Jack London", "He went to London."), ("Guy de Maupassant", "Paris."),
             ("Stephen Crane", "A crane flew."), ("Mary Smith", "London again; a crane.")]
    assert lc.distinctive_surnames(pairs) == {"maupassant", "smith"}


def test_a_leak_raises_naming_the_story():
    with pytest.raises(ContentLeakError, match="s1"):
        # the masking leaves a surname alone (an ordinary word for most authors); the checker,
        # told that this one is distinctive, catches it
        content_limit_text("Real prose here, long enough to be a story.\n\n" * 30 + "Brandt laughed.",
                           "T", "Ann Brandt", story_id="s1", surnames={"brandt"})


def test_every_corpus_story_is_clean_in_content_mode():
    """All 100 stories of the manifest (when acquired): zero leaks after preparation."""
    from judgelab import paths
    from judgelab.corpus.manifest import load_corpus
    if not (paths.data_raw() / "stories").is_dir():
        pytest.skip("corpus not acquired: run `make data`")
    corpus = load_corpus(acquire=False)     # a corrupt or missing story fails here, naming it
    surnames = lc.distinctive_surnames(zip(corpus["author"], corpus["text"]))
    found = {}
    for row in corpus.itertuples():
        text = tp.prepare_text(row.text, row.title, row.author, story_id=row.story_id).text
        leaks = lc.find_leaks(text, row.title, row.author, surnames=surnames, check_title_in_body=False)
        assert tp.MASK not in text, row.story_id      # no mask token by default
        masked = tp.prepare_text(row.text, row.title, row.author, story_id=row.story_id, mask_title_in_body=True).text
        leaks += lc.find_leaks(masked, row.title, row.author, surnames=surnames)
        if leaks:
            found[row.story_id] = leaks[:3]
    assert found == {} and len(corpus) == 100


# ---------------------------------------------------------------- the preparation report

def tiny_corpus():
    import pandas as pd

    boat = ("THE OPEN BOAT\n\nBy Stephen Crane\n\nNone of them knew the colour of the sky. "
            "The open boat rocked.\n\nTHE END")
    return pd.DataFrame([
        {"story_id": "s1", "category": "canonical", "title": "The Open Boat", "author": "Stephen Crane", "text": boat},
        {"story_id": "s2", "category": "llm", "title": "Mushroom Season", "author": "claude-opus-4", "text": LLM_STORY},
        {"story_id": "s3", "category": "pulp", "title": "Quiet Harbour", "author": "Ann Brandt",
         "text": "Real prose here, long enough to be a story.\n\nBrandt laughed."},
    ])


def test_preparation_report_counts_each_rule_mask_and_leak():
    from judgelab.sage.protocol import prep_report as pr

    rep = pr.preparation_report(tiny_corpus(), mask_title_in_body=True)
    assert list(rep.columns) == pr.REPORT_COLUMNS and len(rep) == 6
    assert rep[["story_id", "mode"]].values.tolist() == [
        ["s1", "content"], ["s1", "title"], ["s2", "content"], ["s2", "title"], ["s3", "content"], ["s3", "title"]]
    r = rep.set_index(["story_id", "mode"])
    s1 = r.loc[("s1", "content")]
    assert s1["chars_in"] == len(tiny_corpus().text[0])
    assert (s1["removed_heading"], s1["removed_byline"], s1["removed_signature"]) == (13, 16, 7)  # THE OPEN BOAT, By Stephen Crane, THE END
    assert s1["removed_blurb"] == s1["removed_markdown"] == s1["removed_meta_note"] == 0
    assert s1["chars_out"] == len("None of them knew the colour of the sky. The [withheld] rocked.")
    assert (s1["title_masks"], s1["author_masks"], s1["leaks"]) == (1, 0, 0)
    s2 = r.loc[("s2", "content")]
    assert s2["removed_markdown"] == 2 + 4 + 2 + 2      # *Dice small*, **can't**, *“...”*, *moon*
    note = "*(Note: This is a condensed version to fit the 1,000-word target. Let me know!)*"
    assert s2["removed_meta_note"] == len("**Word count**: 1,000") + len(note) + len("**Final Line:** ")
    assert s2["leaks"] == 0
    # "brandt" is used by no other story: the corpus-wide surname check finds it in s3's body
    assert (r.loc[("s3", "content"), "leaks"], r.loc[("s3", "content"), "leak_kinds"]) == (1, "surname")
    title_rows = rep[rep["mode"] == "title"]
    assert (title_rows["leaks"] == 0).all() and (title_rows[[f"removed_{x}" for x in pr.RULES]] == 0).all().all()
    # the default (mask off) keeps the title phrase: counted, not a leak
    off = pr.preparation_report(tiny_corpus()).set_index(["story_id", "mode"])
    assert (off.loc[("s1", "content"), "title_masks"], off.loc[("s1", "content"), "leaks"],
            off.loc[("s1", "content"), "title_phrase_paragraphs"]) == (0, 0, 1)
    # words: in = the corpus text (21), out = what is sent; removed = heading 3 + byline 3 + "THE END" 2
    o1 = off.loc[("s1", "content")]
    assert (o1["words_in"], o1["words_out"], o1["words_removed"]) == (21, 13, 8)
    assert o1["pct_words_removed"] == pytest.approx(100 * 8 / 21)


def test_title_mode_material_holds_no_passage_of_the_story():
    """Independent of leak_check: every 8-word window of the story text is absent from the
    title-mode material (the heading + byline, i.e. title and author, aside)."""
    from judgelab.sage.protocol import prep_report as pr
    from judgelab.sage.protocol import prompts

    text = ("AN OCCURRENCE AT OWL CREEK BRIDGE\n\nBy Ambrose Bierce\n\n"
            "None of them knew the colour of the sky, they said.")
    title, author = "An Occurrence at Owl Creek Bridge", "Ambrose Bierce"
    material = prompts.material("title", title=title, author=author)
    allowed = f"{title} by {author}"
    # heading + byline: "an occurrence ... by ambrose", "occurrence ... ambrose bierce" (title mode shows them)
    assert pr.text_windows_in(text, material) == 2
    assert pr.text_windows_in(text, material, allowed=allowed) == 0
    leaked = material + " None of them knew the colour of the sky."
    assert pr.text_windows_in(text, leaked, allowed=allowed) == 2   # 9 words of prose -> 2 windows of 8


def test_preparation_summary_tables():
    from judgelab.sage.protocol import prep_report as pr

    rep = pr.preparation_report(tiny_corpus(), mask_title_in_body=True)
    by_cat = pr.removed_by_category(rep)
    assert list(by_cat.index) == ["canonical", "llm", "pulp", "all"]
    assert by_cat.loc["all", "removed_heading"] == 13 and by_cat.loc["all", "leaks"] == 1
    top = pr.most_removed(rep, n=1)
    assert top["story_id"].tolist() == ["s2"]
    assert "leaks in content mode 1, in title mode 0" in pr.preparation_note(rep)


def test_a_characters_let_me_know_inside_the_story_is_its_text_not_a_note_to_the_reader():
    # Art or Artifice's "List" (1_Claude) has a character write "Let me know if you need any help
    # studying!" mid-story: the story's own words stay, and the leak check must not stop the run
    story = ("The list was taped to the fridge when Ana came home, three items in her sister's hand.\n\n"
             "Milk. Stamps. Call Mum before Sunday.\n\n"
             "Let me know if you need any help studying!\n\n"
             "Ana added a fourth item under it, pressed hard enough to tear the paper, and went upstairs.")
    sent = content_limit_text(story, "List", "Claude", story_id="1_Claude")
    assert "Let me know if you need any help studying!" in sent
    # a reply's offer to the reader is still a note, wherever it is
    assert lc.find_leaks("Let me know if you'd like me to expand it!", "List", "Claude")
