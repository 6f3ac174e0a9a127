"""Faithful costs (issue 29): client-side rate limits and syncs that take virtual time.

One hollow density run (Deployments of 100 replicas, every pod Running) per setting, all
started together as child processes, so that the ratios compare runs on the same machine load:

- "free": no client limiter, syncs cost nothing (what kubelab did before);
- "cost only": syncs cost DEFAULT_SYNC_COST (5 ms), no limiter;
- "upstream": the defaults: every component's client at its component config's qps/burst
  (kube-controller-manager 20/30, kube-scheduler and kubelets 50/100, kube-proxy 5/10) and 5 ms
  per sync;
- "scale test": the same with the controller manager and the scheduler at 100/100 (what
  scale tests configure with --kube-api-qps / clientConnection).

Figures: ReplicaSet and Deployment syncs per pod, CPU seconds (the child's own), simulated
seconds per wall second, each setting's CPU as a ratio of "free".

    python -m benchmarks costs                       # 200 hollow nodes x 30 pods
    KUBELAB_BENCH_QUICK=1 python -m benchmarks costs  # 20 x 30
    python -m benchmarks.bench_costs 200 30 upstream  # one run, prints JSON
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

from benchmarks.common import Figure, peak_memory_mib

SETTINGS: dict[str, dict[str, Any]] = {
    "free": {"client_connection": {n: {"qps": -1} for n in
                                   ("scheduler", "kubelet", "controller-manager", "kube-proxy")},
             "sync_cost": 0.0},
    "cost only": {"client_connection": {n: {"qps": -1} for n in
                                        ("scheduler", "kubelet", "controller-manager", "kube-proxy")}},
    "upstream": {},
    "scale test": {"client_connection": {"controller-manager": {"qps": 100, "burst": 100},
                                         "scheduler": {"qps": 100, "burst": 100}}},
}


def density(nodes: int, pods_per_node: int, setting: str) -> dict[str, Any]:
    """One run in this process: apply, then run until every pod is Running."""
    from benchmarks.bench_scale import apply_pods
    from kubelab.cluster import Cluster

    cpu0 = time.process_time()
    c = Cluster(nodes=nodes, hollow=True, **SETTINGS[setting])
    c.trace.enabled = False
    c.run(5)
    total = nodes * pods_per_node
    running: set[str] = set()

    def on_event(event: dict[str, Any]) -> None:
        obj = event.get("object") or {}
        if (obj.get("status") or {}).get("phase") == "Running":
            running.add((obj.get("metadata") or {}).get("uid", ""))
    c.client.watch("pods", on_event)
    start, virtual_start, cpu = time.perf_counter(), c.clock.now, time.process_time()
    apply_pods(c, total)
    while len(running) < total and c.clock.now - virtual_start < 3600:
        c.run(5.0)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    cm = c.components["controller-manager"]
    rs, d = cm["replicaset-controller"].controller, cm["deployment-controller"].controller
    return {"setting": setting, "running": len(running), "total": total,
            "rs_syncs_per_pod": rs.syncs / total, "d_syncs_per_pod": d.syncs / total,
            "rs_throttled_s": rs.throttled, "cpu": cpu, "cpu_with_build": time.process_time() - cpu0,
            "simulated": c.clock.now - virtual_start, "sim_per_wall": (c.clock.now - virtual_start) / wall,
            "wall": wall, "max_rss_mib": peak_memory_mib()}


def run() -> list[Figure]:
    # KUBELAB_BENCH_QUICK=1: 20 x 30 (600 pods), the same rows; 50 x 30 took 13 minutes of
    # the quick run under load.
    nodes, per = (20, 30) if os.environ.get("KUBELAB_BENCH_QUICK") else (200, 30)
    children = {s: subprocess.Popen([sys.executable, "-m", "benchmarks.bench_costs", str(nodes),
                                     str(per), s], stdout=subprocess.PIPE, text=True)
                for s in SETTINGS}
    results = {}
    for setting, child in children.items():
        out, _ = child.communicate()
        if child.returncode != 0:
            raise RuntimeError(f"bench_costs {setting} failed with {child.returncode}")
        results[setting] = json.loads(out.strip().splitlines()[-1])
    figures = []
    base = results["free"]["cpu"]
    for setting, r in results.items():
        name = f"costs: {nodes} hollow nodes x {per} pods, {setting}"
        figures += [Figure(f"{name}: ReplicaSet syncs per pod", r["rs_syncs_per_pod"], "syncs"),
                    Figure(f"{name}: Deployment syncs per pod", r["d_syncs_per_pod"], "syncs"),
                    Figure(f"{name}: CPU, apply to all Running", r["cpu"], "s"),
                    Figure(f"{name}: CPU / free", r["cpu"] / base, "ratio"),
                    Figure(f"{name}: simulated s per wall s", r["sim_per_wall"], "sim s/s"),
                    Figure(f"{name}: simulated s to all Running", r["simulated"], "virtual s")]
    return figures


if __name__ == "__main__":
    print(json.dumps(density(int(sys.argv[1]), int(sys.argv[2]), " ".join(sys.argv[3:]))))
