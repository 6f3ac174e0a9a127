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

__all__ = ["StatefulPodControl", "update_claim_owner_ref_for_set_and_pod"]


def _has_owner_ref(target: Object, owner: Object) -> bool:
    uid = owner["metadata"].get("uid")
    return any(ref.get("uid") == uid for ref in target["metadata"].get("ownerReferences") or ())


def _set_owner_ref(target: Object, owner: Object, api_version: str, kind: str) -> bool:
    if _has_owner_ref(target, owner):
        return False
    target["metadata"]["ownerReferences"] = [
        *(target["metadata"].get("ownerReferences") or []),
        {"apiVersion": api_version, "kind": kind, "name": owner["metadata"]["name"],
         "uid": owner["metadata"]["uid"]}]
    return True


def _remove_owner_ref(target: Object, owner: Object) -> bool:
    if not _has_owner_ref(target, owner):
        return False
    uid = owner["metadata"].get("uid")
    refs = [r for r in target["metadata"].get("ownerReferences") or () if r.get("uid") != uid]
    target["metadata"]["ownerReferences"] = refs
    return True


def update_claim_owner_ref_for_set_and_pod(claim: Object, sts: Object, pod: Object) -> bool:
    """updateClaimOwnerRefForSetAndPod: owner references that make the garbage collector delete
    the claim when the policy says so (whenDeleted=Delete: the set owns it; whenScaled=Delete:
    a pod scaled away owns it). True when the claim changed."""
    policy = sts["spec"].get("persistentVolumeClaimRetentionPolicy") or {}
    scaled, deleted = policy.get("whenScaled", "Retain"), policy.get("whenDeleted", "Retain")
    changed = False
    scaled_down = not pod_in_ordinal_range(pod, sts)
    if scaled == "Delete" and deleted == "Delete":
        if scaled_down:
            changed |= _remove_owner_ref(claim, sts)
            changed |= _set_owner_ref(claim, pod, "v1", "Pod")
        else:
            changed |= _set_owner_ref(claim, sts, "apps/v1", "StatefulSet")
            changed |= _remove_owner_ref(claim, pod)
    elif scaled == "Delete":
        changed |= _remove_owner_ref(claim, sts)
        changed |= (_set_owner_ref(claim, pod, "v1", "Pod") if scaled_down
                    else _remove_owner_ref(claim, pod))
    elif deleted == "Delete":
        changed |= _set_owner_ref(claim, sts, "apps/v1", "StatefulSet")
        changed |= _remove_owner_ref(claim, pod)
    else:  # Retain, Retain (and an unknown policy, treated as Retain)
        changed |= _remove_owner_ref(claim, sts)
        changed |= _remove_owner_ref(claim, pod)
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
