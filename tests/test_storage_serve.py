"""Storage through `kubelab serve`, judged by the real kubectl and the official Python client:
kind's default class, a claim provisioned for its first consumer, upstream's columns and
describe output."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from serve_helpers import Served, serving

kubernetes = pytest.importorskip("kubernetes")

MANIFEST = """
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: db}
spec:
  containers:
  - name: db
    image: postgres:16
    volumeMounts: [{name: data, mountPath: /var/lib/postgresql/data}]
  volumes:
  - {name: data, persistentVolumeClaim: {claimName: data}}
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serving(tmp_path_factory.mktemp("serve"), "--nodes", "1", "--speed", "10")


def _rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()]


def test_kubectl_gets_and_describes_storage(served: Served) -> None:
    resources = _rows(served.kubectl("api-resources", "--no-headers").stdout)
    by_name = {r[0]: r for r in resources}
    assert by_name["persistentvolumeclaims"][1:4] == ["pvc", "v1", "true"]
    assert by_name["persistentvolumes"][1:4] == ["pv", "v1", "false"]
    assert by_name["storageclasses"][1:4] == ["sc", "storage.k8s.io/v1", "false"]
    sc = served.kubectl("get", "sc").stdout.splitlines()
    assert sc[0].split() == ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE",
                             "ALLOWVOLUMEEXPANSION", "AGE"]
    assert sc[1].split()[:6] == ["standard", "(default)", "rancher.io/local-path", "Delete",
                                 "WaitForFirstConsumer", "false"]
    served.kubectl("apply", "-f", "-", stdin=MANIFEST)
    served.kubectl("wait", "--for=jsonpath={.status.phase}=Bound", "pvc/data", "--timeout=60s",
                   timeout=90)
    out = served.kubectl("get", "pv,pvc").stdout
    lines = [" ".join(line.split()) for line in out.splitlines() if line.strip()]
    assert lines[0] == ("NAME CAPACITY ACCESS MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS "
                        "VOLUMEATTRIBUTESCLASS REASON AGE")
    assert lines[1].startswith("persistentvolume/pvc-")
    assert lines[1].split()[1:7] == ["1Gi", "RWO", "Delete", "Bound", "default/data", "standard"]
    assert lines[2] == "NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE"
    assert lines[3].split()[:2] == ["persistentvolumeclaim/data", "Bound"]
    described = served.kubectl("describe", "pvc", "data").stdout
    assert "StorageClass:  standard" in described and "Used By:       db" in described
    assert "volume.kubernetes.io/selected-node:" in described
    assert "Finalizers:    [kubernetes.io/pvc-protection]" in described


def test_the_official_client_reads_claims_and_classes(served: Served) -> None:
    api: Any = kubernetes.config.new_client_from_config(config_file=str(served.kubeconfig))
    classes = kubernetes.client.StorageV1Api(api).list_storage_class().items
    assert [(c.metadata.name, c.volume_binding_mode) for c in classes] == [
        ("standard", "WaitForFirstConsumer")]
    core = kubernetes.client.CoreV1Api(api)
    claim = core.create_namespaced_persistent_volume_claim("default", {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "typed"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2Gi"}}}})
    assert claim.spec.storage_class_name == "standard" and claim.status.phase == "Pending"
    with pytest.raises(kubernetes.client.ApiException) as err:
        core.create_persistent_volume({"apiVersion": "v1", "kind": "PersistentVolume",
                                       "metadata": {"name": "bad"},
                                       "spec": {"capacity": {"storage": "1Gi"}}})
    assert err.value.status == 422 and "spec.accessModes: Required value" in err.value.body


def test_kubectl_gets_the_networking_kinds(served: Served) -> None:
    rows = {r[0]: r for r in _rows(served.kubectl("api-resources", "--no-headers").stdout)}
    assert rows["ingresses"][1:5] == ["ing", "networking.k8s.io/v1", "true", "Ingress"]
    assert rows["networkpolicies"][1:5] == ["netpol", "networking.k8s.io/v1", "true", "NetworkPolicy"]
    served.kubectl("apply", "-f", "-", stdin="""
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-all}
spec: {podSelector: {}}
""")
    out = served.kubectl("get", "ingress,networkpolicies", "-A").stdout.splitlines()
    assert out[0].split() == ["NAMESPACE", "NAME", "POD-SELECTOR", "AGE"]
    assert out[1].split()[:3] == ["default", "networkpolicy.networking.k8s.io/deny-all", "<none>"]


# --- hpacsi ---
CSI = """
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: hostpath.csi.k8s.io}
spec: {attachRequired: true, podInfoOnMount: true}
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: csi-example}
spec: {attacher: hostpath.csi.k8s.io, nodeName: node-1, source: {persistentVolumeName: pv-example}}
"""


def test_kubectl_gets_volume_attachments_and_csi_drivers(served: Served) -> None:
    by_name = {r[0]: r for r in _rows(served.kubectl("api-resources", "--no-headers").stdout)}
    assert by_name["volumeattachments"][1:3] == ["storage.k8s.io/v1", "false"]
    assert by_name["csidrivers"][1:3] == ["storage.k8s.io/v1", "false"]
    served.kubectl("apply", "-f", "-", stdin=CSI)
    va = _rows(served.kubectl("get", "volumeattachments").stdout)
    assert va[0] == ["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"]
    assert va[1][:5] == ["csi-example", "hostpath.csi.k8s.io", "pv-example", "node-1", "false"]
    drivers = _rows(served.kubectl("get", "csidrivers").stdout)
    assert drivers[0][:7] == ["NAME", "ATTACHREQUIRED", "PODINFOONMOUNT", "STORAGECAPACITY",
                              "TOKENREQUESTS", "REQUIRESREPUBLISH", "MODES"]
    assert drivers[1][:7] == ["hostpath.csi.k8s.io", "true", "true", "false", "<unset>", "false",
                              "Persistent"]
