"""kindnet's NetworkPolicy enforcement on notebook 09's data path: c.route names the policy
that dropped a packet, a pod's wget times out as busybox's does, the traffic generator counts
the drops, and a policy deleted lets traffic through again (kubelab/proxy/networkpolicy/)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kubelab import Cluster
from kubelab.serve.server import kubectl_binary


def web() -> list[dict[str, Any]]:
    return [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
             "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                      "template": {"metadata": {"labels": {"app": "web"}},
                                   "spec": {"containers": [{
                                       "name": "web", "image": "nginx:1.27",
                                       "ports": [{"containerPort": 80, "name": "http"}]}]}}}},
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
             "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "http"}]}}]


def client(name: str, role: str, namespace: str = "default") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": {"role": role}},
            "spec": {"containers": [{"name": "c", "image": "busybox:1.36",
                                     "command": ["sleep", "3600"]}]}}


def policy(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": name}, "spec": spec}


DENY = policy("default-deny-ingress", podSelector={})
ALLOW_FRONTEND = policy("allow-frontend", podSelector={"matchLabels": {"app": "web"}},
                        ingress=[{"from": [{"podSelector": {"matchLabels": {"role": "frontend"}}}],
                                  "ports": [{"port": "http"}]}])


@pytest.fixture(scope="module")
def c() -> Cluster:
    cluster = Cluster(nodes=2)
    cluster.apply({"apiVersion": "v1", "kind": "Namespace",
                   "metadata": {"name": "tools", "labels": {"team": "tools"}}})
    # The ServiceAccount admission plugin refuses a pod whose namespace has no `default`
    # account yet; the serviceaccount controller makes it a moment after the namespace (e2e's
    # framework waits for it the same way).
    cluster.run(1)
    for obj in [*web(), client("frontend", "frontend"), client("batch", "batch"),
                client("frontend", "frontend", "tools")]:
        cluster.apply(obj)
    cluster.run(30)
    return cluster


def test_no_policy_allows_all_and_asks_nothing(c: Cluster) -> None:
    r = c.route("web", from_pod="batch")
    assert r.ok and r.policy is None and "kindnet" not in str(r)


def test_default_deny_then_allow_from_frontend(c: Cluster) -> None:
    c.apply(DENY)
    c.run(1)
    r = c.route("web", from_pod="frontend")
    assert not r.ok and r.policy is not None and r.policy.direction == "Ingress"
    assert r.policy.policies == ("default/default-deny-ingress",)
    assert "kindnet: dropped by NetworkPolicy default/default-deny-ingress" in str(r)
    assert r.reason.startswith("timeout") and r.pod.startswith("default/web-")
    wget = c.kubectl("exec frontend -- wget -qO- http://web")
    assert "wget: download timed out" in str(wget)

    c.apply(ALLOW_FRONTEND)
    c.run(1)
    allowed = c.route("web", from_pod="frontend")
    assert allowed.ok and allowed.policy is not None and allowed.policy.allowed
    assert "Welcome to nginx" in str(c.kubectl("exec frontend -- wget -qO- http://web"))
    # role=batch, and role=frontend in another namespace (a podSelector alone is the policy's own)
    assert not c.route("web", from_pod="batch").ok
    assert not c.route("web.default", from_pod="frontend", namespace="tools").ok
    # from a node: no pod has its address, a podSelector never matches it
    assert not c.route("web", from_node="node-1").ok


def test_namespace_selector_and_ip_block(c: Cluster) -> None:
    c.apply(policy("allow-tools", podSelector={"matchLabels": {"app": "web"}},
                   ingress=[{"from": [{"namespaceSelector": {"matchLabels": {"team": "tools"}}}]}]))
    c.run(1)
    assert c.route("web.default", from_pod="frontend", namespace="tools").ok
    assert not c.route("web", from_pod="batch").ok
    node_ip = c.node("node-1").ip
    c.apply(policy("allow-node-1", podSelector={},
                   ingress=[{"from": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": [f"{node_ip}/32"]}}]}]))
    c.run(1)
    assert c.route("web", from_pod="batch").ok          # a pod address is in 0.0.0.0/0
    assert not c.route("web", from_node="node-1").ok     # the except
    for name in ("allow-tools", "allow-node-1"):
        c.kubectl(f"delete networkpolicy {name}")


def test_egress_default_deny_and_port_ranges(c: Cluster) -> None:
    c.apply(policy("batch-egress", podSelector={"matchLabels": {"role": "batch"}},
                   policyTypes=["Egress"],
                   egress=[{"ports": [{"port": 8000, "endPort": 9000}]}]))
    c.run(1)
    r = c.route("web", from_pod="batch")
    assert not r.ok and r.policy is not None and r.policy.direction == "Egress"
    assert r.policy.pod == "default/batch" and "egress from pod default/batch" in str(r)
    c.kubectl("delete networkpolicy batch-egress")


def test_traffic_counts_drops_and_deleting_the_policies_heals(c: Cluster) -> None:
    c.kubectl("delete networkpolicy default-deny-ingress")
    c.run(1)
    assert not c.route("web", from_pod="batch").ok       # allow-frontend still isolates web
    t = c.traffic("web", rate=10)
    c.run(5)
    c.kubectl("delete networkpolicy allow-frontend")
    c.run(5)
    t.stop()
    dropped = [r for r in t.results if not r.ok]
    assert dropped and all("NetworkPolicy default/allow-frontend" in r.reason for r in dropped)
    assert t.results[-1].ok and t.succeeded > 0
    assert max(r.time for r in dropped) < min(r.time for r in t.results if r.ok)
    assert c.route("web", from_pod="batch").policy is None


def test_with_the_api_down_kindnet_enforces_what_it_read_last(c: Cluster) -> None:
    c.apply(DENY)
    c.run(1)
    ip = c.get("services", "web")["spec"]["clusterIP"]
    assert not c.route(ip, from_pod="batch").ok          # read while the API answers
    c.faults.crash("apiserver")
    try:
        r = c.route(f"{ip}:80", from_node="node-1")
        assert not r.ok and r.policy is not None
        assert r.policy.policies == ("default/default-deny-ingress",)
    finally:
        c.faults.restart("apiserver")
        c.run(5)
    c.kubectl("delete networkpolicy default-deny-ingress")
    c.run(1)
    assert c.route(ip, from_pod="batch").ok

@pytest.mark.skipif(kubectl_binary() is None, reason="kubectl is not installed (make installs it)")
def test_describe_prints_what_the_real_kubectl_prints() -> None:
    """describe is kubectl's own printing (describeNetworkPolicy): kubelab's in-process kubectl
    prints what the real one prints from the served objects, for every kind of peer and port."""
    c = Cluster(nodes=1)
    c.apply(policy("deny-all", podSelector={}, policyTypes=["Ingress", "Egress"]))
    c.apply(policy("mixed", podSelector={"matchLabels": {"app": "web"}},
                   ingress=[{"from": [{"podSelector": {"matchLabels": {"role": "frontend"}}},
                                      {"namespaceSelector": {"matchLabels": {"team": "x"}},
                                       "podSelector": {}}],
                             "ports": [{"port": "http"}, {"protocol": "UDP", "port": 53}]},
                            {"from": [{"ipBlock": {"cidr": "10.0.0.0/8",
                                                   "except": ["10.1.0.0/16", "10.2.0.0/16"]}}]}],
                   egress=[{"ports": [{"port": 8000, "endPort": 9000}],
                            "to": [{"namespaceSelector": {"matchExpressions": [
                                {"key": "team", "operator": "In", "values": ["x", "y"]}]}}]}]))
    c.apply(policy("egress-only", podSelector={"matchLabels": {"role": "batch"}},
                   policyTypes=["Egress"], egress=[{}]))
    c.run(1)
    names = ("deny-all", "mixed", "egress-only")

    async def main() -> list[tuple[str, str]]:
        c.serve(port=0)
        try:
            return [(await c.server.kubectl(f"describe networkpolicy {n}"),
                     str(c.kubectl(f"describe networkpolicy {n}"))) for n in names]
        finally:
            await c.server.stop()

    described = asyncio.run(main())
    for real, ours in described:
        assert ours.rstrip("\n") == real.rstrip("\n")
    real = described[2][0]
    assert "Not affecting ingress traffic" in real and "To: <any> (traffic not restricted" in real
