"""Every benchmark runs: each script's quick mode (seconds), in this process, against the current
API, so that a change which breaks one fails here and not at ``make bench``. Quick figures are no
measurement: these tests check that each script runs to its end and writes the figures its
full run reports (the ones docs/performance.md cites), never their values' speed.
"""
from __future__ import annotations

import importlib
import json
import math
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def bench(monkeypatch, tmp_path):
    """Import a benchmark script as ``make bench`` runs it (its folder first on the path), with
    the output root and the progress setting of this test only."""
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path / "root"))
    monkeypatch.setenv("JUDGELAB_PROGRESS", "0")

    def load(name: str):
        sys.modules.pop(name, None)
        return importlib.import_module(name)

    return load


def figures_in(path: Path, *names: str) -> dict:
    data = json.loads(path.read_text())
    for name in names:
        assert name in data, f"{path.name} lacks {name}"
        value = data[name]
        assert not isinstance(value, float) or math.isfinite(value), (name, value)
    return data


def test_every_benchmark_script_has_a_quick_test():
    scripts = {p.stem for p in BENCH.glob("bench_*.py")} | {"narr_path_length_investigation"}
    tested = {name[len("test_"):].replace("_quick", "") for name in globals() if name.startswith("test_")}
    tested |= {name.rsplit("_", 1)[0] for name in tested}
    assert scripts <= tested, f"no quick-mode test for {sorted(scripts - tested)}"


def test_importance_coverage_runs(bench, capsys):
    """Table 7's coverage simulation (docs/claims.md) runs to its one line per design and feature."""
    bench("importance_coverage").main(["--pairs", "3", "--runs", "2", "--boot", "3", "--trees", "3",
                                       "--truth-pairs", "30"])
    lines = capsys.readouterr().out.splitlines()
    assert sum(" covers truth " in line for line in lines) == 3 and lines[-1].startswith("CPU")


def test_bench_batch_faults_quick(bench, tmp_path):
    out = tmp_path / "batch_faults.json"
    bench("bench_batch_faults").main(["--quick", "--out", str(out)])
    data = figures_in(out, "evaluations", "scored_mean", "calls_paid_mean", "calls_unfinished_mean",
                      "rerun_calls_new_port_mean", "stopped_runs", "cores")
    # a count, not a time: at 5% server errors every evaluation of the quick design is scored
    assert data["scored_mean"] == data["evaluations"] == 7 and data["calls_unfinished_mean"] == 0


def test_bench_l123_quick(bench, tmp_path):
    out = tmp_path / "l123.json"
    assert bench("bench_l123").main(["--quick", "--out", str(out)]) == 0
    data = figures_in(out, "stories", "features", "stories_per_s_no_embed", "ratio_to_segmentation", "cpu_count")
    assert data["stories"] == 2 and data["features"] > 10


def test_bench_landscape_quick(bench, tmp_path):
    out = tmp_path / "landscape.json"
    assert bench("bench_landscape").main(["--quick", "--out", str(out)]) == 0
    figures_in(out, "speedup_vs_networkx", "peak_mem_mb", "n300_seconds", "n1200_peak_mem_mb", "seconds_exponent",
               "peak_mem_exponent", "speedup_dense_prim_vs_networkx", "critical", "memberships_speedup_vs_hdbscan")


def test_narr_path_length_investigation_quick(bench, tmp_path):
    table = bench("narr_path_length_investigation").main(["--quick"])
    written = tmp_path / "root" / "results" / "tables" / "narr_path_length_investigation.csv"
    assert written.exists() and written.with_suffix(".provenance.json").exists()
    assert len(table) > 1 and {"difference", "paper_mean"} <= set(table.columns)


def test_bench_gateway_quick(bench, tmp_path):
    out = tmp_path / "gateway.json"
    bench("bench_gateway").main(["--quick", "--skip-llm", "--out", str(out)])
    figures_in(out, "concurrency_speedup", "cache_hits_per_s", "cpu_count")


@pytest.mark.llm
def test_bench_gateway_followup_turn_quick(bench, tmp_path):
    figures = bench("bench_gateway").followup_turn_ratio(tmp_path, prefix_tokens=300)
    assert figures["followup_turn_ratio"] > 0 and figures["prefix_prompt_tokens"] >= 300


@pytest.mark.llm
def test_bench_sage_quick(bench, tmp_path):
    out = tmp_path / "sage.json"
    bench("bench_sage").main(["--quick", "--out", str(out)])
    figures_in(out, "seconds_per_evaluation", "processed_tokens_per_evaluation", "v2_seconds_per_evaluation",
               "processed_tokens_ratio", "prompt_tokens_processed_ratio", "engine_bound_s_per_evaluation",
               "prompt_tokens_per_s", "generated_tokens_per_s", "story_prefix_state_mb", "grammar_refusal_share")


@pytest.mark.llm
def test_bench_lanes_quick(bench, tmp_path):
    out = tmp_path / "lanes.json"
    bench("bench_lanes").main(["--quick", "--out", str(out)])
    figures_in(out, "one_seconds_per_evaluation", "two_seconds_per_evaluation", "throughput_ratio",
               "same_token_counts")
