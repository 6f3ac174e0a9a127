"""Faults of a replicated control plane (docs/ARCHITECTURE.md section 6), mixed into Faults.

Every replica is crashed and restarted by name with the ordinary faults
(`c.faults.crash("scheduler-1")`, `c.faults.crash("apiserver-2")`, `c.faults.restart(...)`);
crash_leader finds the replica that holds a component's Lease, as an operator reads
`kubectl get lease -n kube-system kube-scheduler` before pulling that machine's plug.
slow_apiserver makes one API server answer late, as an overloaded one does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubelab.cluster.replicas import LEASE_NAMESPACE, LEASES

if TYPE_CHECKING:
    from kubelab.cluster import Cluster

__all__ = ["ReplicaFaults"]


class ReplicaFaults:
    if TYPE_CHECKING:
        _cluster: Cluster

        def _record(self, name: str, obj: str = "", **detail: Any) -> None: ...

    def crash_leader(self, component: str) -> str:
        """Crash the replica of "scheduler" or "controller-manager" whose identity holds its
        Lease; returns that replica's name. Its followers take over once the lease expires."""
        replica = self._cluster.leader(component)
        if replica is None:
            raise ValueError(f"no replica of {component} holds the Lease "
                             f"{LEASE_NAMESPACE}/{LEASES[component]}")
        if replica not in self._cluster.components:
            raise ValueError(f"the Lease {LEASE_NAMESPACE}/{LEASES[component]} names {replica}, "
                             "which is not running")
        self._cluster.crash_component(replica)
        self._record("crash_leader", replica, of=component,
                     identity=self._cluster.identities.get(replica, ""))
        return replica

    def slow_apiserver(self, seconds: float, name: str = "apiserver") -> None:
        """Make the API server `name` (apiserver-2 among replicas) answer every request
        `seconds` late (0 heals it). Requests are still served at once; clients with a timeout
        (the leader election lock: RenewDeadline / 2) give up on a late answer, and an update
        they gave up on may still have been applied, as upstream's may."""
        if seconds < 0:
            raise ValueError(f"seconds must be >= 0, got {seconds}")
        server = self._cluster._apiserver_named(name)
        if server is None:
            raise ValueError(f'no API server "{name}"; API servers: '
                             f'{", ".join(s.name for s in self._cluster.apiservers)}')
        server.response_delay = float(seconds)
        self._record("slow_apiserver", name, seconds=seconds)
