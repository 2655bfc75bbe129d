"""Keeping the API key out of every file the gateway writes.

A key is never part of a request the gateway builds, but it can still reach a file: a user may
paste it into a message (then the cache's stored request and the transcript hold it), a server
may echo the ``Authorization`` header in an error body (then the error text, which notebooks
write to their failure tables, holds it), and a reply may repeat what it was sent. So the
gateway passes everything it writes (cache entry, transcript line, ledger row, a result's error
and text) through :func:`redact`, the one redaction function, with the configured secrets.
"""
from __future__ import annotations

from typing import Any, Iterable

from judgelab import settings_file

MASK = "[REDACTED]"
#: shorter strings are not treated as secrets: replacing them would mangle ordinary text
MIN_SECRET_LEN = 8


def configured_secrets(*extra: str | None) -> tuple[str, ...]:
    """The secrets to redact: ``$OPENAI_API_KEY``, ``$JUDGELAB_API_KEY`` and any key passed
    explicitly (``extra``)."""
    found = [settings_file.env("OPENAI_API_KEY"), settings_file.env("JUDGELAB_API_KEY"), *extra]
    return tuple(dict.fromkeys(s.strip() for s in found if s and len(s.strip()) >= MIN_SECRET_LEN))


def redact(value: Any, secrets: Iterable[str]) -> Any:
    """``value`` with every occurrence of every secret replaced by ``[REDACTED]``.

    Strings are searched; dicts (keys and values), lists and tuples are walked recursively;
    anything else (numbers, None, booleans) is returned unchanged.
    """
    secrets = tuple(secrets)
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            if secret in value:
                value = value.replace(secret, MASK)
        return value
    if isinstance(value, dict):
        return {redact(k, secrets): redact(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact(v, secrets) for v in value)
    return value
