"""Cluster DNS as CoreDNS's kubernetes plugin answers it (coredns/coredns plugin/kubernetes:
kubernetes.go Records, and the resolv.conf the kubelet writes: pkg/kubelet/network/dns).

A pod's resolv.conf (dnsPolicy ClusterFirst) is

    nameserver 10.96.0.10
    search <namespace>.svc.cluster.local svc.cluster.local cluster.local
    options ndots:5

so `web` from a pod of namespace default is tried as web.default.svc.cluster.local first. A
name with at least ndots dots, or ending in ".", is tried as it is first. The records:

    <service>.<ns>.svc.cluster.local             A     the ClusterIP; for a headless Service,
                                                       the addresses of its ready endpoints
    <hostname>.<service>.<ns>.svc.cluster.local  A     a headless Service's endpoint with that
                                                       hostname (a StatefulSet's pods)
    <service>.<ns>.svc.cluster.local             CNAME spec.externalName (type ExternalName)
    <a-b-c-d>.<ns>.pod.cluster.local             A     a.b.c.d (the `pods insecure` mode)

Where kubelab departs: there is no DNS protocol. `resolve` reads Services and EndpointSlices
through the API at the moment it is asked (CoreDNS watches them, so it lags by a watch
delivery), and answers have no TTL. In a cluster that runs CoreDNS as pods (Cluster(anatomy=True):
the coredns Deployment behind the kube-dns Service in kube-system) the answer needs one of
those pods ready, as the query goes to 10.96.0.10 and on to them: with none, the lookup times
out (`;; connection timed out; no servers could be reached`) until they return.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubelab.api.errors import ApiError
from kubelab.client.client import Client

__all__ = ["CLUSTER_DOMAIN", "NDOTS", "Answer", "resolv_conf", "resolve", "search_path"]

CLUSTER_DOMAIN = "cluster.local"
NDOTS = 5
DNS_SERVICE_IP = "10.96.0.10"   # kubeadm's kube-dns Service address


def search_path(namespace: str) -> list[str]:
    return [f"{namespace}.svc.{CLUSTER_DOMAIN}", f"svc.{CLUSTER_DOMAIN}", CLUSTER_DOMAIN]


def resolv_conf(namespace: str) -> str:
    return (f"nameserver {DNS_SERVICE_IP}\nsearch {' '.join(search_path(namespace))}\n"
            f"options ndots:{NDOTS}\n")


@dataclass
class Answer:
    """The outcome of one lookup: the names tried in order, and the one that answered."""

    query: str
    name: str = ""                       # the fully qualified name that answered
    addresses: list[str] = field(default_factory=list)
    cname: str = ""
    tried: list[str] = field(default_factory=list)
    error: str = ""                      # no server answered (no ready CoreDNS pod)

    @property
    def found(self) -> bool:
        return bool(self.addresses or self.cname)

    def __str__(self) -> str:
        if self.error:
            return self.error
        if not self.found:
            return f"** server can't find {self.query}: NXDOMAIN (tried {', '.join(self.tried)})"
        if self.cname:
            return f"{self.name}.\t30\tIN\tCNAME\t{self.cname}."
        return "\n".join(f"{self.name}.\t30\tIN\tA\t{ip}" for ip in self.addresses)


def candidates(name: str, namespace: str) -> list[str]:
    """The names the stub resolver tries, in order (ndots and the search list)."""
    if name.endswith("."):
        return [name[:-1]]
    searched = [f"{name}.{suffix}" for suffix in search_path(namespace)]
    return [name, *searched] if name.count(".") >= NDOTS else [*searched, name]


def resolve(client: Client, name: str, namespace: str = "default", *, coredns: bool = False
            ) -> Answer:
    """What a pod of `namespace` gets for `name` (client: CoreDNS's view of the API).
    coredns: the cluster runs CoreDNS as pods, and one of them must be ready to answer."""
    answer = Answer(name)
    if coredns and not _dns_server_ready(client):
        answer.error = ";; connection timed out; no servers could be reached"
        return answer
    for fqdn in candidates(name.lower(), namespace):
        answer.tried.append(fqdn)
        addresses, cname = _records(client, fqdn)
        if addresses or cname:
            answer.name, answer.addresses, answer.cname = fqdn, addresses, cname
            return answer
    return answer


def _dns_server_ready(client: Client) -> bool:
    """Is one endpoint of the kube-dns Service (a coredns pod) ready?"""
    slices = client.list("endpointslices", "kube-system",
                         label_selector="kubernetes.io/service-name=kube-dns")["items"]
    return any((e.get("conditions") or {}).get("ready") is not False
               for s in slices for e in s.get("endpoints") or [])


def _records(client: Client, fqdn: str) -> tuple[list[str], str]:
    suffix = f".svc.{CLUSTER_DOMAIN}"
    pod_suffix = f".pod.{CLUSTER_DOMAIN}"
    if fqdn.endswith(pod_suffix):
        parts = fqdn[:-len(pod_suffix)].split(".")
        if len(parts) == 2 and parts[0].count("-") == 3:
            return [parts[0].replace("-", ".")], ""
        return [], ""
    if not fqdn.endswith(suffix):
        return [], ""
    parts = fqdn[:-len(suffix)].split(".")
    if len(parts) not in (2, 3):
        return [], ""
    hostname = parts[0] if len(parts) == 3 else ""
    service_name, namespace = parts[-2], parts[-1]
    try:
        svc = client.get("services", service_name, namespace)
    except ApiError:
        return [], ""
    spec = svc.get("spec") or {}
    if spec.get("type") == "ExternalName":
        return ([], str(spec.get("externalName") or "")) if not hostname else ([], "")
    if spec.get("clusterIP") != "None":
        return ([str(spec["clusterIP"])] if not hostname and spec.get("clusterIP") else []), ""
    slices = client.list("endpointslices", namespace,
                         label_selector=f"kubernetes.io/service-name={service_name}")["items"]
    addresses = sorted({e["addresses"][0] for s in slices for e in s.get("endpoints") or []
                        if (e.get("conditions") or {}).get("ready") is not False
                        and (not hostname or e.get("hostname") == hostname)})
    return addresses, ""
