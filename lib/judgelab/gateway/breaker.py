"""A circuit breaker: stop calling an endpoint that is not there.

An unreachable base URL (a typo, a server not started) fails every call the same way; retrying
each item with backoff would cost ``max_attempts`` attempts per item and bury the cause in one
failure row per item. The breaker counts *consecutive* failures to connect to its endpoint across
all threads; at ``limit`` it opens, and every call from then on (retries in progress included)
raises one :class:`~judgelab.gateway.errors.EndpointUnreachableError` naming the URL.

Only connect-phase failures count (``TransientError.connection_failed``: refused, DNS, connect
timeout): they say that no server is there. A connection dropped after it was made says the
server is there but flaky (counting those, a server dropping ~10% of connections opened the
breaker in 6 runs of 12); those are ordinary retries and, like any answer, close the count.
Nygard's pattern (*Release It!*, 2007) without the half-open state: a run is short.
"""
from __future__ import annotations

import threading

from judgelab.gateway.errors import EndpointUnreachableError, TransientError

DEFAULT_LIMIT = 3


class CircuitBreaker:
    """Consecutive connection failures to one endpoint; opens at ``limit``. Thread-safe."""

    def __init__(self, url: str | None, limit: int = DEFAULT_LIMIT):
        if limit < 1:
            raise ValueError(f"circuit breaker limit must be >= 1, got {limit}")
        self.url = url
        self.limit = limit
        self.failures = 0
        self._error: EndpointUnreachableError | None = None
        self._lock = threading.Lock()

    @property
    def is_open(self) -> bool:
        return self._error is not None

    def check(self) -> None:
        """Raise the breaker's error if it is open (called before every attempt)."""
        if self._error is not None:
            raise self._error

    def record_success(self) -> None:
        """The server answered: the count of consecutive failures starts again."""
        with self._lock:
            if self._error is None:
                self.failures = 0

    def record_failure(self, exc: TransientError) -> None:
        """Count a failure to connect; at the limit open the breaker and raise its error.

        Any other error (a dropped connection, an HTTP error) is not a dead endpoint: it closes the
        count, as :meth:`record_success` does."""
        if not getattr(exc, "connection_failed", False):
            self.record_success()
            return
        with self._lock:
            if self._error is None:
                self.failures += 1
                if self.failures >= self.limit:
                    self._error = EndpointUnreachableError(
                        f"{self.url}: could not connect on {self.failures} consecutive calls (last: {exc}); "
                        "the run is stopped. Check the base URL (JUDGELAB_BASE_URL / OPENAI_BASE_URL) "
                        "and that the server is running, then run again: completed calls are cached.",
                        url=self.url,
                    )
        self.check()
