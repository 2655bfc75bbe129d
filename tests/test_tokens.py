"""Offline tiktoken: the cache is filled from bpe-openai's files under tiktoken's own file names."""
from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import pytest

from judgelab import tokens


def test_urls_and_hashes_match_tiktoken_source():
    spec = importlib.util.find_spec("tiktoken_ext.openai_public")
    source = Path(spec.origin).read_text()
    for name, (url, sha) in tokens.ENCODINGS.items():
        assert url in source and sha in source, name


def test_cache_file_name_is_tiktokens_sha1_of_the_url():
    from tiktoken import load

    url = tokens.ENCODINGS["o200k_base"][0]
    assert tokens.cache_file_name(url) == hashlib.sha1(url.encode()).hexdigest()
    # tiktoken's own reader computes the same name (checked against its source)
    assert "hashlib.sha1(blobpath.encode()).hexdigest()" in Path(load.__file__).read_text()


def test_ensure_fills_a_fresh_cache_that_tiktoken_uses_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    folder = tokens.ensure_tiktoken_cache()
    assert folder == tmp_path
    for url, sha in tokens.ENCODINGS.values():
        data = (tmp_path / tokens.cache_file_name(url)).read_bytes()
        assert hashlib.sha256(data).hexdigest() == sha
    # a second call is a no-op (files already right)
    before = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    tokens.ensure_tiktoken_cache()
    assert before == {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    # tiktoken loads from this folder without the network: a fresh load (no in-process cache)
    from tiktoken.load import load_tiktoken_bpe

    url, sha = tokens.ENCODINGS["cl100k_base"]
    ranks = load_tiktoken_bpe(url, expected_hash=sha)
    assert len(ranks) > 100_000


@pytest.mark.parametrize("model,name", [
    ("gpt-4.1", "o200k_base"), ("gpt-4.1-mini", "o200k_base"), ("gpt-5-mini", "o200k_base"),
    ("gpt-4o", "o200k_base"), ("o3-mini", "o200k_base"), ("gpt-4", "cl100k_base"),
    ("gpt-3.5-turbo", "cl100k_base"), ("SmolLM2-135M", "cl100k_base"), (None, "cl100k_base"),
])
def test_encoding_for_model(model, name):
    assert tokens.encoding_name_for(model) == name
    assert tokens.encoding_for(model).name == name


def test_count_tokens_known_values():
    # "hello world" is two tokens in both encodings; the encodings differ on longer text
    assert tokens.count_tokens("hello world", "gpt-4") == 2
    assert tokens.count_tokens("hello world", "gpt-5") == 2
    assert tokens.count_tokens("", "gpt-4.1") == 0
    text = "<|endoftext|> is counted as text, not refused"
    assert tokens.count_tokens(text, "gpt-4") > 5


def test_module_main_fills_the_cache(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tk"))
    tokens.main()
    out = capsys.readouterr().out
    assert "cl100k_base: ok" in out and "o200k_base: ok" in out
    assert len(list((tmp_path / "tk").iterdir())) == 2
