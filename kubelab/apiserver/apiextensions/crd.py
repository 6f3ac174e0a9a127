"""CustomResourceDefinitions: a new resource served with no new code.

Creating a CRD makes the server serve its plural under its group, like apiextensions-apiserver
does (staging/src/k8s.io/apiextensions-apiserver: pkg/apis/apiextensions/validation for the
rules, pkg/registry/customresource for the objects). Custom objects are stored under
/registry/<group>/<plural>/ and checked against the storage version's openAPIV3Schema
(schema/, handler.py); the storage version may ask for the status and scale
subresources and for additionalPrinterColumns. Every served version is served, the storage
version stores (versions.py). Deleting the CRD deletes its objects first, through the
customresourcecleanup finalizer (finalizer.py).

Departure: validate_crd sees only the new object, so validateAPIApproval's ratchet (an update
that keeps the approval state it had is never refused for it) is not applied; a protected-group
CRD cannot be stored without its annotation here in the first place.
"""

from __future__ import annotations

import urllib.parse
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import (
    FieldError,
    field_invalid,
    field_not_supported,
    field_required,
)
from kubelab.api.resources import ResourceInfo
from kubelab.api.validation import is_dns1035_label, is_dns1123_label, is_dns1123_subdomain
from kubelab.apiserver.apiextensions.handler import CustomResourceSchema
from kubelab.apiserver.apiextensions.schema import validate_custom_resource_definition_validation

__all__ = ["CLEANUP_FINALIZER", "add_stored_version", "crd_resource_info", "crd_schema",
           "crd_status", "mark_for_cleanup", "set_condition", "storage_version", "terminating",
           "validate_crd"]

CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"

COLUMN_TYPES = ["integer", "number", "string", "boolean", "date"]
CONVERSION_STRATEGIES = ["None", "Webhook"]
API_APPROVED = "api-approved.kubernetes.io"
_PR_1111 = "see https://github.com/kubernetes/enhancements/pull/1111"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def storage_version(crd: Object) -> dict[str, Any] | None:
    versions = [v for v in _dict(crd.get("spec")).get("versions") or [] if isinstance(v, dict)]
    return next((v for v in versions if v.get("storage")), None)


def validate_crd(crd: Object) -> list[FieldError]:
    """The rules of ValidateCustomResourceDefinition that kubelab relies on."""
    spec = _dict(crd.get("spec"))
    names = _dict(spec.get("names"))
    group, plural, kind = spec.get("group") or "", names.get("plural") or "", names.get("kind")
    errs: list[FieldError] = []
    name = _dict(crd.get("metadata")).get("name")
    if group and plural and name != f"{plural}.{group}":
        errs.append(field_invalid("metadata.name", name,
                                  'must be spec.names.plural+"."+spec.group'))
    if not group:
        errs.append(field_required("spec.group"))
    elif is_dns1123_subdomain(group) or "." not in group:
        errs.append(field_invalid("spec.group", group, "should be a domain with at least one dot"))
    if not plural:
        errs.append(field_required("spec.names.plural"))
    else:
        errs += [field_invalid("spec.names.plural", plural, m) for m in is_dns1123_label(plural)]
    if not kind:
        errs.append(field_required("spec.names.kind"))
    scope = spec.get("scope")
    if scope not in ("Cluster", "Namespaced"):
        errs.append(field_required("spec.scope") if not scope else
                    field_not_supported("spec.scope", scope, ["Cluster", "Namespaced"]))
    versions = spec.get("versions") or []
    if not versions:
        errs.append(field_required("spec.versions"))
    elif sum(1 for v in versions if _dict(v).get("storage")) != 1:
        errs.append(field_invalid("spec.versions", versions,
                                  "must have exactly one version marked as storage version"))
    names_seen: set[str] = set()
    for i, version in enumerate(versions):
        version = _dict(version)
        if not version.get("name"):
            errs.append(field_required(f"spec.versions[{i}].name"))
        else:
            errs += [field_invalid(f"spec.versions[{i}].name", version["name"], m)
                     for m in is_dns1035_label(str(version["name"]))]
        if version.get("name") and version["name"] in names_seen:
            errs.append(field_invalid("spec.versions", [_dict(v).get("name") for v in versions],
                                      "must contain unique version names"))
        names_seen.add(str(version.get("name") or ""))
        errs += _version(version, f"spec.versions[{i}]")
    conversion = spec.get("conversion")
    if isinstance(conversion, dict):
        strategy = conversion.get("strategy")
        if not strategy:
            errs.append(field_required("spec.conversion.strategy"))
        elif strategy not in CONVERSION_STRATEGIES:
            errs.append(field_not_supported("spec.conversion.strategy", strategy,
                                            CONVERSION_STRATEGIES))
    errs += validate_api_approval(crd, None)
    stored = _dict(crd.get("status")).get("storedVersions") or []
    for i, name in enumerate(stored):  # ValidateCustomResourceDefinitionStoredVersions
        if name not in names_seen:
            errs.append(field_invalid(f"status.storedVersions[{i}]", name,
                                      "must appear in spec.versions"))
    return errs


def is_protected_community_group(group: str) -> bool:
    """IsProtectedCommunityGroup: k8s.io, kubernetes.io and their subdomains."""
    return any(group == g or group.endswith("." + g) for g in ("k8s.io", "kubernetes.io"))


def api_approval_state(crd: Object | None) -> tuple[str, str]:
    """GetAPIApprovalState: (state, reason) of the api-approved.kubernetes.io annotation."""
    value = _dict(_dict((crd or {}).get("metadata")).get("annotations")).get(API_APPROVED) or ""
    value = value if isinstance(value, str) else ""
    if not value:
        return "Missing", f'protected groups must have approval annotation "{API_APPROVED}", ' \
            + _PR_1111
    if value.startswith("unapproved"):
        return "Bypassed", f"not approved: {value!r}"
    url = urllib.parse.urlparse(value)
    if url.scheme and url.netloc:
        return "Approved", f"approved in {value}"
    return "Invalid", f'protected groups must have approval annotation "{API_APPROVED}" with ' \
        f'either a URL or a reason starting with "unapproved", {_PR_1111}'


def validate_api_approval(crd: Object, old: Object | None) -> list[FieldError]:
    """validateAPIApproval: a CRD in a protected group needs the annotation; an update that
    leaves its state as it was is never refused for it."""
    if not is_protected_community_group(str(_dict(crd.get("spec")).get("group") or "")):
        return []
    state, reason = api_approval_state(crd)
    if old is not None and api_approval_state(old)[0] == state:
        return []
    path = f"metadata.annotations[{API_APPROVED}]"
    if state == "Missing":
        return [field_required(path, reason)]
    if state == "Invalid":
        value = _dict(_dict(crd.get("metadata")).get("annotations")).get(API_APPROVED)
        return [field_invalid(path, value, reason)]
    return []


def add_stored_version(crd: Object) -> None:
    """strategy.go PrepareForUpdate: a new storage version joins status.storedVersions (objects
    in the old one stay until a migration rewrites them and someone removes it)."""
    version = storage_version(crd)
    stored = crd.setdefault("status", {}).setdefault("storedVersions", [])
    if version is not None and version.get("name") and version["name"] not in stored:
        stored.append(version["name"])


def _version(version: dict[str, Any], path: str) -> list[FieldError]:
    """One version's schema, subresources and printer columns (validation.go
    validateCustomResourceDefinitionVersion)."""
    errs = validate_custom_resource_definition_validation(
        _dict(version.get("schema")).get("openAPIV3Schema"), f"{path}.schema.openAPIV3Schema")
    scale = _dict(version.get("subresources")).get("scale")
    if isinstance(scale, dict):
        where = f"{path}.subresources.scale"
        for key, under in (("specReplicasPath", ".spec."), ("statusReplicasPath", ".status.")):
            value = scale.get(key)
            if not value:
                errs.append(field_required(f"{where}.{key}"))
            elif not str(value).startswith(under):
                errs.append(field_invalid(f"{where}.{key}", value,
                                          f"should be a json path under {under.rstrip('.')}"))
        selector = scale.get("labelSelectorPath")
        if selector and not str(selector).startswith((".spec.", ".status.")):
            errs.append(field_invalid(f"{where}.labelSelectorPath", selector,
                                      "should be a json path under either .spec or .status"))
    for i, column in enumerate(version.get("additionalPrinterColumns") or []):
        column, where = _dict(column), f"{path}.additionalPrinterColumns[{i}]"
        if not column.get("name"):
            errs.append(field_required(f"{where}.name"))
        if column.get("type") not in COLUMN_TYPES:
            errs.append(field_not_supported(f"{where}.type", column.get("type", ""), COLUMN_TYPES))
        if not column.get("jsonPath"):
            errs.append(field_required(f"{where}.jsonPath"))
    return errs


def crd_schema(crd: Object, name: str | None = None) -> CustomResourceSchema:
    """A version's schema, scale paths and printer columns (name None: the storage version's)."""
    storage = storage_version(crd) or {}
    version = storage if name is None else next(
        (v for v in _dict(crd.get("spec")).get("versions") or []
         if isinstance(v, dict) and v.get("name") == name), {})
    kind = str(_dict(_dict(crd.get("spec")).get("names")).get("kind") or "")
    scale = _dict(version.get("subresources")).get("scale")
    return CustomResourceSchema(
        kind, str(version.get("name") or ""),
        _dict(version.get("schema")).get("openAPIV3Schema"),
        scale=dict(scale) if isinstance(scale, dict) else None,
        printer_columns=[dict(c) for c in version.get("additionalPrinterColumns") or []
                         if isinstance(c, dict)],
        terminating=terminating(crd),
        storage_api_version=f"{_dict(crd.get('spec')).get('group', '')}/{storage.get('name', '')}",
        served=bool(version.get("served", True)))


def crd_status(crd: Object) -> Object:
    """What the CRD controllers write once the names are accepted (upstream does it later)."""
    spec = _dict(crd.get("spec"))
    names = dict(_dict(spec.get("names")))
    names.setdefault("singular", str(names.get("plural", "")).rstrip("s") or "")
    names.setdefault("listKind", f"{names.get('kind', '')}List")
    version = storage_version(crd) or {}
    return {
        "acceptedNames": names,
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
             "message": "no conflicts found"},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
             "message": "the initial names have been accepted"},
        ],
        "storedVersions": [version.get("name", "")],
    }


def crd_resource_info(crd: Object) -> ResourceInfo | None:
    """The resource a (valid) CRD defines, or None."""
    spec = _dict(crd.get("spec"))
    names = _dict(spec.get("names"))
    version = storage_version(crd)
    if not (spec.get("group") and names.get("plural") and names.get("kind") and version):
        return None
    subresources = _dict(version.get("subresources"))
    return ResourceInfo(
        names["plural"], names["kind"], group=spec["group"], version=version["name"],
        namespaced=spec.get("scope", "Namespaced") == "Namespaced",
        short_names=tuple(names.get("shortNames") or ()),
        subresources=tuple(sub for sub in ("status", "scale") if sub in subresources))


# ---------------------------------------------------------------- deletion (finalizer.py)


def set_condition(crd: Object, ctype: str, status: str, reason: str, message: str,
                  now: str) -> None:
    """SetCRDCondition: replace the condition of that type (its transition time kept while
    the status stays the same)."""
    conditions = (crd.setdefault("status", {})).setdefault("conditions", [])
    for condition in conditions:
        if condition.get("type") == ctype:
            if condition.get("status") != status:
                condition["lastTransitionTime"] = now
            condition.update(status=status, reason=reason, message=message)
            return
    conditions.append({"type": ctype, "status": status, "lastTransitionTime": now,
                       "reason": reason, "message": message})


def mark_for_cleanup(crd: Object, finalizers: list[str], now: str) -> None:
    """etcd.go Delete: the finalizer and Terminating=True on the first delete of a CRD."""
    if CLEANUP_FINALIZER not in finalizers:
        finalizers.append(CLEANUP_FINALIZER)
    set_condition(crd, "Terminating", "True", "InstanceDeletionPending",
                  "CustomResourceDefinition marked for deletion; CustomResource deletion will "
                  "begin soon", now)


def terminating(crd: Object) -> bool:
    return any(c.get("type") == "Terminating" and c.get("status") == "True"
               for c in (crd.get("status") or {}).get("conditions") or [])
