"""What every kube-apiserver keeps in the API about itself (kubernetes/kubernetes
pkg/controlplane: controller/kubernetesservice/controller.go, reconcilers/lease.go,
controller/apiserverleasegc and apiserver/server.go's identity lease).

Every EndpointInterval (10 s) each API server
- ensures the `kubernetes` Service in default (ClusterIP 10.96.0.1, the first address of the
  service range; port https 443 -> 6443; labels component=apiserver, provider=kubernetes);
- renews its master lease (its address, for --endpoint-reconciler-ttl = 15 s) and reconciles
  the Service's endpoints to the addresses of the live leases (the lease endpoint reconciler,
  kube-apiserver's default): the EndpointSlice `kubernetes` in default, so a stopped API
  server drops out of it within 15 s and comes back when it does;
- renews its identity Lease `apiserver-<hash>` in kube-system (labels
  apiserver.kubernetes.io/identity=kube-apiserver and kubernetes.io/hostname), whose name is
  "apiserver-" and the lower-case unpadded base32 of the first 16 bytes of the SHA-256 of the
  host name, as upstream names it; leaseDurationSeconds 3600.

They write as the server itself, through its own handler chain (upstream: a loopback client
with a privileged token). Cluster(anatomy=True) starts them (kubelab/cluster/control_plane.py).
The lease reconciler writes the core/v1 Endpoints `kubernetes` (labelled
endpointslice.kubernetes.io/skip-mirror: "true"), then the EndpointSlice of the same name, as
upstream's EndpointsAdapter writes both (KEP-4974 keeps them after the deprecation).
Departures: the master leases live in memory, shared by the API servers of one cluster (upstream
keeps them in etcd under /registry/masterleases/ with an etcd lease's TTL); expired identity
Leases are not collected (apiserverleasegc).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
from typing import TYPE_CHECKING, Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import micro_time, new_uid
from kubelab.api.request import Request
from kubelab.apiserver.auth.authn import MASTERS
from kubelab.sim.clock import Timer

if TYPE_CHECKING:
    from kubelab.apiserver.server import APIServer

__all__ = ["ENDPOINT_INTERVAL", "MASTER_LEASE_TTL", "ControlPlaneControllers", "MasterLeases",
           "identity_lease_name"]

ENDPOINT_INTERVAL = 10.0      # kubernetesservice controller's EndpointInterval
MASTER_LEASE_TTL = 15.0       # --endpoint-reconciler-ttl (DefaultEndpointReconcilerTTL)
IDENTITY_LEASE_SECONDS = 3600  # IdentityLeaseDurationSeconds
KUBERNETES_SERVICE_IP = "10.96.0.1"
SECURE_PORT = 6443
LOOPBACK_TOKEN = "loopback-token-system:apiserver"


def identity_lease_name(hostname: str) -> str:
    """apiserver-<base32 of sha256(hostname)[:16], lower case, no padding>."""
    digest = hashlib.sha256(hostname.encode()).digest()[:16]
    return "apiserver-" + base64.b32encode(digest).decode().rstrip("=").lower()


class MasterLeases:
    """The master leases of one cluster's API servers: address -> when it expires."""

    def __init__(self) -> None:
        self.expiry: dict[str, float] = {}

    def update(self, ip: str, now: float) -> None:
        self.expiry[ip] = now + MASTER_LEASE_TTL

    def live(self, now: float) -> list[str]:
        return sorted(ip for ip, until in self.expiry.items() if until > now)


class ControlPlaneControllers:
    """One API server's kubernetes-service controller, lease reconciler and identity lease."""

    def __init__(self, server: APIServer, leases: MasterLeases, ip: str, hostname: str) -> None:
        self.server, self.leases, self.ip, self.hostname = server, leases, ip, hostname
        self.lease_name = identity_lease_name(hostname)
        self.holder = f"{self.lease_name}_{new_uid(server.rand)}"
        server.add_token(LOOPBACK_TOKEN, "system:apiserver", (MASTERS,))
        self._timer: Timer | None = None

    def start(self) -> None:
        self._tick()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _tick(self) -> None:
        self._timer = self.server.clock.call_later(ENDPOINT_INTERVAL, self._tick, background=True)
        if not self.server.running:
            return  # a stopped server renews nothing: its master lease runs out
        for step in (self.update_kubernetes_service, self.reconcile_endpoints,
                     self.renew_identity_lease):
            with contextlib.suppress(ApiError):  # upstream logs it and tries again next interval
                step()

    # ------------------------------------------------------------------ requests as itself

    def _do(self, verb: str, resource: str, namespace: str = "", name: str = "", *,
            group: str = "", body: Object | None = None) -> Object:
        return dict(self.server.handle(Request(verb, resource, namespace, name, group=group,
                                               body=body, token=LOOPBACK_TOKEN,
                                               user_agent="kube-apiserver")))

    def _get(self, resource: str, namespace: str, name: str, group: str = "") -> Object | None:
        try:
            return self._do("get", resource, namespace, name, group=group)
        except ApiError as err:
            if err.code == 404:
                return None
            raise

    # ------------------------------------------------------------------ the three loops

    def update_kubernetes_service(self) -> None:
        """CreateOrUpdateMasterServiceIfNeeded: create it when missing (an existing one is
        left as it is, as upstream does unless its ports must be reconciled)."""
        if self._get("services", "default", "kubernetes") is not None:
            return
        self._do("create", "services", "default", body={
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "kubernetes", "namespace": "default",
                         "labels": {"component": "apiserver", "provider": "kubernetes"}},
            "spec": {"type": "ClusterIP", "clusterIP": KUBERNETES_SERVICE_IP,
                     "sessionAffinity": "None",
                     "ports": [{"name": "https", "port": 443, "protocol": "TCP",
                                "targetPort": SECURE_PORT}]}})

    def reconcile_endpoints(self) -> None:
        """leaseEndpointReconciler.ReconcileEndpoints: renew our lease, then make the
        endpoints list exactly the live leases' addresses."""
        now = self.server.clock.now
        self.leases.update(self.ip, now)
        addresses = self.leases.live(now)
        self.reconcile_core_endpoints(addresses)
        want: dict[str, Any] = {
            "addressType": "IPv4",
            "endpoints": [{"addresses": [ip], "conditions": {"ready": True}} for ip in addresses],
            "ports": [{"name": "https", "port": SECURE_PORT, "protocol": "TCP"}]}
        current = self._get("endpointslices", "default", "kubernetes", "discovery.k8s.io")
        if current is None:
            self._do("create", "endpointslices", "default", group="discovery.k8s.io", body={
                "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                "metadata": {"name": "kubernetes", "namespace": "default",
                             "labels": {"kubernetes.io/service-name": "kubernetes"}}, **want})
            return
        if all(current.get(k) == v for k, v in want.items()):
            return
        self._do("update", "endpointslices", "default", "kubernetes", group="discovery.k8s.io",
                 body={**current, **want})

    # --- endpoints ---
    def reconcile_core_endpoints(self, addresses: list[str]) -> None:
        """The deprecated core/v1 Endpoints `kubernetes`, written first as upstream's
        EndpointsAdapter does: one subset of the live addresses on port https 6443, labelled
        endpointslice.kubernetes.io/skip-mirror so the mirroring controller leaves it alone."""
        subsets = [{"addresses": [{"ip": ip} for ip in addresses],
                    "ports": [{"name": "https", "port": SECURE_PORT, "protocol": "TCP"}]}] \
            if addresses else []
        current = self._get("endpoints", "default", "kubernetes")
        if current is None:
            self._do("create", "endpoints", "default", body={
                "apiVersion": "v1", "kind": "Endpoints",
                "metadata": {"name": "kubernetes", "namespace": "default",
                             "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
                "subsets": subsets})
            return
        if (current.get("subsets") or []) == subsets:
            return
        self._do("update", "endpoints", "default", "kubernetes", body={**current, "subsets": subsets})

    def renew_identity_lease(self) -> None:
        now = micro_time(self.server.clock.now)
        lease = self._get("leases", "kube-system", self.lease_name, "coordination.k8s.io")
        if lease is None:
            self._do("create", "leases", "kube-system", group="coordination.k8s.io", body={
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": self.lease_name, "namespace": "kube-system", "labels": {
                    "apiserver.kubernetes.io/identity": "kube-apiserver",
                    "kubernetes.io/hostname": self.hostname}},
                "spec": {"holderIdentity": self.holder,
                         "leaseDurationSeconds": IDENTITY_LEASE_SECONDS,
                         "acquireTime": now, "renewTime": now}})
            return
        lease["spec"] = {**(lease.get("spec") or {}), "holderIdentity": self.holder,
                         "renewTime": now}
        self._do("update", "leases", "kube-system", self.lease_name, group="coordination.k8s.io",
                 body=lease)
