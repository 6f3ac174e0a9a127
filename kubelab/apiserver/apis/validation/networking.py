"""Validation of Ingresses, IngressClasses and NetworkPolicies: pkg/apis/networking/validation/
validation.go (ValidateIngressSpec, validateIngressRules, validateHTTPIngressPath,
validateIngressBackend, ValidateIngressClass, ValidateNetworkPolicySpec,
ValidateNetworkPolicyPort, ValidateNetworkPolicyPeer, ValidateIPBlock), in upstream's words.
The rules kept are those a learner's manifest meets; TLS hosts and the resource backend's kinds
are not checked.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import (
    FieldError,
    field_forbidden,
    field_invalid,
    field_not_supported,
    field_required,
    field_too_long,
)
from kubelab.api.validation import is_dns1035_label, is_dns1123_subdomain
from kubelab.apiserver.apis.validation.service_ips import is_valid_cidr

__all__ = ["validate_ingress", "validate_ingress_class", "validate_network_policy"]

PATH_TYPES = ["Exact", "ImplementationSpecific", "Prefix"]
PROTOCOLS = ["SCTP", "TCP", "UDP"]
POLICY_TYPES = ["Egress", "Ingress"]


def _dict(value: Any) -> Object:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _port_number(value: Any, path: str) -> list[FieldError]:
    if isinstance(value, int) and not 1 <= value <= 65535:
        return [field_invalid(path, value, "must be between 1 and 65535, inclusive")]
    return []


def _backend(backend: Object, path: str) -> list[FieldError]:
    """validateIngressBackend."""
    service, resource = backend.get("service"), backend.get("resource")
    if service is not None and resource is not None:
        return [field_invalid(path, "", "cannot set both resource and service backends")]
    if service is None and resource is None:
        return [field_invalid(path, "", "one backend type must be specified")]
    if resource is not None:
        return []
    service = _dict(service)
    errs = [field_invalid(f"{path}.service.name", service.get("name"), m)
            for m in is_dns1035_label(str(service.get("name") or ""))]
    port = _dict(service.get("port"))
    if port.get("name") and port.get("number"):
        errs.append(field_invalid(f"{path}.service.port", port.get("name"),
                                  "cannot set both port name & port number"))
    elif port.get("name"):
        errs += [field_invalid(f"{path}.service.port.name", port["name"], m)
                 for m in is_dns1035_label(str(port["name"]))]
    elif port.get("number") is not None:
        errs += _port_number(port["number"], f"{path}.service.port.number")
    else:
        errs.append(field_invalid(f"{path}.service.port", port, "port name or number is required"))
    return errs


def _host(host: str, path: str) -> list[FieldError]:
    try:
        ipaddress.ip_address(host)
        return [field_invalid(path, host, "must be a DNS name, not an IP address")]
    except ValueError:
        pass
    name = host[2:] if host.startswith("*.") else host
    return [field_invalid(path, host, m) for m in is_dns1123_subdomain(name)]


def validate_ingress(ing: Object) -> list[FieldError]:
    """ValidateIngressSpec."""
    spec = _dict(ing.get("spec"))
    errs: list[FieldError] = []
    rules = _list(spec.get("rules"))
    if spec.get("defaultBackend") is not None:
        errs += _backend(_dict(spec["defaultBackend"]), "spec.defaultBackend")
    elif not rules:
        errs.append(field_invalid("spec.rules", [], "either `defaultBackend` or `rules` must be specified"))
    if spec.get("ingressClassName"):
        errs += [field_invalid("spec.ingressClassName", spec["ingressClassName"], m)
                 for m in is_dns1123_subdomain(str(spec["ingressClassName"]))]
    for i, rule in enumerate(rules):
        rule, where = _dict(rule), f"spec.rules[{i}]"
        if rule.get("host"):
            errs += _host(str(rule["host"]), f"{where}.host")
        if rule.get("http") is None:
            continue
        paths = _list(_dict(rule["http"]).get("paths"))
        if not paths:
            errs.append(field_required(f"{where}.http.paths", ""))
        for j, p in enumerate(paths):
            p, at = _dict(p), f"{where}.http.paths[{j}]"
            path_type = p.get("pathType")
            if path_type is None:
                errs.append(field_required(f"{at}.pathType", "pathType must be specified"))
            elif path_type not in PATH_TYPES:
                errs.append(field_not_supported(f"{at}.pathType", path_type, PATH_TYPES))
            if path_type in ("Exact", "Prefix") and not str(p.get("path") or "").startswith("/"):
                errs.append(field_invalid(f"{at}.path", p.get("path", ""), "must be an absolute path"))
            errs += _backend(_dict(p.get("backend")), f"{at}.backend")
    return errs


def validate_ingress_class(ic: Object) -> list[FieldError]:
    """ValidateIngressClassSpec: a controller name, domain-prefixed, at most 250 characters."""
    controller = str(_dict(ic.get("spec")).get("controller") or "")
    if not controller:
        return [field_required("spec.controller", "")]
    if len(controller) > 250:
        return [field_too_long("spec.controller", 250)]
    domain, slash, rest = controller.partition("/")
    if not slash or not rest:
        return [field_invalid("spec.controller", controller, "must be a domain-prefixed path "
                              "(such as \"acme.io/foo\")")]
    return [field_invalid("spec.controller", controller, m) for m in is_dns1123_subdomain(domain)]


def _peer(peer: Object, path: str) -> list[FieldError]:
    """ValidateNetworkPolicyPeer."""
    selectors = peer.get("podSelector") is not None or peer.get("namespaceSelector") is not None
    block = peer.get("ipBlock")
    if block is None and not selectors:
        return [field_required(path, "must specify a peer")]
    if block is not None and selectors:
        return [field_forbidden(path, "may not specify both ipBlock and another peer")]
    if block is None:
        return []
    block = _dict(block)
    if not block.get("cidr"):
        return [field_required(f"{path}.ipBlock.cidr", "")]
    errs = is_valid_cidr(f"{path}.ipBlock.cidr", block["cidr"])
    for k, cidr in enumerate(_list(block.get("except"))):
        errs += is_valid_cidr(f"{path}.ipBlock.except[{k}]", cidr)
    return errs


def _np_port(port: Object, path: str) -> list[FieldError]:
    """ValidateNetworkPolicyPort."""
    errs = []
    if port.get("protocol") not in (None, *PROTOCOLS):
        errs.append(field_not_supported(f"{path}.protocol", port["protocol"], PROTOCOLS))
    value, end = port.get("port"), port.get("endPort")
    if isinstance(value, int):
        errs += _port_number(value, f"{path}.port")
        if isinstance(end, int) and end < value:
            errs.append(field_invalid(f"{path}.endPort", end, "must be greater than or equal to `port`"))
    elif end is not None:
        errs.append(field_forbidden(f"{path}.endPort", "may not be specified when `port` is "
                                    "non-numeric" if value is not None else
                                    "may not be specified when `port` is not specified"))
    return errs


def validate_network_policy(np: Object) -> list[FieldError]:
    """ValidateNetworkPolicySpec."""
    spec = _dict(np.get("spec"))
    errs: list[FieldError] = []
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(_list(spec.get(direction))):
            rule = _dict(rule)
            for j, port in enumerate(_list(rule.get("ports"))):
                errs += _np_port(_dict(port), f"spec.{direction}[{i}].ports[{j}]")
            for j, peer in enumerate(_list(rule.get(peers))):
                errs += _peer(_dict(peer), f"spec.{direction}[{i}].{peers}[{j}]")
    types = _list(spec.get("policyTypes"))
    for i, t in enumerate(types):
        if t not in POLICY_TYPES:
            errs.append(field_not_supported(f"spec.policyTypes[{i}]", t, POLICY_TYPES))
    if len(types) > 2:
        errs.append(field_invalid("spec.policyTypes", types, "may not specify more than two policyTypes"))
    return errs
