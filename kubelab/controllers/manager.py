"""kube-controller-manager: many controllers in one process, on one set of informers
(kubernetes/kubernetes cmd/kube-controller-manager/app/controllermanager.go).

Each controller watches its kinds and closes the gap between desired and actual state, talking
only to the API server. They share one SharedInformerFactory, so the ReplicaSet controller,
the Deployment controller and the garbage collector hold one cache of pods between them, fed by
one LIST and one WATCH. Nothing runs until every informer has synced (WaitForCacheSync): a
controller acting on a half-filled cache would, say, create pods that already exist.

The shared informers have the manager's own client; each controller gets its own, with its own
token bucket at the same --kube-api-qps/--kube-api-burst (20/30), as ControllerContext's
ClientBuilder.ClientOrDie(name) builds one clientset per controller.

A crash (stop) loses the caches, queues and expectations; the restarted manager relists.

With leader election (ctx.leader_election: replicas, or --leader-elect) the manager first wins
the Lease kube-system/kube-controller-manager; its informers and controllers start in
OnStartedLeading, so a follower holds no caches. Losing the Lease stops it (upstream exits).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from kubelab.client.component import ComponentContext
from kubelab.client.flowcontrol import ClientConnection
from kubelab.client.leaderelection.component import start_leader_election
from kubelab.client.leaderelection.leaderelection import LeaderElector
from kubelab.client.shared_informer import SharedInformerFactory, transform_strip_managed_fields
from kubelab.controllers.controller_descriptor import (
    Controller,
    ControllerDescriptor,
    controller_aliases,
    new_controller_descriptors,
)
from kubelab.sim.clock import Timer

__all__ = ["CONTROLLERS", "ControllerManager", "enabled_controllers"]

# The controllers the manager can run, name -> descriptor (upstream's --controllers names;
# controller_descriptor.py). To add one, register its descriptor there.
CONTROLLERS: dict[str, ControllerDescriptor] = new_controller_descriptors()
SYNCED_POLL_PERIOD = 0.1  # client-go WaitForCacheSync polls every 100 ms


class ControllerManager:
    """The component: Cluster runs it as "controller-manager" (system:kube-controller-manager).

    controllers: which ones to run, like --controllers (default ["*"]): a name (or an alias,
        e.g. "replicaset") runs that controller, "-name" leaves it out, "*" runs every one not
        disabled by default (IsControllerEnabled). A list of plain names runs just those.
    """

    def __init__(self, ctx: ComponentContext, controllers: Iterable[str] | None = None) -> None:
        self.ctx, self.name = ctx, ctx.name
        names = enabled_controllers(["*"] if controllers is None else list(controllers))
        # Informer transform to trim managedFields for memory efficiency (CreateControllerContext).
        self.informers = SharedInformerFactory(ctx.client, ctx.clock, rand=ctx.rand,
                                               trace=ctx.trace, name=ctx.name,
                                               transform=transform_strip_managed_fields)
        self.controllers: dict[str, Controller] = {
            name: CONTROLLERS[name].init_func(_client_or_die(ctx), self.informers) for name in names}
        self.running = False
        self._poll: Timer | None = None
        self.elector: LeaderElector | None = None
        self.exited = False  # it lost its Lease and stopped (upstream: the process exits)

    def __getitem__(self, name: str) -> Any:  # Any: the notebooks reach into each controller
        """A running controller by name, e.g. cm["replicaset-controller"]."""
        return self.controllers[name]

    def start(self) -> None:
        settings = self.ctx.leader_election
        if settings is None:
            self._run()
            return
        # controllermanager.go Run: with --leader-elect the controllers (and their informers)
        # start in OnStartedLeading; the Lease is not released (no ReleaseOnCancel).
        self.elector = start_leader_election(
            self.ctx, settings, "kube-controller-manager", "kube-controller-manager",
            on_started_leading=self._run, on_stopped_leading=self._stopped_leading,
            release_on_cancel=False)

    def _run(self) -> None:
        self.informers.start()
        self._wait_for_cache_sync()

    def _stopped_leading(self) -> None:
        """"leaderelection lost": upstream exits the process; kubelab stops its loops."""
        self.ctx.trace.record(self.name, "leaderelection-lost", "")
        self.exited = True
        self.stop()

    def _wait_for_cache_sync(self) -> None:
        self._poll = None
        if not self.informers.has_synced():
            self._poll = self.ctx.clock.call_later(SYNCED_POLL_PERIOD, self._wait_for_cache_sync)
            return
        self.running = True
        self.ctx.trace.record(self.name, "caches-synced", "",
                              controllers=",".join(self.controllers))
        for controller in self.controllers.values():
            controller.run()

    def stop(self) -> None:
        """A crash: informers, queues and every controller's memory are gone."""
        if self.elector is not None:
            self.elector.stop()
        if self._poll is not None:
            self._poll.cancel()
        for controller in self.controllers.values():
            controller.stop()
        self.informers.stop()
        self.running = False

    def __repr__(self) -> str:
        state = "running" if self.running else "waiting for caches"
        return f"<ControllerManager {state}: {', '.join(self.controllers)}>"


def enabled_controllers(flags: list[str]) -> list[str]:
    """The controllers --controllers=flags runs, in CONTROLLERS' order (IsControllerEnabled
    for each). An unknown name is an error, as kube-controller-manager's validation says."""
    aliases = controller_aliases(CONTROLLERS)
    wanted = [f if f in ("*", "") else ("-" if f.startswith("-") else "") +
              aliases.get(f.lstrip("-"), f.lstrip("-")) for f in flags]
    unknown = [f.lstrip("-") for f in wanted if f != "*" and f.lstrip("-") not in CONTROLLERS]
    if unknown:
        raise ValueError(f"unknown controller(s) {unknown}; known: {', '.join(CONTROLLERS)}")

    def enabled(name: str) -> bool:
        for flag in wanted:
            if flag == name:
                return True
            if flag == f"-{name}":
                return False
        return "*" in wanted and not CONTROLLERS[name].disabled_by_default
    return [name for name in CONTROLLERS if enabled(name)]


def _client_or_die(ctx: ComponentContext) -> ComponentContext:
    """A controller's context: the manager's, with a client of its own token bucket."""
    limiter = ctx.client.rate_limiter
    own = None if limiter is None else ClientConnection(limiter.qps, limiter.burst).rate_limiter(ctx.clock)
    return dataclasses.replace(ctx, client=ctx.client.with_rate_limiter(own))
