"""Per-key rate limits: a moving window of requests per minute (the ``limits`` library)."""

from __future__ import annotations

import math
import time

from limits import RateLimitItemPerMinute
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter


class RateLimiter:
    """``requests_per_minute`` for each identity (an API key id, or the loopback owner)."""

    def __init__(self, requests_per_minute: int) -> None:
        self._item = RateLimitItemPerMinute(requests_per_minute)
        self._limiter = MovingWindowRateLimiter(MemoryStorage())

    def retry_after(self, identity: str) -> int | None:
        """Count one request; None when allowed, else whole seconds until one more is."""
        if self._limiter.hit(self._item, identity):
            return None
        reset = self._limiter.get_window_stats(self._item, identity).reset_time
        return max(1, math.ceil(reset - time.time()))
