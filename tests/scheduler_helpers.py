"""Builders for the scheduler tests: Kubernetes-shaped nodes and pods."""

from __future__ import annotations

from typing import Any


def make_node(name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110", *,
              labels: dict[str, str] | None = None, taints: list[dict[str, Any]] | None = None,
              images: list[tuple[str, int]] | None = None, unschedulable: bool = False) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {"taints": taints or [], "unschedulable": unschedulable},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
                   "images": [{"names": [n], "sizeBytes": s} for n, s in images or []]},
    }


def make_pod(name: str, cpu: str | None = "100m", memory: str | None = "128Mi", *,
             namespace: str = "default", labels: dict[str, str] | None = None, image: str = "nginx",
             node_name: str | None = None, **spec: Any) -> dict[str, Any]:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    pod: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}",
                     "labels": labels or {}},
        "spec": {"containers": [{"name": "c", "image": image, "resources": {"requests": requests}}], **spec},
    }
    if node_name:
        pod["spec"]["nodeName"] = node_name
    return pod
