"""What kube-proxy knows of Services and EndpointSlices, before any rule is written:
pkg/proxy/servicechangetracker.go and serviceport.go (a ServicePortInfo per Service port),
endpointschangetracker.go (the endpoints under each ServicePortName) and topology.go
(CategorizeEndpoints: which endpoints Cluster and Local traffic may use).

proxier.py turns these into the iptables rules.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubelab.api import Object

__all__ = ["Endpoint", "ServicePort", "build_endpoints_map", "build_service_map",
           "categorize_endpoints", "service_port_name"]


@dataclass(frozen=True)
class ServicePort:
    """ServicePortInfo: what the rules need of one port of one Service."""

    name: str                       # ServicePortName.String(): "default/web:http"
    protocol: str                   # lower case: tcp
    cluster_ip: str
    port: int
    node_port: int = 0
    load_balancer_ips: tuple[str, ...] = ()
    external_ips: tuple[str, ...] = ()  # spec.externalIPs
    affinity_seconds: int = 0       # sessionAffinity ClientIP: its timeout; 0: none
    internal_local: bool = False
    external_local: bool = False


@dataclass(frozen=True)
class Endpoint:
    ip: str
    port: int
    ready: bool = True
    serving: bool = True
    terminating: bool = False
    node_name: str = ""

    def __str__(self) -> str:
        return f"{self.ip}:{self.port}"


def service_port_name(namespace: str, name: str, port_name: str) -> str:
    return f"{namespace}/{name}" + (f":{port_name}" if port_name else "")


def build_service_map(services: list[Object]) -> dict[str, ServicePort]:
    """serviceToServiceMap: headless and ExternalName Services have no rules."""
    out: dict[str, ServicePort] = {}
    for svc in services:
        spec, meta = svc.get("spec") or {}, svc["metadata"]
        ip = spec.get("clusterIP") or ""
        if spec.get("type") == "ExternalName" or not ip or ip == "None":
            continue
        ingress = tuple(i["ip"] for i in ((svc.get("status") or {}).get("loadBalancer") or {}).get(
            "ingress") or () if i.get("ip"))
        affinity = 0
        if spec.get("sessionAffinity") == "ClientIP":
            affinity = int(((spec.get("sessionAffinityConfig") or {}).get("clientIP") or {}).get(
                "timeoutSeconds", 10800))
        for port in spec.get("ports") or ():
            name = service_port_name(meta.get("namespace", ""), meta["name"], port.get("name", ""))
            out[name] = ServicePort(
                name, str(port.get("protocol", "TCP")).lower(), ip, int(port["port"]),
                int(port.get("nodePort") or 0), ingress, tuple(spec.get("externalIPs") or ()),
                affinity, spec.get("internalTrafficPolicy") == "Local",
                spec.get("externalTrafficPolicy") == "Local")
    return out


def build_endpoints_map(slices: list[Object]) -> dict[str, list[Endpoint]]:
    """EndpointsChangeTracker: each slice's endpoints under the ServicePortNames of its ports."""
    out: dict[str, list[Endpoint]] = {}
    for eps in sorted(slices, key=lambda s: str(s["metadata"]["name"])):
        meta = eps["metadata"]
        service = (meta.get("labels") or {}).get("kubernetes.io/service-name")
        if not service:
            continue
        for port in eps.get("ports") or ():
            if port.get("port") is None:
                continue
            name = service_port_name(meta.get("namespace", ""), service, port.get("name") or "")
            for endpoint in eps.get("endpoints") or ():
                c = endpoint.get("conditions") or {}
                out.setdefault(name, []).append(Endpoint(
                    endpoint["addresses"][0], int(port["port"]), c.get("ready") is not False,
                    c.get("serving", c.get("ready")) is not False, c.get("terminating") is True,
                    endpoint.get("nodeName", "")))
    for endpoints in out.values():
        endpoints.sort(key=lambda e: (e.ip, e.port))
    return out


def categorize_endpoints(endpoints: list[Endpoint], svc: ServicePort, node: str
                         ) -> tuple[list[Endpoint], list[Endpoint]]:
    """CategorizeEndpoints: (cluster endpoints, local endpoints), ready ones first choice,
    serving-and-terminating ones when there are no ready ones."""
    def pick(candidates: list[Endpoint]) -> list[Endpoint]:
        ready = [e for e in candidates if e.ready]
        return ready or [e for e in candidates if e.serving and e.terminating]
    local = pick([e for e in endpoints if e.node_name == node]) \
        if svc.internal_local or svc.external_local else []
    return pick(endpoints), local
