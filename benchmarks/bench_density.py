"""Deployment-driven density: 1,000 nodes, 30 pods per node, through the whole control plane.

Like ClusterLoader2's density test: Deployments are applied, the Deployment controller makes
ReplicaSets, the ReplicaSet controller creates 30,000 pods (slow-start batches, 500 per sync),
the scheduler binds them. The figure is wall-clock seconds from the apply to the last pod
bound, and the process's peak memory (VmHWM). Hollow nodes (no kubelets); the trace is
off. The run happens in a child process so that its peak memory is its own.

It measures the control plane alone. The issue's figure, with a kubelet per node and every pod
Running, is bench_kubelet's density run: the issue asks for it once the kubelet exists, so the
targets (60 s, 2 GiB) are shown there, not here.

    python -m benchmarks density              # the figures
    python -m benchmarks.bench_density 100 30 [--no-scheduler]   # one run, prints JSON
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

from benchmarks.common import Figure, peak_memory_mib

NODES, PODS_PER_NODE = 1000, 30
DEPLOYMENTS = 30  # 30 Deployments of 1,000 replicas each


def _deployment(i: int, replicas: int) -> dict[str, Any]:
    labels = {"app": f"density-{i}"}
    resources = {"cpu": "10m", "memory": "10Mi"}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": f"density-{i}", "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "pause",
                                                           "image": "registry.k8s.io/pause:3.10",
                                                           "resources": {"requests": resources}}]}}}}


def density(nodes: int, pods_per_node: int, deployments: int = DEPLOYMENTS,
            scheduler: bool = True) -> dict[str, Any]:
    """One run in this process: seconds from apply to every pod bound (or, without the
    scheduler, created), and the process's peak memory."""
    from kubelab.cluster import COMPONENTS, Cluster

    scheduler = scheduler and "scheduler" in COMPONENTS
    components = ["controller-manager"] + (["scheduler"] if scheduler else [])
    c = Cluster(nodes=nodes, components=components)
    c.trace.enabled = False
    total = nodes * pods_per_node
    seen: set[str] = set()

    def on_event(event: dict[str, Any]) -> None:
        obj = event.get("object") or {}
        if event.get("type") in ("ADDED", "MODIFIED") and \
                (not scheduler or (obj.get("spec") or {}).get("nodeName")):
            seen.add(obj["metadata"]["uid"])
    c.client.watch("pods", on_event)
    per = [total // deployments + (1 if i < total % deployments else 0) for i in range(deployments)]
    start = time.perf_counter()
    for i, replicas in enumerate(per):
        c.apply(_deployment(i, replicas))
    while len(seen) < total:
        before = len(seen)
        c.run(5.0)
        if len(seen) == before and c.clock.peek() is None:
            break  # nothing left to do: it will never finish
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "pods": len(seen), "total": total, "virtual": c.clock.now,
            "counted": "bound" if scheduler else "created",
            "max_rss_mib": peak_memory_mib()}


def _child(*args: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "benchmarks.bench_density", *args],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def run() -> list[Figure]:
    # KUBELAB_BENCH_QUICK=1: 50 x 30, the same rows (issue 29: quick mode ran this at 1,000).
    nodes = 50 if os.environ.get("KUBELAB_BENCH_QUICK") else NODES
    full = _child(str(nodes), str(PODS_PER_NODE))
    label = (f"density {nodes} nodes x {PODS_PER_NODE} pods, hollow nodes: apply -> all pods "
             f"{full['counted']}")
    if full["pods"] < full["total"]:
        label += f" (only {full['pods']} of {full['total']})"
    alone = _child(str(nodes), str(PODS_PER_NODE), "--no-scheduler")
    return [Figure(label, full["seconds"], "s"),
            Figure("density, hollow nodes: peak memory", full["max_rss_mib"], "MiB"),
            Figure(f"controller manager alone: apply -> {alone['pods']} pods created",
                   alone["seconds"], "s")]


if __name__ == "__main__":
    numbers = [int(a) for a in sys.argv[1:] if a.isdigit()] or [NODES, PODS_PER_NODE]
    print(json.dumps(density(numbers[0], numbers[1], scheduler="--no-scheduler" not in sys.argv)))
