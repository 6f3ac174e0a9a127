"""Adoption and release: who owns which pods (kubernetes/kubernetes
pkg/controller/controller_ref_manager.go, ClaimObject / ClaimPods / ClaimReplicaSets).

Labels say which pods a ReplicaSet *wants*; the controller ownerReference says which pods it
*has*. On every sync a controller claims: it keeps what it owns and still matches, adopts
orphans that match (patching a controller ownerReference onto them) and releases what it owns
but no longer matches (patching the reference away). Pods owned by someone else are ignored,
even when they match: that is why two ReplicaSets with overlapping selectors do not fight.
"""

from __future__ import annotations

from collections.abc import Callable

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.labels import Selector
from kubelab.api.meta import get_controller_of_no_copy
from kubelab.client.client import Client

__all__ = ["ControllerRefManager", "recheck_deletion_timestamp"]

def recheck_deletion_timestamp(get_fresh: Callable[[], Object]) -> Callable[[], None]:
    """RecheckDeletionTimestamp: before adopting, read the owner from the API server itself
    (not the cache) and refuse if it is being deleted: an owner on its way out must not take
    new children it would then orphan or delete."""
    def can_adopt() -> None:
        fresh = get_fresh()
        stamp = fresh["metadata"].get("deletionTimestamp")
        if stamp:
            meta = fresh["metadata"]
            raise ApiError(409, "Conflict",
                           f"{meta.get('namespace')}/{meta['name']} has just been deleted at {stamp}")
    return can_adopt


class ControllerRefManager:
    """BaseControllerRefManager for one owner (a ReplicaSet, a Deployment)."""

    def __init__(self, client: Client, owner: Object, selector: Selector, resource: str,
                 can_adopt: Callable[[], None]) -> None:
        self.client, self.owner, self.selector = client, owner, selector
        self.resource = resource  # what is claimed: "pods" or "replicasets"
        self._can_adopt = can_adopt
        self._adoption_checked = False
        self._filter: Callable[[Object], bool] | None = None

    def claim(self, objects: list[Object], patch_type: str = "strategic",
              filter_: Callable[[Object], bool] | None = None) -> list[Object]:
        """ClaimObjects: the objects this owner keeps. Errors of single adoptions or releases
        are collected and raised together after all objects were looked at. filter_ narrows
        the match beyond the selector (ClaimPods' filters: a StatefulSet's isMemberOf)."""
        self._filter = filter_
        claimed, errors = [], []
        for obj in objects:
            try:
                if self._claim_object(obj, patch_type):
                    claimed.append(obj)
            except ApiError as err:
                errors.append(err)
        if errors:
            raise errors[0]
        return claimed

    def _match(self, obj: Object) -> bool:
        return self.selector.matches(obj["metadata"].get("labels") or {}) and \
            (self._filter is None or self._filter(obj))

    def _claim_object(self, obj: Object, patch_type: str) -> bool:
        owner_meta, meta = self.owner["metadata"], obj["metadata"]
        ref = get_controller_of_no_copy(obj)
        if ref is not None:
            if ref.get("uid") != owner_meta["uid"]:
                return False  # owned by someone else
            if self._match(obj):
                return True
            if owner_meta.get("deletionTimestamp"):
                return False  # an owner being deleted releases nothing
            self._ignore_not_found(lambda: self._release(obj, patch_type))
            return False
        # An orphan.
        if owner_meta.get("deletionTimestamp") or not self._match(obj) or \
                meta.get("deletionTimestamp") or meta.get("namespace") != owner_meta.get("namespace"):
            return False
        return self._ignore_not_found(lambda: self._adopt(obj, patch_type))

    @staticmethod
    def _ignore_not_found(action: Callable[[], None]) -> bool:
        try:
            action()
        except ApiError as err:
            if err.code == 404:
                return False
            raise
        return True

    def _adopt(self, obj: Object, patch_type: str) -> None:
        if not self._adoption_checked:
            try:
                self._can_adopt()
            except ApiError as err:
                meta = obj["metadata"]
                raise ApiError(err.code, err.reason, f"can't adopt {self.owner_kind_of(obj)} "
                               f"{meta.get('namespace')}/{meta['name']} ({meta.get('uid')}): "
                               f"{err.message}") from None
            self._adoption_checked = True
        owner = self.owner
        ref = {"apiVersion": owner["apiVersion"], "kind": owner["kind"],
               "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
               "controller": True, "blockOwnerDeletion": True}
        # ownerRefControllerPatch: merge our reference in (by uid); the uid of the target is a
        # precondition, so a pod deleted and re-created under the same name is not adopted.
        patch = {"metadata": {"ownerReferences": [ref], "uid": obj["metadata"]["uid"]}}
        self._patch(obj, patch, patch_type)

    def _release(self, obj: Object, patch_type: str) -> None:
        """ReleasePod / ReleaseReplicaSet: delete our ownerReference (by uid)."""
        uid = self.owner["metadata"]["uid"]
        patch = {"metadata": {"ownerReferences": [{"$patch": "delete", "uid": uid}],
                              "uid": obj["metadata"]["uid"]}}
        try:
            self._patch(obj, patch, patch_type)
        except ApiError as err:
            # Invalid: the pod has no such reference, or was re-created (uid mismatch).
            if err.code not in (404, 422):
                raise

    def _patch(self, obj: Object, patch: Object, patch_type: str) -> None:
        meta = obj["metadata"]
        self.client.patch(self.resource, meta["name"], patch, meta.get("namespace", "default"),
                          patch_type=patch_type)

    @staticmethod
    def owner_kind_of(obj: Object) -> str:
        return str(obj.get("kind") or "object")
