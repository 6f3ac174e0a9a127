"""kind's dynamic provisioner, simulated: rancher.io/local-path (rancher/local-path-provisioner
provisioner.go, driven by sig-storage-lib-external-provisioner's controller.go).

Upstream it is a Deployment in the local-path-storage namespace; kubelab runs it beside the PV
controller in the controller manager (docs/ARCHITECTURE.md, departures), with the same work:
- a claim the PV controller handed to it (volume.kubernetes.io/storage-provisioner:
  rancher.io/local-path) and, for a WaitForFirstConsumer class, placed by the scheduler
  (volume.kubernetes.io/selected-node) gets a volume `pvc-<claim uid>`: a hostPath directory
  /var/local-path-provisioner/pvc-<uid>_<namespace>_<name> on that node, pinned there by node
  affinity (kubernetes.io/hostname), pre-bound to the claim by claimRef, with the class's
  reclaim policy; events Provisioning and ProvisioningSucceeded on the claim;
- a volume it made that is Released with policy Delete is deleted (the directory with it).
The PV controller then binds the claim to the new volume.
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

__all__ = ["LOCAL_PATH", "LocalPathProvisioner", "volume_for_claim"]

LOCAL_PATH = "rancher.io/local-path"
BASE_PATH = "/var/local-path-provisioner"
HOSTNAME = "kubernetes.io/hostname"


def volume_for_claim(claim: Object, sc: Object, node: str) -> Object:
    """What Provision returns: the PersistentVolume for this claim on this node."""
    meta, spec = claim["metadata"], claim.get("spec") or {}
    name = f"pvc-{meta['uid']}"
    path = f"{BASE_PATH}/{name}_{meta.get('namespace', '')}_{meta['name']}"
    return {
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": name, "annotations": {
            ANN_DYNAMICALLY_PROVISIONED: LOCAL_PATH, "local.path.provisioner/selected-node": node}},
        "spec": {
            "capacity": {"storage": ((spec.get("resources") or {}).get("requests") or {})["storage"]},
            "accessModes": list(spec.get("accessModes") or []),
            "persistentVolumeReclaimPolicy": sc.get("reclaimPolicy") or "Delete",
            "storageClassName": sc["metadata"]["name"],
            "volumeMode": spec.get("volumeMode") or "Filesystem",
            "claimRef": {"kind": "PersistentVolumeClaim", "namespace": meta.get("namespace", ""),
                         "name": meta["name"], "uid": meta["uid"], "apiVersion": "v1",
                         "resourceVersion": meta.get("resourceVersion", "")},
            "hostPath": {"path": path, "type": "DirectoryOrCreate"},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": HOSTNAME, "operator": "In", "values": [node]}]}]}}}}


class LocalPathProvisioner:
    NAME = "local-path-provisioner"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory) -> None:
        self.ctx, self.client = ctx, ctx.client
        self.recorder = ctx.recorder(f"{LOCAL_PATH}_local-path-provisioner")
        self.claim_controller = Controller("provisioner-claims", self.sync_claim, ctx.clock,
                                           trace=ctx.trace, client=ctx.client, cost=ctx.sync_cost)
        self.volume_controller = Controller("provisioner-volumes", self.sync_volume, ctx.clock,
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

    def should_provision(self, claim: Object) -> Object | None:
        """shouldProvision: the claim's class, if this claim is ours to provision now."""
        ann = annotations_of(claim)
        if (claim.get("spec") or {}).get("volumeName") or claim["metadata"].get("deletionTimestamp"):
            return None
        if (ann.get(ANN_STORAGE_PROVISIONER) or ann.get(ANN_BETA_STORAGE_PROVISIONER)) != LOCAL_PATH:
            return None
        sc, exists = self.classes.get_by_key(claim_class(claim))
        if not exists or sc.get("provisioner") != LOCAL_PATH:
            return None
        if sc.get("volumeBindingMode") == "WaitForFirstConsumer" and not ann.get(ANN_SELECTED_NODE):
            return None
        return dict(sc)

    def sync_claim(self, key: str) -> None:
        claim, exists = self.claims.get_by_key(key)
        if not exists:
            return
        sc = self.should_provision(claim)
        if sc is None:
            return
        name = f"pvc-{claim['metadata']['uid']}"
        if self.volumes.get_by_key(name)[1]:
            return  # provisioned already
        node = annotations_of(claim).get(ANN_SELECTED_NODE, "")
        if not node:
            self.recorder.event(claim, "Warning", "ProvisioningFailed", "failed to provision volume "
                                "with StorageClass \"" + sc["metadata"]["name"] + "\": configuration "
                                "error, no node was specified")
            return
        self.recorder.event(claim, "Normal", "Provisioning", "External provisioner is provisioning "
                            f'volume for claim "{key}"')
        try:
            self.client.create(volume_for_claim(claim, sc, node))
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
        if annotations_of(volume).get(ANN_DYNAMICALLY_PROVISIONED) != LOCAL_PATH or \
                (volume.get("status") or {}).get("phase") != "Released" or \
                spec.get("persistentVolumeReclaimPolicy") != "Delete":
            return
        try:
            self.client.delete("persistentvolumes", volume["metadata"]["name"])
        except ApiError as err:
            if err.code != 404:
                raise
