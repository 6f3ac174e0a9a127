"""apps/v1 StatefulSet rules (kubernetes/kubernetes pkg/apis/apps/validation/validation.go:
ValidateStatefulSetSpec, validateRollingUpdateStatefulSet, ValidateStatefulSetUpdate,
ValidateStatefulSetStatus, ValidateStatefulSetStatusUpdate).

Only replicas, ordinals, template, updateStrategy, revisionHistoryLimit,
persistentVolumeClaimRetentionPolicy and minReadySeconds may change after create; the rest of
the spec (the selector, serviceName, podManagementPolicy, volumeClaimTemplates) is fixed, with
upstream's one Forbidden error for all of them.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import FieldError, field_forbidden, field_invalid, field_not_supported, field_required
from kubelab.api.validation import is_dns1123_label
from kubelab.apiserver.apis.validation.apps import (
    _counts,
    _dict,
    _int_or_percent,
    _nonnegative,
    _selector_and_template,
)

__all__ = ["validate_stateful_set", "validate_stateful_set_status_update",
           "validate_stateful_set_update"]

# The fields ValidateStatefulSetUpdate copies from the old object before comparing the specs.
MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "revisionHistoryLimit",
           "persistentVolumeClaimRetentionPolicy", "minReadySeconds")
IMMUTABLE_MESSAGE = ("updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                     "'template', 'updateStrategy', 'revisionHistoryLimit', "
                     "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")
RETENTION = ["Retain", "Delete"]


def validate_stateful_set(sts: Object) -> list[FieldError]:
    """ValidateStatefulSetSpec."""
    spec = _dict(sts.get("spec"))
    errs: list[FieldError] = []
    policy = spec.get("podManagementPolicy")
    if not policy:
        errs.append(field_required("spec.podManagementPolicy"))
    elif policy not in ("OrderedReady", "Parallel"):
        errs.append(field_invalid("spec.podManagementPolicy", policy,
                                  "must be 'OrderedReady' or 'Parallel'"))
    strategy = _dict(spec.get("updateStrategy"))
    kind, rolling = strategy.get("type"), strategy.get("rollingUpdate")
    if not kind:
        errs.append(field_required("spec.updateStrategy"))
    elif kind == "OnDelete":
        if rolling is not None:
            errs.append(field_invalid("spec.updateStrategy.rollingUpdate", rolling,
                                      "only allowed for updateStrategy 'RollingUpdate'"))
    elif kind == "RollingUpdate":
        if rolling is not None:
            errs += _rolling_update(_dict(rolling), "spec.updateStrategy.rollingUpdate")
    else:
        errs.append(field_invalid("spec.updateStrategy", strategy,
                                  "must be 'RollingUpdate' or 'OnDelete'"))
    retention = _dict(spec.get("persistentVolumeClaimRetentionPolicy"))
    for field in ("whenDeleted", "whenScaled"):
        value = retention.get(field)
        if value not in RETENTION:
            errs.append(field_not_supported(f"spec.persistentVolumeClaimRetentionPolicy.{field}",
                                            value or "", RETENTION))
    errs += _nonnegative(spec, "replicas", "spec")
    errs += _nonnegative(spec, "minReadySeconds", "spec")
    if spec.get("ordinals") is not None:
        errs += _nonnegative(_dict(spec["ordinals"]), "start", "spec.ordinals")
    service = spec.get("serviceName")
    if service:
        errs += [field_invalid("spec.serviceName", service, msg) for msg in is_dns1123_label(service)]
    errs += _selector_and_template(spec, "statefulset")
    deadline = _dict(_dict(spec.get("template")).get("spec")).get("activeDeadlineSeconds")
    if deadline is not None:
        errs.append(field_invalid("spec.template.spec.activeDeadlineSeconds", deadline,
                                  "must not be specified"))
    return errs


def _rolling_update(rolling: Object, path: str) -> list[FieldError]:
    """validateRollingUpdateStatefulSet: partition >= 0; maxUnavailable a positive int or a
    percentage up to 100%, never 0."""
    errs = _nonnegative(rolling, "partition", path)
    value: Any = rolling.get("maxUnavailable")
    if value is not None:
        number = _int_or_percent(value, f"{path}.maxUnavailable", errs)
        if number == 0:
            errs.append(field_invalid(f"{path}.maxUnavailable", value, "cannot be 0"))
        elif isinstance(value, str) and number is not None and number > 100:
            errs.append(field_invalid(f"{path}.maxUnavailable", value, "must not be greater than 100%"))
    return errs


def validate_stateful_set_update(sts: Object, old: Object) -> list[FieldError]:
    """The strategy's ValidateUpdate: the new object as on create (ValidateStatefulSet), then
    ValidateStatefulSetUpdate: the spec, with the mutable fields taken from the old object,
    must equal the old spec."""
    spec, old_spec = _dict(sts.get("spec")), _dict(old.get("spec"))
    errs = validate_stateful_set(sts)
    fixed = {k: v for k, v in spec.items() if k not in MUTABLE}
    old_fixed = {k: v for k, v in old_spec.items() if k not in MUTABLE}
    if fixed != old_fixed:
        errs.append(field_forbidden("spec", IMMUTABLE_MESSAGE))
    return errs


def validate_stateful_set_status_update(sts: Object, old: Object) -> list[FieldError]:
    """ValidateStatefulSetStatus and the collisionCount that may not go down."""
    status = _dict(sts.get("status"))
    errs: list[FieldError] = []
    for field in ("replicas", "readyReplicas", "currentReplicas", "updatedReplicas",
                  "availableReplicas", "observedGeneration", "collisionCount"):
        errs += _nonnegative(status, field, "status")
    errs += _counts(status, ("readyReplicas", "currentReplicas", "updatedReplicas",
                             "availableReplicas"))
    collisions, before = status.get("collisionCount"), _dict(old.get("status")).get("collisionCount")
    if before is not None and (collisions is None or collisions < before):
        errs.append(field_invalid("status.collisionCount", collisions or 0, "cannot be decremented"))
    return errs
