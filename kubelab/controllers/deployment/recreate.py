"""Recreate: all old pods go, then all new pods come (kubernetes/kubernetes
pkg/controller/deployment/recreate.go).

Old ReplicaSets are scaled to zero; the new ReplicaSet is not even created until no old pod
is left running (a Pending, Running or Unknown pod counts; Succeeded and Failed do not). The
service is down in between: that is the price of never running two versions at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubelab.api import Object
from kubelab.controllers.deployment.progress import sync_rollout_status
from kubelab.controllers.deployment.replicas import deployment_complete, replicas_of, sum_status
from kubelab.controllers.deployment.scale import scale_replica_set_and_record_event
from kubelab.controllers.deployment.sync import cleanup_deployment, get_all_replica_sets_and_sync_revision
from kubelab.controllers.pod_ranking import filter_active_replica_sets

if TYPE_CHECKING:
    from kubelab.controllers.deployment.controller import DeploymentController

__all__ = ["old_pods_running", "rollout_recreate"]

def rollout_recreate(dc: DeploymentController, d: Object, rs_list: list[Object]) -> None:
    # Do not create the new ReplicaSet yet: that would scale up before scaling down.
    new_rs, old_rss = get_all_replica_sets_and_sync_revision(dc, d, rs_list, False)
    all_rss: list[Object | None] = [*old_rss, new_rs]
    scaled_down = False
    for rs in filter_active_replica_sets(list(old_rss)):
        scaled, _ = scale_replica_set_and_record_event(dc, rs, 0, d)
        scaled_down = scaled_down or scaled
    if scaled_down:
        sync_rollout_status(dc, all_rss, new_rs, d)
        return
    if old_pods_running(dc, new_rs, old_rss):
        sync_rollout_status(dc, all_rss, new_rs, d)  # wait: the last pod's deletion wakes us
        return
    if new_rs is None:
        new_rs, old_rss = get_all_replica_sets_and_sync_revision(dc, d, rs_list, True)
        all_rss = [*old_rss, new_rs]
    assert new_rs is not None
    scale_replica_set_and_record_event(dc, new_rs, replicas_of(d), d)
    if deployment_complete(d, d.get("status") or {}):
        cleanup_deployment(dc, old_rss, d)
    sync_rollout_status(dc, all_rss, new_rs, d)


def old_pods_running(dc: DeploymentController, new_rs: Object | None, old_rss: list[Object]) -> bool:
    """oldPodsRunning: an old ReplicaSet still reports pods, or one of its pods is not done."""
    if sum_status(list(old_rss), "replicas") > 0:
        return True
    new_uid = new_rs["metadata"]["uid"] if new_rs is not None else None
    for rs in old_rss:
        if rs["metadata"]["uid"] == new_uid:
            continue
        for pod in dc.pods_of(rs):
            if (pod.get("status") or {}).get("phase") not in ("Failed", "Succeeded"):
                return True
    return False
