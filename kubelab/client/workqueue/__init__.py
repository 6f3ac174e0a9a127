"""client-go's util/workqueue: the queue between a controller's event handlers and its workers.

Queue (dedupe, one worker per key) -> DelayingQueue (add_after on the simulated clock) ->
RateLimitingQueue (add_rate_limited, forget, num_requeues), and the rate limiters.
"""

from kubelab.client.workqueue.default_rate_limiters import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    WithMaxWaitRateLimiter,
    default_controller_rate_limiter,
    default_item_based_rate_limiter,
)
from kubelab.client.workqueue.delaying_queue import DelayingQueue
from kubelab.client.workqueue.queue import Queue
from kubelab.client.workqueue.rate_limiting_queue import RateLimitingQueue

__all__ = [
    "BucketRateLimiter",
    "DelayingQueue",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "Queue",
    "RateLimiter",
    "RateLimitingQueue",
    "WithMaxWaitRateLimiter",
    "default_controller_rate_limiter",
    "default_item_based_rate_limiter",
]
