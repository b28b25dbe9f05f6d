"""Moving-window limits per minute (the ``limits`` library): requests per key; failed key checks per key id and client."""

from __future__ import annotations

import math
import time
from collections import Counter

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


class FailureLimiter:
    """``per_minute`` failed checks for each identity (a key id, a client address).

    Only failures count: a proxy that brings many users' keys from one address after a restart
    is not held up by their first checks. A check still running counts as a failure until it
    succeeds, so a burst cannot start more checks than the allowance has room for.
    """

    def __init__(self, per_minute: int) -> None:
        self._item = RateLimitItemPerMinute(per_minute)
        self._limiter = MovingWindowRateLimiter(MemoryStorage())
        self._running: Counter[str] = Counter()

    def refusal(self, *identities: str) -> tuple[int, list[str]] | None:
        """None while every identity has room for a check; else whole seconds until each would,
        and the identities that have none."""
        full = [i for i in identities if self._room(i) <= 0]
        if not full:
            return None
        resets = (self._limiter.get_window_stats(self._item, i).reset_time for i in full)
        return max(1, math.ceil(max(resets) - time.time())), full

    def admit(self, *identities: str) -> tuple[int, list[str]] | None:
        """Start a check for every identity if each has room: None; else (nothing started) the
        ``refusal``. Called from the event loop only, so the count is atomic."""
        refused = self.refusal(*identities)
        if refused is None:
            self._running.update(identities)
        return refused

    def finish(self, *identities: str, failed: bool) -> None:
        """A check ``admit`` started has ended; a failed one is counted against each identity."""
        self._running.subtract(identities)
        self._running = +self._running  # drop the identities with nothing running
        if failed:
            for identity in identities:
                self._limiter.hit(self._item, identity)

    def _room(self, identity: str) -> int:
        return self._limiter.get_window_stats(self._item, identity).remaining - self._running[identity]
