"""Informer throughput: events per second from a store write to an event handler.

Each write goes through the API server into the store; the watch cache fans the event out; the
reflector puts it in the DeltaFIFO; the informer updates its indexer and calls the handler. We
time the whole path for a burst of writes with the trace switched off.
"""

from __future__ import annotations

import time

from benchmarks.common import Figure
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


def run() -> list[Figure]:
    return [
        Figure("informer: write -> handler (1 informer)", _burst(5_000, 1), "events/s"),
        Figure("informer: write -> handler (10 informers)", _burst(2_000, 10), "events/s"),
    ]
