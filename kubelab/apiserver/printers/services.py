"""`kubectl get services` and `kubectl get endpointslices` columns.

pkg/printers/internalversion/printers.go: printService (NAME TYPE CLUSTER-IP EXTERNAL-IP
PORT(S) AGE, wide: SELECTOR; getServiceExternalIP, makePortString) and printEndpointSlice
(NAME ADDRESSTYPE PORTS ENDPOINTS AGE; formatDiscoveryPorts, formatDiscoveryEndpoints and
listWithMoreString: three values, then "+ N more..."). internalversion.py adds these to its
COLUMNS, so the served Table (kubelab.serve.tables) has them too.
"""

from __future__ import annotations

from collections.abc import Callable

from kubelab.api import Object

__all__ = ["SERVICE_COLUMNS", "SERVICE_WIDE_EXTRA"]


def _list_with_more(items: list[str], limit: int = 3) -> str:
    text = ",".join(items[:limit])
    if len(items) > limit:
        return f"{text} + {len(items) - limit} more..."
    return text or "<unset>"


def service_external_ip(svc: Object) -> str:
    """getServiceExternalIP."""
    spec, status = svc.get("spec") or {}, svc.get("status") or {}
    kind, external = spec.get("type"), list(spec.get("externalIPs") or [])
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else "<none>"
    if kind == "LoadBalancer":
        ingress = [i.get("ip") or i.get("hostname") or ""
                   for i in (status.get("loadBalancer") or {}).get("ingress") or []]
        ips = [*ingress, *external]
        return ",".join(ips) if ips else "<pending>"
    if kind == "ExternalName":
        return str(spec.get("externalName") or "")
    return "<unknown>"


def make_port_string(ports: list[Object]) -> str:
    parts = []
    for port in ports:
        text = f"{port.get('port')}/{port.get('protocol', 'TCP')}"
        if port.get("nodePort"):
            text = f"{port.get('port')}:{port['nodePort']}/{port.get('protocol', 'TCP')}"
        parts.append(text)
    return ",".join(parts)


def _service_row(svc: Object, now: float, wide: bool, age: Callable[[Object, float], str]) -> list[str]:
    spec = svc.get("spec") or {}
    ips = spec.get("clusterIPs") or []
    ports = make_port_string(spec.get("ports") or []) or "<none>"
    row = [svc["metadata"]["name"], str(spec.get("type", "")), ips[0] if ips else "<none>",
           service_external_ip(svc), ports, age(svc, now)]
    if wide:
        selector = spec.get("selector") or {}
        row.append(",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>")
    return row


def _endpoint_slice_row(eps: Object, now: float, wide: bool,
                        age: Callable[[Object, float], str]) -> list[str]:
    ports = [str(p["port"]) if p.get("port") is not None else (p.get("name") or "*")
             for p in eps.get("ports") or []]
    addresses = [a for e in eps.get("endpoints") or [] for a in e.get("addresses") or []]
    return [eps["metadata"]["name"], str(eps.get("addressType", "")), _list_with_more(ports),
            _list_with_more(addresses), age(eps, now)]


def columns(age: Callable[[Object, float], str]
            ) -> dict[str, tuple[list[str], Callable[[Object, float, bool], list[str]]]]:
    return {
        "services": (["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"],
                     lambda o, now, wide: _service_row(o, now, wide, age)),
        "endpointslices": (["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"],
                           lambda o, now, wide: _endpoint_slice_row(o, now, wide, age)),
    }


SERVICE_COLUMNS = columns
SERVICE_WIDE_EXTRA = {"services": ["SELECTOR"]}
