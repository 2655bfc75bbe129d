"""What embedding a collection costs before it is embedded (``make own COLLECTION=... ESTIMATE=1``).

The texts the embedding cache already holds for the model cost nothing (a rerun pays nothing);
the others are counted with the model's tokenizer (tiktoken, offline: ``cl100k_base`` for
``text-embedding-3-*``), priced with the gateway's price table (``prices.csv``: an unknown model
is NaN, not a guess) and grouped into calls of the backend's batch size. Texts above the model's
input limit are counted: the API refuses them (split or shorten them first). A local model
(MiniLM) costs no money; its time is measured, not estimated here (docs/own_texts.md).
"""
from __future__ import annotations

import inspect
import math
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
