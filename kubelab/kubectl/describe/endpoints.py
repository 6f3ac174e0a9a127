"""`kubectl describe endpoints` (k8s.io/kubectl pkg/describe/describe.go: EndpointsDescriber,
describeEndpoints): name, namespace, labels, annotations, then each subset's ready and not-ready
addresses and its ports (a port without a name is <unset>), then the events."""

from __future__ import annotations

from kubelab.api import Object
from kubelab.client.client import Client
from kubelab.kubectl.describe.describe import annotations_multiline, describe_events, labels_multiline
from kubelab.kubectl.tabwriter import PrefixWriter

__all__ = ["ENDPOINTS_DESCRIBERS", "describe_endpoints"]


def describe_endpoints(client: Client, ep: Object, events: list[Object], now: float) -> str:
    meta = ep["metadata"]
    w = PrefixWriter()
    w.write(0, f"Name:\t{meta['name']}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    labels_multiline(w, "Labels", meta.get("labels"))
    annotations_multiline(w, "Annotations", meta.get("annotations"))
    w.write(0, "Subsets:\n")
    for subset in ep.get("subsets") or []:
        for title, key in (("Addresses", "addresses"), ("NotReadyAddresses", "notReadyAddresses")):
            ips = ",".join(a.get("ip", "") for a in subset.get(key) or [])
            w.write(1, f"{title}:\t{ips or '<none>'}\n")
        if subset.get("ports"):
            w.write(1, "Ports:\n")
            w.write(2, "Name\tPort\tProtocol\n")
            w.write(2, "----\t----\t--------\n")
            for port in subset["ports"]:
                w.write(2, f"{port.get('name') or '<unset>'}\t{port.get('port', 0)}\t"
                           f"{port.get('protocol', '')}\n")
        w.write(0, "\n")
    describe_events(w, events, now)
    return w.text()


ENDPOINTS_DESCRIBERS = {"endpoints": describe_endpoints}
