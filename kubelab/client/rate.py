"""golang.org/x/time/rate's Limiter: the token bucket under client-go's rate limiters.

Both users of it stand on this one module, as both stand on x/time/rate upstream: the
workqueue's overall BucketRateLimiter (util/workqueue/default_rate_limiters.go) and a client's
request limiter (util/flowcontrol/throttle.go). So a sandbox without the workqueue (exercise
3.1, where the learner writes it) still has a client that can pace its requests.

The bucket holds up to `burst` tokens and refills at `qps` tokens per second; it starts full.
reserve() is Reserve().Delay(): it always takes a token, going into debt if the bucket is empty,
and returns how long until that token would have been there. So the 101st immediate request
waits 0.1 s at 10 qps, the 102nd 0.2 s, and so on.
"""

from __future__ import annotations

import math

from kubelab.sim.clock import Clock

__all__ = ["Limiter"]


class Limiter:
    def __init__(self, clock: Clock, qps: float, burst: int) -> None:
        if not qps > 0 or burst < 1:
            raise ValueError(f"a token bucket needs qps > 0 and burst >= 1, "
                             f"got qps={qps}, burst={burst}")
        self.qps = qps
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)  # may go negative: reservations not yet covered
        self._last = clock.now  # when _tokens was last brought up to date

    def tokens(self) -> float:
        """Tokens available now (negative while reservations are outstanding)."""
        return self._advance(self._clock.now)

    def reserve(self) -> float:
        """Take a token; the virtual seconds until it is there (0 if it is)."""
        now = self._clock.now
        tokens = self._advance(now) - 1
        self._tokens, self._last = tokens, now
        if tokens >= 0 or math.isinf(self.qps):
            return 0.0
        return -tokens / self.qps

    def _advance(self, now: float) -> float:
        # rate.Limiter.advance: tokens refilled since _last, never more than the burst.
        elapsed = max(0.0, now - self._last)
        if math.isinf(self.qps):
            return float(self.burst)
        return min(float(self.burst), self._tokens + elapsed * self.qps)
