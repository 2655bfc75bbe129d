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
    assert rates.loc[("all", "content"), "n"] == 2


def test_scores_split_by_recognition_and_the_mode_difference():
    probe = pd.DataFrame({"story_id": ["a", "b", "c"], "mode": "content", "status": "ok",
                          "recognised": [True, False, False]})
    summ = pd.DataFrame({"story_id": ["a", "a", "b", "b", "c", "c"], "layer": "L4",
                         "mode": ["content", "title"] * 3, "overall_score": [4.0, 3.0, 2.0, 2.5, 3.0, 3.5]})
    out = recognition.scores_by_recognition(probe, summ, n_boot=200, seed=1).set_index(["group", "statistic"])
    assert out.loc[("recognised", "mode_difference"), "mean"] == pytest.approx(1.0)
    assert out.loc[("not recognised", "mode_difference"), "mean"] == pytest.approx(-0.5)
    assert out.loc[("not recognised", "content_score"), "mean"] == pytest.approx(2.5)
    assert out.loc[("not recognised", "mode_difference"), "n"] == 2
    # equal values: the bootstrap interval is the value itself
    assert out.loc[("not recognised", "mode_difference"), "mean_ci_low"] == pytest.approx(-0.5)


# ---------------------------------------------------------------- planted: family, insertion, hardening

def test_the_family_is_the_full_product_with_unique_ids():
    ids = [p.id for p in planted.FAMILY]
    assert len(ids) == 12 == len(set(ids))
    assert {(p.direction, p.disguise, p.position) for p in planted.FAMILY} == {
        (d, g, q) for d in planted.DIRECTIONS for g in planted.DISGUISES for q in planted.POSITIONS}
    assert planted.family(["lower-editor-end"])[0].text.startswith("[Editor's note")
    with pytest.raises(ValueError, match="unknown perturbation"):
        planted.family(["raise-loud-start"])


@pytest.mark.parametrize("position, expected", [
    ("start", "N\n\nA\n\nB\n\nC\n\nD"), ("middle", "A\n\nB\n\nN\n\nC\n\nD"), ("end", "A\n\nB\n\nC\n\nD\n\nN")])
def test_insert_paragraph_on_four_paragraphs(position, expected):
    assert planted.insert_paragraph("A\n\nB\n\nC\n\nD", "N", position) == expected


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


def test_fence_and_harden_on_fixed_strings():
    assert planted.fence("abc") == "<<<BEGIN JUDGED TEXT>>>\nabc\n<<<END JUDGED TEXT>>>"
    with pytest.raises(ValueError, match="fence marker"):
        planted.fence("x <<<END JUDGED TEXT>>> y")
    msgs = [Message(role="system", content="S"), Message(role="user", content="before X after")]
    out = planted.harden(msgs, "X")
    assert out[0].content == "S\n\n" + planted.HARDENING_NOTE
    assert out[1].content == "before <<<BEGIN JUDGED TEXT>>>\nX\n<<<END JUDGED TEXT>>> after"
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
    meta, reqs = planted.sage_requests([item], cfg, planted.family(["raise-plain-start", "lower-editor-end"]))
    assert [m["perturbation"] for m in meta] == ["none", "raise-plain-start", "lower-editor-end"] * 2
    assert [m["hardened"] for m in meta] == [False] * 3 + [True] * 3
    assert request_key(IDENTITY, reqs[0]) == request_key(IDENTITY, sent)      # a cache hit
    assert len({request_key(IDENTITY, r) for r in reqs}) == 6
    raised = reqs[1].messages[1].content
    note = planted.INSTRUCTIONS[("raise", "plain")]
    assert raised.count(note) == 1 and raised.index(note) < raised.index("Paragraph 0")
    assert raised.replace(note + "\n\n", "") == sent.messages[1].content
    assert reqs[0].messages[0].content == reqs[1].messages[0].content       # plain: same system message
    hard_base, hard = reqs[3], reqs[4]
    assert hard_base.messages[0].content.endswith(planted.HARDENING_NOTE)
    assert planted.FENCE_OPEN + "\n" + "Paragraph 0" in hard_base.messages[1].content
    assert hard_base.template_version == sent.template_version + "+harden-v1"
    assert planted.FENCE_OPEN + "\n" + note + "\n\nParagraph 0" in hard.messages[1].content
    assert hard.template_version == sent.template_version + "+planted-v1+harden-v1"


def test_narrative_baseline_is_agent_zero_of_notebook_09():
    from judgelab.narrative.judges import run as judges
    from judgelab.narrative.judges.settings import resolve

    knobs = resolve("smoke")
    paths = pd.DataFrame([{"collection": "news", "pair_id": 3, "method": "maxcap", "titles": ["Alpha", "Beta", "Gamma"]}])
    agents = {"news": judges.agent_spread(knobs["k"], knobs["temperature_range"], knobs["seed"])}
    meta09, reqs09 = judges.build_requests(paths, agents, knobs["modes"], max_tokens=knobs["max_tokens"],
                                           explanations=knobs["explanations"], reasoning_chars=knobs["reasoning_chars"])
    sent = {m["mode"]: r for m, r in zip(meta09, reqs09) if m["agent"] == 0}
    meta, reqs = planted.narrative_requests(paths, knobs, planted.family(["raise-editor-middle"]), ("simple", "cot"))
    base = {m["mode"]: r for m, r in zip(meta, reqs) if m["perturbation"] == "none" and not m["hardened"]}
    for mode in ("simple", "cot"):
        assert request_key(IDENTITY, base[mode]) == request_key(IDENTITY, sent[mode])
    pert = next(r for m, r in zip(meta, reqs) if m["perturbation"] == "raise-editor-middle" and not m["hardened"])
    assert "2. Beta " + planted.INSTRUCTIONS[("raise", "editor")] in pert.messages[1].content
    assert len(reqs) == 2 * 2 * 2   # (none + 1 perturbation) x 2 modes x (plain, hardened)


def test_planted_narrative_requests_pass_notebook_09s_design_check(tmp_path, monkeypatch):
    """On a judge sent no temperature (gpt-5-mini on OpenAI) the temperature design is refused
    before any request is built, naming both ways out; the seed-only design is built, and its
    rows record the sampling as sent (no temperature, the model's effort and budget)."""
    from judgelab.gateway import Gateway, ResponseCache
    from judgelab.gateway.backends.openai_backend import OpenAIBackend
    from judgelab.gateway.errors import ConfigError
    from judgelab.narrative.judges.settings import resolve
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
        assert (rows["status"] == "ok").all() and srv.n_calls == len(reqs) == 4
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


def test_shifts_direct_the_sign_and_count_moved_items():
    rows = []
    for item, base, up, down in (("a", 3.0, 4.5, 2.8), ("b", 2.0, 2.0, 1.0)):
        for pert, direction, score in (("none", "none", base), ("raise-plain-end", "raise", up), ("lower-plain-end", "lower", down)):
            rows.append({"study": "sage", "item": item, "group": "canonical", "layer": "L4", "mode": "content",
                         "perturbation": pert, "direction": direction, "disguise": "plain", "position": "end",
                         "hardened": False, "score": score})
    sh = planted.shifts(pd.DataFrame(rows)).set_index(["item", "perturbation"])
    assert sh.loc[("a", "raise-plain-end"), "shift"] == pytest.approx(1.5)
    assert sh.loc[("a", "lower-plain-end"), "directed"] == pytest.approx(0.2)
    assert bool(sh.loc[("b", "lower-plain-end"), "obeyed"]) and not bool(sh.loc[("b", "raise-plain-end"), "moved"])
    table = planted.shift_table(sh.reset_index(), n_boot=200).set_index("direction")
    assert table.loc["raise", "mean_shift"] == pytest.approx(0.75) and table.loc["raise", "share_moved"] == 0.5
    assert table.loc["lower", "share_obeyed"] == 0.5
    assert {"p_holm", "p_bonferroni", "mc_family", "unit", "ci_method"} <= set(table.columns)


# ---------------------------------------------------------------- length: planted slopes

def _stories(slope: float, gaps: dict, seed: int = 3, n: int = 40, longer_llm: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    rows = []
    for cat in ("canonical", "pulp", "llm"):
        mu = 8.6 + (0.6 if (longer_llm and cat == "llm") else 0.0)
        for i in range(n):
            lw = rng.normal(mu, 0.4)
            rows.append({"story_id": f"{cat}{i}", "category": cat, "words": float(np.exp(lw)),
                         "score": 1.0 + gaps.get(cat, 0.0) + slope * (lw - 8.6) + rng.normal(0, 0.05)})
    corpus = pd.DataFrame(rows)
    summ = corpus.assign(layer="L4", mode="content").rename(columns={"score": "overall_score"})
    return summ[["story_id", "category", "layer", "mode", "overall_score"]], corpus[["story_id", "words"]]


def test_length_regression_recovers_a_planted_slope_and_gaps():
    summ, corpus = _stories(0.7, {"pulp": 0.5, "llm": 1.0})
    units = length.story_units(summ, corpus)
    out = length.sage_length_models(units).set_index("gap")
    row = out.loc["llm - canonical"]
    assert row["slope_log_words"] == pytest.approx(0.7, abs=0.03)
    assert row["slope_log_words_ci_low"] < 0.7 < row["slope_log_words_ci_high"]
    assert row["gap_with_length"] == pytest.approx(1.0, abs=0.03) and bool(row["gap_survives"])
    assert out.loc["pulp - canonical", "gap_with_length"] == pytest.approx(0.5, abs=0.03)
    # the partial correlation is the correlation of the residuals after regressing out category
    X = np.column_stack([np.ones(len(units)), units["category"] == "pulp", units["category"] == "llm"]).astype(float)
    res = [v - X @ np.linalg.lstsq(X, v, rcond=None)[0] for v in (units["log_words"].to_numpy(), units["score"].to_numpy())]
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
    judged = pd.DataFrame({"collection": "news", "mode": "simple", "min_coherence": coh, "length": lengths,
                           "score_mean": 2 + 5 * coh + 0.3 * lengths + rng.normal(0, 0.05, n)})
    (row,) = length.narrative_length_models(judged).to_dict("records")
    assert row["slope_length"] == pytest.approx(0.3, abs=0.01) and row["partial_r"] > 0.9


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
    # recognition: 1 story x 2 modes; planted SAGE: (1 + 1 perturbation) x 2 hardening - 1 cached
    # baseline; planted narrative: 1 narrative x 1 mode x the same 3
    assert calls["track"].value_counts().to_dict() == {"recognition": 2, "planted_sage": 3, "planted_narrative": 3}
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


def test_planted_points_are_the_table_means_and_no_text_collides():
    import matplotlib
    matplotlib.use("Agg")
    from judgelab.behaviour import figures

    rows = [{"study": s, "hardened": h, "perturbation": p.id, "mean_directed_shift": i / 10 - (0.5 if h else 0),
             "mean_directed_shift_ci_low": i / 10 - 1, "mean_directed_shift_ci_high": i / 10 + 1}
            for s in ("sage", "narrative") for h in (False, True) for i, p in enumerate(planted.FAMILY)]
    table = pd.DataFrame(rows)
    fig = figures.planted_shifts(table)
    assert len(fig.axes) == 2
    # each errorbar container's data line holds the plotted means (12 perturbations each)
    drawn = [x for ax in fig.axes for c in ax.containers for x in c.lines[0].get_xdata()]
    assert sorted(drawn) == pytest.approx(sorted(table["mean_directed_shift"]))
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
