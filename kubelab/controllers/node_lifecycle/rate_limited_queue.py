"""The pace of tainting: a queue of nodes drained no faster than a token bucket allows.

- TokenBucketRateLimiter: client-go util/flowcontrol/throttle.go's passive token bucket
  (NewTokenBucketPassiveRateLimiter) over golang.org/x/time/rate.Limiter. try_accept() takes a
  token if one is there now and never waits.
- RateLimitedTimedQueue: pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go. Nodes
  are taken off in the order they came, one token each; swap_limiter changes the pace.

Time is counted as Go counts it, in whole nanoseconds. rate.Limiter turns a token deficit into
a wait by truncating to a nanosecond (durationFromTokens), and grants a token when that wait is
zero: a deficit worth less than a nanosecond is no deficit. Counting in float seconds instead
left 0.9999999999999998 tokens after rounding, a wait of 1e-15 s that cannot move a clock at
t = 100 s, and a tainting pass that re-armed itself at the same instant forever.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["RateLimitedTimedQueue", "TokenBucketRateLimiter"]


def _instant(seconds: float) -> int:
    """A virtual instant as Go's time.Time would hold it: the nearest whole nanosecond."""
    return round(seconds * 1e9)


class TokenBucketRateLimiter:
    """Up to `burst` tokens, refilled at `qps` per second; it starts full. qps <= 0 never
    accepts (rate_limited_queue.go swaps in a fakeNeverRateLimiter for that)."""

    def __init__(self, qps: float, burst: int = 1) -> None:
        if qps > 0 and burst < 1:
            burst = 1  # NewTokenBucketRateLimiter: a positive rate needs room for one token
        self.qps, self.burst = qps, burst
        self._tokens = float(burst)
        self._last: int | None = None  # nanoseconds; None: never asked (the bucket is full)

    def try_accept(self, now: float) -> bool:
        """AllowN(now, 1): the state changes only when the token is granted."""
        t = _instant(now)
        if self._deficit_nanos(t) > 0:
            return False
        self._tokens, self._last = self._advance(t) - 1.0, t
        return True

    def wait(self, now: float) -> float | None:
        """Seconds until try_accept would succeed (0 if it would now), None if never. Whole
        nanoseconds, so a positive wait always moves the clock.

        kubelab's, not client-go's: upstream polls the queue every NodeEvictionPeriod (100 ms);
        kubelab schedules the next pass for when a token will be there.
        """
        if self.qps <= 0:
            return None
        return self._deficit_nanos(_instant(now)) / 1e9

    def _deficit_nanos(self, t: int) -> int:
        if self.qps <= 0:
            return 2**63 - 1  # InfDuration
        missing = 1.0 - self._advance(t)
        return int(missing / self.qps * 1e9) if missing > 0 else 0  # truncated, as Go converts

    def _advance(self, t: int) -> float:
        """rate.Limiter.advance: the tokens at t, never more than the burst."""
        if self._last is None:
            return float(self.burst)
        elapsed = max(0, t - self._last) / 1e9
        return min(float(self.burst), self._tokens + elapsed * max(self.qps, 0.0))


class RateLimitedTimedQueue:
    """Nodes waiting for their NoExecute taint, by name, oldest first."""

    def __init__(self, qps: float, burst: int = 1) -> None:
        self.burst = burst
        self.limiter = TokenBucketRateLimiter(qps, burst)
        self._items: dict[str, tuple[str, float]] = {}  # node name -> (uid, added at)

    @property
    def qps(self) -> float:
        return self.limiter.qps

    @qps.setter
    def qps(self, qps: float) -> None:
        self.swap_limiter(qps)

    def swap_limiter(self, qps: float, now: float = 0.0) -> None:
        """SwapLimiter: a new bucket at the new pace. If the old one is empty, the new one
        starts empty too (a good approach for burst 1, says upstream)."""
        if qps == self.limiter.qps:
            return
        new = TokenBucketRateLimiter(qps, self.burst)
        if qps > 0 and not self.limiter.try_accept(now):
            new.try_accept(now)
        self.limiter = new

    def add(self, name: str, uid: str, now: float) -> bool:
        if name in self._items:
            return False
        self._items[name] = (uid, now)
        return True

    def remove(self, name: str) -> bool:
        return self._items.pop(name, None) is not None

    def __contains__(self, name: str) -> bool:
        return name in self._items

    def __len__(self) -> int:
        return len(self._items)

    def try_process(self, now: float, fn: Callable[[str], bool]) -> float | None:
        """Try: hand nodes to fn (True: done, False: try again later), one token each, while
        tokens last. Returns in how many seconds the next token comes for what is left, or
        None when nothing is left or the pace is zero."""
        for name in sorted(self._items, key=lambda n: (self._items[n][1], n)):
            if not self.limiter.try_accept(now):
                return self.limiter.wait(now)
            if fn(name):
                self._items.pop(name, None)
        return None
