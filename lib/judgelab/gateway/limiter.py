"""A requests-per-minute and tokens-per-minute limiter (two token buckets).

Each bucket holds at most one minute's allowance and refills continuously at ``limit / 60`` per
second. ``acquire(tokens)`` blocks until both buckets can pay. A request larger than a whole
minute's token allowance is let through when the bucket is full (it could never fit otherwise).
Clock and sleep are injectable for tests.
"""
from __future__ import annotations

import threading
import time
from typing import Callable


class _Bucket:
    def __init__(self, per_minute: float, now: float):
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self.level = self.capacity
        self.stamp = now

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait_for(self, amount: float) -> float:
        amount = min(amount, self.capacity)
        return 0.0 if self.level >= amount else (amount - self.level) / self.rate

    def take(self, amount: float) -> None:
        self.level -= min(amount, self.capacity)


class RateLimiter:
    """Blocks callers so that at most ``rpm`` requests and ``tpm`` tokens start per minute."""

    def __init__(
        self,
        rpm: float | None = None,
        tpm: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        for name, value in (("rpm", rpm), ("tpm", tpm)):
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive, got {value}")
        self._clock, self._sleep = clock, sleep
        now = clock()
        self._requests = _Bucket(rpm, now) if rpm else None
        self._tokens = _Bucket(tpm, now) if tpm else None
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        return self._requests is not None or self._tokens is not None

    def acquire(self, tokens: int = 0) -> float:
        """Wait until one request of ``tokens`` tokens may start; returns the seconds waited."""
        if not self.active:
            return 0.0
        waited = 0.0
        while True:
            with self._lock:
                now = self._clock()
                buckets = [(b, amt) for b, amt in ((self._requests, 1), (self._tokens, tokens)) if b is not None]
                for b, _ in buckets:
                    b.refill(now)
                wait = max(b.wait_for(amt) for b, amt in buckets)
                if wait <= 0:
                    for b, amt in buckets:
                        b.take(amt)
                    return waited
            self._sleep(wait)
            waited += wait
