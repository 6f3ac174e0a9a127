"""Scale (notebook 10): hollow-node density, watch fan-out, and the relist storm.

- hollow density: `Cluster(nodes=N, hollow=True)` (kubemark's hollow kubelets: the real kubelet
  on a runtime that does nothing), Deployments of 100 replicas each with N x pods-per-node pods
  in all; wall seconds from the apply to every pod Running, simulated seconds per wall second
  over that span, and peak memory, in a child process. `make bench` runs 1,000 x 3
  (KUBELAB_BENCH_QUICK=1: 50 x 30, the ratio at 50 x 10 and the storm at 50 nodes); the
  issue's 5,000 x 30 (150,000 pods), and 5,000 idle hollow nodes, run only with
  KUBELAB_BENCH_SCALE=1 (`make bench-scale`), as they are long; the
  5,000 x 30 run gives the controller manager's and the scheduler's clients 100 QPS / 100 burst,
  as scale tests do, and reports wall ms and peak KiB per pod beside its totals (every size
  also CPU ms per pod, the child's own CPU seconds: on a shared machine the wall waits for a core).
  (The 1,000 x 30 figure with full kubelets is bench_kubelet's density run.)
- fan-out: watch events delivered per wall second to 1,000 watchers of one resource (no
  selectors: every watcher gets every event), in process.
- relist storm: every API server restarts at once on a hollow cluster; the storm's duration is
  the virtual seconds from the restart to the last reflector's relist, with and without API
  Priority and Fairness (with APF_LIMIT seats, if this branch has APF), and the 429s it caused.

    python -m benchmarks scale
    python -m benchmarks.bench_scale density 100 30 [full] [scale-limits]   # one run, prints JSON
    python -m benchmarks.bench_scale storm 200 0       # one storm run (apf 0 or 1), prints JSON
    python -m benchmarks.bench_scale idle 5000         # hollow nodes that only heartbeat
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

from benchmarks.common import Figure, peak_memory_mib, rate

PER_DEPLOYMENT = 100
# The storm's APF run gives the server 25 seats (--max-requests-inflight plus
# --max-mutating-requests-inflight; upstream's default is 600), so that a storm of a few
# thousand LISTs meets the limit, as a big cluster's storm meets 600.
APF_LIMIT = 25


def _deployment(i: int, replicas: int) -> dict[str, Any]:
    labels = {"app": f"scale-{i}"}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"scale-{i}"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {"containers": [
                         {"name": "pause", "image": "registry.k8s.io/pause:3.10",
                          "resources": {"requests": {"cpu": "10m", "memory": "10Mi"}}}]}}}}


def apply_pods(c: Any, total: int, per: int = PER_DEPLOYMENT) -> None:
    for i in range((total + per - 1) // per):
        c.apply(_deployment(i, min(per, total - i * per)))


# What scale tests give the control plane's clients (ClusterLoader2's kubemark and 5,000-node
# jobs: --kube-api-qps=100 --kube-api-burst=100); `make bench-scale`'s 5,000 x 30 runs at it.
SCALE_TEST_LIMITS: dict[str, Any] = {"controller-manager": {"qps": 100, "burst": 100},
                     "scheduler": {"qps": 100, "burst": 100}}


def density(nodes: int, pods_per_node: int, hollow: bool = True,
            scale_limits: bool = False) -> dict[str, Any]:
    """One run in this process: wall seconds from apply to every pod Running (hollow=False:
    full kubelets on the simulated runtime, for the ratio; scale_limits: the control plane's
    clients at 100/100, else upstream's default limits)."""
    from kubelab.cluster import Cluster
    from kubelab.widgets.progress import RunProgress

    c = Cluster(nodes=nodes, hollow=hollow,
                client_connection=SCALE_TEST_LIMITS if scale_limits else None)
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
    start, virtual_start, cpu = time.perf_counter(), c.clock.now, time.process_time()
    progress = RunProgress(total, f"{nodes:,} {'hollow' if hollow else 'full'} nodes x {pods_per_node}")
    apply_pods(c, total)
    while len(running) < total and c.clock.now - virtual_start < 3600:
        c.run(5.0)
        progress.update(c.clock.now - virtual_start, len(running))
    progress.close()
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "running": len(running), "total": total,
            "simulated": c.clock.now - virtual_start,
            "sim_per_wall": (c.clock.now - virtual_start) / seconds,
            "cpu": time.process_time() - cpu, "max_rss_mib": peak_memory_mib()}


def idle(nodes: int, seconds: float = 60.0) -> dict[str, Any]:
    """`nodes` hollow kubelets and the control plane with no pods: wall seconds to build and
    register, then simulated seconds per wall second while they only heartbeat (Lease and
    Node status every 10 s each, as upstream: no batching), and peak memory."""
    from kubelab.cluster import Cluster

    start = time.perf_counter()
    c = Cluster(nodes=nodes, hollow=True)
    c.trace.enabled = False
    c.run(15)
    built = time.perf_counter() - start
    start = time.perf_counter()
    c.run(seconds)
    steady = time.perf_counter() - start
    return {"nodes": nodes, "build": built, "sim_per_wall": seconds / steady,
            "max_rss_mib": peak_memory_mib()}


def storm(nodes: int, apf: bool, pods_per_node: int = 0) -> dict[str, Any]:
    """Restart every API server on a settled hollow cluster; how long until every reflector
    has relisted (virtual seconds), how many LISTs, how many 429s, and the LISTs per second."""
    from kubelab.cluster import Cluster

    c = Cluster(nodes=nodes, hollow=True)
    c.trace.enabled = False
    if apf:
        c.apiserver.enable_priority_and_fairness(server_concurrency_limit=APF_LIMIT)
    c.run(5)
    if pods_per_node:
        apply_pods(c, nodes * pods_per_node)
    c.run(60)
    audit_from = len(c.apiserver.audit)
    t0 = c.clock.now
    wall = time.perf_counter()
    c.faults.restart_apiservers()
    c.run(120)
    wall = time.perf_counter() - wall
    records = c.apiserver.audit[audit_from:]
    lists = [r for r in records if r.verb == "list" and r.code == 200]
    rejected = sum(1 for r in records if r.code == 429)
    per_second: dict[int, int] = {}
    for r in lists:
        per_second[int(r.time - t0)] = per_second.get(int(r.time - t0), 0) + 1
    return {"nodes": nodes, "apf": apf, "lists": len(lists), "rejected": rejected,
            "duration": (max(r.time for r in lists) - t0) if lists else 0.0, "wall": wall,
            "lists_per_second": [per_second.get(s, 0) for s in range(120)]}


def fanout_rate(watchers: int = 1000, events: int = 100) -> float:
    """Watch events delivered per wall second to `watchers` watchers of configmaps."""
    from kubelab.cluster import Cluster

    c = Cluster(nodes=0, components=[])
    c.trace.enabled = False
    got = [0]

    def count(_event: Any) -> None:
        got[0] += 1
    for _ in range(watchers):
        c.client.watch("configmaps", count, "default")
    c.run(1)

    def go() -> None:
        for i in range(events):
            c.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": f"cm-{i}"}, "data": {"k": "v" * 100}})
        c.run(1)
    delivered = rate(watchers * events, go)
    assert got[0] == watchers * events, got[0]
    return delivered


def _child(*args: str) -> dict[str, Any]:
    """Run one measurement in a child process; its progress goes to this terminal."""
    out = subprocess.run([sys.executable, "-m", "benchmarks.bench_scale", *args],
                         stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def has_apf() -> bool:
    from kubelab.apiserver import APIServer

    return hasattr(APIServer, "enable_priority_and_fairness")


def run() -> list[Figure]:
    quick = bool(os.environ.get("KUBELAB_BENCH_QUICK"))
    figures = [Figure("scale: watch events delivered to 1,000 watchers", fanout_rate(), "events/s")]
    sizes = [(50, 30)] if quick else [(1000, 3)]
    if os.environ.get("KUBELAB_BENCH_SCALE"):
        sizes.append((5000, 30))
        r = _child("idle", "5000")
        figures += [Figure("scale: 5,000 idle hollow nodes, build and register", r["build"], "s"),
                    Figure("scale: 5,000 idle hollow nodes: simulated s per wall s",
                           r["sim_per_wall"], "sim s/s"),
                    Figure("scale: 5,000 idle hollow nodes: peak memory", r["max_rss_mib"], "MiB")]
    for nodes, per in sizes:
        big = nodes == 5000
        r = _child("density", str(nodes), str(per), *(["scale-limits"] if big else []))
        name = f"scale: {nodes:,} hollow nodes x {per} pods" + (" at 100/100" if big else "") + \
            ", apply to all Running"
        if r["running"] < r["total"]:
            name += f" (only {r['running']:,} of {r['total']:,})"
        figures += [Figure(name, r["seconds"], "s", "<= 900" if big else ""),
                    Figure(f"{name}: simulated s per wall s", r["sim_per_wall"], "sim s/s"),
                    Figure(f"{name}: peak memory", r["max_rss_mib"], "MiB", "<= 8192" if big else ""),
                    Figure(f"{name}: wall ms per pod", 1000 * r["seconds"] / r["total"], "ms"),
                    Figure(f"{name}: CPU ms per pod (the process's own)", 1000 * r["cpu"] / r["total"],
                           "ms"),
                    Figure(f"{name}: peak KiB per pod", 1024 * r["max_rss_mib"] / r["total"], "KiB")]
    small = "50" if quick else "100"
    full, hollow = _child("density", small, "10", "full"), _child("density", small, "10")
    figures.append(Figure(f"scale: {small} nodes x 10 pods to Running, hollow / full kubelets (wall)",
                          hollow["seconds"] / full["seconds"], "ratio"))
    nodes = 50 if quick else 500
    for apf in ([False, True] if has_apf() else [False]):
        r = _child("storm", str(nodes), "1" if apf else "0")
        what = "with APF" if apf else "without APF"
        figures += [Figure(f"scale: relist storm, {nodes} hollow nodes, {what}: duration",
                           r["duration"], "virtual s"),
                    Figure(f"scale: relist storm, {nodes} hollow nodes, {what}: 429s",
                           r["rejected"], "requests")]
    return figures


if __name__ == "__main__":
    kind = sys.argv[1] if len(sys.argv) > 1 else "density"
    if kind == "storm":
        print(json.dumps(storm(int(sys.argv[2]), sys.argv[3] == "1")))
    elif kind == "idle":
        print(json.dumps(idle(int(sys.argv[2]))))
    else:
        print(json.dumps(density(int(sys.argv[2]), int(sys.argv[3]), hollow="full" not in sys.argv[4:],
                                 scale_limits="scale-limits" in sys.argv[4:])))
