"""The kubelet as the node's agent: registration, heartbeats, RBAC, static pods, and the data
plane that keeps running when the control plane (or the kubelet, or the network) is away."""

from __future__ import annotations

import pytest

from kubelab.api.errors import ApiError
from kubelab.api.meta import parse_time
from kubelab.cluster import Cluster
from tests.kubelet_helpers import events, kubelet_cluster, pod, status_of, waiting_reason


def test_the_kubelet_registers_its_node_and_reports_it_ready() -> None:
    manifest = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": "edge-1", "labels": {"disk": "ssd"}},
                "spec": {"taints": [{"key": "edge", "value": "true", "effect": "NoSchedule"}]},
                "status": {"capacity": {"cpu": "2", "memory": "4Gi", "pods": "30"}}}
    c = Cluster(nodes=[manifest], components=["kubelet"])
    c.run(1)
    node = c.get("nodes", "edge-1")
    assert node["metadata"]["labels"] == {"kubernetes.io/hostname": "edge-1", "kubernetes.io/os": "linux",
                                          "kubernetes.io/arch": "amd64", "disk": "ssd"}
    assert node["spec"]["taints"] == manifest["spec"]["taints"]
    assert node["spec"]["podCIDR"] == "10.244.1.0/24"
    assert node["status"]["allocatable"] == {"cpu": "2", "memory": "4Gi", "pods": "30"}
    assert {"type": "InternalIP", "address": "172.18.0.2"} in node["status"]["addresses"]
    ready = next(x for x in node["status"]["conditions"] if x["type"] == "Ready")
    assert (ready["status"], ready["reason"], ready["message"]) == \
        ("True", "KubeletReady", "kubelet is posting ready status")
    assert [e["reason"] for e in c.events()] == ["Starting", "NodeHasSufficientMemory",
                                                  "NodeHasNoDiskPressure", "NodeHasSufficientPID",
                                                  "NodeReady"]
    assert "Ready" in c.kubectl("get nodes")


def test_the_lease_is_renewed_every_10s_and_node_status_posted_every_5_minutes() -> None:
    c = kubelet_cluster(warm=0)
    c.run(700)
    lease = c.get("leases", "node-1", namespace="kube-node-lease")
    assert lease["spec"]["holderIdentity"] == "node-1"
    assert lease["spec"]["leaseDurationSeconds"] == 40
    assert lease["metadata"]["ownerReferences"][0]["uid"] == c.get("nodes", "node-1")["metadata"]["uid"]
    assert parse_time(lease["spec"]["renewTime"]) == 700
    writes = [a.time for a in c.apiserver.audit if a.resource == "leases" and a.verb in ("create", "update")]
    assert writes == [10.0 * i for i in range(71)]
    statuses = [a.time for a in c.apiserver.audit if a.resource == "nodes" and a.subresource == "status"]
    assert statuses == [0.0, 300.0, 600.0]   # nothing changed: the Lease is the heartbeat


def test_a_condition_someone_else_changed_is_posted_again_at_the_next_check() -> None:
    """tryUpdateNodeStatus looks at the Node as the API has it every 10 s, not only every 5 min."""
    c = kubelet_cluster(warm=0)
    c.run(35)
    c.client.patch("nodes", "node-1", {"status": {"conditions": [
        {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
         "message": "Kubelet stopped posting node status."}]}}, "", subresource="status")
    c.run(10)
    ready = next(x for x in c.get("nodes", "node-1")["status"]["conditions"] if x["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("True", "KubeletReady")
    statuses = [a.time for a in c.apiserver.audit if a.resource == "nodes" and a.subresource == "status"
                and a.user == "system:node:node-1"]
    assert statuses == [0.0, 40.0]


def test_a_pod_status_someone_else_changed_is_written_back_within_10s() -> None:
    """syncBatch: the node lifecycle controller marks pods not Ready while a node is silent;
    a kubelet that was fine all along puts its own view back at the next batch."""
    c = kubelet_cluster()
    c.apply(pod("web"))
    c.run(60)
    assert c.get("pods", "web")["status"]["phase"] == "Running"
    c.client.patch("pods", "web", {"status": {"conditions": [
        {"type": "Ready", "status": "False", "reason": "NodeNotReady"}]}}, "default",
        subresource="status")
    c.run(10)
    ready = next(x for x in c.get("pods", "web")["status"]["conditions"] if x["type"] == "Ready")
    assert ready["status"] == "True"


def test_node_restriction_keeps_a_kubelet_to_its_own_objects() -> None:
    c = kubelet_cluster(nodes=2)
    c.apply(pod("other", node="node-2"))
    c.run(5)
    kubelet = c.components["kubelet/node-1"].client
    with pytest.raises(ApiError) as err:
        kubelet.patch("nodes", "node-2", {"status": {"conditions": []}}, "", subresource="status")
    assert err.value.code == 403
    assert 'node "node-1" is not allowed to modify node "node-2"' in err.value.message
    with pytest.raises(ApiError) as err:
        kubelet.patch("pods", "other", {"status": {"phase": "Failed"}}, subresource="status")
    assert 'node "node-1" can only update pod status for pods with spec.nodeName set to itself' \
        in err.value.message
    with pytest.raises(ApiError) as err:
        kubelet.update(c.get("leases", "node-2", namespace="kube-node-lease"))
    assert "can only access node lease with the same name as the requesting node" in err.value.message
    assert c.get("pods", "other")["status"]["phase"] == "Running"


STATIC = """apiVersion: v1
kind: Pod
metadata: {name: etcd, namespace: kube-system}
spec:
  containers: [{name: etcd, image: "registry.k8s.io/etcd:3.5.15-0"}]
"""


def test_static_pods_run_without_the_api_server_and_are_mirrored() -> None:
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "cp-1", "annotations": {"kubelab.dev/static-pods": STATIC}}}
    c = Cluster(nodes=[node], components=["kubelet"])
    c.faults.crash("apiserver")
    c.faults.crash("kubelet/cp-1")
    c.faults.restart("kubelet/cp-1")  # a kubelet that starts while the API server is down
    c.run(10)
    assert [x.name for x in c.runtimes["cp-1"].running()] == ["etcd"]   # it runs anyway
    c.faults.restart("apiserver")
    c.run(30)
    mirror = c.get("pods", "etcd-cp-1", namespace="kube-system")
    annotations = mirror["metadata"]["annotations"]
    assert annotations["kubernetes.io/config.mirror"] == annotations["kubernetes.io/config.hash"]
    assert annotations["kubernetes.io/config.source"] == "file"
    assert mirror["metadata"]["ownerReferences"][0]["kind"] == "Node"
    assert {"operator": "Exists", "effect": "NoExecute"} in mirror["spec"]["tolerations"]
    assert mirror["status"]["phase"] == "Running"
    # Deleting the mirror pod does not stop the static pod; the kubelet makes a new mirror.
    c.client.delete("pods", "etcd-cp-1", "kube-system")
    c.run(15)
    again = c.get("pods", "etcd-cp-1", namespace="kube-system")
    assert again["metadata"]["uid"] != mirror["metadata"]["uid"]
    assert len(c.trace.filter(component="runtime/cp-1", verb="start")) == 1
    assert again["status"]["phase"] == "Running"


def test_static_pod_manifests_are_checked() -> None:
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "cp-1", "annotations": {"kubelab.dev/static-pods": "kind: Pod\n"}}}
    with pytest.raises(ValueError, match="apiVersion not set"):
        Cluster(nodes=[node], components=["kubelet"])


def test_a_kubelet_restart_finds_the_running_containers_and_cleans_up_what_was_deleted() -> None:
    c = kubelet_cluster()
    c.apply(pod("keep"))
    c.apply(pod("gone"))
    c.run(10)
    c.faults.crash("kubelet/node-1")
    c.client.delete("pods", "gone", grace_period_seconds=0)   # force-deleted while nobody watches
    c.run(60)
    assert sorted(x.pod_uid for x in c.runtimes["node-1"].running()) != []
    assert len(c.runtimes["node-1"].running()) == 2            # nobody stops them
    c.faults.restart("kubelet/node-1")
    c.run(10)
    assert len(c.runtimes["node-1"].running()) == 1            # housekeeping stopped the orphan
    assert status_of(c, "keep")["restartCount"] == 0
    assert len(c.trace.filter(component="runtime/node-1", verb="start")) == 2  # no restart


def test_the_data_plane_survives_the_control_plane_and_the_kubelet_catches_up() -> None:
    c = kubelet_cluster()
    c.apply(pod("web"))
    c.apply(pod("crashy", behavior="exit=20,code=1"))
    c.run(10)
    c.faults.crash("apiserver")
    c.run(300)
    runtime = c.runtimes["node-1"]
    assert any(x.name == "app" for x in runtime.running())          # web still serves
    crash_restarts = len(c.trace.filter(component="runtime/node-1", verb="start")) - 2
    assert crash_restarts >= 3                                       # restarts go on without the API
    c.faults.restart("apiserver")
    c.run(40)
    assert status_of(c, "crashy")["restartCount"] >= crash_restarts
    assert c.get("pods", "web")["status"]["phase"] == "Running"
    lease = c.get("leases", "node-1", namespace="kube-node-lease")
    assert parse_time(lease["spec"]["renewTime"]) >= c.clock.now - 10


def test_a_partitioned_node_keeps_running_unheard_and_reports_in_when_healed() -> None:
    c = kubelet_cluster(nodes=2)
    c.apply(pod("web"))
    c.run(10)
    renewed = parse_time(c.get("leases", "node-1", namespace="kube-node-lease")["spec"]["renewTime"])
    c.faults.partition("node-1")
    c.faults.crash_container("web")
    c.run(120)
    assert len(c.runtimes["node-1"].running()) == 1                 # restarted locally
    assert parse_time(c.get("leases", "node-1", namespace="kube-node-lease")["spec"]["renewTime"]) == renewed
    assert status_of(c, "web")["restartCount"] == 0                 # the API has not heard
    assert parse_time(c.get("leases", "node-2", namespace="kube-node-lease")["spec"]["renewTime"]) > renewed
    c.faults.heal("node-1")
    c.run(40)
    assert status_of(c, "web")["restartCount"] == 1
    lease = c.get("leases", "node-1", namespace="kube-node-lease")
    assert parse_time(lease["spec"]["renewTime"]) > renewed + 100


def test_kill_and_revive_a_node() -> None:
    c = kubelet_cluster()
    c.apply(pod("web"))
    c.run(10)
    c.faults.kill_node("node-1")
    assert "kubelet/node-1" not in c.components and not c.runtimes["node-1"].running()
    c.run(60)
    c.faults.revive_node("node-1")
    c.run(10)
    cs = status_of(c, "web")
    assert cs["restartCount"] == 1 and "running" in cs["state"]
    assert cs["lastState"]["terminated"]["exitCode"] == 255    # what containerd says after a reboot
    assert cs["lastState"]["terminated"]["reason"] == "Unknown"
    assert [e["message"] for e in events(c, "web", "SandboxChanged")] == \
        ["Pod sandbox changed, it will be killed and re-created."]
    with pytest.raises(ValueError, match='nodes "node-9" not found'):
        c.faults.kill_node("node-9")


def test_after_a_reboot_the_rerun_init_container_is_not_reported_as_running_again() -> None:
    """The new sandbox runs the init container again, but with restartPolicy OnFailure one
    that exited 0 stays terminated in the status (checkContainerStateTransition): the
    kubelet keeps its last status instead of sending one the API server would refuse."""
    c = kubelet_cluster()
    # (busybox's own `sh` would exit at once, before any status saw it running: it sleeps 1 s)
    c.apply(pod("web", policy="OnFailure", initContainers=[{"name": "init", "image": "busybox",
                                                            "command": ["sleep", "1"]}]))
    c.run(30)
    c.faults.kill_node("node-1")
    c.run(20)
    c.faults.revive_node("node-1")
    c.run(60)
    assert [(r.code, r.message) for r in c.apiserver.audit if r.code == 422] == []
    aborted = c.trace.filter(component="kubelet/node-1", verb="status-aborted")
    assert aborted and aborted[0].detail["container"] == "init"
    [init] = c.get("pods", "web")["status"]["initContainerStatuses"]
    assert "terminated" in init["state"] and "running" in status_of(c, "web")["state"]


def test_a_flaky_registry_fails_some_pulls_and_the_kubelet_gets_there() -> None:
    c = kubelet_cluster(seed=3)
    c.faults.break_registry(None, "flaky")
    for i in range(4):
        c.apply(pod(f"p{i}", image=f"example.com/app{i}:1"))
    c.run_until(lambda: all(c.get("pods", f"p{i}")["status"]["phase"] == "Running" for i in range(4)),
                timeout=600)
    failed = c.trace.filter(component="kubelet/node-1", verb="pull-failed")
    assert failed and all("503 Service Unavailable" in e["message"]
                          for e in c.events() if e["message"].startswith("Failed to pull"))
    assert waiting_reason(c, "p0") is None
