"""The defaults of the storage kinds: pkg/apis/core/v1/defaults.go (SetDefaults_PersistentVolume,
SetDefaults_PersistentVolumeClaim), pkg/apis/storage/v1/defaults.go (SetDefaults_StorageClass)
and pkg/apis/networking/v1/defaults.go (SetDefaults_NetworkPolicy).

A volume is kept (Retain) unless it says otherwise; a class's volumes are deleted with their
claim (Delete) and bound at once (Immediate); both volumes and claims are file systems and start
Pending. The class of a claim that names none is the DefaultStorageClass admission plugin's
business (kubelab/apiserver/admission/storageclass.py), not a default.
"""

from __future__ import annotations

from kubelab.api import Object

__all__ = ["set_network_policy_defaults", "set_persistent_volume_claim_defaults",
           "set_persistent_volume_defaults", "set_storage_class_defaults"]


def _spec(obj: Object) -> Object | None:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else None


def _pending(obj: Object) -> None:
    status = obj.get("status")
    if status is None:
        obj["status"] = status = {}
    if isinstance(status, dict) and not status.get("phase"):
        status["phase"] = "Pending"


def set_persistent_volume_defaults(obj: Object) -> None:
    spec = _spec(obj)
    if spec is not None:
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        spec.setdefault("volumeMode", "Filesystem")
    _pending(obj)


def set_persistent_volume_claim_defaults(obj: Object) -> None:
    spec = _spec(obj)
    if spec is not None:
        spec.setdefault("volumeMode", "Filesystem")
    _pending(obj)


def set_storage_class_defaults(obj: Object) -> None:
    obj.setdefault("reclaimPolicy", "Delete")
    obj.setdefault("volumeBindingMode", "Immediate")


def set_network_policy_defaults(obj: Object) -> None:
    """networking/v1 SetDefaults_NetworkPolicy and SetDefaults_NetworkPolicyPort: ports are
    TCP; policyTypes is Ingress, plus Egress when egress rules are given."""
    spec = _spec(obj)
    if spec is None:
        return
    for direction in ("ingress", "egress"):
        for rule in spec.get(direction) or []:
            for port in (rule.get("ports") or []) if isinstance(rule, dict) else []:
                if isinstance(port, dict):
                    port.setdefault("protocol", "TCP")
    if not spec.get("policyTypes"):
        spec["policyTypes"] = ["Ingress", *(["Egress"] if spec.get("egress") else [])]
