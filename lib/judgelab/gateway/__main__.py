"""``python -m judgelab.gateway`` — inspect and move the response cache.

    python -m judgelab.gateway stats                  # entries by backend/model, file size
    python -m judgelab.gateway export cache.jsonl     # hand a reviewer the cache
    python -m judgelab.gateway import cache.jsonl     # load a cache you were given
    python -m judgelab.gateway prices                 # the price table in use

``--cache PATH``: another cache file than ``$JUDGELAB_CACHE_PATH`` or the output root's.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from judgelab.gateway.cache import ResponseCache
from judgelab.gateway.ledger import DEFAULT_PRICES, PriceTable


def _cache_path(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    from judgelab.gateway.settings import default_cache_path

    return default_cache_path()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m judgelab.gateway", description=__doc__.split("\n")[0])
    parser.add_argument("--cache", help="cache file (SQLite)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("stats", help="entries by backend and model")
    exp = sub.add_parser("export", help="write the cache as JSONL")
    exp.add_argument("path")
    imp = sub.add_parser("import", help="load a JSONL export into the cache")
    imp.add_argument("path")
    imp.add_argument("--overwrite", action="store_true", help="replace entries with the same key")
    pr = sub.add_parser("prices", help="show the price table")
    pr.add_argument("--table", default=str(DEFAULT_PRICES))
    args = parser.parse_args(argv)

    if args.command == "prices":
        for name, p in PriceTable.load(args.table).rows.items():
            print(f"{name:16s} in {p.input:7.3f}  cached {p.cached_input:7.3f}  out {p.output:7.3f}  USD/Mtok  ctx {p.context_window}")
        return 0
    path = _cache_path(args.cache)
    if args.command != "import" and not path.exists():
        print(f"no cache at {path}", file=sys.stderr)
        return 1
    cache = ResponseCache(path)
    if args.command == "stats":
        print(json.dumps(cache.stats(), indent=2))
    elif args.command == "export":
        n = cache.export_jsonl(args.path)
        print(f"exported {n} entries from {path} to {args.path}")
    elif args.command == "import":
        n = cache.import_jsonl(args.path, overwrite=args.overwrite)
        print(f"imported {n} new entries from {args.path} into {path} (now {len(cache)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
