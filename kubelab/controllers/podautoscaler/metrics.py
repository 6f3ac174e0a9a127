"""The metrics clients the HPA controller reads (pkg/controller/podautoscaler/metrics/client.go):

- resourceMetricsClient.GetResourceMetric, getPodMetrics: the pods' usage from
  metrics.k8s.io/v1beta1, summed over their containers (or the one named), in milli-units;
- customMetricsClient.GetRawMetric, GetObjectMetric: a metric of the pods, or of one object,
  from custom.metrics.k8s.io (v1beta2);
- externalMetricsClient.GetExternalMetric: the values of an external metric's series, from
  external.metrics.k8s.io/v1beta1.

Departure: k8s.io/metrics' custom metrics client first looks the group up in discovery
(pkg/client/custom_metrics/discovery.go fetchVersions) and says "no custom metrics API
(custom.metrics.k8s.io) registered" when it is absent; here that is read from the 404 the
server answers for a group it does not serve.
"""

from __future__ import annotations

from kubelab.api.errors import ApiError
from kubelab.api.meta import parse_time
from kubelab.api.quantity import parse_quantity
from kubelab.client.client import Client
from kubelab.controllers.podautoscaler.replica_calculator import PodMetric, ReplicaCalculationError

__all__ = ["METRIC_SERVER_DEFAULT_METRIC_WINDOW", "get_external_metric", "get_object_metric",
           "get_raw_metric", "get_resource_metric"]

METRIC_SERVER_DEFAULT_METRIC_WINDOW = 60.0  # metricServerDefaultMetricWindow (a minute)
SERVER_NOT_FOUND = "the server could not find the requested resource"


def get_resource_metric(client: Client, resource: str, namespace: str, selector: str,
                        container: str = "") -> tuple[dict[str, PodMetric], float]:
    """(pod name -> metric, the first sample's timestamp)."""
    try:
        listing = client.metrics("list", "pods", namespace, label_selector=selector)
    except ApiError as err:
        raise ReplicaCalculationError(
            f"unable to fetch metrics from resource metrics API: {err.message} "
            f"(get pods.metrics.k8s.io)") from None
    items = listing.get("items") or []
    if not items:
        raise ReplicaCalculationError("no metrics returned from resource metrics API")
    result: dict[str, PodMetric] = {}
    for item in items:
        total, missing = 0, False
        for c in item.get("containers") or []:
            if container and c.get("name") != container:
                continue
            usage = (c.get("usage") or {}).get(resource)
            if usage is None:
                missing = True  # a container without this resource: the pod has no metric
                break
            total += parse_quantity(usage).milli_value()
        if not missing:
            window = str(item.get("window") or "15s").removesuffix("s")
            result[item["metadata"]["name"]] = PodMetric(total, parse_time(item["timestamp"]),
                                                         float(window or 0))
    return result, parse_time(items[0]["timestamp"])


# --- hpacsi ---
def _custom_error(err: ApiError) -> ReplicaCalculationError:
    message = err.message
    if err.code == 404 and message == SERVER_NOT_FOUND:  # the group is not in discovery
        message = "no custom metrics API (custom.metrics.k8s.io) registered"
    return ReplicaCalculationError(f"unable to fetch metrics from custom metrics API: {message}")


def get_raw_metric(client: Client, metric: str, namespace: str, selector: str,
                   metric_selector: str) -> tuple[dict[str, PodMetric], float]:
    """customMetricsClient.GetRawMetric: (pod name -> metric, the first item's timestamp)."""
    try:
        listing = client.custom_metrics(namespace, "pods", "*", metric, label_selector=selector,
                                        metric_selector=metric_selector)
    except ApiError as err:
        raise _custom_error(err) from None
    items = listing.get("items") or []
    if not items:
        raise ReplicaCalculationError("no metrics returned from custom metrics API")
    result: dict[str, PodMetric] = {}
    for item in items:
        window = item.get("windowSeconds")
        result[item["describedObject"]["name"]] = PodMetric(
            parse_quantity(item["value"]).milli_value(), parse_time(item["timestamp"]),
            float(window) if window is not None else METRIC_SERVER_DEFAULT_METRIC_WINDOW)
    return result, parse_time(items[0]["timestamp"])


def get_object_metric(client: Client, metric: str, namespace: str, object_ref: dict[str, str],
                      metric_selector: str) -> tuple[int, float]:
    """customMetricsClient.GetObjectMetric: the object's value in milli-units, and when. A
    Namespace is asked at the root scope, for the HPA's own namespace (whatever its name)."""
    api_version, kind = object_ref.get("apiVersion", ""), object_ref.get("kind", "")
    group = api_version.rpartition("/")[0] if "/" in api_version else ""
    try:
        if kind == "Namespace" and not group:
            value = client.custom_metrics(namespace, "namespaces", "", metric,
                                          metric_selector=metric_selector)
        else:
            resource = client.resource_for({"apiVersion": api_version, "kind": kind}).qualified
            value = client.custom_metrics(namespace, resource, object_ref.get("name", ""), metric,
                                          metric_selector=metric_selector)
    except ApiError as err:
        raise _custom_error(err) from None
    return parse_quantity(value["value"]).milli_value(), parse_time(value["timestamp"])


def get_external_metric(client: Client, metric: str, namespace: str, selector: str
                        ) -> tuple[list[int], float]:
    """externalMetricsClient.GetExternalMetric: every matching series' value in milli-units."""
    try:
        listing = client.external_metrics(namespace, metric, label_selector=selector)
    except ApiError as err:
        raise ReplicaCalculationError(
            f"unable to fetch metrics from external metrics API: {err.message}") from None
    items = listing.get("items") or []
    if not items:
        raise ReplicaCalculationError("no metrics returned from external metrics API")
    return [parse_quantity(m["value"]).milli_value() for m in items], \
        parse_time(items[0]["timestamp"])
