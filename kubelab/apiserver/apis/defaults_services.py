"""SetDefaults_Service and SetDefaults_EndpointSlice (pkg/apis/core/v1/defaults.go,
pkg/apis/discovery/v1/defaults.go), plus the v1 conversion that fills spec.clusterIPs from
spec.clusterIP (pkg/apis/core/v1/conversion.go)."""

from __future__ import annotations

from kubelab.api import Object
from kubelab.apiserver.apis.validation.services import externally_accessible

__all__ = ["set_endpoint_slice_defaults", "set_endpoints_defaults", "set_service_defaults"]


def set_service_defaults(obj: Object) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec.get("sessionAffinity") == "ClientIP":
        # SetDefaults_Service: three hours of stickiness unless told otherwise.
        config = spec.setdefault("sessionAffinityConfig", {})
        if isinstance(config, dict):
            client_ip = config.setdefault("clientIP", {})
            if isinstance(client_ip, dict):
                client_ip.setdefault("timeoutSeconds", 10800)
    for port in spec.get("ports") or ():
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            if port.get("targetPort") in (None, 0, ""):
                port["targetPort"] = port.get("port")
    if spec["type"] != "ExternalName":
        spec.setdefault("internalTrafficPolicy", "Cluster")
    if externally_accessible(spec) and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"  # NodePort, LoadBalancer, or externalIPs
    if spec["type"] == "LoadBalancer":
        spec.setdefault("allocateLoadBalancerNodePorts", True)
    # Conversion: clusterIPs[0] is clusterIP.
    if spec.get("clusterIP") and not spec.get("clusterIPs"):
        spec["clusterIPs"] = [spec["clusterIP"]]
    elif not spec.get("clusterIP") and isinstance(spec.get("clusterIPs"), list) and spec["clusterIPs"]:
        spec["clusterIP"] = spec["clusterIPs"][0]


def set_endpoint_slice_defaults(obj: Object) -> None:
    for port in obj.get("ports") or ():
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            port.setdefault("name", "")


# --- endpoints ---
def set_endpoints_defaults(obj: Object) -> None:
    """SetDefaults_Endpoints: each subset's ports are TCP unless they say otherwise."""
    for subset in obj.get("subsets") or ():
        for port in (subset.get("ports") or ()) if isinstance(subset, dict) else ():
            if isinstance(port, dict):
                port.setdefault("protocol", "TCP")
