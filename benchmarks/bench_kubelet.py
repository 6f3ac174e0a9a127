"""The kubelet: the 15-hour ImagePullBackOff replay, and density to every pod Running.

- replay: one node, one pod whose image pull gets 401 for 15 hours, then works; wall seconds
  for the whole story (15 h 10 min of virtual time: ~185 pulls, ~5,460 Lease renewals). Also
  reported: what an idle node's 15 hours of heartbeats alone cost, for scale.
- density: Deployments with nodes x pods-per-node replicas through the whole control plane
  (controller manager, scheduler, one kubelet per node); wall seconds from the apply to every
  pod Running, peak memory, and how many simulated seconds the run covers per wall second
  (the simulated seconds from the apply to the last pod Running, over the wall seconds; the
  run polls every 5 simulated seconds, so it ends on a multiple of 5), and the same simulated
  span over the process's own CPU seconds: on a shared machine a process waits for a core, and
  that row says what one idle core gives. Run in a child process so that the memory figure is
  its own.
  The issue's 1,000 nodes x 30 pods takes minutes; KUBELAB_BENCH_QUICK=1 runs 50 x 30 instead
  (the same rows, a twentieth of the work, not the figure the issue names). Progress (simulated
  time, pods Running) goes to the terminal (kubelab/widgets/progress.py).

    python -m benchmarks kubelet                      # the figures
    python -m benchmarks.bench_kubelet 100 30         # one density run, prints JSON (progress on stderr)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

from benchmarks.common import Figure, peak_memory_mib

FIFTEEN_HOURS = 15 * 3600
IMAGE = "registry.example.com/shop/api:2.3"


def replay(rounds: int = 2) -> float:
    """Best wall seconds over `rounds` replays of the 15-hour story (trace off)."""
    from kubelab.cluster import Cluster

    best = float("inf")
    for _ in range(rounds):
        c = Cluster(nodes=1, components=["kubelet"], seed=6)
        c.trace.enabled = False
        c.run(30)
        start = time.perf_counter()
        c.faults.break_registry("registry.example.com/shop/api", "unauthorized")
        c.faults.at(c.clock.now + FIFTEEN_HOURS, "fix_registry")
        c.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "api"},
                 "spec": {"nodeName": "node-1", "containers": [{"name": "api", "image": IMAGE}]}})
        c.run(FIFTEEN_HOURS + 600)
        best = min(best, time.perf_counter() - start)
        assert c.get("pods", "api")["status"]["phase"] == "Running"
    return best


def idle_heartbeats(rounds: int = 2) -> float:
    from kubelab.cluster import Cluster

    best = float("inf")
    for _ in range(rounds):
        c = Cluster(nodes=1, components=["kubelet"])
        c.trace.enabled = False
        start = time.perf_counter()
        c.run(FIFTEEN_HOURS + 600)
        best = min(best, time.perf_counter() - start)
    return best


def density(nodes: int, pods_per_node: int, deployments: int = 30) -> dict[str, Any]:
    """One run in this process: seconds from apply to every pod Running."""
    from kubelab.cluster import COMPONENTS, Cluster
    from kubelab.widgets.progress import RunProgress

    components = [n for n in ("controller-manager", "scheduler", "kubelet") if n in COMPONENTS]
    c = Cluster(nodes=nodes, components=components)
    c.trace.enabled = False
    c.run(5)  # the kubelets register their nodes
    total = nodes * pods_per_node
    running: set[str] = set()

    def on_event(event: dict[str, Any]) -> None:
        obj = event.get("object") or {}
        uid = (obj.get("metadata") or {}).get("uid", "")
        if event.get("type") == "DELETED":
            running.discard(uid)
        elif (obj.get("status") or {}).get("phase") == "Running":
            running.add(uid)
    c.client.watch("pods", on_event)
    per = [total // deployments + (1 if i < total % deployments else 0) for i in range(deployments)]
    start, virtual_start, cpu = time.perf_counter(), c.clock.now, time.process_time()
    progress = RunProgress(total, f"{nodes:,} nodes x {pods_per_node} (full kubelets)")
    for i, replicas in enumerate(per):
        labels = {"app": f"density-{i}"}
        c.apply({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"density-{i}"},
                 "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                          "template": {"metadata": {"labels": labels}, "spec": {"containers": [
                              {"name": "pause", "image": "registry.k8s.io/pause:3.10",
                               "resources": {"requests": {"cpu": "10m", "memory": "10Mi"}}}]}}}})
    while len(running) < total and c.clock.now < 3600:
        c.run(5.0)
        progress.update(c.clock.now - virtual_start, len(running))
    progress.close()
    return {"seconds": time.perf_counter() - start, "running": len(running), "total": total,
            "virtual": c.clock.now, "simulated": c.clock.now - virtual_start,
            "cpu": time.process_time() - cpu, "max_rss_mib": peak_memory_mib()}


def _child(*args: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "benchmarks.bench_kubelet", *args],
                         stdout=subprocess.PIPE, text=True, check=True)  # progress: this terminal
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def run() -> list[Figure]:
    figures = [Figure("kubelet: 15-hour ImagePullBackOff replay", replay(), "s", "<= 1"),
               Figure("kubelet: an idle node's 15 h of heartbeats", idle_heartbeats(), "s")]
    shapes = [(50, 30)] if os.environ.get("KUBELAB_BENCH_QUICK") else [(1000, 30)]
    for nodes, pods in shapes:
        r = _child(str(nodes), str(pods))
        name = f"density {nodes} nodes x {pods} pods to Running"
        if r["running"] < r["total"]:
            name += f" (only {r['running']:,} of {r['total']:,} Running)"
        figures.append(Figure(name, r["seconds"], "s", "<= 60" if nodes == 1000 else ""))
        figures.append(Figure(f"density {nodes} x {pods} peak memory", r["max_rss_mib"], "MiB",
                              "<= 2048" if nodes == 1000 else ""))
        # The figure: the simulation keeps up with the cluster it simulates, at
        # upstream's default client-side limits (kubelab/cluster/components.py).
        figures.append(Figure(f"density {nodes} x {pods} simulated seconds per wall second "
                              "(default client limits)", r["simulated"] / r["seconds"], "sim s / s",
                              ">= 1" if nodes == 1000 else ""))
        # On a shared machine the process waits for a core; its own CPU seconds say what one
        # idle core would give (the same run, the same simulated span).
        figures.append(Figure(f"density {nodes} x {pods} simulated seconds per CPU second",
                              r["simulated"] / r["cpu"], "sim s / CPU s"))
    return figures


if __name__ == "__main__":
    print(json.dumps(density(int(sys.argv[1]), int(sys.argv[2]))))
