"""How long a failing key waits before its next try (client-go util/workqueue/default_rate_limiters.go).

Durations are float seconds of virtual time (Go: time.Duration). A rate limiter answers three
questions about an item: when(item), how long to wait before the next try (asking counts as a
failure); forget(item), stop tracking it (it succeeded, or we gave up); num_requeues(item).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol

from kubelab.client.rate import Limiter
from kubelab.sim.clock import Clock

__all__ = [
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "WithMaxWaitRateLimiter",
    "default_controller_rate_limiter",
    "default_item_based_rate_limiter",
]

# Go's time.Duration is int64 nanoseconds: about 292 years is the longest wait it can express.
MAX_DURATION = (2**63 - 1) / 1e9


class RateLimiter(Protocol):
    """workqueue.TypedRateLimiter."""

    def when(self, item: Hashable) -> float:
        """How long item should wait before it is added again; counts one more failure."""
        ...

    def forget(self, item: Hashable) -> None:
        """Stop tracking item (it succeeded, or we gave up). Upstream's Forget."""
        ...

    def num_requeues(self, item: Hashable) -> int:
        """How many failures item has had since the last forget()."""
        ...


class ItemExponentialFailureRateLimiter:
    """base_delay * 2**failures per item, capped at max_delay: 5ms, 10ms, 20ms, ... 1000s."""

    def __init__(self, base_delay: float, max_delay: float) -> None:
        if base_delay < 0 or max_delay < 0:
            raise ValueError(f"delays must be >= 0, got base_delay={base_delay}, "
                             f"max_delay={max_delay}")
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        exp = self._failures.get(item, 0)
        self._failures[item] = exp + 1
        # Upstream guards against overflowing int64 nanoseconds; Python floats would reach
        # OverflowError at 2.0**1024 instead. Either way, a huge backoff is max_delay.
        if exp >= 1024:
            return self.max_delay
        backoff = self.base_delay * 2.0**exp
        if backoff > MAX_DURATION:
            return self.max_delay
        return min(backoff, self.max_delay)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)


class ItemFastSlowRateLimiter:
    """fast_delay for the first max_fast_attempts failures of an item, slow_delay after that."""

    def __init__(self, fast_delay: float, slow_delay: float, max_fast_attempts: int) -> None:
        self.fast_delay = fast_delay
        self.slow_delay = slow_delay
        self.max_fast_attempts = max_fast_attempts
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        self._failures[item] = self._failures.get(item, 0) + 1
        if self._failures[item] <= self.max_fast_attempts:
            return self.fast_delay
        return self.slow_delay

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)


class BucketRateLimiter:
    """An overall token bucket, shared by all items (golang.org/x/time/rate.Limiter, in
    kubelab/client/rate.py). when() always takes a token and says how long until it is there.
    Items are not tracked: forget() does nothing and num_requeues() is 0.
    """

    def __init__(self, clock: Clock, qps: float = 10.0, burst: int = 100) -> None:
        self._limiter = Limiter(clock, qps, burst)
        self.qps, self.burst = qps, burst

    def tokens(self) -> float:
        """Tokens available now (negative while reservations are outstanding)."""
        return self._limiter.tokens()

    def when(self, item: Hashable) -> float:
        return self._limiter.reserve()

    def num_requeues(self, item: Hashable) -> int:
        return 0

    def forget(self, item: Hashable) -> None:
        pass


class MaxOfRateLimiter:
    """Asks every limiter and returns the worst (longest) answer."""

    def __init__(self, *limiters: RateLimiter) -> None:
        self.limiters = limiters

    def when(self, item: Hashable) -> float:
        # Every limiter must be asked: each one counts the failure.
        return max((limiter.when(item) for limiter in self.limiters), default=0.0)

    def num_requeues(self, item: Hashable) -> int:
        return max((limiter.num_requeues(item) for limiter in self.limiters), default=0)

    def forget(self, item: Hashable) -> None:
        for limiter in self.limiters:
            limiter.forget(item)


class WithMaxWaitRateLimiter:
    """Caps another limiter's answer at max_delay."""

    def __init__(self, limiter: RateLimiter, max_delay: float) -> None:
        self.limiter = limiter
        self.max_delay = max_delay

    def when(self, item: Hashable) -> float:
        return min(self.limiter.when(item), self.max_delay)

    def num_requeues(self, item: Hashable) -> int:
        return self.limiter.num_requeues(item)

    def forget(self, item: Hashable) -> None:
        self.limiter.forget(item)


def default_controller_rate_limiter(clock: Clock) -> MaxOfRateLimiter:
    """DefaultControllerRateLimiter: per-item exponential backoff (5ms .. 1000s) combined with
    an overall 10 qps, burst 100 token bucket ("only for retry speed")."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0),
        BucketRateLimiter(clock, qps=10.0, burst=100),
    )


def default_item_based_rate_limiter() -> ItemExponentialFailureRateLimiter:
    """DefaultItemBasedRateLimiter: exponential from 1ms to 1000s, no overall bucket."""
    return ItemExponentialFailureRateLimiter(0.001, 1000.0)
