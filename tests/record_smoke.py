"""Record the embedded model's replies to the smoke run's requests: ``make record-smoke``.

The notebook tests (``tests/test_notebooks.py``) execute every notebook in the smoke profile with
the response cache in replay mode, loaded from the committed file this writes
(:data:`REPLAY`, the cache's own JSONL export, gzip-compressed). They never call the model, so the
suite takes the same time on any machine of this kind and its results do not hang on how one CPU
rounds a greedy decode; a request that is not in the file fails the test loudly, with this command.

This runs every notebook in the smoke profile, as ``make all PROFILE=smoke`` does, into a fresh
output root with the cache in normal mode (the live embedded model answers), then writes exactly the
entries that the run's ledgers name, with the calls that failed in it (kept apart from the answers,
served in replay as the same failures). The messages' texts are withheld (replaced by their sha256:
the key already covers them), so the file carries no story or headline of the data sets. Re-record when a prompt, a schema, a smoke setting or anything
that changes a request changed; the model's own tests (marker ``llm``) keep the live engine tested.

``--reuse`` starts from the committed file (its replies are cache hits; only new requests reach the
model): quicker, and the replies of unchanged requests stay as they were.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPLAY = ROOT / "tests" / "replay" / "smoke_llm_cache.jsonl.gz"
#: the MiniLM vectors the smoke run computed (notebook 10's joint landscape): the embedding cache's
#: own export, so the notebook tests embed nothing (the live embedder has its own tests)
EMBEDDINGS = ROOT / "tests" / "replay" / "smoke_embeddings.npz"
COMMAND = "make record-smoke"


def ledger_keys(root: Path) -> set[str]:
    """Every cache key that the run's notebooks' ledgers name (fresh calls and cache hits alike)."""
    import pandas as pd

    keys: set[str] = set()
    for f in sorted((root / "results" / "runs" / "ledgers").glob("*.csv")):
        frame = pd.read_csv(f)
        if "key" in frame:
            keys |= set(frame["key"].dropna().astype(str))
    return keys


def withhold_texts(path: Path) -> int:
    """Rewrite the export with every message's text replaced by its sha256: the replay needs only the
    cache keys (hashes of the whole request), and the file must not carry the data's texts (stories,
    headlines) into the repository. The judge's replies stay. Returns the messages withheld."""
    import gzip
    import hashlib
    import json

    from judgelab.gateway.cache import canonical_json

    lines, n = [], 0
    for line in gzip.decompress(path.read_bytes()).decode("utf-8").splitlines():
        entry = json.loads(line)
        for message in (entry.get("request") or {}).get("messages") or []:
            text = message.get("content") or ""
            if not text.startswith("[withheld "):
                message["content"] = f"[withheld from the test fixture: sha256 {hashlib.sha256(text.encode()).hexdigest()}]"
                n += 1
        lines.append(canonical_json(entry) + "\n")
    path.write_bytes(gzip.compress("".join(lines).encode("utf-8"), mtime=0))
    return n


def record(out: Path = REPLAY, reuse: bool = False, keep: Path | None = None) -> int:
    from judgelab.gateway.cache import ResponseCache

    with tempfile.TemporaryDirectory(prefix="record_smoke_") as tmp:
        root = keep or Path(tmp) / "root"
        cache_path = root / "results" / "cache" / "llm_cache.sqlite"
        cache_path.parent.mkdir(parents=True, exist_ok=True)
        cache = ResponseCache(cache_path)
        if reuse and out.exists():
            print(f"[record-smoke] starting from {out.relative_to(ROOT)}: {cache.import_jsonl(out)} entries", flush=True)
            if EMBEDDINGS.exists():
                from judgelab.embeddings import EmbeddingCache

                EmbeddingCache(cache_path.parent / "embeddings.sqlite").import_npz(EMBEDDINGS)
        env = {**os.environ, "JUDGELAB_OUTPUT_ROOT": str(root), "JUDGELAB_CACHE_MODE": "normal",
               "PYTHONPATH": str(ROOT / "lib")}
        env.pop("JUDGELAB_CACHE_PATH", None)
        start = time.monotonic()
        subprocess.run([sys.executable, "-m", "judgelab.pipeline", "run", "all", "--profile", "smoke"],
                       env=env, cwd=ROOT, check=True)
        keys = ledger_keys(root)
        if not keys:
            raise SystemExit(f"[record-smoke] the run's ledgers under {root} name no cache key: nothing to record")
        out.parent.mkdir(parents=True, exist_ok=True)
        n = cache.export_jsonl(out, keys=keys)
        failed = sum(1 for key, _ in cache.failures() if key in keys)
        withhold_texts(out)
        from judgelab.embeddings import EmbeddingCache

        vectors = root / "results" / "cache" / "embeddings.sqlite"
        if vectors.exists():
            print(f"[record-smoke] {EmbeddingCache(vectors).export_npz(EMBEDDINGS)} embedding vectors written to "
                  f"{EMBEDDINGS.relative_to(ROOT)}", flush=True)
        print(f"[record-smoke] {n} replies and {failed} recorded failures (calls that failed in the run, replayed "
              f"as failures) written to {out.relative_to(ROOT)} ({out.stat().st_size / 1e6:.2f} MB) "
              f"in {time.monotonic() - start:.0f} s", flush=True)
        if n + failed < len(keys):
            print(f"[record-smoke] {len(keys) - n - failed} requests of the run have neither: the replay will miss them",
                  flush=True)
        return n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tests/record_smoke.py", description=__doc__.splitlines()[0])
    parser.add_argument("--reuse", action="store_true", help="start from the committed replay file")
    parser.add_argument("--out", type=Path, default=REPLAY)
    parser.add_argument("--keep", type=Path, default=None, help="run into this output root and keep it")
    args = parser.parse_args(argv)
    record(args.out, reuse=args.reuse, keep=args.keep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
