"""ObjectMeta rules shared by every kind: names, labels, annotations, finalizers, owners.

apimachinery pkg/api/validation/objectmeta.go (ValidateObjectMeta, ValidateObjectMetaUpdate,
ValidateOwnerReferences, ValidateFinalizers) and pkg/apis/meta/v1/validation (ValidateLabels).
"""

from __future__ import annotations

import json
from typing import Any

from kubelab.api.errors import (
    FieldError,
    field_forbidden,
    field_invalid,
    field_too_long,
)
from kubelab.api.resources import ResourceInfo
from kubelab.api.validation import (
    is_qualified_name,
    is_valid_label_value,
    validate_object_meta,
)

__all__ = [
    "TOTAL_ANNOTATION_SIZE_LIMIT",
    "label_value_errors",
    "qualified_name_errors",
    "validate_labels",
    "validate_meta",
    "validate_meta_update",
]

TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024

# IsQualifiedName and IsValidLabelValue live in kubelab.api.validation (cached there).
qualified_name_errors = is_qualified_name
label_value_errors = is_valid_label_value


def validate_labels(labels: Any, path: str) -> list[FieldError]:
    if not isinstance(labels, dict):
        return []
    errs = []
    for key, value in labels.items():
        for msg in qualified_name_errors(key):
            errs.append(field_invalid(path, key, msg))
        if isinstance(value, str):
            for msg in label_value_errors(value):
                errs.append(field_invalid(f"{path}[{key}]", value, msg))
    return errs


# RBAC objects are named like path segments (rbac validation ValidateRBACName), which allows
# the "system:" names of the bootstrap policy.
PATH_SEGMENT_NAMED = frozenset({"roles", "rolebindings", "clusterroles", "clusterrolebindings"})


def path_segment_errors(name: str) -> list[str]:
    """path.IsValidPathSegmentName."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in "/%" if c in name]


def validate_meta(obj: dict[str, Any], info: ResourceInfo) -> list[FieldError]:
    """ValidateObjectMeta for a new object."""
    meta = obj.get("metadata")
    if info.resource in PATH_SEGMENT_NAMED and info.group == "rbac.authorization.k8s.io" and \
            isinstance(meta, dict) and isinstance(meta.get("name"), str) and meta["name"]:
        name = meta["name"]
        errs = validate_object_meta({**meta, "name": "x"}, namespaced=info.namespaced)
        errs += [field_invalid("metadata.name", name, m) for m in path_segment_errors(name)]
    else:
        errs = validate_object_meta(meta, namespaced=info.namespaced, name_rule=info.name_rule)
    if not isinstance(meta, dict):
        return errs
    errs += validate_labels(meta.get("labels"), "metadata.labels")
    annotations = meta.get("annotations")
    if annotations and isinstance(annotations, dict):
        size = 0
        for key, value in annotations.items():
            for msg in qualified_name_errors(key.lower()):
                errs.append(field_invalid("metadata.annotations", key, msg))
            if isinstance(value, str):
                size += len(key) + len(value)
        if size > TOTAL_ANNOTATION_SIZE_LIMIT:
            errs.append(field_too_long("metadata.annotations", TOTAL_ANNOTATION_SIZE_LIMIT))
    finalizers = meta.get("finalizers")
    if finalizers:
        for i, name in enumerate(finalizers):
            for msg in qualified_name_errors(name):
                errs.append(field_invalid(f"metadata.finalizers[{i}]", name, msg))
        if "orphan" in finalizers and "foregroundDeletion" in finalizers:
            errs.append(field_invalid("metadata.finalizers", finalizers,
                                      "finalizer foregroundDeletion and orphan cannot be both set"))
    refs = meta.get("ownerReferences")
    if refs:
        errs += _owner_references(refs)
    return errs


def _owner_references(refs: list[dict[str, Any]]) -> list[FieldError]:
    errs = []
    path = "metadata.ownerReferences"
    for ref in refs:
        for field, what in (("apiVersion", "version"), ("kind", "kind"), ("name", "name"),
                            ("uid", "uid")):
            if not ref.get(field):
                errs.append(field_invalid(f"{path}.{field}", ref.get(field, ""),
                                          f"{what} must not be empty"))
    controllers = [r for r in refs if r.get("controller")]
    if len(controllers) > 1:
        names = ", ".join(f"{r.get('kind')}/{r.get('name')}" for r in controllers)
        errs.append(field_invalid(path, refs, "Only one reference can have Controller set to "
                                  f"true. Found \"true\" in references for {names}"))
    return errs


def validate_meta_update(obj: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """ValidateObjectMetaUpdate: what an update may not change."""
    meta, old_meta = obj.get("metadata") or {}, old.get("metadata") or {}
    errs = []
    for field in ("name", "namespace", "uid", "creationTimestamp"):
        if meta.get(field) != old_meta.get(field):
            errs.append(field_invalid(f"metadata.{field}", meta.get(field), "field is immutable"))
    added = set(meta.get("finalizers") or ()) - set(old_meta.get("finalizers") or ())
    if old_meta.get("deletionTimestamp") and added:
        errs.append(field_forbidden("metadata.finalizers", "no new finalizers can be added if "
                                    "the object is being deleted, found new finalizers "
                                    + json.dumps(sorted(added))))
    return errs
