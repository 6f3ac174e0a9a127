# ruff: noqa: E501  (iptables-save lines, one rule a line)
"""iptables-save's view of the rules kube-proxy restores: a small node compared against a
rendering checked by hand, and the rules it follows.

The hand check, rule by rule (iptables-save.c, libxtables' xtables_save_string, the
extensions' save functions; iptables-save(8)):
- tables in iptables-nft-save's order (mangle, filter, nat); in each, the built-in chains with
  policy and counters, then the other chains sorted by name, then every rule chain by chain
  in that order (not in the order they were restored);
- each rule: the entry fields first as `[!] -s`, `[!] -d`, `-i`, `-o`, `-p`, addresses with
  their prefix (/32 for one address), then each `-m` in the order given with its options;
- a comment bare when it is only [A-Za-z0-9_-], else double-quoted;
- `--probability p` as %.11f of lround(p * 2^31) / 2^31: 0.3333333333 -> 715827883 / 2^31
  = 0.333333333489... -> 0.33333333349, 0.5000000000 -> 0.50000000000;
- the targets' stored forms: `REJECT` -> `REJECT --reject-with icmp-port-unreachable`,
  `MARK --or-mark 0x4000` -> `--set-xmark 0x4000/0x4000`, `--xor-mark 0x4000` ->
  `--set-xmark 0x4000/0x0`; `-m recent` with its default `--mask 255.255.255.255 --rsource`;
- kube-proxy's jumps from the built-in chains are prepended one by one, so they appear in
  reverse of iptablesJumpChains' order.
"""

from __future__ import annotations

import random

from kubelab import Cluster
from kubelab.proxy.iptables import IPTables, Packet
from kubelab.proxy.iptables_save import probability, save_rule, save_string
from kubelab.proxy.jump_chains import ensure_canary_chains, ensure_jump_chains
from kubelab.proxy.proxier import Endpoint, ServicePort, sync_proxy_rules

DNS = ServicePort("kube-system/kube-dns:dns", "udp", "10.96.0.10", 53)
DB = ServicePort("default/db:", "tcp", "10.96.0.30", 5432)
DNS_EPS = [Endpoint(ip, 53, node_name="node-1") for ip in ("10.244.1.2", "10.244.2.2", "10.244.2.3")]

EXPECTED = """\
*mangle
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:KUBE-PROXY-CANARY - [0:0]
COMMIT
*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:KUBE-EXTERNAL-SERVICES - [0:0]
:KUBE-FIREWALL - [0:0]
:KUBE-FORWARD - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-PROXY-CANARY - [0:0]
:KUBE-PROXY-FIREWALL - [0:0]
:KUBE-SERVICES - [0:0]
-A INPUT -j KUBE-FIREWALL
-A INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL
-A INPUT -m comment --comment "kubernetes health check service ports" -j KUBE-NODEPORTS
-A INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES
-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL
-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD
-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES
-A OUTPUT -j KUBE-FIREWALL
-A OUTPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL
-A OUTPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment "block incoming localnet connections" -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A KUBE-SERVICES -d 10.96.0.30/32 -p tcp -m comment --comment "default/db: has no endpoints" -m tcp --dport 5432 -j REJECT --reject-with icmp-port-unreachable
COMMIT
*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-PROXY-CANARY - [0:0]
:KUBE-SEP-TCIZBYBD3WWXNWF5 - [0:0]
:KUBE-SEP-Z6M7ZHWCTBNMPLD7 - [0:0]
:KUBE-SEP-ZHICQ2ODADGCY7DS - [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-SVC-TCOU7JCQXEZGVUNU - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING
-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0
-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully
-A KUBE-SEP-TCIZBYBD3WWXNWF5 -s 10.244.2.2/32 -m comment --comment "kube-system/kube-dns:dns" -j KUBE-MARK-MASQ
-A KUBE-SEP-TCIZBYBD3WWXNWF5 -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.2.2:53
-A KUBE-SEP-Z6M7ZHWCTBNMPLD7 -s 10.244.1.2/32 -m comment --comment "kube-system/kube-dns:dns" -j KUBE-MARK-MASQ
-A KUBE-SEP-Z6M7ZHWCTBNMPLD7 -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.1.2:53
-A KUBE-SEP-ZHICQ2ODADGCY7DS -s 10.244.2.3/32 -m comment --comment "kube-system/kube-dns:dns" -j KUBE-MARK-MASQ
-A KUBE-SEP-ZHICQ2ODADGCY7DS -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.2.3:53
-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU
-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
-A KUBE-SVC-TCOU7JCQXEZGVUNU ! -s 10.244.0.0/16 -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-MARK-MASQ
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.1.2:53" -m statistic --mode random --probability 0.33333333349 -j KUBE-SEP-Z6M7ZHWCTBNMPLD7
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.2.2:53" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-TCIZBYBD3WWXNWF5
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.2.3:53" -j KUBE-SEP-ZHICQ2ODADGCY7DS
COMMIT
"""


def node_after_one_sync() -> IPTables:
    """What KubeProxy does on a fresh node: the Monitor's canaries, then a full sync."""
    t = IPTables("node-1", "172.18.0.2")
    ensure_canary_chains(t)
    ensure_jump_chains(t)
    t.restore(sync_proxy_rules({DNS.name: DNS, DB.name: DB}, {DNS.name: DNS_EPS}, "node-1",
                               existing_nat_chains=t.chains("nat")), 0.0)
    return t


def test_iptables_save_matches_a_hand_checked_rendering() -> None:
    assert node_after_one_sync().iptables_save() == EXPECTED


def test_the_restore_input_is_what_kube_proxy_writes() -> None:
    text = node_after_one_sync().last_restore_input
    assert text.startswith("*filter\n:KUBE-SERVICES - [0:0]\n:KUBE-EXTERNAL-SERVICES - [0:0]\n"
                           ":KUBE-FORWARD - [0:0]\n:KUBE-NODEPORTS - [0:0]\n:KUBE-PROXY-FIREWALL - [0:0]\n")
    assert '-A KUBE-SERVICES -m comment --comment "default/db: has no endpoints" -m tcp -p tcp ' \
        "-d 10.96.0.30 --dport 5432 -j REJECT\n" in text
    assert "--probability 0.3333333333 -j" in text and "0.33333333349" not in text
    assert "--or-mark 0x4000" in text and "--set-xmark" not in text
    # the built-in chains are not in it: their jumps are ensured, not restored
    assert ":INPUT" not in text and "-A PREROUTING" not in text and "KUBE-PROXY-CANARY" not in text


def words(line: str) -> list[str]:
    return line.split()


def test_the_rules_of_rounding_quoting_and_order() -> None:
    assert [probability(p) for p in ("0.2500000000", "0.3333333333", "0.5000000000", "0.2000000000")] \
        == ["0.25000000000", "0.33333333349", "0.50000000000", "0.20000000019"]
    assert save_string("KUBE-SEP-X_1") == "KUBE-SEP-X_1"
    assert save_string("ns1/svc1:p80") == '"ns1/svc1:p80"' and save_string('a"b') == '"a\\"b"'
    sticky = words("-A KUBE-SVC-X -m comment --comment ns1/svc1:p80 -m recent --name KUBE-SEP-Y --rcheck "
                   "--seconds 10800 --reap -j KUBE-SEP-Y")
    assert save_rule(sticky) == ('-A KUBE-SVC-X -m comment --comment "ns1/svc1:p80" -m recent --rcheck '
                                 "--seconds 10800 --reap --name KUBE-SEP-Y --mask 255.255.255.255 "
                                 "--rsource -j KUBE-SEP-Y")
    dnat = "-A KUBE-SEP-Y -m comment --comment ns1/svc1:p80 -m recent --name KUBE-SEP-Y --set -m tcp " \
        "-p tcp -j DNAT --to-destination 10.180.0.1:80"
    assert save_rule(words(dnat)) == ('-A KUBE-SEP-Y -p tcp -m comment --comment "ns1/svc1:p80" -m recent '
                                       "--set --name KUBE-SEP-Y --mask 255.255.255.255 --rsource -m tcp "
                                       "-j DNAT --to-destination 10.180.0.1:80")
    nodeport = words("-A KUBE-EXTERNAL-SERVICES -m comment --comment X -m addrtype --dst-type LOCAL "
                     "-m tcp -p tcp --dport 30080 -j DROP")
    assert save_rule(nodeport) == ("-A KUBE-EXTERNAL-SERVICES -p tcp -m comment --comment X "
                                   "-m addrtype --dst-type LOCAL -m tcp --dport 30080 -j DROP")


def test_noflush_restore_keeps_other_chains_and_deletes_stale_service_chains() -> None:
    t = node_after_one_sync()
    t.ensure_chain("nat", "CNI-HOSTPORT-DNAT")                       # someone else's chain
    sep = "KUBE-SEP-Z6M7ZHWCTBNMPLD7"
    text = sync_proxy_rules({DNS.name: DNS}, {DNS.name: DNS_EPS[1:]}, "node-1",
                            existing_nat_chains=t.chains("nat"))
    assert f":{sep} - [0:0]" in text and f"-X {sep}\n" in text
    t.restore(text, 1.0)
    assert sep not in t.chains("nat") and "CNI-HOSTPORT-DNAT" in t.chains("nat")
    assert t.tables["nat"]["PREROUTING"][0].target == "KUBE-SERVICES"    # jumps kept
    ensure_jump_chains(t)                                               # EnsureRule: no duplicates
    assert len(t.tables["filter"]["INPUT"]) == 4


def test_the_walk_follows_the_same_rules_and_shows_them_saved() -> None:
    t = node_after_one_sync()
    walk = t.walk(Packet("10.244.2.9", "10.96.0.10", 53, "udp"), random.Random(1), 0.0)
    assert walk.verdict == "DNAT" and walk.pod_ip in {e.ip for e in DNS_EPS}
    assert all(step.rule in EXPECTED.splitlines() for step in walk.steps)
    reject = t.walk(Packet("10.244.2.9", "10.96.0.30", 5432), random.Random(1), 0.0)
    # the jumps to the empty KUBE-PROXY-FIREWALL and to KUBE-FORWARD (nothing there matches a
    # NEW, unmarked packet), then KUBE-SERVICES and its REJECT
    assert reject.verdict == "REJECT" and [f"{s.table}/{s.chain}" for s in reject.steps] == [
        "nat/PREROUTING", "filter/FORWARD", "filter/FORWARD", "filter/FORWARD", "filter/KUBE-SERVICES"]
    assert reject.steps[-1].rule.endswith("-j REJECT --reject-with icmp-port-unreachable")


def test_node_view_and_restore_input_in_a_cluster() -> None:
    c = Cluster(nodes=1)
    c.apply({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "db"},
             "spec": {"selector": {"app": "db"}, "ports": [{"port": 5432}]}})
    c.run(5)
    ip = c.get("services", "db")["spec"]["clusterIP"]
    view, restored = c.node("node-1").iptables_save(), c.node("node-1").iptables_restore_input()
    assert f'-A KUBE-SERVICES -d {ip}/32 -p tcp -m comment --comment "default/db has no endpoints" ' \
        "-m tcp --dport 5432 -j REJECT --reject-with icmp-port-unreachable\n" in view
    assert f"-d {ip} --dport 5432 -j REJECT\n" in restored
    assert ":KUBE-PROXY-CANARY - [0:0]" in view and view.count("*") == 3
    assert not c.route("db").ok and c.route("db").walk.verdict == "REJECT"
