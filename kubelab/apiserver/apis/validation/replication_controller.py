"""core/v1 ReplicationController rules (kubernetes/kubernetes pkg/apis/core/validation/
validation.go: ValidateReplicationControllerSpec, ValidateNonEmptySelector,
ValidatePodTemplateSpecForRC, ValidateReplicationControllerUpdate,
ValidateReplicationControllerStatus).

Unlike a ReplicaSet's, an RC's selector is a plain map of labels, and it may change.
"""

from __future__ import annotations

from kubelab.api import Object
from kubelab.api.errors import FieldError, field_invalid, field_not_supported, field_required
from kubelab.apiserver.apis.validation.apps import _counts, _dict, _nonnegative
from kubelab.apiserver.apis.validation.core import validate_pod_spec
from kubelab.apiserver.apis.validation.meta import validate_labels

__all__ = ["validate_replication_controller", "validate_replication_controller_status_update",
           "validate_replication_controller_update"]


def validate_replication_controller(rc: Object) -> list[FieldError]:
    """ValidateReplicationControllerSpec."""
    spec = _dict(rc.get("spec"))
    errs = _nonnegative(spec, "minReadySeconds", "spec")
    selector = _dict(spec.get("selector"))
    if not selector:
        errs.append(field_required("spec.selector"))
    errs += validate_labels(selector, "spec.selector")
    errs += _nonnegative(spec, "replicas", "spec")
    template = spec.get("template")
    if not isinstance(template, dict):
        return [*errs, field_required("spec.template")]
    labels = _dict(template.get("metadata")).get("labels") or {}
    if selector and any(labels.get(k) != v for k, v in selector.items()):
        errs.append(field_invalid("spec.template.metadata.labels", labels,
                                  "`selector` does not match template `labels`"))
    errs += validate_labels(labels, "spec.template.metadata.labels")
    pod_spec = _dict(template.get("spec"))
    errs += validate_pod_spec(pod_spec, "spec.template.spec")
    policy = pod_spec.get("restartPolicy")
    if policy and policy != "Always":
        errs.append(field_not_supported("spec.template.spec.restartPolicy", policy, ["Always"]))
    if pod_spec.get("activeDeadlineSeconds") is not None:
        errs.append(field_invalid("spec.template.spec.activeDeadlineSeconds",
                                  pod_spec["activeDeadlineSeconds"],
                                  "activeDeadlineSeconds in ReplicationController is not Supported"))
    return errs


def validate_replication_controller_update(rc: Object, old: Object) -> list[FieldError]:
    """ValidateReplicationControllerUpdate: the spec as on create (the selector may change)."""
    return validate_replication_controller(rc)


def validate_replication_controller_status_update(rc: Object, old: Object) -> list[FieldError]:
    """ValidateReplicationControllerStatus."""
    status = _dict(rc.get("status"))
    errs: list[FieldError] = []
    for field in ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas",
                  "observedGeneration"):
        errs += _nonnegative(status, field, "status")
    return errs + _counts(status, ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"))
