"""core/v1 ResourceQuota rules: pkg/apis/core/validation/validation.go (ValidateResourceQuota,
ValidateResourceQuotaSpec, ValidateResourceQuotaStatus, ValidateResourceQuotaResourceName,
validateResourceQuotaScopes, validateScopeSelector, validateScopedResourceSelectorRequirement,
ValidateResourceQuotaUpdate, ValidateResourceQuotaStatusUpdate), with the standard names of
pkg/apis/core/helper/helpers.go (kubelab/api/quota/core.py). Go walks the hard maps in random
order; kubelab reports their keys sorted.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import FieldError, field_invalid, field_required
from kubelab.api.quota.core import (
    EXISTS_ONLY,
    STANDARD_QUOTA_RESOURCES,
    STANDARD_SCOPES,
    scope_valid_for_resource,
)
from kubelab.api.validation import is_qualified_name
from kubelab.apiserver.apis.validation.container import STANDARD_RESOURCES, validate_resource_quantity

__all__ = ["validate_resource_quota", "validate_resource_quota_status_update",
           "validate_resource_quota_update"]

IMMUTABLE = "field is immutable"
CONFLICTING = ({"BestEffort", "NotBestEffort"}, {"Terminating", "NotTerminating"})


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _standard_quota_name(name: str) -> bool:
    """IsStandardQuotaResourceName (hugepages count too)."""
    return name in STANDARD_QUOTA_RESOURCES or name.startswith(("hugepages-", "requests.hugepages-"))


def validate_resource_quota_resource_name(name: str, path: str) -> list[FieldError]:
    """ValidateResourceQuotaResourceName: validateResourceName, then a standard quota name
    unless it is qualified (count/pods, <class>.storageclass.storage.k8s.io/requests.storage)."""
    errs = [field_invalid(path, name, m) for m in is_qualified_name(name)]
    if not errs and "/" not in name and name not in STANDARD_RESOURCES and \
            not name.startswith(("hugepages-", "requests.hugepages-")):
        errs.append(field_invalid(path, name, "must be a standard resource type or fully qualified"))
    if "/" not in name and not _standard_quota_name(name):
        errs.append(field_invalid(path, name, "must be a standard resource for quota"))
    return errs


def _resource_list(value: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for name in sorted(_dict(value)):
        where = f"{path}[{name}]"
        errs += validate_resource_quota_resource_name(name, where)
        errs += validate_resource_quantity(name, value[name], where)
    return errs


def _scopes(spec: Object) -> list[FieldError]:
    """validateResourceQuotaScopes."""
    scopes = list(spec.get("scopes") or ())
    if not scopes:
        return []
    errs: list[FieldError] = []
    hard = sorted(_dict(spec.get("hard")))
    for scope in scopes:
        if scope not in STANDARD_SCOPES:
            errs.append(field_invalid("spec.scopes", scopes, "unsupported scope"))
        for name in hard:
            if _standard_quota_name(name) and not scope_valid_for_resource(scope, name):
                errs.append(field_invalid("spec.scopes", scopes,
                                          "unsupported scope applied to resource"))
    errs += [field_invalid("spec.scopes", scopes, "conflicting scopes")
             for pair in CONFLICTING if pair <= set(scopes)]
    return errs


def _scope_selector(spec: Object) -> list[FieldError]:
    """validateScopeSelector and validateScopedResourceSelectorRequirement."""
    selector = spec.get("scopeSelector")
    if selector is None:
        return []
    path = "spec.scopeSelector.matchExpressions"
    errs: list[FieldError] = []
    hard = sorted(_dict(spec.get("hard")))
    names: set[str] = set()
    for req in _dict(selector).get("matchExpressions") or ():
        req = _dict(req)
        scope, operator = req.get("scopeName", ""), req.get("operator", "")
        if scope not in STANDARD_SCOPES:
            errs.append(field_invalid(f"{path}.scopeName", scope, "unsupported scope"))
        for name in hard:
            if _standard_quota_name(name) and not scope_valid_for_resource(scope, name):
                errs.append(field_invalid(path, selector, "unsupported scope applied to resource"))
        if scope in EXISTS_ONLY and operator != "Exists":
            errs.append(field_invalid(
                f"{path}.operator", operator, "must be 'Exist' when scope is any of "
                "ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, "
                "ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or "
                "ResourceQuotaScopeCrossNamespacePodAffinity"))
        values = req.get("values") or []
        if operator in ("In", "NotIn"):
            if not values:
                errs.append(field_required(f"{path}.values", "must be at least one value when "
                                           "`operator` is 'In' or 'NotIn' for scope selector"))
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                errs.append(field_invalid(f"{path}.values", values, "must be no value when "
                                          "`operator` is 'Exist' or 'DoesNotExist' for scope selector"))
        else:
            errs.append(field_invalid(f"{path}.operator", operator, "not a valid selector operator"))
        names.add(str(scope))
    # Upstream names spec.scopes as the value here, not the selector.
    errs += [field_invalid(path, list(spec.get("scopes") or ()), "conflicting scopes")
             for pair in CONFLICTING if pair <= names]
    return errs


def validate_resource_quota(quota: Object) -> list[FieldError]:
    """ValidateResourceQuota: the spec, then the status."""
    spec, status = _dict(quota.get("spec")), _dict(quota.get("status"))
    errs = _resource_list(spec.get("hard"), "spec.hard") + _scopes(spec) + _scope_selector(spec)
    return errs + _resource_list(status.get("hard"), "status.hard") + \
        _resource_list(status.get("used"), "status.used")


def validate_resource_quota_update(quota: Object, old: Object) -> list[FieldError]:
    """ValidateResourceQuotaUpdate: the spec as on create; the scopes may not change."""
    spec = _dict(quota.get("spec"))
    errs = _resource_list(spec.get("hard"), "spec.hard") + _scopes(spec) + _scope_selector(spec)
    if set(spec.get("scopes") or ()) != set(_dict(old.get("spec")).get("scopes") or ()):
        errs.append(field_invalid("spec.scopes", list(spec.get("scopes") or ()), IMMUTABLE))
    return errs


def validate_resource_quota_status_update(quota: Object, old: Object) -> list[FieldError]:
    """ValidateResourceQuotaStatusUpdate: a resourceVersion, then status.hard and status.used."""
    status = _dict(quota.get("status"))
    errs = [] if _dict(quota.get("metadata")).get("resourceVersion") else \
        [field_required("resourceVersion")]
    return errs + _resource_list(status.get("hard"), "status.hard") + \
        _resource_list(status.get("used"), "status.used")
