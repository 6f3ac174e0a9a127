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


# ---------------------------------------------------------------- the e2e truth tables
# kubernetes/kubernetes test/e2e/network/netpol/network_policy.go (and policies.go's builders):
# namespaces x, y, z labelled ns=<name>; pods a, b, c in each, labelled pod=<name>, serving
# TCP 80 and 81 on ports named serve-80-tcp and serve-81-tcp. A Reachability starts with every
# pair allowed; each case lists what it expects denied; AllowLoopback (a pod to itself never
# crosses its veth, so no policy sees it) is why self pairs are left out.

E2E_NS, E2E_PODS = ("x", "y", "z"), ("a", "b", "c")
E2E_IPS = {f"{ns}/{p}": f"10.0.{i}.{j + 1}" for i, ns in enumerate(E2E_NS) for j, p in enumerate(E2E_PODS)}


def e2e_pod(key: str) -> dict[str, Any]:
    ns, name = key.split("/")
    return {"metadata": {"name": name, "namespace": ns, "labels": {"pod": name}},
            "spec": {"containers": [{"name": f"cont-{port}-tcp", "ports": [
                {"name": f"serve-{port}-tcp", "containerPort": port, "protocol": "TCP"}]}
                for port in (80, 81)]},
            "status": {"podIP": E2E_IPS[key]}}


E2E_LISTERS = ([e2e_pod(k) for k in E2E_IPS],
               [{"metadata": {"name": ns, "labels": {"ns": ns, "kubernetes.io/metadata.name": ns}}}
                for ns in E2E_NS])


def target(labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    """A policy in namespace x: its podSelector (None: every pod), ingress by default."""
    spec.setdefault("policyTypes", ["Ingress"])
    return {"metadata": {"name": "p", "namespace": "x"},
            "spec": {"podSelector": {"matchLabels": labels} if labels else {}, **spec}}


def from_peers(*peers: dict[str, Any], ports: list[Any] | None = None) -> list[dict[str, Any]]:
    return [{"from": list(peers), **({"ports": [{"protocol": "TCP", "port": p} for p in ports]}
                                      if ports else {})}]


NS_NOT_X = {"matchExpressions": [{"key": "ns", "operator": "NotIn", "values": ["x"]}]}
POD_B = {"matchLabels": {"pod": "b"}}


def denied(src: str = "*/*", dst: str = "*/*", *, unless: tuple[str, ...] = ()) -> set[tuple[str, str]]:
    """ExpectPeer(src, dst, false) over the model ("*" matches any namespace or pod), minus the
    pairs a later Expect(..., true) allows again."""
    def match(pattern: str, key: str) -> bool:
        return all(p in ("*", k) for p, k in zip(pattern.split("/"), key.split("/"), strict=True))
    return {(s, d) for s in E2E_IPS for d in E2E_IPS
            if match(src, s) and match(dst, d) and f"{s}>{d}" not in unless}


E2E = [
    ("should support a 'default-deny-ingress' policy", [target()], 80, denied(dst="x/*")),
    ("should support a 'default-deny-all' policy", [target(policyTypes=["Ingress", "Egress"])], 80,
     denied(dst="x/*") | denied(src="x/*")),
    ("should enforce policy to allow traffic from pods within server namespace based on PodSelector",
     [target({"pod": "a"}, ingress=from_peers({"podSelector": POD_B}))], 80,
     denied(dst="x/a", unless=("x/b>x/a",))),
    ("should enforce policy to allow traffic only from a different namespace, based on "
     "NamespaceSelector",
     [target({"pod": "a"}, ingress=from_peers({"namespaceSelector": {"matchLabels": {"ns": "y"}}}))],
     80, denied("x/*", "x/a") | denied("z/*", "x/a")),
    ("should enforce policy based on PodSelector with MatchExpressions",
     [target({"pod": "a"}, ingress=from_peers({"podSelector": {"matchExpressions": [
         {"key": "pod", "operator": "In", "values": ["b"]}]}}))], 80,
     denied(dst="x/a", unless=("x/b>x/a",))),
    ("should enforce policy based on NamespaceSelector with MatchExpressions",
     [target({"pod": "a"}, ingress=from_peers({"namespaceSelector": {"matchExpressions": [
         {"key": "ns", "operator": "In", "values": ["y"]}]}}))], 80,
     denied("x/*", "x/a") | denied("z/*", "x/a")),
    ("should enforce policy based on PodSelector or NamespaceSelector",
     [target({"pod": "a"}, ingress=from_peers({"namespaceSelector": NS_NOT_X}, {"podSelector": POD_B}))],
     80, denied("x/c", "x/a")),
    ("should enforce policy based on PodSelector and NamespaceSelector",
     [target({"pod": "a"}, ingress=from_peers({"namespaceSelector": NS_NOT_X, "podSelector": POD_B}))],
     80, denied(dst="x/a", unless=("y/b>x/a", "z/b>x/a"))),
    ("should enforce policy based on Multiple PodSelectors and NamespaceSelectors",
     [target({"pod": "a"}, ingress=from_peers({"namespaceSelector": NS_NOT_X, "podSelector": {
         "matchExpressions": [{"key": "pod", "operator": "In", "values": ["b", "c"]}]}}))], 80,
     denied("x/*", "x/a") | denied("y/a", "x/a") | denied("z/a", "x/a")),
    ("should enforce policy to allow traffic only from a pod in a different namespace based on "
     "PodSelector and NamespaceSelector",
     [target({"pod": "a"}, ingress=from_peers({"namespaceSelector": {"matchLabels": {"ns": "y"}},
                                               "podSelector": {"matchLabels": {"pod": "a"}}}))], 80,
     denied(dst="x/a", unless=("y/a>x/a",))),
    ("should enforce policy based on Ports (81)",
     [target({"pod": "a"}, ingress=from_peers({"namespaceSelector": {"matchLabels": {"ns": "y"}}},
                                              ports=[81]))], 81,
     denied("x/*", "x/a") | denied("z/*", "x/a")),
    ("should enforce multiple, stacked policies with overlapping podSelectors (port 80 denied)",
     [target({"pod": "a"}, ingress=from_peers({"namespaceSelector": {"matchLabels": {"ns": "y"}}},
                                              ports=[81]))], 80, denied(dst="x/a")),
    ("should support allow-all policy", [target(ingress=[{}])], 81, set()),
    ("should allow ingress access on one named port (81)", [target(ingress=[{"ports": [
        {"protocol": "TCP", "port": "serve-81-tcp"}]}])], 81, set()),
    ("should allow ingress access on one named port (80)", [target(ingress=[{"ports": [
        {"protocol": "TCP", "port": "serve-81-tcp"}]}])], 80, denied(dst="x/*")),
    ("should allow ingress access from namespace on one named port (80)",
     [target({"pod": "a"}, ingress=from_peers({"namespaceSelector": {"matchLabels": {"ns": "y"}}},
                                              ports=["serve-80-tcp"]))], 80,
     denied("x/*", "x/a") | denied("z/*", "x/a")),
    ("should allow ingress access from namespace on one named port (81)",
     [target({"pod": "a"}, ingress=from_peers({"namespaceSelector": {"matchLabels": {"ns": "y"}}},
                                              ports=["serve-80-tcp"]))], 81, denied(dst="x/a")),
    ("should allow egress access on one named port (80)",
     [target(policyTypes=["Egress"], egress=[{"ports": [{"protocol": "TCP", "port": "serve-80-tcp"}]}])],
     80, set()),
    ("should allow egress access on one named port (81)",
     [target(policyTypes=["Egress"], egress=[{"ports": [{"protocol": "TCP", "port": "serve-80-tcp"}]}])],
     81, denied(src="x/*")),
    ("should enforce updated policy (ingress: [] after an update)", [target(ingress=[])], 81,
     denied(dst="x/*")),
]


@pytest.mark.parametrize(("policies", "port", "expect_denied"), [c[1:] for c in E2E],
                         ids=[c[0] for c in E2E])
def test_e2e_truth_table(policies: list[dict[str, Any]], port: int,
                         expect_denied: set[tuple[str, str]]) -> None:
    listers = Listers(*E2E_LISTERS, policies)
    got = {(s, d) for s in E2E_IPS for d in E2E_IPS if s != d and not evaluate_packet(
        listers, Packet(E2E_IPS[s], 52345, E2E_IPS[d], port)).allowed}
    assert got == {(s, d) for s, d in expect_denied if s != d}
