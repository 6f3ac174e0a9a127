"""metrics-server: the resource metrics API (metrics.k8s.io/v1beta1), an add-on.

kubernetes-sigs/metrics-server scrapes every kubelet's /metrics/resource once per
`--metric-resolution` (15 s; pkg/scraper/scraper.go), keeps the last two points of each node
and container (pkg/storage/node.go, pod.go), and serves NodeMetrics and PodMetrics through the
aggregation layer as the APIService v1beta1.metrics.k8s.io (pkg/api/node.go, pod.go). A usage
is the rate between the two points: the CPU counters' difference over the time between them,
the window; memory is the last working set. A container seen only once has no rate yet, and
a pod with such a container is left out, which is why `kubectl top pod` says "metrics not
available yet" for a minute after a rollout, and why the HPA sees missing metrics.

kind does not install it; `Cluster(metrics_server=True)` does (and `kubelab serve`), as
`kubectl apply -f components.yaml --kubelet-insecure-tls` would on kind.

Departures: the scraper reaches each kubelet through the wiring's connection to its node
(what the API server uses for pods/log) rather than over HTTPS to <node>:10250; the API
server reaches the metrics server in process (kubelab/apiserver/aggregator.py) rather than
through its Service; node metrics carry no labels (metrics-server copies the Node's).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from kubelab.api import Object
from kubelab.api.errors import not_found
from kubelab.api.labels import parse_selector
from kubelab.api.meta import rfc3339
from kubelab.api.quantity import Format, Quantity
from kubelab.api.request import Request
from kubelab.api.resources import ResourceInfo
from kubelab.apiserver.aggregator import register_api_service
from kubelab.kubelet.stats import NodeStats, resource_metrics

if TYPE_CHECKING:
    from kubelab.cluster import Cluster

__all__ = ["METRICS_RESOURCES", "METRIC_RESOLUTION", "MetricsServer"]

GROUP, VERSION = "metrics.k8s.io", "v1beta1"
API_VERSION = f"{GROUP}/{VERSION}"
METRIC_RESOLUTION = 15.0  # --metric-resolution
METRICS_RESOURCES = [
    ResourceInfo("nodes", "NodeMetrics", group=GROUP, version=VERSION, namespaced=False,
                 verbs=("get", "list")),
    ResourceInfo("pods", "PodMetrics", group=GROUP, version=VERSION, verbs=("get", "list")),
]


@dataclass(frozen=True)
class Point:
    time: float
    cpu_seconds: float
    memory: int


@dataclass(frozen=True)
class Metrics:
    time: float       # the last point's
    window: float     # between the two points
    cpu: int          # nanocores
    memory: int       # bytes


def rate(prev: Point | None, last: Point) -> Metrics | None:
    """resourceUsage (pkg/storage/types.go): None when there is no earlier point, or the counter
    went back (a restarted container)."""
    if prev is None or last.time <= prev.time or last.cpu_seconds < prev.cpu_seconds:
        return None
    window = last.time - prev.time
    cpu = round((last.cpu_seconds - prev.cpu_seconds) / window * 1e9)
    return Metrics(last.time, window, cpu, last.memory)


class MetricsServer:
    """The add-on: a scrape on the clock every 15 s, the storage, and the API."""

    def __init__(self, cluster: Cluster, resolution: float = METRIC_RESOLUTION) -> None:
        self.cluster, self.resolution = cluster, resolution
        self.nodes: dict[str, tuple[Point | None, Point]] = {}
        # (namespace, pod) -> (labels, {container: (prev, last)})
        self.pods: dict[tuple[str, str], tuple[dict[str, str], dict[str, tuple[Point | None, Point]]]] = {}
        self.scrapes = 0
        self.running = True
        cluster.clock.call_later(resolution, self._tick, background=True)

    @property
    def available(self) -> bool:
        """The APIService's Available condition: the metrics-server pod answers."""
        return self.running

    def _tick(self) -> None:
        if self.running:
            self.scrape()
        self.cluster.clock.call_later(self.resolution, self._tick, background=True)

    def scrape(self) -> None:
        """One collection from every reachable kubelet; what a node did not answer is dropped."""
        self.scrapes += 1
        nodes: dict[str, tuple[Point | None, Point]] = {}
        pods: dict[tuple[str, str], tuple[dict[str, str], dict[str, tuple[Point | None, Point]]]] = {}
        for node in self.cluster.node_names:
            runtime = self.cluster._kubelet_connection(node)
            if runtime is None:
                continue
            stats: NodeStats = resource_metrics(runtime)
            last = Point(stats.time, stats.cpu_seconds, stats.memory)
            nodes[node] = ((self.nodes.get(node) or (None, None))[1], last)
            for pod in stats.pods:
                key = (pod.namespace, pod.name)
                sandbox = runtime.sandboxes.get(pod.uid)
                old = (self.pods.get(key) or ({}, {}))[1]
                containers = {}
                for c in pod.containers:
                    point = Point(stats.time, c.cpu_seconds, c.memory)
                    containers[c.name] = ((old.get(c.name) or (None, None))[1], point)
                pods[key] = (dict(sandbox.labels) if sandbox else {}, containers)
        self.nodes, self.pods = nodes, pods

    # ------------------------------------------------------------------ the API

    def handle(self, request: Request) -> Object:
        """GET and LIST of nodes and pods (pkg/api/node.go, pod.go)."""
        selector = parse_selector(request.label_selector or "")
        if request.resource == "nodes":
            if request.verb == "get":
                found = self._node(request.name)
                if found is None:
                    raise not_found("nodemetrics", request.name, GROUP)
                return found
            items = [m for n in sorted(self.nodes) if (m := self._node(n)) is not None]
            return _list("NodeMetricsList", items)
        if request.verb == "get":
            found = self._pod(request.namespace, request.name)
            if found is None:
                raise not_found("podmetrics", f"{request.namespace}/{request.name}", GROUP)
            return found
        items = [m for ns, name in sorted(self.pods)
                 if (not request.namespace or ns == request.namespace)
                 and selector.matches(self.pods[(ns, name)][0])
                 and (m := self._pod(ns, name)) is not None]
        return _list("PodMetricsList", items)

    def _node(self, name: str) -> Object | None:
        prev, last = self.nodes.get(name) or (None, None)
        m = rate(prev, last) if last is not None else None
        if m is None:
            return None
        return {"kind": "NodeMetrics", "apiVersion": API_VERSION,
                "metadata": {"name": name, "creationTimestamp": rfc3339(self.cluster.clock.now)},
                "timestamp": rfc3339(m.time), "window": _duration(m.window),
                "usage": _usage(m)}

    def _pod(self, namespace: str, name: str) -> Object | None:
        labels, containers = self.pods.get((namespace, name)) or ({}, {})
        usages = []
        for c_name, (prev, last) in sorted(containers.items()):
            m = rate(prev, last)
            if m is None:
                return None  # a container without a rate: the pod is left out
            usages.append((c_name, m))
        if not usages:
            return None
        meta: dict[str, Any] = {"name": name, "namespace": namespace,
                                "creationTimestamp": rfc3339(self.cluster.clock.now)}
        if labels:
            meta["labels"] = labels
        first = usages[0][1]
        return {"kind": "PodMetrics", "apiVersion": API_VERSION, "metadata": meta,
                "timestamp": rfc3339(first.time), "window": _duration(first.window),
                "containers": [{"name": n, "usage": _usage(m)} for n, m in usages]}


def _usage(m: Metrics) -> dict[str, str]:
    """resource.NewScaledQuantity(cpu, -9) and NewQuantity(memory, BinarySI), canonical."""
    return {"cpu": str(Quantity(Decimal(m.cpu).scaleb(-9), Format.DecimalSI)),
            "memory": str(Quantity(Decimal(m.memory), Format.BinarySI))}


def _duration(seconds: float) -> str:
    """metav1.Duration as JSON (Go's time.Duration.String) for windows under a minute."""
    ms = round(seconds * 1000)
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms / 1000:g}s"


def _list(kind: str, items: list[Object]) -> Object:
    return {"kind": kind, "apiVersion": API_VERSION, "metadata": {}, "items": items}


def install(cluster: Cluster) -> MetricsServer:
    """Start the add-on and register its APIService with every API server."""
    server = MetricsServer(cluster)
    for apiserver in cluster.apiservers:
        register_api_service(apiserver.served, METRICS_RESOURCES, server)
    return server
