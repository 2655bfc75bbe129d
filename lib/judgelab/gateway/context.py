"""What the current thread's calls belong to, as one object: the fan-out's guard watching them
(:class:`~judgelab.gateway.canary.FanOutGuard`), the ``map`` item they count toward, the batch
group they wait with, and whether this call is a shape's canary.

A ``map`` runs the caller's own function, whose ``chat`` calls cannot be handed these as
arguments: the fan-out sets them for the thread (:meth:`CallContext.using`) and the call, the
fresh call and the batch collector read them here. The state lives in this object only.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator

_ROLES = ("guard", "stats", "batch_group", "canary")


class CallContext:
    """Per-thread roles of the calls a gateway makes (None / False outside a fan-out)."""

    def __init__(self):
        self._tls = threading.local()

    @property
    def guard(self):
        """The :class:`~judgelab.gateway.canary.FanOutGuard` of the fan-out this thread works for."""
        return getattr(self._tls, "guard", None)

    @property
    def stats(self):
        """The ``map`` item (:class:`~judgelab.gateway.fanout.ItemCalls`) this thread's calls count toward."""
        return getattr(self._tls, "stats", None)

    @property
    def batch_group(self):
        """The batch-mode worker group (:class:`~judgelab.gateway.batch_collector.WorkerGroup`) of this thread."""
        return getattr(self._tls, "batch_group", None)

    @property
    def canary(self) -> bool:
        """True while this thread makes a request shape's canary call."""
        return bool(getattr(self._tls, "canary", False))

    @contextmanager
    def using(self, **roles: Any) -> Iterator[None]:
        """Set ``roles`` (names in :data:`_ROLES`) for this thread; the previous values come back after."""
        unknown = set(roles) - set(_ROLES)
        if unknown:
            raise TypeError(f"CallContext.using: unknown role(s) {sorted(unknown)}; known: {_ROLES}")
        before = {name: getattr(self._tls, name, None) for name in roles}
        for name, value in roles.items():
            setattr(self._tls, name, value)
        try:
            yield
        finally:
            for name, value in before.items():
                setattr(self._tls, name, value)
