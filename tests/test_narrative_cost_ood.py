"""Notebook 10's cost and OOD machinery: token counts, the ledger's fresh/cached split, OOD
generators and tests, each against a known answer."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from judgelab import tokens
from judgelab.narrative.analyses import cost
from judgelab.narrative.analyses import joint_collection as jc
from judgelab.narrative.analyses import ood_narratives as on
from judgelab.narrative.analyses import ood_study as study
from judgelab.narrative.analyses import ood_tests as ot


def is_alternating(collections) -> bool:
    """True when no two consecutive documents share a collection (the oracle of the tests below)."""
    return all(a != b for a, b in zip(collections[:-1], collections[1:]))


# --------------------------------------------------------------------------- token counting

@pytest.mark.parametrize("encoding_model", ["gpt-4", "gpt-4.1"])  # cl100k_base, o200k_base
def test_hello_world_is_two_tokens(encoding_model):
    assert tokens.count_tokens("hello world", encoding_model) == 2


def test_cookbook_sentence_in_cl100k():
    # OpenAI cookbook "How to count tokens with tiktoken": "tiktoken is great!" -> 6 tokens (cl100k_base)
    assert tokens.encoding_name_for("gpt-4") == "cl100k_base"
    assert tokens.count_tokens("tiktoken is great!", "gpt-4") == 6


def test_prompt_tokens_add_chat_framing():
    # two messages of 2 content tokens each: (2 + 4) + (2 + 4) + 3 reply-priming tokens
    assert cost.prompt_tokens("hello world", "hello world", "gpt-4.1") == 15


def test_prompt_token_table_counts_rendered_prompts():
    paths = pd.DataFrame({"collection": ["news", "news"], "pair_id": [0, 0], "method": ["maxcap", "random"],
                          "titles": [["A", "B", "C"], ["A", "C"]]})
    t = cost.prompt_token_table(paths, modes=("simple", "complex"), model="gpt-4.1")
    assert len(t) == 4 and set(t["encoding"]) == {"o200k_base"}
    # one more title line costs more tokens; complex's longer prompt costs more than simple's
    s = t.set_index(["mode", "method"])["tiktoken_input"]
    assert s[("simple", "maxcap")] > s[("simple", "random")]
    assert s[("complex", "maxcap")] > s[("simple", "maxcap")]


# --------------------------------------------------------------------------- ledger and Table 5

def _ledger(tmp_path):
    from judgelab.gateway.ledger import Ledger, PriceTable
    from judgelab.gateway.types import ChatResult, Usage

    price_csv = tmp_path / "prices.csv"
    price_csv.write_text("model,input,cached_input,output\ntoy-model,1.0,0.5,2.0\n")
    prices = PriceTable.load(price_csv)
    led = Ledger(prices)
    calls = [  # (pair_id, method, cached, latency)
        ("0", "maxcap", False, 1.0), ("0", "random", False, 3.0), ("1", "maxcap", True, 0.0),
    ]
    for pid, method, cached, lat in calls:
        led.record(ChatResult(status="ok", backend="toy", model="toy-model", cached=cached, latency_s=lat,
                              usage=Usage(input_tokens=1000, output_tokens=500),
                              tags={"collection": "news", "pair_id": pid, "method": method, "mode": "simple"}))
    return led.frame(), prices


def test_fresh_cached_split(tmp_path):
    frame, _ = _ledger(tmp_path)
    split = cost.fresh_cached_split(frame)
    row = split.iloc[0]
    assert (row["n_calls"], row["n_fresh"], row["n_cached"]) == (3, 2, 1)
    assert row["fresh_latency_s"] == pytest.approx(4.0)
    assert row["cached_latency_s"] == 0.0


def test_cost_table_times_fresh_calls_only(tmp_path):
    frame, prices = _ledger(tmp_path)
    prompts = pd.DataFrame({"collection": "news", "pair_id": ["0", "0", "1"], "method": ["maxcap", "random", "maxcap"],
                            "mode": "simple", "n_documents": [3, 5, 4], "tiktoken_input": [100, 300, 200],
                            "tiktoken_input_ref": [1000, 1000, 1000], "encoding": "cl100k_base"})
    calls = cost.cost_calls(frame, prompts)
    t = cost.cost_table(calls, reference_model="toy-model", prices=prices).iloc[0]
    assert (t["n_fresh"], t["n_cached"], t["n_narratives"]) == (2, 1, 3)
    assert t["time_s_mean"] == pytest.approx(2.0)                 # (1 + 3) / 2; the cache hit is excluded
    assert t["time_s_sd"] == pytest.approx(math.sqrt(2.0))
    assert t["tiktoken_input_mean"] == pytest.approx(200.0)
    assert t["tiktoken_input_sd"] == pytest.approx(100.0)
    assert t["reported_input_mean"] == pytest.approx(1000.0)
    # 1000 in x $1/M + 500 out x $2/M = $0.002 per call -> $2 per 1,000 narratives
    assert t["usd_per_1k"] == pytest.approx(2.0)
    assert t["usd_per_1k_ref"] == pytest.approx(2.0)


def test_time_ratio_is_the_ratio_of_mean_fresh_seconds_with_a_bootstrap_interval_or_too_few_units():
    """Constructed timings: 40 cot calls around 6 s and 40 simple calls around 0.65 s give exactly
    mean(cot) / mean(simple), an interval around it, in the table's unit; 4 calls give NaN with
    the note; cached calls never enter."""
    rng = np.random.default_rng(3)
    cot, simple = rng.normal(6.0, 0.1, 40), rng.normal(0.65, 0.08, 40)
    out = cost.time_ratio(cot, simple, n_boot=1000, seed=2)
    exact = cot.mean() / simple.mean()
    assert out["time_ratio"] == pytest.approx(exact)
    assert out["time_ratio_ci_low"] < exact < out["time_ratio_ci_high"] and out["time_ratio_ci_high"] - out["time_ratio_ci_low"] < 1
    assert out["time_ratio_unit"] == "x (ratio of mean seconds per fresh call)" and "bootstrap" in out["ci_method"]
    few = cost.time_ratio(cot[:4], simple, n_boot=100)
    assert few["time_ratio"] == pytest.approx(cot[:4].mean() / simple.mean())
    assert np.isnan(few["time_ratio_ci_low"]) and "too few units" in few["note"]
    calls = pd.DataFrame({"mode": ["simple"] * 41 + ["cot"] * 40, "latency_s": np.r_[simple, 99.0, cot],
                          "cached": [False] * 40 + [True] + [False] * 40, "status": "ok", "collection": "vispub",
                          "pair_id": np.r_[np.arange(41), np.arange(40)].astype(str), "method": "maxcap",
                          "n_documents": 3, "tiktoken_input": 100, "tiktoken_input_ref": 100, "input_tokens": 100,
                          "output_tokens": 10, "cost_usd": 0.0})
    t = cost.cost_table(calls, n_boot=1000, seed=2).set_index("mode")
    assert t.loc["cot", "time_ratio"] == pytest.approx(exact)       # the cached 99 s call is left out
    assert t.loc["cot", "time_ratio_ci_low"] == pytest.approx(out["time_ratio_ci_low"])
    assert t.loc["simple", "time_ratio"] == pytest.approx(1.0) and np.isnan(t.loc["simple", "time_ratio_ci_low"])


def test_cost_performance_relative_to_simple():
    c = pd.DataFrame({"mode": ["simple", "complex"], "tiktoken_input_mean": [100.0, 200.0]})
    r = pd.DataFrame({"mode": ["simple", "complex"], "r": [0.5, 0.6]})
    out = cost.cost_performance(c, r).set_index("mode")
    assert out.loc["complex", "token_increase"] == pytest.approx(1.0)
    assert out.loc["complex", "r_gain"] == pytest.approx(0.1)
    assert out.loc["complex", "r_gain_rel"] == pytest.approx(0.2)
    assert out.loc["complex", "r_gain_per_100_tokens"] == pytest.approx(0.1)
    assert np.isnan(out.loc["simple", "r_gain_per_100_tokens"])


def test_paper_cost_performance_matches_the_papers_text():
    # Section 5.6: complex is "a 7% improvement at 83% increased token usage"; CoT needs "127% more tokens"
    p = cost.paper_cost_performance().set_index("mode")
    assert round(100 * p.loc["complex", "paper_r_gain_rel"]) == 7
    assert round(100 * p.loc["complex", "paper_token_increase"]) == 83
    assert round(100 * p.loc["cot", "paper_token_increase"]) == 127


# --------------------------------------------------------------------------- OOD generators

COLL = np.array(["news"] * 20 + ["vispub"] * 30)


def test_alternating_narratives_alternate_and_are_seeded():
    a = on.alternating_narratives(COLL, n=25, lengths=[2, 3, 5, 8], seed=7)
    assert len(a) == 25
    for path, colls in zip(a["path"], a["collections"]):
        assert list(COLL[path]) == list(colls)
        assert is_alternating(colls)
        assert set(colls) == {"news", "vispub"}
        assert len(set(path)) == len(path)
    assert set(a["length"]) <= {2, 3, 5, 8}
    assert {c[0] for c in a["collections"]} == {"news", "vispub"}    # both starts occur
    b = on.alternating_narratives(COLL, n=25, lengths=[2, 3, 5, 8], seed=7)
    assert a["path"].tolist() == b["path"].tolist()
    c = on.alternating_narratives(COLL, n=25, lengths=[2, 3, 5, 8], seed=8)
    assert a["path"].tolist() != c["path"].tolist()


def test_random_mixed_narratives_hold_both_collections():
    m = on.random_mixed_narratives(COLL, n=30, lengths=[2, 4, 6], seed=3)
    for path, colls in zip(m["path"], m["collections"]):
        assert set(COLL[path]) == {"news", "vispub"}
        assert len(set(path)) == len(path)
    assert m["path"].tolist() == on.random_mixed_narratives(COLL, n=30, lengths=[2, 4, 6], seed=3)["path"].tolist()
    assert not all(is_alternating(c) for c in m["collections"])   # not constrained to alternate


def test_is_alternating():
    assert is_alternating(["a", "b", "a"]) and not is_alternating(["a", "a", "b"])


def _paths():
    return pd.DataFrame({"collection": "news", "pair_id": [0, 1, 2], "method": "maxcap",
                         "path": [[0, 1, 2, 3], [4, 5], [1, 2, 3]]})


def test_shuffled_narratives_permute_and_differ():
    s = on.shuffled_narratives(_paths(), seed=1)
    assert s["base_pair_id"].tolist() == [0, 2]                       # the 2-document path is skipped
    for new, orig in zip(s["path"], [[0, 1, 2, 3], [1, 2, 3]]):
        assert sorted(new) == sorted(orig) and new != orig


def test_off_topic_replaces_one_interior_document_with_an_incoherent_one():
    n = 10
    c = np.full((n, n), 0.9)
    c[:, 6:] = c[6:, :] = 0.1                                            # documents 6..9 are off-topic
    np.fill_diagonal(c, 0)
    paths = pd.DataFrame({"collection": "news", "pair_id": [0], "method": "maxcap", "path": [[0, 1, 2, 3]]})
    for seed in range(5):
        o = on.off_topic_narratives(paths, {"news": c}, seed=seed, quantile=0.3).iloc[0]
        new = o["path"]
        changed = [j for j in range(4) if new[j] != [0, 1, 2, 3][j]]
        assert len(changed) == 1 and changed[0] in (1, 2)               # endpoints kept
        assert new[changed[0]] >= 6
    scored = on.add_coherence(on.off_topic_narratives(paths, {"news": c}, seed=0, quantile=0.3), lambda _: c)
    assert scored["min_coherence"].iat[0] == pytest.approx(0.1)


def test_add_coherence_reads_consecutive_edges():
    c = np.array([[0, .5, .2], [.5, 0, .8], [.2, .8, 0]])
    n = pd.DataFrame({"collection": ["x"], "path": [[0, 1, 2]]})
    out = on.add_coherence(n, lambda _: c)
    assert out["min_coherence"].iat[0] == pytest.approx(0.5)
    assert out["mean_coherence"].iat[0] == pytest.approx(0.65)


# --------------------------------------------------------------------------- OOD statistics

def test_two_sample_test_known_values():
    r = ot.two_sample_test([1, 2, 3], [4, 5, 6])
    # pooled SD = 1, d = -3; t = -3 / (1 * sqrt(1/3 + 1/3))
    assert r["d"] == pytest.approx(-3.0)
    assert r["t"] == pytest.approx(-3 / math.sqrt(2 / 3))


def test_paired_test_known_values():
    r = ot.paired_test([2, 4, 6], [1, 2, 3])                           # differences 1, 2, 3
    assert r["d"] == pytest.approx(2.0)                                 # mean 2 / SD 1
    assert r["t"] == pytest.approx(2 / (1 / math.sqrt(3)))


def test_kind_tests_and_correlations():
    rows = []
    for i, (kind, s, c) in enumerate([("alternating", 1, .30), ("alternating", 2, .31), ("alternating", 3, .32),
                                      ("random_mixed", 4, .33), ("random_mixed", 5, .34), ("random_mixed", 6, .35)]):
        rows.append({"kind": kind, "mode": "simple", "collection": "news+vispub", "base_pair_id": -1,
                     "score_mean": s, "min_coherence": c, "mean_coherence": c + .1})
    for pid, s in [(0, 3.0), (1, 4.0), (2, 6.0)]:
        rows.append({"kind": "shuffled", "mode": "simple", "collection": "news", "base_pair_id": pid,
                     "score_mean": s, "min_coherence": .2, "mean_coherence": .3})
    long = pd.DataFrame(rows)
    originals = pd.DataFrame({"collection": "news", "pair_id": [0, 1, 2], "mode": "simple",
                              "score_mean": [4.0, 6.0, 9.0], "min_coherence": .5, "mean_coherence": .6})
    t = ot.kind_tests(long, originals, values=("score_mean",)).set_index("comparison")
    assert t.loc["alternating_vs_random_mixed", "d"] == pytest.approx(-3.0)
    assert t.loc["shuffled_vs_original", "d"] == pytest.approx(-2.0)      # diffs -1, -2, -3
    assert t.loc["shuffled_vs_original", "test"] == "paired_t"
    r = ot.kind_correlations(long).set_index(["group", "predictor"])
    assert r.loc[("ood", "min_coherence"), "r"] == pytest.approx(1.0)
    assert r.loc[("ood", "min_coherence"), "n"] == 6
    s = ot.kind_summary(long).set_index("kind")
    assert s.loc["alternating", "score_mean"] == pytest.approx(2.0)
    assert s.loc["alternating", "score_sd"] == pytest.approx(1.0)


def test_judge_frame_and_judged_narratives_round_trip():
    narr = on.add_coherence(on.alternating_narratives(COLL, n=2, lengths=[3], seed=0), lambda _: np.full((50, 50), .3))
    narr["titles"] = [[f"t{i}" for i in p] for p in narr["path"]]
    jf = on.judge_frame(narr)
    assert jf["pair_id"].tolist() == ["alternating-0", "alternating-1"]
    assert set(jf["method"]) == {"alternating"} and jf["titles"].iat[0] == narr["titles"].iat[0]
    # scores in the layout judges.run_judges returns; one failed agent is not scored
    scores = pd.DataFrame({"collection": on.MIXED_COLLECTION, "pair_id": ["alternating-0"] * 2 + ["alternating-1"] * 2,
                           "method": "alternating", "mode": "simple", "agent": [0, 1, 0, 1],
                           "score": [2.0, 4.0, 5.0, np.nan], "status": ["ok", "ok", "ok", "failed"]})
    long = study.judged_narratives(narr, scores).set_index("narrative_id")
    assert long.loc[0, "score_mean"] == 3.0 and long.loc[0, "n_agents"] == 2
    assert long.loc[1, "score_mean"] == 5.0 and long.loc[1, "n_agents"] == 1
    assert long.loc[0, "min_coherence"] == pytest.approx(0.3)


def test_union_documents_subsets_evenly():
    docs = pd.DataFrame({"doc": range(10), "title": list("abcdefghij"), "date": pd.date_range("2020-01-01", periods=10),
                         "text": list("abcdefghij")})
    out = jc.union_documents({"news": docs, "vispub": docs}, subset={"vispub": 4})
    assert len(out["news"]) == 10 and len(out["vispub"]) == 4
    assert out["vispub"]["title"].tolist() == ["a", "d", "g", "j"]          # spread over the whole span


def test_cost_sample_through_the_gateway_splits_fresh_and_cached(tmp_path, monkeypatch):
    """The judges run twice through a real gateway (fake chat-completions server): the first run
    is fresh, the second answered from the cache; Table 5 times only the fresh calls."""
    from judgelab.gateway import Gateway
    from fake_openai_server import FakeChatServer, Reply
    from judgelab.narrative.judges import run as judges

    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    sample = pd.DataFrame({"collection": "news", "pair_id": [0, 0], "method": ["maxcap", "random"],
                           "titles": [["A", "B", "C"], ["A", "C"]]})
    usage = {"prompt_tokens": 120, "completion_tokens": 7, "total_tokens": 127}
    with FakeChatServer(lambda body: Reply(content='{"coherence_score": 6}', usage=usage)) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="gpt-4.1", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite", progress=False)
        for _ in range(2):
            judges.run_judges(gw, sample, modes=("simple",), k=1, seed=1, max_tokens=16, profile="smoke")
        assert srv.n_calls == 2                                           # the second run never reached the server
    ledger = gw.ledger_frame()
    split = cost.fresh_cached_split(ledger).iloc[0]
    assert (split["n_calls"], split["n_fresh"], split["n_cached"]) == (4, 2, 2)
    prompts = cost.prompt_token_table(sample, ("simple",), model=gw.model_name)
    t = cost.cost_table(cost.cost_calls(ledger, prompts)).iloc[0]
    assert (t["n_narratives"], t["n_fresh"], t["n_cached"]) == (2, 2, 2)
    assert t["reported_input_mean"] == 120 and t["output_tokens_mean"] == 7
    fresh = ledger.loc[~ledger["cached"].astype(bool), "latency_s"]
    assert t["time_s_mean"] == pytest.approx(fresh.mean())
    # gpt-4.1 at $2 / $8 per million tokens: (120 * 2 + 7 * 8) / 1e6 per call -> x 1,000 narratives
    assert t["usd_per_1k"] == pytest.approx((120 * 2.0 + 7 * 8.0) / 1e6 * 1000)
    assert t["encoding"] == "o200k_base"


def test_both_ood_kinds_against_the_typical_narratives_one_sided_with_holm():
    """Alternating narratives far below the typical (max-capacity) ones, random mixed on a par:
    the one-sided Welch p equals scipy's ``alternative='less'``, Holm over the two kinds."""
    import numpy as np
    import pandas as pd
    from scipy import stats as sps
    from statsmodels.stats.multitest import multipletests

    from judgelab.narrative.analyses.ood_tests import kind_tests

    rng = np.random.default_rng(4)
    typical = rng.normal(7.0, 0.8, 30)
    alt, mixed = rng.normal(2.0, 0.4, 12), rng.normal(7.1, 0.8, 12)
    long = pd.DataFrame({"mode": "simple", "kind": ["alternating"] * 12 + ["random_mixed"] * 12,
                         "score_mean": np.r_[alt, mixed], "collection": "news", "base_pair_id": "x"})
    originals = pd.DataFrame({"mode": "simple", "collection": "news", "pair_id": [f"p{i}" for i in range(30)],
                              "score_mean": typical})
    t = kind_tests(long, originals, values=("score_mean",)).set_index("comparison")
    want = [sps.ttest_ind(x, typical, equal_var=False, alternative="less").pvalue for x in (alt, mixed)]
    assert t.loc["alternating_vs_typical", "p"] == pytest.approx(want[0])
    assert t.loc["random_mixed_vs_typical", "p"] == pytest.approx(want[1])
    holm = multipletests(want, method="holm")[1]
    assert list(t.loc[["alternating_vs_typical", "random_mixed_vs_typical"], "p_holm"]) == pytest.approx(list(holm))
    assert t.loc["alternating_vs_typical", "p_holm"] < 0.001 and t.loc["random_mixed_vs_typical", "p_holm"] > 0.5
    assert t.loc["alternating_vs_typical", "d"] < 0
