# Generated from solutions/ex06b_troubleshooting.py by `kubelab release`. Do the exercises in this file, then
# check them with `kubelab grade` (see the README).
# release-digest: da8388a78794f643
"""Exercises for notebook 06b · Troubleshooting: reading a broken cluster.

One function, the maintainer's triage as code. The grader builds clusters you have not seen
(seeded namespaces and names, healthy pods and Services beside the broken one, a container that
crashed once and came back, a scheduler that restarted) with exactly one cause of trouble, hands
each to your diagnose(c), and compares your answer with the cause it made.

    kubelab grade 6.3
    from kubelab.grading import grade; grade("6.3")

Read the cluster the way you would with a terminal: c.kubectl("get pods -A -o json") and
friends (get, describe, events, logs, exec), or c.client.list(...).
"""

from __future__ import annotations

import json
from typing import Any

CAUSES = {
    "InsufficientCPU": "a pod is Pending: no node has the cpu it requests",
    "UntoleratedTaint": "a pod is Pending: every node has a taint the pod does not tolerate",
    "UnboundPVC": "a pod is Pending: its PersistentVolumeClaim is not bound",
    "ImagePullBackOff": "a container's image cannot be pulled (ErrImagePull, ImagePullBackOff)",
    "CrashLoopBackOff": "a container's command exits with an error, again and again",
    "CreateContainerConfigError": "a container refers to a ConfigMap key that does not exist",
    "OOMKilled": "a container is killed for using more memory than its limit",
    "ReadinessProbe": "a Deployment's pods run but never turn Ready (its Service has no endpoints)",
    "NodeNotReady": "a node's kubelet stopped reporting",
    "FailedCreate": "a Deployment's ReplicaSet cannot create pods (admission refuses them)",
}


def diagnose(c: Any) -> tuple[str, str]:
    """Exercise 6.3: Diagnose a broken cluster.

    Notebook 06b_troubleshooting, section "8. Your turn: diagnose a cluster you have not seen".
    Medium, 10 points.

    c has two things: c.kubectl(command) -> str, kubectl's printed text (as `kubectl ...` prints
    it, errors included), and c.client (list, get, ...). Return (cause, name): cause is one of
    CAUSES' keys, name the object to fix:
    - the pod, for the three Pending causes and the four container causes;
    - the node, for NodeNotReady;
    - the Deployment, for ReadinessProbe and FailedCreate.
    Exactly one thing is broken; everything else in the cluster is healthy (a container that
    restarted once and runs again is healthy). Follow the reading order of the notebook: nodes,
    then pods (phase, events, container states), then the workloads that own them.
    """
    raise NotImplementedError("exercise 6.3: Diagnose a broken cluster")
