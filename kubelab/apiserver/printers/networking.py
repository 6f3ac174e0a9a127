"""The Tables of Ingress, IngressClass and NetworkPolicy: kubernetes
pkg/printers/internalversion/printers.go (printIngress with formatHosts, formatPorts and
ingressLoadBalancerStatusStringer; printIngressClass; printNetworkPolicy with
metav1.FormatLabelSelector)."""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.apiserver.printers.tablegenerator import TableGenerator, column
from kubelab.apiserver.printers.tablegenerator import translate_timestamp_since as _age

__all__ = ["add_handlers", "format_label_selector"]

LOAD_BALANCER_WIDTH = 16


def _format_hosts(rules: Any) -> str:
    """formatHosts: up to three hosts ("*" for a rule without one), then "+ N more..."."""
    hosts = [str(r.get("host") or "*") for r in rules or [] if isinstance(r, dict)]
    if not hosts:
        return "*"
    more = len(hosts) - 3
    text = ",".join(hosts[:3])
    return f"{text} + {more} more..." if more > 0 else text


def _ingress_row(ing: Object, now: float, wide: bool = False) -> list[str]:
    spec, status = ing.get("spec") or {}, ing.get("status") or {}
    entries = ((status.get("loadBalancer") or {}).get("ingress")) or []
    address = ",".join(str(e.get("ip") or e.get("hostname") or "") for e in entries if isinstance(e, dict))
    if len(address) > LOAD_BALANCER_WIDTH and not wide:
        address = address[:LOAD_BALANCER_WIDTH - 3] + "..."
    ports = "80, 443" if spec.get("tls") else "80"
    return [ing["metadata"]["name"], str(spec.get("ingressClassName") or "<none>"),
            _format_hosts(spec.get("rules")), address, ports, _age(ing, now)]


def _ingress_class_row(ic: Object, now: float) -> list[str]:
    params = (ic.get("spec") or {}).get("parameters")
    text = "<none>"
    if params:
        text = str(params.get("kind", ""))
        if params.get("apiGroup"):
            text += "." + str(params["apiGroup"])
        text += "/" + str(params.get("name", ""))
    return [ic["metadata"]["name"], str((ic.get("spec") or {}).get("controller") or ""), text,
            _age(ic, now)]


def format_label_selector(selector: Any) -> str:
    """metav1.FormatLabelSelector: "<none>" for an empty selector."""
    selector = selector if isinstance(selector, dict) else {}
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for e in selector.get("matchExpressions") or []:
        values = ",".join(sorted(e.get("values") or []))
        parts.append({"In": f"{e.get('key')} in ({values})", "NotIn": f"{e.get('key')} notin ({values})",
                      "Exists": str(e.get("key")), "DoesNotExist": f"!{e.get('key')}"}.get(
            str(e.get("operator")), ""))
    return ",".join(parts) or "<none>"


def _network_policy_row(np: Object, now: float) -> list[str]:
    return [np["metadata"]["name"], format_label_selector((np.get("spec") or {}).get("podSelector")),
            _age(np, now)]


_NAME, _AGE = column("Name", format_="name"), column("Age")


def add_handlers(h: TableGenerator) -> None:
    h.table_handler("ingresses", [_NAME, column("Class"), column("Hosts"), column("Address"),
                                  column("Ports"), _AGE], _ingress_row)
    h.table_handler("ingressclasses", [_NAME, column("Controller"), column("Parameters"), _AGE],
                    _ingress_class_row)
    h.table_handler("networkpolicies", [_NAME, column("Pod-Selector"), _AGE], _network_policy_row)
