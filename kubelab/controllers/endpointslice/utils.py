"""Helpers of the EndpointSlice controller: which pods belong in a slice, and how a pod becomes
an endpoint (pkg/controller/endpointslice/utils.go, kubernetes/endpointslice utils.go and
pkg/api/v1/endpoints ShouldPodBeInEndpoints, pkg/api/v1/pod FindPort)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from kubelab.api import Object

__all__ = ["CONTROLLER_NAME", "LABEL_MANAGED_BY", "LABEL_SERVICE_NAME", "MAX_ENDPOINTS_PER_SLICE",
           "endpoint_key", "get_endpoint_ports", "new_endpoint_slice", "owned_by", "pod_to_endpoint",
           "port_map_key", "service_slice_labels", "should_pod_be_in_endpoints"]

CONTROLLER_NAME = "endpointslice-controller.k8s.io"
LABEL_SERVICE_NAME = "kubernetes.io/service-name"
LABEL_MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
LABEL_HEADLESS = "service.kubernetes.io/headless"
MAX_ENDPOINTS_PER_SLICE = 100  # --max-endpoints-per-slice


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
    """FindPort: a numeric targetPort is itself; a named one is the container port of that
    name and protocol (None: the pod does not have it, and the port is left out)."""
    target = service_port.get("targetPort", service_port.get("port"))
    if isinstance(target, int):
        return target
    protocol = service_port.get("protocol", "TCP")
    for container in (pod.get("spec") or {}).get("containers") or ():
        for port in container.get("ports") or ():
            if port.get("name") == target and port.get("protocol", "TCP") == protocol:
                return int(port["containerPort"])
    return None


def get_endpoint_ports(service: Object, pod: Object) -> list[Object]:
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


def pod_to_endpoint(pod: Object, service: Object) -> Object:
    """podToEndpoint: serving is the pod's Ready condition; ready is serving and not
    terminating (unless publishNotReadyAddresses); terminating is deletionTimestamp set."""
    meta, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
    serving = is_pod_ready(pod)
    terminating = bool(meta.get("deletionTimestamp"))
    ready = bool((service.get("spec") or {}).get("publishNotReadyAddresses")) or \
        (serving and not terminating)
    endpoint: Object = {
        "addresses": [status.get("podIP") or (status.get("podIPs") or [{}])[0].get("ip")],
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


def service_slice_labels(service: Object) -> dict[str, str]:
    """setEndpointSliceLabels: the Service's labels, the service-name and managed-by labels,
    and the headless label for a Service without a ClusterIP."""
    labels = {k: v for k, v in ((service["metadata"].get("labels")) or {}).items()
              if k not in (LABEL_SERVICE_NAME, LABEL_MANAGED_BY, LABEL_HEADLESS)}
    labels[LABEL_SERVICE_NAME] = service["metadata"]["name"]
    labels[LABEL_MANAGED_BY] = CONTROLLER_NAME
    if (service.get("spec") or {}).get("clusterIP") == "None":
        labels[LABEL_HEADLESS] = ""
    return labels


def new_endpoint_slice(service: Object, ports: list[Object], address_type: str = "IPv4") -> Object:
    """newEndpointSlice: generateName <service>-, owned by the Service (a controller ref)."""
    meta = service["metadata"]
    return {
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {
            "generateName": f"{meta['name']}-", "namespace": meta.get("namespace", "default"),
            "labels": service_slice_labels(service),
            "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": meta["name"],
                                 "uid": meta.get("uid", ""), "controller": True,
                                 "blockOwnerDeletion": True}],
        },
        "addressType": address_type, "ports": ports, "endpoints": [],
    }


def owned_by(slice_: Object, service: Object) -> bool:
    uid = service["metadata"].get("uid")
    return any(ref.get("kind") == "Service" and ref.get("uid") == uid
               for ref in slice_["metadata"].get("ownerReferences") or ())
