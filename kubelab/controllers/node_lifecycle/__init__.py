"""Node lifecycle: notice silent nodes, taint them, and evict the pods they can no longer run.

Two controllers of kube-controller-manager, as upstream splits them since 1.29
(SeparateTaintEvictionController):
- node_lifecycle_controller.py: node health from the kubelet's heartbeats (Lease and Ready
  condition), Unknown after node-monitor-grace-period, NoSchedule and NoExecute taints;
  zones.py: the "full disruption" brake; rate_limited_queue.py: the pace of tainting;
- taint_eviction.py: deletes pods from nodes with NoExecute taints they do not tolerate, after
  their tolerationSeconds.
"""

from kubelab.controllers.node_lifecycle.node_lifecycle_controller import (
    HOLLOW_NODE_ANNOTATION,
    NOT_READY,
    UNREACHABLE,
    NodeLifecycleController,
)
from kubelab.controllers.node_lifecycle.rate_limited_queue import (
    RateLimitedTimedQueue,
    TokenBucketRateLimiter,
)
from kubelab.controllers.node_lifecycle.taint_eviction import (
    TaintEvictionController,
    get_matching_tolerations,
    get_min_toleration_time,
    tolerates_taint,
)
from kubelab.controllers.node_lifecycle.zones import (
    Zones,
    compute_zone_state,
    zone_key,
)

__all__ = [
    "HOLLOW_NODE_ANNOTATION",
    "NOT_READY",
    "UNREACHABLE",
    "NodeLifecycleController",
    "RateLimitedTimedQueue",
    "TaintEvictionController",
    "TokenBucketRateLimiter",
    "Zones",
    "compute_zone_state",
    "get_matching_tolerations",
    "get_min_toleration_time",
    "tolerates_taint",
    "zone_key",
]
