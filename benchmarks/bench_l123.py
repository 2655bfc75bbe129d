"""Benchmark: the SAGE L1–L3 feature set on the 80 mirrored public-domain stories.

Reads the stories from ``$DATA_MIRROR/stories`` (manifest.csv, canonical/ and pulp/ texts), cleans
them as the corpus loader does, and times on one core (BLAS and torch limited to one thread):

- the baseline: segmentation and POS tagging alone (what every layer needs first);
- all L1–L3 features without the MiniLM embeddings (the smoke profile's setting);
- the MiniLM passage embeddings alone (a fresh embedding cache, so nothing is reused).

Figures (``results/bench/l123.json``, and one ``l123.<figure> <value>`` line each):
``stories_per_s`` (the whole feature set, embeddings included), ``stories_per_s_no_embed``,
``ratio_to_segmentation`` (whole set time / baseline time: the speed measure that survives a
noisy shared machine), ``stories_per_cpu_s`` (per second of this process's CPU time, which
other processes on a shared machine inflate much less than wall time), the absolute wall and CPU
seconds of each part (labelled ``*_s``, ``*_cpu_s``), cpu count and date.

Usage: ``DATA_MIRROR=../shared/mirror python benchmarks/bench_l123.py [--limit N] [--no-embed] [--quick]``
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pandas as pd  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from judgelab import paths  # noqa: E402
from judgelab.corpus.text import clean_story, decode_bytes  # noqa: E402
from judgelab.sage.layers.features import compute_l123_features  # noqa: E402
from judgelab.sage.layers.l3_thematic import conceptual_spread  # noqa: E402
from judgelab.sage.layers.segment import segment  # noqa: E402

NAME = "l123"


def load_mirror_stories(mirror: Path) -> pd.DataFrame:
    """story_id, category, text of every story in ``<mirror>/stories/manifest.csv``."""
    root = mirror / "stories"
    manifest = pd.read_csv(root / "manifest.csv", dtype=str, keep_default_na=False)
    rows = []
    for r in manifest.itertuples():
        path = root / r.category / f"{r.id}.txt"
        rows.append({"story_id": r.id, "category": r.category,
                     "text": clean_story(decode_bytes(path.read_bytes(), str(path)))})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=None, help="only the first N stories (a quick check)")
    ap.add_argument("--no-embed", action="store_true", help="skip the MiniLM part")
    ap.add_argument("--quick", action="store_true", help="seconds, for the test suite: two stories, no MiniLM")
    ap.add_argument("--out", type=Path, default=None, help=f"default results/bench/{NAME}.json")
    args = ap.parse_args(argv)
    if args.quick:
        args.limit, args.no_embed = 2, True

    mirror = paths.data_mirror()
    if mirror is None or not (mirror / "stories" / "manifest.csv").exists():
        print("bench_l123: set DATA_MIRROR to the folder holding stories/manifest.csv", file=sys.stderr)
        return 2
    corpus = load_mirror_stories(mirror)
    if args.limit:
        corpus = corpus.head(args.limit)
    n = len(corpus)
    words = int(sum(len(t.split()) for t in corpus["text"]))

    figures: dict[str, float | int | str] = {}
    with threadpool_limits(limits=1):
        try:
            import torch
            torch.set_num_threads(1)
        except ImportError:  # pragma: no cover - torch is a project dependency
            pass
        # warm-up outside the timings: tagger lexicon, CMU dictionary, VADER lexicon, first LDA
        compute_l123_features(corpus.head(1), embed=False)

        t0, c0 = time.perf_counter(), time.process_time()
        for text in corpus["text"]:
            segment(text).tags
        t_seg, c_seg = time.perf_counter() - t0, time.process_time() - c0

        t0, c0 = time.perf_counter(), time.process_time()
        feats = compute_l123_features(corpus, embed=False)
        t_noembed, c_noembed = time.perf_counter() - t0, time.process_time() - c0

        t_embed = c_embed = 0.0
        if not args.no_embed:
            from judgelab.embeddings import EmbeddingCache, MiniLMEmbeddings
            with tempfile.TemporaryDirectory() as tmp:
                emb = MiniLMEmbeddings(cache=EmbeddingCache(Path(tmp) / "bench.sqlite"))
                emb.embed(["warm-up: load the model"])
                t0, c0 = time.perf_counter(), time.process_time()
                for text in corpus["text"]:
                    conceptual_spread(text, embedder=emb)
                t_embed, c_embed = time.perf_counter() - t0, time.process_time() - c0

    t_total = t_noembed + t_embed
    c_total = c_noembed + c_embed
    figures.update({
        "stories": n,
        "words": words,
        "features": int(feats.shape[1] - 2),
        "segmentation_s": round(t_seg, 3),
        "features_no_embed_s": round(t_noembed, 3),
        "embeddings_s": round(t_embed, 3) if not args.no_embed else "skipped",
        "total_s": round(t_total, 3),
        "segmentation_cpu_s": round(c_seg, 3),
        "features_no_embed_cpu_s": round(c_noembed, 3),
        "embeddings_cpu_s": round(c_embed, 3) if not args.no_embed else "skipped",
        "total_cpu_s": round(c_total, 3),
        "stories_per_cpu_s": round(n / c_total, 4),
        "stories_per_s": round(n / t_total, 4),
        "stories_per_s_no_embed": round(n / t_noembed, 4),
        "ratio_to_segmentation": round(t_total / t_seg, 3),
        "cpu_count": os.cpu_count(),
        "threads": 1,
        "date": dt.datetime.now().isoformat(timespec="seconds"),
    })
    out = args.out or paths.bench_dir() / (f"{NAME}_quick.json" if args.quick else f"{NAME}.json")
    out.write_text(json.dumps(figures, indent=2))
    for k, v in figures.items():
        print(f"{NAME}.{k} {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
