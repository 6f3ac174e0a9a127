"""The HPA's Pods, Object and External metrics: the replica calculator against upstream's
replica_calculator_test.go cases for those types, and the controller on a cluster, with and
without the simulated custom and external metrics adapter (kubelab/cluster/custom_metrics.py)."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError
from kubelab.api.meta import rfc3339
from kubelab.controllers.podautoscaler.horizontal import go_label_selector
from kubelab.controllers.podautoscaler.replica_calculator import (
    PodMetric,
    ReplicaCalculationError,
    get_external_metric_replicas,
    get_external_per_pod_metric_replicas,
    get_metric_replicas,
    get_object_metric_replicas,
    get_object_per_pod_metric_replicas,
)

NOW = 180.0
HOT, COOL = NOW, 0.0  # hotCPUCreationTime (now), coolCPUCreationTime (3 minutes ago)
T, F = "True", "False"


def pods(n: int, readiness: list[str] | None = None, start: list[float] | None = None
         ) -> list[dict[str, Any]]:
    """prepareTestClientSet's pods, Running, Ready per readiness."""
    return [{"metadata": {"name": f"test-pod-{i}", "namespace": "test-namespace"},
             "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
             "status": {"phase": "Running",
                        "startTime": rfc3339(start[i] if start else COOL),
                        "conditions": [{"type": "Ready",
                                        "status": readiness[i] if readiness else T}]}}
            for i in range(n)]


def run(kind: str, current: int, levels: list[int], target: int,
        readiness: list[str] | None = None, start: list[float] | None = None) -> tuple[int, int]:
    """runTest's switch on metricType; the testing tolerance is upstream's default 0.1."""
    listed = pods(current, readiness, start)
    if kind == "pods":  # podMetric: GetMetricReplicas, one value per pod, timestamp 0
        metrics = {f"test-pod-{i}": PodMetric(level, 0.0, 60.0) for i, level in enumerate(levels)}
        return get_metric_replicas(current, target, listed, metrics, NOW)
    if kind == "object":
        return get_object_metric_replicas(current, target, levels[0], listed)
    if kind == "objectPerPod":
        return get_object_per_pod_metric_replicas(current, target, levels[0])
    if kind == "external":
        return get_external_metric_replicas(current, target, levels, listed)
    return get_external_per_pod_metric_replicas(current, target, levels)


# (upstream test, metric type, currentReplicas, levels, target, readiness, start,
#  expectedReplicas, expectedUtilization)
METRIC_CASES = [
    ("TestReplicaCalcScaleUpCM", "pods", 3, [20000, 10000, 30000], 15000, None, None, 4, 20000),
    ("TestReplicaCalcScaleUpCMUnreadyHotCpuNoLessScale", "pods", 3, [50000, 10000, 30000], 15000,
     [T, T, F], [COOL, COOL, HOT], 6, 30000),
    ("TestReplicaCalcScaleUpCMUnreadyHotCpuScaleWouldScaleDown", "pods", 3, [50000, 15000, 30000],
     15000, [F, T, F], [HOT, COOL, HOT], 7, 31666),
    ("TestReplicaCalcScaleUpCMObject", "object", 3, [20000], 15000, None, None, 4, 20000),
    ("TestReplicaCalcScaleUpCMPerPodObject", "objectPerPod", 3, [20000], 5000, None, None, 4, 6667),
    ("TestReplicaCalcScaleUpCMObjectIgnoresUnreadyPods", "object", 3, [50000], 10000,
     [F, T, F], None, 5, 50000),
    ("TestReplicaCalcScaleUpCMExternal", "pods", 1, [8600], 4400, None, None, 2, 8600),
    ("TestReplicaCalcScaleUpCMExternalIgnoresUnreadyPods", "external", 3, [8600], 4400,
     [F, T, F], None, 2, 8600),
    ("TestReplicaCalcScaleUpCMExternalNoLabels", "pods", 1, [8600], 4400, None, None, 2, 8600),
    ("TestReplicaCalcScaleUpPerPodCMExternal", "externalPerPod", 3, [8600], 2150, None, None, 4, 2867),
    ("TestReplicaCalcScaleDownCM", "pods", 5, [12000] * 5, 20000, None, None, 3, 12000),
    ("TestReplicaCalcScaleDownPerPodCMObject", "objectPerPod", 5, [6000], 2000, None, None, 3, 1200),
    ("TestReplicaCalcScaleDownCMObject", "object", 5, [12000], 20000, None, None, 3, 12000),
    ("TestReplicaCalcScaleDownCMExternal", "external", 5, [8600], 14334, None, None, 3, 8600),
    ("TestReplicaCalcScaleDownPerPodCMExternal", "externalPerPod", 5, [8600], 2867, None, None, 3, 1720),
    ("TestReplicaCalcToleranceCM", "pods", 3, [20000, 21000, 21000], 20000, None, None, 3, 20666),
    ("TestReplicaCalcToleranceCMObject", "object", 3, [20666], 20000, None, None, 3, 20666),
    ("TestReplicaCalcTolerancePerPodCMObject", "objectPerPod", 4, [20166], 5000, None, None, 4, 5042),
    ("TestReplicaCalcToleranceCMExternal", "external", 3, [8600], 8888, None, None, 3, 8600),
    ("TestReplicaCalcTolerancePerPodCMExternal", "externalPerPod", 3, [8600], 2900, None, None, 3, 2867),
]


@pytest.mark.parametrize(("name", "kind", "current", "levels", "target", "readiness", "start",
                          "replicas", "utilization"), METRIC_CASES, ids=[c[0] for c in METRIC_CASES])
def test_replica_calculator_metric_types_upstream_table(
        name: str, kind: str, current: int, levels: list[int], target: int,
        readiness: list[str] | None, start: list[float] | None, replicas: int,
        utilization: int) -> None:
    assert run(kind, current, levels, target, readiness, start) == (replicas, utilization)


def test_from_zero_replicas_the_ratio_alone_decides() -> None:
    """getUsageRatioReplicaCount: currentReplicas 0 skips the tolerance and the ready pods
    (scale to zero or to n), where a value within the tolerance keeps what there is."""
    assert get_object_metric_replicas(0, 1000, 2500, []) == (3, 2500)
    assert get_external_metric_replicas(0, 1000, [0], []) == (0, 0)
    assert get_object_metric_replicas(2, 1000, 1050, []) == (2, 1050)  # within the tolerance
    with pytest.raises(ReplicaCalculationError, match="unable to calculate ready pods: no pods "
                       "returned by selector while calculating replica count"):
        get_object_metric_replicas(2, 1000, 5000, [])


def test_pods_metrics_with_missing_pods_change_nothing_that_would_reverse() -> None:
    """calcPlainMetricReplicas: a pod without a value counts as the target on a scale-down."""
    metrics = {"test-pod-0": PodMetric(5000, 0.0, 60.0)}  # test-pod-1 has none
    assert get_metric_replicas(2, 10000, pods(2), metrics, NOW) == (2, 5000)
    with pytest.raises(ReplicaCalculationError, match="did not receive metrics for targeted pods"):
        get_metric_replicas(1, 10000, pods(1), {}, NOW)


def test_go_label_selector_prints_as_fmt_plus_v() -> None:
    assert go_label_selector(None) == "nil"
    assert go_label_selector({"matchLabels": {"queue": "jobs"}}) == \
        "&LabelSelector{MatchLabels:map[string]string{queue: jobs,}," \
        "MatchExpressions:[]LabelSelectorRequirement{},}"


# ---------------------------------------------------------------- on a cluster

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: app, image: nginx}
"""


def hpa(*metrics: str) -> str:
    return ("apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\n"
            "spec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n"
            "  minReplicas: 1\n  maxReplicas: 10\n  metrics:\n" + "".join(metrics))


PODS = """  - type: Pods
    pods:
      metric: {name: http_requests}
      target: {type: AverageValue, averageValue: "10"}
"""
OBJECT = """  - type: Object
    object:
      describedObject: {apiVersion: v1, kind: Service, name: web}
      metric: {name: requests_per_second}
      target: {type: Value, value: "100"}
"""
EXTERNAL = """  - type: External
    external:
      metric: {name: queue_messages_ready, selector: {matchLabels: {queue: jobs}}}
      target: {type: AverageValue, averageValue: "30"}
"""


def cluster(custom_metrics: bool, *metrics: str) -> Cluster:
    c = Cluster(nodes=2, custom_metrics=custom_metrics)
    c.apply(DEPLOYMENT)
    c.clock.run(until=20)
    c.apply(hpa(*metrics))
    return c


def events(c: Cluster) -> list[tuple[str, str]]:
    return [(e["reason"], e["message"]) for e in c.client.list("events", "default")["items"]
            if e["involvedObject"]["kind"] == "HorizontalPodAutoscaler"]


def conditions(c: Cluster) -> dict[str, tuple[str, str, str]]:
    status = c.client.get("horizontalpodautoscalers", "web")["status"]
    return {x["type"]: (x["status"], x["reason"], x["message"]) for x in status.get("conditions") or []}


def test_without_an_adapter_the_hpa_says_the_apis_are_missing_in_upstreams_words() -> None:
    c = cluster(False, PODS, OBJECT, EXTERNAL)
    assert not c.metrics
    with pytest.raises(RuntimeError, match=r"no custom metrics adapter .* Cluster\(custom_metrics=True\)"):
        c.metrics.set_pod_metric("http_requests", "1", selector="app=web")
    c.clock.run(until=60)
    missing = "unable to fetch metrics from custom metrics API: no custom metrics API " \
        "(custom.metrics.k8s.io) registered"
    assert conditions(c)["ScalingActive"] == (
        "False", "FailedGetPodsMetric",
        f"the HPA was unable to compute the replica count: unable to get metric http_requests: {missing}")
    seen = dict(events(c))
    assert seen["FailedGetPodsMetric"] == f"unable to get metric http_requests: {missing}"
    assert seen["FailedGetObjectMetric"] == \
        f"unable to get metric requests_per_second: Service on default web/{missing}"
    assert seen["FailedGetExternalMetric"] == (
        "unable to get external metric default/queue_messages_ready/&LabelSelector{MatchLabels:"
        "map[string]string{queue: jobs,},MatchExpressions:[]LabelSelectorRequirement{},}: unable "
        "to fetch metrics from external metrics API: the server could not find the requested resource")
    assert seen["FailedComputeMetricsReplicas"] == \
        f"invalid metrics (3 invalid out of 3), first error is: failed to get pods metric value: " \
        f"unable to get metric http_requests: {missing}"
    assert c.client.get("deployments", "web")["spec"]["replicas"] == 2
    described = c.kubectl("describe hpa web")
    assert '"http_requests" on pods:' in described and "<unknown> / 10" in described


def test_pods_metric_scales_up_from_the_adapters_values() -> None:
    c = cluster(True, PODS)
    assert c.metrics
    c.metrics.set_pod_metric("http_requests", "25", selector="app=web")  # 2.5 x the target
    c.clock.run(until=40)  # the first sync, at 35 s
    assert events(c) == [("SuccessfulRescale",  # 5 wanted, max(2 x 2, 4) allowed
                          "New size: 4; reason: pods metric http_requests above target")]
    assert conditions(c)["ScalingLimited"][:2] == ("True", "ScaleUpLimit")
    status = c.client.get("horizontalpodautoscalers", "web")["status"]
    assert status["currentMetrics"] == [{"type": "Pods", "pods": {
        "metric": {"name": "http_requests"}, "current": {"averageValue": "25"}}}]
    assert conditions(c)["ScalingActive"][1:] == (
        "ValidMetricFound",
        "the HPA was able to successfully calculate a replica count from pods metric http_requests")
    row = c.kubectl("get hpa").splitlines()[1].split()
    assert row[:4] == ["web", "Deployment/web", "25/10", "1"]
    c.clock.run(until=120)  # the new pods have no value of their own: the selector's covers them
    assert c.client.get("deployments", "web")["spec"]["replicas"] == 10
    c.metrics.set_pod_metric("http_requests", "0", selector="app=web")
    c.clock.run(until=150)
    assert conditions(c)["AbleToScale"][1] == "ScaleDownStabilized"  # the 5-minute window
    assert c.client.get("deployments", "web")["spec"]["replicas"] == 10


def test_object_and_external_metrics_and_what_describe_prints() -> None:
    c = cluster(True, OBJECT, EXTERNAL)
    assert c.metrics
    c.metrics.set_object_metric("requests_per_second", "150", kind="Service", name="web")
    c.metrics.set_external_metric("queue_messages_ready", "200", labels={"queue": "jobs"})
    c.metrics.set_external_metric("queue_messages_ready", "999", labels={"queue": "other"})
    c.clock.run(until=40)
    status = c.client.get("horizontalpodautoscalers", "web")["status"]
    obj, ext = status["currentMetrics"]
    assert obj["object"]["current"] == {"value": "150"}
    assert obj["object"]["describedObject"] == {"apiVersion": "v1", "kind": "Service", "name": "web"}
    assert ext["external"]["current"] == {"averageValue": "100"}  # 200 over 2 replicas
    # the object wants ceil(1.5 x 2 ready) = 3, the queue ceil(200 / 30) = 7: the largest wins
    assert c.client.get("deployments", "web")["spec"]["replicas"] == 4  # max(2 x 2, 4)
    described = c.kubectl("describe hpa web")
    assert '"requests_per_second" on Service/web (target value):' in described
    assert '"queue_messages_ready" (target average value):' in described
    assert "150 / 100" in described and "100 / 30" in described
    row = c.kubectl("get hpa").splitlines()[1]
    assert "150/100, 100/30 (avg)" in row


def test_the_adapter_answers_what_it_lacks_as_its_provider_does() -> None:
    c = cluster(True)
    assert c.metrics
    with pytest.raises(ApiError) as err:
        c.client.custom_metrics("default", "pods", "*", "nothing", label_selector="app=web")
    assert (err.value.code, err.value.message) == \
        (404, "the server could not find the metric nothing for pods")
    with pytest.raises(ApiError) as err:
        c.client.custom_metrics("default", "services", "web", "rps")
    assert err.value.message == \
        "the server could not find the metric rps for services.custom.metrics.k8s.io web"
    with pytest.raises(ApiError) as err:
        c.client.external_metrics("default", "queue")
    assert err.value.message == "the server could not find the metric queue for provided labels"
    c.metrics.set_object_metric("load", "3", kind="Namespace", name="default")
    value = c.client.custom_metrics("default", "namespaces", "", "load")
    assert (value["describedObject"]["kind"], value["value"]) == ("Namespace", "3")
    with pytest.raises(ApiError, match="exactly one of pod= or selector="):
        c.metrics.set_pod_metric("x", "1")
    with pytest.raises(ApiError, match="invalid metric value"):
        c.metrics.set_external_metric("x", "lots")
    c.metrics.running = False  # the adapter's pod is gone: the APIService is unavailable
    with pytest.raises(ApiError) as err:
        c.client.external_metrics("default", "queue")
    assert err.value.code == 503
