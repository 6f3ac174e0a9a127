# ruff: noqa: E501  (upstream's expected rules, one rule a line, as in proxier_test.go)
"""kube-proxy's rules for spec.externalIPs against upstream's expectations
(pkg/proxy/iptables/proxier_test.go TestOnlyLocalExternalIPs, TestNonLocalExternalIPs and
TestExternalIPsReject: their fixtures, their rules for ns1/svc1:p80, their packet flows), and
c.route to an external IP through a cluster's nodes."""

from __future__ import annotations

import random

from kubelab import Cluster
from kubelab.proxy.iptables import IPTables, Packet, parse_rules
from kubelab.proxy.jump_chains import ensure_jump_chains
from kubelab.proxy.proxier import Endpoint, ServicePort, sync_proxy_rules

# proxier_test.go's fixtures: its hostname, node IP, local-traffic detector and outside client
HOST, NODE_IP, POD_CIDR, CLIENT = "test-hostname", "192.168.0.2", "10.0.0.0/8", "203.0.113.2"
NAME, EXTERNAL_IP = "ns1/svc1:p80", "192.168.99.11"
ENDPOINTS = [Endpoint("10.180.0.1", 80), Endpoint("10.180.2.1", 80, node_name=HOST)]
EXT, SVC, SVL = "KUBE-EXT-XPGD46QRK7WJZT7O", "KUBE-SVC-XPGD46QRK7WJZT7O", "KUBE-SVL-XPGD46QRK7WJZT7O"
SEP1, SEP2 = "KUBE-SEP-SXIVWICOYRO3J4NJ", "KUBE-SEP-ZX7GRIZKSNUQ3LAJ"

ENDPOINT_CHAINS = f"""
-A {SEP1} -m comment --comment ns1/svc1:p80 -s 10.180.0.1 -j KUBE-MARK-MASQ
-A {SEP1} -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.1:80
-A {SEP2} -m comment --comment ns1/svc1:p80 -s 10.180.2.1 -j KUBE-MARK-MASQ
-A {SEP2} -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.2.1:80
-A {SVC} -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
-A {SVC} -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:80" -m statistic --mode random --probability 0.5000000000 -j {SEP1}
-A {SVC} -m comment --comment "ns1/svc1:p80 -> 10.180.2.1:80" -j {SEP2}
"""
SERVICES = f"""
-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j {SVC}
-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 external IP" -m tcp -p tcp -d 192.168.99.11 --dport 80 -j {EXT}
"""
# TestOnlyLocalExternalIPs: a NodePort Service (no nodePort given) with externalTrafficPolicy Local
ONLY_LOCAL = SERVICES + ENDPOINT_CHAINS + f"""
-A {EXT} -m comment --comment "pod traffic for ns1/svc1:p80 external destinations" -s 10.0.0.0/8 -j {SVC}
-A {EXT} -m comment --comment "masquerade LOCAL traffic for ns1/svc1:p80 external destinations" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ
-A {EXT} -m comment --comment "route LOCAL traffic for ns1/svc1:p80 external destinations" -m addrtype --src-type LOCAL -j {SVC}
-A {EXT} -j {SVL}
-A {SVL} -m comment --comment "ns1/svc1:p80 -> 10.180.2.1:80" -j {SEP2}
"""
# TestNonLocalExternalIPs: a ClusterIP Service with an external IP, externalTrafficPolicy Cluster
NON_LOCAL = SERVICES + ENDPOINT_CHAINS + f"""
-A {EXT} -m comment --comment "masquerade traffic for ns1/svc1:p80 external destinations" -j KUBE-MARK-MASQ
-A {EXT} -j {SVC}
"""


def service(**kw: object) -> ServicePort:
    return ServicePort(NAME, "tcp", "172.30.0.41", 80, external_ips=(EXTERNAL_IP,), **kw)  # type: ignore[arg-type]


def node(svc: ServicePort, endpoints: list[Endpoint]) -> IPTables:
    t = IPTables(HOST, NODE_IP)
    ensure_jump_chains(t)
    t.restore(sync_proxy_rules({NAME: svc}, {NAME: endpoints} if endpoints else {}, HOST, POD_CIDR), 0.0)
    return t


def service_rules(t: IPTables, table: str = "nat") -> dict[str, list[str]]:
    """The rules of ns1/svc1:p80's own chains and its lines in the shared ones."""
    return {chain: [r.text for r in rules if chain.endswith(("XPGD46QRK7WJZT7O", "J4NJ", "3LAJ"))
                    or NAME in r.text]
            for chain, rules in t.tables.get(table, {}).items()
            if any(NAME in r.text or chain.endswith(("XPGD46QRK7WJZT7O", "J4NJ", "3LAJ"))
                   for r in rules)}


def upstream(text: str) -> dict[str, list[str]]:
    return {chain: [r.text for r in rules] for chain, rules in parse_rules(f"*nat\n{text}").get(
        "nat", {}).items()}


def flow(t: IPTables, src: str, dst: str, tries: int = 60) -> tuple[set[str], bool]:
    """runPacketFlowTests: the endpoints a packet may reach, and whether it is masqueraded."""
    rand, seen, masq = random.Random(1), set(), False
    for _ in range(tries):
        walk = t.walk(Packet(src, dst, 80), rand, 0.0)
        seen.add(walk.destination)
        masq = masq or any(s.chain == "KUBE-MARK-MASQ" for s in walk.steps)
    return seen, masq


def test_only_local_external_ips_as_upstream() -> None:
    t = node(service(external_local=True), ENDPOINTS)
    assert service_rules(t) == upstream(ONLY_LOCAL)
    assert flow(t, "10.0.0.2", "172.30.0.41") == ({"10.180.0.1:80", "10.180.2.1:80"}, False)
    # "external IP hits only local endpoint, unmasqueraded"
    assert flow(t, CLIENT, EXTERNAL_IP) == ({"10.180.2.1:80"}, False)


def test_non_local_external_ips_as_upstream() -> None:
    t = node(service(), ENDPOINTS)
    assert service_rules(t) == upstream(NON_LOCAL)
    assert flow(t, "10.0.0.2", "172.30.0.41") == ({"10.180.0.1:80", "10.180.2.1:80"}, False)
    # "external to external IP": both endpoints, masqueraded
    assert flow(t, CLIENT, EXTERNAL_IP) == ({"10.180.0.1:80", "10.180.2.1:80"}, True)


def test_external_ips_reject_without_endpoints_as_upstream() -> None:
    # TestExternalIPsReject: a bare REJECT, as kube-proxy writes it
    t = node(service(), [])
    assert service_rules(t, "filter")["KUBE-EXTERNAL-SERVICES"] == [
        '-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns1/svc1:p80 has no endpoints" -m tcp -p tcp '
        "-d 192.168.99.11 --dport 80 -j REJECT"]
    assert not any(NAME in r.text for r in t.tables["nat"]["KUBE-SERVICES"])
    assert t.walk(Packet(CLIENT, EXTERNAL_IP, 80), random.Random(0), 0.0).verdict == "REJECT"


def test_local_policy_on_a_node_without_local_endpoints_drops_outside_traffic() -> None:
    remote = [Endpoint("10.180.0.1", 80, node_name="other-node")]
    t = node(service(external_local=True), remote)
    assert f"-A {EXT} -j {SVL}" not in t.last_restore_input
    assert '"ns1/svc1:p80 has no local endpoints" -m tcp -p tcp -d 192.168.99.11 --dport 80 -j DROP' \
        in t.last_restore_input
    assert t.walk(Packet(CLIENT, EXTERNAL_IP, 80), random.Random(0), 0.0).verdict == "DROP"
    # a pod on this node short-circuits to the cluster chain, as upstream's EXT chain does
    assert flow(t, "10.0.0.2", EXTERNAL_IP) == ({"10.180.0.1:80"}, False)


def web(c: Cluster, **spec: object) -> None:
    c.apply({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
             "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                      "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                          {"name": "web", "image": "nginx:1.27",
                           "ports": [{"containerPort": 8080, "name": "http"}]}]}}}})
    c.apply({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
             "spec": {"selector": {"app": "web"}, "externalIPs": [EXTERNAL_IP],
                      "ports": [{"name": "http", "port": 80, "targetPort": "http"}], **spec}})
    c.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "client"},
             "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}})
    c.run(30)


def test_route_to_an_external_ip_walks_the_external_chain() -> None:
    c = Cluster(nodes=2)
    web(c)
    svc = c.get("services", "web")["spec"]
    assert svc["externalTrafficPolicy"] == "Cluster"  # defaulted: externalIPs make it external
    for r in (c.route(EXTERNAL_IP, from_pod="client"), c.route(EXTERNAL_IP, from_node="node-2")):
        assert r.ok and r.pod.startswith("default/web-"), str(r)
        rules = [s.rule for s in r.walk.steps]
        # each step as iptables-save prints the rule
        assert any('-d 192.168.99.11/32 -p tcp -m comment --comment "default/web:http external IP" '
                   "-m tcp --dport 80 -j KUBE-EXT-" in s for s in rules), str(r)
        assert any(s.chain.startswith("KUBE-EXT-") for s in r.walk.steps)
    assert c.route(f"{EXTERNAL_IP}:81", from_node="node-1").walk.verdict == "ACCEPT"  # no such port


def test_route_to_an_external_ip_with_local_policy() -> None:
    c = Cluster(nodes=3)
    web(c, externalTrafficPolicy="Local")
    c.client.patch("deployments", "web", {"spec": {"replicas": 1}})
    c.run(30)
    home = c.get("pods", label_selector="app=web")[0]["spec"]["nodeName"]
    away = next(n for n in c.node_names if n != home)
    # from a node, local traffic short-circuits to the cluster chain wherever the pod is
    assert c.route(EXTERNAL_IP, from_node=away).ok
    text = c.node(away).iptables_restore_input()
    assert "has no local endpoints\" -m tcp -p tcp -d 192.168.99.11 --dport 80 -j DROP" in text
    assert '-d 192.168.99.11/32 -p tcp -m comment --comment "default/web:http has no local endpoints" ' \
        "-m tcp --dport 80 -j DROP" in c.node(away).iptables_save()
    assert "has no local endpoints" not in c.node(home).iptables_save()
