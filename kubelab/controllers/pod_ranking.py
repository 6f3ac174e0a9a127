"""Which pods to delete first, and the orders in which ReplicaSets are scaled.

ActivePodsWithRanks and the ReplicaSetsBy* orders of kubernetes/kubernetes
pkg/controller/controller_utils.go. When a ReplicaSet has too many pods it deletes the ones that
cost least to lose: not yet scheduled before scheduled, Pending before Running, not ready
before ready, and so on (rank_pods_for_deletion's docstring has the full list).
LogarithmicScaleDown and PodDeletionCost are on, as they are by default since 1.22.
"""

from __future__ import annotations

import functools
import math

from kubelab.api import Object
from kubelab.controllers.controller_utils import is_pod_active, is_pod_ready, seconds

__all__ = [
    "POD_DELETION_COST",
    "filter_active_replica_sets",
    "rank_pods_for_deletion",
    "ranks_by_related_pods_on_same_node",
    "sort_by_creation_timestamp",
    "sort_by_size_newer",
    "sort_by_size_older",
]

POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}


def _deletion_cost(pod: Object) -> int:
    """GetDeletionCostFromPodAnnotations: an int32, 0 when absent or unparsable."""
    text = ((pod["metadata"].get("annotations") or {}).get(POD_DELETION_COST))
    try:
        value = int(str(text).strip()) if text is not None else 0
    except ValueError:
        return 0
    return value if -(2**31) <= value < 2**31 else 0


def _ready_time(pod: Object) -> float | None:
    for c in (pod.get("status") or {}).get("conditions") or ():
        if c.get("type") == "Ready" and c.get("status") == "True" and c.get("lastTransitionTime"):
            return seconds(c["lastTransitionTime"])
    return None


def _max_restarts(pod: Object) -> int:
    return max((int(c.get("restartCount", 0))
                for c in (pod.get("status") or {}).get("containerStatuses") or ()), default=0)


def _log_rank(t: float, now: float) -> int:
    # logarithmicRankDiff works on nanoseconds: floor(log2(now - t)), -1 when not in the past.
    d = (now - t) * 1e9
    return int(math.log2(d)) if d > 0 else -1


def _newer_first(t1: float | None, t2: float | None, now: float, uid1: str, uid2: str) -> int:
    """-1 when the first pod should go first: an empty time, then the more recent one, compared
    on a logarithmic scale (pods of similar age count as equally old; the uid breaks the tie)."""
    if t1 is None or t2 is None:
        return -1 if t1 is None else 1  # afterOrZero: zero comes first
    diff = _log_rank(t1, now) - _log_rank(t2, now)
    if diff == 0:
        return -1 if uid1 < uid2 else 1
    return -1 if diff < 0 else 1


def _compare(a: tuple[Object, int], b: tuple[Object, int], now: float) -> int:
    (p, rank_p), (q, rank_q) = a, b
    node_p, node_q = p["spec"].get("nodeName") or "", q["spec"].get("nodeName") or ""
    if node_p != node_q and (not node_p or not node_q):           # 1. unassigned < assigned
        return -1 if not node_p else 1
    phase_p = _PHASE_ORDINAL.get((p.get("status") or {}).get("phase", ""), 0)
    phase_q = _PHASE_ORDINAL.get((q.get("status") or {}).get("phase", ""), 0)
    if phase_p != phase_q:                                        # 2. Pending < Unknown < Running
        return -1 if phase_p < phase_q else 1
    ready_p, ready_q = is_pod_ready(p), is_pod_ready(q)
    if ready_p != ready_q:                                        # 3. not ready < ready
        return -1 if not ready_p else 1
    cost_p, cost_q = _deletion_cost(p), _deletion_cost(q)
    if cost_p != cost_q:                                          # 4. lower deletion cost first
        return -1 if cost_p < cost_q else 1
    if rank_p != rank_q:                                          # 5. doubled up < not doubled up
        return -1 if rank_p > rank_q else 1
    uid_p, uid_q = p["metadata"].get("uid", ""), q["metadata"].get("uid", "")
    if ready_p and ready_q:                                       # 6. ready for less time first
        t_p, t_q = _ready_time(p), _ready_time(q)
        if t_p != t_q:
            return _newer_first(t_p, t_q, now, uid_p, uid_q)
    restarts_p, restarts_q = _max_restarts(p), _max_restarts(q)
    if restarts_p != restarts_q:                                  # 7. more restarts first
        return -1 if restarts_p > restarts_q else 1
    created_p = p["metadata"].get("creationTimestamp")            # 8. newer before older
    created_q = q["metadata"].get("creationTimestamp")
    if created_p != created_q:
        return _newer_first(seconds(created_p) if created_p else None,
                            seconds(created_q) if created_q else None, now, uid_p, uid_q)
    return 0


def rank_pods_for_deletion(pods: list[Object], ranks: list[int], now: float) -> list[Object]:
    """The pods sorted so that the first ones are the best to delete (ActivePodsWithRanks):

    1. not scheduled before scheduled; 2. Pending, then Unknown, then Running; 3. not ready
    before ready; 4. lower pod-deletion-cost annotation first; 5. higher rank first (more
    pods of the same owner on its node); 6. ready for less time first; 7. more container
    restarts first; 8. created more recently first. Times in 6 and 8 compare on a log2 scale.
    """
    def cmp(a: tuple[Object, int], b: tuple[Object, int]) -> int:
        return _compare(a, b, now)
    pairs = sorted(zip(pods, ranks, strict=True), key=functools.cmp_to_key(cmp))
    return [pod for pod, _ in pairs]


def ranks_by_related_pods_on_same_node(pods: list[Object], related: list[Object]) -> list[int]:
    """getPodsRankedByRelatedPodsOnSameNode: a pod's rank is the number of active related
    pods (of any ReplicaSet of the same Deployment) on its node."""
    on_node: dict[str, int] = {}
    for pod in related:
        if is_pod_active(pod):
            node = pod["spec"].get("nodeName") or ""
            on_node[node] = on_node.get(node, 0) + 1
    return [on_node.get(pod["spec"].get("nodeName") or "", 0) for pod in pods]


# ---------------------------------------------------------------- ReplicaSet orders


def _replicas(rs: Object) -> int:
    return int((rs.get("spec") or {}).get("replicas", 1))


def _created(rs: Object) -> tuple[float, str]:
    stamp = rs["metadata"].get("creationTimestamp")
    return (seconds(stamp) if stamp else 0.0, rs["metadata"]["name"])


def sort_by_creation_timestamp(rss: list[Object]) -> list[Object]:
    """ReplicaSetsByCreationTimestamp: oldest first, the name breaks ties."""
    return sorted(rss, key=_created)


def sort_by_size_older(rss: list[Object]) -> list[Object]:
    """ReplicaSetsBySizeOlder: largest first; among equals, older first (scaling down)."""
    return sorted(sort_by_creation_timestamp(rss), key=lambda rs: -_replicas(rs))


def sort_by_size_newer(rss: list[Object]) -> list[Object]:
    """ReplicaSetsBySizeNewer: largest first; among equals, newer first (scaling up)."""
    return sorted(sort_by_creation_timestamp(rss)[::-1], key=lambda rs: -_replicas(rs))


def filter_active_replica_sets(rss: list[Object | None]) -> list[Object]:
    """FilterActiveReplicaSets: those with spec.replicas > 0."""
    return [rs for rs in rss if rs is not None and _replicas(rs) > 0]
