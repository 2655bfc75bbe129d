"""judgelab.estimate: requests built by the running code, bounds, prices, times, and the check
against a real gateway ledger (a SAGE smoke evaluation through the local test server)."""
from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from judgelab.estimate import counting, pricing, timing
from judgelab.estimate.compare import compare_ledger
from judgelab.estimate.counting import TokenCounter
from judgelab.gateway.ledger import PriceTable
from judgelab.sage.protocol import schemas


def _story_text() -> str:
    # ordinary prose, no title or author in it (the leak check would refuse the story)
    para = ("The ferry left before dawn and the harbour lights went out one by one. Mara counted the "
            "crates twice, as her mother had taught her, and wrote the numbers in the ledger she kept "
            "under the bench. Nobody spoke of the storm that had taken the other boat. ")
    return "\n\n".join([para] * 12)


@pytest.fixture
def tiny_corpus() -> pd.DataFrame:
    return pd.DataFrame([{
        "story_id": "s1", "category": "canonical", "title": "Grey Water", "author": "Ines Okafor",
        "year": 1950, "translator": "", "model": "", "tier": "", "words": 600, "in_range": True,
        "text": _story_text()}])


# ---------------------------------------------------------------- stand-in replies

@pytest.mark.parametrize("size", counting.SIZES)
def test_stand_in_replies_are_schema_valid(size):
    schema = schemas.round_schema("L4", "title", 1, 50, 70)
    text, parsed = counting.reply(schema, size)
    assert schema.model_validate(json.loads(text)) == parsed


def test_max_reply_fills_strings_to_their_cap():
    schema = schemas.round_schema("L5", "content", 2, 50, 70)
    _, parsed = counting.reply(schema, "max")
    assert len(parsed.notes) == 70
    assert all(len(getattr(parsed.scores, c).evidence) == 50 for c in type(parsed.scores).model_fields)
    assert len(counting.reply(schema, "max")[0]) > len(counting.reply(schema, "min")[0])


# ---------------------------------------------------------------- prices and times

def test_costs_follow_the_price_table():
    table = PriceTable.load()
    price = table.lookup("gpt-5-mini")
    calls = pd.DataFrame([{"input_min": 1000, "input_max": 3000, "cached_min": 0, "cached_max": 2048,
                           "reply_min": 50, "reply_max": 300, "max_tokens": 1000, "reasoning_effort": "medium"}])
    c = pricing.add_costs(pricing.add_bounds(calls, reasoning=True), "gpt-5-mini", table)
    out_typ = min(300 + pricing.TYPICAL_REASONING["medium"], 1000)
    assert c["output_typical"].iloc[0] == out_typ and c["output_high"].iloc[0] == 1000
    assert c["usd_standard_high"].iloc[0] == pytest.approx((3000 * price.input + 1000 * price.output) / 1e6)
    assert c["usd_cached_high"].iloc[0] == pytest.approx(
        (952 * price.input + 2048 * price.cached_input + 1000 * price.output) / 1e6)
    share = price.batch
    assert share < 1
    assert c["usd_batch_low"].iloc[0] == pytest.approx(c["usd_standard_low"].iloc[0] * share)
    assert math.isnan(pricing.add_costs(pricing.add_bounds(calls, False), "no-such-model", table)["usd_standard_low"].iloc[0])
    assert table.lookup("no-such-model") is None


def test_wall_time_is_the_largest_bound():
    speed = timing.Speed(overhead_s=1.0, prefill_tps=100.0, decode_tps=10.0)
    # two conversations of two calls each: every call 1 + 100/100 + 10/10 = 3 s, conversation 6 s
    calls = pd.DataFrame({"notebook": "02", "layer": "L4", "mode": "content", "item": ["a", "a", "b", "b"],
                          "input_low": 100, "cached_low": 0, "output_low": 10, "max_tokens": 20})
    per_call = speed.overhead_s + 100 / speed.prefill_tps + 10 / speed.decode_tps
    assert timing.wall_seconds(calls, "low", 1, speed) == pytest.approx(4 * per_call)
    assert timing.wall_seconds(calls, "low", 8, speed) == pytest.approx(2 * per_call)  # the longest conversation
    assert timing.wall_seconds(calls, "low", 8, speed, rpm=2) == pytest.approx(4 / 2 * 60)
    assert timing.wall_seconds(calls, "low", 8, speed, tpm=120) == pytest.approx(4 * 120 / 120 * 60)


# ---------------------------------------------------------------- token counts

def test_llamacpp_counter_matches_the_backend_prompt():
    from judgelab.gateway.backends.llamacpp import LlamaCppBackend

    msgs = [{"role": "system", "content": "You judge stories."}, {"role": "user", "content": _story_text()[:800]}]
    counter = TokenCounter.for_settings("llamacpp", None)
    assert counter.messages(msgs) == len(LlamaCppBackend().prompt_tokens(msgs))


def test_openai_counter_adds_the_schema_only_where_it_is_billed():
    msgs = [{"role": "user", "content": "rate it"}]
    schema = schemas.validator_schema("L4", "blind", 40, 60)
    official = TokenCounter.for_settings("openai", "gpt-5-mini")
    compatible = TokenCounter.for_settings("openai-compatible", "gpt-5-mini")
    assert compatible.request(msgs, schema) == compatible.messages(msgs)
    assert official.request(msgs, schema) > official.messages(msgs)


# ---------------------------------------------------------------- against a real run

def test_estimate_matches_the_ledger_of_a_sage_run(tmp_path, monkeypatch, tiny_corpus):
    """SAGE L4 smoke (1 story x 2 modes = 14 calls) through the gateway against the local test
    server (usage omitted, so the gateway counts what it sent): calls exact, first-round input
    tokens within 2%, the run's cost inside the estimated range."""
    from judgelab.estimate import sage
    from judgelab.gateway import Gateway
    from fake_openai_server import FakeChatServer, Reply, request_schema, synthesize
    from judgelab.sage.protocol import runner

    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    prices = tmp_path / "prices.csv"
    prices.write_text("model,input,cached_input,output,context_window,batch\nfake-model,1.0,0.1,4.0,,0.5\n")

    def script(body):
        return Reply(content=json.dumps(synthesize(request_schema(body))), omit_usage=True)

    with FakeChatServer(script) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite", price_table=prices, progress=False)
        run = runner.run_layer(gw, tiny_corpus, "L4", "smoke")
        # the anonymous-author title run that notebooks 02-04 make next (Table 9's sensitivity)
        anon = runner.run_title_anonymous(gw, tiny_corpus, "L4", "smoke")
    assert (run.calls["status"] == "ok").all() and (anon.calls["status"] == "ok").all()
    ledger = gw.ledger_frame()

    counter = TokenCounter.for_settings("openai-compatible", "fake-model")
    calls = sage.sage_calls("smoke", counter, layers=("L4",), corpus=tiny_corpus)
    calls = pricing.add_costs(pricing.add_bounds(calls, reasoning=False), "fake-model", PriceTable.load(prices))
    table = compare_ledger(calls, ledger).set_index("group")
    row = table.loc["sage L4"]
    assert row["calls_estimate"] == row["calls_ledger"] == 21  # 2 evaluations + 1 anonymous title, 7 calls each
    assert abs(row["first_input_rel_diff"]) <= 0.02
    assert bool(row["usd_inside"])


def test_compare_holds_batch_lines_at_their_standard_price():
    """A batch line the ledger priced at half (gpt-4.1's batch share, 0.5) is compared at its
    standard price: the same usd_ledger as the live ledger of the same usage."""
    from judgelab.estimate.compare import standard_cost

    prices = PriceTable.load()
    live = pd.DataFrame({"study": "narrative", "layer": "", "model": "gpt-4.1", "input_tokens": [1000, 2000],
                         "cost_usd": [prices.cost("gpt-4.1", 1000, 50), prices.cost("gpt-4.1", 2000, 50)]})
    batch = live.assign(cost_usd=[prices.cost("gpt-4.1", 1000, 50), prices.cost("gpt-4.1", 2000, 50, batch=True)],
                        batch_id=[None, "batch_7"])
    assert standard_cost(batch).tolist() == pytest.approx(live["cost_usd"].tolist())
    calls = pd.DataFrame({"study": "narrative", "layer": "", "first_round": True, "input_low": [1000, 2000],
                          "usd_standard_low": [0.0, 0.0], "usd_standard_high": [1.0, 1.0]})
    assert compare_ledger(calls, batch)["usd_ledger"].tolist() == pytest.approx(
        compare_ledger(calls, live)["usd_ledger"].tolist())


def test_compare_names_a_bad_ledger():
    calls = pd.DataFrame(columns=["study", "layer", "first_round", "input_low", "usd_standard_low", "usd_standard_high"])
    with pytest.raises(ValueError, match="no rows"):
        compare_ledger(calls, pd.DataFrame())
    with pytest.raises(ValueError, match="cost_usd"):
        compare_ledger(calls, pd.DataFrame({"input_tokens": [1]}))


def test_speeds_are_recovered_from_a_ledger():
    from judgelab.estimate.compare import speed_from_ledger

    truth = timing.Speed(overhead_s=0.5, prefill_tps=250.0, decode_tps=20.0)
    ledger = pd.DataFrame({"input_tokens": [100, 900, 400, 1500, 50], "cached_tokens": [0, 300, 0, 1000, 0],
                           "output_tokens": [10, 40, 200, 5, 80], "cached": False})
    fresh = ledger["input_tokens"] - ledger["cached_tokens"]
    ledger["latency_s"] = truth.overhead_s + fresh / truth.prefill_tps + ledger["output_tokens"] / truth.decode_tps
    got = speed_from_ledger(ledger)
    assert got.overhead_s == pytest.approx(truth.overhead_s)
    assert got.prefill_tps == pytest.approx(truth.prefill_tps)
    assert got.decode_tps == pytest.approx(truth.decode_tps)
    with pytest.raises(ValueError, match="at least 3"):
        speed_from_ledger(ledger.head(2))


# ---------------------------------------------------------------- narrative judges

def test_judge_requests_are_the_ones_notebook_09_builds():
    from judgelab.estimate import narrative
    from judgelab.narrative.judges import run as judges
    from judgelab.narrative import settings as narrative_settings

    knobs = narrative_settings.judge_knobs("smoke")
    titles = [f"Council votes on harbour plan, part {i}" for i in range(30)]
    paths = narrative.modelled_paths("news", 3, "typical", titles, seed=1)
    assert (paths["length"] == [narrative._length("news", m, "typical") for m in paths["method"]]).all()
    counter = TokenCounter.for_settings("openai", "gpt-4.1")
    rows = narrative.request_rows(paths, knobs, counter, "09")
    agents = {"news": judges.agent_spread(narrative_settings.k_for("news", knobs["k"]), knobs["temperature_range"], knobs["seed"])}
    _, reqs = judges.build_requests(paths, agents, knobs["modes"], max_tokens=knobs["max_tokens"],
                                    explanations=knobs["explanations"], reasoning_chars=knobs["reasoning_chars"])
    assert len(rows) == len(reqs) == len(paths) * len(knobs["modes"]) * narrative_settings.k_for("news", knobs["k"])
    first = [{"role": m.role, "content": m.content} for m in reqs[0].messages]
    assert rows[0]["input"] == counter.request(first, reqs[0].schema)
    assert [r["max_tokens"] for r in rows] == [q.sampling.max_tokens for q in reqs]


def test_paths_from_another_profile_are_not_taken_for_this_one(tmp_path, monkeypatch):
    """A demo run's paths (notebook 08 executed with PROFILE=demo) must not size the paper
    profile's judge calls; with the same profile they are read (and checked by their contract)."""
    from judgelab import paths
    from judgelab.contracts import ContractError
    from judgelab.estimate import narrative

    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    pd.DataFrame({"not_a_path_column": [1]}).to_parquet(paths.interim_dir() / "narr_paths.parquet")
    assert narrative.paths_profile() is None  # no executed notebook: the paths' profile is unknown
    nb = {"cells": [], "metadata": {"papermill": {"parameters": {"PROFILE": "demo"}}}, "nbformat": 4, "nbformat_minor": 5}
    (paths.executed_dir() / "08_path_extraction.ipynb").write_text(json.dumps(nb))
    assert narrative.paths_profile() == "demo"
    assert narrative.real_paths("paper") is None
    with pytest.raises(ContractError, match="narr_paths"):
        narrative.real_paths("demo")


def test_prefix_cache_rules():
    from judgelab.estimate.sage import PrefixCache

    story = _story_text()
    first = [{"role": "system", "content": "You judge stories."}, {"role": "user", "content": story}]
    follow = first + [{"role": "assistant", "content": "{}"}, {"role": "user", "content": "Round 2."}]
    local = PrefixCache(TokenCounter.for_settings("llamacpp", None))
    assert local.served(first) == 0
    local.add(first, "{}")
    # llama.cpp: the previous prompt is reused from the KV cache
    assert local.served(follow) == local.counter.messages(first) - 3
    remote = PrefixCache(TokenCounter.for_settings("openai", "gpt-5-mini"))
    remote.add(first, "{}")
    n = remote.counter.messages(first) - 3
    assert n < 1024 and remote.served(follow) == 0  # below OpenAI's 1,024-token floor
    long_first = [first[0], {"role": "user", "content": story * 4}]
    remote.add(long_first, "{}")
    n = remote.counter.messages(long_first) - 3
    assert n >= 1024 and remote.served(long_first + follow[2:]) == n // 128 * 128


def test_prefix_cache_finds_the_story_shared_inside_a_message():
    from judgelab.estimate.sage import PrefixCache, _common_head

    assert _common_head("abcdef", "abcxyz") == 3 and _common_head("", "a") == 0 and _common_head("ab", "ab") == 2
    story = _story_text()
    a = [{"role": "system", "content": "Rules."}, {"role": "user", "content": story + "\\nAs evaluator: score it."}]
    b = [{"role": "system", "content": "Rules."}, {"role": "user", "content": story + "\\nAs validator: score it blind."}]
    cache = PrefixCache(TokenCounter.for_settings("llamacpp", None))
    cache.add(a, "{}")
    assert cache.served(b) > cache.counter.text(story) > cache.counter.messages(b[:1])


def test_the_command_prints_and_writes_an_openai_estimate_without_a_key(tmp_path, monkeypatch, capsys, tiny_corpus):
    """``python -m judgelab.estimate`` on SAGE L4 smoke as gpt-5-mini: no key, no network (the
    corpus: notebook 01's interim file, here the one-story corpus)."""
    from judgelab import interim
    from judgelab.estimate.__main__ import main

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    interim.write(tiny_corpus.astype({"year": "Int64"}), "corpus")
    monkeypatch.setenv("JUDGELAB_BACKEND", "openai")
    monkeypatch.setenv("JUDGELAB_MODEL", "gpt-5-mini")
    assert main(["--profile", "smoke", "--notebooks", "02"]) == 0
    out = capsys.readouterr().out
    assert "backend openai, model gpt-5-mini" in out and "\ntotal" in out and "USD batch" in out
    table = pd.read_csv(tmp_path / "results" / "estimate" / "estimate_smoke_openai_gpt-5-mini.csv")
    calls = pd.read_csv(tmp_path / "results" / "estimate" / "estimate_smoke_openai_gpt-5-mini_calls.csv")
    assert table["calls"].tolist() == [len(calls)] and (table["model"] == "gpt-5-mini").all()
    share = PriceTable.load().lookup("gpt-5-mini").batch
    assert table["usd_batch_typical"].iloc[0] == pytest.approx(table["usd_standard_typical"].iloc[0] * share)
    assert (table["usd_standard_low"] <= table["usd_standard_typical"]).all()
    assert (table["usd_standard_typical"] <= table["usd_standard_high"]).all()


# ---------------------------------------------------------------- the papers' design

def test_no_effort_sent_is_priced_at_the_apis_default_medium():
    calls = pd.DataFrame([{"input_min": 10, "input_max": 10, "cached_min": 0, "cached_max": 0,
                           "reply_min": 5, "reply_max": 20, "max_tokens": 5000, "reasoning_effort": None}])
    c = pricing.add_bounds(calls, reasoning=True)
    assert c["output_typical"].iloc[0] == 20 + pricing.TYPICAL_REASONING["medium"] == 20 + 1024


def test_budgets_are_priced_as_the_gateway_sends_them():
    from judgelab.gateway.reasoning import REASONING_ALLOWANCE, ReasoningPolicy

    calls = pd.DataFrame([{"notebook": "09", "input_min": 10, "input_max": 10, "cached_min": 0, "cached_max": 0,
                           "reply_min": 5, "reply_max": 20, "max_tokens": 64, "reasoning_effort": None}])
    sent = pricing.with_sent_sampling(calls, "openai", "gpt-5-mini", ReasoningPolicy(default="medium"))
    assert sent["max_tokens"].iloc[0] == 64 + REASONING_ALLOWANCE["medium"] and sent["reasoning_effort"].iloc[0] == "medium"
    assert sent["max_tokens_design"].iloc[0] == 64 and bool(sent["reasoning"].iloc[0])
    c = pricing.add_bounds(sent)
    assert c["output_typical"].iloc[0] == 20 + 1024 and c["output_high"].iloc[0] == 64 + 25_000
    assert pricing.budget_warnings(c) == []
    plain = pricing.add_bounds(pricing.with_sent_sampling(calls, "openai", "gpt-4.1"))
    assert plain["max_tokens"].iloc[0] == 64 and plain["output_typical"].iloc[0] == 20
    # a budget that cannot hold the typical reasoning (as a design that sent its own budget would be)
    short = pricing.add_bounds(calls.assign(reasoning=True, reasoning_effort="medium"))
    (warning,) = pricing.budget_warnings(short)
    assert warning.startswith("notebook 09: 1 of 1 calls") and "1024 at effort medium" in warning


def test_the_paper_profile_prices_each_notebook_on_its_studys_judge(tmp_path, monkeypatch, tiny_corpus):
    """Backend openai, no model named: SAGE (02) on gpt-5-mini at medium effort with its reasoning
    allowance, the narrative judges (09) on gpt-4.1 with their budgets as designed; a reasoning
    model for the narrative study is warned about (its temperature design would be refused)."""
    from judgelab import interim
    from judgelab.estimate import estimate
    from judgelab.gateway.reasoning import REASONING_ALLOWANCE

    for var in ("JUDGELAB_MODEL", "JUDGELAB_SAGE_MODEL", "JUDGELAB_NARRATIVE_MODEL", "JUDGELAB_NARRATIVE_AGENTS",
                "JUDGELAB_SAGE_REASONING_EFFORT", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    monkeypatch.setenv("JUDGELAB_BACKEND", "openai")
    monkeypatch.setattr("judgelab.estimate.narrative.collection_titles",
                        lambda name: [f"{name} headline number {i}" for i in range(400)])
    interim.write(tiny_corpus.astype({"year": "Int64"}), "corpus")
    est = estimate("smoke", notebooks=("02", "09"))
    assert est.models == {"02": "gpt-5-mini", "09": "gpt-4.1"} and est.model == "gpt-5-mini+gpt-4.1"
    c = est.calls
    sage, nar = c[c["notebook"] == "02"], c[c["notebook"] == "09"]
    assert (sage["reasoning_effort"] == "medium").all()
    assert (sage["max_tokens"] == sage["max_tokens_design"] + REASONING_ALLOWANCE["medium"]).all()
    assert (sage["output_typical"] == (sage["reply_max"] + 1024).clip(upper=sage["max_tokens"])).all()
    assert (nar["max_tokens"] == nar["max_tokens_design"]).all() and not nar["reasoning"].any()
    assert est.summary.set_index("notebook")["model"].to_dict() == est.models
    assert est.warnings == []
    monkeypatch.setenv("JUDGELAB_NARRATIVE_MODEL", "gpt-5-mini")
    est2 = estimate("smoke", notebooks=("09",))
    assert est2.models == {"09": "gpt-5-mini"} and (est2.calls["reasoning_effort"] == "minimal").all()
    assert any("notebook 09" in w and "JUDGELAB_NARRATIVE_AGENTS=seed-only" in w for w in est2.warnings)


def test_notebook_12s_narrative_calls_are_priced_on_the_narrative_judge_and_the_rest_on_sage_s():
    """Notebook 12 sends its SAGE calls on SAGE's judge and its narrative planted calls on the
    narrative judge: each judge's share of its rows, exactly once, and other notebooks untouched."""
    import pandas as pd

    from judgelab.estimate import _judge_share

    calls = pd.DataFrame({"notebook": ["12", "12", "12", "09"],
                          "track": ["recognition", "planted_sage", "planted_narrative", "judge"]})
    sage = _judge_share(calls, [("12", None)])
    narrative = _judge_share(calls, [("12", "planted_narrative"), ("09", None)])
    assert list(sage["track"]) == ["recognition", "planted_sage", "judge"]
    assert list(narrative["track"]) == ["planted_narrative", "judge"]
    both = _judge_share(calls, [("12", None), ("12", "planted_narrative")])  # one judge for both studies
    assert list(both["track"]) == list(calls["track"])


# ---------------------------------------------------------------- sized estimates

def test_a_sized_estimate_scales_a_measured_sample_to_the_run_it_prices(tmp_path, monkeypatch):
    """Four stories per category of near-equal length (paper profile, SAGE L4 on gpt-5-mini): the
    estimate sized to those four from a sample of three matches the exact estimate of all four
    (within 1%: the stories' titles and authors differ), and twice the stories cost twice."""
    from judgelab import interim
    from judgelab.estimate import SAMPLE_UNITS, estimate, measure, sized

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    monkeypatch.setenv("JUDGELAB_BACKEND", "openai")
    monkeypatch.setenv("JUDGELAB_MODEL", "gpt-5-mini")
    names = ["Okafor", "Lindqvist", "Moreau", "Tanaka"]
    rows = [{"story_id": f"{cat}{i}", "category": cat, "title": f"Grey Water {i}", "author": f"Ines {names[i]}",
             "year": 1950, "translator": "", "model": "", "tier": "high" if cat == "llm" else "", "words": 600,
             "in_range": True, "text": _story_text()} for cat in ("canonical", "pulp", "llm") for i in range(4)]
    interim.write(pd.DataFrame(rows).astype({"year": "Int64"}), "corpus")
    exact = estimate("paper", notebooks=("02",)).summary.iloc[0]
    m = measure("paper", notebooks=("02",))
    assert m.calls["item"].nunique() == 3 * SAMPLE_UNITS
    four = sized(m, {"canonical": 4, "pulp": 4, "llm": 4}).summary.iloc[0]
    assert four["calls"] == exact["calls"]
    for col in ("input_typical", "output_typical", "usd_standard_typical", "wall_s_typical"):
        assert four[col] == pytest.approx(exact[col], rel=0.01), col
    eight = sized(m, {"canonical": 8, "pulp": 8, "llm": 8}).summary.iloc[0]
    assert eight["calls"] == 2 * four["calls"]
    assert eight["usd_standard_typical"] == pytest.approx(2 * four["usd_standard_typical"])
    with pytest.raises(ValueError, match="no sage unit 'poetry'"):
        sized(m, {"poetry": 3})


def test_the_command_parses_sizes_in_the_profiles_order_or_by_name():
    from judgelab.estimate.__main__ import parse_sizes

    names = ["canonical", "pulp", "llm"]
    assert parse_sizes("50,30,20", names, "sage per category") == {"canonical": 50, "pulp": 30, "llm": 20}
    assert parse_sizes("llm=40", names, "sage per category") == {"llm": 40}
    with pytest.raises(SystemExit, match="4 counts for 3"):
        parse_sizes("1,2,3,4", names, "sage per category")


def _measured_sample():
    """A measured sample as :func:`judgelab.estimate.measure` returns it, built by hand: SAGE L4 (02)
    on 3 stories per category, each a conversation of 7 calls (5 rounds, validator, review); the
    narrative judges (09) on 3 pairs per collection x 2 methods x 2 agents, one call each; and the
    notebooks no size scales: 10 (4 calls), 11 (3), 12 (2 planted SAGE calls on canonical stories,
    the categories a size does scale in 02)."""
    from judgelab.estimate import Estimate, SAMPLE_UNITS, summarize, timing

    rows = []

    def add(nb, study, item, n, layer="", mode="content", category="", agent=0):
        for step in range(n):
            track, rnd = ("evaluator", step + 1) if step < 5 else (("validator_blind", "validator_review")[step - 5], 1)
            rows.append({"notebook": nb, "study": study, "item": item, "layer": layer, "mode": mode,
                         "category": category, "agent": agent, "first_round": step == 0, "model": "m",
                         "track": track, "round": rnd})

    for cat in ("canonical", "pulp", "llm"):
        for i in range(SAMPLE_UNITS):
            add("02", "sage", f"{cat}{i}", 7, layer="L4", category=cat)
    # Table 9's anonymous-author run: a second conversation of one story in title mode, beside the
    # first one (the same 7 steps, the same batches)
    for mode in ("title", "title"):
        add("02", "sage", "llm0", 7, layer="L4", mode=mode, category="llm")
    for coll in ("news", "vispub"):
        for i in range(SAMPLE_UNITS):
            for method in ("maxcap", "random"):
                for agent in (0, 1):
                    add("09", "narrative", f"{coll}:p{i}:{method}", 1, mode="simple", agent=agent)
    add("10", "narrative", "vispub:cost0:maxcap", 4, mode="simple")
    add("11", "human", "confederacy:s1", 3, layer="L5")
    add("12", "sage", "canonical0", 1, layer="L4", category="canonical")
    add("12", "sage", "canonical1", 1, layer="L4", category="canonical")
    calls = pd.DataFrame(rows)
    rng = np.random.default_rng(5)
    n = len(calls)
    calls["max_tokens"] = 500
    for q, base in (("input", 1000), ("cached", 0), ("output", 100)):
        low = rng.integers(base // 2, base + 1, n)
        calls[f"{q}_low"], calls[f"{q}_typical"], calls[f"{q}_high"] = low, low * 2, low * 4
    for k in ("standard", "cached", "batch"):
        low = rng.uniform(0.001, 0.01, n)
        calls[f"usd_{k}_low"], calls[f"usd_{k}_typical"], calls[f"usd_{k}_high"] = low, 2 * low, 5 * low
    speed = timing.Speed(0.6, 10_000.0, 100.0)
    settings = {"rpm": None, "tpm": None, "speed": speed.__dict__, "workers": dict.fromkeys(calls["notebook"], 4),
                "what": {}, "reasoning_model": False}
    summary = summarize(calls, SimpleNamespace(rpm=None, tpm=None), speed, settings["workers"], {})
    return Estimate("paper", "openai", "m", "tok", calls, summary, {nb: "" for nb in calls["notebook"].unique()},
                    settings)


def test_a_sized_estimate_prices_every_llm_notebook_and_more_never_costs_less(monkeypatch):
    """The sized run is the whole run: every LLM notebook of the estimate is in it (measure asks for
    all of them; 10-12 at the profile's design, their calls counted once, notebook 12's SAGE calls
    not scaled with the run's stories), and doubling every size doubles the scaled notebooks' calls
    while no column of the total (calls, tokens, USD, wall time) falls. The Batch bound counts each
    notebook's longest conversation: 7 for SAGE, 1 per judge call, 24 h each."""
    from judgelab import estimate as est_mod
    from judgelab.estimate import NOTEBOOKS, SAMPLE_UNITS, profile_sizes, sized

    sample = _measured_sample()
    asked = {}
    monkeypatch.setattr(est_mod, "estimate", lambda *a, **k: asked.update(k) or sample)
    measured = est_mod.measure("paper")
    assert set(asked["notebooks"]) == set(NOTEBOOKS)

    own = profile_sizes("paper")
    base = sized(measured, own["sage"], own["narrative"])
    double = sized(measured, {k: 2 * v for k, v in own["sage"].items()}, {k: 2 * v for k, v in own["narrative"].items()})
    assert list(base.summary["notebook"]) == ["02", "09", "10", "11", "12"]
    b, d = base.summary.set_index("notebook"), double.summary.set_index("notebook")
    # the profile's design: sum of its stories x 7 calls; pairs x 2 methods x 2 agents
    # per llm story 7 calls, plus 14 for the one sampled story of the three with two title conversations
    assert b.loc["02", "calls"] == round(sum(own["sage"].values()) * 7 + own["sage"]["llm"] * 14 / SAMPLE_UNITS)
    assert b.loc["09", "calls"] == sum(own["narrative"].values()) * 2 * 2
    assert d.loc["02", "calls"] == pytest.approx(2 * b.loc["02", "calls"], abs=1) and d.loc["09", "calls"] == 2 * b.loc["09", "calls"]
    assert (b.loc[["10", "11", "12"], "calls"].to_list() == [4, 3, 2])
    pd.testing.assert_frame_equal(b.loc[["10", "11", "12"]], d.loc[["10", "11", "12"]])
    tb, td = base.total(), double.total()
    assert (td >= tb).all(), tb[td < tb]
    assert td["usd_standard_typical"] > tb["usd_standard_typical"]

    # 10: one conversation of 4 calls; 11: 3; the SAGE conversations 7 steps, also the story with two
    assert base.batch_waits().to_dict() == {"02": 7, "09": 1, "10": 4, "11": 3, "12": 1}
    assert base.batch_bound_h() == (7 + 1 + 4 + 3 + 1) * 24
    advice = base.budget_advice()
    assert f"${tb['usd_standard_typical']:,.2f}" in advice and f"${tb['usd_standard_high']:,.2f}" in advice
