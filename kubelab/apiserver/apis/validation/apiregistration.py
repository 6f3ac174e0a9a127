"""Validation of APIServices: kube-aggregator pkg/apis/apiregistration/validation/validation.go
(ValidateAPIService, ValidateAPIServiceStatus), in upstream's words.

The name is a path segment and must be `<version>.<group>` (`v1.` for the legacy core group);
a local APIService (no spec.service) may have no caBundle and no insecureSkipTLSVerify.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import FieldError, field_invalid, field_not_supported, field_required
from kubelab.api.validation import is_dns1035_label, is_dns1123_subdomain
from kubelab.apiserver.apis.validation.meta import path_segment_errors

__all__ = ["validate_api_service", "validate_api_service_status_update",
           "validate_api_service_update"]

CONDITION_STATUSES = ["True", "False", "Unknown"]


def _dict(value: Any) -> Object:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _bundle_size(value: Any) -> int:
    """len(spec.caBundle): the JSON carries its bytes in base64."""
    if not isinstance(value, str) or not value:
        return 0
    try:
        return len(base64.b64decode(value, validate=True))
    except (binascii.Error, ValueError):
        return len(value)


def validate_api_service(svc: Object) -> list[FieldError]:
    """ValidateAPIService (the metadata's generic checks are validate_meta's)."""
    spec = _dict(svc.get("spec"))
    group, version = str(spec.get("group") or ""), str(spec.get("version") or "")
    required = f"{version}.{group}"
    errs: list[FieldError] = []
    name = _dict(svc.get("metadata")).get("name")
    if isinstance(name, str) and name:
        messages = path_segment_errors(name) or (
            [] if name == required else [f'must be `spec.version+"."+spec.group`: "{required}"'])
        errs += [field_invalid("metadata.name", name, m) for m in messages]
    if not group and version != "v1":
        errs.append(field_required("spec.group",
                                   "only v1 may have an empty group and it better be legacy kube"))
    if group:
        errs += [field_invalid("spec.group", group, m) for m in is_dns1123_subdomain(group)]
    errs += [field_invalid("spec.version", version, m) for m in is_dns1035_label(version)]
    minimum, priority = _int(spec.get("groupPriorityMinimum")), _int(spec.get("versionPriority"))
    if not 0 < minimum <= 20000:
        errs.append(field_invalid("spec.groupPriorityMinimum", minimum,
                                  "must be positive and less than 20000"))
    if not 0 < priority <= 1000:
        errs.append(field_invalid("spec.versionPriority", priority,
                                  "must be positive and less than 1000"))
    bundle, insecure = _bundle_size(spec.get("caBundle")), spec.get("insecureSkipTLSVerify") is True
    service = spec.get("service")
    if not isinstance(service, dict):
        if bundle:
            errs.append(field_invalid("spec.caBundle", f"{bundle} bytes",
                                      "local APIServices may not have a caBundle"))
        if insecure:
            errs.append(field_invalid("spec.insecureSkipTLSVerify", True,
                                      "local APIServices may not have insecureSkipTLSVerify"))
        return errs
    if not service.get("namespace"):
        errs.append(field_required("spec.service.namespace", ""))
    if not service.get("name"):
        errs.append(field_required("spec.service.name", ""))
    if insecure and bundle:
        errs.append(field_invalid("spec.insecureSkipTLSVerify", True,
                                  "may not be true if caBundle is present"))
    return errs


def validate_api_service_update(svc: Object, old: Object) -> list[FieldError]:
    """ValidateAPIServiceUpdate: the object is checked as on create."""
    return validate_api_service(svc)


def validate_api_service_status_update(svc: Object, old: Object) -> list[FieldError]:
    """ValidateAPIServiceStatus: each condition's status is True, False or Unknown."""
    errs: list[FieldError] = []
    conditions = _dict(svc.get("status")).get("conditions")
    for i, condition in enumerate(conditions if isinstance(conditions, list) else []):
        status = _dict(condition).get("status")
        if status not in CONDITION_STATUSES:
            errs.append(field_not_supported(f"status.conditions[{i}].status", status,
                                            CONDITION_STATUSES))
    return errs
