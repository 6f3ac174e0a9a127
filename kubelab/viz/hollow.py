"""Stand-in kubelets for hollow nodes: make pods Running and Ready as a kubelet would report.

A Cluster started without kubelets registers its nodes as *hollow nodes* (kubemark's word):
Ready, but nothing runs on them, so a bound pod stays Pending forever and a deleted one stays
Terminating. That is fine for watching the scheduler, not for a rolling update, which waits
for new pods to become available. mark_pods_ready() does, in one call, what each kubelet
would write through the API: status Running with Ready conditions for bound pods, and the
final delete (grace period 0) for pods being deleted. keep_pods_ready() repeats it on the
clock. When no scheduler runs it also binds pending pods, spreading them over the nodes.

Why here: it is a view-side helper, like the widgets: it acts on a Cluster from outside, with
the administrator's client, exactly through the API. It is not a component and never runs in
a Cluster unless a notebook or test calls it. With real kubelets (issue 7), do not use it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import rfc3339

__all__ = ["keep_pods_ready", "mark_pods_ready"]

def _ready(pod: Object) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or ())


def _bind_pending(cluster: Any, pods: list[Object]) -> None:
    """A trivial stand-in scheduler: each pending pod to the Ready, schedulable node with the
    fewest pods (ties: by name)."""
    nodes = [n for n in cluster.client.list("nodes")["items"]
             if not (n.get("spec") or {}).get("unschedulable") and
             any(c.get("type") == "Ready" and c.get("status") == "True"
                 for c in (n.get("status") or {}).get("conditions") or ())]
    if not nodes:
        return
    load = {n["metadata"]["name"]: 0 for n in nodes}
    for pod in pods:
        name = (pod.get("spec") or {}).get("nodeName")
        if name in load:
            load[name] += 1
    for pod in pods:
        if (pod.get("spec") or {}).get("nodeName") or pod["metadata"].get("deletionTimestamp"):
            continue
        target = min(load, key=lambda n: (load[n], n))
        try:
            cluster.client.bind(pod, target)
        except ApiError:
            continue  # bound meanwhile, or gone
        load[target] += 1


def _running_status(pod: Object, now: float, ip: str) -> Object:
    stamp = rfc3339(now)
    status = dict(pod.get("status") or {})
    conditions = [c for c in status.get("conditions") or ()
                  if c.get("type") not in ("Initialized", "Ready", "ContainersReady",
                                           "PodReadyToStartContainers")]
    conditions += [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": stamp}
                   for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")]
    containers = (pod.get("spec") or {}).get("containers") or []
    status.update(phase="Running", conditions=conditions, hostIP=status.get("hostIP", ""),
                  podIP=status.get("podIP") or ip, startTime=status.get("startTime") or stamp,
                  containerStatuses=[{"name": c.get("name", ""), "image": c.get("image", ""),
                                      "imageID": "", "ready": True, "started": True, "restartCount": 0,
                                      "state": {"running": {"startedAt": stamp}}}
                                     for c in containers])
    return status


def mark_pods_ready(cluster: Any, namespace: str | None = None, label_selector: str = "") -> int:
    """One round of the hollow kubelets' work; returns how many pods it changed."""
    client = cluster.client
    pods = client.list("pods", namespace or "", label_selector=label_selector)["items"]
    if "scheduler" not in cluster.components and \
            any(not (p.get("spec") or {}).get("nodeName") for p in pods):
        _bind_pending(cluster, pods)
        pods = client.list("pods", namespace or "", label_selector=label_selector)["items"]
    node_index = {name: i for i, name in enumerate(cluster.node_names)}
    changed = 0
    for n, pod in enumerate(pods):
        meta, node = pod["metadata"], (pod.get("spec") or {}).get("nodeName")
        if not node:
            continue
        try:
            if meta.get("deletionTimestamp"):
                # The kubelet has stopped the containers: the final delete removes the pod.
                client.delete("pods", meta["name"], meta.get("namespace", "default"),
                              grace_period_seconds=0)
                changed += 1
            elif not _ready(pod) and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
                pod["status"] = _running_status(pod, cluster.clock.now,
                                                f"10.244.{node_index.get(node, 0)}.{n % 250 + 2}")
                client.update_status(pod)
                changed += 1
        except ApiError:
            continue  # changed or deleted meanwhile: the next round sees it
    return changed


def keep_pods_ready(cluster: Any, every: float = 1.0, namespace: str | None = None) -> Callable[[], None]:
    """Run mark_pods_ready every `every` virtual seconds (a background loop: run_until_idle
    does not wait for it). Returns a function that stops the loop."""
    state = {"timer": None, "stopped": False}

    def tick() -> None:
        if state["stopped"]:
            return
        mark_pods_ready(cluster, namespace)
        state["timer"] = cluster.clock.call_later(every, tick, background=True)

    state["timer"] = cluster.clock.call_later(every, tick, background=True)

    def stop() -> None:
        state["stopped"] = True
        timer = state["timer"]
        if timer is not None:
            timer.cancel()  # type: ignore[attr-defined]
    return stop
