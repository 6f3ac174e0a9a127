"""`kubectl describe networkpolicy` (k8s.io/kubectl pkg/describe/describe.go:
describeNetworkPolicy, describeNetworkPolicySpec, getPolicyType,
printNetworkPolicySpecIngressFrom, printNetworkPolicySpecEgressTo, policyTypesToString).
NetworkPolicies have no events in describe, as upstream's describer asks for none."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ParseError
from kubelab.api.labels import selector_from_label_selector
from kubelab.api.meta import epoch, parse_time
from kubelab.client.client import Client
from kubelab.kubectl.describe.describe import annotations_multiline, labels_multiline
from kubelab.kubectl.tabwriter import PrefixWriter

__all__ = ["NETWORKING_DESCRIBERS", "describe_network_policy"]


def _go_time(timestamp: str | None) -> str:
    """A metav1.Time printed with %s: Go's time.Time.String(), "2006-01-02 15:04:05 -0700 MST"."""
    if not timestamp:
        return "0001-01-01 00:00:00 +0000 UTC"
    t = epoch() + timedelta(seconds=parse_time(timestamp))
    return t.strftime("%Y-%m-%d %H:%M:%S +0000 UTC")


def format_label_selector(selector: Any) -> str:
    """metav1.FormatLabelSelector: the selector's string, "<none>" when it selects everything."""
    try:
        text = str(selector_from_label_selector(selector))
    except ParseError:
        return "<error>"
    return text or "<none>"


def _port(port: Object) -> str:
    """One "To Port" line's value: the port (an IntOrString printed with %s; <nil> when absent),
    a range with endPort, then the protocol (TCP when unset)."""
    number = "<nil>" if port.get("port") is None else str(port["port"])
    proto = port.get("protocol") or "TCP"
    if port.get("endPort") is None:
        return f"To Port: {number}/{proto}"
    return f"To Port Range: {number}-{port['endPort']}/{proto}"


def _peers(w: PrefixWriter, peers: list[Object], title: str, indent: str) -> None:
    for peer in peers:
        w.write(0, f"{indent}{title}:\n")
        pods, namespaces, block = peer.get("podSelector"), peer.get("namespaceSelector"), peer.get("ipBlock")
        if pods is not None and namespaces is not None:
            w.write(1, f"{indent}NamespaceSelector: {format_label_selector(namespaces)}\n")
            w.write(1, f"{indent}PodSelector: {format_label_selector(pods)}\n")
        elif pods is not None:
            w.write(1, f"{indent}PodSelector: {format_label_selector(pods)}\n")
        elif namespaces is not None:
            w.write(1, f"{indent}NamespaceSelector: {format_label_selector(namespaces)}\n")
        elif block is not None:
            w.write(1, f"{indent}IPBlock:\n")
            w.write(2, f"{indent}CIDR: {block.get('cidr', '')}\n")
            w.write(2, f"{indent}Except: {', '.join(block.get('except') or [])}\n")


def _rules(w: PrefixWriter, rules: list[Object], direction: str, indent: str) -> None:
    """printNetworkPolicySpecIngressFrom / printNetworkPolicySpecEgressTo."""
    if not rules:
        w.write(0, f"{indent}<none> (Selected pods are isolated for {direction} connectivity)\n")
        return
    peers_key, title, unrestricted = (("from", "From", "From: <any> (traffic not restricted by source)")
                                      if direction == "ingress" else
                                      ("to", "To", "To: <any> (traffic not restricted by destination)"))
    for i, rule in enumerate(rules):
        ports = rule.get("ports") or []
        if not ports:
            w.write(0, f"{indent}To Port: <any> (traffic allowed to all ports)\n")
        for port in ports:
            w.write(0, f"{indent}{_port(port)}\n")
        if not rule.get(peers_key):
            w.write(0, f"{indent}{unrestricted}\n")
        else:
            _peers(w, rule[peers_key], title, indent)
        if i != len(rules) - 1:
            w.write(0, f"{indent}----------\n")


def describe_network_policy_spec(w: PrefixWriter, spec: Object) -> None:
    w.write(0, "Spec:\n")
    w.write(1, "PodSelector: ")
    selector = spec.get("podSelector") or {}
    if not selector.get("matchLabels") and not selector.get("matchExpressions"):
        w.write(2, "<none> (Allowing the specific traffic to all pods in this namespace)\n")
    else:
        w.write(2, f"{format_label_selector(selector)}\n")
    types = spec.get("policyTypes") or []
    for direction, key in (("ingress", "Ingress"), ("egress", "Egress")):
        if key in types:
            w.write(1, f"Allowing {direction} traffic:\n")
            _rules(w, spec.get(direction) or [], direction, "    ")
        else:
            w.write(1, f"Not affecting {direction} traffic\n")
    w.write(1, f"Policy Types: {', '.join(types) or '<none>'}\n")


def describe_network_policy(client: Client, policy: Object, events: list[Object], now: float) -> str:
    meta = policy["metadata"]
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta['name']}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    w.write(0, f"Created on:\t{_go_time(meta.get('creationTimestamp'))}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    describe_network_policy_spec(w, policy.get("spec") or {})
    return w.text()


NETWORKING_DESCRIBERS = {"networkpolicies": describe_network_policy}
