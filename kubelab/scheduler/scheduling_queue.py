"""The scheduling queue: which pod the scheduler tries next, and when a failed one comes back.

pkg/scheduler/backend/queue/scheduling_queue.go (PriorityQueue) and backoff_queue.go. Three
places a pending pod can be:

- activeQ: ready to be tried, ordered by priority, then by when it was queued (PrioritySort);
- backoffQ: tried and failed, waiting out its backoff: 1 s after the first attempt, doubling
  up to 10 s (podInitialBackoffSeconds, podMaxBackoffSeconds), counted from the failure;
- unschedulablePods: no node could take it. It waits there until a cluster event that one of
  the plugins which rejected it registered for (events.py) makes it worth trying again, or
  for podMaxInUnschedulablePodsDuration (5 min) at the latest.

Two background loops, as upstream's goroutines: every second, pods whose backoff is over move
to activeQ; every 30 s, pods unschedulable for more than 5 minutes are moved out.
Upstream keeps two backoff heaps (unschedulable and error); one heap ordered by expiry gives
the same order of release here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from kubelab.scheduler.events import (
    UNSCHEDULABLE_TIMEOUT,
    ClusterEvent,
    QueueingHint,
    Registration,
)
from kubelab.scheduler.heap import KeyedHeap
from kubelab.scheduler.metrics import SchedulerMetrics
from kubelab.scheduler.types import Object, PodInfo, pod_key
from kubelab.sim.clock import Clock, Timer
from kubelab.sim.trace import Trace

__all__ = [
    "DEFAULT_POD_INITIAL_BACKOFF",
    "DEFAULT_POD_MAX_BACKOFF",
    "DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION",
    "PriorityQueue",
    "QueuedPodInfo",
    "queued_pod_key",
]

DEFAULT_POD_INITIAL_BACKOFF = 1.0
DEFAULT_POD_MAX_BACKOFF = 10.0
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 300.0
BACKOFF_FLUSH_PERIOD = 1.0  # flushBackoffQCompleted
UNSCHEDULABLE_FLUSH_PERIOD = 30.0  # flushUnschedulablePodsLeftover


def queued_pod_key(pod: Object) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"


@dataclass(eq=False)
class QueuedPodInfo:
    """A pod in the queue and its scheduling history (framework.QueuedPodInfo)."""

    pod: Object
    timestamp: float  # when it was last queued: orders activeQ, starts the backoff clock
    attempts: int = 0  # scheduling attempts so far (incremented on pop)
    initial_attempt_timestamp: float | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)  # who rejected it last time

    @property
    def key(self) -> str:
        return queued_pod_key(self.pod)

    @property
    def priority(self) -> int:
        return int((self.pod.get("spec") or {}).get("priority") or 0)


class _Strategy(Enum):
    SKIP = 0
    AFTER_BACKOFF = 1


class PriorityQueue:
    """hint_map: scheduler name -> plugin name -> what it registered (events.events_for_plugin).
    on_ready is called whenever pods become poppable, so the scheduler can wake up."""

    def __init__(self, clock: Clock, hint_map: Mapping[str, Mapping[str, list[Registration]]], *,
                 initial_backoff: float = DEFAULT_POD_INITIAL_BACKOFF,
                 max_backoff: float = DEFAULT_POD_MAX_BACKOFF,
                 max_in_unschedulable: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
                 on_ready: Callable[[], None] = lambda: None, trace: Trace | None = None,
                 name: str = "scheduler", metrics: SchedulerMetrics | None = None) -> None:
        self.clock, self.hint_map, self.on_ready = clock, hint_map, on_ready
        self.metrics = SchedulerMetrics() if metrics is None else metrics
        self.trace, self.name = trace, name
        self.initial_backoff, self.max_backoff = initial_backoff, max_backoff
        self.max_in_unschedulable = max_in_unschedulable
        self.active_q: KeyedHeap[QueuedPodInfo] = KeyedHeap()
        self.backoff_q: KeyedHeap[QueuedPodInfo] = KeyedHeap()
        self.unschedulable_pods: dict[str, QueuedPodInfo] = {}
        self.scheduling_cycle = 0  # incremented by every pop
        # The cycle during which the last move request came: a pod that was being tried then
        # goes to backoffQ rather than unschedulablePods when it fails, as the event may help.
        self.move_request_cycle = -1
        self._timers: list[Timer] = []
        # The nominator: pods a preemption nominated, by node (nominatedPods) and back.
        self.nominated_pods: dict[str, dict[str, PodInfo]] = {}
        self.nominated_pod_to_node: dict[str, str] = {}

    # --- lifecycle ---------------------------------------------------------------------------

    def run(self) -> None:
        """Start the two flush loops (background timers, as they are periodic goroutines)."""
        self._every(BACKOFF_FLUSH_PERIOD, self.flush_backoff_q_completed)
        self._every(UNSCHEDULABLE_FLUSH_PERIOD, self.flush_unschedulable_pods_leftover)

    def _every(self, period: float, fn: Callable[[], None]) -> None:
        def tick() -> None:
            fn()
            self._timers.append(self.clock.call_later(period, tick, background=True))
        self._timers.append(self.clock.call_later(period, tick, background=True))

    def close(self) -> None:
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()

    # --- adding and popping ------------------------------------------------------------------

    def add(self, pod: Object) -> None:
        """A new unscheduled pod: straight to activeQ (and nominated if its status says so)."""
        # The event is EventUnscheduledPodAdd, whose Label() is "UnschedulablePodAdd".
        self._move_to_active_q(QueuedPodInfo(pod, self.clock.now), "UnschedulablePodAdd")
        self.add_nominated_pod(pod)
        self.on_ready()

    def pop(self) -> QueuedPodInfo | None:
        """The most important pod in activeQ (None when it is empty)."""
        info = self.active_q.pop()
        if info is not None:
            info.attempts += 1
            self.scheduling_cycle += 1
        return info

    def done(self, pod: Object) -> None:
        """Done: the pod's cycle is over (in-flight event tracking is not modelled)."""

    def _move_to_active_q(self, info: QueuedPodInfo, event: str) -> None:
        if info.initial_attempt_timestamp is None:
            info.initial_attempt_timestamp = self.clock.now
        self.unschedulable_pods.pop(info.key, None)
        self.backoff_q.delete(info.key)
        # PrioritySort's Less: higher priority first, then the earlier timestamp.
        self.active_q.add_or_update(info.key, (-info.priority, info.timestamp), info)
        self._record(info, "activeQ", event)

    def _move_to_backoff_q(self, info: QueuedPodInfo, event: str) -> None:
        self.unschedulable_pods.pop(info.key, None)
        self.backoff_q.add_or_update(info.key, self.backoff_time(info), info)
        self._record(info, "backoffQ", event)

    def _record(self, info: QueuedPodInfo, queue: str, event: str) -> None:
        self.metrics.incoming_pod(queue, event)  # scheduler_queue_incoming_pods_total
        if self.trace is not None and event != "UnschedulablePodAdd":
            self.trace.record(self.name, "queue", f"pods/{info.key}", queue=queue, event=event)

    # --- backoff -----------------------------------------------------------------------------

    def backoff_duration(self, info: QueuedPodInfo) -> float:
        """calculateBackoffDuration: initial, doubled for each further attempt, capped."""
        if info.attempts == 0:
            return 0.0
        duration = self.initial_backoff
        for _ in range(1, info.attempts):
            if duration > self.max_backoff - duration:
                return self.max_backoff
            duration += duration
        return duration

    def backoff_time(self, info: QueuedPodInfo) -> float:
        return info.timestamp + self.backoff_duration(info)

    def is_pod_backing_off(self, info: QueuedPodInfo) -> bool:
        return self.backoff_time(info) > self.clock.now

    def flush_backoff_q_completed(self) -> None:
        moved = False
        while (head := self.backoff_q.peek()) is not None and not self.is_pod_backing_off(head):
            self.backoff_q.pop()
            self._move_to_active_q(head, "BackoffComplete")
            moved = True
        if moved:
            self.on_ready()

    def flush_unschedulable_pods_leftover(self) -> None:
        now = self.clock.now
        stale = [i for i in self.unschedulable_pods.values() if now - i.timestamp > self.max_in_unschedulable]
        if stale:
            self.move_pods_to_active_or_backoff_queue(stale, UNSCHEDULABLE_TIMEOUT, None, None)

    # --- failures ----------------------------------------------------------------------------

    def add_unschedulable_if_not_present(self, info: QueuedPodInfo, pod_scheduling_cycle: int) -> None:
        """A pod whose attempt failed comes back: to unschedulablePods if plugins rejected it
        and nothing happened meanwhile; otherwise (an error, or a move request during its
        cycle) to backoffQ."""
        key = info.key
        if key in self.unschedulable_pods or key in self.active_q or key in self.backoff_q:
            return  # upstream returns "Pod ... is already present in the ... queue"
        info.timestamp = self.clock.now
        if not info.unschedulable_plugins or self.move_request_cycle >= pod_scheduling_cycle:
            self._move_to_backoff_q(info, "ScheduleAttemptFailure")
        else:
            self.unschedulable_pods[key] = info
            self._record(info, "unschedulablePods", "ScheduleAttemptFailure")

    # --- informer events ---------------------------------------------------------------------

    def update(self, old: Object | None, new: Object) -> None:
        """An unscheduled pod changed. In activeQ or backoffQ it is just refreshed; if it was
        unschedulable and its spec or labels changed, it may fit now: try again."""
        key = queued_pod_key(new)
        self.update_nominated_pod(old, new)
        for heap in (self.active_q, self.backoff_q):
            info = heap.get(key)
            if info is not None:
                info.pod = new
                return
        info = self.unschedulable_pods.get(key)
        if info is None:
            self._move_to_active_q(QueuedPodInfo(new, self.clock.now), "UnscheduledPodUpdate")
            self.on_ready()
            return
        info.pod = new
        if old is not None and _is_pod_updated(old, new):
            if self.is_pod_backing_off(info):
                self._move_to_backoff_q(info, "UnscheduledPodUpdate")
            else:
                self._move_to_active_q(info, "UnscheduledPodUpdate")
                self.on_ready()

    def delete(self, pod: Object) -> None:
        key = queued_pod_key(pod)
        self.delete_nominated_pod_if_exists(pod)
        if not self.active_q.delete(key) and not self.backoff_q.delete(key):
            self.unschedulable_pods.pop(key, None)

    def move_all_to_active_or_backoff_queue(self, event: ClusterEvent, old: Any, new: Any,
                                            pre_check: Callable[[Object], bool] | None = None) -> None:
        candidates = [i for i in self.unschedulable_pods.values() if pre_check is None or pre_check(i.pod)]
        self.move_pods_to_active_or_backoff_queue(candidates, event, old, new)

    def move_pods_to_active_or_backoff_queue(self, infos: Iterable[QueuedPodInfo], event: ClusterEvent,
                                             old: Any, new: Any) -> None:
        activated = False
        for info in list(infos):
            if self._is_pod_worth_requeuing(info, event, old, new) is _Strategy.SKIP:
                continue
            if self.is_pod_backing_off(info):
                self._move_to_backoff_q(info, event.label)
            else:
                self._move_to_active_q(info, event.label)
                activated = True
        self.move_request_cycle = self.scheduling_cycle
        if activated:
            self.on_ready()

    def _is_pod_worth_requeuing(self, info: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any
                                ) -> _Strategy:
        """Ask each plugin that rejected the pod whether this event may change its mind."""
        if not info.unschedulable_plugins or event.is_wildcard():
            return _Strategy.AFTER_BACKOFF
        registrations = self.hint_map.get((info.pod.get("spec") or {}).get("schedulerName", ""), {})
        for plugin in sorted(info.unschedulable_plugins):
            for registered, hint in registrations.get(plugin, ()):
                if not registered.matches(event):
                    continue
                if hint is None or hint(info.pod, old, new) is QueueingHint.Queue:
                    return _Strategy.AFTER_BACKOFF
        return _Strategy.SKIP

    # --- the nominator (nominator in scheduling_queue.go) ---------------------------------------

    def add_nominated_pod(self, pod: Object, node_name: str | None = None) -> None:
        """AddNominatedPod: node_name given is ModeOverride (a PostFilter's choice; "" clears);
        None is ModeNoop: the pod's own status.nominatedNodeName, if any."""
        self.delete_nominated_pod_if_exists(pod)
        node = node_name if node_name is not None else _nominated_node_name(pod)
        if not node or (pod.get("spec") or {}).get("nodeName"):
            return
        info = PodInfo(pod)
        self.nominated_pod_to_node[info.key] = node
        self.nominated_pods.setdefault(node, {})[info.key] = info

    def update_nominated_pod(self, old: Object | None, new: Object) -> None:
        """UpdateNominatedPod: follow the new status.nominatedNodeName; if neither version
        has one, keep the node reserved in memory (the status patch may not have landed)."""
        keep: str | None = None
        if old is not None and not _nominated_node_name(old) and not _nominated_node_name(new):
            keep = self.nominated_pod_to_node.get(pod_key(old))
        if old is not None:
            self.delete_nominated_pod_if_exists(old)
        self.add_nominated_pod(new, keep)

    def delete_nominated_pod_if_exists(self, pod: Object) -> None:
        key = pod_key(pod)
        node = self.nominated_pod_to_node.pop(key, None)
        if node is not None:
            pods = self.nominated_pods.get(node, {})
            pods.pop(key, None)
            if not pods:
                self.nominated_pods.pop(node, None)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """NominatedPodsForNode, in the order they were nominated."""
        return list(self.nominated_pods.get(node_name, {}).values())

    # --- looking inside ----------------------------------------------------------------------

    def pending_pods(self) -> tuple[list[Object], str]:
        """PendingPods: every queued pod, and upstream's one-line summary of where they are."""
        active, backoff = [i.pod for i in self.active_q], [i.pod for i in self.backoff_q]
        unschedulable = [i.pod for i in self.unschedulable_pods.values()]
        summary = (f"activeQ:{len(active)}; backoffQ:{len(backoff)}; "
                   f"unschedulablePods:{len(unschedulable)}")
        return active + backoff + unschedulable, summary

    def get(self, key: str) -> QueuedPodInfo | None:
        return self.active_q.get(key) or self.backoff_q.get(key) or self.unschedulable_pods.get(key)

    def __len__(self) -> int:
        return len(self.active_q) + len(self.backoff_q) + len(self.unschedulable_pods)


def _nominated_node_name(pod: Object) -> str:
    return str((pod.get("status") or {}).get("nominatedNodeName") or "")


def _is_pod_updated(old: Object, new: Object) -> bool:
    """isPodUpdated: did anything but status, resourceVersion, generation, managedFields or
    finalizers change? (Our own PodScheduled=False write must not count.)"""
    def strip(pod: Object) -> dict[str, Any]:
        meta = {k: v for k, v in (pod.get("metadata") or {}).items()
                if k not in ("resourceVersion", "generation", "managedFields", "finalizers")}
        return {**{k: v for k, v in pod.items() if k != "status"}, "metadata": meta}
    return strip(old) != strip(new)
