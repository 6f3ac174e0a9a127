# Generated from solutions/ex05_controllers.py by `kubelab release`. Do the exercises in this file, then
# check them with `kubelab grade` (see the README).
# release-digest: c10d990395b7db2b
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
    raise NotImplementedError("exercise 5.1: ReplicaSet reconcile")


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
    raise NotImplementedError("exercise 5.2: One rolling-update step")
