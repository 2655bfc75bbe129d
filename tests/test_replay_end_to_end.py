"""Replay anywhere: run an LLM notebook against a server, hand its cache to
someone else, and let them reproduce the tables byte for byte with no key and no server.

The notebook is 02 (SAGE L4) in the smoke profile, executed by papermill through
``judgelab.pipeline`` exactly as ``make`` runs it, as backend ``openai`` against the local test
server (``tests/fake_openai_server.py``, a real HTTP server answering schema-valid objects) with a
dummy key. Its cache is exported with ``python -m judgelab.gateway export``, imported into a fresh
output root with ``import``, the server is stopped, and the notebook runs again as ``openai``
with the cache in replay mode, no key and the now-dead URL. Every CSV table (and
every PNG and PDF figure) must be byte-identical; the provenance sidecars must name the judge and
the endpoint's host (never the key), and the replay's call ledger must show every call served
from the cache.

Notebook 02 reads only ``corpus.parquet``; rather than executing notebook 01 (its L1-L3 features
cost more than the rest of the test), each root gets that file from the same library call
notebook 01 makes (``corpus.manifest.load_corpus``, written with ``interim.write``).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgelab import interim, pipeline, provenance
from judgelab.corpus import manifest
from judgelab.gateway.__main__ import main as gateway_cli
from fake_openai_server import FakeChatServer

pytestmark = pytest.mark.notebooks  # slow-ish: two papermill runs of notebook 02 in the smoke profile: ~30-60 s

MODEL = "gpt-4.1-mini"  # a priced OpenAI model with a tiktoken encoding: the budget is counted offline
DUMMY_KEY = "sk-replay-test-0123456789abcdef"


def _root(monkeypatch, root: Path) -> Path:
    """Make ``root`` the output root and give it notebook 01's corpus table."""
    monkeypatch.setenv("JUDGELAB_OUTPUT_ROOT", str(root))
    interim.write(manifest.load_corpus(), "corpus")
    return root


def _run_02() -> None:
    pipeline.run_notebook(pipeline.find_notebook("02"), "smoke")


def _tables(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / "results" / "tables").glob("*.csv"))}


def _cache(root: Path) -> str:
    return str(root / "results" / "cache" / "llm_cache.sqlite")


def test_replay_in_a_fresh_root_without_key_or_server_reproduces_the_tables(tmp_path, monkeypatch):
    for var, value in {"JUDGELAB_BACKEND": "openai", "JUDGELAB_MODEL": MODEL, "JUDGELAB_PROGRESS": "0",
                       "JUDGELAB_LLAMA_THREADS": "1", "JUDGELAB_CONCURRENCY": "4"}.items():
        monkeypatch.setenv(var, value)
    monkeypatch.delenv("JUDGELAB_CACHE_PATH", raising=False)
    first, second = tmp_path / "original", tmp_path / "replayed"
    export = tmp_path / "cache.jsonl"

    with FakeChatServer() as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("JUDGELAB_API_KEY", DUMMY_KEY)  # not OpenAI's URL: OPENAI_API_KEY would not be sent
        _root(monkeypatch, first)
        _run_02()
        n_calls = srv.n_calls
        base_url = srv.base_url
        assert gateway_cli(["--cache", _cache(first), "export", str(export)]) == 0
    assert n_calls > 0

    # someone else: a fresh root, the exported cache, no key, the server gone
    monkeypatch.delenv("JUDGELAB_API_KEY")
    monkeypatch.setenv("JUDGELAB_CACHE_MODE", "replay")
    _root(monkeypatch, second)
    assert gateway_cli(["--cache", _cache(second), "import", str(export)]) == 0
    _run_02()

    original, replayed = _tables(first), _tables(second)
    assert original, "notebook 02 wrote no table"
    assert replayed.keys() == original.keys()
    differing = [name for name in original if original[name] != replayed[name]]
    assert not differing, f"tables that differ after replay: {differing}"

    figures = sorted(p.name for p in (first / "figures").glob("*") if p.suffix in (".png", ".pdf"))
    assert figures, "notebook 02 wrote no figure"
    assert [n for n in figures if (first / "figures" / n).read_bytes() != (second / "figures" / n).read_bytes()] == []

    # who made them: the judge and the endpoint's host, never the key; all replayed from the cache
    host = provenance.url_host(base_url)
    for name in replayed:
        side = provenance.read_sidecar(second / "results" / "tables" / name)
        assert side["judge"] == f"openai:{MODEL}" and side["base_url_host"] == host
        assert side["notebook"] == "02_l4_cultural" and side["profile"] == "smoke"
        assert DUMMY_KEY not in json.dumps(side)
    ledger_a = json.loads((first / "results" / "runs" / "ledgers" / "02_l4_cultural.json").read_text())
    ledger_b = json.loads((second / "results" / "runs" / "ledgers" / "02_l4_cultural.json").read_text())
    assert ledger_b["calls"] == ledger_a["calls"] > 0
    assert ledger_b["fresh"] == 0 and ledger_b["cached"] == ledger_a["calls"]
