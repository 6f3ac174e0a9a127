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
    ### BEGIN SOLUTION
    def get(what: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = json.loads(c.kubectl(f"get {what} -o json"))["items"]
        return items

    for node in get("nodes"):
        ready = next((x for x in node["status"].get("conditions", []) if x["type"] == "Ready"), {})
        if ready.get("status") != "True":
            return "NodeNotReady", node["metadata"]["name"]

    events = get("events -A")
    pods = get("pods -A")
    for pod in pods:
        name = pod["metadata"]["name"]
        if pod["status"].get("phase") == "Pending" and not pod["spec"].get("nodeName"):
            said = " ".join(e.get("message", "") for e in events
                            if e["involvedObject"].get("name") == name and e["reason"] == "FailedScheduling")
            if "Insufficient cpu" in said:
                return "InsufficientCPU", name
            if "PersistentVolumeClaim" in said:
                return "UnboundPVC", name
            # last: every message counts the control-plane node's taint too, which no workload
            # tolerates ("1 node(s) had untolerated taint(s), 2 Insufficient cpu")
            if "untolerated taint" in said:
                return "UntoleratedTaint", name
        for status in pod["status"].get("containerStatuses") or []:
            waiting = (status.get("state") or {}).get("waiting") or {}
            last = (status.get("lastState") or {}).get("terminated") or {}
            reason = waiting.get("reason", "")
            if reason in ("ErrImagePull", "ImagePullBackOff"):
                return "ImagePullBackOff", name
            if reason == "CreateContainerConfigError":
                return reason, name
            if last.get("reason") == "OOMKilled" or (status.get("state") or {}).get(
                    "terminated", {}).get("reason") == "OOMKilled":
                return "OOMKilled", name
            if reason == "CrashLoopBackOff":
                return reason, name

    owners = {rs["metadata"]["name"]: (rs["metadata"].get("ownerReferences") or [{}])[0].get("name", "")
              for rs in get("replicasets -A")}
    for e in events:
        if e["reason"] == "FailedCreate" and e["involvedObject"].get("kind") == "ReplicaSet":
            return "FailedCreate", owners.get(e["involvedObject"]["name"], "")
    for pod in pods:
        unready = [s for s in pod["status"].get("containerStatuses") or []
                   if not s.get("ready") and "running" in (s.get("state") or {})]
        if unready:
            rs = next((o["name"] for o in pod["metadata"].get("ownerReferences") or []
                       if o["kind"] == "ReplicaSet"), "")
            return "ReadinessProbe", owners.get(rs, pod["metadata"]["name"])
    return "", ""
    ### END SOLUTION
