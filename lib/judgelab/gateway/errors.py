"""Exceptions of the gateway.

Model failures (unparseable replies, exhausted retries, context overflow) are *not* raised: they
become ``ChatResult(status="failed")``. Exceptions are for configuration errors the caller must
fix (a replay miss, an unknown backend) and, inside the gateway, for classifying backend errors.
"""
from __future__ import annotations


class GatewayError(Exception):
    """Base class of gateway exceptions."""


class ConfigError(GatewayError):
    """Bad configuration: unknown backend, missing model file, missing key."""


class ReplayMissError(GatewayError):
    """In replay mode, a request that is not in the cache."""


class TransientError(GatewayError):
    """A backend error worth retrying (429, 5xx, timeout, connection error).

    ``retry_after`` is the server's Retry-After in seconds when it sent one. ``timed_out`` marks a
    client timeout: the server may still finish, and bill, the abandoned call. ``connection_failed``
    marks a call that reached no server (refused, reset, DNS): the circuit breaker counts those.
    """

    def __init__(self, message: str, retry_after: float | None = None, status: int | None = None,
                 timed_out: bool = False, connection_failed: bool = False):
        super().__init__(message)
        self.retry_after = retry_after
        self.status = status
        self.timed_out = timed_out
        self.connection_failed = connection_failed


class EndpointUnreachableError(GatewayError):
    """The circuit breaker is open: consecutive calls to one endpoint found no server.

    Raised by :meth:`Gateway.chat` (it stops the run) instead of recording one failure per item,
    since every further item would fail the same way after its own retries.
    """


class PermanentError(GatewayError):
    """A backend error that retrying will not fix (400 bad request, 401, context too long)."""


class ContextOverflowError(PermanentError):
    """The prompt does not fit the model's context window (and no truncation policy was chosen)."""
