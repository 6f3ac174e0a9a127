"""ReplicaSet status (kubernetes/kubernetes pkg/controller/replicaset/replica_set_utils.go).

status.replicas counts the active pods the ReplicaSet owns; fullyLabeledReplicas those whose
labels include all of the template's; readyReplicas those Ready; availableReplicas those Ready
for at least minReadySeconds. observedGeneration says which spec these numbers answer.
"""

from __future__ import annotations

from typing import Any

from kubelab.api.errors import ApiError
from kubelab.api.labels import selector_from_set
from kubelab.api.meta import deep_copy, rfc3339
from kubelab.client.client import Client
from kubelab.controllers.controller_utils import is_pod_available, is_pod_ready

__all__ = ["calculate_status", "update_replica_set_status"]

Object = dict[str, Any]


def calculate_status(rs: Object, pods: list[Object], manage_error: ApiError | None,
                     now: float) -> Object:
    """calculateStatus: counts over the claimed active pods, and the ReplicaFailure condition."""
    status = deep_copy(rs.get("status") or {})
    template_selector = selector_from_set((rs["spec"].get("template") or {}).get("metadata", {})
                                          .get("labels"))
    min_ready = int(rs["spec"].get("minReadySeconds") or 0)
    labeled = ready = available = 0
    for pod in pods:
        if template_selector.matches(pod["metadata"].get("labels") or {}):
            labeled += 1
        if is_pod_ready(pod):
            ready += 1
            if not min_ready or is_pod_available(pod, min_ready, now):  # ready is available then
                available += 1
    conditions = [c for c in status.get("conditions") or () if c.get("type") != "ReplicaFailure"]
    failure = next((c for c in status.get("conditions") or () if c.get("type") == "ReplicaFailure"),
                   None)
    if manage_error is not None:
        if failure is None:
            diff = len(pods) - int(rs["spec"].get("replicas", 1))
            reason = "FailedCreate" if diff < 0 else "FailedDelete" if diff > 0 else ""
            failure = {"type": "ReplicaFailure", "status": "True", "lastTransitionTime": rfc3339(now),
                       "reason": reason, "message": manage_error.message}
        conditions.append(failure)
    if conditions:
        status["conditions"] = conditions
    else:
        status.pop("conditions", None)
    status.update(replicas=len(pods), fullyLabeledReplicas=labeled, readyReplicas=ready,
                  availableReplicas=available)
    return status


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
            current = client.get("replicasets", meta["name"], meta.get("namespace", "default"))
    return rs  # unreachable: the loop returns or raises
