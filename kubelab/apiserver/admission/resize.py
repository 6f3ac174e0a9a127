"""PersistentVolumeClaimResize (validating): a claim may grow only when it is bound and its
StorageClass says allowVolumeExpansion: true.

Upstream: plugin/pkg/admission/storage/persistentvolume/resize/admission.go (Validate,
allowResize). An update of a PersistentVolumeClaim (not of a subresource) that asks for more
spec.resources.requests.storage than before is refused:

- while the claim is not Bound: "Only bound persistent volume claims can be expanded";
- when the claim has no class, changes class, its class is gone or does not set
  allowVolumeExpansion: true: "only dynamically provisioned pvc can be resized and the
  storageclass that provisions the pvc must support resize".

kind's `standard` class (rancher.io/local-path) sets no allowVolumeExpansion, so on kind, as
here, a claim of the default class cannot grow. The class is that of
apihelper.GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName.
"""

from __future__ import annotations

from typing import Any

from kubelab.api.errors import ParseError
from kubelab.api.quantity import parse_quantity
from kubelab.apiserver.admission.chain import UPDATE, AdmissionPlugin, Attributes, admission_forbidden

__all__ = ["PersistentVolumeClaimResize", "get_persistent_volume_claim_class"]

BETA_CLASS = "volume.beta.kubernetes.io/storage-class"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def get_persistent_volume_claim_class(claim: dict[str, Any]) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation, else spec.storageClassName, else ""."""
    annotations = _dict(_dict(claim.get("metadata")).get("annotations"))
    if BETA_CLASS in annotations:
        return str(annotations[BETA_CLASS])
    return str(_dict(claim.get("spec")).get("storageClassName") or "")


def _requested(claim: dict[str, Any]) -> Any:
    return _dict(_dict(_dict(claim.get("spec")).get("resources")).get("requests")).get("storage")


class PersistentVolumeClaimResize(AdmissionPlugin):
    name = "PersistentVolumeClaimResize"

    def validate(self, attrs: Attributes) -> None:
        if attrs.operation != UPDATE or attrs.resource != "persistentvolumeclaims" or attrs.group \
                or attrs.subresource or not isinstance(attrs.object, dict) \
                or not isinstance(attrs.old_object, dict):
            return
        pvc, old = attrs.object, attrs.old_object
        try:  # a missing size is the zero Quantity, as Go's map lookup gives
            new_size = parse_quantity(str(_requested(pvc) or "0"))
            old_size = parse_quantity(str(_requested(old) or "0"))
        except ParseError:
            return  # validation has refused it already
        if new_size.cmp(old_size) <= 0:
            return
        if _dict(old.get("status")).get("phase") != "Bound":
            raise admission_forbidden(attrs, "Only bound persistent volume claims can be expanded")
        if not self.allow_resize(attrs, pvc, old):
            raise admission_forbidden(attrs, "only dynamically provisioned pvc can be resized and "
                                             "the storageclass that provisions the pvc must support resize")

    def allow_resize(self, attrs: Attributes, pvc: dict[str, Any], old: dict[str, Any]) -> bool:
        """allowResize: the same, non-empty class, and that class allows expansion."""
        pvc_class, old_class = get_persistent_volume_claim_class(pvc), \
            get_persistent_volume_claim_class(old)
        if not pvc_class or not old_class or pvc_class != old_class:
            return False
        sc = attrs.lister.get("storageclasses", "", pvc_class, "storage.k8s.io")
        if sc is None:
            return False
        return sc.get("allowVolumeExpansion") is True
