"""ReplicaSet status (kubernetes/kubernetes pkg/controller/replicaset/replica_set_utils.go).

status.replicas counts the active pods the ReplicaSet owns; fullyLabeledReplicas those whose
labels include all of the template's; readyReplicas those Ready; availableReplicas those Ready
for at least minReadySeconds. observedGeneration says which spec these numbers answer.
"""

from __future__ import annotations

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.labels import selector_from_set
from kubelab.api.meta import deep_copy, rfc3339
from kubelab.client.client import Client
from kubelab.controllers.controller_utils import is_pod_available, is_pod_ready

__all__ = ["calculate_status", "update_replica_set_status"]

def calculate_status(rs: Object, filtered_pods: list[Object], manage_replicas_error: ApiError | None,
                     now: float) -> Object:
    """calculateStatus: counts over the claimed active pods, and the ReplicaFailure condition."""
    new_status = deep_copy(rs.get("status") or {})
    min_ready = int(rs["spec"].get("minReadySeconds") or 0)
    template_labels = ((rs["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {}
    template_label = selector_from_set(template_labels)
    fully_labeled = ready = available = 0
    for pod in filtered_pods:
        if template_label.matches(pod["metadata"].get("labels") or {}):
            fully_labeled += 1
        if is_pod_ready(pod):
            ready += 1
            if is_pod_available(pod, min_ready, now):
                available += 1
    conditions = list(new_status.get("conditions") or ())
    failure = next((c for c in conditions if c.get("type") == "ReplicaFailure"), None)
    if manage_replicas_error is not None and failure is None:
        diff = len(filtered_pods) - int(rs["spec"].get("replicas", 1))
        reason = "FailedCreate" if diff < 0 else "FailedDelete" if diff > 0 else ""
        conditions.append({"type": "ReplicaFailure", "status": "True",
                           "lastTransitionTime": rfc3339(now), "reason": reason,
                           "message": manage_replicas_error.message})
    elif manage_replicas_error is None and failure is not None:
        conditions.remove(failure)
    if conditions:
        new_status["conditions"] = conditions
    else:
        new_status.pop("conditions", None)
    new_status.update(replicas=len(filtered_pods), fullyLabeledReplicas=fully_labeled,
                      readyReplicas=ready, availableReplicas=available)
    return new_status


def update_replica_set_status(client: Client, rs: Object, status: Object) -> Object:
    """updateReplicaSetStatus: nothing to write in the steady state; otherwise one update,
    and on failure one fresh GET and one retry (statusUpdateRetries = 1)."""
    old = rs.get("status") or {}
    generation = rs["metadata"].get("generation", 0)
    fields = ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas")
    if all(old.get(f, 0) == status.get(f, 0) for f in fields) and \
            old.get("observedGeneration") == generation and \
            old.get("conditions") == status.get("conditions"):
        return rs
    status["observedGeneration"] = generation
    current = deep_copy(rs)
    for attempt in range(2):
        current["status"] = status
        try:
            return client.update_status(current)
        except ApiError:
            if attempt == 1:
                raise
            meta = rs["metadata"]
            current = client.get(client.resource_for(rs).resource, meta["name"],
                                 meta.get("namespace", "default"))
    return rs  # unreachable: the loop returns or raises
