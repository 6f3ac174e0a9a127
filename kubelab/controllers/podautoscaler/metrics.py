"""The resource metrics client the HPA controller reads (pkg/controller/podautoscaler/metrics/
client.go: resourceMetricsClient.GetResourceMetric, getPodMetrics): the pods' usage from
metrics.k8s.io/v1beta1, summed over their containers (or the one named), in milli-units.
"""

from __future__ import annotations

from kubelab.api.errors import ApiError
from kubelab.api.meta import parse_time
from kubelab.api.quantity import parse_quantity
from kubelab.client.client import Client
from kubelab.controllers.podautoscaler.replica_calculator import PodMetric, ReplicaCalculationError

__all__ = ["get_resource_metric"]


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
