"""kube-network-policies' own tables (pkg/networkpolicy/networkpolicy_test.go: TestSyncPacket,
TestController_evaluateIPBlocks, TestController_evaluatePorts; makePod and makeNamespace from
controller_test.go), transcribed as data and run against kubelab/proxy/networkpolicy/.

One departure, as the module says: upstream's "allow all override deny ingress" builds
`Ingress: []NetworkPolicyIngressRule{}`, a non-nil empty slice no API object can hold (the field
is omitempty); the allow-all a user writes is `ingress: [{}]`, transcribed here. Both are also
checked: `ingress: []` isolates, as the API documents.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from kubelab.proxy.networkpolicy import Packet, evaluate_packet
from kubelab.proxy.networkpolicy.networkpolicy import evaluate_ip_blocks, evaluate_ports


def make_namespace(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name, "a": "b"}}}


def make_pod(name: str, ns: str, ip: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": ns, "labels": labels or {"a": "b"}},
            "spec": {"nodeName": "testnode", "containers": [{
                "name": "write-pod", "command": ["/bin/sh"],
                "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP"}]}]},
            "status": {"podIPs": [{"ip": ip}]}}


def make_policy(name: str, ns: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": ns}, "spec": {"podSelector": {}, **spec}}


@dataclass
class Listers:
    pod_list: list[dict[str, Any]]
    namespace_list: list[dict[str, Any]]
    policies: list[dict[str, Any]] = field(default_factory=list)

    def pods(self) -> list[dict[str, Any]]:
        return self.pod_list

    def namespaces(self) -> list[dict[str, Any]]:
        return self.namespace_list

    def network_policies(self, namespace: str) -> list[dict[str, Any]]:
        return [p for p in self.policies if p["metadata"]["namespace"] == namespace]


PODS = [make_pod("a", "foo", "192.168.1.11"), make_pod("b", "bar", "192.168.2.22"),
        # podC matches neither the selectors nor a namespace; podD is podB's namespace, other labels
        make_pod("c", "blocked", "192.168.3.33", {"c": "d"}),
        make_pod("d", "bar", "192.168.4.44", {"c": "d"})]
NAMESPACES = [make_namespace("foo"), make_namespace("bar")]
AB = {"matchLabels": {"a": "b"}}

NP = {
    "deny-ingress": make_policy("default-deny-ingress", "bar", policyTypes=["Ingress"]),
    "deny-egress": make_policy("default-deny-ingress", "bar", policyTypes=["Egress"]),
    "allow-all-ingress": make_policy("default-allow-ingress", "bar", policyTypes=["Ingress"],
                                     ingress=[{}]),
    "allow-ingress-ipblock": make_policy(
        "default-allow-ingress-ipBlock", "bar", policyTypes=["Ingress"],
        ingress=[{"from": [{"ipBlock": {"cidr": "192.168.0.0/16"}}]}]),
    "multiport-egress": make_policy(
        "multiport-egress", "foo", podSelector=AB, policyTypes=["Egress"],
        egress=[{"ports": [{"protocol": "TCP", "port": 30000, "endPort": 65537}], "to": []}]),
    "multiport-egress-ipblock": make_policy(
        "multiport-egress", "foo", podSelector=AB, policyTypes=["Egress"],
        egress=[{"to": [{"ipBlock": {"cidr": "192.168.0.0/16"}}]}]),
    "multiport-egress-pod": make_policy(
        "multiport-egress", "foo", podSelector=AB, policyTypes=["Egress"],
        egress=[{"to": [{"podSelector": AB}]}]),
    "multiport-egress-ns": make_policy(
        "multiport-egress-ns", "foo", podSelector=AB, policyTypes=["Egress"],
        egress=[{"to": [{"namespaceSelector": AB}]}]),
    "multiport-egress-pod-ns": make_policy(
        "multiport-egress-pod-ns", "foo", podSelector=AB, policyTypes=["Egress"],
        egress=[{"to": [{"podSelector": AB, "namespaceSelector": AB}]}]),
    "multiport-ingress-pod-ns": make_policy(
        "multiport-ingress-pod-ns", "bar", podSelector=AB, policyTypes=["Ingress"],
        ingress=[{"from": [{"podSelector": AB, "namespaceSelector": AB}]}]),
}

# TestSyncPacket: (name, policies, src ip, dst ip, dst port, expect); source port 52345, TCP.
SYNC_PACKET = [
    ("no network policy", [], "192.168.1.11", "192.168.2.22", 80, True),
    ("deny ingress", ["deny-ingress"], "192.168.1.11", "192.168.2.22", 80, False),
    ("deny egress", ["deny-egress"], "192.168.2.22", "192.168.1.11", 80, False),
    ("deny egress on reply does not have effect", ["deny-egress"], "192.168.1.11", "192.168.2.22",
     80, True),
    ("allow all override deny ingress", ["deny-ingress", "allow-all-ingress"], "192.168.1.11",
     "192.168.2.22", 80, True),
    ("ip block override deny ingress", ["deny-ingress", "allow-ingress-ipblock"], "192.168.1.11",
     "192.168.2.22", 80, True),
    ("ip block deny ingress", ["allow-ingress-ipblock"], "10.0.0.1", "192.168.2.22", 80, False),
    ("multiport deny egress port", ["deny-egress", "multiport-egress"], "192.168.1.11",
     "192.168.2.22", 80, False),
    ("multiport allow egress port", ["deny-egress", "multiport-egress"], "192.168.1.11",
     "192.168.2.22", 30080, True),
    ("multiport allow egress", ["deny-egress", "multiport-egress", "multiport-egress-ipblock"],
     "192.168.1.11", "192.168.2.22", 80, True),
    ("multiport allow egress port selector not match ns",
     ["deny-egress", "multiport-egress", "multiport-egress-pod"], "192.168.1.11", "192.168.2.22",
     80, False),
    ("multiport allow egress port selector not match pod selector",
     ["deny-egress", "multiport-egress", "multiport-egress-pod"], "192.168.1.11", "192.168.3.33",
     80, False),
    ("multiport allow egress ns selector", ["deny-egress", "multiport-egress", "multiport-egress-ns"],
     "192.168.1.11", "192.168.2.22", 80, True),
    ("multiport allow egress ns selector fail",
     ["deny-egress", "multiport-egress", "multiport-egress-ns"], "192.168.1.11", "192.168.3.33", 80,
     False),
    ("multiport allow egress ns and pod selector",
     ["deny-egress", "multiport-egress", "multiport-egress-pod-ns"], "192.168.1.11", "192.168.2.22",
     80, True),
    ("multiport allow egress ns and pod selector fail",
     ["deny-egress", "multiport-egress", "multiport-egress-pod-ns"], "192.168.1.11", "192.168.3.33",
     80, False),
    ("multiport allow ingress ns and pod selector", ["deny-ingress", "multiport-ingress-pod-ns"],
     "192.168.1.11", "192.168.2.22", 80, True),
    ("multiport allow ingress ns and pod selector fail",
     ["deny-ingress", "multiport-ingress-pod-ns"], "192.168.1.11", "192.168.4.44", 80, False),
]


@pytest.mark.parametrize(("policies", "src", "dst", "port", "expect"),
                         [case[1:] for case in SYNC_PACKET], ids=[case[0] for case in SYNC_PACKET])
def test_sync_packet(policies: list[str], src: str, dst: str, port: int, expect: bool) -> None:
    listers = Listers(PODS, NAMESPACES, [NP[p] for p in policies])
    verdict = evaluate_packet(listers, Packet(src, 52345, dst, port, "TCP"))
    assert verdict.allowed is expect
    if not expect:   # the verdict names the policies of the direction that denied
        assert verdict.policies and f"NetworkPolicy {verdict.policies[0]}" in verdict.reason


def test_an_empty_rule_list_isolates_as_the_api_documents() -> None:
    empty = make_policy("empty", "bar", policyTypes=["Ingress"], ingress=[])
    verdict = evaluate_packet(Listers(PODS, NAMESPACES, [empty]),
                              Packet("192.168.1.11", 52345, "192.168.2.22", 80))
    assert not verdict.allowed and verdict.direction == "Ingress" and verdict.pod == "bar/b"
    assert verdict.policies == ("bar/empty",)


IP_BLOCKS = [
    ("empty", None, "", True),
    ("match cidr", {"cidr": "192.168.0.0/24"}, "192.168.0.1", True),
    ("no match cidr", {"cidr": "192.168.0.0/24"}, "10.0.0.1", False),
    ("match cidr and not except", {"cidr": "192.168.0.0/24", "except": ["192.168.1.0/24"]},
     "192.168.0.1", True),
    ("match cidr and  except", {"cidr": "192.168.0.0/24", "except": ["192.168.1.0/24"]},
     "192.168.1.1", False),
    # not upstream's: an except inside the cidr (the API requires it to be), as the docs' example
    ("except inside cidr", {"cidr": "172.17.0.0/16", "except": ["172.17.1.0/24"]}, "172.17.1.9",
     False),
]


@pytest.mark.parametrize(("block", "ip", "want"), [c[1:] for c in IP_BLOCKS], ids=[c[0] for c in IP_BLOCKS])
def test_evaluate_ip_blocks(block: dict[str, Any] | None, ip: str, want: bool) -> None:
    assert evaluate_ip_blocks(block, ip) is want


def port(proto: str, number: int | str | None, end: int = 0) -> dict[str, Any]:
    """makePort: port 0 or "" means no port; endPort 0 means none."""
    out: dict[str, Any] = {"protocol": proto}
    if number not in (0, "", "0", None):
        out["port"] = number
    if end:
        out["endPort"] = end
    return out


HTTP_POD = make_pod("a", "b", "192.168.1.1")
PORTS = [
    ("empty", [], None, 0, "TCP", True),
    ("match TCP", [port("TCP", 30000)], None, 30000, "TCP", True),
    ("match UDP", [port("UDP", 30000)], None, 30000, "UDP", True),
    ("no match TCP", [port("TCP", 30000)], None, 138, "TCP", False),
    ("no match UDP", [port("UDP", 30000)], None, 138, "UDP", False),
    ("match TCP range", [port("TCP", 30000, 65537)], None, 30138, "TCP", True),
    ("match UDP range", [port("UDP", 30000, 65537)], None, 30138, "UDP", True),
    ("no match TCP range", [port("TCP", 30000, 65537)], None, 138, "TCP", False),
    ("no match UDP range", [port("UDP", 30000, 65537)], None, 138, "UDP", False),
    ("match TCP named port", [port("TCP", "http")], HTTP_POD, 80, "TCP", True),
    ("no match UDP named port", [port("UDP", "http")], HTTP_POD, 80, "TCP", False),
    # not upstream's: a named port the pod does not have, and every port of a protocol
    ("named port the pod lacks", [port("TCP", "metrics")], HTTP_POD, 80, "TCP", False),
    ("protocol only", [port("UDP", None)], None, 53, "UDP", True),
]


@pytest.mark.parametrize(("ports", "pod", "number", "proto", "want"), [c[1:] for c in PORTS],
                         ids=[c[0] for c in PORTS])
def test_evaluate_ports(ports: list[dict[str, Any]], pod: dict[str, Any] | None, number: int,
                        proto: str, want: bool) -> None:
    assert evaluate_ports(ports, pod, number, proto) is want
