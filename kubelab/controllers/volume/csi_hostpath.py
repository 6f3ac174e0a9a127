"""A simulated CSI driver for the volume-expansion lesson: csi-driver-host-path
(kubernetes-csi/csi-driver-host-path, driver name hostpath.csi.k8s.io) with the two sidecars
that act for it in the API: external-provisioner (kubernetes-csi/external-provisioner, on
sig-storage-lib-external-provisioner's controller.go) and external-resizer
(kubernetes-csi/external-resizer pkg/controller/controller.go: syncPVC, resizePVC,
markPVCResizeInProgress, markPVCAsFSResizeRequired).

kind installs no CSI driver: its `standard` class is rancher.io/local-path, which is not CSI and
does not allow expansion. This driver only acts for a StorageClass that names it, such as
CSI_HOSTPATH_STORAGE_CLASS (`csi-hostpath-sc`, the driver's example class, allowVolumeExpansion:
true), which a lesson creates.

- Provisioning: a claim the PV controller hands to hostpath.csi.k8s.io (the
  volume.kubernetes.io/storage-provisioner annotation) gets `pvc-<claim uid>`, a CSI volume
  (spec.csi: driver, volumeHandle, fsType ext4) pre-bound to it; events Provisioning and
  ProvisioningSucceeded; a Released volume with policy Delete is deleted.
- Attachment: a VolumeAttachment for the driver (the attach/detach controller's,
  kubelab/controllers/volume/attachdetach.py) gets the external-attacher's finalizer and
  status.attached: true (ControllerPublishVolume, always at once); when it is deleted the
  finalizer goes (ControllerUnpublishVolume). One whose volume is not a PersistentVolume of
  the driver stays unattached (upstream records an attachError).
- Expansion: when a bound claim of the driver asks for more than its status.capacity, the
  resizer marks the claim Resizing (condition, status.allocatedResources, allocatedResourceStatuses
  ControllerResizeInProgress; event Resizing "External resizer is resizing volume pvc-..."),
  expands the volume (ControllerExpandVolume: the PV's spec.capacity), and, since a file system
  must grow on the node, leaves the claim FileSystemResizePending (NodeResizePending; event
  FileSystemResizeRequired). The kubelet that has it mounted finishes it
  (kubelab/kubelet/volumemanager: NodeExpandVolume), setting status.capacity.

Departures: the sidecars run in the controller manager beside the PV controller, as the
local-path provisioner does (docs/ARCHITECTURE.md); the volume has no topology; publishing and
ControllerExpandVolume always succeed at once.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import deep_copy, rfc3339
from kubelab.api.quantity import parse_quantity
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.shared_informer import SharedInformerFactory
from kubelab.controllers.volume.provision_controller import ProvisionController, provisioned_volume
from kubelab.controllers.volume.util import (
    ANN_PRE_RESIZE_CAPACITY,
)

__all__ = ["ATTACHER_FINALIZER", "CSI_HOSTPATH_DRIVER", "CSI_HOSTPATH_STORAGE_CLASS", "DRIVER",
           "FS_RESIZE_PENDING_MESSAGE", "CSIHostPathProvisioner", "ExternalAttacher",
           "ExternalResizer", "csi_volume_for_claim"]

DRIVER = "hostpath.csi.k8s.io"
CSI_HOSTPATH_STORAGE_CLASS: Object = {
    "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
    "metadata": {"name": "csi-hostpath-sc"},
    "provisioner": DRIVER, "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate",
    "allowVolumeExpansion": True,
}
# --- the driver's CSIDriver object: it needs attaching (the lesson creates it)
CSI_HOSTPATH_DRIVER: Object = {
    "apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": DRIVER},
    "spec": {"attachRequired": True, "podInfoOnMount": True,
             "volumeLifecycleModes": ["Persistent", "Ephemeral"]},
}
ATTACHER_FINALIZER = "external-attacher/hostpath-csi-k8s-io"  # GetFinalizerName, sanitized
FS_RESIZE_PENDING_MESSAGE = "Waiting for user to (re-)start a pod to finish file system resize " \
    "of volume on node."


def _storage(obj: Object, *path: str) -> Any:
    value: Any = obj
    for key in path:
        value = (value or {}).get(key) if isinstance(value, dict) else None
    return (value or {}).get("storage") if isinstance(value, dict) else None


def _larger(a: Any, b: Any) -> bool:
    """a > b as Quantities (a missing b counts as zero)."""
    if a is None:
        return False
    return parse_quantity(str(a)).cmp(parse_quantity(str(b or "0"))) > 0


def csi_volume_for_claim(claim: Object, sc: Object) -> Object:
    """What the driver's CreateVolume and the provisioner make of a claim."""
    return provisioned_volume(claim, sc, DRIVER, {"csi": {
        "driver": DRIVER, "volumeHandle": claim["metadata"]["uid"], "fsType": "ext4",
        "volumeAttributes": {"storage.kubernetes.io/csiProvisionerIdentity": DRIVER}}})


class CSIHostPathProvisioner(ProvisionController):
    """external-provisioner for hostpath.csi.k8s.io."""

    PROVISIONER = DRIVER
    NAME = "csi-hostpath-provisioner"
    EVENT_SOURCE = f"{DRIVER}_csi-hostpathplugin-0"
    WORKQUEUE = "csi-provisioner"

    def provision(self, claim: Object, sc: Object) -> Object:
        return csi_volume_for_claim(claim, sc)


class ExternalResizer:
    """external-resizer for hostpath.csi.k8s.io: the controller half of an expansion."""

    NAME = "csi-resizer"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory) -> None:
        self.client, self.clock = ctx.client, ctx.clock
        self.recorder = ctx.recorder(f"external-resizer {DRIVER}")
        self.controller = Controller("csi-resizer", self.sync_pvc, ctx.clock, trace=ctx.trace,
                                     client=ctx.client, cost=ctx.sync_cost)
        claims = informers.informer_for("persistentvolumeclaims")
        self.claims = claims.indexer
        self.volumes = informers.informer_for("persistentvolumes").indexer
        claims.add_event_handler(self.controller.handler())

    def run(self) -> None:
        self.controller.run()

    def stop(self) -> None:
        self.controller.stop()

    def pvc_needs_resize(self, pvc: Object) -> bool:
        """pvcNeedResize: bound, and asking for more than it has (or a resize under way)."""
        status = pvc.get("status") or {}
        if status.get("phase") != "Bound" or not (pvc.get("spec") or {}).get("volumeName"):
            return False
        return _larger(_storage(pvc, "spec", "resources", "requests"), _storage(pvc, "status", "capacity"))

    def sync_pvc(self, key: str) -> None:
        """syncPVC: a claim of ours that needs more, whose volume has less, is resized."""
        pvc, exists = self.claims.get_by_key(key)
        if not exists or not self.pvc_needs_resize(pvc):
            return
        pv, found = self.volumes.get_by_key(str(pvc["spec"]["volumeName"]))
        if not found or ((pv.get("spec") or {}).get("csi") or {}).get("driver") != DRIVER:
            return
        statuses = (pvc.get("status") or {}).get("allocatedResourceStatuses") or {}
        if statuses.get("storage") == "NodeResizePending":
            return  # the kubelet's turn
        self.resize_pvc(deep_copy(pvc), deep_copy(pv))

    def resize_pvc(self, pvc: Object, pv: Object) -> None:
        """resizePVC: mark it in progress, expand the volume, hand the file system to the node."""
        requested = _storage(pvc, "spec", "resources", "requests")
        now = rfc3339(self.clock.now)
        status = pvc.setdefault("status", {})
        status["conditions"] = [c for c in status.get("conditions") or []
                                if c.get("type") not in ("Resizing", "FileSystemResizePending")]
        status["conditions"].append({"type": "Resizing", "status": "True", "lastProbeTime": None,
                                     "lastTransitionTime": now})
        status["allocatedResources"] = {**(status.get("allocatedResources") or {}), "storage": requested}
        status["allocatedResourceStatuses"] = {**(status.get("allocatedResourceStatuses") or {}),
                                               "storage": "ControllerResizeInProgress"}
        try:
            pvc = self.client.update_status(pvc)
        except ApiError as err:
            if err.code in (404, 409):
                return  # it changed meanwhile: the next event brings it back
            raise
        self.recorder.event(pvc, "Normal", "Resizing",
                            f"External resizer is resizing volume {pv['metadata']['name']}")
        if _larger(requested, _storage(pv, "spec", "capacity")):  # ControllerExpandVolume
            # updatePVCapacity: the new size, and (a node must still grow the file system) the
            # claim's size before, which the PV controller keeps showing until then
            pv["spec"]["capacity"] = {**pv["spec"].get("capacity", {}), "storage": requested}
            before = _storage(pvc, "status", "capacity")
            if before is not None:
                pv["metadata"].setdefault("annotations", {})[ANN_PRE_RESIZE_CAPACITY] = before
            self.client.update(pv)
        # markPVCAsFSResizeRequired: the driver needs NodeExpandVolume
        status = pvc.setdefault("status", {})
        status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != "Resizing"]
        status["conditions"].append({"type": "FileSystemResizePending", "status": "True",
                                     "lastProbeTime": None, "lastTransitionTime": now,
                                     "message": FS_RESIZE_PENDING_MESSAGE})
        status["allocatedResourceStatuses"] = {**(status.get("allocatedResourceStatuses") or {}),
                                               "storage": "NodeResizePending"}
        try:
            pvc = self.client.update_status(pvc)
        except ApiError as err:
            if err.code in (404, 409):
                return
            raise
        self.recorder.event(pvc, "Normal", "FileSystemResizeRequired",
                            "Require file system resize of volume on node")


class ExternalAttacher:
    """external-attacher for hostpath.csi.k8s.io (kubernetes-csi/external-attacher
    pkg/controller/csi_handler.go: SyncNewOrUpdatedVolumeAttachment, addVAFinalizer, attach,
    csiDetach)."""

    NAME = "csi-attacher"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory) -> None:
        self.client = ctx.client
        self.controller = Controller("csi-attacher", self.sync_va, ctx.clock, trace=ctx.trace,
                                     client=ctx.client, cost=ctx.sync_cost)
        attachments = informers.informer_for("volumeattachments")
        self.attachments = attachments.indexer
        self.volumes = informers.informer_for("persistentvolumes").indexer
        attachments.add_event_handler(self.controller.handler())

    def run(self) -> None:
        self.controller.run()

    def stop(self) -> None:
        self.controller.stop()

    def sync_va(self, key: str) -> None:
        va, exists = self.attachments.get_by_key(key.lstrip("/"))
        if not exists or (va.get("spec") or {}).get("attacher") != DRIVER:
            return
        va = deep_copy(va)
        finalizers = list(va["metadata"].get("finalizers") or [])
        try:
            if va["metadata"].get("deletionTimestamp"):  # csiDetach, then the finalizer goes
                if ATTACHER_FINALIZER in finalizers:
                    va["metadata"]["finalizers"] = [f for f in finalizers if f != ATTACHER_FINALIZER]
                    self.client.update(va)
                return
            if ATTACHER_FINALIZER not in finalizers:  # addVAFinalizer before ControllerPublish
                va["metadata"]["finalizers"] = [*finalizers, ATTACHER_FINALIZER]
                va = self.client.update(va)
            pv_name = ((va.get("spec") or {}).get("source") or {}).get("persistentVolumeName")
            pv, found = self.volumes.get_by_key(str(pv_name)) if pv_name else ({}, False)
            if not found or ((pv.get("spec") or {}).get("csi") or {}).get("driver") != DRIVER:
                return  # nothing of ours to publish (upstream: an attachError); it stays unattached
            if not (va.get("status") or {}).get("attached"):
                va["status"] = {**(va.get("status") or {}), "attached": True}
                self.client.update_status(va)
        except ApiError as err:
            if err.code not in (404, 409):
                raise
