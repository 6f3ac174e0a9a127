"""apps/v1 rules: Deployments, ReplicaSets and DaemonSets.

pkg/apis/apps/validation/validation.go (ValidateDeploymentSpec, ValidateReplicaSetSpec,
ValidateDaemonSetSpec, ValidateDaemonSetUpdateStrategy, ValidateRollingUpdateDaemonSet,
ValidateDaemonSetStatusUpdate,
ValidatePodTemplateSpecForReplicaSet, ValidateRollingUpdateDeployment, and the status rules
ValidateDeploymentStatus and ValidateReplicaSetStatus) and
pkg/registry/apps/deployment/strategy.go (the selector is immutable in apps/v1).
"""

from __future__ import annotations

import re
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import (
    FieldError,
    ParseError,
    field_forbidden,
    field_invalid,
    field_not_supported,
    field_required,
)
from kubelab.api.labels import selector_from_label_selector
from kubelab.api.validation import regex_error
from kubelab.apiserver.apis.validation.core import validate_pod_spec
from kubelab.apiserver.apis.validation.meta import validate_labels

__all__ = ["validate_daemon_set", "validate_daemon_set_status_update",
           "validate_daemon_set_update", "validate_deployment", "validate_deployment_status_update",
           "validate_deployment_update", "validate_replica_set",
           "validate_replica_set_status_update", "validate_replica_set_update",
           "validate_workload_update"]

_PERCENT = re.compile(r"[0-9]+%")
NEGATIVE = "must be greater than or equal to 0"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _nonnegative(spec: Object, field: str, path: str) -> list[FieldError]:
    value = spec.get(field)
    return [field_invalid(f"{path}.{field}", value, NEGATIVE)] if value is not None and value < 0 \
        else []


def validate_replica_set(rs: Object) -> list[FieldError]:
    spec = _dict(rs.get("spec"))
    return _nonnegative(spec, "replicas", "spec") + _nonnegative(spec, "minReadySeconds", "spec") \
        + _selector_and_template(spec)


def validate_deployment(deploy: Object) -> list[FieldError]:
    spec = _dict(deploy.get("spec"))
    errs = _nonnegative(spec, "replicas", "spec") + _selector_and_template(spec)
    errs += _strategy(_dict(spec.get("strategy")), "spec.strategy")
    for field in ("minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds"):
        errs += _nonnegative(spec, field, "spec")
    deadline, min_ready = spec.get("progressDeadlineSeconds"), spec.get("minReadySeconds") or 0
    if deadline is not None and deadline <= min_ready:
        errs.append(field_invalid("spec.progressDeadlineSeconds", deadline,
                                  "must be greater than minReadySeconds"))
    return errs


def validate_replica_set_status_update(rs: Object, old: Object) -> list[FieldError]:
    status = _dict(rs.get("status"))
    errs = []
    for field in ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas",
                  "observedGeneration"):
        errs += _nonnegative(status, field, "status")
    return errs + _counts(status, ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"))


def validate_deployment_status_update(deploy: Object, old: Object) -> list[FieldError]:
    status = _dict(deploy.get("status"))
    errs = []
    for field in ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas",
                  "availableReplicas", "unavailableReplicas", "collisionCount"):
        errs += _nonnegative(status, field, "status")
    errs += _counts(status, ("updatedReplicas", "readyReplicas", "availableReplicas"))
    collisions, before = status.get("collisionCount"), _dict(old.get("status")).get("collisionCount")
    if before is not None and (collisions is None or collisions < before):
        errs.append(field_invalid("status.collisionCount", collisions or 0, "cannot be decremented"))
    return errs


def _counts(status: Object, parts: tuple[str, ...]) -> list[FieldError]:
    """Each of parts is a share of status.replicas, and available ones are ready ones."""
    count = {field: status.get(field) or 0 for field in ("replicas", "readyReplicas", *parts)}
    errs = [field_invalid(f"status.{field}", count[field], "cannot be greater than status.replicas")
            for field in parts if count[field] > count["replicas"]]
    if count["availableReplicas"] > count["readyReplicas"]:
        errs.append(field_invalid("status.availableReplicas", count["availableReplicas"],
                                  "cannot be greater than readyReplicas"))
    return errs


def validate_daemon_set(ds: Object) -> list[FieldError]:
    """ValidateDaemonSetSpec: selector and template as a ReplicaSet's, then the update strategy."""
    spec = _dict(ds.get("spec"))
    errs = _selector_and_template(spec, "daemonset")
    for field in ("minReadySeconds", "revisionHistoryLimit"):
        errs += _nonnegative(spec, field, "spec")
    strategy = _dict(spec.get("updateStrategy"))
    kind = strategy.get("type")
    if kind not in ("OnDelete", "RollingUpdate"):
        return [*errs, field_not_supported("spec.updateStrategy.type", kind,
                                           ["OnDelete", "RollingUpdate"])]
    if kind == "RollingUpdate":
        rolling = _dict(strategy.get("rollingUpdate"))
        values = {}
        for field in ("maxUnavailable", "maxSurge"):
            path = f"spec.updateStrategy.rollingUpdate.{field}"
            value = rolling.get(field)
            number = _int_or_percent(value, path, errs) if value is not None else 0
            values[field] = number
            if isinstance(value, str) and number is not None and number > 100:
                errs.append(field_invalid(path, value, "must not be greater than 100%"))
        if values["maxUnavailable"] == 0 and values["maxSurge"] == 0:
            errs.append(field_invalid("spec.updateStrategy.rollingUpdate.maxUnavailable",
                                      rolling.get("maxUnavailable", 0),
                                      "may not be 0 when `maxSurge` is 0"))
    return errs


def validate_daemon_set_update(ds: Object, old: Object) -> list[FieldError]:
    """ValidateDaemonSetUpdate: checked as on create, and the selector kept."""
    return validate_daemon_set(ds) + validate_workload_update(ds, old)


def validate_daemon_set_status_update(ds: Object, old: Object) -> list[FieldError]:
    """ValidateDaemonSetStatusUpdate: every counter is >= 0."""
    status = _dict(ds.get("status"))
    errs: list[FieldError] = []
    for field in ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled",
                  "numberReady", "observedGeneration", "updatedNumberScheduled",
                  "numberAvailable", "numberUnavailable", "collisionCount"):
        errs += _nonnegative(status, field, "status")
    return errs


def _selector_and_template(spec: Object, what: str = "deployment") -> list[FieldError]:
    errs: list[FieldError] = []
    raw = spec.get("selector")
    selector = None
    if raw is None:
        errs.append(field_required("spec.selector"))
        selector = selector_from_label_selector(None)  # selects nothing, as upstream
    elif not raw.get("matchLabels") and not raw.get("matchExpressions"):
        errs.append(field_invalid("spec.selector", raw, f"empty selector is invalid for {what}"))
    else:
        errs += validate_labels(raw.get("matchLabels"), "spec.selector.matchLabels")
        try:
            selector = selector_from_label_selector(raw)
        except ParseError:
            errs.append(field_invalid("spec.selector", raw, "invalid label selector"))
    template = _dict(spec.get("template"))
    if not template:
        return [*errs, field_required("spec.template")]
    labels = _dict(template.get("metadata")).get("labels") or {}
    errs += validate_labels(labels, "spec.template.metadata.labels")
    if selector is not None and not selector.matches(labels):
        errs.append(field_invalid("spec.template.metadata.labels", labels,
                                  "`selector` does not match template `labels`"))
    pod_spec = _dict(template.get("spec"))
    errs += validate_pod_spec(pod_spec, "spec.template.spec")
    policy = pod_spec.get("restartPolicy")
    if policy and policy != "Always":
        errs.append(field_not_supported("spec.template.spec.restartPolicy", policy, ["Always"]))
    return errs


def _strategy(strategy: Object, path: str) -> list[FieldError]:
    kind = strategy.get("type")
    rolling = strategy.get("rollingUpdate")
    if kind == "Recreate":
        return [field_forbidden(f"{path}.rollingUpdate", "may not be specified when strategy "
                                "`type` is 'Recreate'")] if rolling is not None else []
    if kind != "RollingUpdate":
        return [field_not_supported(f"{path}.type", kind, ["Recreate", "RollingUpdate"])]
    rolling = _dict(rolling)
    errs: list[FieldError] = []
    values = {}
    for field in ("maxUnavailable", "maxSurge"):
        value = rolling.get(field)
        if value is None:
            continue
        number = _int_or_percent(value, f"{path}.rollingUpdate.{field}", errs)
        values[field] = number
        if field == "maxUnavailable" and isinstance(value, str) and number is not None and \
                number > 100:
            errs.append(field_invalid(f"{path}.rollingUpdate.{field}", value,
                                      "must not be greater than 100%"))
    if values.get("maxUnavailable") == 0 and values.get("maxSurge") == 0:
        errs.append(field_invalid(f"{path}.rollingUpdate.maxUnavailable",
                                  rolling["maxUnavailable"], "may not be 0 when `maxSurge` is 0"))
    return errs


def _int_or_percent(value: Any, path: str, errs: list[FieldError]) -> int | None:
    """ValidatePositiveIntOrPercent: 5 or "5%", never negative."""
    if isinstance(value, str):
        if not _PERCENT.fullmatch(value):
            errs.append(field_invalid(path, value, regex_error(
                "a valid percent string must be a numeric string followed by an ending '%'",
                "[0-9]+%", "1%", "93%")))
            return None
        return int(value[:-1])
    if value < 0:
        errs.append(field_invalid(path, value, NEGATIVE))
        return None
    return int(value)


def validate_workload_update(obj: Object, old: Object) -> list[FieldError]:
    """apps/v1: the selector of a Deployment or ReplicaSet is immutable."""
    selector = _dict(obj.get("spec")).get("selector")
    if selector != _dict(old.get("spec")).get("selector"):
        return [field_invalid("spec.selector", selector, "field is immutable")]
    return []


def validate_deployment_update(deploy: Object, old: Object) -> list[FieldError]:
    """ValidateDeploymentUpdate: the new spec is checked as on create, and the selector kept."""
    return validate_deployment(deploy) + validate_workload_update(deploy, old)


def validate_replica_set_update(rs: Object, old: Object) -> list[FieldError]:
    """ValidateReplicaSetUpdate: the new spec is checked as on create, and the selector kept."""
    return validate_replica_set(rs) + validate_workload_update(rs, old)
