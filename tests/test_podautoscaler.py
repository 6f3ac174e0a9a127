"""The HorizontalPodAutoscaler: the replica calculator against upstream's
replica_calculator_test.go tables, the normalization against horizontal_test.go's, and the
controller, the API and kubectl on a cluster whose load is driven by c.faults.load."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

import pytest

from kubelab import Cluster
from kubelab.api.meta import rfc3339
from kubelab.controllers.podautoscaler.horizontal import (
    HorizontalController,
    _Recommendation,
    _ScaleEvent,
    calculate_scale_down_limit_with_behaviors,
    calculate_scale_up_limit,
    calculate_scale_up_limit_with_scaling_rules,
    convert_desired_replicas_with_rules,
)
from kubelab.controllers.podautoscaler.replica_calculator import (
    PodMetric,
    ReplicaCalculationError,
    get_raw_resource_replicas,
    get_resource_replicas,
    group_pods,
)
from kubelab.serve.server import kubectl_binary

NOW = 180.0          # replica_calculator_test.go: cool pods started 3 minutes ago (here at 0)
HOT, COOL = NOW, 0.0
T, F = "True", "False"


def calc_pods(n: int, requests: list[str], readiness: list[str] | None = None,
              start: list[float] | None = None, phase: list[str] | None = None,
              deleting: list[bool] | None = None) -> list[dict[str, Any]]:
    """prepareTestClientSet's pods: test-pod-<i>, Ready per readiness (no transition time),
    one container requesting requests[i] (upstream's two containers halve nothing here)."""
    pods = []
    for i in range(n):
        pod: dict[str, Any] = {
            "metadata": {"name": f"test-pod-{i}", "namespace": "test-namespace"},
            "spec": {"containers": [{"name": "c", "resources": (
                {"requests": {"cpu": requests[i]}} if i < len(requests) else {})}]},
            "status": {"phase": (phase or [])[i] if phase else "Running",
                       "startTime": rfc3339(start[i] if start else COOL),
                       "conditions": [{"type": "Ready",
                                       "status": readiness[i] if readiness and i < len(readiness) else T}]}}
        if deleting and deleting[i]:
            pod["metadata"]["deletionTimestamp"] = rfc3339(NOW)
        pods.append(pod)
    return pods


def calc(current: int, requests: list[str], levels: list[int], target: int, *,
         names: list[str] | None = None, pods: int | None = None, **pod_options: Any
         ) -> tuple[int, int, int]:
    """runTest for a resource metric: metrics with timestamp 0 and a one-minute window, as the
    fake metrics client answers; the testing tolerance, CPU initialization period (2 min) and
    readiness delay (10 s)."""
    count = max(current, len(pod_options.get("phase") or []), pods or 0)
    metrics = {(names[i] if names and i < len(names) else f"test-pod-{i}"):
               PodMetric(level, 0.0, 60.0) for i, level in enumerate(levels)}
    return get_resource_replicas(current, target, "cpu", calc_pods(count, requests, **pod_options),
                                 metrics, NOW, cpu_initialization_period=120.0,
                                 delay_of_initial_readiness_status=10.0)


ONE = "1.0"
# (name, current, requests, levels, target, options, expected replicas, utilization, raw value)
# from replica_calculator_test.go; the raw value is upstream's expectedValue over its two
# containers per pod.
REPLICA_CALC = [
    ("ScaleUp", 3, [ONE] * 3, [300, 500, 700], 30, {}, 5, 50, 500),
    ("ScaleUpUnreadyLessScale", 3, [ONE] * 3, [300, 500, 700], 30,
     {"readiness": [F, T, T]}, 4, 60, 600),
    ("ScaleUpHotCpuLessScale", 3, [ONE] * 3, [300, 500, 700], 30,
     {"start": [HOT, COOL, COOL]}, 4, 60, 600),
    ("ScaleUpUnreadyNoScale", 3, [ONE] * 3, [400, 500, 700], 30,
     {"readiness": [T, F, F]}, 3, 40, 400),
    ("ScaleHotCpuNoScale", 3, [ONE] * 3, [400, 500, 700], 30,
     {"readiness": [T, F, F], "start": [COOL, HOT, HOT]}, 3, 40, 400),
    ("ScaleUpIgnoresFailedPods", 2, [ONE] * 4, [500, 700], 30,
     {"readiness": [T, T, F, F], "phase": ["Running", "Running", "Failed", "Failed"]}, 4, 60, 600),
    ("ScaleUpIgnoresDeletionPods", 2, [ONE] * 4, [500, 700], 30,
     {"readiness": [T, T, F, F], "phase": ["Running"] * 4, "deleting": [False, False, True, True]},
     4, 60, 600),
    ("ScaleDown", 5, [ONE] * 5, [100, 300, 500, 250, 250], 50, {}, 3, 28, 280),
    ("ScaleDownIncludeUnreadyPods", 5, [ONE] * 5, [100, 300, 500, 250, 250], 50,
     {"readiness": [T, T, T, F, F]}, 2, 30, 300),
    ("ScaleDownExcludeUnscheduledPods", 5, [ONE] * 5, [100], 50,
     {"readiness": [T, F, F, F, F], "phase": ["Running"] + ["Pending"] * 4}, 1, 10, 100),
    ("ScaleDownIgnoreHotCpuPods", 5, [ONE] * 5, [100, 300, 500, 250, 250], 50,
     {"start": [COOL, COOL, COOL, HOT, HOT]}, 2, 30, 300),
    ("ScaleDownIgnoresFailedPods", 5, [ONE] * 7, [100, 300, 500, 250, 250], 50,
     {"readiness": [T] * 5 + [F, F], "phase": ["Running"] * 5 + ["Failed"] * 2}, 3, 28, 280),
    ("ScaleDownIgnoresDeletionPods", 5, [ONE] * 7, [100, 300, 500, 250, 250], 50,
     {"readiness": [T] * 5 + [F, F], "phase": ["Running"] * 7, "deleting": [False] * 5 + [True] * 2},
     3, 28, 280),
    ("Tolerance", 3, ["0.9", "1.0", "1.1"], [1010, 1030, 1020], 100, {}, 3, 102, 1020),
    ("SuperfluousMetrics", 4, [ONE] * 4, [4000, 9500, 3000, 7000, 3200, 2000], 100, {}, 24, 587, 5875),
    ("MissingMetrics", 4, [ONE] * 4, [400, 95], 100, {}, 3, 24, 247),
    ("MissingMetricsNoChangeEq", 2, [ONE] * 2, [1000], 100, {}, 2, 100, 1000),
    ("MissingMetricsNoChangeGt", 2, [ONE] * 2, [1900], 100, {}, 2, 190, 1900),
    ("MissingMetricsNoChangeLt", 2, [ONE] * 2, [600], 100, {}, 2, 60, 600),
    ("MissingMetricsUnreadyChange", 3, [ONE] * 3, [100, 450], 50, {"readiness": [F, T, T]}, 3, 45, 450),
    ("MissingMetricsHotCpuNoChange", 3, [ONE] * 3, [100, 450], 50,
     {"start": [HOT, COOL, COOL]}, 3, 45, 450),
    ("MissingMetricsUnreadyScaleUp", 3, [ONE] * 3, [100, 2000], 50,
     {"readiness": [F, T, T]}, 4, 200, 2000),
    ("MissingMetricsHotCpuScaleUp", 3, [ONE] * 3, [100, 2000], 50,
     {"readiness": [F, T, T], "start": [HOT, COOL, COOL]}, 4, 200, 2000),
    ("MissingMetricsUnreadyScaleDown", 4, [ONE] * 4, [100, 100, 100], 50,
     {"readiness": [F, T, T, T]}, 3, 10, 100),
    ("DuringRollingUpdateWithMaxSurge", 2, [ONE] * 3, [100, 100], 50,
     {"phase": ["Running"] * 3}, 2, 10, 100),
]


@pytest.mark.parametrize(("name", "current", "requests", "levels", "target", "options",
                          "replicas", "utilization", "raw"), REPLICA_CALC, ids=[c[0] for c in REPLICA_CALC])
def test_replica_calculator_upstream_table(name: str, current: int, requests: list[str],
                                           levels: list[int], target: int, options: dict[str, Any],
                                           replicas: int, utilization: int, raw: int) -> None:
    assert calc(current, requests, levels, target, **options) == (replicas, utilization, raw)


def test_replica_calculator_errors_in_upstreams_words() -> None:
    with pytest.raises(ReplicaCalculationError, match="no metrics returned matched known pods"):
        calc(1, [ONE], [100], 100, names=["an-older-pod-name"])  # DisjointResourcesMetrics
    with pytest.raises(ReplicaCalculationError,
                       match="missing request for cpu in container c of Pod test-pod-0"):
        calc(1, [], [200], 100)  # EmptyCPURequest
    with pytest.raises(ReplicaCalculationError, match="no pods returned by selector"):
        get_resource_replicas(1, 50, "cpu", [], {}, NOW)
    with pytest.raises(ReplicaCalculationError, match=r"did not receive metrics for targeted pods"):
        calc(1, [ONE], [100], 50, readiness=[F], start=[HOT])


def test_computed_tolerance_alg_implementation() -> None:
    """TestReplicaCalcComputedToleranceAlgImplementation: just past the tolerance scales down,
    just inside it does not."""
    start_pods, used = 10, 10 * 150
    requested = 2 * used
    per_pod = requested // start_pods
    requests = [f"{per_pod + d}m" for d in (100, -100, 10, -10, 2, -2, 1, -1, 0, 0)]
    target = abs(1 / (2 * (1 - 0.1))) + .01
    final = math.ceil(used / (requested * target) * start_pods)
    assert calc(start_pods, requests, [used // 10] * 10, int(target * 100)) == \
        (final, used * 100 // requested, used // 10)
    target = abs(1 / (2 * (1 - 0.1))) + .004
    assert calc(start_pods, requests, [used // 10] * 10, int(target * 100))[0] == start_pods


def test_group_pods_upstream_cases() -> None:
    """TestGroupPods: memory counts any pod with a metric; CPU needs a Ready condition and a
    sample taken a window after the pod became ready, while it initializes."""
    assert group_pods([], {}, "cpu", NOW) == (0, set(), set(), set())
    bentham = {"metadata": {"name": "bentham"}, "status": {"phase": "Succeeded"}}
    assert group_pods([bentham], {"bentham": PodMetric(1, NOW, 60)}, "memory", NOW)[0] == 1
    lucretius = {"metadata": {"name": "lucretius"},
                 "status": {"phase": "Succeeded", "startTime": rfc3339(NOW)}}
    assert group_pods([lucretius], {"lucretius": PodMetric(1)}, "cpu", NOW) == \
        (0, {"lucretius"}, set(), set())
    fresh = {"metadata": {"name": "bentham"}, "status": {
        "phase": "Succeeded", "startTime": rfc3339(NOW - 60), "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": rfc3339(NOW - 30)}]}}
    assert group_pods([fresh], {"bentham": PodMetric(1, NOW, 30)}, "cpu", NOW)[0] == 1
    assert group_pods([fresh], {"bentham": PodMetric(1, NOW, 60)}, "cpu", NOW)[1] == {"bentham"}


def test_raw_resource_replicas_average_value() -> None:
    pods = calc_pods(3, [ONE] * 3)
    metrics = {f"test-pod-{i}": PodMetric(v, 0.0, 60.0) for i, v in enumerate((500, 700, 600))}
    options = {"cpu_initialization_period": 120.0, "delay_of_initial_readiness_status": 10.0}
    assert get_raw_resource_replicas(3, 300, "cpu", pods, metrics, NOW, **options) == (6, 600)
    assert get_raw_resource_replicas(3, 580, "cpu", pods, metrics, NOW, **options) == (3, 600)


# ---------------------------------------------------------------- normalization (horizontal_test.go)

CONVERT = [  # TestConvertDesiredReplicasWithRules
    (5, 7, 3, 8, 7, "DesiredWithinRange"),
    (3, 1, 2, 8, 2, "TooFewReplicas"),
    (1, 0, 0, 10, 1, "TooFewReplicas"),
    (20, 1000, 1, 10, 10, "TooManyReplicas"),
    (3, 1000, 1, 2000, calculate_scale_up_limit(3), "ScaleUpLimit"),
]


@pytest.mark.parametrize(("current", "desired", "minimum", "maximum", "converted", "condition"), CONVERT)
def test_convert_desired_replicas_with_rules(current: int, desired: int, minimum: int, maximum: int,
                                             converted: int, condition: str) -> None:
    assert convert_desired_replicas_with_rules(current, desired, minimum, maximum)[:2] == \
        (converted, condition)


def controller(clock_now: float) -> HorizontalController:
    hc = HorizontalController.__new__(HorizontalController)
    hc.downscale_stabilisation_window = 300.0
    hc.clock = type("C", (), {"now": clock_now})()  # type: ignore[assignment]
    hc.recommendations, hc.scale_up_events, hc.scale_down_events = {}, {}, {}
    return hc


# TestNormalizeDesiredReplicas: recommendations as (value, age), desired, stabilized, log length
NORMALIZE = [
    ("empty log", [], 5, 5, 1),
    ("stabilize", [(4, 120), (5, 60)], 3, 5, 3),
    ("no stabilize", [(1, 120), (2, 60)], 3, 3, 3),
    ("no stabilize - old recommendations", [(10, 600), (9, 540)], 3, 3, 2),
    ("stabilize - old recommendations", [(10, 600), (4, 60), (5, 120), (9, 540)], 3, 5, 4),
]


@pytest.mark.parametrize(("name", "recs", "desired", "stabilized", "length"), NORMALIZE,
                         ids=[n[0] for n in NORMALIZE])
def test_stabilize_recommendation(name: str, recs: list[tuple[int, float]], desired: int,
                                  stabilized: int, length: int) -> None:
    hc = controller(1000.0)
    hc.recommendations[""] = [_Recommendation(v, 1000.0 - age) for v, age in recs]
    assert hc.stabilize_recommendation("", desired) == stabilized
    assert len(hc.recommendations[""]) == length


def test_behavior_policies_limit_the_rate_of_change() -> None:
    """calculateScaleUpLimitWithScalingRules / calculateScaleDownLimitWithBehaviors: the
    replicas at the period's start plus (or minus) each policy, the select policy choosing."""
    up = {"selectPolicy": "Max", "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                                              {"type": "Percent", "value": 100, "periodSeconds": 15}]}
    assert calculate_scale_up_limit_with_scaling_rules(3, [], [], up, 100.0) == 7  # max(3+4, 6)
    assert calculate_scale_up_limit_with_scaling_rules(10, [], [], up, 100.0) == 20
    assert calculate_scale_up_limit_with_scaling_rules(10, [], [], {**up, "selectPolicy": "Min"},
                                                       100.0) == 14
    recent = [_ScaleEvent(5, 95.0)]  # 5 added 5 s ago: the period started at 5 replicas
    assert calculate_scale_up_limit_with_scaling_rules(10, recent, [], up, 100.0) == 10
    assert calculate_scale_up_limit_with_scaling_rules(10, [], [], {"selectPolicy": "Disabled"},
                                                       100.0) == 10
    down = {"policies": [{"type": "Percent", "value": 50, "periodSeconds": 60},
                         {"type": "Pods", "value": 1, "periodSeconds": 60}]}
    assert calculate_scale_down_limit_with_behaviors(10, [], [], down, 100.0) == 5  # Max change
    assert calculate_scale_down_limit_with_behaviors(10, [], [], {**down, "selectPolicy": "Min"},
                                                     100.0) == 9


def test_behavior_stabilization_window_on_scale_up() -> None:
    hc = controller(1000.0)
    up = {"stabilizationWindowSeconds": 60, "selectPolicy": "Max",
          "policies": [{"type": "Pods", "value": 100, "periodSeconds": 15}]}
    down = {"stabilizationWindowSeconds": 0, "policies": [{"type": "Percent", "value": 100,
                                                           "periodSeconds": 15}]}
    hc.recommendations["k"] = [_Recommendation(4, 970.0)]
    assert hc.stabilize_recommendation_with_behaviors("k", up, down, 3, 9)[:2] == (4, "ScaleUpStabilized")


# ---------------------------------------------------------------- the controller on a cluster

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: app, image: nginx, resources: {requests: {cpu: 200m}}}
"""


def hpa_cluster() -> Cluster:
    c = Cluster(nodes=3, metrics_server=True)
    c.apply(DEPLOYMENT)
    c.clock.run(until=30)
    assert c.kubectl("autoscale deployment web --min=1 --max=10 --cpu=50%") == \
        "horizontalpodautoscaler.autoscaling/web autoscaled"
    return c


def hpa_events(c: Cluster) -> list[str]:
    return [e["message"] for e in c.client.list("events", "default")["items"]
            if e["involvedObject"]["kind"] == "HorizontalPodAutoscaler"]


def conditions(c: Cluster) -> dict[str, tuple[str, str]]:
    status = c.client.get("horizontalpodautoscalers", "web")["status"]
    return {x["type"]: (x["status"], x["reason"]) for x in status.get("conditions") or []}


def test_a_load_scales_up_within_the_scale_up_limit_then_down_after_five_minutes() -> None:
    c = hpa_cluster()
    c.faults.load("deployment/web", cpu="800m")  # 400% of one pod's request
    # syncs every 15 s from 45 s; the one at 45 s reads the scrape of 30 s, before the load
    c.clock.run(until=62)
    reason = "reason: cpu resource utilization (percentage of request) above target"
    assert hpa_events(c) == [f"New size: 4; {reason}"]  # 8 wanted, max(2 x 1, 4) allowed
    assert conditions(c)["ScalingLimited"] == ("True", "ScaleUpLimit")
    c.clock.run(until=77)  # the three new pods have no metrics yet: on a scale-up, they use 0
    assert hpa_events(c)[-1] == f"New size: 8; {reason}"
    c.clock.run(until=120)
    row = c.kubectl("get hpa").splitlines()[1].split()
    assert row[:6] == ["web", "Deployment/web", "cpu:", "50%/50%", "1", "10"]
    c.faults.load("deployment/web", cpu="0")
    c.clock.run(until=c.clock.now + 240)  # inside the 5-minute window: no scale-down yet
    assert c.client.get("deployments", "web")["spec"]["replicas"] == 8
    assert conditions(c)["AbleToScale"] == ("True", "ScaleDownStabilized")
    c.clock.run(until=c.clock.now + 120)
    assert hpa_events(c)[-1] == "New size: 1; reason: All metrics below target"
    assert c.client.get("deployments", "web")["spec"]["replicas"] == 1


def test_without_metrics_the_hpa_says_why_in_its_condition_and_events() -> None:
    c = Cluster(nodes=1)  # no metrics-server
    c.apply(DEPLOYMENT)
    c.clock.run(until=10)
    c.kubectl("autoscale deployment web --max=3")
    c.clock.run(until=40)
    status, reason = conditions(c)["ScalingActive"]
    assert (status, reason) == ("False", "FailedGetResourceMetric")
    messages = hpa_events(c)
    assert any(m.startswith("failed to get cpu utilization: unable to get metrics for resource "
                            "cpu: unable to fetch metrics from resource metrics API: the server "
                            "could not find the requested resource") for m in messages)
    assert any(m.startswith("invalid metrics (1 invalid out of 1), first error is: failed to get "
                            "cpu resource metric value:") for m in messages)
    assert "cpu: <unknown>/80%" in c.kubectl("get hpa")


def test_a_target_below_min_replicas_is_raised_without_metrics() -> None:
    c = Cluster(nodes=1)
    c.apply(DEPLOYMENT)
    c.clock.run(until=10)
    c.kubectl("autoscale deployment web --min=2 --max=3")
    c.clock.run(until=30)  # the first sync, at 25 s: no metric is read
    assert c.client.get("deployments", "web")["spec"]["replicas"] == 2
    assert hpa_events(c) == ["New size: 2; reason: Current number of replicas below Spec.MinReplicas"]


def test_the_api_defaults_and_validates_an_hpa() -> None:
    c = Cluster(nodes=1, components=[])
    c.kubectl("create deployment web --image=nginx")
    out = c.kubectl("apply -f -", stdin="""apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: bad}
spec:
  scaleTargetRef: {kind: Deployment}
  minReplicas: 3
  maxReplicas: 2
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization}}}]
""")
    assert "spec.scaleTargetRef.name: Required value" in out
    assert "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`" in out
    assert ("spec.metrics[0].resource.target.averageUtilization: Required value: must set either "
            "a target raw value or a target utilization") in out
    c.kubectl("autoscale deployment web --max=5")
    spec = c.client.get("horizontalpodautoscalers", "web")["spec"]
    assert spec["minReplicas"] == 1
    assert spec["metrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]
    c.client.patch("horizontalpodautoscalers", "web",
                   {"spec": {"behavior": {"scaleUp": {"selectPolicy": "Min"}}}})
    behavior = c.client.get("horizontalpodautoscalers", "web")["spec"]["behavior"]
    assert behavior["scaleUp"]["selectPolicy"] == "Min"
    assert behavior["scaleUp"]["policies"] == [{"type": "Pods", "value": 4, "periodSeconds": 15},
                                               {"type": "Percent", "value": 100, "periodSeconds": 15}]
    assert "stabilizationWindowSeconds" not in behavior["scaleDown"]


def test_kubectl_autoscale_refuses_what_upstream_refuses() -> None:
    c = Cluster(nodes=1, components=[])
    c.kubectl("create deployment web --image=nginx")
    assert c.kubectl("autoscale deployment web") == \
        "error: --max=MAXPODS is required and must be at least 1, max: -1"
    assert c.kubectl("autoscale deployment web --min=3 --max=2") == \
        "error: --max=MAXPODS must be larger or equal to --min=MINPODS, max: 2, min: 3"
    assert c.kubectl("autoscale deployment nope --max=2") == \
        'Error from server (NotFound): deployments.apps "nope" not found'
    c.kubectl("autoscale deployment web --max=4 --cpu=500 --memory=70%")
    metrics = c.client.get("horizontalpodautoscalers", "web")["spec"]["metrics"]
    assert [m["resource"]["target"] for m in metrics] == [
        {"type": "AverageValue", "averageValue": "500m"},
        {"type": "Utilization", "averageUtilization": 70}]
    assert "cpu: <unknown>/500m, memory: <unknown>/70%" in c.kubectl("get hpa")


@pytest.mark.skipif(kubectl_binary() is None, reason="kubectl is not installed (make installs it)")
def test_the_real_kubectl_gets_and_creates_hpas(tmp_path: Path) -> None:
    c = hpa_cluster()
    c.faults.load("deployment/web", cpu="800m")
    c.clock.run(until=c.clock.now + 120)

    async def main() -> tuple[str, str, str, str, str]:
        c.serve(port=0, speed=10)
        try:
            described = await c.server.kubectl("describe hpa web")
            ours = c.kubectl("describe hpa web")
            return (await c.server.kubectl("get hpa"),
                    await c.server.kubectl("autoscale deployment web --max=3 --name=other"),
                    await c.server.kubectl("get hpa other -o jsonpath={.spec.maxReplicas}"),
                    described, ours)
        finally:
            await c.server.stop()

    table, created, maximum, described, ours = asyncio.run(main())
    # describe is kubectl's own printing: kubelab's prints what the real one does (up to the
    # events, whose ages move with the served clock)
    assert described.partition("Events:")[0] == ours.partition("Events:")[0]
    assert "resource cpu on pods  (as a percentage of request):" in ours
    assert table.splitlines()[0].split() == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS",
                                             "REPLICAS", "AGE"]
    assert table.splitlines()[1].split()[:4] == ["web", "Deployment/web", "cpu:", "50%/50%"]
    assert created.strip() == "horizontalpodautoscaler.autoscaling/other autoscaled"
    assert maximum == "3"


def test_behavior_policies_pace_both_directions_on_a_cluster() -> None:
    """spec.behavior: scale up by 2 pods per 30 s, down by 1 pod per 60 s with no window."""
    c = hpa_cluster()
    c.client.patch("horizontalpodautoscalers", "web", {"spec": {"behavior": {
        "scaleUp": {"policies": [{"type": "Pods", "value": 2, "periodSeconds": 30}]},
        "scaleDown": {"stabilizationWindowSeconds": 0,
                      "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}}})
    c.faults.load("deployment/web", cpu="800m")
    seen = {}
    for t in range(45, 346, 15):
        c.clock.run(until=t + 2)
        if t == 240:
            c.faults.load("deployment/web", cpu="0")
        seen[t] = c.client.get("deployments", "web")["spec"]["replicas"]
    # +2 at 60 s; at 75 s that change is still inside the 30 s period, at 90 s it is not
    assert [seen[t] for t in (60, 75, 90, 105, 120)] == [3, 3, 5, 5, 7]
    assert seen[255] > seen[270] == seen[315] == seen[255] - 1  # one pod, then a minute's wait
    assert seen[330] == seen[270] - 1
    assert conditions(c)["ScalingLimited"] == ("True", "ScaleDownLimit")
