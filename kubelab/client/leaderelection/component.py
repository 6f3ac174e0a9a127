"""A component's leader election, as its main.go builds it: a LeaseLock in kube-system named
after the component, a client that times out after RenewDeadline / 2 (resourcelock
NewFromKubeconfig), events on the Lease from the component's recorder, then Run."""

from __future__ import annotations

from collections.abc import Callable

from kubelab.client.component import ComponentContext
from kubelab.client.leaderelection.config import LeaderElectionConfiguration
from kubelab.client.leaderelection.leaderelection import (
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElector,
    new_leader_elector,
)
from kubelab.client.leaderelection.resourcelock import LeaseLock

__all__ = ["start_leader_election"]


def start_leader_election(ctx: ComponentContext, settings: LeaderElectionConfiguration,
                          lease_name: str, recorder: str, *, on_started_leading: Callable[[], None],
                          on_stopped_leading: Callable[[], None], release_on_cancel: bool
                          ) -> LeaderElector:
    """Build the elector of one replica and run it; returns it (stop() it on a crash)."""
    lock = LeaseLock(ctx.client, settings.resource_namespace, lease_name, settings.identity,
                     recorder=ctx.recorder(recorder), timeout=max(1.0, settings.renew_deadline / 2))
    config = LeaderElectionConfig(lock, LeaderCallbacks(on_started_leading, on_stopped_leading),
                                  settings.lease_duration, settings.renew_deadline,
                                  settings.retry_period, release_on_cancel, name=ctx.name)
    elector = new_leader_elector(config, ctx.clock, ctx.rand, trace=ctx.trace)
    elector.run()
    return elector
