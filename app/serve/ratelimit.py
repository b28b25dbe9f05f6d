"""Moving-window limits per minute (the ``limits`` library): requests per key, key checks per key id and client."""

from __future__ import annotations

import math
import time

from limits import RateLimitItemPerMinute
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter


class RateLimiter:
    """``per_minute`` events for each identity (an API key id, the loopback owner, a client address)."""

    def __init__(self, per_minute: int) -> None:
        self._item = RateLimitItemPerMinute(per_minute)
        self._limiter = MovingWindowRateLimiter(MemoryStorage())

    def retry_after(self, *identities: str) -> int | None:
        """Count one event against every identity if each has room: None; else (nothing counted)
        whole seconds until each would. Called from the event loop only, so test-then-hit is atomic."""
        full = [i for i in identities if not self._limiter.test(self._item, i)]
        if not full:
            for identity in identities:
                self._limiter.hit(self._item, identity)
            return None
        resets = (self._limiter.get_window_stats(self._item, i).reset_time for i in full)
        return max(1, math.ceil(max(resets) - time.time()))
