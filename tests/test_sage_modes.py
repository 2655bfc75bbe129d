"""Content-limit text (paratext stripped, names masked and verified), truncation, context policy."""
from __future__ import annotations

import pytest

from judgelab.sage.protocol import leak_check, modes, text_prep
from judgelab.sage.protocol.modes import (ContentLeakError, ContextTooLongError, content_limit_text,
                                          prepare_input, truncate_head_tail)


def find_leaks(text, title, author):
    return leak_check.find_leaks(text, title, author)

PULP = """THE SILENT ORBIT

                          By JANE Q. PUBLIC

                         Illustrated by SMITH

           She wanted the stars ... and the stars
                wanted something back!


Mara Quell stood at the viewport and counted the lights of the fleet. There were eleven of
them now, where yesterday there had been twelve, and nobody aboard would say why.

"You're counting again," said the captain behind her. "Stop it."

She did not stop. The silent orbit of the missing ship had been logged at dawn.

                                                      --JANE Q. PUBLIC
"""

CANONICAL = """THE GREY LANTERN.

I.

THE lamp-lighter of the old quarter was a man of habits, and the first of his habits was
doubt. He doubted the oil, he doubted the wicks, and he doubted, above all, the grey lantern
at the corner of the square, which had never once been lit in living memory.
"""


def test_pulp_paratext_is_stripped_and_names_masked():
    out = content_limit_text(PULP, "The Silent Orbit", "Jane Q. Public")
    assert out.startswith("Mara Quell stood at the viewport")
    assert "wanted something back" not in out          # editor's blurb after the illustrator credit
    assert "Illustrated" not in out and "SMITH" not in out
    assert "PUBLIC" not in out.upper().replace("[WITHHELD]", "")  # byline and signature gone
    # the text's own title phrase stays by default; the mask is a sensitivity setting
    assert out.endswith("The silent orbit of the missing ship had been logged at dawn.")
    masked = content_limit_text(PULP, "The Silent Orbit", "Jane Q. Public", mask_title_in_body=True)
    assert masked.endswith("The [withheld] of the missing ship had been logged at dawn.")
    assert find_leaks(masked, "The Silent Orbit", "Jane Q. Public") == []
    assert leak_check.find_leaks(out, "The Silent Orbit", "Jane Q. Public", check_title_in_body=False) == []


def test_canonical_heading_and_section_numeral_are_dropped():
    s = text_prep.prepare_text(CANONICAL, "The Grey Lantern", "Anon Writer")
    assert [par for _, par in s.dropped] == ["THE GREY LANTERN.", "I."]
    assert s.text.startswith("The lamp-lighter of the old quarter")      # book capitals, in the one typographic form
    assert s.n_title_masked == 0 and "the grey lantern at the corner" in s.text
    masked = text_prep.prepare_text(CANONICAL, "The Grey Lantern", "Anon Writer", mask_title_in_body=True)
    assert masked.n_title_masked == 1 and "the [withheld] at the corner" in masked.text


def test_author_name_variants_are_found_anywhere():
    pat = text_prep.author_pattern("Howard Phillips Lovecraft")
    for printed in ("H.P. LOVECRAFT", "H. P. Lovecraft", "Howard Phillips Lovecraft", "Howard Lovecraft"):
        assert pat.search(f"a story by {printed}."), printed
    assert not pat.search("the craft of love")   # surname alone is not matched
    leaks = find_leaks("He wrote to Howard Lovecraft.\n\nWEIRD", "Weird", "Howard Lovecraft")
    assert {x.kind for x in leaks} == {"author name", "title line"}


def test_masking_policy_off_keeps_the_phrase_but_a_title_line_still_raises():
    body = "The silent orbit was all she thought of, day and night, aboard the ship."
    assert content_limit_text("Heading words here\n\n" + body, "The Silent Orbit", "Jane Public",
                              mask_title_in_body=False).endswith(body)
    prose = " ".join(["She walked the long corridor again and again."] * 20)   # past the front region
    # a title line anywhere (a running head) is removed; the checker catches one left in
    out = content_limit_text(prose + "\n\nTHE SILENT ORBIT\n\nMore.", "The Silent Orbit", "Jane Public",
                             mask_title_in_body=False)
    assert "SILENT ORBIT" not in out and out.endswith("More.")
    assert [x.kind for x in find_leaks(prose + "\n\nTHE SILENT ORBIT", "The Silent Orbit", "Jane Public")] == ["title line"]
    # the author's name inside the narrative is always masked
    assert content_limit_text(prose + "\n\nShe met Jane Public there.", "The Silent Orbit",
                              "Jane Public").endswith("She met [withheld] there.")


def test_very_short_title_is_not_masked_in_prose():
    text = "HE\n\nBy H. P. Lovecraft\n\nI saw him on a sleepless night. He walked alone."
    out = content_limit_text(text, "He", "H. P. Lovecraft")
    assert out == "I saw him on a sleepless night. He walked alone."


def test_truncate_head_tail_keeps_whole_paragraphs_and_marks_the_cut():
    paras = [f"Paragraph {i} " + "word " * 20 for i in range(10)]
    text = "\n\n".join(p.strip() for p in paras)
    out, cut = truncate_head_tail(text, max_tokens=80, count=lambda s: len(s.split()))
    assert cut
    parts = out.split("\n\n")
    assert parts[0].startswith("Paragraph 0") and parts[-1].startswith("Paragraph 9")
    assert "omitted from the middle" in parts[1] and len(parts) == 3
    same, cut2 = truncate_head_tail(text, max_tokens=10_000)
    assert same == text and not cut2


def test_approx_tokens_known_value():
    assert modes.approx_tokens("one two three four") == 6          # ceil(1.35 * 4)
    assert modes.approx_tokens("Hi, there.") == 3                  # ceil(1.35*2 + 0.1*2)


def test_context_policy_error_refuses_and_head_tail_records():
    long_text = "\n\n".join("The man walked on through the snow and did not stop. " * 8 for _ in range(20))
    with pytest.raises(ContextTooLongError):
        prepare_input("content", text=long_text, title="Snow Walk", author="A. Writer",
                      max_text_tokens=200, context_policy="error")
    p = prepare_input("content", text=long_text, title="Snow Walk", author="A. Writer",
                      max_text_tokens=200, context_policy="head_tail")
    assert p.truncated and p.text_tokens <= 220 and p.original_tokens > 1000
    t = prepare_input("title", text=None, title="Snow Walk", author="A. Writer", max_text_tokens=200)
    assert not t.truncated and "Snow Walk" in t.material and "snow" not in t.material.lower().replace("snow walk", "")
    assert '"Snow Walk" by A. Writer' in t.material


def test_anonymous_author_setting_and_the_table_9_note():
    """Title mode names the author (for LLM stories: the model); the sensitivity setting does not."""
    import pandas as pd

    llm = prepare_input("title", text=None, title="Mushroom Season", author="chatgpt-4o-latest-2025-03-27",
                        max_text_tokens=200)
    assert "by chatgpt-4o-latest-2025-03-27" in llm.material
    anon = prepare_input("title", text=None, title="Mushroom Season", author="chatgpt-4o-latest-2025-03-27",
                         max_text_tokens=200, anonymous_author=True)
    assert "chatgpt" not in anon.material and '"Mushroom Season" by an unknown author' in anon.material
    t = modes.with_title_author_note(pd.DataFrame({"layer": ["L4"]}))
    assert "generating model" in t["title_author_note"].iloc[0] and "anonymous_author=True" in t["title_author_note"].iloc[0]
    assert "unknown author" in modes.with_title_author_note(pd.DataFrame({"layer": ["L4"]}), anonymous_author=True)[
        "title_author_note"].iloc[0]


def test_mirror_stories_leave_no_leaks():
    """Every public-domain story of the data mirror (if present) strips cleanly."""
    import csv
    import os
    from pathlib import Path

    from judgelab.corpus.text import clean_story

    mirror = Path(os.environ.get("DATA_MIRROR", "")) / "stories"
    if not (mirror / "manifest.csv").exists():
        pytest.skip("no data mirror")
    starts = {"dick_the_defenders": "Taylor sat back in his chair",
              "sheckley_watchbird": "When Gelsen entered",
              "anderson_duel_on_syrtis": "The night whispered the message",
              "joyce_araby": "North Richmond Street"}
    for r in csv.DictReader(open(mirror / "manifest.csv", encoding="utf-8")):
        raw = (mirror / r["category"] / f"{r['id']}.txt").read_text(encoding="utf-8")
        out = content_limit_text(clean_story(raw), r["title"], r["author"])
        assert leak_check.find_leaks(out, r["title"], r["author"], check_title_in_body=False) == []
        masked = content_limit_text(clean_story(raw), r["title"], r["author"], mask_title_in_body=True)
        assert find_leaks(masked, r["title"], r["author"]) == []
        if r["id"] in starts:
            assert out.startswith(starts[r["id"]]), (r["id"], out[:80])
