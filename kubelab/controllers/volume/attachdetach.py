"""The attach/detach controller (kubernetes pkg/controller/volume/attachdetach:
attach_detach_controller.go, reconciler/reconciler.go; the CSI plugin's attacher,
pkg/volume/csi/csi_attacher.go Attach, getAttachmentName).

Its desired state is every attachable volume of every pod bound to a node; its actual state the
VolumeAttachments. For a pod's persistentVolumeClaim whose volume is CSI (spec.csi) and whose
driver needs attaching (its CSIDriver's attachRequired, true when there is no CSIDriver object,
as csi_attacher.go assumes), it creates a VolumeAttachment
`csi-<sha256(volumeHandle + driver + node)>` (attacher: the driver, nodeName, source
persistentVolumeName). The driver's external-attacher marks it attached
(kubelab/controllers/volume/csi_hostpath.py); the controller then says so on the pod (Normal
SuccessfulAttachVolume `AttachVolume.Attach succeeded for volume "pvc-..."`). When no pod on
that node needs the volume any more, the VolumeAttachment is deleted (detach), if it is one
the controller can account for (its volume is a CSI PersistentVolume of its attacher).

Departures: one reconcile of the whole desired state per event (upstream: a loop every 100 ms
over its caches); no Node status.volumesAttached (the kubelet reads the VolumeAttachment, as
the CSI plugin's WaitForAttach does); in-line CSI volumes are not attached.
"""

from __future__ import annotations

from kubelab.api import Object
from kubelab.api.csi import attach_required, attachment_name
from kubelab.api.errors import ApiError
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory

__all__ = ["AttachDetachController", "attachment_name"]

KEY = "attach-detach"


class AttachDetachController:
    NAME = "attachdetach-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory) -> None:
        self.client = ctx.client
        self.recorder = ctx.recorder(self.NAME)
        self.controller = Controller("attachdetach", self.reconcile, ctx.clock, trace=ctx.trace,
                                     client=ctx.client, cost=ctx.sync_cost)
        self.pods = informers.informer_for("pods").indexer
        self.claims = informers.informer_for("persistentvolumeclaims").indexer
        self.volumes = informers.informer_for("persistentvolumes").indexer
        self.drivers = informers.informer_for("csidrivers").indexer
        self.attachments = informers.informer_for("volumeattachments").indexer
        self.reported: set[tuple[str, str]] = set()  # (pod uid, attachment) already evented
        enqueue = ResourceEventHandler(lambda _o: self.controller.queue.add(KEY),
                                       lambda _o, _n: self.controller.queue.add(KEY),
                                       lambda _o: self.controller.queue.add(KEY))
        for resource in ("pods", "persistentvolumeclaims", "persistentvolumes", "csidrivers",
                         "volumeattachments"):
            informers.informer_for(resource).add_event_handler(enqueue)

    def run(self) -> None:
        self.controller.run()

    def stop(self) -> None:
        self.controller.stop()

    def attach_required(self, driver: str) -> bool:
        """csiAttacher's isAttachRequired: the CSIDriver says, or attach."""
        obj, exists = self.drivers.get_by_key(driver)
        return attach_required(obj if exists else None)

    def in_actual_state(self, va: Object) -> bool:
        """processVolumeAttachments: a VolumeAttachment counts as attached by this controller
        when its volume is a CSI PersistentVolume of its attacher (a spec can be built)."""
        spec = va.get("spec") or {}
        pv_name = (spec.get("source") or {}).get("persistentVolumeName")
        pv, found = self.volumes.get_by_key(str(pv_name)) if pv_name else ({}, False)
        return found and ((pv.get("spec") or {}).get("csi") or {}).get("driver") == spec.get("attacher")

    def desired(self) -> dict[str, tuple[Object, list[Object]]]:
        """The desired state of the world: attachment name -> (its spec, the pods needing it)."""
        want: dict[str, tuple[Object, list[Object]]] = {}
        for pod in self.pods.list():
            node = (pod.get("spec") or {}).get("nodeName")
            phase = (pod.get("status") or {}).get("phase")
            if not node or phase in ("Succeeded", "Failed"):
                continue
            namespace = pod["metadata"].get("namespace", "")
            for volume in (pod.get("spec") or {}).get("volumes") or []:
                claim_name = (volume.get("persistentVolumeClaim") or {}).get("claimName")
                if not claim_name:
                    continue
                claim, found = self.claims.get_by_key(f"{namespace}/{claim_name}")
                pv_name = (claim.get("spec") or {}).get("volumeName") if found else None
                pv, found = self.volumes.get_by_key(str(pv_name)) if pv_name else ({}, False)
                csi = (pv.get("spec") or {}).get("csi") if found else None
                if not csi or not self.attach_required(str(csi.get("driver", ""))):
                    continue
                name = attachment_name(str(csi.get("volumeHandle", "")), str(csi["driver"]), node)
                spec = {"attacher": csi["driver"], "nodeName": node,
                        "source": {"persistentVolumeName": pv["metadata"]["name"]}}
                want.setdefault(name, (spec, []))[1].append(pod)
        return want

    def reconcile(self, _key: str) -> None:
        """reconciler.reconcile: detach what no pod needs, attach what one does."""
        want = self.desired()
        for va in self.attachments.list():
            name = va["metadata"]["name"]
            if name not in want and not va["metadata"].get("deletionTimestamp") and \
                    self.in_actual_state(va):
                try:
                    self.client.delete("volumeattachments", name, "")
                except ApiError as err:
                    if err.code != 404:
                        raise
        for name, (spec, pods) in sorted(want.items()):
            va, exists = self.attachments.get_by_key(name)
            if not exists:
                try:
                    self.client.create({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                                        "metadata": {"name": name}, "spec": spec})
                except ApiError as err:
                    if err.code != 409:
                        raise
                continue
            if not (va.get("status") or {}).get("attached"):
                continue
            for pod in pods:
                if (pod["metadata"]["uid"], name) not in self.reported:
                    self.reported.add((pod["metadata"]["uid"], name))
                    volume = spec["source"]["persistentVolumeName"]
                    self.recorder.event(pod, "Normal", "SuccessfulAttachVolume",
                                        f'AttachVolume.Attach succeeded for volume "{volume}"')
