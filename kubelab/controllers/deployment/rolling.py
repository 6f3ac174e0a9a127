"""RollingUpdate: replace pods a few at a time (kubernetes/kubernetes
pkg/controller/deployment/rolling.go).

Each sync takes at most one step and then writes status:
- scale the new ReplicaSet up, as far as replicas + maxSurge pods in total allow;
- otherwise scale old ReplicaSets down, as far as replicas - maxUnavailable available pods
  allow (unhealthy old pods go first: removing them costs no availability);
- otherwise, when the rollout is complete, delete history beyond revisionHistoryLimit.
The next step comes when the ReplicaSet controller reports the new pods available.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.controllers.deployment.progress import sync_rollout_status
from kubelab.controllers.deployment.replicas import (
    deployment_complete,
    max_unavailable,
    new_rs_new_replicas,
    replicas_of,
    sum_status,
)
from kubelab.controllers.deployment.scale import scale_replica_set_and_record_event
from kubelab.controllers.deployment.sync import cleanup_deployment, get_all_replica_sets_and_sync_revision
from kubelab.controllers.pod_ranking import filter_active_replica_sets, sort_by_creation_timestamp

if TYPE_CHECKING:
    from kubelab.controllers.deployment.controller import DeploymentController

__all__ = ["reconcile_new_replica_set", "reconcile_old_replica_sets", "rollout_rolling"]

def rollout_rolling(dc: DeploymentController, d: Object, rs_list: list[Object]) -> None:
    new_rs, old_rss = get_all_replica_sets_and_sync_revision(dc, d, rs_list, True)
    assert new_rs is not None  # created when missing (or the create raised)
    all_rss: list[Object | None] = [*old_rss, new_rs]
    if reconcile_new_replica_set(dc, all_rss, new_rs, d):
        sync_rollout_status(dc, all_rss, new_rs, d)
        return
    if reconcile_old_replica_sets(dc, all_rss, filter_active_replica_sets(list(old_rss)), new_rs, d):
        sync_rollout_status(dc, all_rss, new_rs, d)
        return
    if deployment_complete(d, d.get("status") or {}):
        cleanup_deployment(dc, old_rss, d)
    sync_rollout_status(dc, all_rss, new_rs, d)


def reconcile_new_replica_set(dc: DeploymentController, all_rss: list[Object | None], new_rs: Object,
                              d: Object) -> bool:
    replicas = replicas_of(d)
    if replicas_of(new_rs) == replicas:
        return False
    if replicas_of(new_rs) > replicas:
        scaled, _ = scale_replica_set_and_record_event(dc, new_rs, replicas, d)
        return scaled
    target = new_rs_new_replicas(d, [rs for rs in all_rss if rs is not None], new_rs)
    scaled, _ = scale_replica_set_and_record_event(dc, new_rs, target, d)
    return scaled


def reconcile_old_replica_sets(dc: DeploymentController, all_rss: list[Object | None],
                               old_rss: list[Object], new_rs: Object, d: Object) -> bool:
    """How far old ReplicaSets may shrink without losing availability:

        maxScaledDown = allPods - minAvailable - newRSUnavailable

    Counting the new ReplicaSet's unavailable pods matters: if the new pods crash-loop, old
    pods must not be traded for pods that never become available."""
    if sum(replicas_of(rs) for rs in old_rss) == 0:
        return False  # nothing left to scale down
    all_pods = sum(replicas_of(rs) for rs in all_rss if rs is not None)
    min_available = replicas_of(d) - max_unavailable(d)
    new_unavailable = replicas_of(new_rs) - int((new_rs.get("status") or {}).get("availableReplicas", 0))
    max_scaled_down = all_pods - min_available - new_unavailable
    if max_scaled_down <= 0:
        return False
    # Upstream swallows errors here: the sync ends, and the next event for the Deployment
    # (such as the update a conflict was about) brings it back.
    try:
        old_rss, cleaned = _cleanup_unhealthy_replicas(dc, old_rss, d, max_scaled_down)
    except ApiError:
        return False
    try:
        scaled = _scale_down_old_replica_sets_for_rolling_update(dc, [*old_rss, new_rs], old_rss, d)
    except ApiError:
        return False
    return cleaned + scaled > 0


def _cleanup_unhealthy_replicas(dc: DeploymentController, old_rss: list[Object], d: Object,
                                max_cleanup: int) -> tuple[list[Object], int]:
    """Scale old ReplicaSets down by their unavailable pods first (oldest ReplicaSet first):
    the ReplicaSet controller deletes not-ready pods before ready ones."""
    old_rss = sort_by_creation_timestamp(old_rss)
    total = 0
    for i, rs in enumerate(old_rss):
        if total >= max_cleanup:
            break
        replicas = replicas_of(rs)
        available = int((rs.get("status") or {}).get("availableReplicas", 0))
        if replicas == 0 or replicas == available:
            continue  # nothing unhealthy here
        count = min(max_cleanup - total, replicas - available)
        _, old_rss[i] = scale_replica_set_and_record_event(dc, rs, replicas - count, d)
        total += count
    return old_rss, total


def _scale_down_old_replica_sets_for_rolling_update(dc: DeploymentController, all_rss: list[Object | None],
                                                    old_rss: list[Object], d: Object) -> int:
    """Scale old ReplicaSets down (oldest first) by the available pods above minAvailable."""
    min_available = replicas_of(d) - max_unavailable(d)
    available = sum_status(all_rss, "availableReplicas")
    if available <= min_available:
        return 0
    total, budget = 0, available - min_available
    for rs in sort_by_creation_timestamp(old_rss):
        if total >= budget:
            break
        if replicas_of(rs) == 0:
            continue
        count = min(replicas_of(rs), budget - total)
        scale_replica_set_and_record_event(dc, rs, replicas_of(rs) - count, d)
        total += count
    return total
