"""Exercises for notebook 05 · Controllers: ReplicaSet, Deployment, garbage collector.

The grader runs your code as part of a real kube-controller-manager: for 5.1 kubelab's own
ReplicaSet controller is removed and a controller loop calls your sync function with the key of
each ReplicaSet that may need work; for 5.2 the Deployment controller asks your function what
one step of a rolling update should do, and applies it in a cluster whose kubelets run the pods.

    kubelab grade 5                                          # both exercises
    from kubelab.grading import grade; grade("5.1")

Do not import kubelab.controllers here: writing them is the exercise.
"""

from __future__ import annotations

import math
from typing import Any

from kubelab.api.errors import ApiError
from kubelab.api.meta import deep_copy
from kubelab.client.client import Client
from kubelab.client.listers import GenericLister


def sync_replica_set(key: str, client: Client, rs_lister: GenericLister, pod_lister: GenericLister) -> None:
    """Exercise 5.1: ReplicaSet reconcile.

    Notebook 05_controllers, section "Delete a pod, it comes back". Hard, 10 points.

    The sync_handler of a ReplicaSet controller (pkg/controller/replicaset/replica_set.go,
    syncReplicaSet and manageReplicas), called with a key "namespace/name" whenever the
    ReplicaSet or one of its pods changed, or when the informers relisted. Level-triggered:
    it never learns *what* changed, so it must look at everything, every time.

    - Read the ReplicaSet from rs_lister.by_namespace(ns).get(name); if that raises ApiError
      404 (NotFound), it was deleted: there is nothing to do.
    - Its pods: those of pod_lister.by_namespace(ns).list() that it controls (an
      ownerReference with controller: true and its metadata.uid) and that are active (no
      metadata.deletionTimestamp, status.phase not Succeeded or Failed).
    - Fewer than spec.replicas (default 1): create the difference, each
      {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "<rs name>-",
      "namespace": ns, "labels": <template labels>, "ownerReferences": [{"apiVersion":
      "apps/v1", "kind": "ReplicaSet", "name": <rs name>, "uid": <rs uid>, "controller": True,
      "blockOwnerDeletion": True}]}, "spec": <the template's spec>}.
    - More: delete the surplus (client.delete("pods", name, ns); a 404 is fine: it is gone).
      Which ones is yours to choose (upstream ranks them: unscheduled and not-ready first).
    - If status.replicas differs from the number of active pods you counted, write it:
      client.update_status on a copy of the ReplicaSet with status.replicas set (and
      status.observedGeneration = metadata.generation).
    Objects from a lister are shared with the cache: copy before you change one (deep_copy).
    Let other ApiErrors propagate: the controller retries the key with back-off.
    """
    ### BEGIN SOLUTION
    namespace, _, name = key.partition("/")
    try:
        rs = rs_lister.by_namespace(namespace).get(name)
    except ApiError as err:
        if err.code == 404:
            return
        raise
    uid = rs["metadata"]["uid"]
    pods = [p for p in pod_lister.by_namespace(namespace).list() if _controlled_by(p, uid) and _active(p)]
    diff = int(rs["spec"].get("replicas", 1)) - len(pods)
    template = rs["spec"].get("template") or {}
    for _ in range(max(diff, 0)):
        client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "generateName": f"{name}-", "namespace": namespace,
            "labels": dict((template.get("metadata") or {}).get("labels") or {}),
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": name, "uid": uid,
                                 "controller": True, "blockOwnerDeletion": True}]},
            "spec": deep_copy(template.get("spec") or {})})
    surplus = sorted(pods, key=lambda p: (bool((p.get("spec") or {}).get("nodeName")),
                                          p["metadata"]["name"]))[:max(-diff, 0)]
    for pod in surplus:
        try:
            client.delete("pods", pod["metadata"]["name"], namespace)
        except ApiError as err:
            if err.code != 404:
                raise
    if (rs.get("status") or {}).get("replicas") != len(pods):
        fresh = deep_copy(rs)
        fresh["status"] = {**(rs.get("status") or {}), "replicas": len(pods),
                           "observedGeneration": rs["metadata"].get("generation", 0)}
        client.update_status(fresh)
    ### END SOLUTION


### BEGIN SOLUTION
def _controlled_by(pod: dict[str, Any], uid: str) -> bool:
    return any(ref.get("controller") and ref.get("uid") == uid
               for ref in pod["metadata"].get("ownerReferences") or [])


def _active(pod: dict[str, Any]) -> bool:
    return not pod["metadata"].get("deletionTimestamp") and \
        (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
### END SOLUTION


def rolling_update_step(deployment: dict[str, Any], new_rs: dict[str, Any],
                        old_rss: list[dict[str, Any]]) -> dict[str, int]:
    """Exercise 5.2: One rolling-update step.

    Notebook 05_controllers, section "A rolling update, step by step". Hard, 10 points.

    What one sync of a RollingUpdate Deployment decides (pkg/controller/deployment/rolling.go
    rolloutRolling, reconcileNewReplicaSet and reconcileOldReplicaSets), without the API
    calls: return {ReplicaSet name: its new spec.replicas}; ReplicaSets left out keep theirs.
    old_rss holds the old ReplicaSets that still have replicas.

    - replicas = deployment.spec.replicas. maxSurge and maxUnavailable come from
      spec.strategy.rollingUpdate (the API server fills in "25%" for each when left out): an
      int, or a percentage of replicas;
      surge rounds up, unavailable rounds down; if both come out 0, maxUnavailable is 1
      (ResolveFenceposts). maxUnavailable is at most replicas.
    - 1. Scale the new ReplicaSet: above replicas -> replicas. Below: total = the spec.replicas
      of new_rs and old_rss together; if total < replicas + maxSurge it grows by
      min(replicas + maxSurge - total, replicas - its replicas). If this changed it, the step
      is over: return.
    - 2. Otherwise scale old ones down (if any has replicas): minAvailable = replicas -
      maxUnavailable; newUnavailable = new_rs spec.replicas - status.availableReplicas;
      maxScaledDown = total - minAvailable - newUnavailable; nothing if that is <= 0.
      a. Unhealthy first: old ReplicaSets oldest first (metadata.creationTimestamp, then
         name), each shrinks by its unavailable pods (spec.replicas - status.availableReplicas),
         until maxScaledDown pods in total were removed.
      b. Then: budget = (status.availableReplicas summed over new_rs and old_rss) -
         minAvailable; if > 0, old ReplicaSets oldest first shrink (from what a. left) until
         `budget` pods in total were removed.
    """
    ### BEGIN SOLUTION
    spec = deployment.get("spec") or {}
    replicas = int(spec.get("replicas", 1))
    rolling = (spec.get("strategy") or {}).get("rollingUpdate") or {}
    surge = _scaled(rolling.get("maxSurge", "25%"), replicas, True)
    unavailable = _scaled(rolling.get("maxUnavailable", "25%"), replicas, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    unavailable = min(unavailable, replicas)
    new_name = new_rs["metadata"]["name"]
    result = {rs["metadata"]["name"]: _replicas(rs) for rs in [new_rs, *old_rss]}
    total = sum(result.values())
    if result[new_name] > replicas:
        result[new_name] = replicas
        return result
    if result[new_name] < replicas and total < replicas + surge:
        result[new_name] += min(replicas + surge - total, replicas - result[new_name])
        return result
    if not any(result[rs["metadata"]["name"]] for rs in old_rss):
        return result
    min_available = replicas - unavailable
    new_unavailable = result[new_name] - _available(new_rs)
    max_scaled_down = total - min_available - new_unavailable
    if max_scaled_down <= 0:
        return result
    oldest = sorted(old_rss, key=lambda rs: (rs["metadata"].get("creationTimestamp", ""),
                                             rs["metadata"]["name"]))
    cleaned = 0
    for rs in oldest:
        name = rs["metadata"]["name"]
        if cleaned >= max_scaled_down:
            break
        unhealthy = result[name] - _available(rs)
        if result[name] == 0 or unhealthy <= 0:
            continue
        count = min(max_scaled_down - cleaned, unhealthy)
        result[name] -= count
        cleaned += count
    budget = sum(_available(rs) for rs in [new_rs, *old_rss]) - min_available
    removed = 0
    for rs in oldest:
        name = rs["metadata"]["name"]
        if removed >= budget:
            break
        count = min(result[name], budget - removed)
        result[name] -= count
        removed += count
    return result
    ### END SOLUTION


### BEGIN SOLUTION
def _scaled(value: Any, total: int, round_up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        exact = int(value[:-1]) * total / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    return int(value)


def _replicas(rs: dict[str, Any]) -> int:
    return int((rs.get("spec") or {}).get("replicas", 1))


def _available(rs: dict[str, Any]) -> int:
    return int((rs.get("status") or {}).get("availableReplicas", 0))
### END SOLUTION
