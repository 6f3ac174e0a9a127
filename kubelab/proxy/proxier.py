"""The iptables proxier's rules: from Services and EndpointSlices to iptables-restore text
(pkg/proxy/iptables/proxier.go syncProxyRules and writeServiceToEndpointRules; the maps it
reads are changetrackers.py's).

For each Service port (a ServicePortName, "default/web:http"), in upstream's order:
- KUBE-SERVICES sends its ClusterIP:port to KUBE-SVC-<hash> (or KUBE-SVL-<hash> with
  internalTrafficPolicy: Local); with no endpoints, the filter table REJECTs it instead (DROPs
  it with internalTrafficPolicy: Local and none on this node);
- its external IPs (spec.externalIPs) and load-balancer IPs, each with the port, and its
  NodePort (in KUBE-NODEPORTS) go to KUBE-EXT-<hash> when the Service has endpoints; when
  none may take external traffic (none at all: REJECT; none on this node with
  externalTrafficPolicy: Local: DROP), KUBE-EXTERNAL-SERVICES in the filter table says so;
- KUBE-EXT-<hash> masquerades and goes to KUBE-SVC; with externalTrafficPolicy: Local it
  keeps the client's address and goes to KUBE-SVL, except for pod and node-local traffic,
  which short-circuits to KUBE-SVC;
- KUBE-SVC-<hash> marks off-cluster traffic for masquerade, then picks one endpoint with the
  probability ladder: rule i of n matches with probability 1/(n-i), the last always, which
  gives every endpoint 1/n;
- KUBE-SEP-<hash> DNATs to the endpoint's ip:port (and marks hairpin traffic).
Endpoints used: the ready ones; when none is ready, the serving terminating ones
(ProxyTerminatingEndpoints), so a draining pod still answers.

Then the rest of the tables: KUBE-POSTROUTING and KUBE-MARK-MASQ, KUBE-FORWARD (accept
what is marked for masquerade, drop conntrack INVALID), KUBE-FIREWALL (the localhost guard of
--iptables-localhost-nodeports), and the nodeports jump last in KUBE-SERVICES. Service chains
the node still has but this sync no longer writes are flushed and deleted (-X).

This is the restore input (iptables-restore --noflush): kube-proxy's chains only, written as
kube-proxy writes them (`-j REJECT` bare, probabilities %0.10f, comments quoted by kube-proxy).
The jumps from the built-in chains are jump_chains.py's; what iptables-save then shows on the
node is iptables.py's and iptables_save.py's.

Not rendered (kubelab departs): the KUBE-FW chains and KUBE-PROXY-FIREWALL rules
(loadBalancerSourceRanges), the health-check node ports, nfacct counters (as on a kernel
without nfnetlink_acct: no localhost NodePort rule), conntrack cleanup, partial syncs and
IPv6: every sync writes every chain. A KUBE-SVL chain is declared only when it has endpoints
to send to.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from kubelab.proxy.changetrackers import (
    Endpoint,
    ServicePort,
    build_endpoints_map,
    build_service_map,
    categorize_endpoints,
)
from kubelab.proxy.iptables import port_proto_hash, service_port_endpoint_chain_name

__all__ = ["CLUSTER_CIDR", "Endpoint", "ServicePort", "build_endpoints_map", "build_service_map",
           "sync_proxy_rules", "write_service_to_endpoint_rules"]

CLUSTER_CIDR = "10.244.0.0/16"   # --cluster-cidr, for the local-traffic detector
MASQ = "0x4000"                  # --iptables-masquerade-bit 14
FILTER_CHAINS = ("KUBE-SERVICES", "KUBE-EXTERNAL-SERVICES", "KUBE-FORWARD", "KUBE-NODEPORTS",
                 "KUBE-PROXY-FIREWALL")
SERVICE_CHAIN_PREFIXES = ("KUBE-SVC-", "KUBE-SVL-", "KUBE-SEP-", "KUBE-FW-", "KUBE-EXT-")


def _comment(text: str) -> str:
    return f'"{text}"' if " " in text else text


def write_service_to_endpoint_rules(name: str, chain: str, endpoints: list[Endpoint],
                                    protocol: str = "tcp", affinity_seconds: int = 0) -> list[str]:
    """writeServiceToEndpointRules: the sticky rules (session affinity), then the ladder."""
    lines = []
    chains = [service_port_endpoint_chain_name(name, protocol, str(e)) for e in endpoints]
    if affinity_seconds:
        for e, sep in zip(endpoints, chains, strict=True):
            lines.append(f'-A {chain} -m comment --comment "{name} -> {e}" -m recent --name {sep} '
                         f"--rcheck --seconds {affinity_seconds} --reap -j {sep}")
    n = len(endpoints)
    for i, (e, sep) in enumerate(zip(endpoints, chains, strict=True)):
        probability = f" -m statistic --mode random --probability {1.0 / (n - i):0.10f}" \
            if i < n - 1 else ""
        lines.append(f'-A {chain} -m comment --comment "{name} -> {e}"{probability} -j {sep}')
    return lines


@dataclass
class Rules:
    nat_chains: list[str] = field(default_factory=lambda: [
        "KUBE-SERVICES", "KUBE-NODEPORTS", "KUBE-POSTROUTING", "KUBE-MARK-MASQ"])
    nat: list[str] = field(default_factory=list)
    filter: list[str] = field(default_factory=list)


def sync_proxy_rules(services: dict[str, ServicePort], endpoints: dict[str, list[Endpoint]],
                     node: str, cluster_cidr: str = CLUSTER_CIDR,
                     existing_nat_chains: Iterable[str] = ()) -> str:
    """syncProxyRules: the iptables-restore input for the filter and nat tables, as
    kube-proxy writes it. existing_nat_chains are the node's nat chains (upstream reads them
    with iptables-save): the service chains among them that this sync no longer writes are
    flushed and deleted (`-X`).

    kubelab departs: this is the part of syncProxyRules that writes the tables from the two maps;
    the maps' Update before it, ensure_jump_chains and the iptables-restore after it are
    KubeProxy's (server.py apply_and_restore), so this part can be read and tested alone."""
    r = Rules()
    node_ports: list[str] = []
    # Build rules for each service-port.
    for name in sorted(services):
        c = _policy_chains(services[name], endpoints.get(name, []), node)
        _capture_cluster_ip(r, c)
        _capture_external_ips(r, c)
        _capture_load_balancer_ingress(r, c)
        _capture_node_ports(r, c, node_ports)
        _set_up_external_traffic_handling(r, c, cluster_cidr)
        _set_up_policy_chains(r, c, cluster_cidr)
        _generate_endpoint_chains(r, c)
    active = set(r.nat_chains)
    stale = sorted(c for c in existing_nat_chains if c not in active and c.startswith(SERVICE_CHAIN_PREFIXES))
    return _render(r, node_ports, stale)


@dataclass(frozen=True)
class _Chains:
    """One service port's chains and the endpoints each sends to (the loop's locals upstream)."""

    svc: ServicePort
    match: str                      # "-m tcp -p tcp"
    cluster_chain: str              # KUBE-SVC-<hash>: clusterPolicyChain
    local_chain: str                # KUBE-SVL-<hash>: localPolicyChain
    ext_chain: str                  # KUBE-EXT-<hash>: externalTrafficChain
    internal_chain: str             # internalPolicyChain (KUBE-EXT picks its own)
    cluster_eps: list[Endpoint]
    local_eps: list[Endpoint]
    internal_eps: list[Endpoint]
    external_eps: list[Endpoint]    # externalPolicyEndpoints: hasExternalEndpoints
    has_external: bool              # ExternallyAccessible: a NodePort, external or LB IPs

    @property
    def has_endpoints(self) -> bool:
        """hasEndpoints: any endpoint this node may reach (the Local ones are among them)."""
        return bool(self.cluster_eps)

    def filter_target(self) -> tuple[str, str]:
        """The filter rules' comment and target for traffic with no endpoint to take it
        (internalTrafficFilterTarget, externalTrafficFilterTarget): REJECT when the Service
        has no endpoints at all, else DROP (none on this node, with a Local policy; for
        external traffic, what KUBE-EXT did not short-circuit)."""
        if self.has_endpoints:
            return "has no local endpoints", "DROP"
        return "has no endpoints", "REJECT"


def _policy_chains(svc: ServicePort, all_endpoints: list[Endpoint], node: str) -> _Chains:
    """Note the chains that will be used, and figure out the endpoints for Cluster and Local
    traffic policy."""
    hash_ = port_proto_hash(svc.name, svc.protocol)
    cluster_chain, local_chain = f"KUBE-SVC-{hash_}", f"KUBE-SVL-{hash_}"
    cluster_eps, local_eps = categorize_endpoints(all_endpoints, svc, node)
    return _Chains(svc, f"-m {svc.protocol} -p {svc.protocol}", cluster_chain, local_chain,
                   f"KUBE-EXT-{hash_}", local_chain if svc.internal_local else cluster_chain,
                   cluster_eps, local_eps, local_eps if svc.internal_local else cluster_eps,
                   local_eps if svc.external_local else cluster_eps,
                   bool(svc.node_port or svc.load_balancer_ips or svc.external_ips))


def _capture_cluster_ip(r: Rules, c: _Chains) -> None:
    """Capture the clusterIP: to the internal policy chain; with no endpoints at all, REJECT,
    and with internalTrafficPolicy: Local and none on this node, DROP, in the filter table."""
    svc = c.svc
    if c.internal_eps:
        r.nat.append(f'-A KUBE-SERVICES -m comment --comment "{svc.name} cluster IP" {c.match} '
                     f"-d {svc.cluster_ip} --dport {svc.port} -j {c.internal_chain}")
    else:
        what, verdict = c.filter_target()
        r.filter.append(f'-A KUBE-SERVICES -m comment --comment "{svc.name} {what}" '
                        f"{c.match} -d {svc.cluster_ip} --dport {svc.port} -j {verdict}")


def _capture_external_ips(r: Rules, c: _Chains) -> None:
    """Capture externalIPs: each spec.externalIPs address and the port to KUBE-EXT when the
    Service has endpoints; with none for external traffic (none at all, or none on this node
    with externalTrafficPolicy: Local), REJECT or DROP in KUBE-EXTERNAL-SERVICES."""
    _capture_external_addresses(r, c, c.svc.external_ips, "external IP")


def _capture_load_balancer_ingress(r: Rules, c: _Chains) -> None:
    """Capture load-balancer ingress: each status.loadBalancer.ingress IP, as externalIPs."""
    _capture_external_addresses(r, c, c.svc.load_balancer_ips, "loadbalancer IP")


def _capture_external_addresses(r: Rules, c: _Chains, ips: tuple[str, ...], kind: str) -> None:
    name, port = c.svc.name, c.svc.port
    what, verdict = c.filter_target()
    for ip in ips:
        if c.has_endpoints:
            r.nat.append(f'-A KUBE-SERVICES -m comment --comment "{name} {kind}" {c.match} '
                         f"-d {ip} --dport {port} -j {c.ext_chain}")
        if not c.external_eps:
            r.filter.append(f'-A KUBE-EXTERNAL-SERVICES -m comment --comment "{name} {what}" '
                            f"{c.match} -d {ip} --dport {port} -j {verdict}")


def _capture_node_ports(r: Rules, c: _Chains, node_ports: list[str]) -> None:
    """Capture nodeports: KUBE-NODEPORTS to KUBE-EXT, else DROP (endpoints, none local) or
    REJECT (none at all) in KUBE-EXTERNAL-SERVICES."""
    svc = c.svc
    if not svc.node_port:
        return
    if c.has_endpoints:
        node_ports.append(f"-A KUBE-NODEPORTS -m comment --comment {_comment(svc.name)} {c.match} "
                          f"--dport {svc.node_port} -j {c.ext_chain}")
    if c.external_eps:
        return
    what, verdict = c.filter_target()
    r.filter.append(f'-A KUBE-EXTERNAL-SERVICES -m comment --comment "{svc.name} {what}" '
                    f"-m addrtype --dst-type LOCAL {c.match} --dport {svc.node_port} -j {verdict}")


def _set_up_external_traffic_handling(r: Rules, c: _Chains, cluster_cidr: str) -> None:
    """Set up external traffic handling (usesExternalTrafficChain: externally accessible, with
    endpoints): KUBE-EXT masquerades, then goes to the cluster chain; with
    externalTrafficPolicy: Local, pod and node-local traffic short-circuit to the cluster chain
    and the rest goes to the local one, if this node has local endpoints (if not, it falls
    through to KUBE-EXTERNAL-SERVICES' DROP)."""
    if not (c.has_external and c.has_endpoints):
        return
    name, ext = c.svc.name, c.ext_chain
    r.nat_chains.append(ext)
    if c.svc.external_local:
        r.nat += [
            f'-A {ext} -m comment --comment "pod traffic for {name} external destinations" '
            f"-s {cluster_cidr} -j {c.cluster_chain}",
            f'-A {ext} -m comment --comment "masquerade LOCAL traffic for {name} external '
            f'destinations" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ',
            f'-A {ext} -m comment --comment "route LOCAL traffic for {name} external '
            f'destinations" -m addrtype --src-type LOCAL -j {c.cluster_chain}']
        r.nat += [f"-A {ext} -j {c.local_chain}"] if c.external_eps else []
    else:
        r.nat += [f'-A {ext} -m comment --comment "masquerade traffic for {name} external '
                  f'destinations" -j KUBE-MARK-MASQ', f"-A {ext} -j {c.cluster_chain}"]


def _set_up_policy_chains(r: Rules, c: _Chains, cluster_cidr: str) -> None:
    """Set up internal traffic handling (traffic from outside the pod network to the cluster IP
    is masqueraded first), in the Cluster policy chain if it is in use (UsesClusterEndpoints:
    internal policy Cluster, or any external access at all), then the Local one: each ends
    with the ladder to its endpoints."""
    svc = c.svc
    masq = f'-A {c.internal_chain} -m comment --comment "{svc.name} cluster IP" {c.match} ' \
        f"-d {svc.cluster_ip} --dport {svc.port} ! -s {cluster_cidr} -j KUBE-MARK-MASQ"
    if c.cluster_eps and (not svc.internal_local or c.has_external):
        r.nat_chains.append(c.cluster_chain)
        r.nat += [masq] if c.internal_chain == c.cluster_chain else []
        r.nat += write_service_to_endpoint_rules(svc.name, c.cluster_chain, c.cluster_eps,
                                                 svc.protocol, svc.affinity_seconds)
    if (svc.internal_local or svc.external_local) and c.local_eps:
        r.nat_chains.append(c.local_chain)
        r.nat += [masq] if c.internal_chain == c.local_chain else []
        r.nat += write_service_to_endpoint_rules(svc.name, c.local_chain, c.local_eps,
                                                 svc.protocol, svc.affinity_seconds)


def _generate_endpoint_chains(r: Rules, c: _Chains) -> None:
    """Generate the per-endpoint chains: KUBE-SEP marks hairpin traffic, then DNATs."""
    name, seen = c.svc.name, set()
    for e in [*c.cluster_eps, *c.local_eps]:
        sep = service_port_endpoint_chain_name(name, c.svc.protocol, str(e))
        if sep in seen:
            continue
        seen.add(sep)
        r.nat_chains.append(sep)
        sticky = f" -m recent --name {sep} --set" if c.svc.affinity_seconds else ""
        r.nat += [f"-A {sep} -m comment --comment {_comment(name)} -s {e.ip} -j KUBE-MARK-MASQ",
                  f"-A {sep} -m comment --comment {_comment(name)}{sticky} {c.match} -j DNAT "
                  f"--to-destination {e}"]


def _render(r: Rules, node_ports: list[str], stale: list[str]) -> str:
    """The iptables-restore input: the filter table, then nat; chain lines first, then rules.
    Only kube-proxy's own chains: the jumps to them from the built-in chains are
    ensure_jump_chains', outside the restore (which runs with --noflush)."""
    nat_chains = list(dict.fromkeys([*r.nat_chains, *stale]))
    nat = ["*nat", *(f":{c} - [0:0]" for c in nat_chains),
           f"-A KUBE-POSTROUTING -m mark ! --mark {MASQ}/{MASQ} -j RETURN",
           f"-A KUBE-POSTROUTING -j MARK --xor-mark {MASQ}",
           '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" '
           "-j MASQUERADE --random-fully",
           f"-A KUBE-MARK-MASQ -j MARK --or-mark {MASQ}",
           *r.nat, *node_ports, *(f"-X {c}" for c in stale),
           '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be '
           'the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS',
           "COMMIT"]
    filt = ["*filter", *(f":{c} - [0:0]" for c in FILTER_CHAINS), ":KUBE-FIREWALL - [0:0]",
            '-A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" '
            "-d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP",
            *r.filter,
            "-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP",
            '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" '
            f"-m mark --mark {MASQ}/{MASQ} -j ACCEPT",
            '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" '
            "-m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
            "COMMIT"]
    return "\n".join([*filt, *nat]) + "\n"
