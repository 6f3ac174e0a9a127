"""The node network as a packet sees it: a node view with its iptables, and the walk of one
request from a client to a pod (c.node, c.route). Part of the wiring, like faults.py: it
reads the nodes' kernels (kubelab.proxy.IPTables) and container runtimes, the world outside
the API.

A route: the name is resolved as the client pod's resolver would (kubelab.cluster.dns), the packet
(to a ClusterIP, a node's NodePort, an external IP or a load-balancer IP) walks the client
node's rules (nat PREROUTING for a pod, OUTPUT for the node itself) to a DNAT, and the pod
at that address answers only if it is really there: its node is up, its sandbox is ready and
a container runs and would pass a readiness probe now. Stale rules (a crashed kube-proxy)
send packets to pods that are gone.

After the DNAT, kindnet's network-policy controller (kubelab/proxy/networkpolicy/) judges the
connection's first packet: the policies selecting the source pod (Egress) and the destination
pod (Ingress). A dropped packet is a timeout to the client, and the route names the policies.

kubelab departs: the controller reads pods, namespaces and NetworkPolicies through the API
when a packet comes (what it last read when the API cannot answer), not from per-node
informers; cluster DNS is not packets here, so an egress default-deny does not stop lookups.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubelab.api.errors import ApiError
from kubelab.cluster.dns import Answer, resolve
from kubelab.kubelet.process import HttpAnswer
from kubelab.kubelet.runtime import RUNNING, SANDBOX_READY
from kubelab.proxy.iptables import IPTables, Packet, Walk
from kubelab.proxy.networkpolicy import Packet as PolicyPacket
from kubelab.proxy.networkpolicy import Verdict, evaluate_packet

if TYPE_CHECKING:
    from kubelab.cluster import Cluster

__all__ = ["NetworkPolicies", "NodeView", "PodNetwork", "Route", "pod_serving", "route"]


@dataclass
class NodeView:
    """c.node("node-1"): what you would see logged into the node."""

    name: str
    iptables: IPTables
    cluster: Any = field(repr=False)

    def iptables_save(self) -> str:
        """`iptables-save` on the node: its tables as the kernel gives them back (each rule in
        iptables-save's canonical form), kube-proxy's jumps and canary chains included."""
        return self.iptables.iptables_save() or "# no rules: kube-proxy has not run on this node\n"

    def iptables_restore_input(self) -> str:
        """What kube-proxy last fed to iptables-restore on this node (its log at -v=9 shows it):
        its own chains, as it writes them."""
        return self.iptables.last_restore_input or "# kube-proxy has not synced on this node\n"

    @property
    def kube_proxy(self) -> Any:
        return self.cluster.components.get(f"kube-proxy/{self.name}")

    @property
    def ip(self) -> str:
        return self.iptables.node_ip

    def __repr__(self) -> str:
        synced = self.iptables.restored_at
        state = "running" if self.kube_proxy is not None else "not running"
        when = f"rules from t={synced:.1f}s" if synced is not None else "no rules"
        return f"<Node {self.name} {self.ip}: kube-proxy {state}, {when}>"


@dataclass
class Route:
    target: str
    node: str
    dns: Answer | None
    walk: Walk
    destination: str = ""     # ip:port the packet went to
    pod: str = ""             # namespace/name of the pod at that address, if the API knows one
    ok: bool = False
    reason: str = ""
    policy: Verdict | None = None   # kindnet's NetworkPolicy verdict, when a policy was asked

    def __str__(self) -> str:
        lines = [f"request {self.target} from node {self.node}"]
        if self.dns is not None:
            lines.append(f"  dns: {self.dns}".replace("\n", "\n       "))
        for step in self.walk.steps:
            lines.append(f"  {step.table}/{step.chain}: {step.rule}")
        if self.policy is not None:
            lines.append(f"  kindnet: {self.policy.reason}")
        outcome = f"-> {self.destination} ({self.pod or 'no pod'})" if self.destination else \
            f"-> {self.walk.verdict}"
        lines.append(f"  {outcome}: {'ok' if self.ok else 'FAILED: ' + self.reason}")
        return "\n".join(lines)


def pod_serving(cluster: Cluster, ip: str) -> tuple[bool, str]:
    """Does something answer at ip? The runtimes know, not the API."""
    for runtime in cluster.runtimes.values():
        for sandbox in runtime.sandboxes.values():
            if sandbox.ip != ip or sandbox.state != SANDBOX_READY:
                continue
            if not runtime.powered:
                return False, f"node {runtime.node} is down"
            now = cluster.clock.now
            running = [c for c in runtime.pod_containers(sandbox.pod_uid) if c.state == RUNNING]
            if not running:
                return False, "connection refused: no container is running"
            if not any(c.workload.responds("readiness", now - (c.started_at or now)) for c in running):
                return False, "the application does not answer yet (or any more)"
            return True, ""
    return False, f"no route to host {ip}: no pod has this address"


def route(cluster: Cluster, target: str, *, from_pod: str | None = None, from_node: str | None = None,
          port: int | None = None, namespace: str = "default", rand: random.Random | None = None,
          dns_client: Any = None) -> Route:
    """Walk one request to target (a Service name, a DNS name or an IP) from a pod or a node."""
    rand = rand if rand is not None else cluster.route_rand
    src, node, ns = "", from_node or "", namespace
    if from_pod is not None:
        pod = cluster.get("pods", from_pod, namespace=namespace)
        src, node = (pod.get("status") or {}).get("podIP", ""), (pod.get("spec") or {}).get("nodeName", "")
        ns = pod["metadata"].get("namespace", namespace)
    node = node or cluster.node_names[0]
    iptables = cluster.iptables[node]
    src = src or iptables.node_ip
    host, _, port_text = target.partition(":")
    dns = None
    if not _is_ip(host):
        dns = resolve(dns_client or cluster.client, host, ns, coredns=cluster.anatomy)
        if not dns.addresses:
            return Route(target, node, dns, Walk(verdict="NXDOMAIN"), reason="no such host")
        host = dns.addresses[0]
    dport = int(port_text) if port_text else (port or _service_port(cluster, host))
    local = from_pod is None
    # A node's own address (a NodePort): the packet is handled by that node's rules, arriving
    # from outside unless the client is on that very node.
    target_node = next((n for n, t in cluster.iptables.items() if t.node_ip == host), None)
    if target_node is not None and target_node != node:
        node, iptables, local = target_node, cluster.iptables[target_node], False
    walk = iptables.walk(Packet(src, host, dport), rand, cluster.clock.now, local=local)
    if walk.verdict in ("REJECT", "DROP"):
        # the rule's comment says why: "default/web:http has no (local) endpoints"
        why = walk.steps[-1].rule.split('"')[1] if walk.steps and '"' in walk.steps[-1].rule \
            else "the Service has no endpoints"
        return Route(target, node, dns, walk, reason=f"{walk.verdict} ({why})")
    destination = walk.destination or f"{host}:{dport}"
    ip = destination.rsplit(":", 1)[0]
    verdict = cluster.network_policies.verdict(src, destination)
    if verdict is not None and not verdict.allowed:
        return Route(target, node, dns, walk, destination, _pod_at(cluster, ip), False,
                     f"timeout ({verdict.reason})", verdict)
    ok, reason = pod_serving(cluster, ip)
    return Route(target, node, dns, walk, destination, _pod_at(cluster, ip), ok, reason, verdict)


def _is_ip(text: str) -> bool:
    parts = text.split(".")
    return len(parts) == 4 and all(p.isdigit() for p in parts)


def _service_port(cluster: Cluster, ip: str) -> int:
    """The first port of the Service at ip: its clusterIP, an externalIP or a load-balancer IP."""
    for svc in cluster.get("services", namespace=None):
        spec = svc.get("spec") or {}
        ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
        if spec.get("ports") and (spec.get("clusterIP") == ip or ip in (spec.get("externalIPs") or [])
                                  or any(i.get("ip") == ip for i in ingress)):
            return int(spec["ports"][0]["port"])
    return 80


def _pod_at(cluster: Cluster, ip: str) -> str:
    """The name the API gives the pod at ip, for the record: "" when no pod has it or the API
    cannot answer now (etcd without a quorum), which the packet itself never needed."""
    try:
        pods = cluster.get("pods", namespace=None, field_selector=f"status.podIP={ip}")
    except ApiError:
        return ""
    for pod in pods:
        return f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"
    return ""


class NetworkPolicies:
    """kindnet's view of the API for its network-policy controller (the Listers it evaluates
    with): pods, namespaces and NetworkPolicies, read when a packet comes; what it read last
    when the API cannot answer (its informers would keep their caches). c.network_policies."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._pods: list[dict[str, Any]] = []
        self._namespaces: list[dict[str, Any]] = []
        self._policies: list[dict[str, Any]] = []
        self.verdicts = 0      # packets judged (a policy existed)
        self.dropped = 0

    def pods(self) -> list[dict[str, Any]]:
        return self._pods

    def namespaces(self) -> list[dict[str, Any]]:
        return self._namespaces

    def network_policies(self, namespace: str) -> list[dict[str, Any]]:
        return [p for p in self._policies if p["metadata"].get("namespace") == namespace]

    def _refresh(self) -> None:
        try:
            self._policies = self.cluster.get("networkpolicies", namespace=None)
            if self._policies:
                self._pods = self.cluster.get("pods", namespace=None)
                self._namespaces = self.cluster.get("namespaces", namespace=None)
        except ApiError:
            pass   # the API cannot answer: keep enforcing what was read last

    def verdict(self, src_ip: str, destination: str, proto: str = "TCP") -> Verdict | None:
        """The verdict on a connection from src_ip to destination (ip:port, after DNAT); None
        when no NetworkPolicy exists at all (nothing to ask: every packet is allowed)."""
        self._refresh()
        if not self._policies:
            return None
        ip, _, port = destination.rpartition(":")
        verdict = evaluate_packet(self, PolicyPacket(src_ip, 0, ip, int(port or 0), proto))
        self.verdicts += 1
        self.dropped += not verdict.allowed
        return verdict


class PodNetwork:
    """The network a container's programs reach (wget, curl, nslookup: the runtime's
    ContainerNetwork): names resolve as the pod's resolver does (cluster/dns.py), a packet
    walks kube-proxy's rules on the source pod's node (a REJECT is `Connection refused`, a
    DROP or an address nobody has times out), and the pod at the end answers with the server
    it runs (ContainerRuntime.serve_http)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.rand = random.Random(f"{cluster.seed}/pod-network")

    def resolve(self, namespace: str, name: str) -> tuple[str, list[str], str]:
        answer = resolve(self.cluster.client, name, namespace, coredns=self.cluster.anatomy)
        return answer.name, list(answer.addresses), answer.error

    def http_get(self, source_ip: str, ip: str, port: int, path: str, user_agent: str
                 ) -> HttpAnswer:
        cluster = self.cluster
        if ip == "127.0.0.1":  # the pod's own loopback: its own containers answer
            ip = source_ip
        node = next((r.node for r in cluster.runtimes.values()
                     if any(s.ip == source_ip for s in r.sandboxes.values())), cluster.node_names[0])
        walk = cluster.iptables[node].walk(Packet(source_ip, ip, port), self.rand, cluster.clock.now)
        if walk.verdict == "REJECT":
            return HttpAnswer(error="refused")
        if walk.verdict == "DROP":
            return HttpAnswer(error="timeout")
        destination = walk.destination or f"{ip}:{port}"
        dest_ip, _, dest_port = destination.rpartition(":")
        verdict = cluster.network_policies.verdict(source_ip, destination)
        if verdict is not None and not verdict.allowed:
            return HttpAnswer(error="timeout")   # kindnet dropped the SYN: nothing answers
        for runtime in cluster.runtimes.values():
            if any(s.ip == dest_ip for s in runtime.sandboxes.values()):
                return runtime.serve_http(dest_ip, int(dest_port or port), path, source_ip, user_agent)
        return HttpAnswer(error="timeout")
