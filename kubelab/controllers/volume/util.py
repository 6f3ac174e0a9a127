"""What the PV controller, the protection controllers and the provisioner share: annotation
names, the claim's class and request, and the volume index's matching.

Upstream: pkg/controller/volume/persistentvolume/util/util.go (FindMatchingVolume,
CheckAccessModes, GetBindVolumeToClaim, IsDelayBindingMode), index.go (findBestMatchForClaim:
the smallest volume that fits), and k8s.io/component-helpers/storage/volume (the annotations,
GetPersistentVolumeClaimClass).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ParseError
from kubelab.api.labels import selector_from_label_selector
from kubelab.api.quantity import Quantity, parse_quantity

__all__ = [
    "ANN_BETA_STORAGE_PROVISIONER",
    "ANN_BIND_COMPLETED",
    "ANN_BOUND_BY_CONTROLLER",
    "ANN_DYNAMICALLY_PROVISIONED",
    "ANN_PRE_RESIZE_CAPACITY",
    "ANN_SELECTED_NODE",
    "ANN_STORAGE_PROVISIONER",
    "annotations_of",
    "claim_class",
    "claim_request",
    "find_matching_volume",
    "volume_class",
]

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_DYNAMICALLY_PROVISIONED = "pv.kubernetes.io/provisioned-by"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
BETA_CLASS = "volume.beta.kubernetes.io/storage-class"
ANN_PRE_RESIZE_CAPACITY = "volume.alpha.kubernetes.io/pre-resize-capacity"  # util/resize_util.go


def annotations_of(obj: Object) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def claim_class(claim: Object) -> str:
    spec = claim.get("spec") or {}
    return annotations_of(claim).get(BETA_CLASS) or str(spec.get("storageClassName") or "")


def volume_class(volume: Object) -> str:
    spec = volume.get("spec") or {}
    return annotations_of(volume).get(BETA_CLASS) or str(spec.get("storageClassName") or "")


def _quantity(text: Any) -> Quantity | None:
    try:
        return parse_quantity(text)
    except (ParseError, TypeError):
        return None


def claim_request(claim: Object) -> Quantity | None:
    resources = (claim.get("spec") or {}).get("resources") or {}
    return _quantity((resources.get("requests") or {}).get("storage"))


def volume_capacity(volume: Object) -> Quantity | None:
    return _quantity(((volume.get("spec") or {}).get("capacity") or {}).get("storage"))


def check_access_modes(claim: Object, volume: Object) -> bool:
    """CheckAccessModes: the volume offers every mode the claim asks for."""
    offered = set((volume.get("spec") or {}).get("accessModes") or [])
    return all(mode in offered for mode in (claim.get("spec") or {}).get("accessModes") or [])


def is_volume_bound_to_claim(volume: Object, claim: Object) -> bool:
    """IsVolumeBoundToClaim: claimRef names the claim (and its uid, when it has one)."""
    ref = (volume.get("spec") or {}).get("claimRef")
    if not ref:
        return False
    meta = claim["metadata"]
    if ref.get("name") != meta.get("name") or ref.get("namespace") != meta.get("namespace"):
        return False
    return not ref.get("uid") or ref.get("uid") == meta.get("uid")


def find_matching_volume(claim: Object, volumes: Iterable[Object], delay_binding: bool = False,
                         node_matches: Any = None) -> Object | None:
    """FindMatchingVolume: a volume pre-bound to this claim at once; else the smallest
    Available volume of the claim's class that offers its modes, size, volume mode and
    selector's labels (and, for the scheduler, whose node affinity `node_matches` accepts).
    With delay_binding only a pre-bound volume is returned: the scheduler picks the rest."""
    spec = claim.get("spec") or {}
    request = claim_request(claim)
    selector = selector_from_label_selector(spec.get("selector")) if spec.get("selector") else None
    wanted_class, wanted_mode = claim_class(claim), spec.get("volumeMode") or "Filesystem"
    best: Object | None = None
    best_size: Quantity | None = None
    for volume in sorted(volumes, key=lambda v: v["metadata"]["name"]):
        vspec = volume.get("spec") or {}
        size = volume_capacity(volume)
        if size is None or request is None or size.cmp(request) < 0:
            continue
        if (vspec.get("volumeMode") or "Filesystem") != wanted_mode:
            continue
        if (volume.get("metadata") or {}).get("deletionTimestamp"):
            continue
        if node_matches is not None and not node_matches(volume):
            continue
        if is_volume_bound_to_claim(volume, claim):
            return volume  # pre-bound: the user's choice wins
        if vspec.get("claimRef") or delay_binding:
            continue
        if (volume.get("status") or {}).get("phase") not in ("Available", "Pending", None):
            continue
        if selector is not None and not selector.matches(volume["metadata"].get("labels") or {}):
            continue
        if volume_class(volume) != wanted_class or not check_access_modes(claim, volume):
            continue
        if best_size is None or size.cmp(best_size) < 0:
            best, best_size = volume, size
    return best
