"""Shared set-up for the controller tests: manifests, a cluster with the controller manager on
hollow nodes, and the stand-in kubelet (kubelab.viz.mark_pods_ready)."""

from __future__ import annotations

from typing import Any

from kubelab.cluster import Cluster
from kubelab.viz import mark_pods_ready

Object = dict[str, Any]


def deployment(name: str = "web", replicas: int = 3, image: str = "nginx:1.25", *,
               surge: int | str | None = None, unavailable: int | str | None = None,
               strategy: str = "RollingUpdate", min_ready: int = 0, namespace: str = "default",
               labels: dict[str, str] | None = None, **spec: Any) -> Object:
    labels = labels or {"app": name}
    strat: Object = {"type": strategy}
    if strategy == "RollingUpdate" and (surge is not None or unavailable is not None):
        strat["rollingUpdate"] = {k: v for k, v in (("maxSurge", surge), ("maxUnavailable", unavailable))
                                  if v is not None}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": replicas, "strategy": strat, "minReadySeconds": min_ready,
                     "selector": {"matchLabels": dict(labels)},
                     "template": {"metadata": {"labels": dict(labels)},
                                  "spec": {"containers": [{"name": "app", "image": image}]}},
                     **spec}}


def replica_set(name: str = "rs", replicas: int = 3, labels: dict[str, str] | None = None,
                namespace: str = "default", **spec: Any) -> Object:
    labels = labels or {"app": name}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                     "template": {"metadata": {"labels": dict(labels)},
                                  "spec": {"containers": [{"name": "app", "image": "nginx"}]}},
                     **spec}}


def pod(name: str, labels: dict[str, str], namespace: str = "default", **meta: Any) -> Object:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels), **meta},
            "spec": {"containers": [{"name": "app", "image": "nginx"}]}}


def cluster(nodes: int = 3, seed: int = 0) -> Cluster:
    """The controller manager alone, on hollow nodes: no scheduler, no kubelets. Pods are bound
    and made ready only by mark_pods_ready, so tests decide when pods become available."""
    return Cluster(nodes=nodes, seed=seed, components=["controller-manager"])


def settle(c: Cluster, seconds: float = 2.0, ready: bool = True, rounds: int = 1) -> None:
    """Let the controllers act, then (optionally) let the hollow kubelets report."""
    for _ in range(rounds):
        c.run(seconds)
        if ready:
            mark_pods_ready(c)
    c.run(seconds)


def active_pods(c: Cluster, selector: str = "", namespace: str = "default") -> list[Object]:
    return [p for p in c.get("pods", namespace=namespace, label_selector=selector)
            if not p["metadata"].get("deletionTimestamp")]


def ready(pod: Object) -> bool:
    return any(x.get("type") == "Ready" and x.get("status") == "True"
               for x in (pod.get("status") or {}).get("conditions") or ())


def events(c: Cluster, component: str | None = None, reason: str | None = None) -> list[str]:
    return [e["message"] for e in c.events()
            if (component is None or e["source"]["component"] == component)
            and (reason is None or e["reason"] == reason)]


def replica_sets(c: Cluster, namespace: str = "default") -> list[Object]:
    return sorted(c.get("replicasets", namespace=namespace),
                  key=lambda r: (r["metadata"]["creationTimestamp"], r["metadata"]["name"]))
