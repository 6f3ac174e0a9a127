"""Helpers of the EndpointSlice controller: which pods belong in a slice, and how a pod becomes
an endpoint (pkg/controller/endpointslice/utils.go, kubernetes/endpointslice utils.go and
pkg/api/v1/endpoints ShouldPodBeInEndpoints, pkg/api/v1/pod FindPort).

Departures on purpose:
- kubelab's cluster is single-stack IPv4: get_endpoint_addresses keeps the IPv4 addresses of
  status.podIPs and, for a hand-made pod without podIPs, falls back to status.podIP (upstream
  reads podIPs only) and takes them as written (upstream parses and re-prints them);
- no Node is looked up, so an endpoint has no zone;
- service_controller_key raises ValueError where upstream returns an error.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from kubelab.api import Object

__all__ = ["CONTROLLER_NAME", "LABEL_HEADLESS", "LABEL_MANAGED_BY", "LABEL_SERVICE_NAME",
           "MAX_ENDPOINTS_PER_SLICE", "endpoint_key", "find_port", "get_endpoint_addresses",
           "get_endpoint_ports", "is_service_ip_set", "new_endpoint_slice", "owned_by",
           "pod_to_endpoint", "port_map_key", "service_controller_key", "set_endpoint_slice_labels",
           "should_pod_be_in_endpoints"]

CONTROLLER_NAME = "endpointslice-controller.k8s.io"
LABEL_SERVICE_NAME = "kubernetes.io/service-name"
LABEL_MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
LABEL_HEADLESS = "service.kubernetes.io/headless"
MAX_ENDPOINTS_PER_SLICE = 100  # --max-endpoints-per-slice
RESERVED_LABELS = (LABEL_SERVICE_NAME, LABEL_MANAGED_BY, LABEL_HEADLESS)  # isReservedLabelKey


def is_pod_ready(pod: Object) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or ())


def should_pod_be_in_endpoints(pod: Object, include_terminating: bool = True) -> bool:
    """ShouldPodBeInEndpoints: not finished, has an IP; terminating pods stay (with
    terminating: true) since 1.26, so kube-proxy can drain them."""
    status = pod.get("status") or {}
    if status.get("phase") in ("Succeeded", "Failed"):
        return False
    if not status.get("podIP") and not status.get("podIPs"):
        return False
    return include_terminating or not pod["metadata"].get("deletionTimestamp")


def find_port(pod: Object, service_port: Object) -> int | None:
    """FindPort: a numeric targetPort is itself; a named one is the port of that name and
    protocol in the pod's containers, then in its sidecars (init containers with
    restartPolicy Always). None: the pod does not have it, and the port is left out."""
    target = service_port.get("targetPort", service_port.get("port"))
    if isinstance(target, int):
        return target
    protocol = service_port.get("protocol", "TCP")
    spec = pod.get("spec") or {}
    sidecars = [c for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"]
    for container in [*(spec.get("containers") or ()), *sidecars]:
        for port in container.get("ports") or ():
            if port.get("name") == target and port.get("protocol", "TCP") == protocol:
                return int(port["containerPort"])
    return None


def get_endpoint_ports(service: Object, pod: Object) -> list[Object]:
    """getEndpointPorts: one port per Service port the pod has (named by the Service port)."""
    ports = []
    for service_port in (service.get("spec") or {}).get("ports") or ():
        number = find_port(pod, service_port)
        if number is None:
            continue
        port: Object = {"name": service_port.get("name", ""), "port": number,
                        "protocol": service_port.get("protocol", "TCP")}
        if service_port.get("appProtocol"):
            port["appProtocol"] = service_port["appProtocol"]
        ports.append(port)
    return ports


def port_map_key(ports: list[Object]) -> str:
    """NewPortMapKey: pods with the same resolved ports share slices."""
    text = json.dumps(sorted(ports, key=lambda p: (p.get("name", ""), p.get("port", 0))),
                      sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def get_endpoint_addresses(status: Object, address_type: str = "IPv4") -> list[str]:
    """getEndpointAddresses: the pod's IPs of the slice's family (IPv4 or IPv6)."""
    ips = [p.get("ip", "") for p in status.get("podIPs") or ()] or \
        ([status["podIP"]] if status.get("podIP") else [])
    return [ip for ip in ips if (":" in ip) == (address_type == "IPv6")]


def pod_to_endpoint(pod: Object, service: Object) -> Object:
    """podToEndpoint: serving is the pod's Ready condition; ready is serving and not
    terminating (unless publishNotReadyAddresses); terminating is deletionTimestamp set."""
    meta, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
    serving = is_pod_ready(pod)
    terminating = bool(meta.get("deletionTimestamp"))
    ready = bool((service.get("spec") or {}).get("publishNotReadyAddresses")) or \
        (serving and not terminating)
    endpoint: Object = {
        "addresses": get_endpoint_addresses(status),
        "conditions": {"ready": ready, "serving": serving, "terminating": terminating},
        "targetRef": {"kind": "Pod", "namespace": meta.get("namespace", ""), "name": meta["name"],
                      "uid": meta.get("uid", "")},
    }
    if spec.get("nodeName"):
        endpoint["nodeName"] = spec["nodeName"]
    svc_meta = service["metadata"]
    if spec.get("hostname") and spec.get("subdomain") == svc_meta["name"] and \
            meta.get("namespace") == svc_meta.get("namespace"):  # ShouldSetHostname
        endpoint["hostname"] = spec["hostname"]
    return endpoint


def endpoint_key(endpoint: Object) -> tuple[Any, ...]:
    """hashEndpoint: an endpoint is known by its addresses and hostname, so a change of its
    conditions is an update in place, not a remove and an add."""
    return (tuple(sorted(endpoint.get("addresses") or ())), endpoint.get("hostname", ""))


def is_service_ip_set(service: Object) -> bool:
    """IsServiceIPSet: a ClusterIP that is neither None nor empty."""
    return (service.get("spec") or {}).get("clusterIP", "") not in ("None", "")


def set_endpoint_slice_labels(slice_: Object, service: Object) -> tuple[dict[str, str], bool]:
    """setEndpointSliceLabels: the slice's labels are the Service's, less the reserved ones,
    plus service-name, managed-by and (no ClusterIP) headless; True when the Service's own
    labels differ from the slice's. The reserved labels take no part in that comparison, so a
    slice that lacks them, or a Service that sets them, is no reason to write."""
    def own(labels: dict[str, str] | None) -> dict[str, str]:
        return {k: v for k, v in (labels or {}).items() if k not in RESERVED_LABELS}

    labels = own(service["metadata"].get("labels"))
    updated = own((slice_.get("metadata") or {}).get("labels")) != labels
    if not is_service_ip_set(service):
        labels[LABEL_HEADLESS] = ""
    labels[LABEL_SERVICE_NAME] = service["metadata"]["name"]
    labels[LABEL_MANAGED_BY] = CONTROLLER_NAME
    return labels, updated


def new_endpoint_slice(service: Object, ports: list[Object], address_type: str = "IPv4") -> Object:
    """newEndpointSlice: generateName <service>-, owned by the Service (a controller ref)."""
    meta = service["metadata"]
    return {
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {
            "generateName": f"{meta['name']}-", "namespace": meta.get("namespace", "default"),
            "labels": set_endpoint_slice_labels({}, service)[0],
            "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": meta["name"],
                                 "uid": meta.get("uid", ""), "controller": True,
                                 "blockOwnerDeletion": True}],
        },
        "addressType": address_type, "ports": ports, "endpoints": [],
    }


def owned_by(slice_: Object, service: Object) -> bool:
    """ownedBy: an ownerReference to this Service (v1, kind Service, its UID)."""
    uid = service["metadata"].get("uid")
    return any(ref.get("kind") == "Service" and ref.get("apiVersion") == "v1" and ref.get("uid") == uid
               for ref in slice_["metadata"].get("ownerReferences") or ())


def service_controller_key(slice_: Object | None) -> str:
    """ServiceControllerKey: the <namespace>/<name> of a slice's Service, from its label."""
    if slice_ is None:
        raise ValueError("nil EndpointSlice passed to ServiceControllerKey()")
    meta = slice_.get("metadata") or {}
    name = (meta.get("labels") or {}).get(LABEL_SERVICE_NAME)
    if not name:
        raise ValueError(f"EndpointSlice missing {LABEL_SERVICE_NAME} label")
    return f"{meta.get('namespace', '')}/{name}"
