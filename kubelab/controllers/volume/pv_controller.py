"""The PersistentVolume controller: bind claims to volumes, and reclaim volumes whose claim is
gone (kubernetes pkg/controller/volume/persistentvolume/pv_controller.go and
pv_controller_base.go).

Two queues, one for claims and one for volumes, as upstream. syncClaim splits into
- syncUnboundClaim: find the best Available volume (util.find_matching_volume) and bind both
  ways; a claim of a WaitForFirstConsumer class waits for the scheduler to pick a node
  (event WaitForFirstConsumer "waiting for first consumer to be created before binding"); a
  claim of a class with a provisioner asks that external provisioner through the
  volume.kubernetes.io/storage-provisioner annotation (event ExternalProvisioning); a claim
  with neither waits (event FailedBinding);
- syncBoundClaim: a claim whose volume went away is Lost (event ClaimLost).
syncVolume marks a volume Available, Bound or Released, and reclaims a Released one by its
persistentVolumeReclaimPolicy: Retain keeps it; Delete is the provisioner's work for a volume it
made (the annotation pv.kubernetes.io/provisioned-by) and fails for any other (kubelab has no
in-tree deleter: event VolumeFailedDelete); Recycle has no recycler (VolumeFailedRecycle).

Binding writes the volume first (claimRef, phase Bound), then the claim (volumeName, the
bind-completed and bound-by-controller annotations, then its status), as bind() does; a write
that fails is retried by the claim's next sync, and every claim and volume is looked at again
every 15 s (--pvclaimbinder-sync-period), so a claim waiting for a volume finds one created
later.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object, deep_copy
from kubelab.api.errors import ApiError
from kubelab.api.meta import rfc3339
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.delta_fifo import DeletedFinalStateUnknown
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory
from kubelab.controllers.volume.util import (
    ANN_BETA_STORAGE_PROVISIONER,
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_DYNAMICALLY_PROVISIONED,
    ANN_PRE_RESIZE_CAPACITY,
    ANN_SELECTED_NODE,
    ANN_STORAGE_PROVISIONER,
    annotations_of,
    claim_class,
    find_matching_volume,
)
from kubelab.sim.clock import Timer

__all__ = ["PersistentVolumeController"]

NORMAL, WARNING = "Normal", "Warning"
SYNC_PERIOD = 15.0  # --pvclaimbinder-sync-period
WAIT_FOR_FIRST_CONSUMER = "waiting for first consumer to be created before binding"


def _claim_key(claim: Object) -> str:
    return f"{claim['metadata'].get('namespace', '')}/{claim['metadata']['name']}"


class PersistentVolumeController:
    NAME = "persistentvolume-binder-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory) -> None:
        self.ctx, self.client, self.clock = ctx, ctx.client, ctx.clock
        self.recorder = ctx.recorder("persistentvolume-controller")
        self.claim_controller = Controller("claims", self.sync_claim_key, ctx.clock, trace=ctx.trace,
                                           client=ctx.client, cost=ctx.sync_cost)
        self.volume_controller = Controller("volumes", self.sync_volume_key, ctx.clock,
                                            trace=ctx.trace, client=ctx.client, cost=ctx.sync_cost)
        claims = informers.informer_for("persistentvolumeclaims")
        volumes = informers.informer_for("persistentvolumes")
        classes = informers.informer_for("storageclasses")
        self.claims, self.volumes, self.classes = claims.indexer, volumes.indexer, classes.indexer
        self._timer: Timer | None = None
        claims.add_event_handler(ResourceEventHandler(
            self.claim_controller.enqueue, lambda _old, new: self.claim_controller.enqueue(new),
            self._delete_claim))
        volumes.add_event_handler(ResourceEventHandler(
            self._volume_event, lambda _old, new: self._volume_event(new), self._volume_event))

    def run(self) -> None:
        self.claim_controller.run()
        self.volume_controller.run()
        self._timer = self.clock.call_later(SYNC_PERIOD, self.resync, background=True)

    def stop(self) -> None:
        self.claim_controller.stop()
        self.volume_controller.stop()
        if self._timer is not None:
            self._timer.cancel()

    def resync(self) -> None:
        """resync, every --pvclaimbinder-sync-period: a claim waiting for a volume that
        appeared since is looked at again."""
        for claim in self.claims.list():
            self.claim_controller.enqueue(claim)
        for volume in self.volumes.list():
            self.volume_controller.enqueue(volume)
        self._timer = self.clock.call_later(SYNC_PERIOD, self.resync, background=True)

    def _delete_claim(self, obj: Any) -> None:
        """deleteClaim: its volume is to be released now."""
        claim = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        self.claim_controller.enqueue(obj)
        name = (claim.get("spec") or {}).get("volumeName") if isinstance(claim, dict) else None
        if name:
            self.volume_controller.queue.add(str(name))

    def _volume_event(self, obj: Any) -> None:
        volume = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        self.volume_controller.enqueue(obj)
        ref = (volume.get("spec") or {}).get("claimRef") if isinstance(volume, dict) else None
        if ref:  # the claim may be waiting for this volume
            self.claim_controller.queue.add(f"{ref.get('namespace', '')}/{ref.get('name', '')}")

    # ------------------------------------------------------------------ claims

    def sync_claim_key(self, key: str) -> None:
        claim, exists = self.claims.get_by_key(key)
        if exists:
            self.sync_claim(claim)

    def sync_claim(self, claim: Object) -> None:
        """syncClaim."""
        if annotations_of(claim).get(ANN_BIND_COMPLETED):
            self.sync_bound_claim(claim)
        else:
            self.sync_unbound_claim(claim)

    def _storage_class(self, claim: Object) -> Object | None:
        name = claim_class(claim)
        if not name:
            return None
        sc, exists = self.classes.get_by_key(name)
        return sc if exists else None

    def should_delay_binding(self, claim: Object) -> bool:
        """IsDelayBindingMode, and no node chosen yet (the selected-node annotation)."""
        if ANN_SELECTED_NODE in annotations_of(claim):
            return False
        sc = self._storage_class(claim)
        return sc is not None and sc.get("volumeBindingMode") == "WaitForFirstConsumer"

    def sync_unbound_claim(self, claim: Object) -> None:
        volume_name = (claim.get("spec") or {}).get("volumeName")
        if not volume_name:
            delay = self.should_delay_binding(claim)
            volume = find_matching_volume(claim, self.volumes.list(), delay_binding=delay)
            if volume is not None:
                self.bind(volume, claim)
                return
            sc = self._storage_class(claim)
            if delay:
                self.recorder.event(claim, NORMAL, "WaitForFirstConsumer", WAIT_FOR_FIRST_CONSUMER)
            elif sc is not None and sc.get("provisioner"):
                self.provision_claim(claim, sc)
            elif claim_class(claim) and sc is None:
                self.recorder.event(claim, WARNING, "ProvisioningFailed",
                                    f'storageclass.storage.k8s.io "{claim_class(claim)}" not found')
            else:
                self.recorder.event(claim, NORMAL, "FailedBinding", "no persistent volumes available "
                                    "for this claim and no storage class is set")
            self._claim_phase(claim, "Pending")
            return
        volume, exists = self.volumes.get_by_key(str(volume_name))
        if not exists:  # the user named a volume that does not exist (yet)
            self._claim_phase(claim, "Pending")
            return
        ref = (volume.get("spec") or {}).get("claimRef")
        if not ref or (ref.get("name") == claim["metadata"]["name"] and
                       ref.get("namespace") == claim["metadata"].get("namespace") and
                       ref.get("uid") in (None, "", claim["metadata"].get("uid"))):
            self.bind(volume, claim)
        else:
            self.recorder.event(claim, WARNING, "FailedBinding",
                                "volume already bound to a different claim.")
            self._claim_phase(claim, "Pending")

    def sync_bound_claim(self, claim: Object) -> None:
        volume_name = (claim.get("spec") or {}).get("volumeName")
        if not volume_name:
            self._lost(claim, "Bound claim has lost reference to PersistentVolume. Data on the "
                       "volume is lost!")
            return
        volume, exists = self.volumes.get_by_key(str(volume_name))
        if not exists:
            self._lost(claim, "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
            return
        ref = (volume.get("spec") or {}).get("claimRef") or {}
        if not ref or ref.get("uid") == claim["metadata"].get("uid"):
            self.bind(volume, claim)  # finish a binding half done, or nothing to do
        else:
            self.recorder.event(claim, WARNING, "ClaimMisbound", "Two claims are bound to the same "
                                "volume, this one is bound incorrectly")
            self._claim_phase(claim, "Lost")

    def _lost(self, claim: Object, message: str) -> None:
        if (claim.get("status") or {}).get("phase") != "Lost":
            self.recorder.event(claim, WARNING, "ClaimLost", message)
        self._claim_phase(claim, "Lost")

    def provision_claim(self, claim: Object, sc: Object) -> None:
        """provisionClaim for an external provisioner: name it on the claim and wait."""
        provisioner = str(sc["provisioner"])
        if annotations_of(claim).get(ANN_STORAGE_PROVISIONER) != provisioner:
            new = deep_copy(claim)
            ann = new["metadata"].setdefault("annotations", {})
            ann[ANN_STORAGE_PROVISIONER] = ann[ANN_BETA_STORAGE_PROVISIONER] = provisioner
            if not self._update(new):
                return
        self.recorder.event(claim, NORMAL, "ExternalProvisioning",
                            f"Waiting for a volume to be created either by the external provisioner "
                            f"'{provisioner}' or manually by the system administrator. If volume "
                            "creation is delayed, please verify that the provisioner is running "
                            "and correctly registered.")

    # ------------------------------------------------------------------ binding

    def bind(self, volume: Object, claim: Object) -> None:
        """bind: the volume to the claim, the claim to the volume, then both statuses."""
        bound_volume = self.bind_volume_to_claim(volume, claim)
        if bound_volume is not None:
            bound_volume = self._volume_phase(bound_volume, "Bound")
        if bound_volume is None:
            return
        volume = bound_volume
        bound_claim = self.bind_claim_to_volume(claim, volume)
        if bound_claim is None:
            return
        claim = bound_claim
        spec = volume.get("spec") or {}
        status = {**(claim.get("status") or {}), "phase": "Bound",
                  "accessModes": list(spec.get("accessModes") or [])}
        if (claim.get("status") or {}).get("phase") != "Bound":
            # updateClaimStatus: capacity only as the claim becomes Bound, not once it is (a
            # file system smaller than its block device is meant); a volume being expanded
            # says the size before (AnnPreResizeCapacity, set by the CSI external-resizer)
            capacity = dict(spec.get("capacity") or {})
            pre_resize = annotations_of(volume).get(ANN_PRE_RESIZE_CAPACITY)
            if pre_resize:
                capacity["storage"] = pre_resize
            status["capacity"] = capacity
        if claim.get("status") != status:
            new = deep_copy(claim)
            new["status"] = status
            self._update(new, status=True)

    def bind_volume_to_claim(self, volume: Object, claim: Object) -> Object | None:
        """bindVolumeToClaim: claimRef with the claim's uid; bound-by-controller if we chose."""
        meta = claim["metadata"]
        ref = (volume.get("spec") or {}).get("claimRef") or {}
        wanted = {"kind": "PersistentVolumeClaim", "namespace": meta.get("namespace", ""),
                  "name": meta["name"], "uid": meta.get("uid", ""), "apiVersion": "v1",
                  "resourceVersion": meta.get("resourceVersion", "")}
        if ref.get("uid") == wanted["uid"] and ref.get("name") == wanted["name"]:
            return volume
        new = deep_copy(volume)
        new["spec"]["claimRef"] = wanted
        if not ref:
            new["metadata"].setdefault("annotations", {})[ANN_BOUND_BY_CONTROLLER] = "yes"
        return self._update(new)

    def bind_claim_to_volume(self, claim: Object, volume: Object) -> Object | None:
        """bindClaimToVolume: volumeName, and the annotations that say the binding is done."""
        ann = annotations_of(claim)
        name = volume["metadata"]["name"]
        if (claim.get("spec") or {}).get("volumeName") == name and ann.get(ANN_BIND_COMPLETED):
            return claim
        new = deep_copy(claim)
        new_ann = new["metadata"].setdefault("annotations", {})
        if not (claim.get("spec") or {}).get("volumeName"):
            new_ann[ANN_BOUND_BY_CONTROLLER] = "yes"
        new["spec"]["volumeName"] = name
        new_ann[ANN_BIND_COMPLETED] = "yes"
        return self._update(new)

    # ------------------------------------------------------------------ volumes

    def sync_volume_key(self, key: str) -> None:
        volume, exists = self.volumes.get_by_key(key)
        if exists:
            self.sync_volume(volume)

    def sync_volume(self, volume: Object) -> None:
        """syncVolume."""
        ref = (volume.get("spec") or {}).get("claimRef")
        if not ref or not ref.get("uid"):  # unused, or pre-bound to a claim not bound yet
            self._volume_phase(volume, "Available")
            return
        claim, exists = self.claims.get_by_key(f"{ref.get('namespace', '')}/{ref.get('name', '')}")
        if exists and claim["metadata"].get("uid") != ref.get("uid"):
            exists = False  # a new claim of the same name: ours is gone
        if not exists:
            if (volume.get("status") or {}).get("phase") not in ("Released", "Failed"):
                volume = self._volume_phase(volume, "Released") or volume
            self.reclaim_volume(volume)
            return
        if not (claim.get("spec") or {}).get("volumeName"):
            self.claim_controller.queue.add(_claim_key(claim))  # syncClaim finishes the binding
        elif claim["spec"]["volumeName"] == volume["metadata"]["name"]:
            self._volume_phase(volume, "Bound")

    def reclaim_volume(self, volume: Object) -> None:
        """reclaimVolume: Retain keeps, Delete deletes (the provisioner's own), Recycle fails."""
        if (volume.get("status") or {}).get("phase") == "Failed":
            return
        policy = (volume.get("spec") or {}).get("persistentVolumeReclaimPolicy") or "Retain"
        if policy == "Retain":
            return
        if policy == "Delete":
            if annotations_of(volume).get(ANN_DYNAMICALLY_PROVISIONED):
                return  # the external provisioner that made it deletes it
            message = (f'error getting deleter volume plugin for volume "{volume["metadata"]["name"]}"'
                       ": no deletable volume plugin matched")
            self.recorder.event(volume, WARNING, "VolumeFailedDelete", message)
        else:
            self.recorder.event(volume, WARNING, "VolumeFailedRecycle",
                                "No recycler plugin found for the volume!")
        self._volume_phase(volume, "Failed")

    # ------------------------------------------------------------------ writes

    def _update(self, obj: Object, status: bool = False) -> Object | None:
        try:
            return self.client.update(obj, subresource="status" if status else "")
        except ApiError as err:
            if err.code in (404, 409):
                return None  # gone or changed: its next event brings it back
            raise

    def _volume_phase(self, volume: Object, phase: str) -> Object | None:
        if (volume.get("status") or {}).get("phase") == phase:
            return volume
        new = deep_copy(volume)
        new["status"] = {"phase": phase,
                         "lastPhaseTransitionTime": rfc3339(self.clock.now)}
        return self._update(new, status=True)

    def _claim_phase(self, claim: Object, phase: str) -> None:
        if (claim.get("status") or {}).get("phase") == phase:
            return
        new = deep_copy(claim)
        new["status"] = {**(claim.get("status") or {}), "phase": phase}
        self._update(new, status=True)
