"""Retries with exponential backoff and full jitter, honouring Retry-After; the circuit breaker.

Only :class:`~judgelab.gateway.errors.TransientError` (429, 5xx, timeouts, connection errors,
unreadable bodies) is retried, after ``uniform(0, min(cap, base * 2**k))`` ("full jitter", AWS
Architecture Blog, 2015) or the server's Retry-After plus a little jitter. A Retry-After beyond
``retry_after_cap_s`` (a quota 429: "try again in an hour") fails the call at once
(:class:`~judgelab.gateway.errors.RetryAfterBeyondCapError`): asking again would meet the same
answer. A client timeout gives up at its ``max_timeouts``-th (default 2), since the server usually
finishes, and bills, the abandoned call: it is paid at most twice. A shape's canary gives up at its
first timeout (``call(..., max_timeouts=1)``): it is paid once.

:class:`CircuitBreaker` stops calling an endpoint that is not there (a typo, a server not started)
instead of one failure row per item: at ``limit`` *consecutive* failures to connect (refused, DNS,
connect timeout; across threads) it opens and every call raises one
:class:`~judgelab.gateway.errors.EndpointUnreachableError` naming the URL. A connection dropped
after it was made (a flaky server: counting those opened the breaker in 6 runs of 12 at ~10% drops)
is an ordinary retry and, like any answer, closes the count. Nygard's pattern (*Release It!*, 2007)
without the half-open state: a run is short.
"""
from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, TypeVar

from judgelab.gateway.errors import (EndpointUnreachableError, RetryAfterBeyondCapError,
                                     TransientError)

T = TypeVar("T")


@dataclass
class RetryPolicy:
    """How many attempts, and how long to wait between them (``sleep``, ``rng``: injectable)."""

    max_attempts: int = 6
    base_s: float = 1.0
    cap_s: float = 60.0
    retry_after_cap_s: float = 300.0
    #: a call gives up at this many client timeouts (each timed-out attempt may still be billed)
    max_timeouts: int = 2
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random = field(default_factory=random.Random)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (0-based)."""
        with self._lock:  # random.Random is not guaranteed thread-safe across implementations
            jitter = self.rng.random()
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.retry_after_cap_s) + 0.1 * jitter * self.base_s
        return jitter * min(self.cap_s, self.base_s * (2 ** attempt))

    def call(self, fn: Callable[[], T], on_retry: Callable[[int, TransientError, float], None] | None = None,
             max_timeouts: int | None = None) -> tuple[T, int]:
        """Run ``fn`` until it succeeds; returns (value, attempts used), else re-raises the last
        TransientError (attempts or timeouts used up: ``max_timeouts``, else the policy's) or a
        RetryAfterBeyondCapError at once."""
        timeouts = 0
        for attempt in range(self.max_attempts):
            try:
                return fn(), attempt + 1
            except TransientError as exc:
                timeouts += exc.timed_out
                if exc.retry_after is not None and exc.retry_after > self.retry_after_cap_s:
                    raise self._beyond_cap(exc, attempt + 1) from exc
                if attempt + 1 >= self.max_attempts or timeouts >= (max_timeouts or self.max_timeouts):
                    exc.attempts = attempt + 1  # type: ignore[attr-defined]
                    raise
                wait = self.delay(attempt, exc.retry_after)
                if on_retry is not None:
                    on_retry(attempt + 1, exc, wait)
                self.sleep(wait)
        raise AssertionError("unreachable")

    def _beyond_cap(self, exc: TransientError, attempts: int) -> RetryAfterBeyondCapError:
        err = RetryAfterBeyondCapError(
            f"{exc} — the server asks to wait {exc.retry_after:g} s (Retry-After), beyond the retry cap of "
            f"{self.retry_after_cap_s:g} s (RetryPolicy.retry_after_cap_s): not retried",
            retry_after=exc.retry_after, status=exc.status, kind="retry_after_beyond_cap", url=exc.url,
            model=exc.model)
        err.attempts = attempts  # type: ignore[attr-defined]
        return err


def parse_retry_after(headers) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date), else None."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return float(ms) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            return max(parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
        except (TypeError, ValueError):
            return None


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
        """Count a failure to connect; at the limit open the breaker and raise its error. Any other
        error (a dropped connection, an HTTP error) is no dead endpoint: it closes the count."""
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
