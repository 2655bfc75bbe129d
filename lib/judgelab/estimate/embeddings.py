"""What embedding a collection costs before it is embedded (``make own COLLECTION=... ESTIMATE=1``).

The texts the embedding cache already holds for the model cost nothing (a rerun pays nothing);
the others are counted with the model's tokenizer (tiktoken, offline: ``cl100k_base`` for
``text-embedding-3-*``), priced with the gateway's price table (``prices.csv``: an unknown model
is NaN, not a guess) and grouped into calls of the backend's batch size. Texts above the model's
input limit are counted: the API refuses them (split or shorten them first). A local model
(MiniLM) costs no money; its time is measured, not estimated here (docs/own_texts.md).
"""
from __future__ import annotations

import argparse
import inspect
import math
import sys
from pathlib import Path

import pandas as pd

from judgelab import paths
from judgelab.embeddings import EmbeddingCache, OpenAIEmbeddings, parse_spec, text_hash
from judgelab.gateway.ledger import PriceTable
from judgelab.tokens import count_tokens

#: the input limit of OpenAI's text-embedding-3 models, in tokens (platform.openai.com/docs/guides/embeddings)
OPENAI_INPUT_LIMIT = 8191
DEFAULT_OPENAI_MODEL = inspect.signature(OpenAIEmbeddings).parameters["model"].default
BATCH_SIZE = inspect.signature(OpenAIEmbeddings).parameters["batch_size"].default


def embedding_cost(texts, spec: str, cache_path: Path | str | None = None,
                   prices: PriceTable | None = None) -> pd.DataFrame:
    """One row: the model, texts, distinct texts, those cached, those to embed, calls, input tokens,
    texts over the input limit, USD (standard and Batch API price). ``cache_path``: the embedding
    cache to look in (default: the output root's; a missing file holds nothing and is not made)."""
    kind, kw = parse_spec(spec)
    texts = [str(t) for t in texts]
    distinct = dict.fromkeys(text_hash(t) for t in texts)
    by_hash = dict(zip((text_hash(t) for t in texts), texts))
    row = {"embedding": spec, "texts": len(texts), "distinct": len(distinct)}
    if kind != "openai":
        return pd.DataFrame([{**row, "model": kind, "cached": 0, "to_embed": len(distinct), "calls": 0,
                              "input_tokens": 0, "over_limit": 0, "usd_standard": 0.0, "usd_batch": 0.0,
                              "note": "local model or your own vectors: no money; time as measured in docs/own_texts.md"}])
    model = kw.get("model", DEFAULT_OPENAI_MODEL)
    path = Path(cache_path) if cache_path is not None else paths.cache_dir() / "embeddings.sqlite"
    cached = EmbeddingCache(path).get_many(f"openai:{model}", list(distinct)) if path.exists() else {}
    todo = [by_hash[h] for h in distinct if h not in cached]
    tokens = [count_tokens(t, model) for t in todo]
    price = (prices or PriceTable.load()).lookup(model)
    usd = sum(tokens) * price.input / 1e6 if price is not None else math.nan
    share = price.batch if price is not None and price.batch is not None else 1.0
    over = sum(t > OPENAI_INPUT_LIMIT for t in tokens)
    return pd.DataFrame([{**row, "model": model, "cached": len(cached), "to_embed": len(todo),
                          "calls": math.ceil(len(todo) / BATCH_SIZE), "input_tokens": int(sum(tokens)),
                          "over_limit": int(over), "usd_standard": usd, "usd_batch": usd * share,
                          "note": (f"{over} text(s) above the model's {OPENAI_INPUT_LIMIT:,}-token input limit: the API "
                                   "refuses them; shorten or split them" if over else
                                   "the embedding's price; notebook 09's judge calls are priced once 08 has run")}])


def price_collection(file: Path | str, root: Path | str, *, text: str, date: str, title: str | None,
                     embeddings: str | None, profile) -> Path:
    """``make own COLLECTION=... ESTIMATE=1``: the collection read and checked as notebook 07 reads
    it (its subset kept), its embedding priced (:func:`embedding_cost`) against ``root``'s cache,
    into ``<root>/results/estimate/own_embeddings.csv``; nothing is embedded or judged."""
    from judgelab import config
    from judgelab.embeddings import is_backend_spec
    from judgelab.narrative.landscape import own_collection

    root = Path(root)
    knobs = config.of(profile).knobs("narrative")["collections"][own_collection.NAME]  # the configuration priced
    col = own_collection.load(Path(file), text=text, date=date, title=title, embeddings=embeddings, knobs=knobs)
    spec = embeddings if is_backend_spec(embeddings) else ("precomputed" if embeddings else knobs["embedding"])
    texts = col.every_kth(knobs.get("subset")).docs["text"].tolist()
    cost = embedding_cost(texts, spec, cache_path=root / "results" / "cache" / "embeddings.sqlite")
    out = root / "results" / "estimate" / "own_embeddings.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    cost.to_csv(out, index=False)
    r = cost.iloc[0]
    print(f"[judgelab own] embedding {r['embedding']}: {r['texts']:,} texts ({r['distinct']:,} distinct, {r['cached']:,} "
          f"in the cache), {r['to_embed']:,} to embed in {r['calls']:,} call(s), {r['input_tokens']:,} input tokens, "
          f"USD {r['usd_standard']:.4f} (Batch API {r['usd_batch']:.4f}); {r['note']}; nothing was sent; "
          f"written to {out}", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m judgelab.estimate.embeddings COLLECTION --root R --text T --date D [--title X]
    [--embeddings E] [--profile P]`` (what ``make own ... ESTIMATE=1`` runs for a collection)."""
    ap = argparse.ArgumentParser(prog="python -m judgelab.estimate.embeddings", description=__doc__.split("\n")[0])
    ap.add_argument("collection")
    ap.add_argument("--root", required=True, help="the run's output folder, results/own/<name>")
    ap.add_argument("--text", default="text")
    ap.add_argument("--date", default="date")
    ap.add_argument("--title", default=None)
    ap.add_argument("--embeddings", default=None)
    ap.add_argument("--profile", default="own")
    args = ap.parse_args(argv)
    try:
        price_collection(args.collection, args.root, text=args.text, date=args.date, title=args.title,
                         embeddings=args.embeddings, profile=args.profile)
    except ValueError as exc:
        print(f"[judgelab own] {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
