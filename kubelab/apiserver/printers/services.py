"""`kubectl get services` and `kubectl get endpointslices` columns.

pkg/printers/internalversion/printers.go: printService (NAME TYPE CLUSTER-IP EXTERNAL-IP
PORT(S) AGE, wide: SELECTOR; getServiceExternalIP, makePortString) and printEndpointSlice
(NAME ADDRESSTYPE PORTS ENDPOINTS AGE; formatDiscoveryPorts, formatDiscoveryEndpoints and
listWithMoreString: three values, then "+ N more..."), and printEndpoints (NAME ENDPOINTS AGE;
formatEndpoints: the ready addresses, each with each port, three at most, then "+ N more..."),
registered by add_handlers as printers.go's AddHandlers registers them.
"""

from __future__ import annotations

from kubelab.api import Object
from kubelab.apiserver.printers.tablegenerator import TableGenerator, column
from kubelab.apiserver.printers.tablegenerator import translate_timestamp_since as _age

__all__ = ["add_handlers", "format_endpoints", "make_port_string", "service_external_ip"]


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


def _service_row(svc: Object, now: float) -> list[str]:
    spec = svc.get("spec") or {}
    ips = spec.get("clusterIPs") or []
    ports = make_port_string(spec.get("ports") or []) or "<none>"
    selector = spec.get("selector") or {}
    return [svc["metadata"]["name"], str(spec.get("type", "")), ips[0] if ips else "<none>",
            service_external_ip(svc), ports, _age(svc, now),
            ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>"]


def _endpoint_slice_row(eps: Object, now: float) -> list[str]:
    ports = [str(p["port"]) if p.get("port") is not None else (p.get("name") or "*")
             for p in eps.get("ports") or []]
    addresses = [a for e in eps.get("endpoints") or [] for a in e.get("addresses") or []]
    return [eps["metadata"]["name"], str(eps.get("addressType", "")), _list_with_more(ports),
            _list_with_more(addresses), _age(eps, now)]


# --- endpoints ---
def format_endpoints(ep: Object) -> str:
    """formatEndpoints: ip:port of each ready address and port (a subset without ports: the
    bare ip), the first three, then "+ N more..." counting the rest; no subsets: <none>."""
    subsets = ep.get("subsets") or []
    if not subsets:
        return "<none>"
    shown: list[str] = []
    count, limit = 0, 3
    for subset in subsets:
        addresses = [a.get("ip", "") for a in subset.get("addresses") or []]
        ports = subset.get("ports") or []
        pairs = addresses if not ports else \
            [f"[{ip}]:{p.get('port')}" if ":" in ip else f"{ip}:{p.get('port')}"
             for p in ports for ip in addresses]
        count += len(pairs)
        shown += pairs[:limit - len(shown)]
    text = ",".join(shown)
    return f"{text} + {count - limit} more..." if count > limit else text


def _endpoints_row(ep: Object, now: float) -> list[str]:
    return [ep["metadata"]["name"], format_endpoints(ep), _age(ep, now)]


def add_handlers(h: TableGenerator) -> None:
    name, age = column("Name", format_="name"), column("Age")
    h.table_handler("services", [name, column("Type"), column("Cluster-IP"), column("External-IP"),
                                 column("Port(s)"), age, column("Selector", priority=1)], _service_row)
    h.table_handler("endpointslices", [name, column("AddressType"), column("Ports"),
                                       column("Endpoints"), age], _endpoint_slice_row)
    # --- endpoints ---
    h.table_handler("endpoints", [name, column("Endpoints"), age], _endpoints_row)
