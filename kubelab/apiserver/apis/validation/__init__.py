"""Validation: each kind's rules, in upstream's field-error words (422 Invalid).

    Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than
    or equal to 0

validate_create/validate_update pick the kind's rules; metadata rules apply to every kind
(meta.py). The modules follow upstream's split: core.py (core/v1), apps.py (apps/v1); the
small RBAC rules are here.
"""

from __future__ import annotations

from collections.abc import Callable

from kubelab.api import Object
from kubelab.api.errors import FieldError, field_invalid, field_not_supported, field_required
from kubelab.api.resources import ResourceInfo
from kubelab.apiserver.apis.validation.admissionregistration import (
    validate_mutating_webhook_configuration,
    validate_validating_webhook_configuration,
)
from kubelab.apiserver.apis.validation.apps import (
    validate_daemon_set,
    validate_daemon_set_status_update,
    validate_daemon_set_update,
    validate_deployment,
    validate_deployment_status_update,
    validate_deployment_update,
    validate_replica_set,
    validate_replica_set_status_update,
    validate_replica_set_update,
)
from kubelab.apiserver.apis.validation.autoscaling import (
    validate_horizontal_pod_autoscaler,
    validate_horizontal_pod_autoscaler_status_update,
    validate_horizontal_pod_autoscaler_update,
)
from kubelab.apiserver.apis.validation.batch import (
    validate_job,
    validate_job_status_update,
    validate_job_update,
)
from kubelab.apiserver.apis.validation.certificates import (
    validate_certificate_signing_request,
    validate_certificate_signing_request_update,
)
from kubelab.apiserver.apis.validation.config import (
    validate_config_map_update,
    validate_secret,
    validate_secret_update,
)
from kubelab.apiserver.apis.validation.coordination import validate_lease
from kubelab.apiserver.apis.validation.core import (
    validate_config_map,
    validate_node,
    validate_node_update,
    validate_pod,
    validate_pod_status_update,
    validate_pod_update,
)
from kubelab.apiserver.apis.validation.cronjob import (
    validate_cron_job,
    validate_cron_job_status_update,
    validate_cron_job_update,
)
from kubelab.apiserver.apis.validation.csi import (
    validate_csi_driver,
    validate_csi_driver_update,
    validate_volume_attachment,
    validate_volume_attachment_update,
)
from kubelab.apiserver.apis.validation.discovery import (
    validate_endpoint_slice,
    validate_endpoint_slice_update,
)
from kubelab.apiserver.apis.validation.endpoints import validate_endpoints, validate_endpoints_update
from kubelab.apiserver.apis.validation.ephemeral import validate_pod_ephemeral_containers_update
from kubelab.apiserver.apis.validation.flowcontrol import (
    validate_flow_schema,
    validate_priority_level_configuration,
)
from kubelab.apiserver.apis.validation.meta import validate_meta, validate_meta_update
from kubelab.apiserver.apis.validation.networking import (
    validate_ingress,
    validate_ingress_class,
    validate_network_policy,
)
from kubelab.apiserver.apis.validation.policy import (
    validate_pod_disruption_budget,
    validate_pod_disruption_budget_status_update,
)
from kubelab.apiserver.apis.validation.replication_controller import (
    validate_replication_controller,
    validate_replication_controller_status_update,
    validate_replication_controller_update,
)
from kubelab.apiserver.apis.validation.resourcequota import (
    validate_resource_quota,
    validate_resource_quota_status_update,
    validate_resource_quota_update,
)
from kubelab.apiserver.apis.validation.services import (
    validate_service,
    validate_service_status_update,
    validate_service_update,
)
from kubelab.apiserver.apis.validation.statefulset import (
    validate_stateful_set,
    validate_stateful_set_status_update,
    validate_stateful_set_update,
)
from kubelab.apiserver.apis.validation.storage import (
    validate_persistent_volume,
    validate_persistent_volume_claim,
    validate_persistent_volume_claim_status_update,
    validate_persistent_volume_claim_update,
    validate_persistent_volume_update,
    validate_storage_class,
    validate_storage_class_update,
)

__all__ = ["validate_create", "validate_scale", "validate_update"]

Validator = Callable[[Object], list[FieldError]]


def _rules(role: Object) -> list[FieldError]:
    errs = []
    for i, rule in enumerate(role.get("rules") or []):
        if not rule.get("verbs"):
            errs.append(field_required(f"rules[{i}].verbs", "verbs must contain at least one value"))
        if not rule.get("nonResourceURLs") and not rule.get("resources"):
            errs.append(field_required(f"rules[{i}].resources", "resource rules must supply at "
                                       "least one resource"))
    return errs


def _binding(kinds: list[str]) -> Validator:
    def validate(binding: Object) -> list[FieldError]:
        ref = binding.get("roleRef") or {}
        errs = []
        if ref.get("kind") not in kinds:
            errs.append(field_not_supported("roleRef.kind", ref.get("kind", ""), kinds))
        if not ref.get("name"):
            errs.append(field_required("roleRef.name"))
        for i, subject in enumerate(binding.get("subjects") or []):
            if subject.get("kind") not in ("ServiceAccount", "User", "Group"):
                errs.append(field_not_supported(f"subjects[{i}].kind", subject.get("kind", ""),
                                                ["ServiceAccount", "User", "Group"]))
            if not subject.get("name"):
                errs.append(field_required(f"subjects[{i}].name"))
        return errs
    return validate


CREATE_RULES: dict[str, Validator] = {
    "pods": validate_pod,
    "deployments": validate_deployment,
    "replicasets": validate_replica_set,
    "daemonsets": validate_daemon_set,
    "nodes": validate_node,
    "configmaps": validate_config_map,
    "secrets": validate_secret,
    "roles": _rules,
    "clusterroles": _rules,
    "rolebindings": _binding(["Role", "ClusterRole"]),
    "clusterrolebindings": _binding(["ClusterRole"]),
    "flowschemas": validate_flow_schema,
    "prioritylevelconfigurations": validate_priority_level_configuration,
    "jobs": validate_job,
    "services": validate_service,
    "endpointslices": validate_endpoint_slice,
    "leases": validate_lease,
    "mutatingwebhookconfigurations": validate_mutating_webhook_configuration,
    "validatingwebhookconfigurations": validate_validating_webhook_configuration,
    # --- i31-sts ---
    "statefulsets": validate_stateful_set,
    "replicationcontrollers": validate_replication_controller,
    # --- i31-cron-pdb ---
    "cronjobs": validate_cron_job,
    "poddisruptionbudgets": validate_pod_disruption_budget,
    # --- i31-storage ---
    "persistentvolumes": validate_persistent_volume,
    "persistentvolumeclaims": validate_persistent_volume_claim,
    "storageclasses": validate_storage_class,
    "ingresses": validate_ingress,
    "ingressclasses": validate_ingress_class,
    "networkpolicies": validate_network_policy,
    # --- i31-hpa ---
    "horizontalpodautoscalers": validate_horizontal_pod_autoscaler,
    # --- hpacsi ---
    "volumeattachments": validate_volume_attachment,
    "csidrivers": validate_csi_driver,
    # --- endpoints ---
    "endpoints": validate_endpoints,
    # --- csr ---
    "certificatesigningrequests": validate_certificate_signing_request,
    "resourcequotas": validate_resource_quota,
}


def _binding_update(kinds: list[str]) -> Callable[[Object, Object], list[FieldError]]:
    """ValidateRoleBindingUpdate: the binding is checked as on create, and roleRef is kept."""
    def validate(obj: Object, old: Object) -> list[FieldError]:
        errs = _binding(kinds)(obj)
        if obj.get("roleRef") != old.get("roleRef"):
            errs.append(field_invalid("roleRef", obj.get("roleRef"), "cannot change roleRef"))
        return errs
    return validate


UPDATE_RULES: dict[str, Callable[[Object, Object], list[FieldError]]] = {
    "pods": validate_pod_update,
    "configmaps": validate_config_map_update,
    "secrets": validate_secret_update,
    "nodes": validate_node_update,
    "deployments": validate_deployment_update,
    "replicasets": validate_replica_set_update,
    "daemonsets": validate_daemon_set_update,
    "rolebindings": _binding_update(["Role", "ClusterRole"]),
    "clusterrolebindings": _binding_update(["ClusterRole"]),
    "jobs": validate_job_update,
    "services": validate_service_update,
    "endpointslices": validate_endpoint_slice_update,
    # --- i31-sts ---
    "statefulsets": validate_stateful_set_update,
    "replicationcontrollers": validate_replication_controller_update,
    # --- i31-cron-pdb ---
    "cronjobs": validate_cron_job_update,
    # --- i31-storage ---
    "persistentvolumes": validate_persistent_volume_update,
    "persistentvolumeclaims": validate_persistent_volume_claim_update,
    "storageclasses": validate_storage_class_update,
    # --- i31-hpa ---
    "horizontalpodautoscalers": validate_horizontal_pod_autoscaler_update,
    # --- hpacsi ---
    "volumeattachments": validate_volume_attachment_update,
    "csidrivers": validate_csi_driver_update,
    # --- endpoints ---
    "endpoints": validate_endpoints_update,
    "resourcequotas": validate_resource_quota_update,
}


# The status strategies' ValidateUpdate (pkg/registry/core/pod/strategy.go podStatusStrategy,
# pkg/registry/apps/replicaset and deployment strategy.go): the spec is the old one again,
# so only the status is checked. Kinds not listed (nodes) check the whole object as usual.
STATUS_RULES: dict[str, Callable[[Object, Object], list[FieldError]]] = {
    "pods": validate_pod_status_update,
    "replicasets": validate_replica_set_status_update,
    "deployments": validate_deployment_status_update,
    "daemonsets": validate_daemon_set_status_update,
    "jobs": validate_job_status_update,
    "services": validate_service_status_update,
    # --- i31-sts ---
    "statefulsets": validate_stateful_set_status_update,
    "replicationcontrollers": validate_replication_controller_status_update,
    # --- i31-cron-pdb ---
    "cronjobs": validate_cron_job_status_update,
    "poddisruptionbudgets": validate_pod_disruption_budget_status_update,
    # --- i31-storage ---
    "persistentvolumeclaims": validate_persistent_volume_claim_status_update,
    # --- i31-hpa ---
    "horizontalpodautoscalers": validate_horizontal_pod_autoscaler_status_update,
    "resourcequotas": validate_resource_quota_status_update,
}


def validate_create(obj: Object, info: ResourceInfo, builtin: bool,
                    extra: Validator | None = None) -> list[FieldError]:
    """Every problem with a new object; extra adds rules of a kind not listed here (CRDs)."""
    errs = validate_meta(obj, info)
    rules = CREATE_RULES.get(info.resource) if builtin else None
    if rules is not None:
        errs += rules(obj)
    if extra is not None:
        errs += extra(obj)
    return errs


def validate_update(obj: Object, old: Object, info: ResourceInfo, builtin: bool,
                    extra: Validator | None = None, subresource: str = "") -> list[FieldError]:
    """Every problem with an update of old to obj (through its status subresource, if given)."""
    errs = validate_meta(obj, info) + validate_meta_update(obj, old)
    if builtin and info.resource == "certificatesigningrequests":  # --- csr --- per subresource
        errs += validate_certificate_signing_request_update(obj, old, subresource)
    elif builtin and subresource == "ephemeralcontainers":
        errs += validate_pod_ephemeral_containers_update(obj, old)
    elif builtin and subresource == "status" and info.resource in STATUS_RULES:
        errs += STATUS_RULES[info.resource](obj, old)
    elif builtin:
        update_rules = UPDATE_RULES.get(info.resource)
        if update_rules is not None:
            errs += update_rules(obj, old)
        elif info.resource in CREATE_RULES:
            errs += CREATE_RULES[info.resource](obj)
    if extra is not None:
        errs += extra(obj)
    return errs


def validate_scale(scale: Object) -> list[FieldError]:
    replicas = (scale.get("spec") or {}).get("replicas")
    if isinstance(replicas, int) and replicas < 0:
        return [field_invalid("spec.replicas", replicas, "must be greater than or equal to 0")]
    return []
