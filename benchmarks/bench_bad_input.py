"""Input that used to stall the simulated cluster (issue 28): what the work costs now.

- a Job of parallelism 10^6: `c.run(10)` returns; the Job controller creates 500 pods per sync
  (MaxPodCreateDeletePerSync, in slow-start batches) and a status-only update waits out
  syncJobBatchPeriod, so ten virtual seconds create 5,000 pods (tests/test_job_controller.py
  counts them); the figure is the wall time of those creates;
- many YAML documents in one `c.apply`: kubectl applies each document with its own GET and
  create, and so does kubelab; there is no limit on their number upstream, so the time grows
  with the documents, linearly;
- a Deployment of many replicas: the ReplicaSet controller creates them 500 per sync
  (burstReplicas) and syncs on every pod event, as upstream does; at zero simulated latency no
  events coalesce, so each pod's bind and status updates cost a sync over every pod, and the
  wall time per simulated second grows with the square of the replicas.

The first two run in full (10^6, 20,000 documents) only with KUBELAB_BENCH_SCALE=1, as does
the Deployment of 5,000 (the default is 1,000).

    python -m benchmarks bad_input
"""

from __future__ import annotations

import gc
import os
import time
from typing import Any

from benchmarks.common import Figure


def _timed(fn: Any) -> float:
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def job(parallelism: int, seconds: float) -> tuple[float, int]:
    from kubelab.cluster import Cluster

    c = Cluster(nodes=2)
    c.trace.enabled = False
    c.apply({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "wide"},
             "spec": {"parallelism": parallelism, "completions": parallelism, "template": {
                 "metadata": {"annotations": {"kubelab.dev/behavior": "exit=300"}},
                 "spec": {"restartPolicy": "Never",
                          "containers": [{"name": "c", "image": "busybox"}]}}}})
    wall = _timed(lambda: c.run(seconds))
    return wall, len(c.get("pods"))


def documents(n: int) -> float:
    from kubelab.cluster import Cluster

    text = "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm-{i}}}\n"
                   "data: {a: b}\n" for i in range(n))
    c = Cluster(nodes=1)
    c.trace.enabled = False
    return _timed(lambda: c.apply(text))


def deployment(replicas: int, seconds: int) -> float:
    """Wall seconds per simulated second over the first `seconds` after the apply."""
    from kubelab.cluster import Cluster

    c = Cluster(nodes=3)
    c.trace.enabled = False
    c.apply({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
             "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                      "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                          "containers": [{"name": "c", "image": "nginx"}]}}}})
    return _timed(lambda: c.run(seconds)) / seconds


def run() -> list[Figure]:
    full = bool(os.environ.get("KUBELAB_BENCH_SCALE"))
    parallelism, docs, replicas = (10**6, 20_000, 5_000) if full else (10**5, 2_000, 1_000)
    wall, pods = job(parallelism, 10)
    return [
        Figure(f"bad input: Job of parallelism {parallelism:,}, c.run(10) wall", wall, "s"),
        Figure(f"bad input: Job of parallelism {parallelism:,}, pods after 10 s", pods, "pods"),
        Figure(f"bad input: {docs:,} YAML documents, c.apply wall", documents(docs), "s"),
        Figure(f"bad input: Deployment of {replicas:,} replicas, first 3 s", deployment(replicas, 3),
               "wall s per sim s"),
    ]
