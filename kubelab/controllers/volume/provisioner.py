"""kind's dynamic provisioner, simulated: rancher.io/local-path (rancher/local-path-provisioner
provisioner.go, driven by sig-storage-lib-external-provisioner's controller.go:
provision_controller.py).

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

from kubelab.api import Object
from kubelab.controllers.volume.provision_controller import (
    ProvisionController,
    ProvisioningFailed,
    provisioned_volume,
)
from kubelab.controllers.volume.util import ANN_SELECTED_NODE, annotations_of

__all__ = ["LOCAL_PATH", "LocalPathProvisioner", "volume_for_claim"]

LOCAL_PATH = "rancher.io/local-path"
BASE_PATH = "/var/local-path-provisioner"
HOSTNAME = "kubernetes.io/hostname"


def volume_for_claim(claim: Object, sc: Object, node: str) -> Object:
    """What Provision returns: the PersistentVolume for this claim on this node."""
    meta = claim["metadata"]
    path = f"{BASE_PATH}/pvc-{meta['uid']}_{meta.get('namespace', '')}_{meta['name']}"
    return provisioned_volume(claim, sc, LOCAL_PATH, {
        "hostPath": {"path": path, "type": "DirectoryOrCreate"},
        "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": HOSTNAME, "operator": "In", "values": [node]}]}]}}},
        {"local.path.provisioner/selected-node": node})


class LocalPathProvisioner(ProvisionController):
    """rancher.io/local-path: a hostPath directory on the node the scheduler chose."""

    PROVISIONER = LOCAL_PATH
    NAME = "local-path-provisioner"
    EVENT_SOURCE = f"{LOCAL_PATH}_local-path-provisioner"
    WORKQUEUE = "provisioner"

    def provision(self, claim: Object, sc: Object) -> Object:
        node = annotations_of(claim).get(ANN_SELECTED_NODE, "")
        if not node:
            raise ProvisioningFailed("configuration error, no node was specified")
        return volume_for_claim(claim, sc, node)
