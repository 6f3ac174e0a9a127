"""Replicas of the control plane, for the wiring: how many of each, their names, and who leads.

`Cluster(replicas={"apiserver": 3, "scheduler": 2, "controller-manager": 2})` runs several of
each (a kubeadm HA control plane). One replica keeps today's name ("scheduler"); several are
numbered: scheduler-1, scheduler-2, apiserver-1, ... The API servers are peers behind a load
balancer (kubelab/cluster/loadbalancer.py). The scheduler and the controller manager elect a leader
through their Lease in kube-system (kubelab.client.leaderelection), as upstream's do with
--leader-elect, which kubelab turns on by default only when a component has more than one
replica: a single replica then acts at once and the traces of one-replica clusters stay as
they were (upstream's default is on, and a single replica takes its Lease within a moment).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubelab.api.errors import ApiError
from kubelab.apiserver import APIServer
from kubelab.cluster.loadbalancer import DirectConnection, Endpoint, LoadBalancer

if TYPE_CHECKING:
    from kubelab.client.client import Client
    from kubelab.sim import Clock, Rand, Trace
    from kubelab.store import Backend

__all__ = ["LEASES", "LEASE_NAMESPACE", "REPLICABLE", "ReplicaWiring", "check_leader_elect",
           "check_replicas", "replica_names"]

REPLICABLE = ("apiserver", "scheduler", "controller-manager")
LEASE_NAMESPACE = "kube-system"
# --leader-elect-resource-name of each component that elects a leader.
LEASES = {"scheduler": "kube-scheduler", "controller-manager": "kube-controller-manager"}
DURATIONS = ("lease_duration", "renew_deadline", "retry_period")  # --leader-elect-lease-duration ...


def check_replicas(replicas: Mapping[str, int] | None) -> dict[str, int]:
    """The replicas asked for, refused with a clear message when they cannot be run."""
    out: dict[str, int] = {}
    for name, count in (replicas or {}).items():
        if name not in REPLICABLE:
            raise ValueError(f"cannot run replicas of {name!r}; replicable: {', '.join(REPLICABLE)}")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"replicas of {name!r} must be an integer >= 1, got {count!r}")
        out[name] = count
    return out


def check_leader_elect(value: bool | Mapping[str, float] | None
                       ) -> tuple[bool | None, dict[str, Any]]:
    """(on, off or None for "when replicated"; the durations asked for). The durations are
    checked as NewLeaderElector checks them when the components start."""
    if value is None or isinstance(value, bool):
        return value, {}
    durations: dict[str, Any] = {}
    for key, seconds in value.items():
        if key not in DURATIONS:
            raise ValueError(f"unknown leader election setting {key!r}; known: {', '.join(DURATIONS)}")
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            raise ValueError(f"{key} must be a number of seconds, got {seconds!r}")
        durations[key] = float(seconds)
    return True, durations


def replica_names(component: str, count: int) -> list[str]:
    """["scheduler"] for one replica, ["scheduler-1", "scheduler-2"] for two."""
    return [component] if count == 1 else [f"{component}-{i + 1}" for i in range(count)]


class ReplicaWiring:
    """The Cluster's replica wiring: its API servers and their load balancer, each replica's
    leader election identity, and who leads."""

    if TYPE_CHECKING:
        store: Backend
        clock: Clock
        rand: Rand
        trace: Trace
        client: Client
        replicas: dict[str, int]

    def _build_apiservers(self) -> None:
        count = self.replicas.get("apiserver", 1)
        first = APIServer(self.store, self.clock, self.rand, trace=self.trace)
        # One set of ClusterIP and NodePort allocations: upstream's replicas share theirs through
        # etcd (IPAddress objects); kubelab's live in memory, so the replicas share the object.
        self.apiservers = [first] + [
            APIServer(self.store, self.clock, self.rand, trace=self.trace,
                      service_allocators=first.service_allocators) for _ in range(count - 1)]
        self.apiserver = self.apiservers[0]  # c.apiserver: the first replica
        for server, name in zip(self.apiservers, replica_names("apiserver", count), strict=True):
            server.name = name
            server.authn = self.apiserver.authn  # one --token-auth-file for all of them
        # Several API servers sit behind a load balancer; one is reached directly.
        self.loadbalancer = LoadBalancer(self.apiservers, self.trace) if count > 1 else None
        self.identities: dict[str, str] = {}  # replica -> its leader election identity now
        self._owners: dict[str, str] = {}     # every identity ever used -> its replica
        self._replica_of: dict[str, str] = {}  # scheduler-1 -> scheduler

    def endpoint(self, client: str) -> Endpoint:
        """A new connection for a client named `client`: through the load balancer when there
        are several API servers, else straight to the API server."""
        if self.loadbalancer is not None:
            return self.loadbalancer.connection(client)
        return DirectConnection(self.apiserver)

    def _apiserver_named(self, name: str) -> APIServer | None:
        names = [s.name for s in self.apiservers]
        if name == "apiserver" and len(names) > 1:
            raise ValueError(f"the apiserver runs {len(names)} replicas: {', '.join(names)}; "
                             "name one")
        return next((s for s in self.apiservers if s.name == name), None)

    def leader(self, component: str) -> str | None:
        """The replica of "scheduler" or "controller-manager" that its Lease's holderIdentity
        names now (it may have crashed since); None when nobody holds it."""
        if component not in LEASES:
            raise ValueError(f"{component!r} elects no leader; these do: {', '.join(LEASES)}")
        try:
            lease = self.client.get("leases", LEASES[component], LEASE_NAMESPACE)
        except ApiError as err:
            if err.code == 404:
                return None
            raise
        holder = str((lease.get("spec") or {}).get("holderIdentity") or "")
        return self._owners.get(holder)
