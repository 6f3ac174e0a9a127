"""`kubectl describe service` (k8s.io/kubectl pkg/describe/describe.go: ServiceDescriber,
describeService, formatEndpointSlices, buildIngressString): the Service's addresses, each port
with its target, node port and endpoints, then its policies and the events. As in 1.34 the
endpoints come from the Service's EndpointSlices (label kubernetes.io/service-name), the ready
ones, at most three and `+ N more...`; a Service without slices has `<none>`."""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.client.client import Client
from kubelab.kubectl.describe.describe import annotations_multiline, describe_events, labels_multiline
from kubelab.kubectl.tabwriter import PrefixWriter

__all__ = ["SERVICE_DESCRIBERS", "describe_service", "format_endpoint_slices"]

SERVICE_NAME_LABEL = "kubernetes.io/service-name"  # discoveryv1.LabelServiceName
MAX_ENDPOINTS = 3


def _host_port(address: str, port: Any) -> str:
    """net.JoinHostPort: an IPv6 address in brackets."""
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def format_endpoint_slices(slices: list[Object], port_name: str | None) -> str:
    """formatEndpointSlices: the ready endpoints of the port named port_name (every port when
    None); a slice without ports (a headless Service's) lists its addresses alone."""
    if not slices:
        return "<none>"
    shown: list[str] = []
    count = 0
    for s in slices:
        endpoints = [e for e in s.get("endpoints") or () if e.get("addresses")]
        ready = [e for e in endpoints if (e.get("conditions") or {}).get("ready") is not False]
        if not s.get("ports"):
            targets = [e["addresses"][0] for e in ready]
        else:
            targets = [_host_port(e["addresses"][0], p.get("port"))
                       for p in s["ports"] if port_name is None or (p.get("name") or "") == port_name
                       for e in ready]
        for target in targets:
            if len(shown) < MAX_ENDPOINTS:
                shown.append(target)
            count += 1
    text = ",".join(shown)
    return f"{text} + {count - MAX_ENDPOINTS} more..." if count > MAX_ENDPOINTS else text


def _ingress(ingress: list[Object]) -> str:
    """buildIngressString: each ingress point's IP (with its ipMode) or hostname."""
    parts = []
    for point in ingress:
        if point.get("ip"):
            parts.append(point["ip"] + (f" ({point['ipMode']})" if point.get("ipMode") else ""))
        else:
            parts.append(point.get("hostname", ""))
    return ", ".join(parts)


def describe_service(client: Client, svc: Object, events: list[Object], now: float) -> str:
    meta, spec = svc["metadata"], svc.get("spec") or {}
    slices = client.list("endpointslices", meta.get("namespace", ""),
                         label_selector=f"{SERVICE_NAME_LABEL}={meta['name']}")["items"]
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta['name']}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    selector = spec.get("selector") or {}
    w.write(0, f"Selector:\t{','.join(f'{k}={v}' for k, v in sorted(selector.items())) or '<none>'}\n")
    w.write(0, f"Type:\t{spec.get('type', '')}\n")
    if spec.get("ipFamilyPolicy"):
        w.write(0, f"IP Family Policy:\t{spec['ipFamilyPolicy']}\n")
    w.write(0, f"IP Families:\t{','.join(spec.get('ipFamilies') or ()) or '<none>'}\n")
    w.write(0, f"IP:\t{spec.get('clusterIP', '')}\n")
    w.write(0, f"IPs:\t{','.join(spec.get('clusterIPs') or ()) or '<none>'}\n")
    if spec.get("externalIPs"):
        w.write(0, f"External IPs:\t{','.join(spec['externalIPs'])}\n")
    if spec.get("loadBalancerIP"):
        w.write(0, f"Desired LoadBalancer IP:\t{spec['loadBalancerIP']}\n")
    if spec.get("externalName"):
        w.write(0, f"External Name:\t{spec['externalName']}\n")
    ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    if ingress:
        w.write(0, f"LoadBalancer Ingress:\t{_ingress(ingress)}\n")
    for port in spec.get("ports") or ():
        name, protocol = port.get("name") or "<unset>", port.get("protocol", "")
        w.write(0, f"Port:\t{name}\t{port.get('port', 0)}/{protocol}\n")
        w.write(0, f"TargetPort:\t{port.get('targetPort', 0)}/{protocol}\n")
        if port.get("appProtocol") is not None:
            w.write(0, f"AppProtocol:\t{port['appProtocol']}\n")
        if port.get("nodePort"):
            w.write(0, f"NodePort:\t{name}\t{port['nodePort']}/{protocol}\n")
        w.write(0, f"Endpoints:\t{format_endpoint_slices(slices, port.get('name') or '')}\n")
    w.write(0, f"Session Affinity:\t{spec.get('sessionAffinity', '')}\n")
    if spec.get("externalTrafficPolicy"):
        w.write(0, f"External Traffic Policy:\t{spec['externalTrafficPolicy']}\n")
    if spec.get("internalTrafficPolicy"):
        w.write(0, f"Internal Traffic Policy:\t{spec['internalTrafficPolicy']}\n")
    if spec.get("healthCheckNodePort"):
        w.write(0, f"HealthCheck NodePort:\t{spec['healthCheckNodePort']}\n")
    if spec.get("loadBalancerSourceRanges"):
        w.write(0, f"LoadBalancer Source Ranges:\t{','.join(spec['loadBalancerSourceRanges'])}\n")
    if spec.get("trafficDistribution"):
        w.write(0, f"Traffic Distribution:\t{spec['trafficDistribution']}\n")
    describe_events(w, events, now)
    return w.text()


SERVICE_DESCRIBERS = {"services": describe_service}
