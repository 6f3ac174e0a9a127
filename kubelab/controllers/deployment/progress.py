"""Is the rollout getting anywhere? The Progressing condition (kubernetes/kubernetes
pkg/controller/deployment/progress.go).

Every rollout step that adds updated, ready or available pods, or removes old ones, renews
Progressing=True (reason ReplicaSetUpdated, a fresh lastUpdateTime). When all replicas are
updated and available the reason becomes NewReplicaSetAvailable. When nothing has moved for
progressDeadlineSeconds the condition turns False with ProgressDeadlineExceeded, and
`kubectl rollout status` gives up. Nothing is rolled back automatically.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubelab.api import Object
from kubelab.api.meta import deep_copy
from kubelab.controllers.controller_utils import seconds
from kubelab.controllers.deployment.replicas import (
    deployment_complete,
    deployment_progressing,
    deployment_timed_out,
    has_progress_deadline,
)
from kubelab.controllers.deployment.sync import calculate_status
from kubelab.controllers.deployment.util import get_condition, new_condition, remove_condition, set_condition

if TYPE_CHECKING:
    from kubelab.controllers.deployment.controller import DeploymentController

__all__ = ["sync_rollout_status"]

def sync_rollout_status(dc: DeploymentController, all_rss: list[Object | None],
                        new_rs: Object | None, d: Object) -> None:
    """syncRolloutStatus: status as sync.calculate_status, plus the Progressing condition."""
    status = calculate_status(all_rss, new_rs, d, dc.now)
    if not has_progress_deadline(d):
        remove_condition(status, "Progressing")
    current = get_condition(d.get("status") or {}, "Progressing")
    complete_before = status.get("replicas") == status.get("updatedReplicas") and \
        current is not None and current.get("reason") == "NewReplicaSetAvailable"
    new_name = new_rs["metadata"]["name"] if new_rs is not None else None
    subject = f'ReplicaSet "{new_name}"' if new_name else f'Deployment "{d["metadata"]["name"]}"'
    if has_progress_deadline(d) and not complete_before:
        if deployment_complete(d, status):
            set_condition(status, new_condition("Progressing", "True", "NewReplicaSetAvailable",
                                                f"{subject} has successfully progressed.", dc.now))
        elif deployment_progressing(d, status):
            condition = new_condition("Progressing", "True", "ReplicaSetUpdated",
                                      f"{subject} is progressing.", dc.now)
            # Unlike set_condition, renew lastUpdateTime even when the reason is the same:
            # that timestamp is what the progress deadline is measured from.
            if current is not None:
                if current.get("status") == "True":
                    condition["lastTransitionTime"] = current.get("lastTransitionTime")
                remove_condition(status, "Progressing")
            set_condition(status, condition)
        elif deployment_timed_out(d, status, dc.now):
            set_condition(status, new_condition("Progressing", "False", "ProgressDeadlineExceeded",
                                                f"{subject} has timed out progressing.", dc.now))
    failure = _replica_failure(all_rss, new_rs)
    if failure is not None:
        set_condition(status, failure)
    else:
        remove_condition(status, "ReplicaFailure")
    if d.get("status") == status:
        requeue_stuck_deployment(dc, d, status)
        return
    d["status"] = status
    dc.client.update_status(d)


def _replica_failure(all_rss: list[Object | None], new_rs: Object | None) -> Object | None:
    """getReplicaFailures: a ReplicaFailure of the new ReplicaSet (else of an old one),
    promoted to a Deployment condition."""
    ordered = [new_rs, *[rs for rs in all_rss if rs is not new_rs]]
    for rs in ordered:
        if rs is None:
            continue
        for c in (rs.get("status") or {}).get("conditions") or ():
            if c.get("type") == "ReplicaFailure":
                return {"type": "ReplicaFailure", "status": c.get("status"),
                        "lastUpdateTime": c.get("lastTransitionTime"),
                        "lastTransitionTime": c.get("lastTransitionTime"),
                        "reason": c.get("reason"), "message": c.get("message")}
    return None


def requeue_stuck_deployment(dc: DeploymentController, d: Object, status: Object) -> float:
    """No visible progress: look again when the deadline would pass, so a stuck rollout is
    reported even if no event ever arrives. Returns the delay (-1: nothing to check)."""
    current = get_condition(d.get("status") or {}, "Progressing")
    if not has_progress_deadline(d) or current is None:
        return -1.0
    if deployment_complete(d, status) or current.get("reason") == "ProgressDeadlineExceeded":
        return -1.0
    last = current.get("lastUpdateTime")
    if not last:
        return -1.0
    after = seconds(last) + int(d["spec"]["progressDeadlineSeconds"]) - dc.now
    if after < 1:
        dc.enqueue_rate_limited(deep_copy(d))
        return 0.0
    dc.enqueue_after(d, after + 1)
    return after
