"""Services at scale: EndpointSlice controller syncs per second, and one kube-proxy full sync,
for 1,000 Services x 10 endpoints beside 100 Services x 10 (how the cost grows).

The controller runs in a real controller-manager on a cluster of hollow nodes; pods are made
Running and Ready (with an IP) by the administrator, as kubemark's hollow kubelets would. The
first pass writes every slice; the second, after a resync of every Service, writes nothing
(the tracker and the reconciler find nothing to do). kube-proxy's full sync is what every
sync does: Services and EndpointSlices to the whole table (proxier.py) and the table back into
rules (iptables.py restore).
"""

from __future__ import annotations

import os
import time

from benchmarks.common import Figure
from kubelab.cluster import Cluster
from kubelab.proxy.iptables import IPTables
from kubelab.proxy.proxier import build_endpoints_map, build_service_map, sync_proxy_rules

PODS_PER_SERVICE = 10


def _cluster(services: int) -> Cluster:
    """Every Service and Ready pod first; the controller-manager starts on a full store."""
    c = Cluster(nodes=3, seed=0, components=[])
    c.trace.enabled = False
    n = 0
    for s in range(services):
        c.client.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"svc-{s}"},
                         "spec": {"selector": {"app": f"a{s}"}, "ports": [{"port": 80, "targetPort": 8080}]}})
        for _ in range(PODS_PER_SERVICE):
            pod = c.client.create({"apiVersion": "v1", "kind": "Pod",
                                   "metadata": {"name": f"p-{n}", "labels": {"app": f"a{s}"}},
                                   "spec": {"nodeName": f"node-{n % 3 + 1}",
                                            "containers": [{"name": "c", "image": "nginx:1.27"}]}})
            ip = f"10.{244 + n // 65000}.{n // 250 % 256}.{n % 250 + 2}"
            pod["status"] = {"phase": "Running", "podIP": ip,
                             "conditions": [{"type": "Ready", "status": "True"}]}
            c.client.update_status(pod)
            n += 1
    c.restart_component("controller-manager")
    return c


def _controller_syncs(services: int) -> tuple[float, float]:
    c = _cluster(services)
    controller = c.components["controller-manager"]["endpointslice-controller"]
    before = controller.controller.syncs
    start = time.perf_counter()
    c.clock.run_until_idle()
    first = (controller.controller.syncs - before) / (time.perf_counter() - start)
    writes = controller.writes
    keys = [f"default/svc-{s}" for s in range(services)]
    start = time.perf_counter()
    for key in keys:
        controller.sync_service(key)
    steady = services / (time.perf_counter() - start)
    assert controller.writes == writes, "a steady-state resync wrote slices"
    assert len(c.get("endpointslices")) == services
    return first, steady


def _proxy_full_sync(services: int) -> float:
    svcs, slices = [], []
    for s in range(services):
        svcs.append({"metadata": {"name": f"svc-{s}", "namespace": "default"},
                     "spec": {"clusterIP": f"10.{96 + s // 65000}.{s // 250 % 256}.{s % 250 + 2}",
                              "ports": [{"name": "", "port": 80, "protocol": "TCP"}]}})
        slices.append({"metadata": {"name": f"svc-{s}-x", "namespace": "default",
                                    "labels": {"kubernetes.io/service-name": f"svc-{s}"}},
                       "ports": [{"name": "", "port": 8080, "protocol": "TCP"}],
                       "endpoints": [{"addresses": [f"10.244.{s // 25 % 256}.{(s % 25) * 10 + i}"],
                                      "conditions": {"ready": True}, "nodeName": "node-1"}
                                     for i in range(PODS_PER_SERVICE)]})
    table = IPTables("node-1", "172.18.0.2")
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        text = sync_proxy_rules(build_service_map(svcs), build_endpoints_map(slices), "node-1")
        table.restore(text, 0.0)
        best = min(best, time.perf_counter() - start)
    return best


def run() -> list[Figure]:
    figures = []
    # KUBELAB_BENCH_QUICK=1: 100 and 500 Services, the same rows.
    for services in (100, 500 if os.environ.get("KUBELAB_BENCH_QUICK") else 1_000):
        first, steady = _controller_syncs(services)
        figures += [
            Figure(f"endpointslice controller: first syncs ({services} svc x 10)", first, "syncs/s"),
            Figure(f"endpointslice controller: steady resync ({services} svc x 10)", steady, "syncs/s"),
            Figure(f"kube-proxy full sync ({services} svc x 10 endpoints)", _proxy_full_sync(services), "s"),
        ]
    return figures
