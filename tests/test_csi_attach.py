"""CSI attachment: VolumeAttachment and CSIDriver as the API serves them, the attach/detach
controller (pkg/controller/volume/attachdetach) with the simulated driver's external-attacher,
and the kubelet waiting for the attachment before it mounts."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError
from kubelab.controllers.volume.csi_hostpath import (
    ATTACHER_FINALIZER,
    CSI_HOSTPATH_DRIVER,
    CSI_HOSTPATH_STORAGE_CLASS,
    DRIVER,
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
  - {name: db, image: nginx, volumeMounts: [{name: data, mountPath: /data}]}
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: data}
"""


def cluster(driver: dict[str, Any] | None = CSI_HOSTPATH_DRIVER, *, attacher: bool = True) -> Cluster:
    c = Cluster(nodes=1)
    c.apply(CSI_HOSTPATH_STORAGE_CLASS)
    if driver is not None:
        c.apply(driver)
    if not attacher:
        c.components["controller-manager"]["csi-attacher"].stop()
    c.apply(CLAIM)
    c.clock.run(until=10)
    c.apply(POD)
    return c


def attachments(c: Cluster) -> list[dict[str, Any]]:
    return list(c.client.list("volumeattachments", "")["items"])


def test_a_pods_csi_volume_is_attached_before_it_is_mounted_and_detached_after() -> None:
    c = cluster()
    c.clock.run(until=30)
    volume_name = c.client.get("persistentvolumeclaims", "data")["spec"]["volumeName"]
    pv = c.client.get("persistentvolumes", volume_name, "")
    (va,) = attachments(c)
    expected = "csi-" + hashlib.sha256(
        f"{pv['spec']['csi']['volumeHandle']}{DRIVER}node-1".encode()).hexdigest()
    assert va["metadata"]["name"] == expected  # getAttachmentName
    assert va["spec"] == {"attacher": DRIVER, "nodeName": "node-1",
                          "source": {"persistentVolumeName": pv["metadata"]["name"]}}
    assert va["status"] == {"attached": True} and va["metadata"]["finalizers"] == [ATTACHER_FINALIZER]
    assert c.client.get("pods", "db")["status"]["phase"] == "Running"
    reasons = [(e["reason"], e["message"]) for e in c.client.list("events", "default")["items"]
               if e["involvedObject"]["name"] == "db"]
    assert ("SuccessfulAttachVolume",
            f'AttachVolume.Attach succeeded for volume "{pv["metadata"]["name"]}"') in reasons
    assert [r[0] for r in reasons].index("SuccessfulAttachVolume") < \
        [r[0] for r in reasons].index("Started")
    row = c.kubectl("get volumeattachments").splitlines()
    assert row[0].split() == ["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"]
    assert row[1].split()[:5] == [expected, DRIVER, pv["metadata"]["name"], "node-1", "true"]
    c.client.delete("pods", "db")
    c.clock.run(until=80)
    assert attachments(c) == []  # detached: the attacher's finalizer let it go


def test_without_an_attacher_the_pod_waits_with_the_volume_unattached() -> None:
    c = cluster(attacher=False)
    c.clock.run(until=200)
    (va,) = attachments(c)
    assert not (va.get("status") or {}).get("attached")
    pod = c.client.get("pods", "db")
    assert pod["status"]["phase"] == "Pending"
    assert "ContainerCreating" in c.kubectl("get pod db")
    failed = [e["message"] for e in c.client.list("events", "default")["items"]
              if e["reason"] == "FailedMount"]
    assert failed and failed[0] == ("Unable to attach or mount volumes: unmounted volumes=[data], "
                                    "unattached volumes=[data], failed to process volumes=[]: "
                                    "context deadline exceeded")


def test_a_driver_that_needs_no_attaching_gets_no_volume_attachment() -> None:
    c = cluster({**CSI_HOSTPATH_DRIVER, "spec": {"attachRequired": False}})
    c.clock.run(until=30)
    assert attachments(c) == []
    assert c.client.get("pods", "db")["status"]["phase"] == "Running"


def test_the_kinds_defaults_validation_and_columns() -> None:
    c = Cluster(nodes=1)
    c.apply({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "x.example.com"}})
    assert c.client.get("csidrivers", "x.example.com", "")["spec"] == {
        "attachRequired": True, "podInfoOnMount": False, "storageCapacity": False,
        "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": False,
        "seLinuxMount": False, "volumeLifecycleModes": ["Persistent"]}
    header, row = c.kubectl("get csidrivers").splitlines()
    assert header.split() == ["NAME", "ATTACHREQUIRED", "PODINFOONMOUNT", "STORAGECAPACITY",
                              "TOKENREQUESTS", "REQUIRESREPUBLISH", "MODES", "AGE"]
    assert row.split()[:7] == ["x.example.com", "true", "false", "false", "<unset>", "false", "Persistent"]
    with pytest.raises(ApiError) as err:
        c.client.patch("csidrivers", "x.example.com", {"spec": {"attachRequired": False}}, "")
    assert err.value.message == 'CSIDriver.storage.k8s.io "x.example.com" is invalid: ' \
        'spec.attachRequired: Invalid value: false: field is immutable'
    with pytest.raises(ApiError) as err:
        c.apply({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                 "metadata": {"name": "va"}, "spec": {"attacher": DRIVER, "nodeName": "node-1",
                                                      "source": {}}})
    assert err.value.message == 'VolumeAttachment.storage.k8s.io "va" is invalid: spec.source: ' \
        'Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName'
