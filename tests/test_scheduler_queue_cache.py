"""The scheduling queue, the cache and cluster events on their own, against upstream semantics."""

from __future__ import annotations

from typing import Any

import pytest
from scheduler_helpers import make_node, make_pod

from kubelab.scheduler import Cache, CacheError, PriorityQueue
from kubelab.scheduler.events import (
    IN_TREE_EVENTS,
    NODE_ADD,
    UNSCHEDULABLE_TIMEOUT,
    ActionType,
    ClusterEvent,
    events_for_plugin,
    node_scheduling_properties_change,
)
from kubelab.scheduler.heap import KeyedHeap
from kubelab.scheduler.scheduling_queue import QueuedPodInfo
from kubelab.sim import Clock

HINTS = {"default-scheduler": IN_TREE_EVENTS}


def queued(name: str, priority: int = 0, cpu: str = "100m") -> dict[str, Any]:
    pod = make_pod(name, cpu=cpu, schedulerName="default-scheduler", priority=priority)
    pod["metadata"]["resourceVersion"] = "1"
    return pod


def fail(q: PriorityQueue, *plugins: str) -> QueuedPodInfo:
    """Pop the head and hand it back as rejected by `plugins` (an error if none)."""
    info = q.pop()
    assert info is not None
    info.unschedulable_plugins = set(plugins)
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    return info


def where(q: PriorityQueue, name: str) -> str:
    key = f"default/{name}"
    return ("activeQ" if key in q.active_q else "backoffQ" if key in q.backoff_q
            else "unschedulablePods" if key in q.unschedulable_pods else "none")


def test_active_q_orders_by_priority_then_arrival() -> None:
    clock = Clock()
    q = PriorityQueue(clock, HINTS)
    for i, (name, priority) in enumerate([("a", 0), ("b", 10), ("c", 0), ("d", 10)]):
        clock.run(until=float(i))
        q.add(queued(name, priority))
    popped = [q.pop() for _ in range(4)]
    assert [p.pod["metadata"]["name"] for p in popped if p] == ["b", "d", "a", "c"]
    assert q.pop() is None and q.scheduling_cycle == 4


@pytest.mark.parametrize("initial, maximum, expected", [
    (1.0, 10.0, [0, 1, 2, 4, 8, 10, 10]),
    (2.0, 5.0, [0, 2, 4, 5, 5, 5, 5]),
])
def test_backoff_duration_doubles_per_attempt_up_to_the_maximum(initial: float, maximum: float,
                                                                 expected: list[float]) -> None:
    q = PriorityQueue(Clock(), HINTS, initial_backoff=initial, max_backoff=maximum)
    info = QueuedPodInfo(queued("a"), 0.0)
    durations = []
    for attempts in range(7):
        info.attempts = attempts
        durations.append(q.backoff_duration(info))
    assert durations == expected


def test_a_rejected_pod_waits_in_unschedulable_pods_an_error_backs_off() -> None:
    clock = Clock()
    q = PriorityQueue(clock, HINTS)
    q.add(queued("rejected"))
    q.add(queued("errored"))
    fail(q, "NodeResourcesFit")
    fail(q)
    assert (where(q, "rejected"), where(q, "errored")) == ("unschedulablePods", "backoffQ")
    clock.run(until=0.5)
    q.flush_backoff_q_completed()
    assert where(q, "errored") == "backoffQ"
    clock.run(until=1.0)
    q.flush_backoff_q_completed()
    assert where(q, "errored") == "activeQ"
    assert q.pending_pods()[1] == "activeQ:1; backoffQ:0; unschedulablePods:1"


def test_events_move_only_pods_whose_rejecting_plugins_registered_them() -> None:
    clock = Clock()
    q = PriorityQueue(clock, HINTS)
    for name in ("fit", "taint", "affinity"):
        q.add(queued(name, cpu="2"))
    fail(q, "NodeResourcesFit")
    fail(q, "TaintToleration")
    fail(q, "NodeAffinity")
    clock.run(until=5.0)  # past every backoff
    label_change = ClusterEvent("Node", ActionType.UpdateNodeLabel, "NodeLabelChange")
    q.move_all_to_active_or_backoff_queue(label_change, make_node("n"), make_node("n", labels={"a": "b"}))
    assert [where(q, n) for n in ("fit", "taint", "affinity")] == ["unschedulablePods", "unschedulablePods",
                                                                    "activeQ"]
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, make_node("small", cpu="1"))
    assert where(q, "fit") == "unschedulablePods"  # NodeResourcesFit's hint: the node is too small
    assert where(q, "taint") == "activeQ"  # TaintToleration has no hint: any node add requeues
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, make_node("big", cpu="4"))
    assert where(q, "fit") == "activeQ"


def test_a_pod_still_backing_off_goes_to_backoff_q_when_an_event_moves_it() -> None:
    clock = Clock()
    q = PriorityQueue(clock, HINTS)
    q.add(queued("a"))
    fail(q, "TaintToleration")
    clock.run(until=0.5)
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, make_node("n"))
    assert where(q, "a") == "backoffQ"


def test_an_event_during_the_pods_cycle_sends_it_to_backoff_instead_of_unschedulable() -> None:
    q = PriorityQueue(Clock(), HINTS)
    q.add(queued("a"))
    info = q.pop()
    assert info is not None
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, make_node("n"))  # while "a" is in flight
    info.unschedulable_plugins = {"NodeResourcesFit"}
    q.add_unschedulable_if_not_present(info, q.scheduling_cycle)
    assert where(q, "a") == "backoffQ"


def test_unschedulable_pods_are_flushed_after_five_minutes() -> None:
    clock = Clock()
    q = PriorityQueue(clock, HINTS)
    q.run()
    q.add(queued("a"))
    fail(q, "NodeResourcesFit")
    clock.run(until=300.0)
    assert where(q, "a") == "unschedulablePods"
    clock.run(until=330.0)
    assert where(q, "a") == "activeQ"
    q.close()
    assert clock.pending() == 0


def test_updates_requeue_an_unschedulable_pod_only_when_more_than_status_changed() -> None:
    clock = Clock()
    q = PriorityQueue(clock, HINTS)
    old = queued("a")
    q.add(old)
    fail(q, "NodeAffinity")
    clock.run(until=5.0)
    status_only = {**old, "status": {"conditions": [{"type": "PodScheduled", "status": "False"}]},
                   "metadata": {**old["metadata"], "resourceVersion": "2"}}
    q.update(old, status_only)
    assert where(q, "a") == "unschedulablePods"
    relabeled = {**status_only, "metadata": {**status_only["metadata"], "labels": {"tier": "web"}}}
    q.update(status_only, relabeled)
    assert where(q, "a") == "activeQ"
    assert q.get("default/a") is not None and q.get("default/a").pod is relabeled  # type: ignore[union-attr]
    q.delete(relabeled)
    assert where(q, "a") == "none" and len(q) == 0


def test_wildcard_events_move_every_waiting_pod() -> None:
    clock = Clock()
    q = PriorityQueue(clock, HINTS)
    q.add(queued("a"))
    fail(q, "NodeName")
    clock.run(until=5.0)
    q.move_all_to_active_or_backoff_queue(UNSCHEDULABLE_TIMEOUT, None, None)
    assert where(q, "a") == "activeQ"


def test_node_scheduling_properties_change() -> None:
    node = make_node("n")
    assert node_scheduling_properties_change(node, node) == []
    heartbeat = {**node, "status": {**node["status"], "conditions": [{"type": "Ready", "status": "True",
                                                                       "lastHeartbeatTime": "later"}]}}
    old = {**node, "status": {**node["status"], "conditions": [{"type": "Ready", "status": "True"}]}}
    assert node_scheduling_properties_change(heartbeat, old) == []
    cordoned = make_node("n", unschedulable=True, taints=[{"key": "k", "effect": "NoSchedule"}])
    labels = [e.label for e in node_scheduling_properties_change(cordoned, node)]
    assert labels == ["NodeSpecUnschedulableChange", "NodeTaintChange"]
    assert events_for_plugin("MyPlugin", object())[0][0].matches(NODE_ADD)  # out-of-tree: everything


def test_cache_assume_forget_and_confirm() -> None:
    cache = Cache()
    cache.add_node(make_node("n1", cpu="4"))
    cache.add_node(make_node("n2", cpu="4"))
    pod = make_pod("a", cpu="1", node_name="n1")
    cache.assume_pod(pod)
    assert cache.snapshot.get("n1").requested.milli_cpu == 1000 and cache.is_assumed_pod(pod)
    with pytest.raises(CacheError, match=r"uid-default-a\(default/a\) is in the cache, so can't be assumed"):
        cache.assume_pod(pod)
    with pytest.raises(CacheError, match="was assumed on n2 but assigned to n1"):
        cache.forget_pod({**pod, "spec": {**pod["spec"], "nodeName": "n2"}})
    cache.forget_pod(pod)
    assert cache.snapshot.get("n1").requested.milli_cpu == 0 and not cache.pod_states
    cache.assume_pod(pod)
    cache.add_pod(make_pod("a", cpu="1", node_name="n2"))  # bound elsewhere: count it there
    assert [cache.snapshot.get(n).requested.milli_cpu for n in ("n1", "n2")] == [0, 1000]
    assert not cache.is_assumed_pod(pod)
    with pytest.raises(CacheError, match="was already in added state"):
        cache.add_pod(pod)
    with pytest.raises(CacheError, match="is not assumed, so it cannot be removed or forgotten"):
        cache.forget_pod(make_pod("a", cpu="1", node_name="n2"))
    with pytest.raises(CacheError, match="is not found in scheduler cache, so cannot be removed from it"):
        cache.remove_pod(make_pod("b", node_name="n1"))


def test_cache_assumed_pods_never_expire_by_default_and_do_with_a_ttl() -> None:
    for ttl, left in ((0.0, 1), (30.0, 0)):
        cache = Cache(ttl=ttl)
        cache.add_node(make_node("n1"))
        pod = make_pod("a", node_name="n1")
        cache.assume_pod(pod)
        cache.finish_binding(pod, now=0.0)
        cache.cleanup_assumed_pods(now=31.0)
        assert len(cache.pod_states) == left


def test_cache_keeps_pods_of_a_removed_node_counted_if_it_returns() -> None:
    cache = Cache()
    node = make_node("n1", cpu="4")
    cache.add_node(node)
    cache.add_pod(make_pod("a", cpu="3", node_name="n1"))
    cache.remove_node(node)
    assert len(cache.snapshot) == 0
    cache.add_node(node)
    assert cache.snapshot.get("n1").requested.milli_cpu == 3000


def test_keyed_heap_pops_in_order_and_skips_deleted_entries() -> None:
    heap: KeyedHeap[str] = KeyedHeap()
    for key, rank in (("a", 3), ("b", 1), ("c", 2), ("d", 1)):
        heap.add_or_update(key, rank, key.upper())
    heap.delete("b")
    heap.add_or_update("a", 0, "A2")
    assert list(heap) == ["A2", "D", "C"] and "b" not in heap
    assert [heap.pop() for _ in range(4)] == ["A2", "D", "C", None]
