"""A simulated metrics adapter: the custom metrics API (custom.metrics.k8s.io/v1beta2) and the
external metrics API (external.metrics.k8s.io/v1beta1), an add-on whose values the learner sets.

An HPA's Pods, Object and External metrics are read from these two APIs, which kind does not
serve: a cluster needs an adapter such as prometheus-adapter (kubernetes-sigs/prometheus-adapter),
built on kubernetes-sigs/custom-metrics-apiserver, registered as the APIServices
v1beta2.custom.metrics.k8s.io and v1beta1.external.metrics.k8s.io. Without one the HPA says
"unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io)
registered" (k8s.io/metrics pkg/client/custom_metrics/discovery.go) or, for an external
metric, the server's 404 "the server could not find the requested resource".

`Cluster(custom_metrics=True)` installs this one (it is off by default, as on kind); then
`c.metrics` is where values come from, instead of Prometheus queries:

    c.metrics.set_pod_metric("http_requests", "20", selector="app=web")   # every such pod
    c.metrics.set_pod_metric("http_requests", "50", pod="web-7d4-abcde")  # one pod
    c.metrics.set_object_metric("requests_per_second", "300", kind="Service", name="web")
    c.metrics.set_external_metric("queue_messages_ready", "40", labels={"queue": "jobs"})

The paths are custom-metrics-apiserver's (pkg/apiserver/installer): a list of a metric for pods
by label selector is GET .../namespaces/<ns>/pods/*/<metric>?labelSelector=...; one object's
metric GET .../namespaces/<ns>/<resource>/<name>/<metric>; a Namespace's
GET .../namespaces/<ns>/metrics/<metric>; an external metric GET
.../namespaces/<ns>/<metric>?labelSelector=... (on the metric's labels). A metric the adapter
does not have is its provider's 404 (pkg/provider/errors.go): "the server could not find the
metric <m> for <resource>[ <name>]", "... for provided labels".

Departures: the values are what the learner set, read at the request's time (timestamp now, no
windowSeconds, so the HPA assumes its one-minute default); there is no Prometheus and no rules
configuration; the API server reaches the adapter in process (kubelab/apiserver/aggregator.py);
discovery does not list the adapter's metrics as resources.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubelab.api import Object
from kubelab.api.errors import ApiError, ParseError, bad_request
from kubelab.api.labels import parse_selector
from kubelab.api.meta import rfc3339
from kubelab.api.quantity import parse_quantity
from kubelab.api.request import Request
from kubelab.apiserver.aggregator import register_api_group

if TYPE_CHECKING:
    from kubelab.cluster import Cluster

__all__ = ["CUSTOM_GROUP", "CUSTOM_VERSION", "EXTERNAL_GROUP", "EXTERNAL_VERSION",
           "CustomMetricsAdapter", "MetricsAdapterOff", "install"]

CUSTOM_GROUP, CUSTOM_VERSION = "custom.metrics.k8s.io", "v1beta2"
EXTERNAL_GROUP, EXTERNAL_VERSION = "external.metrics.k8s.io", "v1beta1"

# The described kinds a learner names, and the resource in the adapter's paths (what
# client-go's RESTMapper makes of the GroupKind).
KIND_RESOURCES = {"Pod": ("", "pods"), "Service": ("", "services"),
                  "Namespace": ("", "namespaces"), "Deployment": ("apps", "deployments"),
                  "StatefulSet": ("apps", "statefulsets"), "ReplicaSet": ("apps", "replicasets"),
                  "Ingress": ("networking.k8s.io", "ingresses"), "Job": ("batch", "jobs")}


def _not_found(message: str) -> ApiError:
    """newMetricNotFoundWithMessageError: a 404 NotFound with the provider's message."""
    return ApiError(404, "NotFound", message)


def _value(value: str | int | float) -> str:
    text = str(value)
    try:
        parse_quantity(text)
    except ParseError as err:
        raise bad_request(f"invalid metric value {text!r}: {err}") from None
    return text


@dataclass
class _PodSeries:
    """One metric of the pods of a namespace: values by pod, and by label selector."""

    by_pod: dict[str, str] = field(default_factory=dict)
    by_selector: list[tuple[str, str]] = field(default_factory=list)

    def value_for(self, pod: Object) -> str | None:
        name = pod["metadata"]["name"]
        if name in self.by_pod:
            return self.by_pod[name]
        labels = pod["metadata"].get("labels") or {}
        for selector, value in reversed(self.by_selector):  # the latest rule wins
            if parse_selector(selector).matches(labels):
                return value
        return None


class CustomMetricsAdapter:
    """The adapter: the values the learner set, and the two APIs that serve them."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.running = True
        # (namespace, metric) -> the pods' values
        self.pod_metrics: dict[tuple[str, str], _PodSeries] = {}
        # (namespace, resource, name, metric) -> value
        self.object_metrics: dict[tuple[str, str, str, str], str] = {}
        # (namespace, metric) -> [(labels, value)]
        self.external_metrics: dict[tuple[str, str], list[tuple[dict[str, str], str]]] = {}
        self.custom = _API(self, CUSTOM_GROUP)
        self.external = _API(self, EXTERNAL_GROUP)

    @property
    def available(self) -> bool:
        return self.running

    # ------------------------------------------------------------------ what the learner sets

    def set_pod_metric(self, metric: str, value: str | int | float, *, pod: str = "",
                       selector: str = "", namespace: str = "default") -> None:
        """A per-pod metric (an HPA's type: Pods): for one pod, or every pod selector matches."""
        if bool(pod) == bool(selector):
            raise bad_request("set_pod_metric needs exactly one of pod= or selector=")
        series = self.pod_metrics.setdefault((namespace, metric), _PodSeries())
        if pod:
            series.by_pod[pod] = _value(value)
        else:
            try:
                parse_selector(selector)
            except ParseError as err:
                raise bad_request(f"invalid selector {selector!r}: {err}") from None
            series.by_selector.append((selector, _value(value)))

    def set_object_metric(self, metric: str, value: str | int | float, *, kind: str, name: str,
                          namespace: str = "default") -> None:
        """A metric describing one object (an HPA's type: Object), such as a Service's rate."""
        if kind not in KIND_RESOURCES:
            raise bad_request(f"kind {kind!r} is not one of {', '.join(sorted(KIND_RESOURCES))}")
        resource = _qualified(kind)
        if kind == "Namespace":
            namespace, name = name, ""
        self.object_metrics[(namespace, resource, name, metric)] = _value(value)

    def set_external_metric(self, metric: str, value: str | int | float, *,
                            labels: dict[str, str] | None = None,
                            namespace: str = "default") -> None:
        """A metric of something outside the cluster (an HPA's type: External), one series
        per set of labels (a queue's length, say)."""
        series = self.external_metrics.setdefault((namespace, metric), [])
        wanted = dict(labels or {})
        series[:] = [(lab, v) for lab, v in series if lab != wanted]
        series.append((wanted, _value(value)))

    def clear(self) -> None:
        self.pod_metrics.clear()
        self.object_metrics.clear()
        self.external_metrics.clear()

    # ------------------------------------------------------------------ the custom metrics API

    def get_custom(self, request: Request) -> Object:
        """GET of namespaces/<ns>/<resource>/<name|*>/<metric> or namespaces/<ns>/metrics/<m>."""
        if request.resource == "metrics" and not request.subresource:
            metric, resource, name = request.name, "namespaces", ""
        else:
            metric, resource, name = request.subresource, request.resource, request.name
        if not metric:
            raise _not_found("the server could not find the requested resource")
        now = rfc3339(self.cluster.clock.now)
        if resource == "pods" and name == "*":
            return self._pods_metric(request.namespace, metric, request.label_selector, now)
        value = self.object_metrics.get((request.namespace, resource, name, metric))
        if value is None:
            if resource == "pods":
                series = self.pod_metrics.get((request.namespace, metric))
                pod = self._pod(request.namespace, name)
                value = series.value_for(pod) if series and pod else None
            if value is None:
                what = f"{resource}.{CUSTOM_GROUP}" if "." not in resource else resource
                raise _not_found(f"the server could not find the metric {metric} for {what}"
                                 + (f" {name}" if name else ""))
        kind = _kind(resource)
        return _metric_value(kind, request.namespace if kind != "Namespace" else "",
                             name or request.namespace, metric, value, now)

    def _pods_metric(self, namespace: str, metric: str, selector: str, now: str) -> Object:
        series = self.pod_metrics.get((namespace, metric))
        if series is None:
            raise _not_found(f"the server could not find the metric {metric} for pods")
        try:
            wanted = parse_selector(selector)
        except ParseError as err:
            raise bad_request(str(err)) from None
        items = []
        for pod in self._pods(namespace):
            if not wanted.matches(pod["metadata"].get("labels") or {}):
                continue
            value = series.value_for(pod)
            if value is not None:
                items.append(_metric_value("Pod", namespace, pod["metadata"]["name"], metric,
                                           value, now))
        return {"kind": "MetricValueList", "apiVersion": f"{CUSTOM_GROUP}/{CUSTOM_VERSION}",
                "metadata": {}, "items": items}

    def _pods(self, namespace: str) -> list[Object]:
        listing = self.cluster.client.list("pods", namespace)
        return sorted(listing.get("items") or [], key=lambda p: p["metadata"]["name"])

    def _pod(self, namespace: str, name: str) -> Object | None:
        return next((p for p in self._pods(namespace) if p["metadata"]["name"] == name), None)

    # ------------------------------------------------------------------ the external metrics API

    def list_external(self, request: Request) -> Object:
        """GET namespaces/<ns>/<metric>?labelSelector=...: every series whose labels match."""
        metric = request.resource
        try:
            wanted = parse_selector(request.label_selector or "")
        except ParseError as err:
            raise bad_request(str(err)) from None
        series = self.external_metrics.get((request.namespace, metric))
        items = [{"metricName": metric, "metricLabels": labels,
                  "timestamp": rfc3339(self.cluster.clock.now), "value": value}
                 for labels, value in series or [] if wanted.matches(labels)]
        if not items:
            raise _not_found(f"the server could not find the metric {metric} for provided labels")
        return {"kind": "ExternalMetricValueList",
                "apiVersion": f"{EXTERNAL_GROUP}/{EXTERNAL_VERSION}", "metadata": {},
                "items": items}


@dataclass
class _API:
    """One APIService's backend (aggregator.APIServiceBackend) in front of the adapter."""

    adapter: CustomMetricsAdapter
    group: str

    @property
    def available(self) -> bool:
        return self.adapter.available

    def handle(self, request: Request) -> Object:
        if self.group == CUSTOM_GROUP:
            return self.adapter.get_custom(request)
        return self.adapter.list_external(request)


def _qualified(kind: str) -> str:
    group, resource = KIND_RESOURCES[kind]
    return f"{resource}.{group}" if group else resource


def _kind(resource: str) -> str:
    for kind in KIND_RESOURCES:
        if _qualified(kind) == resource:
            return kind
    return resource


def _metric_value(kind: str, namespace: str, name: str, metric: str, value: str, now: str
                  ) -> dict[str, Any]:
    """custom_metrics/v1beta2 MetricValue."""
    group = next((g for k, (g, _r) in KIND_RESOURCES.items() if k == kind), "")
    described = {"kind": kind, "name": name, "apiVersion": f"{group}/v1" if group else "/v1"}
    if namespace:
        described["namespace"] = namespace
    return {"describedObject": described, "metric": {"name": metric}, "timestamp": now,
            "value": value}


class MetricsAdapterOff:
    """`c.metrics` of a cluster without the adapter: falsy, and any use says how to get one."""

    def __bool__(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError("this cluster has no custom metrics adapter (kind installs none): "
                           "create it with Cluster(custom_metrics=True)")


def install(cluster: Cluster) -> CustomMetricsAdapter:
    """Start the adapter and register both APIServices with every API server."""
    adapter = CustomMetricsAdapter(cluster)
    for apiserver in cluster.apiservers:
        register_api_group(apiserver.served, CUSTOM_GROUP, CUSTOM_VERSION, adapter.custom)
        register_api_group(apiserver.served, EXTERNAL_GROUP, EXTERNAL_VERSION, adapter.external)
    return adapter
