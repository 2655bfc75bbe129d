"""Record the embedded model's replies to the smoke run's requests: ``make record-smoke``.

The notebook tests (``tests/test_notebooks.py``) execute every notebook in the smoke profile with
the response cache in replay mode, loaded from the committed file this writes
(:data:`REPLAY`, the cache's own JSONL export, gzip-compressed). They never call the model, so the
suite takes the same time on any machine of this kind and its results do not hang on how one CPU
rounds a greedy decode; a request that is not in the file fails the test loudly, with this command.

This runs every notebook in the smoke profile, as ``make all PROFILE=smoke`` does, into a fresh
output root with the cache in normal mode (the live embedded model answers), then writes exactly the
entries that the run's ledgers name, with the calls that failed in it (kept apart from the answers,
served in replay as the same failures). Re-record when a prompt, a schema, a smoke setting or anything
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


def record(out: Path = REPLAY, reuse: bool = False, keep: Path | None = None) -> int:
    from judgelab.gateway.cache import ResponseCache

    with tempfile.TemporaryDirectory(prefix="record_smoke_") as tmp:
        root = keep or Path(tmp) / "root"
        cache_path = root / "results" / "cache" / "llm_cache.sqlite"
        cache_path.parent.mkdir(parents=True, exist_ok=True)
        cache = ResponseCache(cache_path)
        if reuse and out.exists():
            print(f"[record-smoke] starting from {out.relative_to(ROOT)}: {cache.import_jsonl(out)} entries", flush=True)
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
