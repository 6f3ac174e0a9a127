"""ValidateService, ValidateServiceUpdate and ValidateEndpointSlice, in upstream's words.

pkg/apis/core/validation/validation.go (ValidateService, validateServicePort,
ValidateServiceClusterIPsRelatedFields, validateServiceExternalTrafficPolicy,
ValidateServiceUpdate) and pkg/apis/discovery/validation/validation.go (ValidateEndpointSlice:
at most 1000 endpoints and 100 ports, addresses valid for the addressType).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import (
    FieldError,
    field_duplicate,
    field_forbidden,
    field_invalid,
    field_not_supported,
    field_required,
)
from kubelab.api.validation import is_dns1123_label
from kubelab.apiserver.apis.validation.container import _port_num_or_name
from kubelab.apiserver.apis.validation.meta import validate_labels

__all__ = ["validate_cluster_ips", "validate_endpoint_slice", "validate_endpoint_slice_update",
           "validate_service", "validate_service_status_update", "validate_service_update"]

SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
AFFINITIES = ["ClientIP", "None"]
PROTOCOLS = ["SCTP", "TCP", "UDP"]
TRAFFIC_POLICIES = ["Cluster", "Local"]
ADDRESS_TYPES = ["FQDN", "IPv4", "IPv6"]
MAX_ENDPOINTS, MAX_PORTS = 1000, 100
VALID_IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _is_ip(value: Any) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def validate_cluster_ips(spec: Object) -> list[FieldError]:
    """ValidateServiceClusterIPsRelatedFields: well-formed IPs or None, clusterIPs[0] ==
    clusterIP, and no ClusterIP at all for an ExternalName."""
    errs: list[FieldError] = []
    ips = spec.get("clusterIPs") or []
    cluster_ip = spec.get("clusterIP") or ""
    if spec.get("type") == "ExternalName":
        if cluster_ip:
            errs.append(field_forbidden("spec.clusterIPs", "may not be set for ExternalName services"))
        return errs
    if ips and cluster_ip and ips[0] != cluster_ip:
        errs.append(field_invalid("spec.clusterIPs", ips, "first value must match `clusterIP`"))
    for i, ip in enumerate(ips):
        if ip == "None" and i == 0:
            continue
        if ip == "None" or not _is_ip(ip):
            errs.append(field_invalid(f"spec.clusterIPs[{i}]", ip, VALID_IP))
    if len(ips) > 1:
        errs.append(field_invalid("spec.clusterIPs", ips, "this cluster is not configured for "
                                  "dual-stack services"))
    return errs


def validate_service(svc: Object) -> list[FieldError]:
    spec = _dict(svc.get("spec"))
    errs: list[FieldError] = []
    kind = spec.get("type")
    if kind not in SERVICE_TYPES:
        errs.append(field_not_supported("spec.type", kind, SERVICE_TYPES))
    headless = (spec.get("clusterIPs") or [""])[0] == "None"
    ports = spec.get("ports") or []
    if kind == "ExternalName":
        name = spec.get("externalName")
        if not name:
            errs.append(field_required("spec.externalName"))
    elif not ports and not headless:
        errs.append(field_required("spec.ports"))
    if headless and kind in ("NodePort", "LoadBalancer"):
        errs.append(field_invalid("spec.clusterIPs[0]", "None",
                                  f"may not be set to 'None' for {kind} services"))
    names: set[str] = set()
    for i, port in enumerate(ports):
        errs += _service_port(_dict(port), f"spec.ports[{i}]", len(ports) > 1, names, kind)
    errs += validate_labels(spec.get("selector"), "spec.selector")
    affinity = spec.get("sessionAffinity")
    if affinity not in AFFINITIES:
        errs.append(field_not_supported("spec.sessionAffinity", affinity, AFFINITIES))
    errs += _traffic_policies(spec, kind)
    return errs


def _service_port(port: Object, path: str, require_name: bool, names: set[str],
                  kind: Any) -> list[FieldError]:
    """validateServicePort, and the nodePort rule of ValidateService."""
    errs: list[FieldError] = []
    name = port.get("name") or ""
    if require_name and not name:
        errs.append(field_required(f"{path}.name"))
    elif name:
        errs += [field_invalid(f"{path}.name", name, m) for m in is_dns1123_label(name)]
        if name in names:
            errs.append(field_duplicate(f"{path}.name", name))
        names.add(name)
    number = port.get("port")
    if not isinstance(number, int) or not 1 <= number <= 65535:
        errs.append(field_invalid(f"{path}.port", number, "must be between 1 and 65535, inclusive"))
    protocol = port.get("protocol")
    if protocol not in PROTOCOLS:
        errs.append(field_not_supported(f"{path}.protocol", protocol, PROTOCOLS))
    errs += _port_num_or_name(port.get("targetPort"), f"{path}.targetPort")
    if port.get("nodePort") and kind == "ClusterIP":
        errs.append(field_forbidden(f"{path}.nodePort", "may not be used when `type` is 'ClusterIP'"))
    return errs


def _traffic_policies(spec: Object, kind: Any) -> list[FieldError]:
    """validateServiceExternalTrafficPolicy and validateServiceInternalTrafficPolicy."""
    errs: list[FieldError] = []
    external = spec.get("externalTrafficPolicy")
    if kind in ("NodePort", "LoadBalancer"):
        if not external:
            errs.append(field_required("spec.externalTrafficPolicy"))
        elif external not in TRAFFIC_POLICIES:
            errs.append(field_not_supported("spec.externalTrafficPolicy", external, TRAFFIC_POLICIES))
    elif external:
        errs.append(field_invalid("spec.externalTrafficPolicy", external,
                                  "may only be set for externally-accessible services"))
    internal = spec.get("internalTrafficPolicy")
    if kind != "ExternalName":
        if not internal:
            errs.append(field_required("spec.internalTrafficPolicy"))
        elif internal not in TRAFFIC_POLICIES:
            errs.append(field_not_supported("spec.internalTrafficPolicy", internal, TRAFFIC_POLICIES))
    return errs


def validate_service_update(svc: Object, old: Object) -> list[FieldError]:
    """ValidateServiceUpdate: the new object is valid, and its first ClusterIP is the old
    one (unless it becomes or stops being an ExternalName)."""
    errs = validate_service(svc)
    spec, old_spec = _dict(svc.get("spec")), _dict(old.get("spec"))
    ips, old_ips = spec.get("clusterIPs") or [], old_spec.get("clusterIPs") or []
    if "ExternalName" not in (spec.get("type"), old_spec.get("type")) and ips and old_ips and \
            ips[0] != old_ips[0]:
        errs.append(field_invalid("spec.clusterIPs[0]", ips, "may not change once set"))
    return errs


def validate_service_status_update(svc: Object, old: Object) -> list[FieldError]:
    """ValidateServiceStatusUpdate: each load-balancer ingress is an IP or a hostname."""
    errs: list[FieldError] = []
    ingress = _dict(_dict(svc.get("status")).get("loadBalancer")).get("ingress") or []
    for i, entry in enumerate(ingress):
        entry = _dict(entry)
        if entry.get("ip") and not _is_ip(entry["ip"]):
            errs.append(field_invalid(f"status.loadBalancer.ingress[{i}].ip", entry["ip"],
                                      "must be a valid IP address"))
    return errs


def validate_endpoint_slice(eps: Object) -> list[FieldError]:
    errs: list[FieldError] = []
    address_type = eps.get("addressType")
    if not address_type:
        errs.append(field_required("addressType"))
    elif address_type not in ADDRESS_TYPES:
        errs.append(field_not_supported("addressType", address_type, ADDRESS_TYPES))
    endpoints = eps.get("endpoints") or []
    if len(endpoints) > MAX_ENDPOINTS:
        errs.append(field_forbidden("endpoints", f"must have at most {MAX_ENDPOINTS} items"))
    for i, endpoint in enumerate(endpoints):
        addresses = _dict(endpoint).get("addresses") or []
        if not addresses:
            errs.append(field_required(f"endpoints[{i}].addresses", "must contain at least 1 address"))
        for j, address in enumerate(addresses):
            if address_type in ("IPv4", "IPv6") and not _is_ip(address):
                errs.append(field_invalid(f"endpoints[{i}].addresses[{j}]", address, VALID_IP))
    ports = eps.get("ports") or []
    if len(ports) > MAX_PORTS:
        errs.append(field_forbidden("ports", f"must have at most {MAX_PORTS} items"))
    for i, port in enumerate(ports):
        number = _dict(port).get("port")
        if number is not None and (not isinstance(number, int) or not 0 <= number <= 65535):
            errs.append(field_invalid(f"ports[{i}].port", number,
                                      "must be between 0 and 65535, inclusive"))
        protocol = _dict(port).get("protocol")
        if protocol not in PROTOCOLS:
            errs.append(field_not_supported(f"ports[{i}].protocol", protocol, PROTOCOLS))
    return errs


def validate_endpoint_slice_update(eps: Object, old: Object) -> list[FieldError]:
    errs = validate_endpoint_slice(eps)
    if eps.get("addressType") != old.get("addressType"):
        errs.append(field_invalid("addressType", eps.get("addressType"), "field is immutable"))
    return errs
