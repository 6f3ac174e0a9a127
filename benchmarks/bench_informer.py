"""Informer throughput: events per second from a store write to an event handler; and what a
cached pod costs at rest.

Each write goes through the API server into the store; the watch cache fans the event out; the
reflector puts it in the DeltaFIFO; the informer updates its indexer and calls the handler. We
time the whole path for a burst of writes with the trace switched off.

Bytes per pod at rest: pods applied server-side (so each carries managedFields, as every pod
of a real cluster does) run on hollow nodes; each component's pod cache is walked
(common.deep_size). kube-controller-manager's informers strip managedFields
(shared_informer.transform_strip_managed_fields); the ratio is its cache against the same pods
as listed, whole, in one run. The scheduler's and the kubelets' caches keep them, as 1.34's.
"""

from __future__ import annotations

import time
from typing import Any

from benchmarks.common import Figure, deep_size
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory
from kubelab.cluster import Cluster


def _burst(writes: int, informers: int) -> float:
    c = Cluster(nodes=0, seed=0, components=[])
    c.trace.enabled = False
    handled = [0]
    factories = []
    for i in range(informers):
        factory = SharedInformerFactory(c.client_for(f"reader-{i}", ["system:masters"]), c.clock)
        factory.informer_for("configmaps").add_event_handler(ResourceEventHandler(
            on_add=lambda _o: handled.__setitem__(0, handled[0] + 1),
            on_update=lambda _o, _n: handled.__setitem__(0, handled[0] + 1)))
        factory.start()
        factories.append(factory)
    c.run(1)
    start = time.perf_counter()
    for i in range(writes):
        c.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": f"cm-{i}", "namespace": "default"}})
    c.clock.run_until_idle()
    elapsed = time.perf_counter() - start
    assert handled[0] == writes * informers, (handled[0], writes * informers)
    return writes * informers / elapsed


def cache_bytes_per_pod(nodes: int = 10, pods: int = 200) -> dict[str, float]:
    """Bytes per pod in each component's pod cache, and the controller manager's cache over the
    same pods unstripped."""
    from kubelab.api.request import Request

    c = Cluster(nodes=nodes, hollow=True)
    c.trace.enabled = False
    c.run(5)
    token = c.apiserver.token_for("admin")
    for i in range(pods):
        pod: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                               "metadata": {"name": f"pod-{i}", "labels": {"app": "cached"}},
                               "spec": {"containers": [{"name": "pause",
                                                        "image": "registry.k8s.io/pause:3.10"}]}}
        c.apiserver.handle(Request("patch", "pods", namespace="default", name=pod["metadata"]["name"],
                                   body=pod, options={"patchType": "apply", "fieldManager": "kubectl"},
                                   token=token))
    for _ in range(60):  # every pod Running, checked every 10 virtual seconds
        c.run(10)
        if all(p["status"].get("phase") == "Running" for p in c.client.list("pods", "default")["items"]):
            break

    def cached(indexer: Any) -> list[Any]:
        return [p for p in indexer.list() if p["metadata"].get("namespace") == "default"]
    manager = cached(c.components["controller-manager"].informers.informer_for("pods").indexer)
    scheduler = cached(c.components["scheduler"].pod_informer.indexer)
    kubelets = [p for name, k in c.components.items() if name.startswith("kubelet/")
                for p in cached(k.pod_informer.indexer)]
    whole = c.client.list("pods", "default")["items"]
    assert len(manager) == len(scheduler) == len(kubelets) == len(whole) == pods
    return {"manager": deep_size(manager) / pods, "manager_unstripped": deep_size(whole) / pods,
            "scheduler": deep_size(scheduler) / pods, "kubelet": deep_size(kubelets) / pods}


def run() -> list[Figure]:
    sizes = cache_bytes_per_pod()
    return [
        Figure("informer: write -> handler (1 informer)", _burst(5_000, 1), "events/s"),
        Figure("informer: write -> handler (10 informers)", _burst(2_000, 10), "events/s"),
        Figure("informer: a cached pod at rest, kube-controller-manager (managedFields stripped)",
               sizes["manager"], "bytes"),
        Figure("informer: a cached pod at rest, kube-scheduler / its kubelet (kept, as 1.34)",
               (sizes["scheduler"] + sizes["kubelet"]) / 2, "bytes"),
        Figure("informer: kube-controller-manager's cached pod, stripped / whole (one run)",
               sizes["manager"] / sizes["manager_unstripped"], "ratio"),
    ]
