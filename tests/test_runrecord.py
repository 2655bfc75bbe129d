"""The run record: package versions, data and output sha256s, call counts; and
the diff of two records.

Known answers: the outputs are files this test writes (their sha256 recomputed from the bytes),
the call counts come from a ledger built here, package versions from ``importlib.metadata``.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
from importlib import metadata
from pathlib import Path

import pandas as pd
import pytest

from judgelab import provenance, reporting, runrecord
from judgelab.gateway.ledger import Ledger, PriceTable
from judgelab.gateway.types import ChatResult, Usage

ROOT = Path(__file__).resolve().parents[1]
WHEN = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)


@pytest.fixture
def out_root(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(tmp_path))
    for var in (provenance.ENV_NOTEBOOK, provenance.ENV_PROMPTS):
        monkeypatch.delenv(var, raising=False)
    yield tmp_path


def _ledger(n_fresh: int, n_cached: int) -> Ledger:
    ledger = Ledger(PriceTable.load())
    for i in range(n_fresh + n_cached):
        ledger.record(ChatResult(status="ok", cached=i >= n_fresh, backend="openai", model="gpt-4.1-mini",
                                 key=f"k{i}", usage=Usage(input_tokens=100, output_tokens=10)))
    return ledger


def _outputs(root: Path) -> dict[str, bytes]:
    """Write one table (with its sidecar), one interim file and one figure file; return their bytes."""
    table = reporting.save_table(pd.DataFrame({"x": [1, 2, 3]}), "t1")
    (root / "results" / "interim").mkdir(parents=True, exist_ok=True)
    (root / "results" / "interim" / "i.parquet").write_bytes(b"interim bytes")
    (root / "figures").mkdir(exist_ok=True)
    (root / "figures" / "f.png").write_bytes(b"\x89PNG fake")
    return {"results/tables/t1.csv": table.read_bytes(), "results/interim/i.parquet": b"interim bytes",
            "figures/f.png": b"\x89PNG fake"}


def test_record_hashes_outputs_counts_calls_and_lists_packages(out_root, monkeypatch):
    monkeypatch.setenv(provenance.ENV_NOTEBOOK, "09_judge_modes")
    monkeypatch.setenv("JUDGELAB_BACKEND", "openai")
    monkeypatch.setenv("OPENAI_BASE_URL", "https://user:sk-secret-key@proxy.example.org:8443/v1")
    written = _outputs(out_root)
    provenance.write_ledger("09_judge_modes", [_ledger(n_fresh=3, n_cached=2)])

    rec = runrecord.build("smoke", WHEN)

    assert rec["outputs"] == {k: hashlib.sha256(v).hexdigest() for k, v in written.items()}  # sidecars left out
    assert rec["calls"]["09_judge_modes"]["calls"] == 5
    assert (rec["calls_total"]["fresh"], rec["calls_total"]["cached"]) == (3, 2)
    assert rec["calls_total"]["input_tokens"] == 5 * 100 and rec["calls_total"]["output_tokens"] == 5 * 10
    assert rec["judges"] == ["openai:gpt-4.1-mini"] and (rec["backend"], rec["model"]) == ("openai", "gpt-4.1-mini")
    assert rec["packages"]["pandas"] == metadata.version("pandas")
    assert rec["data"]["data/corpus/stories.csv"] == hashlib.sha256((ROOT / "data/corpus/stories.csv").read_bytes()).hexdigest()
    assert rec["created_at"] == "2026-01-02T03:04:05+00:00" and rec["profile"] == "smoke"
    assert rec["settings"]["JUDGELAB_BACKEND"] == "openai" and rec["settings"]["JUDGELAB_MODEL"] is None
    assert rec["settings"]["base_url_host"] == "proxy.example.org:8443"
    assert "sk-secret-key" not in json.dumps(rec)


def test_pinned_packages_reads_names_and_skips_comments_and_options(tmp_path):
    lock = tmp_path / "requirements.lock"
    lock.write_text("# comment\n--extra-index-url https://x\npandas==2.2.3\nllama-cpp-python[server]==0.3.9  # why\n"
                    "numpy>=1\n\nscikit_learn==1.5.0 ; python_version>'3'\n")
    assert runrecord.pinned_packages([lock, tmp_path / "absent.txt"]) == ["llama-cpp-python", "pandas", "scikit_learn"]
    assert runrecord.package_versions(["no-such-package-judgelab"]) == {"no-such-package-judgelab": None}


def test_write_makes_a_timestamped_record_and_latest(out_root):
    _outputs(out_root)
    out = runrecord.write("smoke", WHEN)
    assert out.name == "20260102T030405Z_smoke.json"
    assert (out.parent / "latest.json").read_text() == out.read_text()
    assert json.loads(out.read_text())["calls_total"]["calls"] == 0


def test_diff_lists_changed_outputs_packages_data_and_calls(out_root):
    a = {"profile": "demo", "git_commit": "c1", "judges": ["openai:m"],
         "outputs": {"results/tables/t.csv": "aa", "figures/f.png": "ff"},
         "data": {"data/x.csv": "d1"}, "packages": {"pandas": "2.2.3"},
         "calls": {"09_judge_modes": {"calls": 5, "fresh": 5, "cached": 0}},
         "calls_total": {"calls": 5, "fresh": 5, "cached": 0}}
    b = json.loads(json.dumps(a))
    assert runrecord.diff(a, b) == []
    b["outputs"]["results/tables/t.csv"] = "bb"
    del b["outputs"]["figures/f.png"]
    b["outputs"]["results/tables/new.csv"] = "nn"
    b["packages"]["pandas"] = "2.3.0"
    b["data"]["data/x.csv"] = "d2"
    b["calls"]["09_judge_modes"].update(fresh=0, cached=5)
    b["calls_total"].update(fresh=0, cached=5)
    assert runrecord.diff(a, b) == [
        "outputs: removed figures/f.png",          # in path order
        "outputs: added results/tables/new.csv",
        "outputs: changed results/tables/t.csv",
        "data: changed data/x.csv",
        "packages: pandas 2.2.3 -> 2.3.0",
        "calls: 09_judge_modes fresh 5 -> 0",
        "calls: 09_judge_modes cached 0 -> 5",
        "calls_total: fresh 5 -> 0",
        "calls_total: cached 0 -> 5",
    ]


def test_cli_diff_exit_status(out_root, capsys):
    _outputs(out_root)
    assert runrecord.main(["write", "--profile", "smoke"]) == 0
    latest = out_root / "results" / "runs" / "latest.json"
    assert runrecord.main(["diff", str(latest), str(latest)]) == 0
    assert "no differences" in capsys.readouterr().out
    other = json.loads(latest.read_text())
    other["outputs"]["results/tables/t1.csv"] = "0" * 64
    changed = out_root / "changed.json"
    changed.write_text(json.dumps(other))
    assert runrecord.main(["diff", str(latest), str(changed)]) == 1
    assert "outputs: changed results/tables/t1.csv" in capsys.readouterr().out


def test_a_broken_record_is_named(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="bad.json"):
        runrecord.read(bad)
