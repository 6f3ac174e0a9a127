"""kube-scheduler: watch pods without a node, pick one for each, write the choice as a Binding.

pkg/scheduler/scheduler.go (New, Run) and cmd/kube-scheduler/app/server.go (start the informers,
wait for their caches to sync, then schedule). It never starts a container; the kubelet does.

The pieces, each in its own module as upstream splits them:
    eventhandlers.py     informer events -> cache and queue
    cache.py             what is requested on each node, including assumed pods
    scheduling_queue.py  activeQ, backoffQ, unschedulablePods
    schedule_one.py      one scheduling cycle and its binding cycle
    framework.py         the plugins of one profile (one Framework per schedulerName)

Unlike a controller, the scheduler does not use a workqueue of keys: like upstream, its event
handlers feed a priority queue of pods, and one loop pops and schedules them one at a time.

With leader election (ctx.leader_election: replicas, or --leader-elect), server.go's order is
kept: informers start and sync first, then the replica campaigns for the Lease
kube-system/kube-scheduler, and only the leader runs the queue and the loop. A replica that
loses the Lease stops (upstream's process exits) and releases it (ReleaseOnCancel).

To run it with another configuration, hand the Cluster a factory:

    Cluster(replace={"scheduler": lambda ctx: Scheduler(ctx, config=load_config(yaml_text))})
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubelab.client.component import ComponentContext
from kubelab.client.events import EventRecorder
from kubelab.client.leaderelection.component import start_leader_election
from kubelab.client.leaderelection.config import LeaderElectionConfiguration
from kubelab.client.leaderelection.leaderelection import LeaderElector
from kubelab.client.shared_informer import SharedInformerFactory
from kubelab.scheduler import eventhandlers, schedule_one
from kubelab.scheduler.cache import Cache
from kubelab.scheduler.config import SchedulerConfiguration, load_config
from kubelab.scheduler.events import events_for_plugin
from kubelab.scheduler.explain import Explanation
from kubelab.scheduler.framework import Framework
from kubelab.scheduler.metrics import SchedulerMetrics
from kubelab.scheduler.plugins.registry import PluginFactory
from kubelab.scheduler.scheduling_queue import PriorityQueue
from kubelab.sim.clock import Timer

__all__ = ["DEFAULT_CYCLE_COST", "Scheduler"]

DEFAULT_CYCLE_COST = 0.01  # virtual seconds per scheduling cycle: at most 100 pods/s
SYNCED_POLL_PERIOD = 0.1  # eventhandlers.go syncedPollPeriod
CLEAN_ASSUMED_PERIOD = 1.0  # cache.go cleanAssumedPeriod (only used when assumed pods expire)


class Scheduler:
    """The kube-scheduler component.

    config: a SchedulerConfiguration, or what load_config accepts (YAML text, a path, a dict);
        None means the default profile ("default-scheduler").
    cycle_cost: virtual seconds one scheduling cycle takes; it caps throughput at 1/cycle_cost.
    bind_latency: virtual seconds a Binding takes to reach the API server.
    explain: keep, per pod, the explanation of its last scheduling decision (see explain()).
    registry: out-of-tree plugins by name, for profiles that enable them.
    assumed_pod_ttl: seconds after which an assumed pod whose binding finished is forgotten;
        0 (upstream's value) means never.
    """

    name = "scheduler"

    def __init__(self, ctx: ComponentContext,
                 config: SchedulerConfiguration | str | Mapping[str, Any] | None = None, *,
                 cycle_cost: float = DEFAULT_CYCLE_COST, bind_latency: float = 0.0, explain: bool = False,
                 registry: Mapping[str, PluginFactory] | None = None, assumed_pod_ttl: float = 0.0) -> None:
        for label, value in (("cycle_cost", cycle_cost), ("bind_latency", bind_latency),
                             ("assumed_pod_ttl", assumed_pod_ttl)):
            if not isinstance(value, (int, float)) or value != value or value < 0:
                raise ValueError(f"{label} must be a number of seconds >= 0, got {value!r}")
        self.ctx = ctx
        self.config = config if isinstance(config, SchedulerConfiguration) else load_config(config, registry)
        self.cycle_cost, self.bind_latency = float(cycle_cost), float(bind_latency)
        self.explain_mode = explain
        self.profiles: dict[str, Framework] = {}
        self.recorders: dict[str, EventRecorder] = {}
        for profile in self.config.profiles:
            # Events name the profile as their source, as upstream's per-profile recorders do.
            self.recorders[profile.scheduler_name] = ctx.recorder(profile.scheduler_name)
            self.profiles[profile.scheduler_name] = Framework(
                profile, rand=ctx.rand, registry=registry,
                bind=lambda pod, node: schedule_one.bind_through_api(self, pod, node),
                global_percentage=self.config.percentage_of_nodes_to_score, client=ctx.client,
                clock=ctx.clock, recorder=self.recorders[profile.scheduler_name])
        hint_map = {name: {plugin: events_for_plugin(plugin, obj) for plugin, obj in fwk.plugins.items()}
                    for name, fwk in self.profiles.items()}
        self.cache = Cache(ttl=assumed_pod_ttl)
        self.metrics = SchedulerMetrics()  # /metrics (metrics.py); a new process counts from zero
        self.queue = PriorityQueue(ctx.clock, hint_map, on_ready=self._wake, trace=ctx.trace, name=ctx.name,
                                   metrics=self.metrics,
                                   initial_backoff=self.config.pod_initial_backoff_seconds,
                                   max_backoff=self.config.pod_max_backoff_seconds)
        for fwk in self.profiles.values():
            fwk.pod_nominator = self.queue  # the Handle's PodNominator, as upstream's queue is
        self.informers = SharedInformerFactory(ctx.client, ctx.clock, rand=ctx.rand, trace=ctx.trace,
                                               name=ctx.name)
        self.pod_informer = self.informers.informer_for("pods",
                                                        field_selector=eventhandlers.POD_FIELD_SELECTOR)
        # newPodInformer: non-terminal pods only. Its trim of managedFields ("Dropping
        # `.metadata.managedFields` to improve memory usage") does not happen in 1.34: the
        # factory's InformerFor sets its own transform, nil, over it (kubernetes#132367, fixed
        # in 1.36 by #137473). So the scheduler's cache keeps managedFields, as 1.34's does.
        self.node_informer = self.informers.informer_for("nodes")
        self.explanations: dict[str, Explanation] = {}  # namespace/name -> last decision
        self.preemptions: dict[str, Explanation] = {}  # namespace/name -> its last cycle that preempted
        self.bind_conflicts: dict[str, bool] = {}  # pods whose last Binding got 409 Conflict
        self.attempts = 0  # scheduling cycles run
        self.scheduled = 0  # pods bound
        self.running = False
        self.synced = False
        # Without leader election a scheduler leads from the start (--leader-elect=false).
        self.leading = ctx.leader_election is None
        self.elector: LeaderElector | None = None
        self.exited = False  # it lost its Lease and stopped (upstream: the process exits)
        self._busy = False  # a cycle is under way (its cost has not elapsed yet)
        self._timers: list[Timer] = []

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        self.running = True
        eventhandlers.add_all_event_handlers(self)
        self.informers.start()
        if self.leading:
            self.queue.run()
        if self.cache.ttl > 0:
            self._every(CLEAN_ASSUMED_PERIOD, lambda: self.cache.cleanup_assumed_pods(self.ctx.clock.now))
        self._wait_for_sync()

    def stop(self) -> None:
        """A crash: queue, cache and assumptions are gone; a binding already sent still lands."""
        self.running = self.leading = False
        if self.elector is not None:
            self.elector.stop()
        self.informers.stop()
        self.queue.close()
        for timer in self._timers:
            timer.cancel()

    def _every(self, period: float, fn: Callable[[], object]) -> None:
        def tick() -> None:
            fn()
            self._timers.append(self.ctx.clock.call_later(period, tick, background=True))
        self._timers.append(self.ctx.clock.call_later(period, tick, background=True))

    def _wait_for_sync(self, checks: int = 0) -> None:
        """Schedule nothing until both informers have delivered their first LIST: a scheduler
        that has not seen every bound pod would offer their room again. The informers deliver
        it on the clock just after start, so look again at once, then every 100 ms."""
        if not self.running:
            return
        if self.informers.has_synced():
            self.synced = True
            self.ctx.trace.record(self.ctx.name, "synced", "", nodes=len(self.cache.snapshot),
                                  pending=len(self.queue))
            if self.ctx.leader_election is not None:
                self._run_leader_election(self.ctx.leader_election)
            self._wake()
        else:
            delay = 0.0 if checks == 0 else SYNCED_POLL_PERIOD
            self._timers.append(self.ctx.clock.call_later(delay, self._wait_for_sync, checks + 1))

    # --- leader election (cmd/kube-scheduler/app/server.go Run) ------------------------------

    def _run_leader_election(self, settings: LeaderElectionConfiguration) -> None:
        """Informers run and caches are synced; only the leader runs the queue and the loop.
        The Lease is released on a graceful stop (ReleaseOnCancel, as kube-scheduler sets it)."""
        self.elector = start_leader_election(
            self.ctx, settings, "kube-scheduler", self.config.profiles[0].scheduler_name,
            on_started_leading=self._started_leading, on_stopped_leading=self._stopped_leading,
            release_on_cancel=True)

    def _started_leading(self) -> None:
        self.leading = True
        self.queue.run()
        self._wake()

    def _stopped_leading(self) -> None:
        """"Leaderelection lost": upstream exits the process; kubelab stops its loops."""
        self.ctx.trace.record(self.ctx.name, "leaderelection-lost", "")
        self.exited = True
        self.stop()
        self.ctx.exit()

    # --- the scheduling loop -----------------------------------------------------------------

    def _wake(self) -> None:
        if self.running and self.leading and self.synced and not self._busy and \
                len(self.queue.active_q):
            self._busy = True
            self.ctx.clock.call_later(0.0, self._cycle)

    def _cycle(self) -> None:
        if not self.running:
            return
        if not schedule_one.schedule_one(self):
            self._busy = False
            return
        self.ctx.clock.call_later(self.cycle_cost, self._cycle_done)

    def _cycle_done(self) -> None:
        self._busy = False
        self._wake()

    # --- looking inside ----------------------------------------------------------------------

    def explain(self, pod: str | None = None) -> Explanation:
        """The last decision about a pod ("namespace/name", or "name" in default; None: the
        latest decision about any pod), with .table() for the per-node, per-plugin view.
        Needs explain mode: Scheduler(ctx, explain=True), or set explain_mode = True."""
        hint = "" if self.explain_mode else " (explain mode is off: Scheduler(ctx, explain=True))"
        if pod is None:
            if not self.explanations:
                raise ValueError(f"no scheduling decision recorded yet{hint}")
            return next(reversed(self.explanations.values()))
        key = pod if "/" in pod else f"default/{pod}"
        if key not in self.explanations:
            raise ValueError(f"no scheduling decision recorded for pod {key}{hint}")
        return self.explanations[key]

    def explain_preemption(self, pod: str | None = None) -> Explanation:
        """The last decision that preempted pods for `pod` (None: for any pod): its
        explanation's .preemption says which victims on which node, and why that node. The
        pod's next cycles (it is bound once its victims are gone) do not replace it."""
        hint = "" if self.explain_mode else " (explain mode is off: Scheduler(ctx, explain=True))"
        if pod is None:
            if not self.preemptions:
                raise ValueError(f"no preemption recorded yet{hint}")
            return next(reversed(self.preemptions.values()))
        key = pod if "/" in pod else f"default/{pod}"
        if key not in self.preemptions:
            raise ValueError(f"no preemption recorded for pod {key}{hint}")
        return self.preemptions[key]

    def pending(self) -> str:
        """Where the pending pods are: upstream's "activeQ:N; backoffQ:N; unschedulablePods:N"."""
        return self.queue.pending_pods()[1]

    def __repr__(self) -> str:
        return (f"<Scheduler profiles={sorted(self.profiles)} scheduled={self.scheduled} "
                f"{self.pending()} running={self.running}>")
