"""Faults of a replicated control plane (docs/ARCHITECTURE.md section 6), mixed into Faults.

Every replica is crashed and restarted by name with the ordinary faults
(`c.faults.crash("scheduler-1")`, `c.faults.crash("apiserver-2")`, `c.faults.restart(...)`);
crash_leader finds the replica that holds a component's Lease, as an operator reads
`kubectl get lease -n kube-system kube-scheduler` before pulling that machine's plug.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubelab.replicas import LEASE_NAMESPACE, LEASES

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
