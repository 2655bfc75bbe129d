"""Exceptions of the gateway. Model failures (unparseable replies, exhausted retries, context
overflow) are not raised: they become ``ChatResult(status="failed")``. Exceptions are for errors
the caller must fix (a replay miss, an unknown backend) and, inside the gateway, for classifying
backend errors (:class:`CallError`), whose ``kind`` (:data:`KINDS`), ``status``, ``url`` and
``model`` tell a failure that repeats on every item from a passing one.
"""
from __future__ import annotations

#: What went wrong in one backend call:
#: ``connect``: no connection was made (refused, DNS, connect timeout): the circuit breaker counts it;
#: ``dropped``: a connection was made and then cut (no response, or a body cut short): retried;
#: ``timeout``: no reply within the client's timeout (the server may still bill it);
#: ``http``: the server answered with an error status (``status``);
#: ``retry_after_beyond_cap``: the server asked to wait longer than the retry policy allows;
#: ``unreadable``: an HTTP 200 whose body is not a chat completion;
#: ``context_overflow``: the prompt does not fit the model's context;
#: ``invalid_reply``: the reply failed validation (set on results only, not raised);
#: ``batch_unanswered``: a batch ended without a line for the request (results only).
KINDS = ("connect", "dropped", "timeout", "http", "retry_after_beyond_cap", "unreadable", "context_overflow",
         "invalid_reply", "batch_unanswered")


class GatewayError(Exception):
    """Base class of gateway exceptions."""


class ConfigError(GatewayError):
    """Bad configuration: unknown backend, missing model file, missing key."""


class ReplayMissError(GatewayError):
    """In replay mode, a request that is not in the cache."""


class CallError(GatewayError):
    """A backend call failed: ``kind`` (see :data:`KINDS`), ``status``, ``url``, ``model``."""

    default_kind = "http"

    def __init__(self, message: str, *, status: int | None = None, kind: str | None = None,
                 url: str | None = None, model: str | None = None):
        super().__init__(message)
        self.status = status
        self.kind = kind or self.default_kind
        self.url = url
        self.model = model


class TransientError(CallError):
    """A backend error worth retrying (429, 5xx, timeout, connection error). ``retry_after``: the
    server's Retry-After in seconds; ``timed_out``: a client timeout (the server may still bill the
    call); ``connection_failed``: no connection was made, which the circuit breaker counts."""

    def __init__(self, message: str, retry_after: float | None = None, status: int | None = None,
                 timed_out: bool = False, connection_failed: bool = False, *, kind: str | None = None,
                 url: str | None = None, model: str | None = None):
        if kind is None:
            kind = "connect" if connection_failed else "timeout" if timed_out else "http" if status else "unreadable"
        super().__init__(message, status=status, kind=kind, url=url, model=model)
        self.retry_after = retry_after
        self.timed_out = timed_out
        self.connection_failed = connection_failed


class RetryAfterBeyondCapError(TransientError):
    """The server asked to wait (Retry-After) longer than the retry policy's cap: the item fails
    at once, with the server's reason, instead of after ``max_attempts`` capped waits."""


class EndpointUnreachableError(GatewayError):
    """The circuit breaker is open: consecutive calls to ``url`` could not connect; it stops the
    run instead of one failure per item, as every further item would fail the same way."""

    def __init__(self, message: str, url: str | None = None):
        super().__init__(message)
        self.url = url
        self.kind, self.status = "connect", None


class BatchStoppedError(GatewayError):
    """A batch failed, expired or was cancelled and ``JUDGELAB_BATCH_FALLBACK`` is ``stop``: the run
    stops instead of paying full price for ordinary calls; the message names the settings that
    continue, ``errors`` holds the batch's (dicts with ``code``, ``message``, ``line``)."""

    def __init__(self, message: str, batch_id: str, status: str, errors: list[dict] | None = None):
        super().__init__(message)
        self.batch_id = batch_id
        self.status = status
        self.errors = list(errors or [])


class PermanentError(CallError):
    """A backend error that retrying will not fix (400 bad request, 401, context too long)."""


class ContextOverflowError(PermanentError):
    """The prompt does not fit the model's context window (and no truncation policy was chosen)."""

    default_kind = "context_overflow"
