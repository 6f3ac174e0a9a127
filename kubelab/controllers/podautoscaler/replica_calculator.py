"""How many replicas a metric asks for (pkg/controller/podautoscaler/replica_calculator.go:
GetResourceReplicas, groupPods, calculatePodRequests, removeMetricsForPods; and
metrics/utilization.go GetResourceUtilizationRatio; for the custom and external metrics,
GetMetricReplicas, GetObjectMetricReplicas, getUsageRatioReplicaCount,
GetObjectPerPodMetricReplicas, getReadyPodsCount, GetExternalMetricReplicas and
GetExternalPerPodMetricReplicas).

    desired = ceil(current utilization / target utilization * ready pods)

with the corrections that keep it from flapping:

- a ratio within the tolerance (0.1: 1.0 +- 10%) changes nothing;
- pods being deleted or failed are left out; pending pods, and (for CPU) pods not yet ready or
  whose metric was taken before they became ready, are "unready": left out of the ratio, and on
  a scale-up counted as using nothing;
- pods without a metric are "missing": on a scale-down counted as using 100% of their request,
  on a scale-up as using nothing;
- a recomputed ratio that crosses 1.0, or lands within the tolerance, changes nothing.

Everything here is a pure function of the pods, their metrics and the clock, so upstream's
replica_calculator_test.go tables transcribe directly (tests/test_podautoscaler.py,
tests/test_hpa_metric_types.py).

The other metric types:

- Pods (an AverageValue per pod, from custom.metrics.k8s.io): calcPlainMetricReplicas, the
  same corrections as above, without CPU's readiness rules;
- Object and External with a Value target: the ratio of the value to the target, times the
  pods that are Running and Ready (from zero replicas: ceil of the ratio);
- Object and External with an AverageValue target: the value divided by the target, against
  the target's status.replicas for the tolerance; the reported average is the value over
  status.replicas (over one while status.replicas is still 0, where Go divides by zero).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kubelab.api import Object
from kubelab.api.errors import ParseError
from kubelab.api.quantity import parse_quantity
from kubelab.controllers.controller_utils import get_pod_ready_condition, seconds

__all__ = [
    "CPU_INITIALIZATION_PERIOD",
    "DELAY_OF_INITIAL_READINESS_STATUS",
    "TOLERANCE",
    "PodMetric",
    "ReplicaCalculationError",
    "calculate_pod_requests",
    "get_external_metric_replicas",
    "get_external_per_pod_metric_replicas",
    "get_metric_replicas",
    "get_metric_usage_ratio",
    "get_object_metric_replicas",
    "get_object_per_pod_metric_replicas",
    "get_raw_resource_replicas",
    "get_ready_pods_count",
    "get_resource_replicas",
    "get_resource_utilization_ratio",
    "get_usage_ratio_replica_count",
    "group_pods",
]

TOLERANCE = 0.1                          # --horizontal-pod-autoscaler-tolerance
CPU_INITIALIZATION_PERIOD = 300.0        # --horizontal-pod-autoscaler-cpu-initialization-period (5m)
DELAY_OF_INITIAL_READINESS_STATUS = 30.0  # --horizontal-pod-autoscaler-initial-readiness-delay


class ReplicaCalculationError(Exception):
    """An error the controller reports in the ScalingActive condition and an event."""


@dataclass(frozen=True)
class PodMetric:
    """metricsclient.PodMetric: a pod's usage in milli-units, when and over what window."""

    value: int
    timestamp: float = 0.0
    window: float = 15.0


def group_pods(pods: list[Object], metrics: dict[str, PodMetric], resource: str, now: float,
               cpu_initialization_period: float = CPU_INITIALIZATION_PERIOD,
               delay_of_initial_readiness_status: float = DELAY_OF_INITIAL_READINESS_STATUS,
               ) -> tuple[int, set[str], set[str], set[str]]:
    """groupPods: (ready pod count, unready, missing, ignored pod names)."""
    ready, unready, missing, ignored = 0, set(), set(), set()
    for pod in pods:
        name = pod["metadata"]["name"]
        status = pod.get("status") or {}
        if pod["metadata"].get("deletionTimestamp") or status.get("phase") == "Failed":
            ignored.add(name)
            continue
        if status.get("phase") == "Pending":
            unready.add(name)
            continue
        metric = metrics.get(name)
        if metric is None:
            missing.add(name)
            continue
        if resource == "cpu":
            condition = get_pod_ready_condition(pod)
            start = status.get("startTime")
            if condition is None or not start:
                not_ready = True
            else:
                started = seconds(start)
                changed = seconds(condition["lastTransitionTime"]) \
                    if condition.get("lastTransitionTime") else 0.0
                if started + cpu_initialization_period > now:
                    # still starting: unready, or its sample predates one window of readiness
                    not_ready = condition.get("status") == "False" or \
                        metric.timestamp < changed + metric.window
                else:
                    # unready and never ready since the start
                    not_ready = condition.get("status") == "False" and \
                        started + delay_of_initial_readiness_status > changed
            if not_ready:
                unready.add(name)
                continue
        ready += 1
    return ready, unready, missing, ignored


def calculate_pod_requests(pods: list[Object], container: str, resource: str) -> dict[str, int]:
    """calculatePodRequests: each pod's request of resource in milli-units (its containers',
    or only the named container's)."""
    requests: dict[str, int] = {}
    for pod in pods:
        total = 0
        for c in (pod.get("spec") or {}).get("containers") or []:
            if container and c.get("name") != container:
                continue
            request = ((c.get("resources") or {}).get("requests") or {}).get(resource)
            if request is None:
                raise ReplicaCalculationError(
                    f"missing request for {resource} in container {c.get('name')} of Pod "
                    f"{pod['metadata']['name']}")
            try:
                total += parse_quantity(request).milli_value()
            except ParseError as err:
                raise ReplicaCalculationError(str(err)) from None
        requests[pod["metadata"]["name"]] = total
    return requests


def get_resource_utilization_ratio(metrics: dict[str, PodMetric], requests: dict[str, int],
                                   target_utilization: int) -> tuple[float, int, int]:
    """GetResourceUtilizationRatio: (usage ratio, utilization in whole percent, average raw
    milli-value). The ratio is taken from the truncated percentage, as upstream's."""
    metrics_total = requests_total = entries = 0
    for name, metric in metrics.items():
        request = requests.get(name)
        if request is None:  # missing requests are checked elsewhere: an extraneous metric
            continue
        metrics_total += metric.value
        requests_total += request
        entries += 1
    if requests_total == 0:
        raise ReplicaCalculationError("no metrics returned matched known pods")
    utilization = metrics_total * 100 // requests_total
    return utilization / target_utilization, utilization, metrics_total // entries


def get_resource_replicas(current_replicas: int, target_utilization: int, resource: str,
                          pods: list[Object], metrics: dict[str, PodMetric], now: float, *,
                          container: str = "", tolerance: float = TOLERANCE,
                          cpu_initialization_period: float = CPU_INITIALIZATION_PERIOD,
                          delay_of_initial_readiness_status: float = DELAY_OF_INITIAL_READINESS_STATUS,
                          ) -> tuple[int, int, int]:
    """GetResourceReplicas after its metrics were fetched: (replicas, utilization %, raw
    average milli-value). Raises ReplicaCalculationError in upstream's words."""
    if not pods:
        raise ReplicaCalculationError("no pods returned by selector while calculating replica count")
    metrics = dict(metrics)
    ready, unready, missing, ignored = group_pods(
        pods, metrics, resource, now, cpu_initialization_period, delay_of_initial_readiness_status)
    for name in ignored | unready:  # removeMetricsForPods
        metrics.pop(name, None)
    requests = calculate_pod_requests(pods, container, resource)
    if not metrics:
        raise ReplicaCalculationError("did not receive metrics for targeted pods (pods might be unready)")
    usage_ratio, utilization, raw = get_resource_utilization_ratio(metrics, requests, target_utilization)

    scale_up_with_unready = bool(unready) and usage_ratio > 1.0
    if not scale_up_with_unready and not missing:
        if abs(1.0 - usage_ratio) <= tolerance:
            return current_replicas, utilization, raw  # the change would be too small
        return math.ceil(usage_ratio * ready), utilization, raw

    if missing:
        if usage_ratio < 1.0:    # scale-down: missing pods use 100% of their request
            for name in missing:
                metrics[name] = PodMetric(requests[name])
        elif usage_ratio > 1.0:  # scale-up: missing pods use nothing
            for name in missing:
                metrics[name] = PodMetric(0)
    if scale_up_with_unready:    # scale-up: unready pods use nothing
        for name in unready:
            metrics[name] = PodMetric(0)

    new_ratio, _, _ = get_resource_utilization_ratio(metrics, requests, target_utilization)
    if abs(1.0 - new_ratio) <= tolerance or (usage_ratio < 1.0 < new_ratio) or \
            (usage_ratio > 1.0 > new_ratio):
        # too small a change, or the pods we could not see would reverse its direction
        return current_replicas, utilization, raw
    new_replicas = math.ceil(new_ratio * len(metrics))
    if (new_ratio < 1.0 and new_replicas > current_replicas) or \
            (new_ratio > 1.0 and new_replicas < current_replicas):
        return current_replicas, utilization, raw
    return new_replicas, utilization, raw


def get_metric_usage_ratio(metrics: dict[str, PodMetric], target_usage: int) -> tuple[float, int]:
    """GetMetricUsageRatio: (average usage / target, average usage in milli-units)."""
    usage = sum(m.value for m in metrics.values()) // len(metrics)
    return usage / target_usage, usage


def get_raw_resource_replicas(current_replicas: int, target_usage: int, resource: str,
                              pods: list[Object], metrics: dict[str, PodMetric], now: float, *,
                              tolerance: float = TOLERANCE,
                              cpu_initialization_period: float = CPU_INITIALIZATION_PERIOD,
                              delay_of_initial_readiness_status: float = DELAY_OF_INITIAL_READINESS_STATUS,
                              ) -> tuple[int, int]:
    """GetRawResourceReplicas (calcPlainMetricReplicas) for an AverageValue target in
    milli-units: (replicas, average usage)."""
    if not pods:
        raise ReplicaCalculationError("no pods returned by selector while calculating replica count")
    metrics = dict(metrics)
    ready, unready, missing, ignored = group_pods(
        pods, metrics, resource, now, cpu_initialization_period, delay_of_initial_readiness_status)
    for name in ignored | unready:
        metrics.pop(name, None)
    if not metrics:
        raise ReplicaCalculationError("did not receive metrics for targeted pods (pods might be unready)")
    usage_ratio, usage = get_metric_usage_ratio(metrics, target_usage)
    scale_up_with_unready = bool(unready) and usage_ratio > 1.0
    if not scale_up_with_unready and not missing:
        if abs(1.0 - usage_ratio) <= tolerance:
            return current_replicas, usage
        return math.ceil(usage_ratio * ready), usage
    if missing:
        for name in missing:
            metrics[name] = PodMetric(target_usage if usage_ratio < 1.0 else 0)
    if scale_up_with_unready:
        for name in unready:
            metrics[name] = PodMetric(0)
    new_ratio, _ = get_metric_usage_ratio(metrics, target_usage)
    if abs(1.0 - new_ratio) <= tolerance or (usage_ratio < 1.0 < new_ratio) or \
            (usage_ratio > 1.0 > new_ratio):
        return current_replicas, usage
    return math.ceil(new_ratio * len(metrics)), usage


# --- hpacsi --- the custom and external metric types

def get_metric_replicas(current_replicas: int, target_usage: int, pods: list[Object],
                        metrics: dict[str, PodMetric], now: float, *,
                        tolerance: float = TOLERANCE) -> tuple[int, int]:
    """GetMetricReplicas after GetRawMetric: calcPlainMetricReplicas with no resource, so no
    pod is unready for want of CPU readiness. (replicas, average usage in milli-units)."""
    return get_raw_resource_replicas(current_replicas, target_usage, "", pods, metrics, now,
                                     tolerance=tolerance)


def get_ready_pods_count(pods: list[Object]) -> int:
    """getReadyPodsCount: the Running pods whose Ready condition is True."""
    if not pods:
        raise ReplicaCalculationError("no pods returned by selector while calculating replica count")
    count = 0
    for pod in pods:
        condition = get_pod_ready_condition(pod)
        if (pod.get("status") or {}).get("phase") == "Running" and condition is not None \
                and condition.get("status") == "True":
            count += 1
    return count


def get_usage_ratio_replica_count(current_replicas: int, usage_ratio: float, pods: list[Object],
                                  *, tolerance: float = TOLERANCE) -> int:
    """getUsageRatioReplicaCount: from zero replicas the ratio alone decides (scale to zero or
    to n); otherwise nothing within the tolerance, else the ratio times the ready pods."""
    if current_replicas == 0:
        return math.ceil(usage_ratio)
    if abs(1.0 - usage_ratio) <= tolerance:
        return current_replicas
    try:
        ready = get_ready_pods_count(pods)
    except ReplicaCalculationError as err:
        raise ReplicaCalculationError(f"unable to calculate ready pods: {err}") from None
    return math.ceil(usage_ratio * ready)


def get_object_metric_replicas(current_replicas: int, target_usage: int, usage: int,
                               pods: list[Object], *, tolerance: float = TOLERANCE
                               ) -> tuple[int, int]:
    """GetObjectMetricReplicas after GetObjectMetric: (replicas, the object's value)."""
    replicas = get_usage_ratio_replica_count(current_replicas, usage / target_usage, pods,
                                             tolerance=tolerance)
    return replicas, usage


def _per_pod(status_replicas: int, target_per_pod: int, usage: int, tolerance: float
             ) -> tuple[int, int]:
    """The AverageValue arithmetic GetObjectPerPodMetricReplicas and
    GetExternalPerPodMetricReplicas share: (replicas, usage per current replica)."""
    replicas = status_replicas
    usage_ratio = usage / (target_per_pod * status_replicas) if status_replicas else math.inf
    if abs(1.0 - usage_ratio) > tolerance:  # a change large enough
        replicas = math.ceil(usage / target_per_pod)
    return replicas, math.ceil(usage / (status_replicas or 1))


def get_object_per_pod_metric_replicas(status_replicas: int, target_average_usage: int,
                                       usage: int, *, tolerance: float = TOLERANCE
                                       ) -> tuple[int, int]:
    """GetObjectPerPodMetricReplicas: (replicas, the value per current replica)."""
    return _per_pod(status_replicas, target_average_usage, usage, tolerance)


def get_external_metric_replicas(current_replicas: int, target_usage: int, values: list[int],
                                 pods: list[Object], *, tolerance: float = TOLERANCE
                                 ) -> tuple[int, int]:
    """GetExternalMetricReplicas after GetExternalMetric: the series' values add up, then as
    an object's value. (replicas, the sum)."""
    usage = sum(values)
    replicas = get_usage_ratio_replica_count(current_replicas, usage / target_usage, pods,
                                             tolerance=tolerance)
    return replicas, usage


def get_external_per_pod_metric_replicas(status_replicas: int, target_usage_per_pod: int,
                                         values: list[int], *, tolerance: float = TOLERANCE
                                         ) -> tuple[int, int]:
    """GetExternalPerPodMetricReplicas: (replicas, the sum per current replica)."""
    return _per_pod(status_replicas, target_usage_per_pod, sum(values), tolerance)
