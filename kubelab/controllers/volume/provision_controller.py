"""What every external provisioner runs: sig-storage-lib-external-provisioner's ProvisionController
(controller/controller.go: shouldProvision, provisionClaimOperation, shouldDelete,
deleteVolumeOperation), which rancher's local-path-provisioner and kubernetes-csi's
external-provisioner both build on. A provisioner gives it its name and its Provision; the
controller does the rest:
- a claim the PV controller handed to this provisioner (volume.kubernetes.io/storage-provisioner,
  or its beta name), of a class that names it, not bound, not being deleted and, for a
  WaitForFirstConsumer class, placed by the scheduler (volume.kubernetes.io/selected-node), gets
  the volume Provision returns, `pvc-<claim uid>`; events Provisioning, then
  ProvisioningSucceeded or, when Provision refuses, ProvisioningFailed;
- a volume it made (pv.kubernetes.io/provisioned-by) that is Released with policy Delete is
  deleted.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.shared_informer import SharedInformerFactory
from kubelab.controllers.volume.util import (
    ANN_BETA_STORAGE_PROVISIONER,
    ANN_DYNAMICALLY_PROVISIONED,
    ANN_SELECTED_NODE,
    ANN_STORAGE_PROVISIONER,
    annotations_of,
    claim_class,
)

__all__ = ["ProvisionController", "ProvisioningFailed", "provisioned_volume"]


def provisioned_volume(claim: Object, sc: Object, provisioner: str, source: Object,
                       annotations: dict[str, str] | None = None) -> Object:
    """The PersistentVolume `pvc-<claim uid>` for a claim: what every provisioner fills from the
    claim and its class (ProvisionOptions: size, access modes, volume mode, reclaim policy) and
    what the library adds after Provision (claimRef, storageClassName, provisioned-by), around
    the provisioner's own `source` (its spec fields: a hostPath and node affinity, a csi, ...)."""
    meta, spec = claim["metadata"], claim.get("spec") or {}
    return {
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": f"pvc-{meta['uid']}",
                     "annotations": {ANN_DYNAMICALLY_PROVISIONED: provisioner, **(annotations or {})}},
        "spec": {
            "capacity": {"storage": ((spec.get("resources") or {}).get("requests") or {})["storage"]},
            "accessModes": list(spec.get("accessModes") or []),
            "persistentVolumeReclaimPolicy": sc.get("reclaimPolicy") or "Delete",
            "storageClassName": sc["metadata"]["name"],
            "volumeMode": spec.get("volumeMode") or "Filesystem",
            "claimRef": {"kind": "PersistentVolumeClaim", "namespace": meta.get("namespace", ""),
                         "name": meta["name"], "uid": meta["uid"], "apiVersion": "v1",
                         "resourceVersion": meta.get("resourceVersion", "")},
            **source}}


class ProvisioningFailed(Exception):
    """Provision's refusal: its text follows `failed to provision volume with StorageClass "x": `."""


class ProvisionController:
    """A provisioner's controller. Subclasses set PROVISIONER (the class's `provisioner`), NAME
    (the component), EVENT_SOURCE and WORKQUEUE (the names of its two queues' prefix), and
    write provision()."""

    PROVISIONER = ""
    NAME = ""
    EVENT_SOURCE = ""
    WORKQUEUE = ""

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory) -> None:
        self.ctx, self.client = ctx, ctx.client
        self.recorder = ctx.recorder(self.EVENT_SOURCE)
        self.claim_controller = Controller(f"{self.WORKQUEUE}-claims", self.sync_claim, ctx.clock,
                                           trace=ctx.trace, client=ctx.client, cost=ctx.sync_cost)
        self.volume_controller = Controller(f"{self.WORKQUEUE}-volumes", self.sync_volume, ctx.clock,
                                            trace=ctx.trace, client=ctx.client, cost=ctx.sync_cost)
        claims = informers.informer_for("persistentvolumeclaims")
        volumes = informers.informer_for("persistentvolumes")
        self.claims, self.volumes = claims.indexer, volumes.indexer
        self.classes = informers.informer_for("storageclasses").indexer
        claims.add_event_handler(self.claim_controller.handler())
        volumes.add_event_handler(self.volume_controller.handler())

    def run(self) -> None:
        self.claim_controller.run()
        self.volume_controller.run()

    def stop(self) -> None:
        self.claim_controller.stop()
        self.volume_controller.stop()

    def provision(self, claim: Object, sc: Object) -> Object:
        """Provision: the PersistentVolume for this claim (ProvisioningFailed if it cannot)."""
        raise NotImplementedError

    def should_provision(self, claim: Object) -> Object | None:
        """shouldProvision: the claim's class, if this claim is ours to provision now."""
        ann = annotations_of(claim)
        if (claim.get("spec") or {}).get("volumeName") or claim["metadata"].get("deletionTimestamp"):
            return None
        if (ann.get(ANN_STORAGE_PROVISIONER) or ann.get(ANN_BETA_STORAGE_PROVISIONER)) != self.PROVISIONER:
            return None
        sc, exists = self.classes.get_by_key(claim_class(claim))
        if not exists or sc.get("provisioner") != self.PROVISIONER:
            return None
        if sc.get("volumeBindingMode") == "WaitForFirstConsumer" and not ann.get(ANN_SELECTED_NODE):
            return None
        return dict(sc)

    def sync_claim(self, key: str) -> None:
        """provisionClaimOperation, for a claim that should be provisioned and is not yet."""
        claim, exists = self.claims.get_by_key(key)
        if not exists:
            return
        sc = self.should_provision(claim)
        name = f"pvc-{claim['metadata']['uid']}"
        if sc is None or self.volumes.get_by_key(name)[1]:
            return  # not ours, not now, or provisioned already
        try:
            volume = self.provision(claim, sc)
        except ProvisioningFailed as err:
            self.recorder.event(claim, "Warning", "ProvisioningFailed", "failed to provision volume "
                                f'with StorageClass "{sc["metadata"]["name"]}": {err}')
            return
        self.recorder.event(claim, "Normal", "Provisioning", "External provisioner is provisioning "
                            f'volume for claim "{key}"')
        try:
            self.client.create(volume)
        except ApiError as err:
            if err.code != 409:
                raise
            return
        self.recorder.event(claim, "Normal", "ProvisioningSucceeded",
                            f"Successfully provisioned volume {name}")

    def sync_volume(self, key: str) -> None:
        """shouldDelete, then deleteVolumeOperation: a Released volume of ours, policy Delete."""
        volume, exists = self.volumes.get_by_key(key.lstrip("/"))
        if not exists or volume["metadata"].get("deletionTimestamp"):
            return
        spec: Any = volume.get("spec") or {}
        if annotations_of(volume).get(ANN_DYNAMICALLY_PROVISIONED) != self.PROVISIONER or \
                (volume.get("status") or {}).get("phase") != "Released" or \
                spec.get("persistentVolumeReclaimPolicy") != "Delete":
            return
        try:
            self.client.delete("persistentvolumes", volume["metadata"]["name"])
        except ApiError as err:
            if err.code != 404:
                raise
