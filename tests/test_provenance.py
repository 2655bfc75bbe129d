"""Provenance sidecars: every table and figure says who made it.

Known answers: the sidecar's sha256 is recomputed from the bytes on disk, the commit from ``git``,
the prompt versions from the prompt files' own front matter, the call counts from a ledger built
here from results whose tokens are set by the test.
"""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from judgelab import pipeline, profiles, provenance, reporting
from judgelab.run import Run
from judgelab.gateway import ChatRequest, Gateway, Message
from fake_openai_server import FakeChatServer
from judgelab.gateway.ledger import Ledger, PriceTable
from judgelab.gateway.types import ChatResult, Usage

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def out_root(tmp_path, monkeypatch):
    """A private output root, outside the pipeline (no notebook, profile or prompts in the environment)."""
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    for var in (provenance.ENV_NOTEBOOK, provenance.ENV_PROMPTS):
        monkeypatch.delenv(var, raising=False)
    yield tmp_path


def git_head() -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("url, host", [
    ("https://user:sk-secret@api.example.com:8443/v1?key=sk-secret", "api.example.com:8443"),
    ("http://127.0.0.1:5000/v1", "127.0.0.1:5000"),
    ("https://api.openai.com/v1", "api.openai.com"),
    ("localhost:8080", "localhost:8080"),
    (None, None),
])
def test_url_host_keeps_host_and_port_and_never_credentials(url, host):
    assert provenance.url_host(url) == host


def test_table_sidecar_names_judge_profile_seeds_prompts_commit_and_notebook(out_root, monkeypatch):
    monkeypatch.setenv(provenance.ENV_NOTEBOOK, "09_judge_modes")
    monkeypatch.setenv(provenance.ENV_PROMPTS, "toy-a-v1,toy-b-v2")
    knobs = profiles.knobs("human", "smoke")  # seed 7, selection_seed 11, boot_seed 2024
    assert knobs["n_boot"] == 500
    run = Run.open("09", profile="smoke", knobs=knobs)
    run.judge("openai", "gpt-5-mini")
    df = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})

    assert run.table(df, "toy_table") is df
    out = out_root / "results" / "tables" / "toy_table.csv"

    assert out.read_text() == df.to_csv(index=False)  # the CSV is the table, nothing added
    side = provenance.read_sidecar(out)
    assert out.with_name("toy_table.provenance.json").exists()
    assert side["output"] == "toy_table" and side["kind"] == "table" and side["file"] == "toy_table.csv"
    assert side["sha256"] == sha256(out)
    assert (side["notebook"], side["profile"]) == ("09_judge_modes", "smoke")
    assert (side["judge"], side["backend"], side["model"]) == ("openai:gpt-5-mini", "openai", "gpt-5-mini")
    assert side["embedded_small_model"] is False and side["warning"] == ""
    assert side["prompt_versions"] == ["toy-a-v1", "toy-b-v2"]
    assert side["seeds"] == ["boot_seed=2024", "seed=7", "selection_seed=11"]
    assert side["git_commit"] == git_head() and isinstance(side["git_dirty"], bool)
    assert side["written_at"].endswith("+00:00")
    assert all(not isinstance(v, dict) for v in side.values()), "sidecars are flat"


def test_a_run_outside_the_pipeline_names_its_notebook_file_and_two_runs_do_not_mix(out_root):
    first = Run.open("09", profile="paper", knobs={"seed": 1})
    first.judge("openai-compatible", "m", "http://u:sk-x@vllm.local:8000/v1")
    second = Run.open("07", profile="smoke")
    first.table(pd.DataFrame({"a": [1]}), "ctx")
    side = provenance.read_sidecar(out_root / "results" / "tables" / "ctx.csv")
    assert (side["notebook"], side["profile"], side["judge"]) == ("09_judge_modes", "paper", "openai-compatible:m")
    assert side["base_url_host"] == "vllm.local:8000" and "sk-x" not in json.dumps(side)
    assert side["seeds"] == ["seed=1"]
    second.table(pd.DataFrame({"a": [1]}), "other")
    other = provenance.read_sidecar(out_root / "results" / "tables" / "other.csv")
    assert (other["notebook"], other["judge"], other["seeds"]) == ("07_coherence_graph", "none", [])


def test_a_bad_profile_is_refused():
    with pytest.raises(ValueError, match="unknown PROFILE 'full'"):
        Run.open("09", profile="full")


def test_a_notebook_without_a_judge_says_judge_none(out_root, monkeypatch):
    monkeypatch.setenv(provenance.ENV_PROMPTS, "toy-a-v1")
    run = Run.open("01", profile="smoke")
    run.table(pd.DataFrame({"a": [1]}), "plain")
    side = provenance.read_sidecar(out_root / "results" / "tables" / "plain.csv")
    assert side["judge"] == "none" and side["backend"] is None and side["base_url_host"] is None
    assert side["prompt_versions"] == []  # no judge saw a prompt
    assert run.caption_line == "profile=smoke" and "No LLM judge" in run.banner_text()


def test_the_embedded_model_carries_the_warning(out_root):
    run = Run.open("05", profile="demo")
    run.judge("llamacpp", "SmolLM2-135M-Instruct")
    run.table(pd.DataFrame({"a": [1]}), "small")
    side = provenance.read_sidecar(out_root / "results" / "tables" / "small.csv")
    assert side["embedded_small_model"] is True
    assert side["warning"] == reporting.SMALL_MODEL_WARNING and side["warning"] in run.caption_line
    assert reporting.SMALL_MODEL_WARNING in run.banner_text()


def test_an_output_written_outside_a_run_names_no_one(out_root):
    side = provenance.read_sidecar(reporting.save_table(pd.DataFrame({"a": [1]}), "bare"))
    assert (side["notebook"], side["profile"], side["judge"], side["seeds"]) == (None, None, "none", [])


def test_figure_sidecar_hashes_the_png(out_root):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], [0, 1])
    png, pdf = Run.open("07", profile="smoke").figure(fig, "toy_fig", "a line.", show=False)
    side = json.loads((out_root / "figures" / "toy_fig.provenance.json").read_text())
    assert side["kind"] == "figure" and side["file"] == "toy_fig.png" and side["sha256"] == sha256(png)
    assert side["notebook"] == "07_coherence_graph"
    layout = json.loads((out_root / "figures" / "toy_fig.layout.json").read_text())
    assert any(t["name"] == "caption" for t in layout["texts"])  # "a line. profile=smoke", placed
    assert (out_root / "figures" / "toy_fig.layout.json").exists()


def test_the_gateway_a_run_uses_names_its_judge_host_and_calls(out_root, monkeypatch):
    monkeypatch.setenv(provenance.ENV_NOTEBOOK, "99_toy")
    with FakeChatServer() as srv:
        host = provenance.url_host(srv.base_url)
        run = Run.open("99", profile="smoke")
        gw = run.use(Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                           cache_path=out_root / "c.sqlite", transcripts=False, progress=False))
        request = ChatRequest(messages=[Message(role="user", content="say ok")])
        assert gw.chat(request).status == "ok"
        assert gw.chat(request).cached  # the second is a cache hit
        run.table(pd.DataFrame({"a": [1]}), "judged")
        side = provenance.read_sidecar(out_root / "results" / "tables" / "judged.csv")
    assert side["judge"] == "openai-compatible:fake-model"
    assert side["base_url_host"] == host and host.startswith("127.0.0.1:")
    ledger = json.loads((out_root / "results" / "runs" / "ledgers" / "99_toy.json").read_text())
    assert (ledger["calls"], ledger["fresh"], ledger["cached"], ledger["failed"]) == (2, 1, 1, 0)
    assert ledger["judges"] == ["openai-compatible:fake-model"]
    rows = pd.read_csv(out_root / "results" / "runs" / "ledgers" / "99_toy.csv")  # the rows behind it
    assert len(rows) == 2 and rows["cached"].tolist() == [False, True]
    assert rows["input_tokens"].sum() == ledger["input_tokens"]


def _result(status, cached, tokens, model="gpt-4.1-mini"):
    return ChatResult(status=status, cached=cached, backend="openai", model=model, key=f"k{tokens}",
                      usage=Usage(input_tokens=tokens, output_tokens=tokens // 10, cached_tokens=tokens // 2))


def test_ledger_summary_counts_fresh_cached_failed_tokens_and_usd():
    prices = PriceTable.load()
    ledger = Ledger(prices)
    results = [_result("ok", False, 1000), _result("ok", True, 2000), _result("failed", False, 300)]
    for r in results:
        ledger.record(r)
    got = provenance.summarize_ledger(ledger.frame())
    assert (got["calls"], got["fresh"], got["cached"], got["failed"]) == (3, 2, 1, 1)
    assert got["input_tokens"] == sum(r.usage.input_tokens for r in results)
    assert got["output_tokens"] == sum(r.usage.output_tokens for r in results)
    assert got["cached_tokens"] == sum(r.usage.cached_tokens for r in results)
    cost = [prices.cost(r.model, r.usage.input_tokens, r.usage.output_tokens, r.usage.cached_tokens) for r in results]
    assert got["cost_usd"] == pytest.approx(sum(cost))
    assert got["spent_usd"] == pytest.approx(cost[0] + cost[2])  # a cache hit is not paid again
    assert got["unpriced"] is False and got["judges"] == ["openai:gpt-4.1-mini"]
    ledger.record(_result("ok", False, 10, model="no-such-model"))
    assert provenance.summarize_ledger(ledger.frame())["unpriced"] is True


def test_empty_ledger_counts_nothing():
    got = provenance.summarize_ledger(pd.DataFrame())
    assert got["calls"] == got["fresh"] == got["cached"] == 0 and got["spent_usd"] == 0.0


def test_prompt_versions_come_from_version_files_and_front_matter(tmp_path):
    (tmp_path / "VERSION").write_text("toy-v9\n")
    (tmp_path / "judge.md").write_text("---\nversion: toy-judge-v2\n---\n## system\nS\n## user\nU\n")
    (tmp_path / "fragment.md").write_text("Rate the story.\n")  # a part of a prompt: no version of its own
    files = [tmp_path / "VERSION", tmp_path / "judge.md", tmp_path / "fragment.md"]
    assert pipeline.prompt_file_versions(files) == ["toy-judge-v2", "toy-v9"]


def test_pipeline_gives_the_kernel_notebook_profile_and_the_prompt_versions_it_reaches():
    env = pipeline.run_environment(pipeline.find_notebook("09"))
    assert env[provenance.ENV_NOTEBOOK] == "09_judge_modes"
    declared = sorted(re.search(r"^version:\s*(\S+)", p.read_text(), re.MULTILINE).group(1)
                      for p in (ROOT / "prompts" / "narrative").glob("judge_*.md"))
    assert env[provenance.ENV_PROMPTS].split(",") == declared
    sage = pipeline.run_environment(pipeline.find_notebook("02"))[provenance.ENV_PROMPTS]
    assert sage.split(",") == [(ROOT / "prompts" / "sage" / "VERSION").read_text().strip()]


def test_a_missing_sidecar_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="no provenance sidecar"):
        provenance.read_sidecar(tmp_path / "absent.csv")


# ---------------------------------------------------------------- from the resolved configuration


class _Judge:
    """What a run reads of a gateway: its study, judge and ledger (empty)."""

    def __init__(self, study, backend, model):
        self.study, self.backend_name, self.model_name, self.base_url = study, backend, model, None
        self.ledger = Ledger(PriceTable.load())


def test_a_notebook_with_two_judges_names_each_tables_own(out_root):
    from judgelab.behaviour.marking import writer

    run = Run.open("12", profile="smoke")
    sage, narr = _Judge("sage", "openai", "gpt-5-mini"), _Judge("narrative", "openai", "gpt-4.1")
    run.use(sage, narr)  # the narrative judge last: it used to name every table
    write = writer(run, {"sage": sage, "narrative": narr}, "smoke")
    write({"toy_sage": pd.DataFrame({"a": [1]})}, "sage")
    write({"toy_narr": pd.DataFrame({"a": [1]})}, "narrative")
    write({"toy_both": pd.DataFrame({"study": ["narrative", "sage"], "a": [1, 2]})})
    side = {n: provenance.read_sidecar(out_root / "results" / "tables" / f"{n}.csv") for n in ("toy_sage", "toy_narr", "toy_both")}
    assert (side["toy_sage"]["judge"], side["toy_sage"]["judges"]) == ("openai:gpt-5-mini", ["sage=openai:gpt-5-mini"])
    assert (side["toy_narr"]["judge"], side["toy_narr"]["judges"]) == ("openai:gpt-4.1", ["narrative=openai:gpt-4.1"])
    assert side["toy_both"]["judges"] == ["narrative=openai:gpt-4.1", "sage=openai:gpt-5-mini"]
    with pytest.raises(KeyError, match="no judge of study 'holistic'"):
        run.table(pd.DataFrame({"a": [1]}), "toy_none", study="holistic")


def test_the_seed_a_parameter_sets_is_the_seed_recorded_and_the_parameter_named(out_root):
    """Notebook 07's SEED overrides the profile's main seed: the sidecar says the seed used."""
    params = {"PROFILE": "smoke", "COLLECTIONS": None, "JSD_BASE": None, "SEED": 7, "SENSITIVITY_SEEDS": None}
    run = Run.open("07", profile="smoke", knobs=profiles.knobs("narrative", "smoke"), params=params)
    run.table(pd.DataFrame({"a": [1]}), "variant")
    side = provenance.read_sidecar(out_root / "results" / "tables" / "variant.csv")
    assert profiles.knobs("narrative", "smoke")["seed"] == 42 and side["seeds"] == ["seed=7"]
    assert side["parameters"] == ["SEED=7"]
    plain = Run.open("07", profile="smoke", knobs=profiles.knobs("narrative", "smoke"), params={**params, "SEED": None})
    assert plain.context()["seeds"] == ["seed=42"] and plain.context()["parameters"] == []
    off = Run.open("08", profile="smoke", params={"PROFILE": "smoke", "TEMPORAL": "off", "N_PAIRS": 3})
    assert off.context()["parameters"] == ["N_PAIRS=3", "TEMPORAL='off'"]


def test_a_notebook_run_by_hand_records_the_prompt_versions_it_reaches(out_root):
    """Without the pipeline's environment (JupyterLab), the versions come from the notebook's imports:
    notebook 09 reaches the narrative judge prompts, whose front matter declares them."""
    declared = sorted(re.search(r"^version:\s*(\S+)", p.read_text(), re.MULTILINE).group(1)
                      for p in (ROOT / "prompts" / "narrative").glob("judge_*.md"))
    run = Run.open("09", profile="smoke")
    run.judge("openai", "gpt-4.1")
    assert declared and run.context()["prompt_versions"] == declared


def test_the_git_state_is_read_for_each_output_not_once_per_process(tmp_path):
    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "f.txt").write_text("a")
    git("add", "f.txt")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "one")
    first = provenance.git_state(str(tmp_path))
    assert first[1] is False
    (tmp_path / "f.txt").write_text("b")  # an edit between two outputs of one kernel
    assert provenance.git_state(str(tmp_path)) == (first[0], True)
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qam", "two")
    second = provenance.git_state(str(tmp_path))
    assert second[0] != first[0] and second[1] is False
