"""ValidateService, ValidateServiceUpdate and ValidateServiceStatusUpdate, in upstream's words.

pkg/apis/core/validation/validation.go (ValidateService, validateServicePort,
validateClientIPAffinityConfig, validateServiceExternalTrafficPolicy,
validateServiceInternalTrafficFieldsValue, validateServiceTrafficDistribution,
validateLoadBalancerClassField, ValidateServiceUpdate); the IP fields are in service_ips.py.

Upstream's own quirks kept: the source-range field's path is `spec.LoadBalancerSourceRanges`
(capital L) and a LoadBalancer without allocateLoadBalancerNodePorts is reported at the
bare path `allocateLoadBalancerNodePorts`. trafficDistribution accepts what 1.34 accepts with
PreferSameTrafficDistribution on by default (beta): PreferClose, PreferSameNode, PreferSameZone.
"""

from __future__ import annotations

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
from kubelab.api.validation import is_dns1123_label, is_dns1123_subdomain, is_qualified_name
from kubelab.apiserver.apis.validation.container import _port_num_or_name
from kubelab.apiserver.apis.validation.meta import validate_labels
from kubelab.apiserver.apis.validation.service_ips import (
    is_headless,
    is_valid_cidr,
    is_valid_ip,
    validate_cluster_ips,
    validate_non_special_ip,
    validate_upgrade_downgrade,
)

__all__ = ["externally_accessible", "needs_health_check", "validate_cluster_ips",
           "validate_service", "validate_service_status_update", "validate_service_update"]

SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
AFFINITIES = ["ClientIP", "None"]
PROTOCOLS = ["SCTP", "TCP", "UDP"]
TRAFFIC_POLICIES = ["Cluster", "Local"]
TRAFFIC_DISTRIBUTIONS = ["PreferClose", "PreferSameNode", "PreferSameZone"]
MAX_AFFINITY_SECONDS = 86400  # core.MaxClientIPServiceAffinitySeconds
SOURCE_RANGES_ANNOTATION = "service.beta.kubernetes.io/load-balancer-source-ranges"
TOPOLOGY_HINTS_ANNOTATION = "service.kubernetes.io/topology-aware-hints"  # deprecated
TOPOLOGY_MODE_ANNOTATION = "service.kubernetes.io/topology-mode"
LB_ONLY = "may only be used when `type` is 'LoadBalancer'"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def externally_accessible(spec: Object) -> bool:
    """apiservice.ExternallyAccessible: LoadBalancer, NodePort, or ClusterIP with externalIPs."""
    kind = spec.get("type")
    return kind in ("LoadBalancer", "NodePort") or (kind == "ClusterIP" and
                                                    bool(spec.get("externalIPs")))


def needs_health_check(spec: Object) -> bool:
    """apiservice.NeedsHealthCheck: a LoadBalancer with externalTrafficPolicy Local."""
    return spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local"


def validate_service(svc: Object) -> list[FieldError]:
    """ValidateService without ValidateObjectMeta (validate_meta runs for every kind)."""
    annotations = _dict(_dict(svc.get("metadata")).get("annotations"))
    spec = _dict(svc.get("spec"))
    errs: list[FieldError] = []
    if TOPOLOGY_MODE_ANNOTATION in annotations and TOPOLOGY_HINTS_ANNOTATION in annotations and \
            annotations[TOPOLOGY_MODE_ANNOTATION] != annotations[TOPOLOGY_HINTS_ANNOTATION]:
        errs.append(field_invalid(f"metadata.annotations[{TOPOLOGY_MODE_ANNOTATION}]",
                                  annotations[TOPOLOGY_MODE_ANNOTATION], "must match annotations["
                                  f"{TOPOLOGY_HINTS_ANNOTATION}] when both are specified"))
    kind = spec.get("type")
    ports = [_dict(p) for p in spec.get("ports") or []]
    headless = is_headless(spec)
    if not ports and not headless and kind != "ExternalName":
        errs.append(field_required("spec.ports"))
    if kind in ("LoadBalancer", "NodePort") and headless:
        errs.append(field_invalid("spec.clusterIPs[0]", "None",
                                  f"may not be set to 'None' for {kind} services"))
    elif kind == "ExternalName":
        errs += _external_name(spec)
    names: set[str] = set()
    for i, port in enumerate(ports):
        errs += _service_port(port, f"spec.ports[{i}]", len(ports) > 1, names)
    if spec.get("selector") is not None:
        errs += validate_labels(spec.get("selector"), "spec.selector")
    errs += _session_affinity(spec)
    errs += validate_cluster_ips(spec)
    for i, ip in enumerate(spec.get("externalIPs") or []):
        path = f"spec.externalIPs[{i}]"
        errs += is_valid_ip(path, ip) or validate_non_special_ip(ip, path)
    if not kind:
        errs.append(field_required("spec.type"))
    elif kind not in SERVICE_TYPES:
        errs.append(field_not_supported("spec.type", kind, SERVICE_TYPES))
    if kind == "ClusterIP":
        errs += [field_forbidden(f"spec.ports[{i}].nodePort", "may not be used when `type` is "
                                 "'ClusterIP'") for i, p in enumerate(ports) if p.get("nodePort")]
    node_ports: set[tuple[Any, Any]] = set()
    pairs: set[tuple[Any, Any]] = set()
    for i, port in enumerate(ports):
        node_key = (port.get("protocol"), port.get("nodePort"))
        if port.get("nodePort"):
            if node_key in node_ports:
                errs.append(field_duplicate(f"spec.ports[{i}].nodePort", port.get("nodePort")))
            node_ports.add(node_key)
        key = (port.get("protocol"), port.get("port"))
        if key in pairs:
            errs.append(field_duplicate(f"spec.ports[{i}]", {"port": key[1], "protocol": key[0]}))
        pairs.add(key)
    errs += _source_ranges(spec, annotations)
    allocate = spec.get("allocateLoadBalancerNodePorts")
    if allocate is not None and kind != "LoadBalancer":
        errs.append(field_forbidden("spec.allocateLoadBalancerNodePorts", LB_ONLY))
    if kind == "LoadBalancer" and allocate is None:
        errs.append(field_required("allocateLoadBalancerNodePorts"))
    errs += validate_load_balancer_class(spec, None)
    errs += validate_external_traffic_policy(spec)
    errs += _internal_traffic_policy(spec)
    distribution = spec.get("trafficDistribution")
    if distribution is not None and distribution not in TRAFFIC_DISTRIBUTIONS:
        errs.append(field_not_supported("spec.trafficDistribution", distribution,
                                        TRAFFIC_DISTRIBUTIONS))
    return errs


def _external_name(spec: Object) -> list[FieldError]:
    errs: list[FieldError] = []
    if spec.get("clusterIPs"):
        errs.append(field_forbidden("spec.clusterIPs", "may not be set for ExternalName services"))
    if spec.get("ipFamilies"):
        errs.append(field_forbidden("spec.ipFamilies", "may not be set for ExternalName services"))
    if spec.get("ipFamilyPolicy") is not None:
        errs.append(field_forbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services"))
    name = spec.get("externalName") or ""
    cname = name[:-1] if isinstance(name, str) and name.endswith(".") else name
    if not cname:
        errs.append(field_required("spec.externalName"))
    elif isinstance(cname, str):
        errs += [field_invalid("spec.externalName", cname, m) for m in is_dns1123_subdomain(cname)]
    return errs


def _service_port(port: Object, path: str, require_name: bool, names: set[str]) -> list[FieldError]:
    """validateServicePort."""
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
    if not protocol:
        errs.append(field_required(f"{path}.protocol"))
    elif protocol not in PROTOCOLS:
        errs.append(field_not_supported(f"{path}.protocol", protocol, PROTOCOLS))
    errs += _port_num_or_name(port.get("targetPort"), f"{path}.targetPort")
    app_protocol = port.get("appProtocol")
    if isinstance(app_protocol, str):
        errs += [field_invalid(f"{path}.appProtocol", app_protocol, m)
                 for m in is_qualified_name(app_protocol)]
    return errs


def _session_affinity(spec: Object) -> list[FieldError]:
    """The sessionAffinity rules of ValidateService and validateClientIPAffinityConfig."""
    affinity = spec.get("sessionAffinity")
    config = spec.get("sessionAffinityConfig")
    path = "spec.sessionAffinityConfig"
    if not affinity:
        return [field_required("spec.sessionAffinity")]
    if affinity not in AFFINITIES:
        return [field_not_supported("spec.sessionAffinity", affinity, AFFINITIES)]
    if affinity == "None":
        return [field_forbidden(path, "must not be set when session affinity is None")] \
            if config is not None else []
    why = "when session affinity type is ClientIP"
    if not isinstance(config, dict):
        return [field_required(path, why)]
    client_ip = config.get("clientIP")
    if not isinstance(client_ip, dict):
        return [field_required(f"{path}.clientIP", why)]
    timeout = client_ip.get("timeoutSeconds")
    if timeout is None:
        return [field_required(f"{path}.clientIP.timeoutSeconds", why)]
    if not isinstance(timeout, int) or not 0 < timeout <= MAX_AFFINITY_SECONDS:
        return [field_invalid(f"{path}.clientIP.timeoutSeconds", timeout,
                              f"must be greater than 0 and less than {MAX_AFFINITY_SECONDS}")]
    return []


def _source_ranges(spec: Object, annotations: dict[str, Any]) -> list[FieldError]:
    """The field wins over the annotation; values may be space-padded (history)."""
    errs: list[FieldError] = []
    ranges = spec.get("loadBalancerSourceRanges") or []
    if ranges:
        path = "spec.LoadBalancerSourceRanges"
        if spec.get("type") != "LoadBalancer":
            errs.append(field_forbidden(path, LB_ONLY))
        for i, value in enumerate(ranges):
            errs += is_valid_cidr(f"{path}[{i}]", value.strip() if isinstance(value, str) else value)
    elif SOURCE_RANGES_ANNOTATION in annotations:
        path = f"metadata.annotations[{SOURCE_RANGES_ANNOTATION}]"
        if spec.get("type") != "LoadBalancer":
            errs.append(field_forbidden(path, LB_ONLY))
        value = str(annotations[SOURCE_RANGES_ANNOTATION]).strip()
        if value:
            for cidr in value.split(","):
                errs += is_valid_cidr(path, cidr.strip())
    return errs


def validate_load_balancer_class(spec: Object, old: Object | None) -> list[FieldError]:
    """validateLoadBalancerClassField: a qualified name, only on LoadBalancers, kept while
    the Service stays one."""
    errs: list[FieldError] = []
    cls = spec.get("loadBalancerClass")
    if old is not None and old.get("type") == spec.get("type") == "LoadBalancer" and \
            old.get("loadBalancerClass") != cls:
        errs.append(field_invalid("spec.loadBalancerClass", cls, "may not change once set"))
    if spec.get("type") == "LoadBalancer":
        if isinstance(cls, str):
            errs += [field_invalid("spec.loadBalancerClass", cls, m) for m in is_qualified_name(cls)]
    elif cls is not None:
        errs.append(field_forbidden("spec.loadBalancerClass", LB_ONLY))
    return errs


def validate_external_traffic_policy(spec: Object) -> list[FieldError]:
    """validateServiceExternalTrafficPolicy, with the healthCheckNodePort rules."""
    errs: list[FieldError] = []
    policy = spec.get("externalTrafficPolicy")
    if not externally_accessible(spec):
        if policy:
            errs.append(field_invalid("spec.externalTrafficPolicy", policy,
                                      "may only be set for externally-accessible services"))
    elif not policy:
        errs.append(field_required("spec.externalTrafficPolicy"))
    elif policy not in TRAFFIC_POLICIES:
        errs.append(field_not_supported("spec.externalTrafficPolicy", policy, TRAFFIC_POLICIES))
    port = spec.get("healthCheckNodePort") or 0
    if not needs_health_check(spec):
        if port:
            errs.append(field_invalid("spec.healthCheckNodePort", port, "may only be set when `type` "
                                      "is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
    elif not port:
        errs.append(field_required("spec.healthCheckNodePort"))
    elif not isinstance(port, int) or not 1 <= port <= 65535:
        errs.append(field_invalid("spec.healthCheckNodePort", port,
                                  "must be between 1 and 65535, inclusive"))
    return errs


def _internal_traffic_policy(spec: Object) -> list[FieldError]:
    """validateServiceInternalTrafficFieldsValue (an ExternalName may carry one: history)."""
    policy = spec.get("internalTrafficPolicy")
    if policy is None:
        if spec.get("type") in ("ClusterIP", "LoadBalancer", "NodePort"):
            return [field_required("spec.internalTrafficPolicy")]
        return []
    if policy not in TRAFFIC_POLICIES:
        return [field_not_supported("spec.internalTrafficPolicy", policy, TRAFFIC_POLICIES)]
    return []


def validate_service_update(svc: Object, old: Object) -> list[FieldError]:
    """ValidateServiceUpdate (ObjectMeta's update rules run for every kind). As upstream,
    validateLoadBalancerClassField runs twice, with the old Service and (in ValidateService)
    without it, so a misplaced or malformed class is reported twice."""
    spec, old_spec = _dict(svc.get("spec")), _dict(old.get("spec"))
    errs = validate_upgrade_downgrade(spec, old_spec)
    errs += validate_load_balancer_class(spec, old_spec)
    if needs_health_check(old_spec) and needs_health_check(spec) and \
            spec.get("healthCheckNodePort") != old_spec.get("healthCheckNodePort"):
        errs.append(field_forbidden("spec.healthCheckNodePort", "field is immutable"))
    return errs + validate_service(svc)


def validate_service_status_update(svc: Object, old: Object) -> list[FieldError]:
    """ValidateServiceStatusUpdate: each load-balancer ingress is an IP or a hostname."""
    errs: list[FieldError] = []
    ingress = _dict(_dict(svc.get("status")).get("loadBalancer")).get("ingress") or []
    for i, entry in enumerate(ingress):
        entry = _dict(entry)
        if entry.get("ip") and is_valid_ip("", entry["ip"]):
            errs.append(field_invalid(f"status.loadBalancer.ingress[{i}].ip", entry["ip"],
                                      "must be a valid IP address"))
    return errs
