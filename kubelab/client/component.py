"""What every component is handed, and what it must offer the Cluster.

A component (the scheduler, the controller manager, a kubelet) gets a ComponentContext: a
Client with its own identity, the shared clock, a random generator and the trace. It never gets
the API server or another component. The Cluster starts it with start() and crashes it with
stop(): everything in its memory is then gone, and a restart builds a new one that relists.

The context holds only what every component has. What one component alone needs from the world
outside the API is its constructor's own typed argument, as each upstream main.go passes its
own: the kubelet its node's ContainerRuntime (kubelet.Dependencies' runtime service), kube-proxy
its node's IPTables (utiliptables.Interface), the cloud-controller-manager its cloud provider
(cloudprovider.Interface). The wiring (kubelab/cluster/components.py) hands them over.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kubelab.client.client import Client
from kubelab.client.events import EventRecorder
from kubelab.client.leaderelection.config import LeaderElectionConfiguration
from kubelab.sim.clock import Clock
from kubelab.sim.trace import Trace

__all__ = ["Component", "ComponentContext"]


@dataclass
class ComponentContext:
    name: str              # "scheduler", "controller-manager", "kubelet/node-1"
    client: Client         # authenticated as this component (system:kube-scheduler, ...)
    clock: Clock
    rand: random.Random
    trace: Trace
    # For a kubelet or kube-proxy: the Node it runs on (capacity, labels, taints) as given to
    # the Cluster.
    node: dict[str, Any] | None = None
    # For a replicated scheduler or controller manager: run only while holding the Lease
    # (kubelab.client.leaderelection); None runs at once, as --leader-elect=false does.
    leader_election: LeaderElectionConfiguration | None = None
    # Virtual seconds one controller sync takes (kubelab/client/controller_loop.py); None: the
    # loop's DEFAULT_SYNC_COST. Cluster(sync_cost=...) sets it; 0 makes syncs free.
    sync_cost: float | None = None
    # What the process's exit does beyond stopping it (a component that lost its Lease exits,
    # as upstream's os.Exit): with the anatomy its static pod's container dies with it, and the
    # kubelet's restart of that container runs the binary again. None: nothing more.
    on_exit: Callable[[], None] | None = None

    def exit(self) -> None:
        """The process exits (after its component stopped itself)."""
        if self.on_exit is not None:
            self.on_exit()

    def recorder(self, component: str | None = None, host: str = "") -> EventRecorder:
        """An EventRecorder whose events name this component as their source."""
        return EventRecorder(self.client, component or self.name, self.clock, host=host,
                             trace=self.trace)


class Component(Protocol):
    name: str

    def start(self) -> None: ...

    def stop(self) -> None: ...
