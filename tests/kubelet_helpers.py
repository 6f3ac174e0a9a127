"""Helpers for the kubelet and node lifecycle tests: small clusters and pods bound by hand."""

from __future__ import annotations

from typing import Any

from kubelab.client.client import Client
from kubelab.client.component import ComponentContext
from kubelab.client.shared_informer import SharedInformerFactory
from kubelab.cluster import Cluster
from kubelab.controllers.node_lifecycle import NodeLifecycleController, TaintEvictionController

Object = dict[str, Any]


def kubelet_cluster(nodes: int = 1, seed: int = 0, warm: float = 30.0) -> Cluster:
    """Nodes with kubelets, nothing else; `warm` seconds pass first so nodes are registered."""
    c = Cluster(nodes=nodes, seed=seed, components=["kubelet"])
    c.run(warm)
    return c


def pod(name: str, node: str = "node-1", image: str = "nginx:1.27", *, behavior: str | None = None,
        policy: str | None = None, **spec: Any) -> Object:
    meta: Object = {"name": name}
    if behavior is not None:
        meta["annotations"] = {"kubelab.dev/behavior": behavior}
    body: Object = {"nodeName": node, "containers": [{"name": "app", "image": image}], **spec}
    if policy is not None:
        body["restartPolicy"] = policy
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body}


def status_of(c: Cluster, name: str, container: str = "app") -> Object:
    statuses = c.get("pods", name).get("status", {}).get("containerStatuses") or []
    return next((s for s in statuses if s["name"] == container), {})


def waiting_reason(c: Cluster, name: str) -> str | None:
    return (status_of(c, name).get("state") or {}).get("waiting", {}).get("reason")


def events(c: Cluster, name: str, reason: str | None = None) -> list[Object]:
    return [e for e in c.events() if e["involvedObject"]["name"] == name
            and (reason is None or e["reason"] == reason)]


def event_times(c: Cluster, component: str, reason: str, obj: str = "") -> list[float]:
    """Virtual times at which `component` recorded `reason` (from the trace, spam filter or not)."""
    return [r.time for r in c.trace.filter(component=component, verb="event")
            if r.detail.get("reason") == reason and r.object.endswith(obj)]


def start_node_lifecycle(c: Cluster, **options: Any
                         ) -> tuple[NodeLifecycleController, TaintEvictionController]:
    """Run the two node lifecycle controllers as kube-controller-manager would, on their own."""
    user = "system:kube-controller-manager"
    client = Client(c.apiserver, c.apiserver.token_for(user), user_agent="node-lifecycle")
    ctx = ComponentContext("controller-manager", client, c.clock, c.rand, c.trace)
    informers = SharedInformerFactory(client, c.clock, rand=c.rand, trace=c.trace, name=ctx.name)
    nlc = NodeLifecycleController(ctx, informers, **options)
    tec = TaintEvictionController(ctx, informers)
    informers.start()
    c.run(1)
    nlc.run()
    tec.run()
    return nlc, tec
