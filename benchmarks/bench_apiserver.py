"""API server throughput: the full request pipeline, reads, lists and watch fan-out.

Every request goes through resolve, authentication, authorization (cached RBAC decisions),
decoding, admission, validation and the store, as admin, with the trace switched off. This
machine's speed varies by a third from one second to the next (it is shared), so the create
figure is the best of a few rounds, as timeit advises for the same reason.
"""

from __future__ import annotations

import os
import random
from typing import Any

from benchmarks.common import Figure, rate
from kubelab.api.request import Request
from kubelab.apiserver import APIServer
from kubelab.sim import Clock, Trace
from kubelab.store import Store


def _server() -> tuple[APIServer, Clock, str]:
    clock = Clock()
    trace = Trace(lambda: clock.now)
    trace.enabled = False
    server = APIServer(Store(clock, trace=trace), clock, random.Random(0), trace=trace)
    return server, clock, server.token_for("admin")


def _config_map(name: str, namespace: str = "default") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace}, "data": {"key": "value"}}


def _pod(name: str, namespace: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app": "bench"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.25",
                                     "resources": {"requests": {"cpu": "100m",
                                                                "memory": "64Mi"}}}]}}


def _namespace(server: APIServer, token: str, name: str) -> None:
    server.handle(Request("create", "namespaces", token=token, body={
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}))


ROUNDS = 5  # the create figure is the best of ROUNDS fresh servers (as timeit advises)


def _creates(n: int) -> tuple[APIServer, Clock, str, float]:
    """A fresh server and its rate for n ConfigMap creates."""
    server, clock, token = _server()
    creates = [Request("create", "configmaps", namespace="default", token=token,
                       body=_config_map(f"cm-{i}")) for i in range(n)]
    return server, clock, token, rate(n, lambda: [server.handle(r) for r in creates])


def run() -> list[Figure]:
    figures = []
    # KUBELAB_BENCH_QUICK=1: 5,000 creates and gets, best of 2 (the same rows, a rate each).
    quick = bool(os.environ.get("KUBELAB_BENCH_QUICK"))
    n = 5_000 if quick else 20_000
    rounds = [_creates(n) for _ in range(2 if quick else ROUNDS)]
    server, clock, token, _ = rounds[-1]
    figures.append(Figure("apiserver create (full pipeline)", max(r[3] for r in rounds),
                          "creates/s", ">= 20000"))

    pods = 2_000
    _namespace(server, token, "bench")
    pod_creates = [Request("create", "pods", namespace="bench", token=token,
                           body=_pod(f"pod-{i}", "bench")) for i in range(pods)]
    figures.append(Figure("apiserver create pods",
                          rate(pods, lambda: [server.handle(r) for r in pod_creates]),
                          "creates/s"))

    gets = [Request("get", "configmaps", namespace="default", name=f"cm-{i}", token=token)
            for i in range(n)]
    figures.append(Figure("apiserver get", rate(n, lambda: [server.handle(r) for r in gets]),
                          "gets/s"))

    _namespace(server, token, "thousand")
    for i in range(1000):
        server.handle(Request("create", "pods", namespace="thousand", token=token,
                              body=_pod(f"pod-{i}", "thousand")))
    lists = 30
    listing = Request("list", "pods", namespace="thousand", token=token)
    figures.append(Figure("apiserver list (1000 pods)",
                          rate(lists, lambda: [server.handle(listing) for _ in range(lists)]),
                          "lists/s"))

    # A kubelet's list of its own pods: 30 of 3,000, found through the pod watch cache's
    # spec.nodeName index once the cache has caught up (the clock has run).
    _namespace(server, token, "nodes")
    for i in range(3000):
        body = _pod(f"pod-{i}", "nodes")
        body["spec"]["nodeName"] = f"node-{i % 100}"
        server.handle(Request("create", "pods", namespace="nodes", token=token, body=body))
    clock.run_until_idle()
    node_lists = [Request("list", "pods", token=token, field_selector=f"spec.nodeName=node-{i}")
                  for i in range(100)]
    figures.append(Figure("apiserver list one node's pods (30 of 6,000)",
                          rate(len(node_lists), lambda: [server.handle(r) for r in node_lists]),
                          "lists/s"))

    clock.run_until_idle()
    _namespace(server, token, "fan")
    delivered = [0]

    def count(_event: Any) -> None:
        delivered[0] += 1

    for _ in range(100):
        server.watch(Request("watch", "configmaps", namespace="fan", resource_version="0",
                             token=token), count)
    clock.run_until_idle()
    events = 500
    for i in range(events):
        server.handle(Request("create", "configmaps", namespace="fan", token=token,
                              body=_config_map(f"fan-{i}", "fan")))
    figures.append(Figure("watch fan-out (100 watchers)",
                          rate(100 * events, clock.run_until_idle), "events/s"))
    assert delivered[0] == 100 * events, delivered[0]
    return figures
