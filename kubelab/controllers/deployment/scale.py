"""Scaling ReplicaSets on behalf of a Deployment (kubernetes/kubernetes
pkg/controller/deployment/sync.go: scale, scaleReplicaSetAndRecordEvent, scaleReplicaSet).

Every change of a ReplicaSet's size goes through scale_replica_set, which also records the
Deployment's event `Scaled up replica set web-5d4f8 from 0 to 3`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubelab.api import Object
from kubelab.api.meta import deep_copy
from kubelab.client.events import NORMAL
from kubelab.controllers.deployment.replicas import (
    get_proportion,
    is_rolling_update,
    is_saturated,
    max_surge,
    replicas_of,
)
from kubelab.controllers.deployment.util import set_replicas_annotations
from kubelab.controllers.pod_ranking import (
    filter_active_replica_sets,
    sort_by_creation_timestamp,
    sort_by_size_newer,
    sort_by_size_older,
)

if TYPE_CHECKING:
    from kubelab.controllers.deployment.controller import DeploymentController

__all__ = ["scale", "scale_replica_set", "scale_replica_set_and_record_event"]

def scale(dc: DeploymentController, d: Object, new_rs: Object | None, old_rss: list[Object]) -> None:
    """Scale the ReplicaSets to spec.replicas: one active ReplicaSet takes it all; during a
    rollout the change is shared in proportion to each ReplicaSet's size."""
    replicas = replicas_of(d)
    active = filter_active_replica_sets([*old_rss, new_rs])
    if len(active) <= 1:  # FindActiveOrLatest
        target = active[0] if active else (new_rs if new_rs is not None else
                                           (sort_by_creation_timestamp(old_rss)[-1] if old_rss else None))
        if target is not None and replicas_of(target) != replicas:
            scale_replica_set_and_record_event(dc, target, replicas, d)
        return
    if is_saturated(d, new_rs):
        for old in filter_active_replica_sets(list(old_rss)):
            scale_replica_set_and_record_event(dc, old, 0, d)
        return
    if not is_rolling_update(d):
        return
    allowed = replicas + max_surge(d) if replicas > 0 else 0
    to_add = allowed - sum(replicas_of(rs) for rs in active)
    operation = ""
    if to_add > 0:
        active, operation = sort_by_size_newer(active), "up"
    elif to_add < 0:
        active, operation = sort_by_size_older(active), "down"
    added = 0
    sizes = {}
    for rs in active:
        if to_add != 0:
            proportion = get_proportion(rs, d, to_add, added)
            sizes[rs["metadata"]["name"]] = replicas_of(rs) + proportion
            added += proportion
        else:
            sizes[rs["metadata"]["name"]] = replicas_of(rs)
    for i, rs in enumerate(active):
        name = rs["metadata"]["name"]
        if i == 0 and to_add != 0:  # leftovers go to the largest ReplicaSet
            sizes[name] = max(0, sizes[name] + to_add - added)
        scale_replica_set(dc, rs, sizes[name], d, operation)


def scale_replica_set_and_record_event(dc: DeploymentController, rs: Object, new_scale: int,
                                       d: Object) -> tuple[bool, Object]:
    if replicas_of(rs) == new_scale:
        return False, rs
    return scale_replica_set(dc, rs, new_scale, d, "up" if replicas_of(rs) < new_scale else "down")


def scale_replica_set(dc: DeploymentController, rs: Object, new_scale: int, d: Object,
                      operation: str) -> tuple[bool, Object]:
    """Write spec.replicas (and the desired/max-replicas annotations) with an update that
    carries the cached resourceVersion: a stale cache gets 409 and the sync is retried."""
    size_changes = replicas_of(rs) != new_scale
    copy = deep_copy(rs)
    annotations_change = set_replicas_annotations(copy, replicas_of(d), replicas_of(d) + max_surge(d))
    if not (size_changes or annotations_change):
        return False, rs
    old_scale = replicas_of(rs)
    copy["spec"]["replicas"] = new_scale
    updated = dc.client.update(copy)
    if size_changes:
        dc.recorder.event(d, NORMAL, "ScalingReplicaSet", f"Scaled {operation} replica set "
                          f"{updated['metadata']['name']} from {old_scale} to {new_scale}")
    return size_changes, updated
