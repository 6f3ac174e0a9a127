"""Create, update and delete a StatefulSet's pods and claims, with their events
(kubernetes/kubernetes pkg/controller/statefulset/stateful_pod_control.go: StatefulPodControl,
recordPodEvent, recordClaimEvent, createPersistentVolumeClaims, the retention policy's
ClaimsMatchRetentionPolicy, UpdatePodClaimForRetentionPolicy and PodClaimIsStale).

Events, in upstream's words: "create Pod web-0 in StatefulSet web successful" (SuccessfulCreate),
"delete Pod web-2 in StatefulSet web successful" (SuccessfulDelete), "create Claim www-web-0 Pod
web-0 in StatefulSet web success".

Claims: upstream reads them from a PersistentVolumeClaim lister. When the API serves no
PersistentVolumeClaims (kubelab's storage kinds are another piece of work), `claims` is None and
the pods get their claim volumes but no claim is created or looked at; once the kind is served,
the same code creates them.
"""

from __future__ import annotations

from collections.abc import Callable

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import deep_copy
from kubelab.client.client import Client
from kubelab.client.events import NORMAL, WARNING, EventRecorder
from kubelab.client.indexer import Indexer
from kubelab.controllers.statefulset.stateful_set_utils import (
    get_persistent_volume_claims,
    identity_matches,
    pod_in_ordinal_range,
    storage_matches,
    update_identity,
    update_storage,
)

__all__ = ["StatefulPodControl", "has_owner_ref", "has_unexpected_controller",
           "update_claim_owner_ref_for_set_and_pod"]


def _is_ref_to(ref: Object, owner: Object, kind: str) -> bool:
    return bool(ref.get("kind") == kind and ref.get("name") == owner["metadata"]["name"] and
                ref.get("uid") == owner["metadata"].get("uid"))


def has_owner_ref(target: Object, owner: Object) -> bool:
    """hasOwnerRef: any reference with the owner's uid."""
    uid = owner["metadata"].get("uid")
    return any(ref.get("uid") == uid for ref in target["metadata"].get("ownerReferences") or ())


def has_unexpected_controller(claim: Object, sts: Object, pod: Object) -> bool:
    """hasUnexpectedController: under a Delete policy, a controller reference to anything but
    this set or this pod (another object, or a stale uid) means the claim is someone else's.
    Under Retain/Retain any controller is allowed."""
    policy = sts["spec"].get("persistentVolumeClaimRetentionPolicy") or {}
    if policy.get("whenScaled", "Retain") == "Retain" and policy.get("whenDeleted", "Retain") == "Retain":
        return False
    return any(ref.get("controller") and not (_is_ref_to(ref, sts, "StatefulSet") or
                                              _is_ref_to(ref, pod, "Pod"))
               for ref in claim["metadata"].get("ownerReferences") or ())


def _set_controller_ref(target: Object, owner: Object, api_version: str, kind: str) -> bool:
    """The owner as the claim's controller (an existing reference to it becomes one)."""
    refs = target["metadata"].get("ownerReferences") or []
    for ref in refs:
        if _is_ref_to(ref, owner, kind):
            if ref.get("controller"):
                return False
            ref["controller"] = True
            return True
    target["metadata"]["ownerReferences"] = [
        *refs, {"apiVersion": api_version, "kind": kind, "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"], "controller": True}]
    return True


def _refers_to(owner: Object, kind: str) -> Callable[[Object], bool]:
    return lambda ref: _is_ref_to(ref, owner, kind)


def _remove_refs(target: Object, drop: Callable[[Object], bool]) -> bool:
    refs = target["metadata"].get("ownerReferences") or []
    kept = [r for r in refs if not drop(r)]
    if len(kept) == len(refs):
        return False
    target["metadata"]["ownerReferences"] = kept
    return True


def update_claim_owner_ref_for_set_and_pod(claim: Object, sts: Object, pod: Object) -> bool:
    """updateClaimOwnerRefForSetAndPod: the controller reference that lets the garbage
    collector delete the claim when the policy says so (whenDeleted=Delete: the set;
    whenScaled=Delete: a pod scaled away), and none otherwise. Stale references (the set's or
    the pod's name with another uid) are removed first, alone; a claim that another controller
    owns keeps that controller, and loses the set's and the pod's references. True when the
    claim changed."""
    set_name, pod_name = sts["metadata"]["name"], pod["metadata"]["name"]

    def stale(ref: Object) -> bool:
        return (ref.get("kind") == "StatefulSet" and ref.get("name") == set_name and
                not _is_ref_to(ref, sts, "StatefulSet")) or \
            (ref.get("kind") == "Pod" and ref.get("name") == pod_name and not _is_ref_to(ref, pod, "Pod"))
    if _remove_refs(claim, stale):
        return True  # the stale references first; the next sync sets the owners
    if has_unexpected_controller(claim, sts, pod):
        return _remove_refs(claim, lambda ref: _is_ref_to(ref, sts, "StatefulSet") or
                            _is_ref_to(ref, pod, "Pod"))
    changed = False
    policy = sts["spec"].get("persistentVolumeClaimRetentionPolicy") or {}
    scaled, deleted = policy.get("whenScaled", "Retain"), policy.get("whenDeleted", "Retain")
    scaled_down = not pod_in_ordinal_range(pod, sts)
    want_set = deleted == "Delete" and not (scaled == "Delete" and scaled_down)
    want_pod = scaled == "Delete" and scaled_down
    for owner, kind, api_version, wanted in ((sts, "StatefulSet", "apps/v1", want_set),
                                             (pod, "Pod", "v1", want_pod)):
        if wanted:
            changed |= _set_controller_ref(claim, owner, api_version, kind)
        else:
            changed |= _remove_refs(claim, _refers_to(owner, kind))
    return changed


class StatefulPodControl:
    def __init__(self, client: Client, recorder: EventRecorder, claims: Indexer | None) -> None:
        self.client, self.recorder, self.claims = client, recorder, claims

    # ------------------------------------------------------------------ events

    def record_pod_event(self, verb: str, sts: Object, pod: Object, err: ApiError | None) -> None:
        pod_name, set_name = pod["metadata"]["name"], sts["metadata"]["name"]
        if err is None:
            self.recorder.event(sts, NORMAL, f"Successful{verb.title()}",
                                f"{verb} Pod {pod_name} in StatefulSet {set_name} successful")
        else:
            self.recorder.event(sts, WARNING, f"Failed{verb.title()}",
                                f"{verb} Pod {pod_name} in StatefulSet {set_name} failed error: "
                                f"{err.message}")

    def record_claim_event(self, verb: str, sts: Object, pod: Object, claim: Object,
                           err: ApiError | None) -> None:
        claim_name, pod_name = claim["metadata"]["name"], pod["metadata"]["name"]
        set_name = sts["metadata"]["name"]
        if err is None:
            self.recorder.event(sts, NORMAL, f"Successful{verb.title()}",
                                f"{verb} Claim {claim_name} Pod {pod_name} in StatefulSet "
                                f"{set_name} success")
        else:
            self.recorder.event(sts, WARNING, f"Failed{verb.title()}",
                                f"{verb} Claim {claim_name} for Pod {pod_name} in StatefulSet "
                                f"{set_name} failed error: {err.message}")

    # ------------------------------------------------------------------ pods

    def create_stateful_pod(self, sts: Object, pod: Object) -> None:
        """CreateStatefulPod: the claims first, then the pod, then the claims' owners."""
        try:
            self.create_persistent_volume_claims(sts, pod)
        except ApiError as err:
            self.record_pod_event("create", sts, pod, err)
            raise
        try:
            created = self.client.create(pod, sts["metadata"].get("namespace", "default"))
        except ApiError as err:
            if err.reason == "AlreadyExists":
                raise  # sunk: no event
            self.record_pod_event("create", sts, pod, err)
            raise
        try:
            self.update_pod_claim_for_retention_policy(sts, created)
        except ApiError as err:
            self.record_pod_event("update", sts, pod, err)
            raise
        self.record_pod_event("create", sts, pod, None)

    def update_stateful_pod(self, sts: Object, pod: Object) -> None:
        """UpdateStatefulPod: restore the pod's identity and storage, and its claims' owners;
        one retry after a conflict, with the pod read again."""
        attempted = False
        error: ApiError | None = None
        for attempt in range(2):
            consistent = True
            if not identity_matches(sts, pod):
                update_identity(sts, pod)
                consistent = False
            try:
                if not storage_matches(sts, pod):
                    update_storage(sts, pod)
                    consistent = False
                    self.create_persistent_volume_claims(sts, pod)
                if not self.claims_match_retention_policy(sts, pod):
                    self.update_pod_claim_for_retention_policy(sts, pod)
                    consistent = False
            except ApiError as err:
                self.record_pod_event("update", sts, pod, err)
                raise
            if consistent:
                return
            attempted = True
            try:
                self.client.update(pod)
                error = None
                break
            except ApiError as err:
                error = err
                if err.code != 409 or attempt == 1:
                    break
                meta = pod["metadata"]
                pod = deep_copy(self.client.get("pods", meta["name"], meta.get("namespace", "default")))
        if attempted:
            self.record_pod_event("update", sts, pod, error)
        if error is not None:
            raise error

    def delete_stateful_pod(self, sts: Object, pod: Object) -> None:
        meta = pod["metadata"]
        try:
            self.client.delete("pods", meta["name"], meta.get("namespace", "default"))
        except ApiError as err:
            self.record_pod_event("delete", sts, pod, err)
            raise
        self.record_pod_event("delete", sts, pod, None)

    # ------------------------------------------------------------------ claims

    def _get_claim(self, namespace: str, name: str) -> Object | None:
        """objectMgr.GetClaim from the lister; None for NotFound."""
        assert self.claims is not None
        claim, exists = self.claims.get_by_key(f"{namespace}/{name}")
        return claim if exists else None

    def create_persistent_volume_claims(self, sts: Object, pod: Object) -> None:
        """createPersistentVolumeClaims: create each missing claim; a claim being deleted is an
        error (the pod must wait for a new one)."""
        if self.claims is None:
            return
        errors: list[str] = []
        for claim in get_persistent_volume_claims(sts, pod).values():
            meta = claim["metadata"]
            existing = self._get_claim(meta["namespace"], meta["name"])
            if existing is None:
                try:
                    self.client.create(claim, meta["namespace"])
                    self.record_claim_event("create", sts, pod, claim, None)
                except ApiError as err:
                    errors.append(f"failed to create PVC {meta['name']}: {err.message}")
                    if err.reason != "AlreadyExists":
                        self.record_claim_event("create", sts, pod, claim, err)
            elif existing["metadata"].get("deletionTimestamp"):
                errors.append(f"pvc {meta['name']} is being deleted")
        if errors:
            message = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
            raise ApiError(500, "InternalError", message)

    def claims_match_retention_policy(self, sts: Object, pod: Object) -> bool:
        """ClaimsMatchRetentionPolicy: every existing claim already has the owners it should."""
        if self.claims is None:
            return True
        for claim in get_persistent_volume_claims(sts, pod).values():
            existing = self._get_claim(claim["metadata"]["namespace"], claim["metadata"]["name"])
            if existing is not None and \
                    update_claim_owner_ref_for_set_and_pod(deep_copy(existing), sts, pod):
                return False
        return True

    def update_pod_claim_for_retention_policy(self, sts: Object, pod: Object) -> None:
        """UpdatePodClaimForRetentionPolicy: write the owners the policy asks for."""
        if self.claims is None:
            return
        for claim in get_persistent_volume_claims(sts, pod).values():
            existing = self._get_claim(claim["metadata"]["namespace"], claim["metadata"]["name"])
            if existing is None:
                continue
            clone = deep_copy(existing)
            if update_claim_owner_ref_for_set_and_pod(clone, sts, pod):
                try:
                    self.client.update(clone)
                except ApiError as err:
                    raise ApiError(err.code, err.reason, f"could not update claim "
                                   f"{claim['metadata']['name']} for delete policy ownerRefs: "
                                   f"{err.message}") from err

    def pod_claim_is_stale(self, sts: Object, pod: Object) -> bool:
        """PodClaimIsStale: with whenScaled=Delete, a claim still owned by an earlier pod of the
        same name (another uid) must be deleted before the pod is made again."""
        policy = sts["spec"].get("persistentVolumeClaimRetentionPolicy") or {}
        if self.claims is None or policy.get("whenScaled", "Retain") == "Retain":
            return False
        for claim in get_persistent_volume_claims(sts, pod).values():
            existing = self._get_claim(claim["metadata"]["namespace"], claim["metadata"]["name"])
            if existing is None:
                continue
            for ref in existing["metadata"].get("ownerReferences") or ():
                if ref.get("kind") == "Pod" and ref.get("name") == pod["metadata"]["name"] and \
                        ref.get("uid") != pod["metadata"].get("uid"):
                    return True
        return False
