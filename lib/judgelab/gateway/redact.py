"""Keeping the API key out of every file the gateway writes. A key is never part of a request the
gateway builds, yet a user may paste it into a message, a server may echo the ``Authorization``
header in an error body, a reply may repeat it: so cache entries, transcript lines, ledger rows
and a result's error and text all pass through :func:`redact`.
"""
from __future__ import annotations

from typing import Any, Iterable

from judgelab.gateway.settings import variable  # the gateway reads the environment there only

MASK = "[REDACTED]"
#: shorter strings are not treated as secrets: replacing them would mangle ordinary text
MIN_SECRET_LEN = 8


def configured_secrets(*extra: str | None) -> tuple[str, ...]:
    """The secrets to redact: ``$OPENAI_API_KEY``, ``$JUDGELAB_API_KEY`` and any key passed
    explicitly (``extra``)."""
    found = [variable("OPENAI_API_KEY"), variable("JUDGELAB_API_KEY"), *extra]
    return tuple(dict.fromkeys(s.strip() for s in found if s and len(s.strip()) >= MIN_SECRET_LEN))


def redact(value: Any, secrets: Iterable[str]) -> Any:
    """``value`` with every secret replaced by ``[REDACTED]`` (strings searched; dicts, lists and
    tuples walked; anything else unchanged)."""
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
