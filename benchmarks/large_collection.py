"""A large dated collection for timing `make own COLLECTION=` (docs/own_texts.md, "Time on 2 cores").

    python benchmarks/large_collection.py --n 50000 --out /tmp/big          # writes /tmp/big/vispub50000.csv + .npy
    nice -n 10 make own COLLECTION=/tmp/big/vispub50000.csv TEXT=text DATE=date TITLE=title EMBEDDINGS=vispub50000.npy

Real public text, resampled: the first ``--pool`` VisPub abstracts of the data mirror
(``DATA_MIRROR``, title + abstract as notebook 07 reads them) are embedded once with the bundled
all-MiniLM-L6-v2 (kept as ``pool_minilm_<pool>.npy`` in ``--out``, so a second size costs nothing).
Row i of the CSV is one of those abstracts, drawn uniformly (seeded), with its title numbered
(``<title> [#i]``, so every title is unique) and its date jittered: a uniform day within the
paper's year. Its vector in the ``.npy`` is a mixture of that abstract's real MiniLM vector (weight
0.6 to 1) and another abstract's, plus Gaussian noise (SD 0.02), L2-normalised, as
``benchmarks/scale_own_collection.py`` resamples: no two rows coincide, and the vectors keep the
real ones' geometry. The text is real; the vector is not the text's own MiniLM vector, so this
times the landscape, not the embedding (MiniLM's rate is measured separately, by that script's
``minilm``). Data written here stays out of git (write it outside the work tree).

``--texts spliced`` times the embedding too: row i's text is the first half (by sentences) of one
pool abstract followed by the second half of another, each ordered pair drawn at most once, so
all n texts differ (the embedding cache, keyed by text, cannot shorten the run) and have an
abstract's length. No ``.npy`` is written: ``make own`` embeds the texts (MiniLM by default)::

    python benchmarks/large_collection.py --n 50000 --texts spliced --out /tmp/big
    make own COLLECTION=/tmp/big/vispub50000.csv TEXT=text DATE=date TITLE=title
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd


def pool_vectors(texts: list[str], out: Path) -> np.ndarray:
    """MiniLM vectors of the pool's texts, computed once and kept beside the output."""
    cached = out / f"pool_minilm_{len(texts)}.npy"
    if cached.exists():
        return np.load(cached)
    from judgelab.embeddings import minilm_model_path
    from sentence_transformers import SentenceTransformer

    t0 = time.perf_counter()
    model = SentenceTransformer(minilm_model_path(), device="cpu")
    vectors = model.encode(texts, batch_size=32, show_progress_bar=False, convert_to_numpy=True).astype(np.float32)
    print(f"[large collection] MiniLM on {len(texts)} abstracts: {time.perf_counter() - t0:.0f} s", flush=True)
    np.save(cached, vectors)
    return vectors


def halves(text: str) -> tuple[str, str]:
    """A text's sentences split in two halves (the first gets the odd one)."""
    import re

    parts = [p for p in re.split(r"(?<=[.!?])\s+", text.strip()) if p]
    cut = (len(parts) + 1) // 2
    return " ".join(parts[:cut]), " ".join(parts[cut:])


def spliced(docs: pd.DataFrame, n: int, rng: np.random.Generator) -> tuple[np.ndarray, list[str]]:
    """(the abstract each row takes its date and title from, n distinct texts): the first half of
    abstract a, then the second half of abstract b, over n distinct ordered pairs a != b."""
    m = len(docs)
    if m * (m - 1) < n:
        raise ValueError(f"--pool {m} gives {m * (m - 1)} ordered pairs, fewer than --n {n}: raise --pool")
    keys = rng.choice(m * m, size=min(m * m, n + n // 10 + m), replace=False)
    a, b = keys // m, keys % m
    keep = a != b
    a, b = a[keep][:n], b[keep][:n]
    split = [halves(t) for t in docs["text"].astype(str)]
    texts = [f"{split[i][0]} {split[j][1]}".strip() for i, j in zip(a, b)]
    return a, texts


def build(n: int, pool: int, out: Path, seed: int = 42, texts: str = "resampled") -> tuple[Path, Path | None]:
    """Write ``vispub<n>.csv`` (title, date, text) and, for ``texts="resampled"``, ``vispub<n>.npy``
    (n x 384) into ``out``; ``texts="spliced"``: n distinct texts and no vectors (module doc)."""
    from judgelab.narrative.landscape.collections import load_vispub

    docs = load_vispub().docs.iloc[:pool].reset_index(drop=True)
    rng = np.random.default_rng(seed)
    vec = None
    if texts == "spliced":
        a, body = spliced(docs, n, rng)
    else:
        real = pool_vectors(docs["text"].astype(str).tolist(), out)
        a = rng.integers(0, len(docs), n)
        b = rng.integers(0, len(docs), n)
        w = rng.uniform(0.6, 1.0, (n, 1))
        vec = w * real[a] + (1 - w) * real[b] + rng.normal(scale=0.02, size=(n, real.shape[1]))
        vec = (vec / np.linalg.norm(vec, axis=1, keepdims=True)).astype(np.float32)
        body = docs["text"].to_numpy()[a]
    year_start = pd.to_datetime(docs["date"].to_numpy()[a])
    dates = year_start + pd.to_timedelta(rng.integers(0, 365, n), unit="D")
    frame = pd.DataFrame({"title": [f"{t} [#{i}]" for i, t in enumerate(docs["title"].to_numpy()[a])],
                          "date": dates.strftime("%Y-%m-%d"), "text": body})
    csv = out / f"vispub{n}.csv"
    frame.to_csv(csv, index=False)
    if vec is None:
        return csv, None
    npy = out / f"vispub{n}.npy"
    np.save(npy, vec)
    return csv, npy


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=50_000, help="rows of the collection")
    ap.add_argument("--pool", type=int, default=1000, help="VisPub abstracts drawn from (each embedded once)")
    ap.add_argument("--out", type=Path, required=True, help="a folder outside the work tree")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--texts", choices=["resampled", "spliced"], default="resampled",
                    help="resampled: pool texts repeated, vectors written beside; spliced: n distinct texts, no vectors")
    args = ap.parse_args(argv)
    if args.n < 1 or args.pool < 2:
        ap.error("--n must be >= 1 and --pool >= 2")
    args.out.mkdir(parents=True, exist_ok=True)
    csv, npy = build(args.n, args.pool, args.out, args.seed, args.texts)
    print(f"[large collection] {csv} ({args.n} rows){f', {npy}' if npy else ''}", flush=True)
    print(f"make own COLLECTION={csv} TEXT=text DATE=date TITLE=title{f' EMBEDDINGS={npy.name}' if npy else ''}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
