"""Notebook 10's chains as tested functions: its knobs, the cost sample and the OOD study run end
to end through a real gateway against the local fake chat server, with known answers."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from judgelab import profiles
from judgelab.narrative.analyses import cost, ood_study
from judgelab.narrative.settings import cost_ood_knobs
from judgelab.narrative.analyses.joint_collection import JointCollection
from judgelab.narrative.analyses.ood_narratives import MIXED_COLLECTION
from figure_geometry import text_overlaps

# --------------------------------------------------------------------------- knobs


def test_resolve_takes_the_profile_and_parses_string_overrides():
    base = cost_ood_knobs("smoke")
    assert base["jsd_base"] == pytest.approx(math.e)                   # notebook 07's log base ("e")
    assert {k: v for k, v in base.items() if k != "jsd_base"} == profiles.knobs("cost_ood", "smoke")
    knobs = cost_ood_knobs("smoke", n_cost_sample="5", n_ood="4", n_perturbed="all", k="3",
                                      ood_modes="simple, cot")
    assert knobs["n_cost_pairs"] == 2                                  # 5 narratives -> 2 endpoint pairs
    assert knobs["n_ood"] == 4 and knobs["n_perturbed"] is None and knobs["k"] == 3
    assert knobs["ood_modes"] == ("simple", "cot")
    assert cost_ood_knobs("smoke", n_cost_sample=1)["n_cost_pairs"] == 1
    assert cost_ood_knobs("smoke", k="all")["k"] is None     # notebook 09's K
    assert cost_ood_knobs("demo", k="default")["k"] is None  # "default" = the profile's
    assert cost_ood_knobs("smoke", n_ood="None")["n_ood"] == base["n_ood"]


@pytest.mark.parametrize("override, word", [({"n_ood": "many"}, "N_OOD"), ({"k": "0"}, "K"),
                                            ({"n_cost_sample": "0"}, "N_COST_SAMPLE"),
                                            ({"ood_modes": "simple,fancy"}, "fancy")])
def test_resolve_names_the_bad_parameter(override, word):
    with pytest.raises(ValueError, match=word):
        cost_ood_knobs("smoke", **override)


# --------------------------------------------------------------------------- a synthetic world

OFF = (7, 8, 9)
"""News documents that are off-topic: coherence 0.1 with everything; document 6 is lukewarm (0.5),
the others cohere at 0.9."""


def _news_coherence() -> np.ndarray:
    c = np.full((10, 10), 0.9)
    c[:, 6] = c[6, :] = 0.5
    c[:, list(OFF)] = 0.1
    c[list(OFF), :] = 0.1
    np.fill_diagonal(c, 0.0)
    return c


def _titles() -> list[str]:
    return [f"OFF topic {i}" if i in OFF else f"Story {i}" for i in range(10)]


def _paths() -> pd.DataFrame:
    c = _news_coherence()
    rows = [(0, "maxcap", [0, 1, 2, 3]), (0, "random", [0, 6, 3]), (1, "maxcap", [0, 4, 5]), (1, "random", [0, 5]),
            (2, "maxcap", [1, 2, 3]), (2, "random", [1, 3])]
    out = []
    for pid, method, path in rows:
        edges = [c[a, b] for a, b in zip(path[:-1], path[1:])]
        out.append({"collection": "news", "pair_id": pid, "method": method, "path": path,
                    "titles": [_titles()[i] for i in path], "length": len(path),
                    "min_coherence": min(edges), "mean_coherence": float(np.mean(edges))})
    return pd.DataFrame(out)


def _scores_09() -> pd.DataFrame:
    """Notebook 09's judges on pairs 0 and 1 (pair 2 not judged): two agents, seeds 2025 and 2026."""
    agents = {(0, "maxcap"): [7, 9], (0, "random"): [3, 5], (1, "maxcap"): [5, 7], (1, "random"): [2, 2]}
    rows = [{"collection": "news", "pair_id": pid, "method": m, "mode": "simple", "agent": a, "seed": 2025 + a,
             "score": float(s), "status": "ok"}
            for (pid, m), ss in agents.items() for a, s in enumerate(ss)]
    return pd.DataFrame(rows)


def _joint() -> JointCollection:
    docs = pd.DataFrame({"collection": ["news"] * 6 + ["vispub"] * 6, "doc": list(range(6)) * 2,
                         "title": [f"news {i}" for i in range(6)] + [f"paper {i}" for i in range(6)],
                         "date": pd.Timestamp("2020-01-01")})
    docs["joint"] = np.arange(12)
    coherence = np.full((12, 12), 0.3)
    np.fill_diagonal(coherence, 0.0)
    return JointCollection(docs, np.zeros((12, 4), np.float32), coherence, n_topics=2, embedding_source="toy")


def _judge(body: dict) -> dict:
    """Scripted judge: 2 for a narrative holding an off-topic document, 3 for a mixed narrative
    (recognised by the OOD wording), 6 otherwise."""
    user = body["messages"][-1]["content"]
    system = body["messages"][0]["content"]
    if "OFF topic" in user:
        return {"coherence_score": 2}
    if "news articles and scientific articles" in system + user:
        return {"coherence_score": 3}
    return {"coherence_score": 6}


@pytest.fixture
def fake_gateway(tmp_path):
    from judgelab.gateway import Gateway

    def make(server):
        return Gateway.from_settings(backend="openai-compatible", model="gpt-4.1", base_url=server.base_url,
                                     cache_path=tmp_path / "cache.sqlite", progress=False)
    return make


# --------------------------------------------------------------------------- the OOD study


def test_ood_agents_follow_notebook_09():
    s = _scores_09()
    assert ood_study.ood_agents(s) == (2, 2025)                         # 09's K and base seed
    assert ood_study.ood_agents(s, k=4) == (4, 2025)
    vispub = pd.DataFrame({"collection": "vispub", "pair_id": 0, "method": "maxcap", "mode": "simple",
                           "agent": [0, 1, 2], "seed": [2025, 2026, 2027], "score": 5.0, "status": "ok"})
    mixed_k = pd.concat([s, vispub])                                    # 2 agents on news, 3 on vispub
    assert ood_study.ood_agents(mixed_k) == (None, 2025)                # the paper's K per collection
    assert ood_study.ood_agents(s.iloc[0:0], default_seed=7) == (None, 7)


def test_run_ood_study_end_to_end(fake_gateway, tmp_path, monkeypatch):
    from fake_openai_server import FakeChatServer

    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    with FakeChatServer(_judge) as srv:
        study = ood_study.run_ood_study(
            fake_gateway(srv), _joint(), _paths(), _scores_09(), {"news": _news_coherence()}, {"news": _titles()},
            n_ood=3, n_perturbed=None, modes=("simple",), k=None, seed=11, off_topic_quantile=0.3,
            max_tokens=16, reasoning_chars=40, profile="smoke")
        n_calls = srv.n_calls
    kinds = study.narratives.groupby("kind").size().to_dict()
    # both judged max-capacity paths have 3+ documents; pair 2 was not judged by 09
    assert kinds == {"alternating": 3, "random_mixed": 3, "shuffled": 2, "off_topic": 2}
    assert (study.k, study.seed) == (2, 2025)
    assert n_calls == 10 * 2 and (study.raw_scores["status"] == "ok").all()
    assert set(study.raw_scores["seed"]) == {2025, 2026}
    mixed = study.narratives[study.narratives["collection"] == MIXED_COLLECTION]
    assert np.allclose(mixed["min_coherence"], 0.3)                    # read on the joint landscape
    off = study.narratives[study.narratives["kind"] == "off_topic"]
    assert np.allclose(off["min_coherence"], 0.1)                      # read on the collection's own
    assert list(study.long.columns) == ood_study.LONG_COLUMNS
    by_kind = study.long.groupby("kind")["score_mean"].mean()
    assert by_kind["alternating"] == 3 and by_kind["off_topic"] == 2 and by_kind["shuffled"] == 6
    assert by_kind["maxcap"] == pytest.approx(7.0)                      # 09's means 8 and 6
    assert study.kinds == ["maxcap", "random", "alternating", "random_mixed", "shuffled", "off_topic"]
    t = study.tests[study.tests["value"] == "score_mean"].set_index("comparison")
    # off-topic 2 vs originals 8, 6: diffs -6, -4 -> d_z = -5 / sqrt(2); shuffled: diffs -2, 0
    assert t.loc["off_topic_vs_original", "d"] == pytest.approx(-5 / math.sqrt(2))
    assert t.loc["shuffled_vs_original", "d"] == pytest.approx(-1 / math.sqrt(2))
    assert t.loc["alternating_vs_random_mixed", "n_a"] == 3 and np.isnan(t.loc["alternating_vs_random_mixed", "d"])
    s = study.summary.set_index("kind")
    assert s.loc["maxcap", "n"] == 2 and s.loc["alternating", "score_sd"] == 0.0


def test_judged_narratives_keep_fully_failed_narratives_unscored():
    narratives = pd.DataFrame({"kind": "shuffled", "narrative_id": [0, 1], "collection": "news",
                               "base_pair_id": [4, 5], "length": 3, "min_coherence": .5, "mean_coherence": .6})
    raw = pd.DataFrame({"collection": "news", "pair_id": ["shuffled-0", "shuffled-0", "shuffled-1"],
                        "method": "shuffled", "mode": "simple", "agent": [0, 1, 0], "score": [4.0, 6.0, np.nan],
                        "status": ["ok", "ok", "failed"]})
    out = ood_study.judged_narratives(narratives, raw).set_index("narrative_id")
    assert out.loc[0, "score_mean"] == 5.0 and out.loc[0, "base_pair_id"] == 4
    assert np.isnan(out.loc[1, "score_mean"]) and (out.loc[1, "n_agents"], out.loc[1, "n_failed"]) == (0, 1)


def test_in_distribution_long_relabels_methods_as_kinds():
    judged = pd.DataFrame({"collection": "news", "pair_id": [3, 3], "method": ["maxcap", "random"], "length": 2,
                           "min_coherence": .5, "mean_coherence": .6, "mode": "simple", "score_mean": [7.0, 4.0],
                           "score_sd": 1.0, "n_agents": 2, "n_failed": 0})
    out = ood_study.in_distribution_long(judged)
    assert list(out.columns) == ood_study.LONG_COLUMNS
    assert out["kind"].tolist() == ["maxcap", "random"] and (out["base_pair_id"] == 3).all()


# --------------------------------------------------------------------------- the cost sample


def test_cost_collection_prefers_vispub():
    p = pd.DataFrame({"collection": ["news", "vispub"]})
    assert cost.cost_collection(p) == "vispub" and cost.cost_collection(p[p.collection == "news"]) == "news"
    with pytest.raises(ValueError, match="narr_paths"):
        cost.cost_collection(p.iloc[0:0])


def test_run_cost_sample_reads_only_its_own_ledger_rows(fake_gateway, tmp_path, monkeypatch):
    from fake_openai_server import FakeChatServer, Reply

    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    paths = pd.concat([_paths(), _paths().assign(collection="vispub")], ignore_index=True)
    usage = {"prompt_tokens": 90, "completion_tokens": 5, "total_tokens": 95}
    with FakeChatServer(lambda body: Reply(content='{"coherence_score": 5}', usage=usage)) as srv:
        gw = fake_gateway(srv)
        first = cost.run_cost_sample(gw, paths, n_pairs=2, modes=("simple",), seed=3, max_tokens=16, profile="smoke")
        again = cost.run_cost_sample(gw, paths, n_pairs=2, modes=("simple",), seed=3, max_tokens=16, profile="smoke")
        assert srv.n_calls == 4                                        # the second sample came from the cache
    assert first.collection == "vispub" and len(first.sample) == 4 and set(first.sample["collection"]) == {"vispub"}
    assert (first.split["n_fresh"].iat[0], first.split["n_cached"].iat[0]) == (4, 0)
    assert (again.split["n_calls"].iat[0], again.split["n_cached"].iat[0]) == (4, 4)
    assert first.calls["tiktoken_input"].notna().all() and (first.calls["input_tokens"] == 90).all()
    t = cost.cost_table(again.calls).iloc[0]
    assert np.isnan(t["time_s_mean"]) and t["n_cached"] == 4          # cache hits are never timed


def test_judged_cost_performance_uses_09s_correlations():
    paths = _paths()
    scores = []
    for r in paths.itertuples():                                       # simple tracks coherence, complex inverts it
        for mode, s in (("simple", 10 * r.mean_coherence), ("complex", 10 - 10 * r.mean_coherence)):
            scores.append({"collection": "news", "pair_id": r.pair_id, "method": r.method, "mode": mode,
                           "agent": 0, "score": s, "status": "ok"})
    table05 = pd.DataFrame({"mode": ["simple", "complex"], "tiktoken_input_mean": [100.0, 200.0]})
    out = cost.judged_cost_performance(table05, paths, pd.DataFrame(scores), "news").set_index("mode")
    assert out.loc["simple", "r"] == pytest.approx(1.0) and out.loc["complex", "r"] == pytest.approx(-1.0)
    assert out.loc["complex", "r_gain"] == pytest.approx(-2.0)
    assert out.loc["complex", "r_gain_per_100_tokens"] == pytest.approx(-2.0)


def test_ood_scores_figure_draws_every_narrative_once():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from judgelab.narrative.analyses import figures

    long = pd.DataFrame({"kind": ["maxcap", "random", "alternating", "off_topic"] * 3,
                         "mode": ["simple"] * 8 + ["cot"] * 4,
                         "score_mean": [1, 2, 3, 4, 5, 6, 7, np.nan, 9, 10, 2, 3],
                         "min_coherence": np.linspace(0.2, 0.8, 12)})
    fig = figures.ood_scores(long, ood_study.KINDS)
    score_ax, coherence_ax = fig.axes[:2]
    points = [sum(len(c.get_offsets()) for c in ax.collections) for ax in (score_ax, coherence_ax)]
    assert points == [11, 12]                                           # one point per narrative and mode, NaN left out
    assert [t.get_text() for t in score_ax.get_xticklabels()] == ["maxcap", "random", "alternating", "off_topic"]
    assert len(fig.legends) == 1 and [t.get_text() for t in fig.legends[0].get_texts()] == ["simple", "cot"]   # the paper's mode order
    assert text_overlaps(fig) == []
    plt.close(fig)
