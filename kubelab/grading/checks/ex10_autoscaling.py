"""Checks for notebook 10's exercise 10.2: the HPA replica calculation.

The learner's calculate_replicas is compared with kubelab's replica calculator
(kubelab/controllers/podautoscaler/replica_calculator.py, GetResourceReplicas), first on
upstream's replica_calculator_test.go tables, then on seeded pods the grader makes up (the
tolerance band, pods without metrics, unready pods), and last inside the HPA controller of a
cluster whose load the grader raises. The pods started long ago and a pod that is not ready
never was, so upstream's CPU initialization rules reduce to the exercise's: the reference
answers every case, none is read from a table a submission could return.
"""

from __future__ import annotations

import random
from typing import Any

from kubelab.api.meta import rfc3339
from kubelab.controllers.podautoscaler import horizontal
from kubelab.controllers.podautoscaler.replica_calculator import (
    PodMetric,
    ReplicaCalculationError,
    get_resource_replicas,
)
from kubelab.grading.checks.common import patched
from kubelab.grading.context import CheckContext
from kubelab.grading.exercises import check
from kubelab.grading.remote import RemoteError

__all__: list[str] = []

NOW = 10_000.0  # long after every pod started: no pod is in its CPU initialization period
REQUESTS = ("100m", "200m", "250m", "500m", "1")


def _pod(i: int, request: str | None, state: str = "ready") -> dict[str, Any]:
    """test-pod-<i> in one of the states: ready, unready (Running, never Ready), nocondition,
    pending, failed, deleting."""
    status: dict[str, Any] = {"phase": {"pending": "Pending", "failed": "Failed"}.get(state, "Running"),
                              "startTime": rfc3339(0)}
    if state != "nocondition":
        status["conditions"] = [{"type": "Ready", "status": "True" if state in ("ready", "deleting")
                                 else "False", "lastTransitionTime": rfc3339(0)}]
    meta: dict[str, Any] = {"name": f"test-pod-{i}", "namespace": "default"}
    if state == "deleting":
        meta["deletionTimestamp"] = rfc3339(NOW)
    resources = {"requests": {"cpu": request}} if request is not None else {}
    return {"metadata": meta, "spec": {"containers": [{"name": "app", "resources": resources}]},
            "status": status}


def _reference(current: int, target: int, pods: list[dict[str, Any]], metrics: dict[str, int],
               tolerance: float = 0.1) -> tuple[int, int] | str:
    """kubelab's answer, or the error it gives."""
    try:
        replicas, utilization, _ = get_resource_replicas(
            current, target, "cpu", pods, {n: PodMetric(v, NOW, 15.0) for n, v in metrics.items()},
            NOW, tolerance=tolerance)
    except ReplicaCalculationError as err:
        return str(err)
    return replicas, utilization


def _compare(ctx: CheckContext, current: int, target: int, pods: list[dict[str, Any]],
             metrics: dict[str, int], what: str, tolerance: float = 0.1) -> None:
    expected = _reference(current, target, pods, metrics, tolerance)
    states = ", ".join(f"{p['metadata']['name']}: {_describe(p)}, "
                       f"{_usage(metrics.get(p['metadata']['name']))}" for p in pods)
    case = f"{what}: {current} replicas, target {target}%, pods [{states}]"
    try:
        got = ctx.learner(current, target, pods, metrics, tolerance)
    except RemoteError as err:
        if err.type_name != "ValueError":
            raise
        if isinstance(expected, str):
            return
        ctx.fail(case, expected=f"(replicas, utilization) = {expected}", got=str(err))
    if isinstance(expected, str):
        ctx.fail(case, expected=f"ValueError({expected!r})", got=f"returned {got!r}")
    answer = tuple(int(x) for x in got) if isinstance(got, (list, tuple)) else got
    ctx.expect_equal(answer, expected, case, unit="(replicas, utilization) =")


def _usage(milli: int | None) -> str:
    return "no metric" if milli is None else f"using {milli}m"


def _describe(pod: dict[str, Any]) -> str:
    status = pod["status"]
    if pod["metadata"].get("deletionTimestamp"):
        return "being deleted"
    ready = next((c["status"] for c in status.get("conditions") or []), None)
    request = (pod["spec"]["containers"][0]["resources"].get("requests") or {}).get("cpu", "no request")
    return f"{status['phase']}, Ready={ready}, requests {request}"


# replica_calculator_test.go (the cases without a pod in its CPU initialization period):
# (current, requests, levels, target, states) -> upstream's answer, computed by the reference.
UPSTREAM = [
    (3, ["1"] * 3, [300, 500, 700], 30, None),                                 # ScaleUp
    (3, ["1"] * 3, [300, 500, 700], 30, ["unready", "ready", "ready"]),         # UnreadyLessScale
    (3, ["1"] * 3, [400, 500, 700], 30, ["ready", "unready", "unready"]),       # UnreadyNoScale
    (2, ["1"] * 4, [500, 700], 30, ["ready", "ready", "failed", "failed"]),     # IgnoresFailedPods
    (2, ["1"] * 4, [500, 700], 30, ["ready", "ready", "deleting", "deleting"]),  # IgnoresDeletionPods
    (5, ["1"] * 5, [100, 300, 500, 250, 250], 50, None),                        # ScaleDown
    (5, ["1"] * 5, [100, 300, 500, 250, 250], 50, ["ready"] * 3 + ["unready"] * 2),
    (5, ["1"] * 5, [100], 50, ["ready"] + ["pending"] * 4),                     # ExcludeUnscheduled
    (3, ["900m", "1", "1100m"], [1010, 1030, 1020], 100, None),                 # Tolerance
    (4, ["1"] * 4, [4000, 9500, 3000, 7000, 3200, 2000], 100, None),            # SuperfluousMetrics
    (4, ["1"] * 4, [400, 95], 100, None),                                       # MissingMetrics
    (2, ["1"] * 2, [1000], 100, None), (2, ["1"] * 2, [1900], 100, None),       # NoChangeEq, Gt
    (2, ["1"] * 2, [600], 100, None),                                           # NoChangeLt
    (3, ["1"] * 3, [100, 450], 50, ["unready", "ready", "ready"]),              # UnreadyChange
    (3, ["1"] * 3, [100, 2000], 50, ["unready", "ready", "ready"]),             # UnreadyScaleUp
    (4, ["1"] * 4, [100, 100, 100], 50, ["unready", "ready", "ready", "ready"]),  # UnreadyScaleDown
    (2, ["1"] * 3, [100, 100], 50, None),                                       # RollingUpdateWithMaxSurge
]


@check("10.2", points=2, hint="Start from upstream's test table: utilization is whole percent, "
       "truncated ((usage x 100) // requests), and the ratio is taken from that percentage.")
def matches_upstreams_table(ctx: CheckContext) -> None:
    for current, requests, levels, target, states in UPSTREAM:
        pods = [_pod(i, r, (states or [])[i] if states else "ready") for i, r in enumerate(requests)]
        metrics = {f"test-pod-{i}": v for i, v in enumerate(levels)}
        _compare(ctx, current, target, pods, metrics, "replica_calculator_test.go")


@check("10.2", points=2, seeds=(1, 2, 3), hint="Within the tolerance (abs(1 - ratio) <= 0.1) the "
       "replica count stays as it is; outside it, ceil(ratio x ready pods).")
def keeps_the_count_within_the_tolerance(ctx: CheckContext) -> None:
    rand = random.Random(ctx.seed)
    for _ in range(12):
        n, target = rand.randint(1, 8), rand.choice((40, 50, 60, 80, 100))
        request = rand.choice(REQUESTS)
        pods = [_pod(i, request) for i in range(n)]
        milli = pods[0]["spec"]["containers"][0]["resources"]["requests"]["cpu"]
        per_pod = int(float(milli[:-1]) if milli.endswith("m") else float(milli) * 1000)
        ratio = rand.choice((0.85, 0.9, 0.95, 1.05, 1.1, 1.12, 0.7, 1.6))
        metrics = {f"test-pod-{i}": int(per_pod * target / 100 * ratio) for i in range(n)}
        _compare(ctx, n, target, pods, metrics, "all pods ready",
                 tolerance=rand.choice((0.1, 0.1, 0.05, 0.2)))


def _random_case(rand: random.Random, states: tuple[str, ...], missing: float
                 ) -> tuple[int, int, list[dict[str, Any]], dict[str, int]]:
    n = rand.randint(2, 8)
    pods = [_pod(i, rand.choice(REQUESTS), rand.choice(states)) for i in range(n)]
    metrics = {}
    for pod in pods:
        name = pod["metadata"]["name"]
        if pod["status"]["phase"] != "Pending" and rand.random() >= missing:
            metrics[name] = rand.randint(0, 1500)
    if not any(p["status"]["phase"] == "Running" and not p["metadata"].get("deletionTimestamp")
               and p["metadata"]["name"] in metrics for p in pods):
        metrics[pods[0]["metadata"]["name"]] = rand.randint(0, 1500)
        pods[0] = _pod(0, rand.choice(REQUESTS))
    return max(1, n - rand.randint(0, 2)), rand.choice((30, 50, 70, 100)), pods, metrics


@check("10.2", points=2, seeds=(1, 2, 3), hint="A pod without a metric uses 100% of its request "
       "on a scale-down and nothing on a scale-up; if the recomputed ratio lands within the "
       "tolerance or crosses 1, keep the current count.")
def counts_pods_without_metrics_against_the_change(ctx: CheckContext) -> None:
    rand = random.Random(ctx.seed)
    for _ in range(15):
        current, target, pods, metrics = _random_case(rand, ("ready",), missing=0.35)
        _compare(ctx, current, target, pods, metrics, "some pods have no metric")


@check("10.2", points=2, seeds=(1, 2, 3), hint="Unready and pending pods are left out of the first "
       "ratio; on a scale-up they count as using nothing, which may stop it. Failed and deleted "
       "pods do not count at all.")
def holds_back_a_scale_up_for_unready_pods(ctx: CheckContext) -> None:
    rand = random.Random(ctx.seed)
    states = ("ready", "ready", "ready", "unready", "nocondition", "pending", "failed", "deleting")
    for _ in range(15):
        current, target, pods, metrics = _random_case(rand, states, missing=0.15)
        _compare(ctx, current, target, pods, metrics, "pods in every state")


@check("10.2", points=1, hint='Raise ValueError("missing request for cpu in container ...") when a '
       "container has no CPU request, and when no ready pod has a metric.")
def refuses_what_cannot_be_computed(ctx: CheckContext) -> None:
    no_request = [_pod(0, "200m"), _pod(1, None)]
    _compare(ctx, 2, 50, no_request, {"test-pod-0": 100, "test-pod-1": 100}, "a container without "
             "requests.cpu")
    unready = [_pod(0, "200m", "unready"), _pod(1, "200m", "pending")]
    _compare(ctx, 2, 50, unready, {"test-pod-0": 300}, "no ready pod")


@check("10.2", points=1, hint="The controller calls your function every 15 s with the pods of the "
       "Deployment and their PodMetrics: the first sync under load asks for 8 (its scale-up limit "
       "allows 4), the next for 8.")
def drives_the_hpa_controller(ctx: CheckContext) -> None:
    def learners(current: int, target: int, resource: str, pods: list[dict[str, Any]],
                 metrics: dict[str, PodMetric], now: float, *, container: str = "",
                 tolerance: float = 0.1) -> tuple[int, int, int]:
        values = {n: m.value for n, m in metrics.items()}
        try:
            replicas, utilization = ctx.learner(current, target, pods, values, tolerance)
        except RemoteError as err:
            if err.type_name != "ValueError":
                raise
            raise ReplicaCalculationError(err.message) from None
        return int(replicas), int(utilization), sum(values.values()) // max(1, len(values))

    c = ctx.cluster(nodes=3, metrics_server=True)
    c.apply("""apiVersion: apps/v1
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
""")
    with patched(horizontal, "get_resource_replicas", learners):
        c.clock.run(until=30)
        c.kubectl("autoscale deployment web --min=1 --max=10 --cpu=50%")
        c.faults.load("deployment/web", cpu="800m")
        seen = []
        for until in (62, 77, 120):
            c.clock.run(until=until)
            seen.append(int(c.client.get("deployments", "web")["spec"]["replicas"]))
    ctx.expect_equal(seen, [4, 8, 8], "the Deployment's replicas after the HPA's syncs at 60 s, "
                     "75 s and up to 120 s (one pod at 400% of its request, target 50%)",
                     unit="replicas:")
