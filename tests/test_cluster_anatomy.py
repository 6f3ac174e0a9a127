"""Cluster(anatomy=True): the cluster as kind builds it (kubelab/cluster/anatomy.py,
control_plane.py, kubelab/apiserver/controlplane.py). The control-plane node, the control plane
as static pods that tell the truth about the components, kube-proxy and kindnet on every node,
coredns answering the cluster's DNS, and the `kubernetes` Service kept by the API servers."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError
from kubelab.apiserver.controlplane import identity_lease_name

STATIC = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"]


@pytest.fixture(scope="module")
def kind() -> Cluster:
    c = Cluster(nodes=2, anatomy=True)
    c.run_until(lambda: _all_ready(c), timeout=120)
    return c


def _pods(c: Cluster, selector: str = "") -> list[dict[str, Any]]:
    return c.get("pods", namespace="kube-system", label_selector=selector)


def _ready(pod: dict[str, Any]) -> bool:
    return any(x.get("type") == "Ready" and x.get("status") == "True"
               for x in (pod.get("status") or {}).get("conditions") or [])


def _all_ready(c: Cluster) -> bool:
    """Every kube-system pod Ready, and the DaemonSets' status says so."""
    pods = _pods(c)
    return len(pods) == 4 + 2 * 3 + 2 and all(_ready(p) for p in pods) and \
        all((ds.get("status") or {}).get("numberAvailable") == 3
            for ds in c.get("daemonsets", namespace="kube-system"))


def _pod(c: Cluster, name: str) -> dict[str, Any]:
    return c.get("pods", name, namespace="kube-system")


def test_a_control_plane_node_beside_the_workers(kind: Cluster) -> None:
    assert kind.node_names == ["control-plane", "node-1", "node-2"]
    node = kind.get("nodes", "control-plane")
    assert node["metadata"]["labels"]["node-role.kubernetes.io/control-plane"] == ""
    assert {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"} in \
        node["spec"]["taints"]
    rows = [line.split() for line in kind.kubectl("get nodes").splitlines()[1:]]
    assert [row[:3] for row in rows] == [["control-plane", "Ready", "control-plane"],
                                         ["node-1", "Ready", "<none>"], ["node-2", "Ready", "<none>"]]


def test_the_control_plane_runs_as_static_pods_on_it(kind: Cluster) -> None:
    node_ip = kind.runtimes["control-plane"].node_ip
    for component in STATIC:
        pod = _pod(kind, f"{component}-control-plane")
        meta, spec = pod["metadata"], pod["spec"]
        assert meta["labels"] == {"component": component, "tier": "control-plane"}
        assert meta["annotations"]["kubernetes.io/config.source"] == "file"
        assert meta["annotations"]["kubernetes.io/config.mirror"]  # a mirror pod
        assert meta["ownerReferences"][0]["kind"] == "Node"
        assert spec["nodeName"] == "control-plane" and spec["hostNetwork"] is True
        assert (spec["priorityClassName"], spec["priority"]) == ("system-node-critical", 2000001000)
        assert pod["status"]["podIP"] == node_ip and _ready(pod)
    assert {pc["metadata"]["name"]: pc["value"] for pc in kind.get("priorityclasses")} == {
        "system-node-critical": 2000001000, "system-cluster-critical": 2000000000}


def test_kube_proxy_and_kindnet_once_on_every_node_coredns_twice(kind: Cluster) -> None:
    for selector in ("k8s-app=kube-proxy", "app=kindnet"):
        pods = _pods(kind, selector)
        assert sorted(p["spec"]["nodeName"] for p in pods) == kind.node_names
        assert all(p["status"]["podIP"] == kind.runtimes[p["spec"]["nodeName"]].node_ip for p in pods)
    coredns = _pods(kind, "k8s-app=kube-dns")
    assert len(coredns) == 2 and all(p["spec"]["priority"] == 2000000000 for p in coredns)
    ds = kind.kubectl("get ds -n kube-system").splitlines()
    assert [row.split()[:6] for row in ds[1:]] == [["kindnet", "3", "3", "3", "3", "3"],
                                                   ["kube-proxy", "3", "3", "3", "3", "3"]]
    svc = kind.get("services", "kube-dns", namespace="kube-system")["spec"]
    assert svc["clusterIP"] == "10.96.0.10"
    assert [(p["name"], p["port"], p["protocol"]) for p in svc["ports"]] == [
        ("dns", 53, "UDP"), ("dns-tcp", 53, "TCP"), ("metrics", 9153, "TCP")]


def test_kube_proxy_runs_as_its_service_account(kind: Cluster) -> None:
    users = {r.user for r in kind.apiserver.audit if r.user_agent.startswith("kube-proxy/")}
    assert users == {"system:serviceaccount:kube-system:kube-proxy"}
    assert all(r.code < 400 for r in kind.apiserver.audit if r.user_agent.startswith("kube-proxy/"))


def test_the_kubernetes_service_follows_the_api_servers(kind: Cluster) -> None:
    svc = kind.get("services", "kubernetes")["spec"]
    assert svc["clusterIP"] == "10.96.0.1" and svc["ports"][0]["port"] == 443
    eps = kind.get("endpointslices", "kubernetes")
    assert [e["addresses"] for e in eps["endpoints"]] == [[kind.runtimes["control-plane"].node_ip]]
    assert eps["ports"] == [{"name": "https", "port": 6443, "protocol": "TCP"}]
    # --- endpoints --- and the deprecated core/v1 Endpoints the reconciler writes first
    ep = kind.get("endpoints", "kubernetes")
    assert ep["metadata"]["labels"] == {"endpointslice.kubernetes.io/skip-mirror": "true"}
    assert ep["subsets"] == [{"addresses": [{"ip": kind.runtimes["control-plane"].node_ip}],
                              "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}]
    lease = kind.get("leases", identity_lease_name("control-plane"), namespace="kube-system")
    assert lease["metadata"]["labels"]["apiserver.kubernetes.io/identity"] == "kube-apiserver"


def test_a_crashed_scheduler_shows_as_a_crashing_pod_until_restarted() -> None:
    c = Cluster(nodes=1, anatomy=True)
    c.run_until(lambda: _ready(_pod(c, "kube-scheduler-control-plane")), timeout=60)
    c.faults.crash("scheduler")
    c.run(25)
    pod = _pod(c, "kube-scheduler-control-plane")
    status = pod["status"]["containerStatuses"][0]
    assert not _ready(pod) and status["restartCount"] >= 1
    assert status["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    restarts = status["restartCount"]
    c.faults.restart("scheduler")
    c.run_until(lambda: _ready(_pod(c, "kube-scheduler-control-plane")), timeout=120)
    status = _pod(c, "kube-scheduler-control-plane")["status"]["containerStatuses"][0]
    assert "running" in status["state"] and status["restartCount"] == restarts + 1
    # The other control-plane pods never noticed.
    assert _pod(c, "kube-controller-manager-control-plane")["status"]["containerStatuses"][0][
        "restartCount"] == 0


def test_with_the_api_server_down_nothing_can_be_listed_but_the_containers_run() -> None:
    c = Cluster(nodes=1, anatomy=True)
    c.run_until(lambda: _all_ready_n(c, 2), timeout=60)
    c.faults.crash("apiserver")
    with pytest.raises(ApiError) as err:
        c.get("pods", namespace="kube-system")
    assert "connection refused" in err.value.message  # as kubectl says with no API server
    # crictl ps on the node: the static pods' containers, the API server's exited.
    running = {x.name for x in c.runtimes["control-plane"].running()}
    assert {"etcd", "kube-controller-manager", "kube-scheduler"} <= running
    assert "kube-apiserver" not in running
    c.faults.restart("apiserver")
    c.run_until(lambda: _ready(_pod(c, "kube-apiserver-control-plane")), timeout=120)


def _all_ready_n(c: Cluster, nodes: int) -> bool:
    pods = _pods(c)
    return len(pods) == 4 + 2 * nodes + 2 and all(_ready(p) for p in pods)


def test_name_resolution_needs_a_ready_coredns_pod() -> None:
    c = Cluster(nodes=2, anatomy=True)
    c.run_until(lambda: _all_ready(c), timeout=120)
    assert c.resolve("kubernetes").addresses == ["10.96.0.1"]
    for pod in _pods(c, "k8s-app=kube-dns"):
        c.client.delete("pods", pod["metadata"]["name"], "kube-system", grace_period_seconds=0)
    c.run(0.5)
    answer = c.resolve("kubernetes")
    assert not answer.found and str(answer) == ";; connection timed out; no servers could be reached"
    c.run_until(lambda: c.resolve("kubernetes").found, timeout=60)  # the Deployment brings them back


def test_ha_control_plane_nodes_and_the_endpoints_of_live_api_servers() -> None:
    c = Cluster(nodes=1, anatomy=True, replicas={"apiserver": 3, "scheduler": 2})
    c.run(20)
    assert c.node_names == ["control-plane", "control-plane2", "control-plane3", "node-1"]
    names = {p["metadata"]["name"] for p in _pods(c, "tier=control-plane")}
    assert names == {"etcd-control-plane", "kube-controller-manager-control-plane",
                     *(f"kube-apiserver-control-plane{s}" for s in ("", "2", "3")),
                     "kube-scheduler-control-plane", "kube-scheduler-control-plane2"}
    ips = [c.runtimes[n].node_ip for n in c.node_names[:3]]

    def endpoints() -> list[str]:
        return [e["addresses"][0] for e in c.get("endpointslices", "kubernetes")["endpoints"]]

    def core_endpoints() -> list[str]:  # --- endpoints ---
        return [a["ip"] for s in c.get("endpoints", "kubernetes").get("subsets") or []
                for a in s["addresses"]]
    assert endpoints() == sorted(ips) == core_endpoints()
    c.faults.crash("apiserver-2")
    c.run_until(lambda: endpoints() == sorted([ips[0], ips[2]]), timeout=40)
    assert core_endpoints() == sorted([ips[0], ips[2]])
    c.faults.restart("apiserver-2")
    c.run_until(lambda: endpoints() == sorted(ips), timeout=40)


def test_anatomy_is_deterministic() -> None:
    def run() -> list[str]:
        c = Cluster(nodes=2, anatomy=True, seed=7)
        c.run(30)
        return [f"{r.time:.3f} {r.user} {r.verb} {r.object} {r.code}" for r in c.apiserver.audit]
    assert run() == run()


def test_anatomy_is_refused_unless_a_bool() -> None:
    with pytest.raises(TypeError, match="anatomy must be True, False or None"):
        Cluster(nodes=1, anatomy="yes")  # type: ignore[arg-type]


def test_priority_and_fairness_classifies_kube_proxy_as_a_kube_system_service_account() -> None:
    c = Cluster(nodes=1, anatomy=True, apf=True)
    c.run(10)
    schemas = {r.flow_schema for r in c.apiserver.audit if r.user_agent.startswith("kube-proxy/")}
    assert schemas == {"kube-system-service-accounts"}  # upstream's bootstrap FlowSchema: workload-high
