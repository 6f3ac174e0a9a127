"""Volume expansion through a simulated CSI driver (kubelab/controllers/volume/csi_hostpath.py):
the external-provisioner, the external-resizer's conditions and events, the PV controller
keeping the claim's old size meanwhile, and the kubelet's NodeExpandVolume finishing it."""

from __future__ import annotations

from typing import Any

from kubelab import Cluster
from kubelab.controllers.volume.csi_hostpath import (
    CSI_HOSTPATH_STORAGE_CLASS,
    DRIVER,
    FS_RESIZE_PENDING_MESSAGE,
)

CLAIM = """apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: csi-hostpath-sc
  resources: {requests: {storage: 1Gi}}
"""
POD = """apiVersion: v1
kind: Pod
metadata: {name: db}
spec:
  containers:
  - name: db
    image: nginx
    volumeMounts: [{name: data, mountPath: /var/lib/data}]
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: data}
"""


def cluster(with_pod: bool) -> Cluster:
    c = Cluster(nodes=1)
    c.client.create(CSI_HOSTPATH_STORAGE_CLASS)
    c.apply(CLAIM)
    c.clock.run(until=10)
    if with_pod:
        c.apply(POD)
        c.clock.run(until=30)
    return c


def claim(c: Cluster) -> dict[str, Any]:
    return c.client.get("persistentvolumeclaims", "data")


def events(c: Cluster, kind: str) -> list[tuple[str, str]]:
    return [(e["reason"], e["message"]) for e in c.client.list("events", "default")["items"]
            if e["involvedObject"]["kind"] == kind]


def grow(c: Cluster, size: str) -> None:
    c.client.patch("persistentvolumeclaims", "data",
                   {"spec": {"resources": {"requests": {"storage": size}}}})


def test_the_driver_provisions_a_csi_volume_for_its_class() -> None:
    c = cluster(False)
    pvc = claim(c)
    assert pvc["status"]["phase"] == "Bound"
    pv = c.client.get("persistentvolumes", pvc["spec"]["volumeName"], "")
    assert pv["spec"]["csi"]["driver"] == DRIVER and pv["spec"]["capacity"] == {"storage": "1Gi"}
    assert ("ProvisioningSucceeded", f"Successfully provisioned volume {pv['metadata']['name']}") \
        in events(c, "PersistentVolumeClaim")
    c.client.delete("persistentvolumeclaims", "data")
    c.clock.run(until=20)  # Released with policy Delete: the driver deletes it
    assert c.client.list("persistentvolumes", "")["items"] == []


def test_a_resize_waits_for_the_node_then_the_kubelet_finishes_it() -> None:
    c = cluster(True)
    volume = claim(c)["spec"]["volumeName"]
    grow(c, "3Gi")
    c.clock.run(until=31)
    status = claim(c)["status"]
    # the controller half is done: the volume is 3Gi, the claim still says 1Gi
    assert status["capacity"] == {"storage": "1Gi"}
    assert status["allocatedResources"] == {"storage": "3Gi"}
    assert status["allocatedResourceStatuses"] == {"storage": "NodeResizePending"}
    assert [(x["type"], x["status"], x.get("message")) for x in status["conditions"]] == \
        [("FileSystemResizePending", "True", FS_RESIZE_PENDING_MESSAGE)]
    pv = c.client.get("persistentvolumes", volume, "")
    assert pv["spec"]["capacity"] == {"storage": "3Gi"}
    assert pv["metadata"]["annotations"]["volume.alpha.kubernetes.io/pre-resize-capacity"] == "1Gi"
    assert events(c, "PersistentVolumeClaim")[-2:] == [
        ("Resizing", f"External resizer is resizing volume {volume}"),
        ("FileSystemResizeRequired", "Require file system resize of volume on node")]
    assert "3Gi" not in c.kubectl("get pvc data")  # CAPACITY is status.capacity
    described = c.kubectl("describe pvc data")
    lines = described.split("Conditions:\n")[1].splitlines()
    assert lines[0].split() == ["Type", "Status", "LastProbeTime", "LastTransitionTime", "Reason",
                                "Message"]
    assert lines[2].split()[:3] == ["FileSystemResizePending", "True", "Mon,"]  # no probe: Go's zero
    assert lines[2].rstrip().endswith(FS_RESIZE_PENDING_MESSAGE)
    c.clock.run(until=100)  # the pod's next sync (every minute) grows the file system
    status = claim(c)["status"]
    assert status["capacity"] == {"storage": "3Gi"}
    assert "conditions" not in status and "allocatedResourceStatuses" not in status
    assert events(c, "Pod")[-1] == ("FileSystemResizeSuccessful",
                                    f'MountVolume.NodeExpandVolume succeeded for volume "{volume}" node-1')
    assert "3Gi" in c.kubectl("get pvc data")


def test_without_a_pod_the_claim_waits_for_one() -> None:
    c = cluster(False)
    grow(c, "2Gi")
    c.clock.run(until=200)
    status = claim(c)["status"]
    assert status["capacity"] == {"storage": "1Gi"}
    assert status["conditions"][0]["type"] == "FileSystemResizePending"
    c.apply(POD)
    c.clock.run(until=300)
    assert claim(c)["status"]["capacity"] == {"storage": "2Gi"}
