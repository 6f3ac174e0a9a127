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
from kubelab.client.controller_loop import Controller as Loop
from kubelab.client.flowcontrol import ClientConnection
from kubelab.client.leaderelection.component import start_leader_election
from kubelab.client.leaderelection.leaderelection import LeaderElector
from kubelab.client.shared_informer import SharedInformerFactory, transform_strip_managed_fields
from kubelab.client.workqueue import Queue
from kubelab.controllers.controller_descriptor import (
    Controller,
    ControllerDescriptor,
    controller_aliases,
    new_controller_descriptors,
)
from kubelab.sim.clock import Timer

__all__ = ["CONTROLLERS", "ControllerManager", "enabled_controllers", "is_controller_enabled"]

# The controllers the manager can run, name -> descriptor (upstream's --controllers names;
# controller_descriptor.py). To add one, register its descriptor there.
CONTROLLERS: dict[str, ControllerDescriptor] = new_controller_descriptors()
SYNCED_POLL_PERIOD = 0.1  # client-go WaitForCacheSync polls every 100 ms

# The name each controller gives its workqueue upstream (TypedRateLimitingQueueConfig.Name, the
# `name` label of the workqueue_* metrics), by the name of kubelab's loop. A loop not listed
# keeps its own name. Queues that share a name upstream (every CSR controller's "certificate")
# share one series.
WORKQUEUE_NAMES = {
    "replicaset-controller": "replicaset",                  # replica_set.go NewBaseController
    "replicationmanager": "replicationmanager",
    "deployment-controller": "deployment",
    "statefulset-controller": "statefulset",
    "daemonset-controller": "daemonset",
    "job-controller": "job",
    "job-orphan-pod": "job_orphan_pod",
    "cronjob": "cronjob",
    "endpoints-controller": "endpoint",
    "endpointslice-controller": "endpoint_slice",
    "endpointslice-mirroring-controller": "endpoint_slice_mirroring",
    "garbagecollector/attempt-to-delete": "garbage_collector_attempt_to_delete",
    "garbagecollector/attempt-to-orphan": "garbage_collector_attempt_to_orphan",
    "namespace-controller": "namespace",
    "ttl-after-finished-controller": "ttl_jobs_to_delete",
    "horizontal-pod-autoscaler-controller": "horizontalpodautoscaler",
    "resourcequota-controller": "resourcequota_primary",
    "resourcequota-controller-missing-usage": "resourcequota_priority",
    "node-lifecycle-controller/noschedule": "node_lifecycle_controller",
    "disruption_stale_pod_disruption": "stale_pod_disruption",
    "csrapproving": "certificate",
}


class ControllerManager:
    """The component: Cluster runs it as "controller-manager" (system:kube-controller-manager).

    controllers: which ones to run, like --controllers (default "*": all of CONTROLLERS but
        those disabled by default); an alias (e.g. "replicaset") names its controller, "*"
        all that are on by default, "-name" turns one off. A list without "*" or "-" runs
        exactly its controllers, in its order.
    controller_options: name -> keyword arguments for that controller's constructor (its part
        of the component config), e.g. the root-CA publisher's root_ca.
    """

    def __init__(self, ctx: ComponentContext, controllers: Iterable[str] | None = None,
                 controller_options: dict[str, dict[str, Any]] | None = None) -> None:
        self.ctx, self.name = ctx, ctx.name
        names = enabled_controllers(["*"] if controllers is None else list(controllers))
        options = controller_options or {}
        # Informer transform to trim managedFields for memory efficiency (CreateControllerContext).
        self.informers = SharedInformerFactory(ctx.client, ctx.clock, rand=ctx.rand,
                                               trace=ctx.trace, name=ctx.name,
                                               transform=transform_strip_managed_fields)
        self.controllers: dict[str, Controller] = {
            name: CONTROLLERS[name].init_func(_client_or_die(ctx), self.informers,
                                              **options.get(name, {}))
            for name in names}
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
        self.ctx.exit()

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

    def workqueues(self) -> list[tuple[str, Queue[Any]]]:
        """Every controller's workqueue, as (upstream's queue name, queue), what the
        workqueue_* metrics are labelled with (WORKQUEUE_NAMES). A crashed and restarted
        manager has new queues: its metrics start from zero, as a new process's do."""
        found: list[tuple[str, Queue[Any]]] = []
        for controller in self.controllers.values():
            for loop in _loops(controller, set()):
                name = WORKQUEUE_NAMES.get(loop.name, loop.name)
                found.append(("certificate" if name.startswith("csrsigning") else name, loop.queue))
        return found

    def __repr__(self) -> str:
        state = "running" if self.running else "waiting for caches"
        return f"<ControllerManager {state}: {', '.join(self.controllers)}>"


# --- sa ---
def is_controller_enabled(name: str, disabled_by_default: bool, controllers: list[str]) -> bool:
    """IsControllerEnabled (controllermanager.go): the first of `name` and `-name` decides; else
    "*" turns on every controller not disabled by default. (Aliases are resolved already.)"""
    has_star = False
    for ctrl in controllers:
        if ctrl == name:
            return True
        if ctrl == "-" + name:
            return False
        has_star = has_star or ctrl == "*"
    return has_star and not disabled_by_default


def enabled_controllers(controllers: list[str]) -> list[str]:
    """The controllers the --controllers list turns on, in CONTROLLERS' order; a list of plain
    names (no "*", no "-name") is run exactly, in its own order."""
    aliases = controller_aliases(CONTROLLERS)

    def resolve(ctrl: str) -> str:
        off = ctrl.startswith("-")
        name = aliases.get(ctrl.removeprefix("-"), ctrl.removeprefix("-"))
        if name != "*" and name not in CONTROLLERS:
            raise ValueError(f"unknown controller(s) {[name]}; known: {', '.join(CONTROLLERS)}")
        return "-" + name if off else name
    flags = [resolve(c) for c in controllers]
    if "*" not in flags and not any(f.startswith("-") for f in flags):
        return flags  # exactly these, in this order
    return [name for name, d in CONTROLLERS.items()
            if is_controller_enabled(name, d.disabled_by_default, flags)]


def _client_or_die(ctx: ComponentContext) -> ComponentContext:
    """A controller's context: the manager's, with a client of its own token bucket."""
    limiter = ctx.client.rate_limiter
    own = None if limiter is None else ClientConnection(limiter.qps, limiter.burst).rate_limiter(ctx.clock)
    return dataclasses.replace(ctx, client=ctx.client.with_rate_limiter(own))


def _loops(obj: object, seen: set[int]) -> list[Loop]:
    """The controller loops obj holds, itself or in its parts (a signer per signer name, ...):
    kubelab.controllers objects and lists of them are searched, nothing else."""
    if isinstance(obj, Loop):
        return [obj]
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    parts: list[object] = []
    if isinstance(obj, (list, tuple)):
        parts = list(obj)
    elif isinstance(obj, dict):
        parts = list(obj.values())
    elif type(obj).__module__.startswith("kubelab.controllers") and hasattr(obj, "__dict__"):
        parts = list(vars(obj).values())
    return [loop for part in parts
            if isinstance(part, (Loop, list, tuple, dict)) or
            type(part).__module__.startswith("kubelab.controllers")
            for loop in _loops(part, seen)]
