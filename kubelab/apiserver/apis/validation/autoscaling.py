"""autoscaling/v2 HorizontalPodAutoscalers: pkg/apis/autoscaling/validation/validation.go
(ValidateHorizontalPodAutoscaler, validateMetrics, validateMetricTarget, validateBehavior,
validateScalingRules, ValidateCrossVersionObjectReference), in upstream's paths and words.

Only the metric sources kubelab's controller reads (Resource, ContainerResource) are checked in
depth; Pods, Object and External are accepted as upstream's types and reported by the
controller (kubelab/controllers/podautoscaler/) as metrics it cannot get.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import FieldError, ParseError, field_invalid, field_not_supported, field_required
from kubelab.api.quantity import parse_quantity

__all__ = ["validate_horizontal_pod_autoscaler", "validate_horizontal_pod_autoscaler_status_update",
           "validate_horizontal_pod_autoscaler_update"]

METRIC_TYPES = ["ContainerResource", "External", "Object", "Pods", "Resource"]
TARGET_TYPES = ("Utilization", "Value", "AverageValue")
MAX_PERIOD_SECONDS = 1800
MAX_STABILIZATION_WINDOW_SECONDS = 3600


def _dict(value: Any) -> Object:
    return value if isinstance(value, dict) else {}


def validate_horizontal_pod_autoscaler(hpa: Object) -> list[FieldError]:
    spec = _dict(hpa.get("spec"))
    errs = _scale_target_ref(_dict(spec.get("scaleTargetRef")), "spec.scaleTargetRef")
    minimum, maximum = spec.get("minReplicas"), spec.get("maxReplicas", 0)
    if isinstance(minimum, int) and minimum < 1:
        errs.append(field_invalid("spec.minReplicas", minimum, "must be greater than or equal to 1"))
    if not isinstance(maximum, int) or maximum < 1:
        errs.append(field_invalid("spec.maxReplicas", maximum, "must be greater than 0"))
    if isinstance(minimum, int) and isinstance(maximum, int) and maximum < minimum:
        errs.append(field_invalid("spec.maxReplicas", maximum,
                                  "must be greater than or equal to `minReplicas`"))
    for i, metric in enumerate(spec.get("metrics") or []):
        errs += _metric(_dict(metric), f"spec.metrics[{i}]")
    behavior = spec.get("behavior")
    if behavior is not None:
        for direction in ("scaleUp", "scaleDown"):
            rules = _dict(behavior).get(direction)
            if rules is not None:
                errs += _scaling_rules(_dict(rules), f"spec.behavior.{direction}")
    return errs


def _scale_target_ref(ref: Object, path: str) -> list[FieldError]:
    errs = []
    for name in ("kind", "name"):
        value = ref.get(name)
        if not value:
            errs.append(field_required(f"{path}.{name}"))
        elif "/" in str(value) or "%" in str(value) or value in (".", ".."):
            errs.append(field_invalid(f"{path}.{name}", value,
                                      "may not contain '/'" if "/" in str(value) else
                                      "may not contain '%'" if "%" in str(value) else
                                      f"may not be '{value}'"))
    return errs


def _metric(metric: Object, path: str) -> list[FieldError]:
    kind = metric.get("type")
    if not kind:
        return [field_required(f"{path}.type", "must specify a metric source type")]
    if kind not in METRIC_TYPES:
        return [field_not_supported(f"{path}.type", kind, METRIC_TYPES)]
    source_field = kind[0].lower() + kind[1:]
    source = metric.get(source_field)
    if source is None:
        return [field_required(f"{path}.{source_field}",
                               "must populate information for the given metric source")]
    if kind not in ("Resource", "ContainerResource"):
        return []
    source, at = _dict(source), f"{path}.{source_field}"
    errs = [] if source.get("name") else [field_required(f"{at}.name", "must specify a resource name")]
    if kind == "ContainerResource" and not source.get("container"):
        errs.append(field_required(f"{at}.container", "must specify a container"))
    target = _dict(source.get("target"))
    errs += _metric_target(target, f"{at}.target")
    if target.get("averageUtilization") is None and target.get("averageValue") is None:
        errs.append(field_required(f"{at}.target.averageUtilization",
                                   "must set either a target raw value or a target utilization"))
    if target.get("averageUtilization") is not None and target.get("averageValue") is not None:
        errs.append(field_invalid(f"{at}.target.averageValue", target.get("averageValue"),
                                  "may not set both a target raw value and a target utilization"))
    return errs


def _metric_target(target: Object, path: str) -> list[FieldError]:
    errs = []
    kind = target.get("type")
    if not kind:
        errs.append(field_required(f"{path}.type", "must specify a metric target type"))
    elif kind not in TARGET_TYPES:
        errs.append(field_invalid(f"{path}.type", kind, "must be either Utilization, Value, or AverageValue"))
    for name in ("value", "averageValue"):
        if target.get(name) is not None and not _positive(target[name]):
            errs.append(field_invalid(f"{path}.{name}", target[name], "must be positive"))
    utilization = target.get("averageUtilization")
    if isinstance(utilization, int) and utilization < 1:
        errs.append(field_invalid(f"{path}.averageUtilization", utilization, "must be greater than 0"))
    return errs


def _positive(value: Any) -> bool:
    try:
        return parse_quantity(value).as_decimal() > 0
    except ParseError:
        return False


def _scaling_rules(rules: Object, path: str) -> list[FieldError]:
    errs = []
    window = rules.get("stabilizationWindowSeconds")
    if isinstance(window, int):
        if window < 0:
            errs.append(field_invalid(f"{path}.stabilizationWindowSeconds", window,
                                      "must be greater than or equal to zero"))
        elif window > MAX_STABILIZATION_WINDOW_SECONDS:
            errs.append(field_invalid(f"{path}.stabilizationWindowSeconds", window,
                                      f"must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"))
    select = rules.get("selectPolicy")
    if select is not None and select not in ("Max", "Min", "Disabled"):
        errs.append(field_not_supported(f"{path}.selectPolicy", select, ["Disabled", "Max", "Min"]))
    policies = rules.get("policies") or []
    if not policies:
        errs.append(field_required(f"{path}.policies", "must specify at least one Policy"))
    for i, policy in enumerate(policies):
        policy, at = _dict(policy), f"{path}.policies[{i}]"
        if policy.get("type") not in ("Pods", "Percent"):
            errs.append(field_not_supported(f"{at}.type", policy.get("type", ""), ["Percent", "Pods"]))
        value = policy.get("value", 0)
        if not isinstance(value, int) or value <= 0:
            errs.append(field_invalid(f"{at}.value", value, "must be greater than zero"))
        period = policy.get("periodSeconds", 0)
        if not isinstance(period, int) or period <= 0:
            errs.append(field_invalid(f"{at}.periodSeconds", period, "must be greater than zero"))
        elif period > MAX_PERIOD_SECONDS:
            errs.append(field_invalid(f"{at}.periodSeconds", period,
                                      f"must be less than or equal to {MAX_PERIOD_SECONDS}"))
    return errs


def validate_horizontal_pod_autoscaler_update(hpa: Object, old: Object) -> list[FieldError]:
    return validate_horizontal_pod_autoscaler(hpa)


def validate_horizontal_pod_autoscaler_status_update(hpa: Object, old: Object) -> list[FieldError]:
    status = _dict(hpa.get("status"))
    errs = []
    for name in ("currentReplicas", "desiredReplicas"):
        value = status.get(name, 0)
        if isinstance(value, int) and value < 0:
            errs.append(field_invalid(f"status.{name}", value,
                                      "must be greater than or equal to 0"))
    return errs
