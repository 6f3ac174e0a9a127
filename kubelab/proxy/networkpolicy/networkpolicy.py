"""The NetworkPolicy verdict for one packet, in the shape of kube-network-policies'
pkg/networkpolicy/networkpolicy.go (kubernetes-sigs/kube-network-policies, the policy engine
kindnet runs since kind 0.24): getNetworkPoliciesForPod, evaluator, evaluateIngress,
evaluateEgress, evaluateSelectors, evaluateIPBlocks, evaluatePorts, in that order.

The API's semantics (k8s.io/api networking/v1 types.go), as those functions apply them:

- a pod selected by no policy of a direction allows everything in that direction;
- a policy isolates the pods its podSelector picks, for each of its policyTypes (defaulted by
  the API server: Ingress, plus Egress when egress rules are given); an isolating policy with
  no rules allows nothing (a default deny);
- the rules of every policy that isolates a pod are added together: one matching rule allows;
- a rule matches when one of its ports matches (none given: every port) and one of its peers
  does (none given: every peer); a peer is an ipBlock (cidr minus except), or pods by
  podSelector in the policy's namespace, or pods in the namespaces namespaceSelector picks, or
  both selectors at once;
- a named port is the protected pod's container port of that name; endPort makes a range.

kubelab departs: a policy's `ingress: []` (or `egress: []`) isolates, as the API documents and
as a real cluster stores it (the field is omitempty, so an empty list is never stored);
upstream's unit tests build a Go slice that is empty but not nil, which only a test can make.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from kubelab.api.errors import ParseError
from kubelab.api.labels import selector_from_label_selector

__all__ = ["Listers", "evaluate_egress", "evaluate_ingress", "evaluate_ip_blocks", "evaluate_ports",
           "evaluate_selectors", "evaluator", "get_network_policies_for_pod"]

Object = dict[str, Any]


class Listers(Protocol):
    """What the controller's informers hold: its pod, namespace and networkpolicy listers."""

    def pods(self) -> Sequence[Object]: ...
    def namespaces(self) -> Sequence[Object]: ...
    def network_policies(self, namespace: str) -> Sequence[Object]: ...


def _labels(obj: Mapping[str, Any] | None) -> Mapping[str, str]:
    return ((obj or {}).get("metadata") or {}).get("labels") or {}


def _matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool | None:
    """LabelSelectorAsSelector(...).Matches(labels); None when the selector does not parse
    (the API validated it, so only a hand-made object gets here)."""
    try:
        return selector_from_label_selector(selector or {}).matches(labels)
    except ParseError:
        return None


def get_network_policies_for_pod(listers: Listers, pod: Object | None) -> list[Object]:
    """getNetworkPoliciesForPod: the policies of the pod's namespace whose podSelector picks it
    (an empty podSelector picks every pod of the namespace)."""
    if pod is None:
        return []
    meta = pod.get("metadata") or {}
    result = []
    for policy in listers.network_policies(meta.get("namespace", "")):
        if _matches((policy.get("spec") or {}).get("podSelector"), _labels(pod)):
            result.append(policy)
    return result


def evaluator(listers: Listers, network_policies: Sequence[Object], policy_type: str,
              pod: Object | None, port: int, peer_pod: Object | None, peer_ip: str,
              proto: str) -> bool:
    """evaluator: the verdict of the policies selecting `pod` in one direction. For Egress,
    `pod` sends to peer_pod/peer_ip on `port`; for Ingress, `pod` receives from them on its
    `port`. No policy of that direction: allowed; otherwise one matching rule allows."""
    verdict = True
    for policy in network_policies:
        spec = policy.get("spec") or {}
        if policy_type not in (spec.get("policyTypes") or []):
            continue
        # one policy of this direction selects the pod: it is isolated, deny unless a rule allows
        verdict = False
        namespace = (policy.get("metadata") or {}).get("namespace", "")
        if policy_type == "Egress":
            rules = spec.get("egress") or []
            if rules and evaluate_egress(listers, namespace, rules, peer_pod, peer_ip, port, proto):
                return True
        else:
            rules = spec.get("ingress") or []
            if rules and evaluate_ingress(listers, namespace, rules, pod, port, peer_pod, peer_ip,
                                          proto):
                return True
    return verdict


def evaluate_ingress(listers: Listers, netpol_namespace: str, ingress_rules: Sequence[Object],
                     pod: Object | None, port: int, src_pod: Object | None, src_ip: str,
                     proto: str) -> bool:
    """evaluateIngress: does one rule let src_pod/src_ip reach `pod` on its `port`?"""
    for rule in ingress_rules:
        if not evaluate_ports(rule.get("ports") or [], pod, port, proto):
            continue
        if _peers_match(listers, netpol_namespace, rule.get("from") or [], src_pod, src_ip):
            return True
    return False


def evaluate_egress(listers: Listers, netpol_namespace: str, egress_rules: Sequence[Object],
                    dst_pod: Object | None, dst_ip: str, dst_port: int, proto: str) -> bool:
    """evaluateEgress: does one rule let the pod send to dst_pod/dst_ip on dst_port?"""
    for rule in egress_rules:
        if not evaluate_ports(rule.get("ports") or [], dst_pod, dst_port, proto):
            continue
        if _peers_match(listers, netpol_namespace, rule.get("to") or [], dst_pod, dst_ip):
            return True
    return False


def _peers_match(listers: Listers, netpol_namespace: str, peers: Sequence[Object],
                 peer_pod: Object | None, peer_ip: str) -> bool:
    """The loop over a rule's `from` (or `to`): no peers match everything; an ipBlock matches
    the address; selectors match pods only (traffic from outside matches no selector)."""
    if not peers:
        return True
    for peer in peers:
        if peer.get("ipBlock") is not None:
            if evaluate_ip_blocks(peer["ipBlock"], peer_ip):
                return True
            continue
        if peer_pod is None:
            continue
        selectors = peer.get("podSelector"), peer.get("namespaceSelector")
        if selectors != (None, None) and evaluate_selectors(listers, *selectors, peer_pod,
                                                            netpol_namespace):
            return True
    return False


def evaluate_selectors(listers: Listers, peer_pod_selector: Mapping[str, Any] | None,
                       peer_ns_selector: Mapping[str, Any] | None, pod: Object | None,
                       policy_namespace: str) -> bool:
    """evaluateSelectors: podSelector alone picks pods of the policy's own namespace;
    namespaceSelector alone every pod of the namespaces it picks ({}: all of them); both
    together, the pods podSelector picks in those namespaces. A selector that does not parse
    accepts the packet, as upstream's does."""
    if pod is None:
        return True
    if peer_pod_selector is not None:
        matched = _matches(peer_pod_selector, _labels(pod))
        if matched is None:
            return True
        if not matched:
            return False
        if peer_ns_selector is None:
            return (pod.get("metadata") or {}).get("namespace") == policy_namespace
    if peer_ns_selector is not None:
        if not peer_ns_selector.get("matchLabels") and not peer_ns_selector.get("matchExpressions"):
            return True
        namespace = (pod.get("metadata") or {}).get("namespace")
        for ns in listers.namespaces():
            if (ns.get("metadata") or {}).get("name") != namespace:
                continue
            return _matches(peer_ns_selector, _labels(ns)) is not False
        return False
    return True


def evaluate_ip_blocks(ip_block: Mapping[str, Any] | None, ip: str) -> bool:
    """evaluateIPBlocks: in cidr and in none of except."""
    if ip_block is None:
        return True
    try:
        address = ipaddress.ip_address(ip)
        if address not in ipaddress.ip_network(ip_block.get("cidr", ""), strict=False):
            return False
        return not any(address in ipaddress.ip_network(e, strict=False)
                       for e in ip_block.get("except") or [])
    except ValueError:     # validated by the API: only a hand-made object gets here
        return True


def _int_value(port: Any) -> int:
    """intstr.IntOrString.IntValue: a string that is not a number is 0."""
    if isinstance(port, int):
        return port
    try:
        return int(str(port))
    except ValueError:
        return 0


def evaluate_ports(network_policy_ports: Sequence[Object], pod: Object | None, port: int,
                   protocol: str) -> bool:
    """evaluatePorts: no ports match every port; else one of them matches by protocol and
    number, by name (a container port of the pod with that name, number and protocol), or by
    the range port..endPort."""
    if not network_policy_ports:
        return True
    for policy_port in network_policy_ports:
        if protocol != policy_port.get("protocol", "TCP"):
            continue
        wanted = policy_port.get("port")
        if wanted is None:
            return True
        if port == _int_value(wanted):
            return True
        if pod is not None and isinstance(wanted, str) and _int_value(wanted) == 0:
            for container in (pod.get("spec") or {}).get("containers") or []:
                for p in container.get("ports") or []:
                    if (p.get("name") == wanted and p.get("containerPort") == port
                            and p.get("protocol", "TCP") == protocol):
                        return True
        end_port = policy_port.get("endPort")
        if end_port is not None and _int_value(wanted) < port <= end_port:
            return True
    return False
