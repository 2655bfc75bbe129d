"""The judge panel: members' settings and keys, a run per member into its own root, the crossed
self-preference design (recovered through the fake server, null without a planted effect, its
interval's coverage at the corpus' sizes) and the inter-judge tables."""
from __future__ import annotations

import hashlib
import os
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fake_openai_server import FakeChatServer
from judgelab import panel
from judgelab.behaviour import judge_panel, self_preference

ROOT = Path(__file__).resolve().parents[1]
CORPUS = pd.read_csv(ROOT / "data" / "corpus" / "stories.csv")[["story_id", "category", "title", "model", "tier"]]
LLM = CORPUS[CORPUS["category"] == "llm"].reset_index(drop=True)
PLANTED = 0.8  # the openai judge's bonus for openai-written stories


def _write_panel(tmp_path: Path, text: str) -> Path:
    f = tmp_path / "panel.toml"
    f.write_text(textwrap.dedent(text), encoding="utf-8")
    return f


# ---------------------------------------------------------------- the panel file and each member's environment

@pytest.mark.parametrize("body, message", [
    ('[[member]]\nname = "a b"\nbackend = "openai"\n', "'name' must be"),
    ('[[member]]\nname = "a"\n', "'backend' is required"),
    ('[[member]]\nname = "a"\nbackend = "openai"\nkey = "sk-1"\n', "unknown field(s) ['key']"),
    ('[[member]]\nname = "a"\nbackend = "vllm"\n', "needs 'base_url'"),
    ('[[member]]\nname = "a"\nbackend = "openai"\n[[member]]\nname = "a"\nbackend = "openai"\n', "names repeat"),
    ('[member]\nname = "a"\n', "no [[member]] tables"),
])
def test_a_bad_panel_file_is_named_with_its_member(tmp_path, body, message):
    with pytest.raises(SystemExit, match=None) as err:
        panel.read_panel(_write_panel(tmp_path, body))
    assert message in str(err.value) and "panel.toml" in str(err.value)


def test_each_member_gets_its_judge_its_root_and_only_its_own_key(tmp_path):
    members = panel.read_panel(_write_panel(tmp_path, """
        [[member]]
        name = "gpt"
        backend = "openai"
        model = "gpt-4.1"
        key_env = "KEY_GPT"
        [[member]]
        name = "qwen"
        backend = "openai-compatible"
        base_url = "http://127.0.0.1:9/v1"
        model = "qwen-7b"
        key_env = "KEY_QWEN"
        [[member]]
        name = "local"
        backend = "vllm"
        base_url = "http://127.0.0.1:10/v1"
    """))
    parent = {"OPENAI_API_KEY": "sk-parent", "JUDGELAB_API_KEY": "parent-other", "KEY_GPT": "sk-gpt",
              "KEY_QWEN": "qwen-key", "JUDGELAB_SAGE_MODEL": "gpt-5", "OPENAI_BASE_URL": "https://proxy.example/v1",
              "PATH": "/bin"}
    gpt, qwen, local = (panel.member_env(m, members, parent, tmp_path) for m in members)
    assert gpt["OPENAI_API_KEY"] == "sk-gpt" and "JUDGELAB_API_KEY" not in gpt
    assert gpt["JUDGELAB_BACKEND"] == "openai" and gpt["JUDGELAB_MODEL"] == "gpt-4.1" and "JUDGELAB_BASE_URL" not in gpt
    assert qwen["JUDGELAB_API_KEY"] == "qwen-key" and "OPENAI_API_KEY" not in qwen
    assert qwen["JUDGELAB_BASE_URL"] == "http://127.0.0.1:9/v1" and qwen["JUDGELAB_BACKEND"] == "openai-compatible"
    assert "OPENAI_API_KEY" not in local and "JUDGELAB_API_KEY" not in local and "JUDGELAB_MODEL" not in local
    for env in (gpt, qwen, local):
        assert not {"KEY_GPT", "KEY_QWEN", "JUDGELAB_SAGE_MODEL", "OPENAI_BASE_URL"} & set(env) and env["PATH"] == "/bin"
    assert qwen["JUDGELAB_OUTPUT_ROOT"] == str(tmp_path / "results" / "panel" / "qwen")
    with pytest.raises(SystemExit, match="KEY_QWEN is not set"):
        panel.member_env(members[1], members, {"KEY_GPT": "sk-gpt"}, tmp_path)


def test_a_member_copies_inputs_no_judge_wrote_and_never_another_judges(tmp_path):
    base_interim = tmp_path / "results" / "interim"
    base_interim.mkdir(parents=True)
    for name in ("corpus", "narr_paths", "sage_summary_L4"):
        (base_interim / f"{name}.parquet").write_bytes(b"x")
    root = panel.member_root("m", tmp_path)
    panel.seed_member(root, ["02"], tmp_path)
    assert sorted(p.name for p in (root / "results" / "interim").iterdir()) == ["corpus.parquet"]
    with pytest.raises(SystemExit, match="has no narr_judge_scores of its own: run the panel on notebook 09"):
        panel.seed_member(root, ["12"], tmp_path)


# ---------------------------------------------------------------- a run per member, against two fake hosts

def _noise(model: str, story: str) -> float:
    """A fixed pseudo-random judge error in [-0.5, 0.5) per judge and story."""
    return int(hashlib.sha256(f"{model}|{story}".encode()).hexdigest()[:8], 16) / 2 ** 32 - 0.5


def _quality(story: str) -> float:
    return 2.0 + 2.0 * (int(hashlib.sha256(story.encode()).hexdigest()[:8], 16) / 2 ** 32)


def score_rule(model: str, story: str, bonus: float) -> float:
    """The fake judges' rule: the story's quality, the judge's error, and ``bonus`` when an openai
    judge reads an openai-written story."""
    writer = LLM.set_index("story_id").loc[story, "model"]
    own = self_preference.family_of(model) == "openai" == self_preference.family_of(writer)
    return float(np.clip(_quality(story) + _noise(model, story) + bonus * own, 1, 5))


def _script(bonus: float):
    def reply(body: dict) -> dict:
        story = body["messages"][-1]["content"].split("story ")[-1]
        return {"score": score_rule(body["model"], story, bonus)}
    return reply


TOY_NOTEBOOK = '''# %% tags=["parameters"]
PROFILE = "smoke"

# %%
import pandas as pd
from pydantic import BaseModel, Field

from judgelab import interim
from judgelab.gateway import ChatRequest, Gateway, Message


class Score(BaseModel):
    score: float = Field(ge=1, le=5)


stories = pd.read_csv("../stories.csv")
gw = Gateway.from_settings()
res = gw.run_batch([ChatRequest(messages=[Message(role="user", content=f"Rate story {s}")], schema=Score,
                                template_version="toy-v1", tags={"item": s}) for s in stories["story_id"]])
summary = stories[["story_id", "category", "tier"]].assign(
    layer="L4", mode="content", overall_score=[r.parsed.score for r in res], validator_blind_overall=3.0,
    eval_validator_mad=0.0, max_r4_r5_change=0.0, trust_level="high", status="ok", n_repairs=0, n_failures=0,
    knows_work=None, truncated=False, backend=gw.backend_name, model=gw.model_name, profile=PROFILE)
interim.write(summary, "sage_summary_L4")
'''


def test_a_panel_run_gives_each_member_its_root_cache_and_key_and_recovers_a_planted_preference(tmp_path, monkeypatch):
    project, out = tmp_path / "project", tmp_path / "out"
    (project / "notebooks").mkdir(parents=True)
    (project / "notebooks" / "02_toy.py").write_text(TOY_NOTEBOOK, encoding="utf-8")
    LLM.assign(tier=LLM["tier"].fillna("")).to_csv(project / "stories.csv", index=False)
    (out / "results" / "interim").mkdir(parents=True)
    (out / "results" / "interim" / "corpus.parquet").write_bytes(b"read by 02, copied to each member")
    panel_file = _write_panel(tmp_path, """
        [[member]]
        name = "gpt"
        backend = "openai-compatible"
        base_url = "{a}"
        model = "gpt-4.1-fake"
        key_env = "PANEL_KEY_GPT"
        [[member]]
        name = "qwen"
        backend = "openai-compatible"
        base_url = "{b}"
        model = "qwen-fake"
        key_env = "PANEL_KEY_QWEN"
    """)
    with FakeChatServer(_script(PLANTED), model="gpt-4.1-fake") as a, FakeChatServer(_script(PLANTED), model="qwen-fake") as b:
        panel_file.write_text(panel_file.read_text().format(a=a.base_url, b=b.base_url))
        for k, v in {"JUDGELAB_PROJECT_ROOT": str(project), "JUDGELAB_OUTPUT_ROOT": str(out),
                     "PANEL_KEY_GPT": "key-of-gpt", "PANEL_KEY_QWEN": "key-of-qwen",
                     "OPENAI_API_KEY": "sk-never-sent", "JUDGELAB_API_KEY": "never-sent",
                     "JUDGELAB_CACHE_MODE": "normal", "PYTHONPATH": os.pathsep.join([str(ROOT / "lib"),
                                                                                     os.environ.get("PYTHONPATH", "")])}.items():
            monkeypatch.setenv(k, v)
        panel.run(panel_file, ["2"], "smoke")
        assert set(a.authorizations) == {"Bearer key-of-gpt"} and set(b.authorizations) == {"Bearer key-of-qwen"}
        assert {c["model"] for c in a.calls} == {"gpt-4.1-fake"} and {c["model"] for c in b.calls} == {"qwen-fake"}
    for name in ("gpt", "qwen"):
        root = panel.member_root(name, out)
        assert (root / "results" / "cache" / "llm_cache.sqlite").exists()
        assert (root / "results" / "executed" / "02_toy.ipynb").exists()
    scores = panel.stack(["sage_summary_L4"], out)
    assert set(scores["judge"]) == {"gpt", "qwen"} and set(scores["model"]) == {"gpt-4.1-fake", "qwen-fake"}
    table = self_preference.self_preference_table(scores, CORPUS).set_index("judge_family")
    gpt = table.loc["openai"]
    assert gpt["status"] == "ok" and gpt["n_sets"] == 5
    assert gpt["ci_low"] <= PLANTED <= gpt["ci_high"] and gpt["ci_low"] > 0
    assert table.loc["qwen", "ci_low"] <= 0 <= table.loc["qwen", "ci_high"]


def _panel_scores(bonus: float, models=("gpt-4.1-fake", "qwen-fake")) -> pd.DataFrame:
    return pd.DataFrame([{"judge": m, "model": m, "judge_family": None, "story_id": s, "layer": "L4", "mode": mode,
                          "overall_score": score_rule(m, s, bonus) + (0.7 if mode == "title" else 0.0)}
                         for m in models for s in LLM["story_id"] for mode in ("content", "title")])


def test_no_preference_is_found_in_a_panel_without_one_and_title_mode_is_left_out():
    table = self_preference.self_preference_table(_panel_scores(0.0), CORPUS).set_index("judge_family")
    assert set(table["mode"]) == {"content"}
    for fam in ("openai", "qwen"):
        assert table.loc[fam, "ci_low"] <= 0 <= table.loc[fam, "ci_high"]


def test_one_judge_family_gives_no_estimate():
    scores = _panel_scores(PLANTED, models=("gpt-4.1-fake", "gpt-4o-fake"))
    (row,) = self_preference.self_preference_table(scores, CORPUS).to_dict("records")
    assert row["status"] == self_preference.NOT_IDENTIFIABLE and np.isnan(row["did"])


def test_matched_sets_are_the_prompts_several_families_wrote_to():
    sets = self_preference.matched_sets(CORPUS)
    assert set(sets.loc[sets["prompt"] == "Mushroom Season", "family"]) == {"anthropic", "openai", "google"}
    assert "Different Eyes" not in set(sets["prompt"])  # one writer only


def test_the_t_interval_covers_at_the_corpus_sizes():
    """Simulated panels on the corpus' matched sets (judges openai + qwen, and google + mistral):
    story quality, a judge x prompt effect, each judge's leniency, a planted bonus b and normal
    errors; the 95% t interval over matched sets covers b in about 95% of 2,000 runs per family."""
    rng = np.random.default_rng(7)
    sets = self_preference.matched_sets(CORPUS)
    prompts = sets["prompt"].to_numpy()
    codes = pd.factorize(prompts)[0]
    for panel_fams in (("openai", "qwen"), ("google", "mistral")):
        other = ~sets["family"].isin(panel_fams).to_numpy()
        for fam in panel_fams:
            own = (sets["family"] == fam).to_numpy()
            hits, n_sets = 0, None
            for _ in range(2000):
                quality = rng.normal(0, 1, len(sets))
                y_own = quality + rng.normal(0, 0.5, codes.max() + 1)[codes] + 0.3 + 0.5 * own + rng.normal(0, 0.4, len(sets))
                y_oth = quality + rng.normal(0, 0.5, codes.max() + 1)[codes] + rng.normal(0, 0.4, len(sets))
                d = self_preference.set_contrasts(y_own - y_oth, prompts, own, other)
                _, lo, hi, _ = self_preference.did_interval(d)
                hits += lo <= 0.5 <= hi
                n_sets = len(d)
            assert n_sets >= 2, (fam, n_sets)
            assert 0.93 <= hits / 2000 <= 0.97, (panel_fams, fam, n_sets, hits / 2000)


def test_did_interval_says_why_it_has_none():
    assert "1 matched sets < 2" in self_preference.did_interval(np.array([0.4]))[3]
    assert "no variation" in self_preference.did_interval(np.array([0.4, 0.4, 0.4]))[3]


# ---------------------------------------------------------------- agreement and the headlines across judges

def _sage_panel(rng, shift: float = 0.0) -> pd.DataFrame:
    cats = ["canonical"] * 12 + ["pulp"] * 8 + ["llm"] * 8
    truth = np.array([{"canonical": 4.0, "pulp": 3.6, "llm": 2.8}[c] for c in cats]) + rng.normal(0, 0.3, len(cats))
    rows = []
    for j, lenient in (("a", 0.0), ("b", shift)):
        y = np.clip(truth + lenient + rng.normal(0, 0.1, len(cats)), 1, 5)
        rows += [{"judge": j, "story_id": f"s{i}", "category": c, "layer": "L4", "mode": "content",
                  "overall_score": v} for i, (c, v) in enumerate(zip(cats, y))]
    return pd.DataFrame(rows)


def test_judges_that_agree_have_a_high_icc_and_the_same_genre_ordering():
    data = _sage_panel(np.random.default_rng(1))
    (row,) = judge_panel.agreement(data, ["layer", "mode"], ["story_id"], "overall_score", n_boot=300).to_dict("records")
    assert row["icc2_1"] > 0.9 and row["icc2_1_ci_low"] <= row["icc2_1"] <= row["icc2_1_ci_high"]
    assert row["n_judges"] == 2 and row["krippendorff_alpha"] > 0.9 and row["unit"] == "story"
    head = judge_panel.sage_headline(data, n_boot=200)
    d = head[(head["what"] == "d") & (head["stat"] == "d_pooled_sd_canonical_llm")]
    assert set(d["ordering"]) == {"canonical > pulp > llm"} and (d["ci_low"] > 1).all()
    diff = head[head["what"] == "d minus a's"]
    assert ((diff["ci_low"] <= 0) & (diff["ci_high"] >= 0)).all()


def test_a_judge_that_only_shifts_every_score_lowers_absolute_agreement_but_not_d():
    data = _sage_panel(np.random.default_rng(2), shift=0.8)
    (row,) = judge_panel.agreement(data, ["layer"], ["story_id"], "overall_score", n_boot=300).to_dict("records")
    assert row["icc2_1"] < 0.7
    diff = judge_panel.sage_headline(data, n_boot=200).query("what == \"d minus a's\"")
    assert ((diff["ci_low"] <= 0) & (diff["ci_high"] >= 0)).all()


def test_narrative_headline_finds_the_judge_that_ignores_coherence():
    rng = np.random.default_rng(3)
    rows = []
    for pair in range(30):
        for method in ("maxcap", "random"):
            coh = rng.uniform(0.2, 0.9)
            for j, slope in (("a", 8.0), ("b", 0.0)):
                rows.append({"judge": j, "collection": "news", "mode": "simple", "pair_id": pair, "method": method,
                             "min_coherence": coh, "score_mean": 2 + slope * coh + rng.normal(0, 0.5)})
    head = judge_panel.narrative_headline(pd.DataFrame(rows), n_boot=500).set_index(["judge", "what"])
    assert head.loc[("a", "r with min_coherence"), "ci_low"] > 0.8
    b = head.loc[("b", "r with min_coherence")]
    assert b["ci_low"] <= 0 <= b["ci_high"]
    assert head.loc[("b", "r minus a's"), "ci_high"] < 0
    assert set(head["n_pairs"]) == {30}


# ---------------------------------------------------------------- the panel's price

def test_a_panel_is_priced_member_by_member_on_each_members_judge(tmp_path, monkeypatch):
    from judgelab.estimate import estimate
    from judgelab.estimate.panel import panel_estimate

    monkeypatch.setenv("JUDGELAB_NARRATIVE_MODEL", "gpt-5")  # the panel's members replace it
    f = _write_panel(tmp_path, """
        [[member]]
        name = "big"
        backend = "openai"
        model = "gpt-4.1"
        key_env = "UNSET_KEY_VARIABLE"
        [[member]]
        name = "small"
        backend = "openai"
        model = "gpt-4.1-mini"
    """)
    table = panel_estimate(f, "smoke", ["09"]).set_index("member")
    monkeypatch.delenv("JUDGELAB_NARRATIVE_MODEL")
    alone = estimate("smoke", "openai", "gpt-4.1", notebooks=("09",)).summary.iloc[0]
    assert table.loc["big", "model"] == "gpt-4.1" and table.loc["small", "model"] == "gpt-4.1-mini"
    assert table.loc["big", "calls"] == alone["calls"] == table.loc["small", "calls"]
    assert table.loc["big", "usd_standard_typical"] == pytest.approx(alone["usd_standard_typical"])
    assert table.loc["small", "usd_standard_typical"] < table.loc["big", "usd_standard_typical"]
    assert table.loc["total", "calls"] == 2 * alone["calls"]
