"""The Tables of the storage kinds: kubernetes pkg/printers/internalversion/printers.go
(printPersistentVolume, printPersistentVolumeClaim, printStorageClass), with the helpers they
call (pkg/apis/core/helper: GetAccessModesAsString, GetPersistentVolumeClass,
GetPersistentVolumeClaimClass; storageutil.IsDefaultAnnotation).

    NAME      CAPACITY   ACCESS MODES   RECLAIM POLICY   STATUS   CLAIM          STORAGECLASS ...
    pvc-3f..  1Gi        RWO            Delete           Bound    default/data   standard     ...
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ParseError
from kubelab.api.quantity import parse_quantity
from kubelab.apiserver.printers.tablegenerator import TableGenerator, column
from kubelab.apiserver.printers.tablegenerator import translate_timestamp_since as _age

__all__ = ["IS_DEFAULT_CLASS", "access_modes_as_string", "add_handlers", "claim_class",
           "volume_class"]

IS_DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
BETA_IS_DEFAULT_CLASS = "storageclass.beta.kubernetes.io/is-default-class"
BETA_CLASS = "volume.beta.kubernetes.io/storage-class"
_SHORT = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
          ("ReadWriteOncePod", "RWOP"))


def access_modes_as_string(modes: Any) -> str:
    """GetAccessModesAsString: RWO, ROX, RWX, RWOP, in that order, each once."""
    modes = modes if isinstance(modes, list) else []
    return ",".join(short for mode, short in _SHORT if mode in modes)


def _annotations(obj: Object) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def volume_class(pv: Object) -> str:
    """GetPersistentVolumeClass: the beta annotation wins over spec.storageClassName."""
    return _annotations(pv).get(BETA_CLASS) or str((pv.get("spec") or {}).get("storageClassName") or "")


def claim_class(pvc: Object) -> str:
    """GetPersistentVolumeClaimClass."""
    return _annotations(pvc).get(BETA_CLASS) or str((pvc.get("spec") or {}).get("storageClassName") or "")


def _quantity(text: Any) -> str:
    if text is None:
        return "0"
    try:
        return str(parse_quantity(text))
    except (ParseError, TypeError):
        return str(text)


def _phase(obj: Object) -> str:
    if (obj.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    return str((obj.get("status") or {}).get("phase") or "")


def _pv_row(pv: Object, now: float) -> list[str]:
    spec, status = pv.get("spec") or {}, pv.get("status") or {}
    ref = spec.get("claimRef") or {}
    claim = f"{ref.get('namespace', '')}/{ref.get('name', '')}" if spec.get("claimRef") else ""
    return [pv["metadata"]["name"], _quantity((spec.get("capacity") or {}).get("storage")),
            access_modes_as_string(spec.get("accessModes")),
            str(spec.get("persistentVolumeReclaimPolicy") or ""), _phase(pv), claim,
            volume_class(pv), str(spec.get("volumeAttributesClassName") or "<unset>"),
            str(status.get("reason") or ""), _age(pv, now), str(spec.get("volumeMode") or "<unset>")]


def _pvc_row(pvc: Object, now: float) -> list[str]:
    spec, status = pvc.get("spec") or {}, pvc.get("status") or {}
    capacity = modes = ""
    if spec.get("volumeName"):
        modes = access_modes_as_string(status.get("accessModes"))
        capacity = _quantity((status.get("capacity") or {}).get("storage"))
    return [pvc["metadata"]["name"], _phase(pvc), str(spec.get("volumeName") or ""), capacity, modes,
            claim_class(pvc), str(spec.get("volumeAttributesClassName") or "<unset>"),
            _age(pvc, now), str(spec.get("volumeMode") or "<unset>")]


def is_default_annotation(sc: Object) -> bool:
    """storageutil.IsDefaultAnnotation."""
    annotations = _annotations(sc)
    return annotations.get(IS_DEFAULT_CLASS) == "true" or \
        annotations.get(BETA_IS_DEFAULT_CLASS) == "true"


def _storage_class_row(sc: Object, now: float) -> list[str]:
    name = sc["metadata"]["name"] + (" (default)" if is_default_annotation(sc) else "")
    return [name, str(sc.get("provisioner") or ""), str(sc.get("reclaimPolicy") or "Delete"),
            str(sc.get("volumeBindingMode") or "Immediate"),
            "true" if sc.get("allowVolumeExpansion") else "false", _age(sc, now)]


_NAME, _AGE = column("Name", format_="name"), column("Age")


def add_handlers(h: TableGenerator) -> None:
    """The storage kinds' column definitions (AddHandlers in printers.go)."""
    h.table_handler("persistentvolumes", [
        _NAME, column("Capacity"), column("Access Modes"), column("Reclaim Policy"),
        column("Status"), column("Claim"), column("StorageClass"), column("VolumeAttributesClass"),
        column("Reason"), _AGE, column("VolumeMode", priority=1)], _pv_row)
    h.table_handler("persistentvolumeclaims", [
        _NAME, column("Status"), column("Volume"), column("Capacity"), column("Access Modes"),
        column("StorageClass"), column("VolumeAttributesClass"), _AGE,
        column("VolumeMode", priority=1)], _pvc_row)
    # --- hpacsi --- printVolumeAttachment, printCSIDriver
    h.table_handler("volumeattachments", [
        _NAME, column("Attacher"), column("PV"), column("Node"), column("Attached", "boolean"),
        _AGE], _volume_attachment_row)
    h.table_handler("csidrivers", [
        _NAME, column("AttachRequired", "boolean"), column("PodInfoOnMount", "boolean"),
        column("StorageCapacity", "boolean"), column("TokenRequests"),
        column("RequiresRepublish", "boolean"), column("Modes"), _AGE], _csi_driver_row)
    h.table_handler("storageclasses", [
        _NAME, column("Provisioner"), column("ReclaimPolicy"), column("VolumeBindingMode"),
        column("AllowVolumeExpansion"), _AGE], _storage_class_row)


# --- hpacsi ---
def _bool(value: Any) -> str:
    return "true" if value else "false"


def _volume_attachment_row(va: Object, now: float) -> list[str]:
    spec = va.get("spec") or {}
    return [va["metadata"]["name"], str(spec.get("attacher") or ""),
            str((spec.get("source") or {}).get("persistentVolumeName") or ""),
            str(spec.get("nodeName") or ""), _bool((va.get("status") or {}).get("attached")),
            _age(va, now)]


def _csi_driver_row(driver: Object, now: float) -> list[str]:
    spec = driver.get("spec") or {}
    attach = spec.get("attachRequired")
    tokens = spec.get("tokenRequests")
    audiences = ",".join(str(t.get("audience", "")) for t in tokens) if tokens is not None \
        else "<unset>"
    return [driver["metadata"]["name"], _bool(True if attach is None else attach),
            _bool(spec.get("podInfoOnMount")), _bool(spec.get("storageCapacity")), audiences,
            _bool(spec.get("requiresRepublish")),
            ",".join(spec.get("volumeLifecycleModes") or []) or "<none>", _age(driver, now)]
