"""Validation of PersistentVolumes, PersistentVolumeClaims and StorageClasses.

Upstream: pkg/apis/core/validation/validation.go (ValidatePersistentVolumeSpec,
ValidatePersistentVolumeUpdate, ValidatePersistentVolumeClaimSpec,
ValidatePersistentVolumeClaimUpdate, ValidatePersistentVolumeClaimStatusUpdate) and
pkg/apis/storage/validation/validation.go (ValidateStorageClass, ValidateStorageClassUpdate).
The words are upstream's; the Go diff upstream appends to "spec is immutable after creation..."
is left out.
"""

from __future__ import annotations

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
from kubelab.api.quantity import parse_quantity
from kubelab.api.validation import is_dns1123_subdomain, is_qualified_name

__all__ = ["ACCESS_MODES", "validate_persistent_volume", "validate_persistent_volume_claim",
           "validate_persistent_volume_claim_status_update",
           "validate_persistent_volume_claim_update", "validate_persistent_volume_update",
           "validate_storage_class", "validate_storage_class_update"]

ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
PV_RECLAIM_POLICIES = ["Delete", "Recycle", "Retain"]
SC_RECLAIM_POLICIES = ["Delete", "Retain"]
VOLUME_MODES = ["Block", "Filesystem"]
BINDING_MODES = ["Immediate", "WaitForFirstConsumer"]
# The volume sources a PersistentVolume may name (PersistentVolumeSource's fields).
PV_SOURCES = ("hostPath", "local", "csi", "nfs", "iscsi", "fc", "rbd", "cephfs",
              "awsElasticBlockStore", "gcePersistentDisk", "azureDisk", "azureFile")
IMMUTABLE_SPEC = ("spec is immutable after creation except resources.requests and "
                  "volumeAttributesClassName for bound claims")


def _dict(value: Any) -> Object:
    return value if isinstance(value, dict) else {}


def _access_modes(modes: Any, path: str, required: str) -> list[FieldError]:
    modes = modes if isinstance(modes, list) else []
    if not modes:
        return [field_required(path, required)]
    errs = [field_not_supported(path, m, ACCESS_MODES) for m in modes if m not in ACCESS_MODES]
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        errs.append(field_forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return errs


def _positive(text: Any, path: str) -> list[FieldError]:
    """ValidatePositiveQuantityValue."""
    try:
        quantity = parse_quantity(text)
    except (ParseError, TypeError):
        return []  # the decoder refused it already
    if quantity.cmp(parse_quantity(0)) <= 0:
        return [field_invalid(path, str(quantity), "must be greater than zero")]
    return []


def _class_name(name: Any, path: str) -> list[FieldError]:
    if not isinstance(name, str) or not name:
        return []
    return [field_invalid(path, name, msg) for msg in is_dns1123_subdomain(name)]


def _one_of(choice: Any, path: str, supported: list[str]) -> list[FieldError]:
    if choice is None or choice in supported:
        return []
    return [field_not_supported(path, choice, supported)]


def validate_persistent_volume(pv: Object) -> list[FieldError]:
    """ValidatePersistentVolume / ValidatePersistentVolumeSpec."""
    spec = _dict(pv.get("spec"))
    errs = _access_modes(spec.get("accessModes"), "spec.accessModes", "")
    capacity = _dict(spec.get("capacity"))
    if not capacity:
        errs.append(field_required("spec.capacity", ""))
    if "storage" not in capacity or len(capacity) > 1:
        errs.append(field_not_supported("spec.capacity", capacity, ["storage"]))
    for name, text in sorted(capacity.items()):
        errs += _positive(text, f"spec.capacity[{name}]")
    errs += _one_of(spec.get("persistentVolumeReclaimPolicy"), "spec.persistentVolumeReclaimPolicy",
                    PV_RECLAIM_POLICIES)
    errs += _class_name(spec.get("storageClassName"), "spec.storageClassName")
    errs += _one_of(spec.get("volumeMode"), "spec.volumeMode", VOLUME_MODES)
    sources = [s for s in PV_SOURCES if spec.get(s) is not None]
    if not sources:
        errs.append(field_required("spec", "must specify a volume type"))
    for source in sources[1:]:
        errs.append(field_forbidden(f"spec.{source}", "may not specify more than 1 volume type"))
    if "hostPath" in sources and not _dict(spec["hostPath"]).get("path"):
        errs.append(field_required("spec.hostPath.path", ""))
    if "local" in sources:
        if not _dict(spec["local"]).get("path"):
            errs.append(field_required("spec.local.path", ""))
        if not _dict(_dict(spec.get("nodeAffinity")).get("required")).get("nodeSelectorTerms"):
            errs.append(field_required("spec.nodeAffinity", "Local volumes require node affinity"))
    if "csi" in sources:
        csi = _dict(spec["csi"])
        for key in ("driver", "volumeHandle"):
            if not csi.get(key):
                errs.append(field_required(f"spec.csi.{key}", ""))
    return errs


def validate_persistent_volume_update(pv: Object, old: Object) -> list[FieldError]:
    """ValidatePersistentVolumeUpdate: the source, volumeMode and node affinity are fixed."""
    errs = validate_persistent_volume(pv)
    spec, old_spec = _dict(pv.get("spec")), _dict(old.get("spec"))
    if any(spec.get(s) != old_spec.get(s) for s in PV_SOURCES):
        errs.append(field_forbidden("spec.persistentvolumesource",
                                    "spec.persistentvolumesource is forbidden once set"))
    if spec.get("volumeMode") != old_spec.get("volumeMode"):
        errs.append(field_invalid("spec.volumeMode", spec.get("volumeMode"), "field is immutable"))
    if old_spec.get("nodeAffinity") and spec.get("nodeAffinity") != old_spec.get("nodeAffinity"):
        errs.append(field_invalid("spec.nodeAffinity", spec.get("nodeAffinity"),
                                  "field is immutable"))
    return errs


def validate_persistent_volume_claim(pvc: Object) -> list[FieldError]:
    """ValidatePersistentVolumeClaim / ValidatePersistentVolumeClaimSpec."""
    spec = _dict(pvc.get("spec"))
    errs = _access_modes(spec.get("accessModes"), "spec.accessModes",
                         "at least 1 access mode is required")
    requests = _dict(_dict(spec.get("resources")).get("requests"))
    if "storage" not in requests:
        errs.append(field_required("spec.resources[storage]", ""))
    else:
        errs += _positive(requests["storage"], "spec.resources[storage]")
    errs += _class_name(spec.get("storageClassName"), "spec.storageClassName")
    errs += _one_of(spec.get("volumeMode"), "spec.volumeMode", VOLUME_MODES)
    return errs


def validate_persistent_volume_claim_update(pvc: Object, old: Object) -> list[FieldError]:
    """ValidatePersistentVolumeClaimUpdate: a claim's spec is fixed, but the binder may fill in
    volumeName (and the DefaultStorageClass controller storageClassName) once, and a bound
    claim may grow (resources.requests) or change its volumeAttributesClassName."""
    errs = validate_persistent_volume_claim(pvc)
    spec, old_spec = dict(_dict(pvc.get("spec"))), dict(_dict(old.get("spec")))
    for once in ("volumeName", "storageClassName"):
        if not old_spec.get(once) and once in spec:
            old_spec[once] = spec[once]
    bound = _dict(old.get("status")).get("phase") == "Bound"
    if bound:
        for key in ("resources", "volumeAttributesClassName"):
            old_spec.pop(key, None)
            spec.pop(key, None)
    if spec != old_spec:
        errs.append(field_forbidden("spec", IMMUTABLE_SPEC))
    elif bound:
        # A smaller request than before (recovering from a failed expansion) must stay above
        # the volume's size (RecoverVolumeExpansionFailure, GA in 1.34).
        new_size = _dict(_dict(_dict(pvc.get("spec")).get("resources")).get("requests")).get("storage")
        old_size = _dict(_dict(_dict(old.get("spec")).get("resources")).get("requests")).get("storage")
        capacity = _dict(_dict(old.get("status")).get("capacity")).get("storage")
        try:
            smaller = capacity is not None and new_size is not None and old_size is not None and \
                parse_quantity(new_size).cmp(parse_quantity(old_size)) < 0 and \
                parse_quantity(new_size).cmp(parse_quantity(capacity)) <= 0
        except (ParseError, TypeError):
            smaller = False
        if smaller:
            errs.append(field_forbidden("spec.resources.requests.storage",
                                        "field can not be less than status.capacity"))
    old_class = (old["metadata"].get("annotations") or {}).get(BETA_CLASS)
    if old_class is not None and (pvc["metadata"].get("annotations") or {}).get(BETA_CLASS) != old_class:
        errs.append(field_forbidden("metadata.annotations[volume.beta.kubernetes.io/storage-class]",
                                    "update is forbidden"))
    return errs


BETA_CLASS = "volume.beta.kubernetes.io/storage-class"


def validate_persistent_volume_claim_status_update(pvc: Object, old: Object) -> list[FieldError]:
    """ValidatePersistentVolumeClaimStatusUpdate: access modes and capacity as reported."""
    status = _dict(pvc.get("status"))
    errs: list[FieldError] = []
    for mode in status.get("accessModes") or []:
        if mode not in ACCESS_MODES:
            errs.append(field_not_supported("status.accessModes", mode, ACCESS_MODES))
    for name, text in sorted(_dict(status.get("capacity")).items()):
        errs += _positive(text, f"status.capacity[{name}]")
    return errs


def validate_storage_class(sc: Object) -> list[FieldError]:
    """ValidateStorageClass: a provisioner's qualified name, known policies and modes."""
    provisioner = sc.get("provisioner")
    errs: list[FieldError] = []
    if not isinstance(provisioner, str) or not provisioner:
        errs.append(field_required("provisioner", ""))
    else:
        errs += [field_invalid("provisioner", provisioner, msg)
                 for msg in is_qualified_name(provisioner.lower())]
    errs += _one_of(sc.get("reclaimPolicy"), "reclaimPolicy", SC_RECLAIM_POLICIES)
    if sc.get("volumeBindingMode") is None:
        errs.append(field_required("volumeBindingMode", ""))
    errs += _one_of(sc.get("volumeBindingMode"), "volumeBindingMode", BINDING_MODES)
    return errs


def validate_storage_class_update(sc: Object, old: Object) -> list[FieldError]:
    """ValidateStorageClassUpdate: only metadata, mountOptions and allowVolumeExpansion change."""
    errs = validate_storage_class(sc)
    for key in ("parameters", "provisioner", "reclaimPolicy"):
        if sc.get(key) != old.get(key):
            errs.append(field_forbidden(key, f"updates to {key} are forbidden."))
    if sc.get("volumeBindingMode") != old.get("volumeBindingMode"):
        errs.append(field_invalid("volumeBindingMode", sc.get("volumeBindingMode"),
                                  "field is immutable"))
    return errs
