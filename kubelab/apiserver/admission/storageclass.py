"""DefaultStorageClass (mutating): a claim that names no class gets the default one.

Upstream: plugin/pkg/admission/storage/storageclass/setdefault/admission.go (Admit) and
pkg/volume/util/storageclass.go (GetDefaultClass). Only a new PersistentVolumeClaim whose
spec.storageClassName is absent (nil in Go; "" asks for no class and is kept) and that has no
beta class annotation is changed. The default class is the one annotated
storageclass.kubernetes.io/is-default-class: "true"; when several are, the newest wins (then
the first name). With none, the claim is left without a class.
"""

from __future__ import annotations

from typing import Any, Protocol, cast

from kubelab.api import Object
from kubelab.apiserver.admission.chain import CREATE, AdmissionPlugin, Attributes, Lister
from kubelab.apiserver.printers.storage import BETA_CLASS, is_default_annotation

__all__ = ["DefaultStorageClass", "StorageObjectInUseProtection", "get_default_class"]


class ClassLister(Lister, Protocol):
    def list_objects(self, resource: str, group: str = "", namespace: str = "") -> list[Object]:
        ...


def get_default_class(classes: list[Object]) -> Object | None:
    """GetDefaultClass: the newest default class, ties broken by name."""
    defaults = [sc for sc in classes if is_default_annotation(sc)]
    if not defaults:
        return None
    defaults.sort(key=lambda sc: sc["metadata"]["name"])
    defaults.sort(key=lambda sc: str(sc["metadata"].get("creationTimestamp") or ""), reverse=True)
    return defaults[0]


class DefaultStorageClass(AdmissionPlugin):
    name = "DefaultStorageClass"

    def mutate(self, attrs: Attributes) -> None:
        if attrs.operation != CREATE or attrs.resource != "persistentvolumeclaims" or \
                attrs.group or attrs.subresource or not isinstance(attrs.object, dict):
            return
        pvc: dict[str, Any] = attrs.object
        spec = pvc.get("spec")
        meta = pvc.get("metadata")
        if not isinstance(spec, dict) or "storageClassName" in spec:
            return
        if isinstance(meta, dict) and BETA_CLASS in (meta.get("annotations") or {}):
            return
        lister = attrs.lister
        if not hasattr(lister, "list_objects"):
            return
        default = get_default_class(cast(ClassLister, lister).list_objects(
            "storageclasses", "storage.k8s.io"))
        if default is not None:
            spec["storageClassName"] = default["metadata"]["name"]


PROTECTION_FINALIZERS = {"persistentvolumeclaims": "kubernetes.io/pvc-protection",
                         "persistentvolumes": "kubernetes.io/pv-protection"}


class StorageObjectInUseProtection(AdmissionPlugin):
    """plugin/pkg/admission/storage/storageobjectinuseprotection/admission.go: every new claim
    and volume carries its protection finalizer, which the protection controllers remove once
    nothing uses it (kubelab/controllers/volume/protection.py)."""

    name = "StorageObjectInUseProtection"

    def mutate(self, attrs: Attributes) -> None:
        finalizer = PROTECTION_FINALIZERS.get(attrs.resource)
        if attrs.operation != CREATE or finalizer is None or attrs.group or attrs.subresource or \
                not isinstance(attrs.object, dict) or not isinstance(attrs.object.get("metadata"), dict):
            return
        meta = attrs.object["metadata"]
        finalizers = meta.get("finalizers") or []
        if isinstance(finalizers, list) and finalizer not in finalizers:
            meta["finalizers"] = [*finalizers, finalizer]
