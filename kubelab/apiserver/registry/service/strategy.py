"""What a Service update drops when its type changes: pkg/registry/core/service/strategy.go
(svcStrategy.PrepareForUpdate -> dropTypeDependentFields).

A Service is a union keyed by spec.type: nodePorts mean nothing to a ClusterIP Service, a
ClusterIP nothing to an ExternalName. When an update changes the type, the strategy clears
each field that a) no longer applies and b) the request left as it was (so it may have been
allocated or defaulted for the old type). A field the user changed too stays, and validation
judges it: a LoadBalancer turned ClusterIP with a new nodePort is refused, one that merely
kept its old nodePorts is not. Only updates are touched; a create keeps what it was given.

What is dropped, each only when unchanged:

- type ExternalName (from any other): clusterIP/clusterIPs, ipFamilies, ipFamilyPolicy
- a type without node ports (from NodePort or LoadBalancer): every ports[].nodePort, when the
  request adds no new one
- no longer LoadBalancer with externalTrafficPolicy Local: healthCheckNodePort
- no longer LoadBalancer: allocateLoadBalancerNodePorts, loadBalancerClass, and the status'
  load-balancer ingress (the LB goes away; upstream does not make the user wait for it)
- no longer externally accessible: externalTrafficPolicy

The allocator releases what the stored object no longer holds (allocators.py record()).
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.apiserver.apis.validation.services import externally_accessible

__all__ = ["drop_type_dependent_fields"]


def _needs_cluster_ip(spec: Object) -> bool:
    """needsClusterIP: any type but ExternalName ("None" counts as a value)."""
    return spec.get("type") != "ExternalName"


def _needs_node_port(spec: Object) -> bool:
    """needsNodePort: NodePort and LoadBalancer (allocateLoadBalancerNodePorts aside)."""
    return spec.get("type") in ("NodePort", "LoadBalancer")


def _needs_hc_node_port(spec: Object) -> bool:
    return spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local"


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _node_ports(spec: Object) -> set[Any]:
    return {p.get("nodePort") for p in _list(spec.get("ports"))
            if isinstance(p, dict) and p.get("nodePort")}


def _same(spec: Object, old: Object, key: str) -> bool:
    """The request left key as it was (absent, null and the zero value are alike)."""
    return (spec.get(key) or None) == (old.get(key) or None)


def drop_type_dependent_fields(obj: Object, old: Object) -> None:
    """dropTypeDependentFields, in place on the object about to be validated and stored."""
    spec, old_spec = obj.get("spec"), old.get("spec")
    if not isinstance(spec, dict) or not isinstance(old_spec, dict):
        return
    if _needs_cluster_ip(old_spec) and not _needs_cluster_ip(spec):
        if _same(spec, old_spec, "clusterIP") and _list(spec.get("clusterIPs")) == \
                _list(old_spec.get("clusterIPs")):
            spec.pop("clusterIP", None)  # released after the write
            spec.pop("clusterIPs", None)
        if _same(spec, old_spec, "ipFamilies"):
            spec.pop("ipFamilies", None)
        if _same(spec, old_spec, "ipFamilyPolicy"):
            spec.pop("ipFamilyPolicy", None)
    # sameNodePorts: ports may come, go or change, as long as no new nodePort appears.
    if _needs_node_port(old_spec) and not _needs_node_port(spec) and \
            _node_ports(old_spec) >= _node_ports(spec):
        for port in _list(spec.get("ports")):
            if isinstance(port, dict):
                port.pop("nodePort", None)
    if _needs_hc_node_port(old_spec) and not _needs_hc_node_port(spec) and \
            _same(spec, old_spec, "healthCheckNodePort"):
        spec.pop("healthCheckNodePort", None)
    if old_spec.get("type") == "LoadBalancer" and spec.get("type") != "LoadBalancer":
        allocate, old_allocate = spec.get("allocateLoadBalancerNodePorts"), \
            old_spec.get("allocateLoadBalancerNodePorts")
        if allocate is not None and old_allocate is not None and allocate == old_allocate:
            spec.pop("allocateLoadBalancerNodePorts", None)
        if spec.get("loadBalancerClass") == old_spec.get("loadBalancerClass"):
            spec.pop("loadBalancerClass", None)
    if externally_accessible(old_spec) and not externally_accessible(spec) and \
            _same(spec, old_spec, "externalTrafficPolicy"):
        spec.pop("externalTrafficPolicy", None)
    if spec.get("type") != "LoadBalancer" and isinstance(obj.get("status"), dict):
        obj["status"] = {**obj["status"], "loadBalancer": {}}  # a copy: old shares it
