"""A delaying queue that asks a rate limiter how long to wait
(client-go util/workqueue/rate_limiting_queue.go).

The controller idiom (sample-controller's processNextWorkItem):

    key, shutdown = queue.get()
    try:
        sync_handler(key)
        queue.forget(key)             # success: reset the key's backoff
    except Exception:
        queue.add_rate_limited(key)   # failure: retry after 5ms, 10ms, 20ms, ...
    finally:
        queue.done(key)
"""

from __future__ import annotations

from kubelab.client.workqueue.default_rate_limiters import (
    RateLimiter,
    default_controller_rate_limiter,
)
from kubelab.client.workqueue.delaying_queue import DelayingQueue
from kubelab.client.workqueue.queue import T
from kubelab.sim.clock import Clock

__all__ = ["RateLimitingQueue"]


class RateLimitingQueue(DelayingQueue[T]):
    """workqueue.TypedRateLimitingInterface. Remember to forget() a key once it succeeds,
    or its failures are tracked (and its backoff grows) forever.

    The rate limiter defaults to default_controller_rate_limiter(clock).
    """

    def __init__(self, clock: Clock, rate_limiter: RateLimiter | None = None,
                 name: str = "") -> None:
        super().__init__(clock, name)
        if rate_limiter is None:
            rate_limiter = default_controller_rate_limiter(clock)
        self.rate_limiter = rate_limiter

    def add_rate_limited(self, item: T) -> None:
        """add_after(item, rate_limiter.when(item)): the limiter counts this as a failure."""
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: T) -> None:
        """Stop tracking item's failures. Only the limiter forgets: you still call done()."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return self.rate_limiter.num_requeues(item)
