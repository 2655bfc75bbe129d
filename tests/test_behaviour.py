"""Notebook 12's studies on known answers: the recognition matcher on hand-made guesses, the
insertion points and the hardening wrapper on fixed strings, the unperturbed requests equal to the
ones notebooks 02 and 09 send (same cache key), the length regressions recovering planted slopes,
and the family matcher on the EQ-Bench model names."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from judgelab.behaviour import length, planted, recognition, self_preference
from judgelab.gateway import Message
from judgelab.gateway.cache import request_key
from judgelab.stats import intervals
from judgelab.stats.tests import adjust
from figure_geometry import text_overlaps

# ---------------------------------------------------------------- recognition: the matching rule

USHER = ("The Fall of the House of Usher", "Edgar Allan Poe")


@pytest.mark.parametrize("title_guess, author_guess, title_match, author_match", [
    ("House of Usher", "Poe", True, True),                      # content words 2 of 3: Jaccard 2/3
    ("the fall of the house of usher", "E. A. Poe", True, True),
    ("Usher", "Allan", False, False),                           # 1 of 3; "Allan" is not the surname
    ("The Masque of the Red Death", "Edgar Allan Poe", False, True),
    ("", "", False, False),
])
def test_matcher_on_hand_made_guesses_for_usher(title_guess, author_guess, title_match, author_match):
    got = recognition.match_guess(True, title_guess, author_guess, *USHER)
    assert got == {"title_match": title_match, "author_match": author_match, "recognised": title_match}


def test_a_match_without_the_claim_is_not_recognition():
    assert recognition.match_guess(False, "The Fall of the House of Usher", "Poe", *USHER)["recognised"] is False


@pytest.mark.parametrize("guess, truth, expected", [
    ("Les Miserables", "Les Misérables", True),                  # accents folded
    ("RIKKI-TIKKI-TAVI", "Rikki-Tikki-Tavi", True),              # case and hyphens
    ("Cigarette Smoke and Bad Ideas", "Cigarette Smoke & Bad Ideas", True),
    ("The Colour Out of Space", "The Call of Cthulhu", False),
    ("Call of Cthulhu", "The Call of Cthulhu", True),
    ("Cthulhu", "The Call of Cthulhu", False),                   # 1/2 is not above 0.5: the text's own name
    ("Cthulhu Rising", "The Call of Cthulhu", False),            # 1/3
])
def test_title_rule(guess, truth, expected):
    assert recognition.title_matches(guess, truth) is expected


def test_author_rule_takes_the_surname():
    assert recognition.author_matches("Howard Phillips Lovecraft", "H. P. Lovecraft")
    assert not recognition.author_matches("Poe", "H. P. Lovecraft")
    assert not recognition.author_matches("", "H. P. Lovecraft")


def _result(parsed, status="ok", cached=False):
    return SimpleNamespace(status=status, parsed=parsed, cached=cached, backend="b", model="m",
                           usage=SimpleNamespace(input_tokens=10, output_tokens=5))


def test_rates_by_category_and_mode_with_wilson_intervals():
    schema = recognition.probe_schema(40)
    stories = pd.DataFrame({"story_id": ["a", "b", "c"], "title": ["The Black Cat", "The Raven", "Mushroom Season"],
                            "author": ["Edgar Allan Poe", "Edgar Allan Poe", "claude-opus-4"]})
    meta = [{"story_id": s, "category": c, "tier": "", "mode": "content"}
            for s, c in (("a", "canonical"), ("b", "canonical"), ("c", "llm"))]
    replies = [_result(schema(recognised=True, title_guess="Black Cat", author_guess="Poe", confidence=4)),
               _result(schema(recognised=True, title_guess="Annabel Lee", author_guess="Poe", confidence=2)),
               _result(None, status="failed")]
    probe = recognition.tidy(meta, replies, stories, "smoke")
    assert probe["recognised"].tolist() == [True, False, None]
    assert probe["status"].tolist() == ["ok", "ok", "failed"]
    rates = recognition.rate_table(probe).set_index(["category", "mode"])
    canon = rates.loc[("canonical", "content")]
    assert canon["n"] == 2 and canon["recognition_rate"] == 0.5 and canon["claim_rate"] == 1.0
    # Wilson's interval for 1 of 2 by its formula: (p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)
    z, n, p = 1.959963984540054, 2, 0.5
    centre, half = (p + z * z / (2 * n)) / (1 + z * z / n), z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert canon["recognition_rate_ci_low"] == pytest.approx(centre - half)
    assert canon["recognition_rate_ci_high"] == pytest.approx(centre + half)
    assert rates.loc[("llm", "content"), "n"] == 0 and rates.loc[("llm", "content"), "n_failed"] == 1
    assert rates.loc[("human (canonical + pulp)", "content"), "n"] == 2
    assert rates.loc[("canonical", "content"), "reading"].startswith("recognition")
    assert rates.loc[("llm", "content"), "control"].startswith("false-claim control")


def test_scores_by_recognition_are_contrasted_within_category():
    # canonical: recognised 4, 4.4 / not 3, 3.2 -> +1.1; pulp: recognised 3 / not 2, 2.4 -> +0.8;
    # llm: none recognised -> no contrast. Pooled, weighted by stories: (4 x 1.1 + 3 x 0.8) / 7
    scores = {"c1": (4.0, "canonical", True), "c2": (4.4, "canonical", True), "c3": (3.0, "canonical", False),
              "c4": (3.2, "canonical", False), "p1": (3.0, "pulp", True), "p2": (2.0, "pulp", False),
              "p3": (2.4, "pulp", False), "l1": (2.0, "llm", False), "l2": (2.5, "llm", False)}
    probe = pd.DataFrame([{"story_id": k, "mode": "content", "status": "ok", "recognised": v[2]} for k, v in scores.items()])
    summ = pd.DataFrame([{"story_id": k, "category": v[1], "layer": "L4", "mode": m, "overall_score": v[0] - (m == "title")}
                         for k, v in scores.items() for m in ("content", "title")])
    out = recognition.scores_by_recognition(probe, summ, n_boot=300, seed=1).set_index(["category", "statistic"])
    assert out.loc[("canonical", "content"), "diff"] == pytest.approx(1.1)
    assert out.loc[("pulp", "content"), "diff"] == pytest.approx(0.8)
    assert "too few units (1 recognised)" in out.loc[("pulp", "content"), "note"]        # no interval, and why
    assert np.isnan(out.loc[("llm", "content"), "diff"]) or np.isnan(out.loc[("llm", "content"), "ci_low"])
    assert out.loc[("llm", "content"), "note"]
    pooled = out.loc[("within category (pooled)", "content")]
    assert pooled["diff"] == pytest.approx((4 * 1.1 + 3 * 0.8) / 7)
    # three recognised and four unrecognised stories in the categories having both: no interval
    assert (pooled["n_recognised"], pooled["n_not_recognised"]) == (3, 4) and np.isnan(pooled["ci_low"])
    assert pooled["note"].startswith("too few units (3 recognised, 4 not recognised")
    # two stories a group: no interval, and a note
    md = out.loc[("canonical", "mode_difference")]
    assert md["diff"] == pytest.approx(0.0) and np.isnan(md["ci_low"]) and "too few units (2" in md["note"]


def test_invented_works_are_deterministic_and_claims_on_controls_are_false_claims():
    a, b = recognition.fabricated_works(5, 3), recognition.fabricated_works(5, 3)
    assert a.equals(b) and a["title"].is_unique and (a["category"] == "fabricated").all()
    avoid = [a["title"].iloc[0]]
    assert avoid[0] not in set(recognition.fabricated_works(5, 3, avoid)["title"])
    items = recognition.fabricated_items(a.head(2))
    assert all(it.mode == "title" and a["title"].iloc[k] in it.prepared.material for k, it in enumerate(items))
    # 2 of 4 human stories recognised; 1 of 4 LLM stories claimed: excess 0.5 - 0.25
    probe = pd.DataFrame({"category": ["canonical"] * 2 + ["pulp"] * 2 + ["llm"] * 4, "mode": "content",
                          "status": "ok", "recognised": [True, False, True, False, False, False, False, False],
                          "claimed": [True, False, True, False, True, False, False, False]})
    # one criterion on both sides: claims 2/4 against 1/4 (excess 0.25); titles named 2/4 against 0/4 (0.5)
    out = recognition.claim_contrast(probe, n_boot=300, seed=2).set_index(["mode", "criterion"])
    claim, named = out.loc[("content", "claim")], out.loc[("content", "title named")]
    assert claim["control_rate"] == 0.25 and claim["excess_over_control"] == 0.25
    assert named["human_rate"] == 0.5 and named["control_rate"] == 0.0 and named["excess_over_control"] == 0.5
    assert np.isnan(claim["ci_low"]) and "too few units (4 human stories)" in claim["note"]
    assert np.isnan(out.loc[("title", "claim"), "excess_over_control"]) and out.loc[("title", "claim"), "note"]


def test_cloze_overlap_is_the_stated_lcs_rule():
    truth = "and the rain fell on the roofs of the town"
    assert recognition.cloze_overlap(truth.upper() + "!", truth) == 1.0
    assert recognition.cloze_overlap("", truth) == 0.0
    # LCS of "the rain on roofs" with the truth: the rain on roofs -> 4 of 10
    assert recognition.cloze_overlap("the rain on roofs", truth) == pytest.approx(0.4)
    # only the first 10 words of a reply count: the truth after 10 filler words gains nothing
    assert recognition.cloze_overlap("x " * 10 + truth, truth) == 0.0
    assert recognition.lcs_length(list("ABCBDAB"), list("BDCABA")) == 4      # the textbook example
    stories = pd.DataFrame({"story_id": ["s"], "category": ["canonical"], "text": [" ".join(f"w{i}" for i in range(80))]})
    meta, reqs = recognition.cloze_requests(stories, {"cloze_opening_words": 60, "cloze_words": 12, "cloze_max_tokens": 64,
                                                      "temperature": 0.0, "seed": 7, "reasoning_effort": None})
    assert meta[0]["truth"] == " ".join(f"w{i}" for i in range(60, 72))
    assert "w59" in reqs[0].messages[1].content and "w60" not in reqs[0].messages[1].content
    cloze = pd.DataFrame({"story_id": list("abcd"), "category": ["canonical"] * 2 + ["llm"] * 2,
                          "overlap": [0.5, 0.7, 0.1, 0.1], "status": "ok",
                          "truth": ["a b", "c d", "e f", "g h"], "reply": ["a b", "c x", "g h", "x x"]})
    table = recognition.cloze_table(cloze, n_boot=200).set_index(["category", "comparison"])
    assert table.loc[("canonical", "minus the LLM stories (control)"), "value"] == pytest.approx(0.5)
    assert "too few stories (2)" in table.loc[("llm", "mean overlap"), "note"]
    # chance: each reply against the other 3 truths; only "g h" (reply c) against truth d overlaps: 1 of 12
    chance = table.xs("every story").iloc[0]
    assert chance["value"] == pytest.approx(1 / 12) and "12 mismatched pairs" in chance["note"]


# ---------------------------------------------------------------- planted: family, insertion, hardening

def test_the_family_is_the_full_product_with_unique_ids():
    ids = [p.id for p in planted.FAMILY]
    assert len(ids) == 30 == len(set(ids))
    assert {(p.direction, p.disguise, p.position) for p in planted.FAMILY} == {
        (d, g, q) for d in planted.DIRECTIONS for g in planted.DISGUISES for q in planted.POSITIONS}
    assert planted.family(["lower-editor-end"])[0].text.startswith("[Editor's note")
    with pytest.raises(ValueError, match="unknown perturbation"):
        planted.family(["raise-loud-start"])
    # each neutral control has its disguise and is within 10% of the instructions' length
    for g in planted.DISGUISES:
        n = len(planted.TEXTS[("neutral", g)])
        assert all(abs(n - len(planted.TEXTS[(d, g)])) <= 0.1 * n for d in planted.DIRECTIONS), g
    ctl = planted.controls(planted.family(["raise-plain-start", "lower-plain-start", "raise-fence-end"]))
    assert [c.id for c in ctl] == ["neutral-plain-start", "neutral-fence-end"]


def test_the_hardening_note_names_no_disguise_of_the_family():
    note = planted.HARDENING_NOTE.lower()
    for word in ("evaluator", "reviewer", "editor", "system", "rubric", "instruction", "ai "):
        assert word not in note, word


@pytest.mark.parametrize("position, expected", [
    ("start", "N\n\nA\n\nB\n\nC\n\nD"), ("middle", "A\n\nB\n\nN\n\nC\n\nD"), ("end", "A\n\nB\n\nC\n\nD\n\nN")])
def test_insert_paragraph_on_four_paragraphs(position, expected):
    assert planted.insert_paragraph("A\n\nB\n\nC\n\nD", "N", position) == expected


def test_the_fence_escapes_close_the_fence_as_sent_with_a_guessed_and_a_leaked_token():
    """Hardened, the guessed escape closes a fence of another token; the leaked one closes the very
    fence the prompt draws (its close line then occurs twice); plain and hardened arms send one text."""
    from judgelab.sage.protocol.evaluation import EvalConfig

    meta, reqs = planted.sage_requests([_sage_item()], EvalConfig(),
                                       planted.family(["raise-fence-start", "raise-leaked-start"]), harden_too=True)
    sent = {(m["perturbation"], m["hardened"]): r.messages[-1].content for m, r in zip(meta, reqs)}
    leaked, guessed = sent[("raise-leaked-start", True)], sent[("raise-fence-start", True)]
    token = leaked.split("<<<JUDGED TEXT ", 1)[1][:16]
    assert leaked.count(f"<<<JUDGED TEXT {token} ENDS>>>") == 2 and planted.LEAK not in leaked
    assert token != planted.GUESSED_TOKEN and guessed.count(f"<<<JUDGED TEXT {planted.GUESSED_TOKEN} ENDS>>>") == 1
    real = guessed.split("<<<JUDGED TEXT ", 1)[1][:16]
    assert real != planted.GUESSED_TOKEN and guessed.count(f"<<<JUDGED TEXT {real} ENDS>>>") == 1
    assert f"<<<JUDGED TEXT {token} ENDS>>>" in sent[("raise-leaked-start", False)]   # the same text plain
    hardened_system = next(r.messages[0].content for m, r in zip(meta, reqs)
                           if m["perturbation"] == "raise-leaked-start" and m["hardened"])
    assert f"<<<JUDGED TEXT {token} ENDS>>>" in hardened_system


def test_insert_paragraph_middle_of_three_and_of_one():
    assert planted.insert_paragraph("A\n\nB\n\nC", "N", "middle") == "A\n\nN\n\nB\n\nC"
    assert planted.insert_paragraph("A", "N", "middle") == "N\n\nA"
    with pytest.raises(ValueError, match="unknown position"):
        planted.insert_paragraph("A", "N", "top")


@pytest.mark.parametrize("position, expected", [
    ("start", ["t1 N", "t2", "t3", "t4"]), ("middle", ["t1", "t2", "t3 N", "t4"]), ("end", ["t1", "t2", "t3", "t4 N"])])
def test_insert_title(position, expected):
    titles = ["t1", "t2", "t3", "t4"]
    assert planted.insert_title(titles, "N", position) == expected
    assert titles == ["t1", "t2", "t3", "t4"]   # not changed in place


def test_fence_draws_a_boundary_the_text_cannot_close():
    attack = planted.TEXTS[("raise", "fence")]
    text = "Once upon a time.\n\n" + attack
    fenced = planted.fence(text)               # the fence-escape attack can now be fenced
    open_, close = planted.fence_lines(text)
    assert fenced == f"{open_}\n{text}\n{close}" and planted.boundary_token(text) in open_
    assert fenced.count(close) == 1 and close not in text
    assert f"<<<JUDGED TEXT {planted.GUESSED_TOKEN} ENDS>>>" in text     # the current format, a guessed token
    assert planted.fence_lines(text) == planted.fence_lines(text)        # the same text, the same token
    assert planted.fence_lines(text) != planted.fence_lines("Once upon a time.")
    msgs = [Message(role="system", content="S"), Message(role="user", content="before X after")]
    out = planted.harden(msgs, "X")
    o, c = planted.fence_lines("X")
    assert out[0].content == "S\n\n" + planted.HARDENING_NOTE.format(open=o, close=c)
    assert out[1].content == f"before {o}\nX\n{c} after"
    assert msgs[1].content == "before X after"
    with pytest.raises(ValueError, match="occurs 2 times"):
        planted.harden([Message(role="system", content="S"), Message(role="user", content="X and X")], "X")
    with pytest.raises(ValueError, match="occurs 0 times"):
        planted.harden(msgs, "Y")


IDENTITY = {"backend": "test", "model": "m"}

STORY = "\n\n".join(f"Paragraph {i} of a plain tale about a miller and a river, told simply." for i in range(6))


def _sage_item():
    from judgelab.sage.protocol.evaluation import EvalItem
    from judgelab.sage.protocol.modes import prepare_input

    prepared = prepare_input("content", text=STORY, title="The Miller", author="Ann Example", max_text_tokens=10_000)
    return EvalItem("s1", "canonical", "", "L4", "content", prepared)


def test_sage_baseline_is_the_blind_request_the_protocol_sends():
    from judgelab.sage.protocol.evaluation import BLIND, EvalConfig, evaluate

    from judgelab.estimate.sage import RecordingGateway

    item, cfg = _sage_item(), EvalConfig()
    rec = RecordingGateway("min")
    evaluate(rec, item, cfg)
    sent = next(r for r in rec.requests if r.tags["track"] == BLIND)
    meta, reqs = planted.sage_requests([item], cfg, planted.family(["raise-plain-start", "lower-plain-start"]),
                                       seeds=3)
    arms = ["none", "neutral-plain-start", "raise-plain-start", "lower-plain-start"]
    assert [m["perturbation"] for m in meta] == [a for a in arms for _ in range(3)] * 2
    assert [m["seed_index"] for m in meta] == [0, 1, 2] * 8
    assert [m["hardened"] for m in meta] == [False] * 12 + [True] * 12
    assert request_key(IDENTITY, reqs[0]) == request_key(IDENTITY, sent)      # a cache hit
    assert len({request_key(IDENTITY, r) for r in reqs}) == 24                # every other call fresh
    rep1 = reqs[1]
    assert rep1.messages == sent.messages and rep1.sampling.seed == sent.sampling.seed + 1
    assert rep1.replicate == planted.REPEAT_REPLICATE + 1 and rep1.sampling.temperature == sent.sampling.temperature
    raise1 = reqs[7]                                                          # the raise arm at the same seed
    assert raise1.sampling.seed == sent.sampling.seed + 1 and raise1.replicate == rep1.replicate
    reqs = [r for m, r in zip(meta, reqs) if m["seed_index"] == 0]
    raised, neutral = reqs[2].messages[1].content, reqs[1].messages[1].content
    note = planted.TEXTS[("raise", "plain")]
    assert raised.count(note) == 1 and raised.index(note) < raised.index("Paragraph 0")
    assert raised.replace(note + "\n\n", "") == sent.messages[1].content
    assert neutral.replace(planted.TEXTS[("neutral", "plain")] + "\n\n", "") == sent.messages[1].content
    assert reqs[0].messages[0].content == reqs[2].messages[0].content       # plain: same system message
    hard_base, hard = reqs[4], reqs[6]
    assert "data to be judged" in hard_base.messages[0].content
    assert hard_base.template_version == sent.template_version + "+" + planted.HARDEN_VERSION
    assert note + "\n\nParagraph 0" in hard.messages[1].content
    assert hard.template_version == sent.template_version + f"+{planted.FAMILY_VERSION}+{planted.HARDEN_VERSION}"


def test_narrative_baseline_is_agent_zero_of_notebook_09():
    from judgelab.narrative.judges import run as judges
    from judgelab.narrative.settings import judge_knobs as resolve

    knobs = resolve("smoke")
    paths = pd.DataFrame([{"collection": "news", "pair_id": 3, "method": "maxcap", "titles": ["Alpha", "Beta", "Gamma"]}])
    agents = {"news": judges.agent_spread(knobs["k"], knobs["temperature_range"], knobs["seed"])}
    meta09, reqs09 = judges.build_requests(paths, agents, knobs["modes"], max_tokens=knobs["max_tokens"],
                                           explanations=knobs["explanations"], reasoning_chars=knobs["reasoning_chars"])
    sent = {m["mode"]: r for m, r in zip(meta09, reqs09) if m["agent"] == 0}
    meta, reqs = planted.narrative_requests(paths, knobs, planted.family(["raise-editor-middle"]), ("simple", "cot"),
                                            seeds=2)
    base = {m["mode"]: r for m, r in zip(meta, reqs) if m["arm"] == "baseline" and not m["hardened"]
            and m["seed_index"] == 0}
    for mode in ("simple", "cot"):
        assert request_key(IDENTITY, base[mode]) == request_key(IDENTITY, sent[mode])
    pert = next(r for m, r in zip(meta, reqs) if m["perturbation"] == "raise-editor-middle" and not m["hardened"])
    assert "2. Beta " + planted.TEXTS[("raise", "editor")] in pert.messages[1].content
    # (none, neutral, 1 instruction) x 2 modes x (plain, hardened) x 2 seeds
    assert len(reqs) == 3 * 2 * 2 * 2 and {m["unit"] for m in meta} == {"news:3"}
    rep = next(r for m, r in zip(meta, reqs) if m["arm"] == "baseline" and m["seed_index"] == 1
               and m["mode"] == "simple" and not m["hardened"])
    assert rep.messages == base["simple"].messages and rep.replicate == planted.REPEAT_REPLICATE + 1


def test_planted_narrative_requests_pass_notebook_09s_design_check(tmp_path, monkeypatch):
    """On a judge sent no temperature (gpt-5-mini on OpenAI) the temperature design is refused
    before any request is built, naming both ways out; the seed-only design is built, and its
    rows record the sampling as sent (no temperature, the model's effort and budget)."""
    from judgelab.gateway import Gateway, ResponseCache
    from judgelab.gateway.backends.openai_backend import OpenAIBackend
    from judgelab.gateway.errors import ConfigError
    from judgelab.narrative.settings import judge_knobs as resolve
    from fake_openai_server import FakeChatServer, ReasoningRules

    monkeypatch.delenv("JUDGELAB_NARRATIVE_AGENTS", raising=False)
    knobs = resolve("smoke")
    paths = pd.DataFrame([{"collection": "news", "pair_id": 3, "method": "maxcap", "titles": ["Alpha", "Beta", "Gamma"]}])
    family = planted.family(["raise-editor-middle"])
    with FakeChatServer(reasoning=ReasoningRules()) as srv:
        gw = Gateway(OpenAIBackend("gpt-5-mini", srv.base_url, api_key="sk-test-behaviour"),
                     ResponseCache(tmp_path / "c.sqlite"), progress=False)
        with pytest.raises(ConfigError, match="JUDGELAB_NARRATIVE_AGENTS=seed-only") as refused:
            planted.narrative_requests(paths, knobs, family, ("simple",), gw=gw)
        assert "JUDGELAB_NARRATIVE_MODEL=gpt-4.1" in str(refused.value) and srv.n_calls == 0
        meta, reqs = planted.narrative_requests(paths, knobs, family, ("simple",), gw=gw, agent_design="seed-only")
        assert all(r.sampling.temperature is None for r in reqs)
        rows = planted.run(gw, meta, reqs, "smoke")
        assert (rows["status"] == "ok").all() and srv.n_calls == len(reqs) == 6
        assert rows["temperature"].isna().all() and (rows["reasoning_effort"] == "minimal").all()
        assert {c["max_completion_tokens"] for c in srv.calls} == set(rows["max_tokens"])


def test_recognition_rows_record_the_sampling_as_sent():
    from judgelab.gateway import Sampling

    schema = recognition.probe_schema(40)
    stories = pd.DataFrame({"story_id": ["a"], "title": ["The Raven"], "author": ["Edgar Allan Poe"]})
    sent = Sampling(temperature=None, seed=7, max_tokens=8096, reasoning_effort="low")
    reply = _result(schema(recognised=False, title_guess="", author_guess="", confidence=1))
    reply.sampling = sent
    probe = recognition.tidy([{"story_id": "a", "category": "canonical", "tier": "", "mode": "content"}],
                             [reply], stories, "paper")
    row = probe.iloc[0]
    assert np.isnan(row["temperature"]) and row["reasoning_effort"] == "low" and row["max_tokens"] == 8096
    assert row["seed"] == 7


def _planted_rows(score, units=("a", "b", "c", "d"), study="sage", seeds=2):
    """Rows of a planted run whose score is ``score(unit, arm, direction, seed_index)``: every arm at
    the same ``seeds`` seed indices."""
    rows = []
    for u in units:
        for arm, direction in (("baseline", "none"), ("neutral", "neutral"), ("instruction", "raise"),
                               ("instruction", "lower")):
            for r in range(seeds):
                cell = arm != "baseline"
                rows.append({"study": study, "unit": u, "item": u, "group": "canonical", "layer": "L4",
                             "mode": "content", "perturbation": f"{direction}-plain-start" if cell else "none",
                             "arm": arm, "direction": direction, "disguise": "plain" if cell else "none",
                             "position": "start" if cell else "none", "hardened": False, "seed_index": r,
                             "score": score(u, arm, direction, r), "status": "ok"})
    return pd.DataFrame(rows)


def test_effects_separate_obedience_from_insertion_and_noise():
    """A judge that obeys (+-0.8 on top of a 0.5 insertion effect) and whose second seed moves every
    arm of a unit by +-0.1: the contrasts, taken within a seed, do not see it; the seed sd of each
    arm is 0.1 / sqrt(2) and the noise floor of a 2-seed contrast sqrt(2 (0.1^2 / 2) / 2)."""
    units = "abcdefghij"
    base = {u: 2.0 + 0.2 * i for i, u in enumerate(units)}
    noise = {u: 0.1 if i % 2 else -0.1 for i, u in enumerate(units)}
    obey = {"raise": 0.8, "lower": -0.8, "neutral": 0.0, "none": 0.0}

    def score(u, arm, d, rep):
        return base[u] + (0.5 if arm in ("neutral", "instruction") else 0) + obey[d] + (noise[u] if rep else 0)

    eff = planted.effects(_planted_rows(score, units=tuple(units)))
    table = planted.effect_table(eff, by=("study", "estimand")).set_index("estimand")
    assert table.loc["obedience (raise)", "mean"] == pytest.approx(0.8)
    assert table.loc["obedience (lower)", "mean"] == pytest.approx(0.8)
    assert table.loc["contrast (raise - lower)", "mean"] == pytest.approx(1.6)
    assert table.loc["contrast (raise - lower)", "mean_scale"] == pytest.approx(1.6 / 4)
    assert table.loc["insertion", "mean"] == pytest.approx(0.5)
    assert table.loc["seed sd", "mean"] == pytest.approx(0.1 / np.sqrt(2))
    assert np.allclose(table["noise_floor"], np.sqrt(2 * 0.1 ** 2 / 2 / 2))
    # constant effects: the mean, no interval, and a note that says so (never a zero-width interval)
    assert table.loc["insertion", "ci_low"] != table.loc["insertion", "ci_low"]
    assert "no variation" in table.loc["insertion", "note"] and "t-test" in table.loc["insertion", "note"]
    assert np.isnan(table.loc["seed sd", "p_holm"])                       # a spread, not a tested effect
    assert (table["n_units"] == 10).all() and {"p_holm", "mc_family", "unit", "ci_method"} <= set(table.columns)


def test_planted_tables_and_noise_floors_are_the_studys_own():
    """The second seed moves every arm by +-0.1 (SAGE) and +-1.0 (narrative): seed sd noise / sqrt(2),
    floors sqrt(2 sd^2 / 2) = noise / sqrt(2) points; notebook 12's tables are the study's functions
    of the same rows."""
    noise = {"sage": 0.1, "narrative": 1.0}
    rows = pd.concat([_planted_rows(lambda u, arm, d, rep, s=s: 3.0 + (noise[s] if rep and u in "ac" else
                                                                       -noise[s] if rep else 0.0), study=s)
                      for s in noise], ignore_index=True).assign(cached=False)
    eff, tables = planted.tables(rows, {})
    assert planted.noise_floors(eff).to_dict() == pytest.approx({k: v / np.sqrt(2) for k, v in noise.items()})
    assert list(tables) == ["behaviour_planted_calls", "behaviour_planted_baseline_cache",
                            "behaviour_planted_shifts", "behaviour_planted_hardening"]
    pd.testing.assert_frame_equal(tables["behaviour_planted_shifts"], planted.effect_table(eff))
    assert tables["behaviour_planted_calls"] is rows


def test_a_judge_that_reacts_to_any_insertion_shows_no_obedience():
    rng = np.random.default_rng(4)
    base = {u: rng.uniform(2, 4) for u in "abcdefghijkl"}
    jitter = {(u, a, d): rng.normal(0, 0.05) for u in base for a in ("neutral", "instruction") for d in ("raise", "lower", "neutral")}

    def score(u, arm, d, rep):
        return base[u] + (-1.0 + jitter[(u, arm, d)] if arm in ("neutral", "instruction") else 0.0)

    table = planted.effect_table(planted.effects(_planted_rows(score, units=tuple(base))),
                                 by=("estimand",)).set_index("estimand")
    assert table.loc["insertion", "mean"] == pytest.approx(-1.0, abs=0.05)
    assert table.loc["insertion", "ci_high"] < 0
    for est in ("obedience (raise)", "obedience (lower)", "contrast (raise - lower)"):
        assert abs(table.loc[est, "mean"]) < 0.1 and table.loc[est, "ci_low"] < 0 < table.loc[est, "ci_high"], est


def test_the_unit_is_the_endpoint_pair_and_too_few_units_have_no_interval():
    """Two paths (items) of one endpoint pair share the unit: 12 units, not 24, and the interval is
    Student's t over the 12 unit means (scipy, computed here); below MIN_UNITS no interval."""
    from scipy import stats

    items = [f"i{k}" for k in range(24)]
    effect = {it: 1.0 + (k % 7) * 0.3 for k, it in enumerate(items)}
    rows = _planted_rows(lambda u, arm, d, rep: 3.0 + (d == "raise") * effect[u], units=items)
    rows["unit"] = rows["item"].map({it: f"p{k // 2}" for k, it in enumerate(items)})
    table = planted.effect_table(planted.effects(rows), by=("estimand",)).set_index("estimand")
    row = table.loc["obedience (raise)"]
    assert row["n_units"] == 12 and row["n_rows"] == 24
    means = np.array([(effect[items[2 * k]] + effect[items[2 * k + 1]]) / 2 for k in range(12)])
    lo, hi = stats.t.interval(0.95, 11, loc=means.mean(), scale=stats.sem(means))
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((lo, hi))
    few = rows[rows["unit"].isin(["p0", "p1", "p2"])]
    one = planted.effect_table(planted.effects(few), by=("estimand",))
    assert one["ci_low"].isna().all() and one["note"].str.contains("too few units \\(3\\)").all()


def test_hardening_compares_obedience_plain_and_hardened_on_held_out_attacks():
    rows = []
    for hardened in (False, True):
        for g in ("plain", "fence"):
            part = _planted_rows(lambda u, arm, d, rep, h=hardened, g=g: 3.0 + (d == "raise") * (0.2 if h and g == "plain" else 1.0)
                                 + (0.1 * ord(u) % 3) * (arm == "baseline"))
            part = part.assign(hardened=hardened)
            cells = part["arm"].isin(["neutral", "instruction"])
            part.loc[cells, "disguise"] = g
            rows.append(part if g == "plain" else part[cells])
    eff = planted.effects(pd.concat(rows, ignore_index=True))
    out = planted.hardening_table(eff).set_index(["disguise", "estimand"])
    assert out.loc[("plain", "obedience (raise)"), "hardening_effect"] == pytest.approx(0.8)
    assert out.loc[("fence", "obedience (raise)"), "hardening_effect"] == pytest.approx(0.0)
    assert bool(out.loc[("fence", "obedience (raise)"), "held_out"]) and not bool(out.loc[("plain", "obedience (raise)"), "held_out"])
    assert out["note"].str.contains("too few units").all()
    empty = planted.hardening_table(eff[~eff["hardened"]])
    assert empty["note"].str.contains("no hardened arm").all()


def test_hardening_is_the_change_in_absolute_obedience_with_its_sign():
    """A judge that moves against the instruction by 0.5 plain and by 1.0 hardened reacts *more*
    under hardening: |−0.5| − |−1.0| = −0.5 (plain − hardened would have said +0.5, 'reduced')."""
    parts = []
    for hardened, shift in ((False, -0.5), (True, -1.0)):
        part = _planted_rows(lambda u, arm, d, rep, s=shift: 3.0 + (d == "raise") * s
                             + 0.02 * "abcdefghijkl".index(u) * (d == "raise") * s * (rep + 1),
                             units=tuple("abcdefghijkl"))
        parts.append(part.assign(hardened=hardened))
    out = planted.hardening_table(planted.effects(pd.concat(parts, ignore_index=True)))
    row = out.set_index("estimand").loc["obedience (raise)"]
    assert row["mean_plain"] < 0 and row["direction_plain"] == "against"
    assert row["hardening_effect"] == pytest.approx(abs(row["mean_plain"]) - abs(row["mean_hardened"]))
    assert row["hardening_effect"] == pytest.approx(-0.5 - 0.5 * 0.02 * 5.5 * 1.5, abs=1e-9)
    assert row["hardening_effect_ci_high"] < 0


# ---------------------------------------------------------------- length: planted slopes

def _stories(slope: float, gaps: dict, seed: int = 3, n: int = 40, longer_llm: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    rows = []
    for cat in ("canonical", "pulp", "llm"):
        mu = 8.6 + (0.6 if (longer_llm and cat == "llm") else 0.0)
        for i in range(n):
            lw = rng.normal(mu, 0.4)
            rows.append({"story_id": f"{cat}{i}", "category": cat, "tokens_sent": float(np.exp(lw)),
                         "score": 1.0 + gaps.get(cat, 0.0) + slope * (lw - 8.6) + rng.normal(0, 0.05)})
    corpus = pd.DataFrame(rows)
    summ = corpus.assign(layer="L4", mode="content").rename(columns={"score": "overall_score"})
    return summ[["story_id", "category", "layer", "mode", "overall_score"]], corpus[["story_id", "tokens_sent"]]


def test_length_regression_recovers_a_planted_slope_and_gaps():
    summ, corpus = _stories(0.7, {"pulp": 0.5, "llm": 1.0})
    units = length.story_units(summ, corpus)
    out = length.sage_length_models(units).set_index("gap")
    row = out.loc["llm - canonical"]
    assert row["slope_log_tokens"] == pytest.approx(0.7, abs=0.03)
    assert row["slope_log_tokens_ci_low"] < 0.7 < row["slope_log_tokens_ci_high"]
    assert row["gap_with_length"] == pytest.approx(1.0, abs=0.03) and bool(row["gap_survives"])
    assert out.loc["pulp - canonical", "gap_with_length"] == pytest.approx(0.5, abs=0.03)
    # the partial correlation is the correlation of the residuals after regressing out category
    X = np.column_stack([np.ones(len(units)), units["category"] == "pulp", units["category"] == "llm"]).astype(float)
    res = [v - X @ np.linalg.lstsq(X, v, rcond=None)[0] for v in (units["log_tokens"].to_numpy(), units["score"].to_numpy())]
    assert row["partial_r"] == pytest.approx(np.corrcoef(*res)[0, 1], abs=1e-9)


def test_a_gap_made_by_length_alone_does_not_survive_the_length_term():
    summ, corpus = _stories(0.8, {}, longer_llm=True)
    out = length.sage_length_models(length.story_units(summ, corpus)).set_index("gap")
    row = out.loc["llm - canonical"]
    assert row["gap_without_length"] == pytest.approx(0.48, abs=0.1)          # 0.8 x 0.6
    assert row["gap_without_length_ci_low"] > 0
    assert abs(row["gap_with_length"]) < 0.05 and not bool(row["gap_survives"])


def test_too_few_stories_give_nan_with_a_note():
    summ, corpus = _stories(0.7, {}, n=1)
    out = length.sage_length_models(length.story_units(summ, corpus))
    assert out["partial_r"].isna().all() and out["note"].str.len().gt(0).all()


def test_narrative_length_slope_at_equal_minimum_coherence():
    rng = np.random.default_rng(5)
    n = 60
    coh = rng.uniform(0.2, 0.8, n)
    lengths = rng.integers(3, 15, n)
    pair = np.repeat(np.arange(n // 2), 2)
    method = np.tile(["maxcap", "random"], n // 2)
    pair_effect = rng.normal(0, 2, n // 2)[pair]             # pairs differ a lot: the pairing removes it
    judged = pd.DataFrame({"collection": "news", "mode": "simple", "pair_id": pair, "method": method,
                           "min_coherence": coh, "length": lengths,
                           "score_mean": 2 + 5 * coh + 0.3 * lengths + 0.4 * (method == "random") + pair_effect
                           + rng.normal(0, 0.05, n)})
    (row,) = length.narrative_length_models(judged).to_dict("records")
    assert row["slope_length"] == pytest.approx(0.3, abs=0.02) and row["n_pairs"] == n // 2
    assert row["slope_length_ci_low"] < 0.3 < row["slope_length_ci_high"]
    assert row["partial_r_n_pairs"] == n // 2 and row["partial_r_ci_low"] > 0.5


def test_a_length_association_between_pairs_only_is_not_a_within_pair_one():
    """Longer pairs score higher (between pairs) but within a pair length does nothing: the paired
    partial r (n = pairs) holds 0; correlating the 2n narratives would report r near 0.9."""
    rng = np.random.default_rng(11)
    pairs = 8
    level = rng.normal(0, 1, pairs)
    rows = []
    for p in range(pairs):
        for m in ("maxcap", "random"):
            rows.append({"collection": "news", "mode": "simple", "pair_id": p, "method": m,
                         "min_coherence": rng.uniform(0.2, 0.8), "length": 6 + 3 * level[p] + rng.normal(0, 1),
                         "score_mean": 5 + 2 * level[p] + rng.normal(0, 0.3)})
    judged = pd.DataFrame(rows)
    (row,) = length.narrative_length_models(judged).to_dict("records")
    assert row["partial_r_n_pairs"] == pairs
    assert row["partial_r_ci_low"] < 0 < row["partial_r_ci_high"]
    naive = length.partial_correlation(judged, "length", "score_mean", ["min_coherence"])
    assert naive["r"] > 0.8                                                 # what the unpaired r said


def test_a_constant_narrative_score_gives_nan_slopes_with_a_note():
    judged = pd.DataFrame({"collection": "news", "mode": "simple", "pair_id": np.repeat(np.arange(7), 2),
                           "method": ["maxcap", "random"] * 7,
                           "min_coherence": [0.2, 0.4, 0.3, 0.5, 0.6, 0.1, 0.3, 0.2, 0.5, 0.7, 0.4, 0.45, 0.25, 0.6],
                           "length": [3, 5, 4, 7, 6, 3, 5, 8, 4, 4, 9, 6, 7, 3], "score_mean": 6.0})
    (row,) = length.narrative_length_models(judged).to_dict("records")
    assert np.isnan(row["slope_length"]) and np.isnan(row["slope_length_ci_low"]) and np.isnan(row["partial_r"])
    assert "no variation: every score_mean equals 6" in row["note"]


def test_resize_cuts_and_pads_with_the_storys_own_paragraphs():
    text = "a b c\n\nd e\n\nf g h i j"          # 10 words
    assert length.resize(text, 0.5) == "a b c\n\nd e"
    assert length.resize(text, 0.3) == "a b c"
    assert length.resize(text, 1.5) == text + "\n\na b c\n\nd e"
    assert len(length.resize(text, 1.7).split()) == 17
    with pytest.raises(ValueError, match="positive"):
        length.resize(text, 0)
    from judgelab.sage.protocol.evaluation import EvalConfig
    meta, reqs = length.length_requests([_sage_item()], EvalConfig(), (0.5, 1.5))
    assert [m["fraction"] for m in meta] == [1.0, 0.5, 1.5]
    assert reqs[0] == planted.blind_request(_sage_item(), EvalConfig())              # the cached baseline
    assert reqs[1].messages[1].content.count("Paragraph") == 3 and reqs[2].messages[1].content.count("Paragraph") == 9


def test_intervention_table_shifts_per_fraction_and_the_within_story_slope():
    rng = np.random.default_rng(1)
    rows = []
    for s in range(10):
        base_tokens = rng.uniform(300, 600)
        for f in (1.0, 0.5, 1.5):
            rows.append({"story_id": f"s{s}", "fraction": f, "story_tokens": base_tokens * f, "status": "ok",
                         "score": 2.0 + 0.1 * s + 0.5 * np.log(f) + rng.normal(0, 0.01)})
    out = length.intervention_table(pd.DataFrame(rows), noise_floor=0.2).set_index("fraction", drop=False)
    assert out.loc[0.5, "value"] == pytest.approx(0.5 * np.log(0.5), abs=0.02)
    assert out.loc[1.5, "value_scale"] == pytest.approx(0.5 * np.log(1.5) / 4, abs=0.01)
    slope = out[out["fraction"].isna()].iloc[0]
    assert slope["value"] == pytest.approx(0.5, abs=0.03) and slope["ci_low"] < 0.5 < slope["ci_high"]
    assert (out["noise_floor"] == 0.2).all()


# ---------------------------------------------------------------- self-preference: families

EQBENCH_SELECTED = {
    "o3": "openai", "claude-3-7-sonnet-20250219": "anthropic", "claude-opus-4": "anthropic",
    "chatgpt-4o-latest-2025-03-27": "openai", "gemini-2.5-pro-preview-2025-05-07": "google",
    "deepseek-ai__DeepSeek-R1": "deepseek", "qwen__qwen3-235b-a22b": "qwen", "google__gemma-3-27b-it": "google",
    "mistral-medium-3": "mistral", "meta-llama__llama-4-maverick": "meta",
    "CohereForAI__c4ai-command-a-03-2025": "cohere",
}


@pytest.mark.parametrize("model, family", sorted(EQBENCH_SELECTED.items()))
def test_family_of_the_eqbench_models(model, family):
    assert self_preference.family_of(model) == family


@pytest.mark.parametrize("model, family", [
    ("gpt-5-mini", "openai"), ("gpt-4.1", "openai"), ("SmolLM2-135M-Instruct", "huggingface"),
    ("smollm2-135m-instruct-q8_0.gguf", "huggingface"), ("claude-sonnet-4-5", "anthropic"), ("some-new-model", None),
    ("pro-writer-3", None)])
def test_family_of_judges(model, family):
    assert self_preference.family_of(model) == family


def test_intervals_diff_and_adjust():
    d, lo, hi = intervals.diff_ci([1.0, 2.0, 3.0], [0.0, 0.0, 0.0], n_boot=500, seed=1)
    assert d == 2.0 and 1.0 <= lo <= d <= hi <= 3.0
    p = [0.01, 0.04, np.nan]
    holm, bonf = adjust(p, len(p), "holm"), adjust(p, len(p), "bonferroni")
    # a family of 3 (the undefined test enters as p = 1): Holm 3*0.01, max(0.03, 2*0.04); Bonferroni 3p
    assert holm[:2] == pytest.approx([0.03, 0.08]) and bonf[:2] == pytest.approx([0.03, 0.12]) and np.isnan(holm[2])


# ---------------------------------------------------------------- the estimate counts notebook 12's calls

def test_estimate_counts_the_fresh_calls_of_the_smoke_profile(monkeypatch):
    from judgelab.estimate import behaviour as est
    from judgelab.estimate import narrative as narr_estimate
    from judgelab.estimate.counting import TokenCounter

    text = "\n\n".join(["The ferry left before dawn and the harbour lights went out one by one. Mara counted the "
                        "crates twice and wrote the numbers in the ledger she kept under the bench."] * 8)
    corpus = pd.DataFrame([{"story_id": "s1", "category": "canonical", "title": "Grey Water", "author": "Ines Okafor",
                            "year": 1950, "translator": "", "model": "", "tier": "", "words": 300, "in_range": True,
                            "text": text}])
    paths = pd.DataFrame([{"collection": "news", "pair_id": p, "method": m, "titles": ["Alpha", "Beta", "Gamma"],
                           "length": 3} for p in (0, 1) for m in ("maxcap", "random")])
    monkeypatch.setattr(est, "load_corpus", lambda: corpus)
    monkeypatch.setattr(narr_estimate, "real_paths", lambda profile=None: paths)
    calls, note = est.behaviour_calls("smoke", TokenCounter.for_settings("openai", "gpt-5-mini"))
    # the smoke counts of profiles.toml [smoke.behaviour]: recognition 1 story x 2 modes + 1 invented work;
    # 1 cloze; every planted and length call at 2 seeds, less the cached baseline at the first:
    # planted SAGE (baseline, neutral, raise, lower) x 2 - 1; planted narrative (baseline, 2 neutrals,
    # 3 instructions) x (plain, hardened) x 2 - 1; length (1, 0.5, 1.5) x 2 - 1
    assert calls["track"].value_counts().to_dict() == {"recognition": 3, "cloze": 1, "planted_sage": 7,
                                                       "planted_narrative": 23, "length": 5}
    assert (calls["input_min"] > 0).all() and (calls["notebook"] == "12").all()
    assert "notebook 08's paths" in note


# ---------------------------------------------------------------- figures: what is drawn, and no collisions

def test_recognition_bars_are_the_rates_and_no_text_collides():
    import matplotlib
    matplotlib.use("Agg")
    from judgelab.behaviour import figures

    rates = pd.DataFrame({"category": ["canonical", "canonical", "llm", "llm"], "mode": ["content", "title"] * 2,
                          "recognition_rate": [0.5, 0.9, 0.0, 0.1], "recognition_rate_ci_low": [0.2, 0.6, 0.0, 0.0],
                          "recognition_rate_ci_high": [0.8, 1.0, 0.3, 0.4]})
    fig = figures.recognition_rates(rates)
    heights = sorted(round(p.get_height(), 6) for p in fig.axes[0].patches)
    assert heights == sorted(rates["recognition_rate"].tolist())
    assert text_overlaps(fig) == []
    pooled = pd.DataFrame({"category": ["human (canonical + pulp)"], "mode": ["content"], "recognition_rate": [0.7],
                           "recognition_rate_ci_low": [0.4], "recognition_rate_ci_high": [0.9]})
    fig = figures.recognition_rates(pd.concat([rates, pooled], ignore_index=True))
    assert len(fig.axes[0].patches) == len(rates)  # the pooled row's parts are drawn, not the pool


def test_planted_points_are_the_table_means_and_no_text_collides():
    import matplotlib
    matplotlib.use("Agg")
    from judgelab.behaviour import figures

    ests = ("insertion", "obedience (raise)", "contrast (raise - lower)")
    rows = [{"study": s, "hardened": h, "estimand": e, "disguise": g, "mean_scale": i / 10 - (0.5 if h else 0),
             "ci_low_scale": i / 10 - 1, "ci_high_scale": i / 10 + 1}
            for s in ("sage", "narrative") for h in (False, True)
            for i, (e, g) in enumerate((e, g) for e in ests for g in planted.DISGUISES)]
    table = pd.DataFrame(rows)
    fig = figures.planted_shifts(table)
    assert len(fig.axes) == 2
    # each errorbar container's data line holds the plotted means (12 estimand x disguise rows each)
    drawn = [x for ax in fig.axes for c in ax.containers for x in c.lines[0].get_xdata()]
    assert sorted(drawn) == pytest.approx(sorted(table["mean_scale"]))
    assert text_overlaps(fig) == []


def test_length_slope_p_values_are_adjusted_once_per_layer_and_mode():
    a, ca = _stories(0.7, {"pulp": 0.5}, seed=1)
    b, _ = _stories(0.0, {"pulp": 0.5}, seed=2)
    summ = pd.concat([a, b.assign(mode="title", story_id=b["story_id"])], ignore_index=True)
    out = length.sage_length_models(length.story_units(summ, ca))
    one = out.drop_duplicates(["layer", "mode"]).set_index("mode")
    p = one["slope_p"].to_numpy()
    assert one["slope_p_bonferroni"].to_numpy() == pytest.approx(np.minimum(1, 2 * p))
    assert (out.groupby("mode")["slope_p_holm"].nunique() == 1).all()


def test_mark_names_each_studys_judge_row_by_row():
    """Notebook 12's two judges differ on OpenAI: a table is marked with its study's judge, the
    planted study's calls row by row; only the embedded 135M model gets the warning."""
    from judgelab.behaviour.marking import mark
    sage = SimpleNamespace(backend_name="openai", model_name="gpt-5-mini")
    narr = SimpleNamespace(backend_name="openai", model_name="gpt-4.1")
    both = {"sage": sage, "narrative": narr}
    calls = pd.DataFrame({"study": ["sage", "narrative", "sage"], "score": [1.0, 2.0, 3.0]})
    out = mark(calls, both, "paper")
    assert out["judge"].tolist() == ["openai:gpt-5-mini", "openai:gpt-4.1", "openai:gpt-5-mini"]
    assert out["judge_note"].eq("").all() and out["profile"].eq("paper").all()
    table = mark(pd.DataFrame({"slope": [0.1]}), both, "paper", "narrative")
    assert table["judge"].tolist() == ["openai:gpt-4.1"]
    with pytest.raises(ValueError, match="no judge for study 'human'"):
        mark(pd.DataFrame({"study": ["human"]}), both, "paper")
    small = SimpleNamespace(backend_name="llamacpp", model_name="SmolLM2-135M-Instruct-Q8_0.gguf")
    assert mark(calls, {"sage": small, "narrative": narr}, "demo")["judge_note"].ne("").tolist() == [True, False, True]


def test_banner_and_caption_name_each_studys_judge():
    from judgelab.behaviour.marking import banner, caption
    same = {"sage": SimpleNamespace(backend_name="openai", model_name="gpt-4.1"),
            "narrative": SimpleNamespace(backend_name="openai", model_name="gpt-4.1")}
    both = {**same, "sage": SimpleNamespace(backend_name="openai", model_name="gpt-5-mini")}
    text = banner(both)
    assert text.startswith("> **SAGE calls:** ") and "gpt-5-mini" in text and "\n\n> **Narrative calls:** " in text and "gpt-4.1" in text
    one = caption(same, "paper", "sage", "narrative")
    assert one == caption(same, "paper", "sage") and "gpt-4.1" in one and "SAGE:" not in one
    two = caption(both, "paper", "sage", "narrative")
    assert two.startswith("SAGE: ") and " Narrative: " in two and "gpt-5-mini" in two


# ---------------------------------------------------------------- planted, end to end on a judge that answers by rule

def _rule_judge(body: dict) -> dict:
    """A narrative judge (fake server) by rule: 5 points; -1 for any inserted note (neutral or not);
    +-2 when told to raise / lower, except that a hardened prompt stops the plain disguise (the one
    the hardening was written against) and not the held-out fence escape."""
    from fake_openai_server import request_schema, synthesize

    system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
    score = 5
    if any(t in user for t in planted.TEXTS.values()):
        score -= 1
    hardened = "data to be judged" in system
    for (direction, disguise), text in planted.TEXTS.items():
        if direction != "neutral" and text in user and not (hardened and disguise == "plain"):
            score += 2 if direction == "raise" else -2
    reply = synthesize(request_schema(body))
    reply["coherence_score"] = score
    return reply


def test_a_judge_that_obeys_by_rule_gives_its_set_effects(tmp_path):
    from judgelab.gateway import Gateway, ResponseCache
    from judgelab.gateway.backends.openai_backend import OpenAIBackend
    from judgelab.narrative.settings import judge_knobs as resolve
    from fake_openai_server import FakeChatServer

    knobs = resolve("smoke")
    paths = pd.DataFrame([{"collection": "news", "pair_id": p, "method": m, "titles": [f"{t} {p} {m}" for t in "ABC"]}
                          for p in (1, 2) for m in ("maxcap", "random")])
    chosen = planted.family(["raise-plain-start", "lower-plain-start", "raise-fence-end", "lower-fence-end"])
    with FakeChatServer(_rule_judge) as srv:
        gw = Gateway(OpenAIBackend("fake-model", srv.base_url, api_key="sk-test-behaviour"),
                     ResponseCache(tmp_path / "c.sqlite"), progress=False)
        meta, reqs = planted.narrative_requests(paths, knobs, chosen, ("simple",), harden_too=True, gw=gw,
                                                agent_design="temperature", seeds=2)
        rows = planted.run(gw, meta, reqs, "smoke")
        assert srv.n_calls == len(reqs) == 4 * 2 * 7 * 2   # every arm at both seeds is a fresh call
    assert (rows["status"] == "ok").all()
    eff = planted.effects(rows)
    table = planted.effect_table(eff).set_index(["hardened", "disguise", "estimand"])
    assert table.loc[(False, "plain", "insertion"), "mean"] == -1
    assert table.loc[(False, "plain", "obedience (raise)"), "mean"] == 2
    assert table.loc[(False, "fence", "obedience (lower)"), "mean"] == 2
    assert table.loc[(False, "plain", "contrast (raise - lower)"), "mean_scale"] == pytest.approx(4 / 9)
    assert table.loc[(True, "plain", "obedience (raise)"), "mean"] == 0
    assert table.loc[(False, "none", "seed sd"), "mean"] == 0 and (table["noise_floor"] == 0).all()
    assert (table["n_units"] == 2).all() and table["note"].str.contains("too few units \\(2\\)").all()
    hard = planted.hardening_table(eff).set_index(["disguise", "estimand"])
    assert hard.loc[("plain", "obedience (raise)"), "hardening_effect"] == 2
    assert hard.loc[("fence", "obedience (raise)"), "hardening_effect"] == 0
    assert bool(hard.loc[("fence", "obedience (raise)"), "held_out"])


def test_one_seed_per_arm_gives_contrasts_and_no_noise_floor_with_a_note():
    """The demo's design (seeds = 1): the contrasts are there, the noise floor is not, and each row
    says why; no seed-sd rows."""
    rows = _planted_rows(lambda u, arm, d, rep: 3.0 + 0.5 * (d == "raise"), seeds=1).assign(cached=False)
    eff, tables = planted.tables(rows, {})
    shifts = tables["behaviour_planted_shifts"]
    assert planted.SEED_SD not in set(eff["estimand"]) and shifts["noise_floor"].isna().all()
    assert shifts["note"].str.contains("one seed per arm \\(seeds = 1\\): no noise floor").all()
    assert shifts.set_index("estimand").loc["obedience (raise)", "mean"] == pytest.approx(0.5)
