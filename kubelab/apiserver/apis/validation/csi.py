"""Validation of storage.k8s.io/v1 VolumeAttachment and CSIDriver.

Upstream: pkg/apis/storage/validation/validation.go (ValidateVolumeAttachment,
ValidateVolumeAttachmentV1, validateVolumeAttachmentSource, ValidateVolumeAttachmentUpdate,
ValidateCSIDriver, ValidateCSIDriverUpdate) and pkg/apis/core/validation ValidateCSIDriverName.
A VolumeAttachment's spec never changes; a CSIDriver's attachRequired, fsGroupPolicy and
volumeLifecycleModes do not either.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import (
    FieldError,
    field_forbidden,
    field_invalid,
    field_not_supported,
    field_required,
    field_too_long,
)
from kubelab.api.validation import is_dns1123_subdomain

__all__ = ["validate_csi_driver", "validate_csi_driver_update", "validate_volume_attachment",
           "validate_volume_attachment_update"]

FS_GROUP_POLICIES = ["File", "None", "ReadWriteOnceWithFSType"]
LIFECYCLE_MODES = ["Ephemeral", "Persistent"]
EXACTLY_ONE = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"


def _dict(value: Any) -> Object:
    return value if isinstance(value, dict) else {}


def validate_csi_driver_name(name: Any, path: str) -> list[FieldError]:
    """ValidateCSIDriverName: required, at most 63 characters, a DNS subdomain when lowered."""
    if not isinstance(name, str) or not name:
        return [field_required(path, "")]
    errs = [field_too_long(path, 63)] if len(name) > 63 else []
    return errs + [field_invalid(path, name, msg) for msg in is_dns1123_subdomain(name.lower())]


def validate_volume_attachment(va: Object) -> list[FieldError]:
    """ValidateVolumeAttachment and ValidateVolumeAttachmentV1."""
    spec = _dict(va.get("spec"))
    errs = validate_csi_driver_name(spec.get("attacher"), "spec.attacher")
    source = _dict(spec.get("source"))
    inline, pv = source.get("inlineVolumeSpec"), source.get("persistentVolumeName")
    if inline is None and pv is None:
        errs.append(field_required("spec.source", EXACTLY_ONE))
    elif inline is not None and pv is not None:
        errs.append(field_forbidden("spec.source", EXACTLY_ONE))
    elif pv is not None:
        if not pv:
            errs.append(field_required("spec.source.persistentVolumeName",
                                       "must specify non empty persistentVolumeName"))
        else:
            errs += [field_invalid("spec.source.persistentVolumeName", pv, msg)
                     for msg in is_dns1123_subdomain(str(pv))]
    node = spec.get("nodeName")
    errs += [field_invalid("spec.nodeName", node, msg) for msg in is_dns1123_subdomain(str(node or ""))]
    return errs


def validate_volume_attachment_update(va: Object, old: Object) -> list[FieldError]:
    errs = validate_volume_attachment(va)
    if va.get("spec") != old.get("spec"):
        errs.append(field_invalid("spec", va.get("spec"), "field is immutable"))
    return errs


def validate_csi_driver(driver: Object) -> list[FieldError]:
    """ValidateCSIDriver: the spec's booleans are set (defaults do it), the policy and modes known."""
    spec = _dict(driver.get("spec"))
    errs: list[FieldError] = []
    for key in ("attachRequired", "podInfoOnMount", "storageCapacity", "requiresRepublish"):
        if spec.get(key) is None:
            errs.append(field_required(f"spec.{key}", ""))
    policy = spec.get("fsGroupPolicy")
    if policy is not None and policy not in FS_GROUP_POLICIES:
        errs.append(field_not_supported("spec.fsGroupPolicy", policy, FS_GROUP_POLICIES))
    for i, mode in enumerate(spec.get("volumeLifecycleModes") or []):
        if mode not in LIFECYCLE_MODES:
            errs.append(field_not_supported(f"spec.volumeLifecycleModes[{i}]", mode, LIFECYCLE_MODES))
    return errs


def validate_csi_driver_update(driver: Object, old: Object) -> list[FieldError]:
    errs = validate_csi_driver(driver)
    spec, old_spec = _dict(driver.get("spec")), _dict(old.get("spec"))
    for key in ("attachRequired", "fsGroupPolicy", "volumeLifecycleModes"):
        if spec.get(key) != old_spec.get(key):
            errs.append(field_invalid(f"spec.{key}", spec.get(key), "field is immutable"))
    return errs
