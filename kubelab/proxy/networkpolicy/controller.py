"""kindnet's network-policy controller: the verdict on the first packet of a connection, in
the shape of kube-network-policies' pkg/networkpolicy/controller.go (evaluatePacket,
getPodAssignedToIP). Upstream queues a connection's first packet to userspace (nfqueue) after
kube-proxy's DNAT, so the destination is already a pod's address; it evaluates Egress for the
source pod, then Ingress for the destination pod, and drops the packet when either denies.
Later packets of an accepted connection (the replies too) ride conntrack and are not asked.

A Verdict says why, naming the policies: `c.route(...)` prints it and notebook 09 shows it.
Admin and baseline admin network policies (policy.networking.k8s.io) are not served by
kubelab, so their steps of upstream's pipeline are absent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubelab.proxy.networkpolicy.networkpolicy import Listers, evaluator, get_network_policies_for_pod

__all__ = ["Packet", "Verdict", "evaluate_packet", "get_pod_assigned_to_ip"]

Object = dict[str, Any]


@dataclass(frozen=True)
class Packet:
    """The first packet of a connection, as nfqueue hands it over (after DNAT)."""

    src_ip: str
    src_port: int
    dst_ip: str
    dst_port: int
    proto: str = "TCP"

    def __str__(self) -> str:
        return f"{self.src_ip}:{self.src_port} -> {self.dst_ip}:{self.dst_port}/{self.proto}"


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    direction: str = ""                 # "Egress" or "Ingress": the direction that denied
    pod: str = ""                       # namespace/name of the pod that direction protects
    # namespace/name of each isolating policy: of the direction that denied, or of both
    policies: tuple[str, ...] = field(default=())

    @property
    def reason(self) -> str:
        """Why: the policies that dropped the packet, or those whose rules let it through."""
        if self.allowed:
            if not self.policies:
                return "no NetworkPolicy isolates these pods: allowed"
            return ("isolated by " + ", ".join(f"NetworkPolicy {p}" for p in self.policies)
                    + "; a rule of one of them allows it")
        names = ", ".join(f"NetworkPolicy {p}" for p in self.policies)
        way = "egress from" if self.direction == "Egress" else "ingress to"
        return f"dropped by {names}: no rule allows {way} pod {self.pod}"


def _key(obj: Object) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def get_pod_assigned_to_ip(listers: Listers, ip: str) -> Object | None:
    """getPodAssignedToIP: the running pod with that address; host-network pods share the
    node's address and are not pods to a policy, and finished pods gave theirs back."""
    for pod in listers.pods():
        spec, status = pod.get("spec") or {}, pod.get("status") or {}
        if spec.get("hostNetwork") or status.get("phase") in ("Succeeded", "Failed"):
            continue
        ips = [p.get("ip") for p in status.get("podIPs") or []] or [status.get("podIP")]
        if ip in ips:
            return pod
    return None


def _isolating(policies: list[Object], policy_type: str) -> tuple[str, ...]:
    return tuple(_key(p) for p in policies if policy_type in ((p.get("spec") or {}).get("policyTypes") or []))


def evaluate_packet(listers: Listers, p: Packet) -> Verdict:
    """evaluatePacket: Egress for the source pod, then Ingress for the destination pod."""
    src_pod = get_pod_assigned_to_ip(listers, p.src_ip)
    dst_pod = get_pod_assigned_to_ip(listers, p.dst_ip)
    src_policies = get_network_policies_for_pod(listers, src_pod)
    if not evaluator(listers, src_policies, "Egress", src_pod, p.dst_port, dst_pod, p.dst_ip, p.proto):
        return Verdict(False, "Egress", _key(src_pod or {}), _isolating(src_policies, "Egress"))
    dst_policies = get_network_policies_for_pod(listers, dst_pod)
    if not evaluator(listers, dst_policies, "Ingress", dst_pod, p.dst_port, src_pod, p.src_ip, p.proto):
        return Verdict(False, "Ingress", _key(dst_pod or {}), _isolating(dst_policies, "Ingress"))
    return Verdict(True, policies=_isolating(src_policies, "Egress") + _isolating(dst_policies, "Ingress"))
