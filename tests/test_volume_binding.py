"""Claims to volumes: the PV controller (pv_controller.go, the cases of binder_test.go and
provision_test.go that transcribe: smallest fitting volume, pre-bound volumes, no match,
external provisioning, WaitForFirstConsumer, reclaim Retain/Delete), the protection
finalizers, kind's local-path provisioner and the scheduler's VolumeBinding plugin."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab import Cluster
from kubelab.cluster.anatomy import STANDARD_STORAGE_CLASS
from kubelab.controllers.volume.util import find_matching_volume


def pvc(name: str = "data", size: str = "1Gi", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}},
                     **spec}}


def pv(name: str, size: str, node: str = "", **spec: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
                           "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
                                    "storageClassName": "", "hostPath": {"path": f"/mnt/{name}"},
                                    **spec}}
    if node:
        obj["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}
    return obj


def pod(name: str, *claims: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.27",
                                     "volumeMounts": [{"name": c, "mountPath": f"/{c}"} for c in claims]}],
                     "volumes": [{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims]}}


def get(c: Cluster, resource: str, name: str) -> dict[str, Any]:
    return c.client.get(resource, name, "default")


def events(c: Cluster, name: str) -> list[tuple[str, str, str]]:
    return [(e["type"], e["reason"], e["message"]) for e in c.client.list("events", "default")["items"]
            if e["involvedObject"]["name"] == name]


def _volumes(*specs: tuple[str, str, str]) -> list[dict[str, Any]]:
    out = []
    for name, size, phase in specs:
        v = pv(name, size)
        v["status"] = {"phase": phase}
        out.append(v)
    return out


@pytest.mark.parametrize(("volumes", "claim", "expected"), [
    # binder_test.go / index_test.go: the smallest volume that is big enough wins
    (_volumes(("small", "1Gi", "Available"), ("big", "10Gi", "Available"),
              ("mid", "5Gi", "Available")), pvc(size="2Gi", storageClassName=""), "mid"),
    (_volumes(("small", "1Gi", "Available")), pvc(size="2Gi", storageClassName=""), None),
    # a volume already Bound, or of another class, is not offered
    (_volumes(("used", "5Gi", "Bound")), pvc(storageClassName=""), None),
    ([{**pv("gold", "5Gi", storageClassName="gold"), "status": {"phase": "Available"}}],
     pvc(storageClassName=""), None),
    # access modes must all be offered
    (_volumes(("rwo", "5Gi", "Available")),
     pvc(storageClassName="", accessModes=["ReadWriteMany"]), None),
])
def test_find_matching_volume(volumes: list[dict[str, Any]], claim: dict[str, Any],
                              expected: str | None) -> None:
    claim["metadata"]["uid"] = "uid-1"
    found = find_matching_volume(claim, volumes)
    assert (found["metadata"]["name"] if found else None) == expected


def test_a_volume_pre_bound_to_the_claim_wins_even_when_bigger() -> None:
    claim = pvc(storageClassName="")
    claim["metadata"]["uid"] = "uid-1"
    volumes = _volumes(("fits", "1Gi", "Available"), ("mine", "50Gi", "Available"))
    volumes[1]["spec"]["claimRef"] = {"namespace": "default", "name": "data"}
    assert find_matching_volume(claim, volumes)["metadata"]["name"] == "mine"
    # with delayed binding only the pre-bound one is the controller's to bind
    assert find_matching_volume(claim, volumes[:1], delay_binding=True) is None


def test_static_binding_both_ways_and_retain_on_release() -> None:
    c = Cluster(nodes=1, seed=1)
    c.client.create(pv("pv-1g", "1Gi"))
    c.client.create(pv("pv-5g", "5Gi"))
    c.client.create(pvc(size="2Gi", storageClassName=""))
    c.run(5)
    claim, volume = get(c, "persistentvolumeclaims", "data"), get(c, "persistentvolumes", "pv-5g")
    assert claim["spec"]["volumeName"] == "pv-5g" and claim["status"]["phase"] == "Bound"
    assert claim["status"]["capacity"] == {"storage": "5Gi"}
    assert claim["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
    assert claim["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    assert volume["spec"]["claimRef"]["uid"] == claim["metadata"]["uid"]
    assert volume["status"]["phase"] == "Bound"
    assert get(c, "persistentvolumes", "pv-1g")["status"]["phase"] == "Available"
    c.client.delete("persistentvolumeclaims", "data", "default")
    c.run(5)
    released = get(c, "persistentvolumes", "pv-5g")  # Retain: kept, Released, claimRef kept
    assert released["status"]["phase"] == "Released"
    assert released["spec"]["claimRef"]["name"] == "data"


def test_no_volume_and_no_class_waits_with_failed_binding() -> None:
    c = Cluster(nodes=1, seed=1)
    c.client.create(pvc(storageClassName=""))
    c.run(3)
    assert get(c, "persistentvolumeclaims", "data")["status"]["phase"] == "Pending"
    assert ("Normal", "FailedBinding", "no persistent volumes available for this claim and no "
            "storage class is set") in events(c, "data")
    c.client.create(pv("late", "1Gi"))  # a volume that appears later is bound at the resync
    c.run(16)
    assert get(c, "persistentvolumeclaims", "data")["spec"]["volumeName"] == "late"


def test_delete_policy_of_a_static_volume_fails_without_a_deleter() -> None:
    c = Cluster(nodes=1, seed=1)
    c.client.create(pv("scratch", "1Gi", persistentVolumeReclaimPolicy="Delete"))
    c.client.create(pvc(storageClassName=""))
    c.run(3)
    c.client.delete("persistentvolumeclaims", "data", "default")
    c.run(3)
    assert get(c, "persistentvolumes", "scratch")["status"]["phase"] == "Failed"
    assert ("Warning", "VolumeFailedDelete", 'error getting deleter volume plugin for volume '
            '"scratch": no deletable volume plugin matched') in events(c, "scratch")


def test_wait_for_first_consumer_then_provisioned_on_the_pods_node() -> None:
    c = Cluster(nodes=2, seed=2)
    # kind ships its default class `standard` (local-path-provisioner); the claim gets it
    assert c.client.get("storageclasses", "standard")["provisioner"] == STANDARD_STORAGE_CLASS["provisioner"]
    c.client.create(pvc())
    c.run(3)
    claim = get(c, "persistentvolumeclaims", "data")
    assert claim["status"]["phase"] == "Pending" and claim["spec"]["storageClassName"] == "standard"
    assert ("Normal", "WaitForFirstConsumer",
            "waiting for first consumer to be created before binding") in events(c, "data")
    c.client.create(pod("web", "data"))
    c.run(20)
    web, claim = get(c, "pods", "web"), get(c, "persistentvolumeclaims", "data")
    node = web["spec"]["nodeName"]
    assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == node
    assert claim["status"]["phase"] == "Bound" and web["status"]["phase"] == "Running"
    volume = get(c, "persistentvolumes", claim["spec"]["volumeName"])
    assert volume["metadata"]["name"] == f"pvc-{claim['metadata']['uid']}"
    assert volume["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"] == "rancher.io/local-path"
    assert volume["spec"]["persistentVolumeReclaimPolicy"] == "Delete"
    assert volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0][
        "values"] == [node]
    assert volume["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]
    # pvc-protection: the claim stays while the pod uses it
    c.client.delete("persistentvolumeclaims", "data", "default")
    c.run(3)
    assert get(c, "persistentvolumeclaims", "data")["metadata"].get("deletionTimestamp")
    assert "Terminating" in str(c.kubectl("get pvc data"))
    c.client.delete("pods", "web", "default")
    c.run(60)
    assert c.client.list("persistentvolumeclaims", "default")["items"] == []
    assert c.client.list("persistentvolumes")["items"] == []  # Delete: the provisioner removed it


def test_the_scheduler_follows_the_volumes_node_affinity() -> None:
    c = Cluster(nodes=2, seed=3)
    c.client.create(pv("local-2", "1Gi", node="node-2"))
    c.client.create(pvc(storageClassName=""))
    c.run(3)
    for i in range(3):
        c.client.create(pod(f"user-{i}", "data"))
    c.run(10)
    assert {get(c, "pods", f"user-{i}")["spec"]["nodeName"] for i in range(3)} == {"node-2"}


def test_unbound_immediate_and_missing_claims_keep_the_pod_pending() -> None:
    c = Cluster(nodes=1, seed=4)
    c.client.create({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                     "metadata": {"name": "manual"}, "provisioner": "kubernetes.io/no-provisioner"})
    c.client.create(pvc("waiting", storageClassName="manual"))
    c.client.create(pod("a", "waiting"))
    c.client.create(pod("b", "nowhere"))
    c.run(5)
    for name, reason in (("a", "pod has unbound immediate PersistentVolumeClaims"),
                         ("b", 'persistentvolumeclaim "nowhere" not found')):
        assert "nodeName" not in get(c, "pods", name)["spec"]
        messages = [m for t, r, m in events(c, name) if r == "FailedScheduling"]
        assert messages and reason in messages[-1], messages


def test_a_pod_waiting_on_its_claim_is_requeued_when_the_claim_binds() -> None:
    """volume_binding.go EventsToRegister: the claim's update requeues the pod at once; without
    it the pod would wait for the unschedulable pods' 5-minute flush."""
    c = Cluster(nodes=1, seed=5)
    c.client.create(pvc(storageClassName=""))
    c.client.create(pod("web", "data"))
    c.run(5)
    assert "nodeName" not in get(c, "pods", "web")["spec"]
    c.client.create(pv("late", "1Gi"))  # the PV controller binds it at its 15 s resync
    c.run(20)
    assert get(c, "persistentvolumeclaims", "data")["spec"]["volumeName"] == "late"
    assert get(c, "pods", "web")["spec"]["nodeName"] == "node-1"


@pytest.mark.parametrize(("pod_volumes", "claim", "expected"), [
    # volume_binding_test.go TestIsSchedulableAfterPersistentVolumeClaimChange
    ([{"name": "v", "persistentVolumeClaim": {"claimName": "pvc1"}}], ("ns1", "pvc1"), "Queue"),
    ([{"name": "v", "persistentVolumeClaim": {"claimName": "pvc1"}}], ("ns1", "pvc2"), "QueueSkip"),
    ([{"name": "v", "persistentVolumeClaim": {"claimName": "pvc1"}}], ("ns2", "pvc1"), "QueueSkip"),
    ([{"name": "v", "ephemeral": {"volumeClaimTemplate": {}}}], ("ns1", "pod1-v"), "Queue"),
    ([{"name": "v", "emptyDir": {}}], ("ns1", "pvc1"), "QueueSkip"),
])
def test_claim_change_hint(pod_volumes: list[dict[str, Any]], claim: tuple[str, str],
                           expected: str) -> None:
    from kubelab.scheduler.events import _volume_binding_after_claim_change
    waiting = {"metadata": {"name": "pod1", "namespace": "ns1"}, "spec": {"volumes": pod_volumes}}
    new = {"metadata": {"namespace": claim[0], "name": claim[1]}}
    assert _volume_binding_after_claim_change(waiting, None, new).value == expected


@pytest.mark.parametrize(("old", "new", "expected"), [
    # TestIsSchedulableAfterStorageClassChange
    (None, {"metadata": {"name": "sc"}}, "Queue"),
    ({"metadata": {"name": "sc"}}, {"metadata": {"name": "sc"}, "allowedTopologies": [
        {"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]}]}, "Queue"),
    ({"metadata": {"name": "sc"}}, {"metadata": {"name": "sc", "labels": {"a": "b"}}}, "QueueSkip"),
])
def test_storage_class_change_hint(old: Any, new: Any, expected: str) -> None:
    from kubelab.scheduler.events import _volume_binding_after_class_change
    assert _volume_binding_after_class_change({"metadata": {}}, old, new).value == expected
