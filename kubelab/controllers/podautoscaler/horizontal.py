"""The horizontal pod autoscaler controller (kubernetes/kubernetes pkg/controller/podautoscaler/
horizontal.go, rate_limiters.go).

Every HPA is reconciled once per sync period (15 s: its key always goes back into the queue
with a fixed 15 s delay, whatever happened). reconcileAutoscaler reads the target's scale
subresource, asks each metric how many replicas it wants (replica_calculator.py, fed by
metrics.k8s.io: metrics.py), takes the largest, normalizes it, writes the new scale, and
records what it saw in the HPA's status and conditions:

- AbleToScale: the scale could be read and written (SucceededGetScale, SucceededRescale,
  ReadyForNewScale, ScaleDownStabilized, ScaleUpStabilized; FailedGetScale, FailedUpdateScale);
- ScalingActive: a replica count could be computed (ValidMetricFound; FailedGetResourceMetric,
  InvalidSelector, ScalingDisabled when the target has 0 replicas);
- ScalingLimited: the result was clamped (TooManyReplicas, TooFewReplicas, ScaleUpLimit,
  ScaleDownLimit; DesiredWithinRange).

Normalization without spec.behavior: the highest recommendation of the last 5 minutes
(--horizontal-pod-autoscaler-downscale-stabilization) wins, so a scale-down waits that long,
and a scale-up is limited to max(2 x current, 4). With a behavior: each direction's
stabilization window and its policies (Pods or Percent per period, the Max, Min or Disabled
select policy), over the scale events of the longest period.

Every metric type is read: Resource and ContainerResource from metrics.k8s.io (metrics-server),
Pods and Object from custom.metrics.k8s.io, External from external.metrics.k8s.io; kind serves
neither of the last two, and `Cluster(custom_metrics=True)` adds a simulated adapter
(kubelab/cluster/custom_metrics.py) whose values `c.metrics` sets. Without it the HPA's
ScalingActive condition and events say, in upstream's words, that the API is missing.

Departures: the scale is written with a fresh read of it (client.scale), not the one read at
the start.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError, ParseError
from kubelab.api.labels import parse_selector, selector_from_label_selector
from kubelab.api.meta import deep_copy, rfc3339
from kubelab.api.quantity import Format, Quantity, parse_quantity
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.events import NORMAL, WARNING
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory
from kubelab.client.workqueue import RateLimitingQueue
from kubelab.controllers.podautoscaler.metrics import (
    get_external_metric,
    get_object_metric,
    get_raw_metric,
    get_resource_metric,
)
from kubelab.controllers.podautoscaler.replica_calculator import (
    TOLERANCE,
    PodMetric,
    ReplicaCalculationError,
    get_external_metric_replicas,
    get_external_per_pod_metric_replicas,
    get_metric_replicas,
    get_object_metric_replicas,
    get_object_per_pod_metric_replicas,
    get_raw_resource_replicas,
    get_resource_replicas,
)

__all__ = ["DOWNSCALE_STABILISATION_WINDOW", "SYNC_PERIOD", "FixedItemIntervalRateLimiter",
           "HorizontalController", "convert_desired_replicas_with_rules", "go_label_selector"]

SYNC_PERIOD = 15.0                      # --horizontal-pod-autoscaler-sync-period
DOWNSCALE_STABILISATION_WINDOW = 300.0  # --horizontal-pod-autoscaler-downscale-stabilization
SCALE_UP_LIMIT_FACTOR, SCALE_UP_LIMIT_MINIMUM = 2.0, 4.0
WORKERS = 5                             # --concurrent-horizontal-pod-autoscaler-syncs


class FixedItemIntervalRateLimiter:
    """rate_limiters.go: every item waits the same interval, however often it comes back."""

    def __init__(self, interval: float) -> None:
        self.interval = interval

    def when(self, item: Any) -> float:
        return self.interval

    def num_requeues(self, item: Any) -> int:
        return 1

    def forget(self, item: Any) -> None:
        pass


@dataclass
class _Recommendation:
    recommendation: int
    timestamp: float


@dataclass
class _ScaleEvent:
    replica_change: int
    timestamp: float
    outdated: bool = False


class HorizontalController:
    NAME = "horizontal-pod-autoscaler"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory, *,
                 sync_period: float = SYNC_PERIOD, tolerance: float = TOLERANCE,
                 downscale_stabilisation_window: float = DOWNSCALE_STABILISATION_WINDOW) -> None:
        self.client, self.clock = ctx.client, ctx.clock
        self.recorder = ctx.recorder(self.NAME)
        self.sync_period, self.tolerance = sync_period, tolerance
        self.downscale_stabilisation_window = downscale_stabilisation_window
        queue: RateLimitingQueue[str] = RateLimitingQueue(
            ctx.clock, FixedItemIntervalRateLimiter(sync_period), name="horizontalpodautoscaler")
        self.controller = Controller("horizontal-pod-autoscaler-controller", self.process,
                                     ctx.clock, workers=WORKERS, trace=ctx.trace, queue=queue,
                                     client=ctx.client, cost=ctx.sync_cost)
        self.queue = queue
        hpas = informers.informer_for("horizontalpodautoscalers")
        self.hpa_indexer = hpas.indexer
        self.pod_indexer = informers.informer_for("pods").indexer
        hpas.add_event_handler(ResourceEventHandler(
            self.enqueue_hpa, lambda _old, cur: self.enqueue_hpa(cur), self.delete_hpa))
        self.recommendations: dict[str, list[_Recommendation]] = {}
        self.scale_up_events: dict[str, list[_ScaleEvent]] = {}
        self.scale_down_events: dict[str, list[_ScaleEvent]] = {}

    def run(self) -> None:
        self.controller.run()

    def stop(self) -> None:
        self.controller.stop()

    def enqueue_hpa(self, hpa: Any) -> None:
        """Every request waits the sync period; one already waiting absorbs a new one."""
        self.queue.add_rate_limited(f"{hpa['metadata']['namespace']}/{hpa['metadata']['name']}")

    def delete_hpa(self, hpa: Any) -> None:
        meta = hpa.get("metadata", {}) if isinstance(hpa, dict) else {}
        if meta:
            self.queue.add(f"{meta.get('namespace')}/{meta.get('name')}")

    def process(self, key: str) -> None:
        """processNextWorkItem and reconcileKey: the key always comes back a period later."""
        hpa, exists = self.hpa_indexer.get_by_key(key)
        if not exists:
            for memory in (self.recommendations, self.scale_up_events, self.scale_down_events):
                memory.pop(key, None)
            return
        self.queue.add_rate_limited(key)
        self.reconcile_autoscaler(deep_copy(hpa), key)

    # ------------------------------------------------------------------ reconcile

    def reconcile_autoscaler(self, hpa: Object, key: str) -> None:
        spec = hpa["spec"]
        status_original = deep_copy(hpa.get("status") or {})
        ref = spec.get("scaleTargetRef") or {}
        namespace = hpa["metadata"]["namespace"]
        try:
            info = self.client.resource_for({"apiVersion": ref.get("apiVersion", ""),
                                             "kind": ref.get("kind", "")})
            scale = self.client.get_scale(info.qualified, ref.get("name", ""), namespace)
        except ApiError as err:
            self.recorder.event(hpa, WARNING, "FailedGetScale", err.message)
            set_condition(hpa, "AbleToScale", "False", "FailedGetScale",
                          f"the HPA controller was unable to get the target's current scale: "
                          f"{err.message}", self.clock.now)
            self.update_status_if_needed(status_original, hpa)
            return
        set_condition(hpa, "AbleToScale", "True", "SucceededGetScale",
                      "the HPA controller was able to get the target's current scale", self.clock.now)
        current = int((scale.get("spec") or {}).get("replicas", 0))
        self.record_initial_recommendation(current, key)
        metric_statuses: list[Object] = (hpa.get("status") or {}).get("currentMetrics") or []
        minimum = int(spec.get("minReplicas", 1))
        maximum = int(spec.get("maxReplicas", 0))
        rescale_reason, desired = "", 0
        if current == 0 and minimum != 0:
            # autoscaling is disabled for this resource
            set_condition(hpa, "ScalingActive", "False", "ScalingDisabled",
                          "scaling is disabled since the replica count of the target is zero",
                          self.clock.now)
        elif current > maximum:
            rescale_reason, desired = "Current number of replicas above Spec.MaxReplicas", maximum
        elif current < minimum:
            rescale_reason, desired = "Current number of replicas below Spec.MinReplicas", minimum
        else:
            try:
                metric_desired, metric_name, metric_statuses = self.compute_replicas_for_metrics(
                    hpa, scale, spec.get("metrics") or [])
            except ReplicaCalculationError as err:
                self.set_current_replicas_and_metrics_in_status(hpa, current, metric_statuses)
                self.update_status_if_needed(status_original, hpa)
                self.recorder.event(hpa, WARNING, "FailedComputeMetricsReplicas", str(err))
                return
            desired = metric_desired
            if desired > current:
                rescale_reason = f"{metric_name} above target"
            elif desired < current:
                rescale_reason = "All metrics below target"
            if spec.get("behavior") is None:
                desired = self.normalize_desired_replicas(hpa, key, current, desired, minimum)
            else:
                desired = self.normalize_desired_replicas_with_behaviors(hpa, key, current,
                                                                         desired, minimum)
        rescale = desired != current
        if rescale:
            try:
                self.client.scale(info.qualified, ref.get("name", ""), desired, namespace)
            except ApiError as err:
                self.recorder.event(hpa, WARNING, "FailedRescale",
                                    f"New size: {desired}; reason: {rescale_reason}; error: "
                                    f"{err.message}")
                set_condition(hpa, "AbleToScale", "False", "FailedUpdateScale",
                              f"the HPA controller was unable to update the target scale: "
                              f"{err.message}", self.clock.now)
                self.set_current_replicas_and_metrics_in_status(hpa, current, metric_statuses)
                self.update_status_if_needed(status_original, hpa)
                return
            set_condition(hpa, "AbleToScale", "True", "SucceededRescale",
                          f"the HPA controller was able to update the target scale to {desired}",
                          self.clock.now)
            self.recorder.event(hpa, NORMAL, "SuccessfulRescale",
                                f"New size: {desired}; reason: {rescale_reason}")
            self.store_scale_event(spec.get("behavior"), key, current, desired)
        else:
            desired = current
        self.set_status(hpa, current, desired, metric_statuses, rescale)
        self.update_status_if_needed(status_original, hpa)

    def record_initial_recommendation(self, current: int, key: str) -> None:
        if key not in self.recommendations:
            self.recommendations[key] = [_Recommendation(current, self.clock.now)]

    # ------------------------------------------------------------------ metrics

    def compute_replicas_for_metrics(self, hpa: Object, scale: Object, specs: list[Object]
                                     ) -> tuple[int, str, list[Object]]:
        """computeReplicasForMetrics: the largest proposal of the valid metrics; raises when
        every metric is invalid."""
        selector_text = (scale.get("status") or {}).get("selector") or ""
        now = self.clock.now
        if not selector_text:
            message = "selector is required"
            self.recorder.event(hpa, WARNING, "SelectorRequired", message)
            set_condition(hpa, "ScalingActive", "False", "InvalidSelector",
                          "the HPA target's scale is missing a selector", now)
            raise ReplicaCalculationError(message)
        try:
            selector = parse_selector(selector_text)
        except ParseError as err:
            message = f"couldn't convert selector into a corresponding internal selector object: {err}"
            self.recorder.event(hpa, WARNING, "InvalidSelector", message)
            set_condition(hpa, "ScalingActive", "False", "InvalidSelector", message, now)
            raise ReplicaCalculationError(message) from None
        current = int((scale.get("spec") or {}).get("replicas", 0))
        status_replicas = int((scale.get("status") or {}).get("replicas", 0))
        namespace = hpa["metadata"]["namespace"]
        pods = [p for p in self.pod_indexer.list()
                if p["metadata"].get("namespace") == namespace
                and selector.matches(p["metadata"].get("labels") or {})]
        statuses: list[Object] = [{} for _ in specs]
        replicas, name, invalid, first_error = 0, "", 0, ""
        invalid_condition: tuple[str, str] | None = None
        for i, spec in enumerate(specs):
            try:
                proposal, proposal_name, statuses[i] = self.compute_replicas_for_metric(
                    hpa, spec, current, selector_text, pods, status_replicas)
            except ReplicaCalculationError as err:
                if invalid == 0:
                    first_error = str(err)
                    invalid_condition = getattr(err, "condition", None)
                invalid += 1
                continue
            if not name or proposal > replicas:
                replicas, name = proposal, proposal_name
        statuses = [s for s in statuses if s]
        if invalid >= len(specs) or not specs:
            if invalid_condition is not None:
                set_condition(hpa, "ScalingActive", "False", *invalid_condition, now)
            raise ReplicaCalculationError(f"invalid metrics ({invalid} invalid out of "
                                          f"{len(specs)}), first error is: {first_error}")
        set_condition(hpa, "ScalingActive", "True", "ValidMetricFound",
                      f"the HPA was able to successfully calculate a replica count from {name}", now)
        return replicas, name, statuses

    def compute_replicas_for_metric(self, hpa: Object, spec: Object, current: int, selector: str,
                                    pods: list[Object], status_replicas: int = 0
                                    ) -> tuple[int, str, Object]:
        """computeReplicasForMetric: one metric's proposal, name and status, by its type."""
        kind = spec.get("type")
        namespace = hpa["metadata"]["namespace"]
        if kind == "Object":  # --- hpacsi ---
            return self.compute_status_for_object_metric(hpa, spec.get("object") or {}, current,
                                                         status_replicas, pods)
        if kind == "Pods":
            return self.compute_status_for_pods_metric(hpa, spec.get("pods") or {}, current,
                                                       selector, pods)
        if kind == "External":
            return self.compute_status_for_external_metric(hpa, spec.get("external") or {},
                                                           current, status_replicas, pods)
        if kind not in ("Resource", "ContainerResource"):
            err = ReplicaCalculationError(f'unknown metric source type "{kind or ""}"')
            self._unable(hpa, err, "InvalidMetricSourceType")
            raise err
        source = spec.get("resource" if kind == "Resource" else "containerResource") or {}
        resource, container = str(source.get("name", "")), str(source.get("container", ""))
        target = source.get("target") or {}
        reason = "FailedGetResourceMetric" if kind == "Resource" else "FailedGetContainerResourceMetric"
        try:
            replicas, name, status = self._resource_metric(resource, container, target, current,
                                                           namespace, selector, pods)
        except ReplicaCalculationError as err:
            self._unable(hpa, err, reason)
            what = "resource" if kind == "Resource" else "container resource"
            raise _with_condition(ReplicaCalculationError(
                f"failed to get {resource} {what} metric value: {err}"), err) from None
        key = "resource" if kind == "Resource" else "containerResource"
        body = {"name": resource, **({"container": container} if container else {}), "current": status}
        return replicas, name, {"type": kind, key: body}

    # --- hpacsi --- the Object, Pods and External metric types

    def _metric_selector(self, hpa: Object, metric: Object, reason: str, what: str) -> str:
        """metav1.LabelSelectorAsSelector of the metric's selector, as a query string."""
        try:
            return str(selector_from_label_selector(metric.get("selector")))
        except ParseError as err:
            failure = ReplicaCalculationError(str(err))
            self._unable(hpa, failure, reason)
            raise _with_condition(ReplicaCalculationError(
                f"failed to get {what} metric value: {err}"), failure) from None

    def compute_status_for_object_metric(self, hpa: Object, source: Object, current: int,
                                         status_replicas: int, pods: list[Object]
                                         ) -> tuple[int, str, Object]:
        """computeStatusForObjectMetric: a Value target against the ready pods, an
        AverageValue target against status.replicas."""
        reason = "FailedGetObjectMetric"
        metric = source.get("metric") or {}
        metric_name = str(metric.get("name", ""))
        described = source.get("describedObject") or {}
        target = source.get("target") or {}
        namespace = hpa["metadata"]["namespace"]
        metric_selector = self._metric_selector(hpa, metric, reason, "object")
        identifier = {"name": metric_name, **({"selector": metric["selector"]}
                                              if metric.get("selector") is not None else {})}
        try:
            if target.get("type") == "Value":
                usage = self._object_metric(metric_name, namespace, described, metric_selector)
                replicas, usage = get_object_metric_replicas(
                    current, _milli_of(target.get("value")), usage, pods, tolerance=self.tolerance)
                return replicas, f"{described.get('kind', '')} metric {metric_name}", {
                    "type": "Object", "object": {"describedObject": described, "metric": identifier,
                                                 "current": {"value": _milli(usage)}}}
            if target.get("type") == "AverageValue":
                try:
                    usage = self._object_metric(metric_name, namespace, described, metric_selector)
                    replicas, usage = get_object_per_pod_metric_replicas(
                        status_replicas, _milli_of(target.get("averageValue")), usage,
                        tolerance=self.tolerance)
                except ReplicaCalculationError as err:
                    self._unable(hpa, err, reason)
                    raise _with_condition(ReplicaCalculationError(
                        f"failed to get {metric_name} object metric: {err}"), err) from None
                shown = go_label_selector(metric.get("selector"))
                return replicas, f"external metric {metric_name}({shown})", {
                    "type": "Object", "object": {"describedObject": described, "metric": identifier,
                                                 "current": {"averageValue": _milli(usage)}}}
            invalid = ReplicaCalculationError("invalid object metric source: neither a value "
                                              "target nor an average value target was set")
            self._unable(hpa, invalid, reason)
            raise invalid
        except ReplicaCalculationError as err:
            if getattr(err, "condition", None) is None:
                self._unable(hpa, err, reason)
            raise _with_condition(ReplicaCalculationError(
                f"failed to get object metric value: {err}"), err) from None

    def _object_metric(self, metric: str, namespace: str, described: Object, metric_selector: str
                       ) -> int:
        """GetObjectMetricReplicas' fetch, with upstream's (oddly ordered) wording."""
        try:
            usage, _timestamp = get_object_metric(self.client, metric, namespace, described,
                                                  metric_selector)
        except ReplicaCalculationError as err:
            raise ReplicaCalculationError(
                f"unable to get metric {metric}: {described.get('kind', '')} on {namespace} "
                f"{described.get('name', '')}/{err}") from None
        return usage

    def compute_status_for_pods_metric(self, hpa: Object, source: Object, current: int,
                                       selector: str, pods: list[Object]
                                       ) -> tuple[int, str, Object]:
        """computeStatusForPodsMetric: an AverageValue across the pods."""
        reason = "FailedGetPodsMetric"
        metric = source.get("metric") or {}
        metric_name = str(metric.get("name", ""))
        metric_selector = self._metric_selector(hpa, metric, reason, "pods")
        try:
            target = _milli_of((source.get("target") or {}).get("averageValue"))
            try:
                metrics, _timestamp = get_raw_metric(self.client, metric_name,
                                                     hpa["metadata"]["namespace"], selector,
                                                     metric_selector)
            except ReplicaCalculationError as err:
                raise ReplicaCalculationError(f"unable to get metric {metric_name}: {err}") from None
            replicas, usage = get_metric_replicas(current, target, pods, metrics, self.clock.now,
                                                  tolerance=self.tolerance)
        except ReplicaCalculationError as err:
            self._unable(hpa, err, reason)
            raise _with_condition(ReplicaCalculationError(
                f"failed to get pods metric value: {err}"), err) from None
        identifier = {"name": metric_name, **({"selector": metric["selector"]}
                                              if metric.get("selector") is not None else {})}
        return replicas, f"pods metric {metric_name}", {
            "type": "Pods", "pods": {"metric": identifier, "current": {"averageValue": _milli(usage)}}}

    def compute_status_for_external_metric(self, hpa: Object, source: Object, current: int,
                                           status_replicas: int, pods: list[Object]
                                           ) -> tuple[int, str, Object]:
        """computeStatusForExternalMetric: the sum of the matching series, per pod
        (AverageValue) or as a whole (Value)."""
        reason = "FailedGetExternalMetric"
        metric = source.get("metric") or {}
        metric_name = str(metric.get("name", ""))
        target = source.get("target") or {}
        namespace = hpa["metadata"]["namespace"]
        shown = go_label_selector(metric.get("selector"))
        identifier = {"name": metric_name, **({"selector": metric["selector"]}
                                              if metric.get("selector") is not None else {})}
        name = f"external metric {metric_name}({shown})"
        per_pod = target.get("averageValue") is not None
        if not per_pod and target.get("value") is None:
            invalid = ReplicaCalculationError("invalid external metric source: neither a value "
                                              "target nor an average value target was set")
            self._unable(hpa, invalid, reason)
            raise invalid
        try:
            try:
                selector = str(selector_from_label_selector(metric.get("selector")))
            except ParseError as err:
                raise ReplicaCalculationError(str(err)) from None
            try:
                values, _timestamp = get_external_metric(self.client, metric_name, namespace, selector)
            except ReplicaCalculationError as err:
                raise ReplicaCalculationError(f"unable to get external metric {namespace}/"
                                              f"{metric_name}/{shown}: {err}") from None
            if per_pod:
                replicas, usage = get_external_per_pod_metric_replicas(
                    status_replicas, _milli_of(target["averageValue"]), values,
                    tolerance=self.tolerance)
            else:
                replicas, usage = get_external_metric_replicas(
                    current, _milli_of(target["value"]), values, pods, tolerance=self.tolerance)
        except ReplicaCalculationError as err:
            self._unable(hpa, err, reason)
            wrapped = f"failed to get {metric_name} external metric: {err}" if per_pod else \
                f"failed to get external metric {metric_name}: {err}"
            raise _with_condition(ReplicaCalculationError(wrapped), err) from None
        current_status = {"averageValue": _milli(usage)} if per_pod else {"value": _milli(usage)}
        return replicas, name, {"type": "External", "external": {"metric": identifier,
                                                                 "current": current_status}}

    def _resource_metric(self, resource: str, container: str, target: Object, current: int,
                         namespace: str, selector: str, pods: list[Object]
                         ) -> tuple[int, str, Object]:
        """computeStatusForResourceMetricGeneric."""
        average_value = target.get("averageValue")
        if average_value is not None:
            try:
                metrics = self._fetch(resource, namespace, selector, container)
                replicas, usage = get_raw_resource_replicas(
                    current, parse_quantity(average_value).milli_value(), resource, pods, metrics,
                    self.clock.now, tolerance=self.tolerance)
            except (ReplicaCalculationError, ParseError) as err:
                raise ReplicaCalculationError(f"failed to get {resource} usage: {err}") from None
            return replicas, f"{resource} resource", {"averageValue": _milli(usage)}
        utilization_target = target.get("averageUtilization")
        if utilization_target is None:
            raise ReplicaCalculationError("invalid resource metric source: neither an average "
                                          "utilization target nor an average value (usage) target was set")
        try:
            metrics = self._fetch(resource, namespace, selector, container)
            replicas, utilization, raw = get_resource_replicas(
                current, int(utilization_target), resource, pods, metrics, self.clock.now,
                container=container, tolerance=self.tolerance)
        except ReplicaCalculationError as err:
            raise ReplicaCalculationError(f"failed to get {resource} utilization: {err}") from None
        name = f"{resource} resource utilization (percentage of request)" if not container else \
            f"{resource} container resource utilization (percentage of request)"
        return replicas, name, {"averageUtilization": utilization, "averageValue": _milli(raw)}

    def _fetch(self, resource: str, namespace: str, selector: str, container: str
               ) -> dict[str, PodMetric]:
        try:
            metrics, _timestamp = get_resource_metric(self.client, resource, namespace, selector,
                                                      container)
        except ReplicaCalculationError as err:
            raise ReplicaCalculationError(f"unable to get metrics for resource {resource}: {err}") \
                from None
        return metrics

    def _unable(self, hpa: Object, err: Exception, reason: str) -> None:
        """getUnableComputeReplicaCountCondition: an event, and the condition to set."""
        self.recorder.event(hpa, WARNING, reason, str(err))
        err.condition = (reason, f"the HPA was unable to compute the replica count: {err}")  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ normalization

    def stabilize_recommendation(self, key: str, prenormalized: int) -> int:
        """stabilizeRecommendation: the highest recommendation of the window."""
        highest, old_index = prenormalized, -1
        cutoff = self.clock.now - self.downscale_stabilisation_window
        records = self.recommendations.setdefault(key, [])
        for i, rec in enumerate(records):
            if rec.timestamp < cutoff:
                old_index = i
            elif rec.recommendation > highest:
                highest = rec.recommendation
        fresh = _Recommendation(prenormalized, self.clock.now)
        if old_index >= 0:
            records[old_index] = fresh
        else:
            records.append(fresh)
        return highest

    def normalize_desired_replicas(self, hpa: Object, key: str, current: int, prenormalized: int,
                                   minimum: int) -> int:
        stabilized = self.stabilize_recommendation(key, prenormalized)
        now = self.clock.now
        if stabilized != prenormalized:
            set_condition(hpa, "AbleToScale", "True", "ScaleDownStabilized", "recent recommendations "
                          "were higher than current one, applying the highest recent recommendation", now)
        else:
            set_condition(hpa, "AbleToScale", "True", "ReadyForNewScale",
                          "recommended size matches current size", now)
        desired, reason, message = convert_desired_replicas_with_rules(
            current, stabilized, minimum, int(hpa["spec"]["maxReplicas"]))
        set_condition(hpa, "ScalingLimited", "False" if desired == stabilized else "True",
                      reason, message, now)
        return desired

    def normalize_desired_replicas_with_behaviors(self, hpa: Object, key: str, current: int,
                                                  prenormalized: int, minimum: int) -> int:
        behavior = hpa["spec"]["behavior"]
        up, down = behavior.get("scaleUp") or {}, dict(behavior.get("scaleDown") or {})
        if down.get("stabilizationWindowSeconds") is None:  # maybeInitScaleDownStabilizationWindow
            down["stabilizationWindowSeconds"] = int(self.downscale_stabilisation_window)
        now = self.clock.now
        stabilized, reason, message = self.stabilize_recommendation_with_behaviors(
            key, up, down, current, prenormalized)
        if stabilized != prenormalized:
            set_condition(hpa, "AbleToScale", "True", reason, message, now)
        else:
            set_condition(hpa, "AbleToScale", "True", "ReadyForNewScale",
                          "recommended size matches current size", now)
        desired, reason, message = self.convert_desired_replicas_with_behavior_rate(
            key, up, down, minimum, int(hpa["spec"]["maxReplicas"]), current, stabilized)
        set_condition(hpa, "ScalingLimited", "False" if desired == stabilized else "True",
                      reason, message, now)
        return desired

    def stabilize_recommendation_with_behaviors(self, key: str, up: Object, down: Object,
                                                current: int, desired: int) -> tuple[int, str, str]:
        now = self.clock.now
        up_cutoff = now - float(up.get("stabilizationWindowSeconds") or 0)
        down_cutoff = now - float(down.get("stabilizationWindowSeconds") or 0)
        up_rec = down_rec = desired
        old_index = -1
        records = self.recommendations.setdefault(key, [])
        for i, rec in enumerate(records):
            if rec.timestamp > up_cutoff:
                up_rec = min(rec.recommendation, up_rec)
            if rec.timestamp > down_cutoff:
                down_rec = max(rec.recommendation, down_rec)
            if rec.timestamp < up_cutoff and rec.timestamp < down_cutoff:
                old_index = i
        recommendation = min(max(current, up_rec), down_rec)
        fresh = _Recommendation(desired, now)
        if old_index >= 0:
            records[old_index] = fresh
        else:
            records.append(fresh)
        if desired >= current:
            return recommendation, "ScaleUpStabilized", "recent recommendations were lower than " \
                "current one, applying the lowest recent recommendation"
        return recommendation, "ScaleDownStabilized", "recent recommendations were higher than " \
            "current one, applying the highest recent recommendation"

    def convert_desired_replicas_with_behavior_rate(self, key: str, up: Object, down: Object,
                                                    minimum: int, maximum: int, current: int,
                                                    desired: int) -> tuple[int, str, str]:
        ups, downs = self.scale_up_events.get(key, []), self.scale_down_events.get(key, [])
        now = self.clock.now
        if desired > current:
            limit = max(calculate_scale_up_limit_with_scaling_rules(current, ups, downs, up, now),
                        current)
            if maximum > limit:
                allowed, reason, message = limit, "ScaleUpLimit", \
                    "the desired replica count is increasing faster than the maximum scale rate"
            else:
                allowed, reason, message = maximum, "TooManyReplicas", \
                    "the desired replica count is more than the maximum replica count"
            if desired > allowed:
                return allowed, reason, message
        elif desired < current:
            limit = min(calculate_scale_down_limit_with_behaviors(current, ups, downs, down, now),
                        current)
            if minimum < limit:
                allowed, reason, message = limit, "ScaleDownLimit", \
                    "the desired replica count is decreasing faster than the maximum scale rate"
            else:
                allowed, reason, message = minimum, "TooFewReplicas", \
                    "the desired replica count is less than the minimum replica count"
            if desired < allowed:
                return allowed, reason, message
        return desired, "DesiredWithinRange", "the desired count is within the acceptable range"

    def store_scale_event(self, behavior: Object | None, key: str, previous: int, new: int) -> None:
        """storeScaleEvent: remember the change, reusing a slot older than the longest period."""
        if behavior is None:
            return
        now = self.clock.now
        up = new > previous
        rules = (behavior.get("scaleUp") if up else behavior.get("scaleDown")) or {}
        longest = max((int(p.get("periodSeconds", 0)) for p in rules.get("policies") or []),
                      default=0)
        events = (self.scale_up_events if up else self.scale_down_events).setdefault(key, [])
        for event in events:  # markScaleEventsOutdated
            if event.timestamp < now - longest:
                event.outdated = True
        change = _ScaleEvent(abs(new - previous), now)
        for i, event in enumerate(events):
            if event.outdated:
                events[i] = change
                return
        events.append(change)

    # ------------------------------------------------------------------ status

    def set_current_replicas_and_metrics_in_status(self, hpa: Object, current: int,
                                                   statuses: list[Object]) -> None:
        desired = (hpa.get("status") or {}).get("desiredReplicas", 0)
        self.set_status(hpa, current, desired, statuses, False)

    def set_status(self, hpa: Object, current: int, desired: int, statuses: list[Object],
                   rescale: bool) -> None:
        old = hpa.get("status") or {}
        status: Object = {"desiredReplicas": desired}  # currentReplicas is omitempty
        if current:
            status = {"currentReplicas": current, **status}
        if statuses:
            status["currentMetrics"] = statuses
        last = rfc3339(self.clock.now) if rescale else old.get("lastScaleTime")
        if last:
            status["lastScaleTime"] = last
        if old.get("conditions"):
            status["conditions"] = old["conditions"]
        hpa["status"] = status

    def update_status_if_needed(self, original: Object, hpa: Object) -> None:
        if original == hpa.get("status"):
            return
        try:
            self.client.update_status(hpa)
        except ApiError as err:
            self.recorder.event(hpa, WARNING, "FailedUpdateStatus", err.message)
            raise ApiError(err.code, err.reason, f"failed to update status for "
                           f"{hpa['metadata']['name']}: {err.message}") from None


# ---------------------------------------------------------------------- pure rules

def set_condition(hpa: Object, kind: str, status: str, reason: str, message: str,
                  now: float) -> None:
    """setCondition: lastTransitionTime moves only when the status changes."""
    conditions = hpa.setdefault("status", {}).setdefault("conditions", [])
    for condition in conditions:
        if condition.get("type") == kind:
            if condition.get("status") != status:
                condition["lastTransitionTime"] = rfc3339(now)
            condition.update(status=status, reason=reason, message=message)
            return
    conditions.append({"type": kind, "status": status, "lastTransitionTime": rfc3339(now),
                       "reason": reason, "message": message})


def calculate_scale_up_limit(current: int) -> int:
    return int(max(SCALE_UP_LIMIT_FACTOR * current, SCALE_UP_LIMIT_MINIMUM))


def convert_desired_replicas_with_rules(current: int, desired: int, minimum: int, maximum: int
                                        ) -> tuple[int, str, str]:
    """convertDesiredReplicasWithRules: clamp to [min, max] and to the scale-up limit (a
    minReplicas of 0 still keeps one replica)."""
    minimum = minimum or 1
    limit = calculate_scale_up_limit(current)
    if maximum > limit:
        allowed, reason, message = limit, "ScaleUpLimit", \
            "the desired replica count is increasing faster than the maximum scale rate"
    else:
        allowed, reason, message = maximum, "TooManyReplicas", \
            "the desired replica count is more than the maximum replica count"
    if desired < minimum:
        return minimum, "TooFewReplicas", "the desired replica count is less than the minimum replica count"
    if desired > allowed:
        return allowed, reason, message
    return desired, "DesiredWithinRange", "the desired count is within the acceptable range"


def get_replicas_change_per_period(period: float, events: list[_ScaleEvent], now: float) -> int:
    return sum(e.replica_change for e in events if e.timestamp > now - period)


def calculate_scale_up_limit_with_scaling_rules(current: int, ups: list[_ScaleEvent],
                                                downs: list[_ScaleEvent], rules: Object,
                                                now: float) -> int:
    select = rules.get("selectPolicy") or "Max"
    if select == "Disabled":
        return current
    pick, result = (min, math.inf) if select == "Min" else (max, -math.inf)
    for policy in rules.get("policies") or []:
        period = float(policy.get("periodSeconds", 0))
        start = current - get_replicas_change_per_period(period, ups, now) + \
            get_replicas_change_per_period(period, downs, now)
        value = int(policy.get("value", 0))
        proposed = start + value if policy.get("type") == "Pods" else \
            math.ceil(start * (1 + value / 100))
        result = pick(result, proposed)
    return int(result) if math.isfinite(result) else current


def calculate_scale_down_limit_with_behaviors(current: int, ups: list[_ScaleEvent],
                                              downs: list[_ScaleEvent], rules: Object,
                                              now: float) -> int:
    select = rules.get("selectPolicy") or "Max"
    if select == "Disabled":
        return current
    pick, result = (max, -math.inf) if select == "Min" else (min, math.inf)
    for policy in rules.get("policies") or []:
        period = float(policy.get("periodSeconds", 0))
        start = current - get_replicas_change_per_period(period, ups, now) + \
            get_replicas_change_per_period(period, downs, now)
        value = int(policy.get("value", 0))
        proposed = start - value if policy.get("type") == "Pods" else \
            int(start * (1 - value / 100))
        result = pick(result, proposed)
    return int(result) if math.isfinite(result) else current


def _milli(value: int) -> str:
    """resource.NewMilliQuantity(value, DecimalSI).String()."""
    return str(Quantity(Decimal(value).scaleb(-3), Format.DecimalSI))


def _with_condition(new: ReplicaCalculationError, old: Exception) -> ReplicaCalculationError:
    new.condition = getattr(old, "condition", None)  # type: ignore[attr-defined]
    return new


# --- hpacsi ---
def _milli_of(quantity: Any) -> int:
    """A target's Quantity as a milli-value (its MilliValue())."""
    try:
        return parse_quantity(str(quantity)).milli_value()
    except ParseError as err:
        raise ReplicaCalculationError(str(err)) from None


def go_label_selector(selector: Object | None) -> str:
    """fmt's %+v of a *metav1.LabelSelector, as upstream's metric names and errors print it:
    nil, or its generated String()."""
    if selector is None:
        return "nil"
    labels = "".join(f"{k}: {v}," for k, v in sorted((selector.get("matchLabels") or {}).items()))
    expressions = "".join(
        f"LabelSelectorRequirement{{Key:{e.get('key', '')},Operator:{e.get('operator', '')},"
        f"Values:[{' '.join(e.get('values') or [])}],}},"
        for e in selector.get("matchExpressions") or [])
    return (f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},"
            f"MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}")
