"""CustomResourceDefinitions: a new resource served with no new code.

Creating a CRD makes the server serve its plural under its group, like apiextensions-apiserver
does (staging/src/k8s.io/apiextensions-apiserver: pkg/apis/apiextensions/validation for the
rules, pkg/registry/customresource for the objects). Custom objects are stored under
/registry/<group>/<plural>/, checked for metadata only (upstream would also apply the
openAPIV3Schema), and get a status subresource when the storage version asks for one.
Deleting the CRD deletes its objects (upstream does it through a finalizer).
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import (
    FieldError,
    field_invalid,
    field_not_supported,
    field_required,
)
from kubelab.api.resources import ResourceInfo
from kubelab.api.validation import is_dns1123_label, is_dns1123_subdomain

__all__ = ["crd_resource_info", "crd_status", "storage_version", "validate_crd"]

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
    for i, version in enumerate(versions):
        if not _dict(version).get("name"):
            errs.append(field_required(f"spec.versions[{i}].name"))
    return errs


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
    status = "status" in _dict(version.get("subresources"))
    return ResourceInfo(
        names["plural"], names["kind"], group=spec["group"], version=version["name"],
        namespaced=spec.get("scope", "Namespaced") == "Namespaced",
        short_names=tuple(names.get("shortNames") or ()),
        subresources=("status",) if status else ())
