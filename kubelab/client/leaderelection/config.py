"""--leader-elect and its settings, as a component is handed them (component-base
config LeaderElectionConfiguration; the identity is built by the wiring as kube-scheduler's and
kube-controller-manager's makeLeaderElectionConfig do: `<hostname>_<uuid>`)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LeaderElectionConfiguration"]


@dataclass(frozen=True)
class LeaderElectionConfiguration:
    identity: str
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    resource_namespace: str = "kube-system"
