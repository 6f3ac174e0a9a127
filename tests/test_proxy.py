"""kube-proxy's iptables rules and the packet walk: upstream's chain names, the probability
ladder, masquerade, REJECT without endpoints, NodePorts and externalTrafficPolicy: Local,
session affinity, terminating endpoints, the min-sync-period, stale rules after a crash."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from kubelab import Cluster
from kubelab.proxy import port_proto_hash, service_port_endpoint_chain_name
from kubelab.proxy.iptables import IPTables, Packet, parse_rules
from kubelab.proxy.jump_chains import ensure_jump_chains
from kubelab.proxy.proxier import Endpoint, ServicePort, sync_proxy_rules


def test_chain_names_are_upstreams() -> None:
    # pkg/proxy/iptables/proxier_test.go's fixtures for ns1/svc1:p80 and its endpoint 10.180.0.1:80
    assert port_proto_hash("ns1/svc1:p80", "tcp") == "XPGD46QRK7WJZT7O"
    assert service_port_endpoint_chain_name("ns1/svc1:p80", "tcp", "10.180.0.1:80") == \
        "KUBE-SEP-SXIVWICOYRO3J4NJ"


SVC = ServicePort("default/web:http", "tcp", "10.96.0.20", 80)


def eps(n: int, **kw: Any) -> list[Endpoint]:
    return [Endpoint(f"10.244.1.{i + 2}", 8080, node_name=f"node-{i % 2 + 1}", **kw) for i in range(n)]


def table(services: dict[str, ServicePort], endpoints: dict[str, list[Endpoint]], node: str = "node-1"
          ) -> IPTables:
    t = IPTables(node, "172.18.0.2")
    ensure_jump_chains(t)
    t.restore(sync_proxy_rules(services, endpoints, node), 0.0)
    return t


def test_the_ladder_gives_each_endpoint_an_equal_share() -> None:
    t = table({SVC.name: SVC}, {SVC.name: eps(4)})
    svc_chain = f"KUBE-SVC-{port_proto_hash(SVC.name, 'tcp')}"
    ladder = [r for r in t.tables["nat"][svc_chain] if "KUBE-SEP" in r.target]
    assert [r.matches.get("--probability", (False, ""))[1] for r in ladder] == \
        ["0.2500000000", "0.3333333333", "0.5000000000", ""]
    rand = random.Random(7)
    hits = Counter(t.walk(Packet("10.244.9.9", "10.96.0.20", 80), rand, 0.0).pod_ip for _ in range(4000))
    assert set(hits) == {e.ip for e in eps(4)}
    assert all(850 < n < 1150 for n in hits.values()), hits


def test_off_cluster_traffic_is_marked_for_masquerade_pod_traffic_is_not() -> None:
    t = table({SVC.name: SVC}, {SVC.name: eps(1)})
    from_node = t.walk(Packet("172.18.0.2", "10.96.0.20", 80), random.Random(0), 0.0, local=True)
    from_pod = t.walk(Packet("10.244.2.5", "10.96.0.20", 80), random.Random(0), 0.0)
    assert any(s.chain == "KUBE-MARK-MASQ" for s in from_node.steps)
    assert not any(s.chain == "KUBE-MARK-MASQ" for s in from_pod.steps)
    assert from_node.destination == from_pod.destination == "10.244.1.2:8080"


def test_no_endpoints_is_a_reject_in_the_filter_table() -> None:
    t = table({SVC.name: SVC}, {})
    # kube-proxy writes a bare REJECT (proxier.go internalTrafficFilterTarget); the kernel's
    # default --reject-with only shows in iptables-save
    assert '-A KUBE-SERVICES -m comment --comment "default/web:http has no endpoints" -m tcp -p tcp ' \
        "-d 10.96.0.20 --dport 80 -j REJECT\n" in t.last_restore_input
    assert "--reject-with" not in t.last_restore_input
    assert '-A KUBE-SERVICES -d 10.96.0.20/32 -p tcp -m comment --comment "default/web:http has no ' \
        'endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable\n' in t.iptables_save()
    walk = t.walk(Packet("10.244.2.5", "10.96.0.20", 80), random.Random(0), 0.0)
    assert walk.verdict == "REJECT" and walk.steps[-1].table == "filter"


def test_terminating_endpoints_serve_only_when_none_is_ready() -> None:
    mixed = [Endpoint("10.244.1.2", 8080), Endpoint("10.244.1.3", 8080, ready=False, terminating=True)]
    assert "10.244.1.3:8080" not in table({SVC.name: SVC}, {SVC.name: mixed}).last_restore_input
    draining = [Endpoint("10.244.1.3", 8080, ready=False, serving=True, terminating=True)]
    assert "--to-destination 10.244.1.3:8080" in \
        table({SVC.name: SVC}, {SVC.name: draining}).last_restore_input
    gone = [Endpoint("10.244.1.3", 8080, ready=False, serving=False, terminating=True)]
    assert "has no endpoints" in table({SVC.name: SVC}, {SVC.name: gone}).last_restore_input


def test_node_port_with_external_traffic_policy_local() -> None:
    svc = ServicePort("default/web:http", "tcp", "10.96.0.20", 80, node_port=30080, external_local=True)
    # node-1 has an endpoint of its own: NodePort traffic stays on it
    t1 = table({svc.name: svc}, {svc.name: eps(2)}, "node-1")
    walk = t1.walk(Packet("203.0.113.9", "172.18.0.2", 30080), random.Random(0), 0.0)
    assert walk.verdict == "DNAT" and walk.pod_ip == "10.244.1.2"
    assert any(s.chain == "KUBE-NODEPORTS" for s in walk.steps)
    # node-3 has none: the NodePort is dropped there
    t3 = IPTables("node-3", "172.18.0.4")
    ensure_jump_chains(t3)
    t3.restore(sync_proxy_rules({svc.name: svc}, {svc.name: eps(2)}, "node-3"), 0.0)
    assert "default/web:http has no local endpoints" in t3.last_restore_input
    assert t3.walk(Packet("203.0.113.9", "172.18.0.4", 30080), random.Random(0), 0.0).verdict == "DROP"


def test_session_affinity_sticks_to_one_endpoint() -> None:
    svc = ServicePort("default/web:http", "tcp", "10.96.0.20", 80, affinity_seconds=10800)
    t = table({svc.name: svc}, {svc.name: eps(3)})
    text = t.last_restore_input
    assert "-m recent --name KUBE-SEP-" in text and "--rcheck --seconds 10800 --reap" in text
    rand = random.Random(3)
    first = t.walk(Packet("10.244.2.5", "10.96.0.20", 80), rand, 1.0).pod_ip
    assert {t.walk(Packet("10.244.2.5", "10.96.0.20", 80), rand, 2.0).pod_ip for _ in range(30)} == {first}


def test_parse_rules_reads_what_sync_writes() -> None:
    text = sync_proxy_rules({SVC.name: SVC}, {SVC.name: eps(2)}, "node-1")
    tables = parse_rules(text)
    assert set(tables) == {"nat", "filter"}
    assert tables["nat"]["KUBE-MARK-MASQ"][0].target_args == {"--or-mark": "0x4000"}


def web(c: Cluster, replicas: int = 3) -> None:
    c.apply({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
             "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                      "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                          {"name": "web", "image": "nginx:1.27",
                           "ports": [{"containerPort": 8080, "name": "http"}]}]}}}})
    c.apply({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
             "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80,
                                                              "targetPort": "http"}]}})


def dnat_targets(c: Cluster, node: str, service: str = "default/web:http") -> set[str]:
    """The endpoints of one service port (kind's kubernetes and kube-dns Services have theirs)."""
    return {r.target_args["--to-destination"].split(":")[0]
            for rules in c.iptables[node].tables.get("nat", {}).values() for r in rules
            if r.target == "DNAT" and r.matches.get("--comment", (False, ""))[1] == service}


def test_kube_proxy_follows_endpoints_and_leaves_stale_rules_when_it_crashes() -> None:
    c = Cluster(nodes=2)
    web(c)
    c.run_until(lambda: len(dnat_targets(c, "node-1")) == len(dnat_targets(c, "node-2")) == 3,
                timeout=60)
    assert c.node("node-1").kube_proxy is not None
    c.faults.crash("kube-proxy/node-1")
    c.kubectl("scale deployment web --replicas=1")
    c.run_until(lambda: len(c.get("pods")) == 1, timeout=60)
    c.run(5)
    assert len(dnat_targets(c, "node-2")) == 1
    assert len(dnat_targets(c, "node-1")) == 3          # stale: nobody rewrote them
    live = {p["status"]["podIP"] for p in c.get("pods") if not p["metadata"].get("deletionTimestamp")}
    stale = dnat_targets(c, "node-1") - live
    assert stale
    routes = [c.route("web", from_node="node-1") for _ in range(40)]
    assert any(not r.ok for r in routes) and any(r.ok for r in routes)
    c.faults.restart("kube-proxy/node-1")
    c.run(5)
    assert dnat_targets(c, "node-1") == dnat_targets(c, "node-2") == live
    assert all(c.route("web", from_node="node-1").ok for _ in range(10))


def test_syncs_are_rate_limited_by_min_sync_period() -> None:
    c = Cluster(nodes=1)
    web(c, replicas=1)
    c.run(30)
    proxy = c.components["kube-proxy/node-1"]
    before = proxy.syncs
    for i in range(6):  # six changes in 0.6 s: a burst of two syncs, then one per second
        c.apply({"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"s{i}"},
                 "spec": {"selector": {"app": "x"}, "ports": [{"port": 80}]}})
        c.run(0.1)
    assert proxy.syncs - before <= 2
    c.run(2)
    assert proxy.syncs - before >= 3
    assert all(f"default/s{i} has no endpoints" in c.node("node-1").iptables_save() for i in range(6))


def test_kill_node_flushes_its_rules_and_revive_resyncs() -> None:
    c = Cluster(nodes=2)
    web(c, replicas=1)
    c.run_until(lambda: len(dnat_targets(c, "node-1")) == 1, timeout=60)
    c.faults.kill_node("node-1")
    assert c.iptables["node-1"].last_restore_input == "" and "kube-proxy/node-1" not in c.components
    c.faults.revive_node("node-1")
    c.run(5)
    assert "kube-proxy/node-1" in c.components and dnat_targets(c, "node-1")


def test_dropped_endpointslice_updates_leave_every_node_stale_until_healed() -> None:
    c = Cluster(nodes=2)
    web(c, replicas=2)
    c.run_until(lambda: len(dnat_targets(c, "node-1")) == len(dnat_targets(c, "node-2")) == 2, timeout=60)
    assert "drop_endpointslice_updates" in c.faults.names()
    c.faults.drop_endpointslice_updates()
    c.kubectl("scale deployment web --replicas=4")
    c.run(20)
    slices = c.get("endpointslices", label_selector="kubernetes.io/service-name=web")  # not kubernetes'
    in_slices = {e["addresses"][0] for s in slices for e in s["endpoints"]}
    assert len(in_slices) == 4                      # the controller wrote them ...
    assert len(dnat_targets(c, "node-1")) == len(dnat_targets(c, "node-2")) == 2   # ... nobody heard
    c.faults.heal_watch_events()
    c.run(10)
    assert dnat_targets(c, "node-1") == dnat_targets(c, "node-2") == in_slices
