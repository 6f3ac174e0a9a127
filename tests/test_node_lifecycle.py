"""The node lifecycle and taint eviction controllers: timings, taints, tolerations, disruption."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab.api.meta import parse_time
from kubelab.cluster import Cluster
from kubelab.cluster import cluster as cluster_module
from kubelab.controllers.node_lifecycle import (
    NOT_READY,
    UNREACHABLE,
    RateLimitedTimedQueue,
    TokenBucketRateLimiter,
    compute_zone_state,
    get_matching_tolerations,
    get_min_toleration_time,
    tolerates_taint,
)
from tests.kubelet_helpers import events, kubelet_cluster, pod, start_node_lifecycle

UNREACHABLE_TOLERATION = {"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute"}


def ready_condition(c: Cluster, node: str) -> dict[str, Any]:
    return next(x for x in c.get("nodes", node)["status"]["conditions"] if x["type"] == "Ready")


def taints(c: Cluster, node: str) -> list[tuple[str, str]]:
    return [(t["key"], t["effect"]) for t in c.get("nodes", node)["spec"].get("taints") or []]


def test_toleration_matching_as_upstream() -> None:
    taint = {"key": UNREACHABLE, "effect": "NoExecute"}
    assert tolerates_taint({"operator": "Exists"}, taint)                    # tolerates everything
    assert tolerates_taint({"key": UNREACHABLE, "operator": "Exists"}, taint)
    assert not tolerates_taint({"key": UNREACHABLE, "operator": "Exists", "effect": "NoSchedule"}, taint)
    assert tolerates_taint({"key": "a", "value": "1"}, {"key": "a", "value": "1", "effect": "NoExecute"})
    assert not tolerates_taint({"key": "a", "value": "2"}, {"key": "a", "value": "1", "effect": "NoExecute"})
    ok, used = get_matching_tolerations([taint], [UNREACHABLE_TOLERATION, {"operator": "Exists"}])
    assert ok and len(used) == 2
    assert get_matching_tolerations([taint, {"key": "x", "effect": "NoExecute"}],
                                    [UNREACHABLE_TOLERATION]) == (False, [])
    assert get_min_toleration_time([]) == 0
    assert get_min_toleration_time([{"tolerationSeconds": 300}, {"tolerationSeconds": 60}]) == 60
    assert get_min_toleration_time([{"operator": "Exists"}]) == -1


def test_zone_states_and_the_pace_of_tainting() -> None:
    up, down = {"status": "True"}, {"status": "Unknown"}
    assert compute_zone_state([up, up, down], 0.55) == (1, "Normal")
    assert compute_zone_state([down, down], 0.55) == (2, "FullDisruption")
    assert compute_zone_state([up, down, down, down], 0.55) == (3, "PartialDisruption")
    assert compute_zone_state([up, up, down, down], 0.55) == (2, "Normal")  # needs more than 2
    queue = RateLimitedTimedQueue(qps=0.1)
    for i, name in enumerate(("a", "b", "c")):
        queue.add(name, "", float(i))
    done: list[str] = []
    assert queue.try_process(10.0, lambda n: done.append(n) is None) == pytest.approx(10.0)
    assert done == ["a"]                  # burst 1: one node now, the next 10 s later
    assert queue.try_process(20.0, lambda n: done.append(n) is None) == pytest.approx(10.0)
    assert done == ["a", "b"] and "c" in queue
    queue.qps = 0.0                        # full disruption: tainting stops
    assert queue.try_process(1000.0, lambda n: done.append(n) is None) is None and done == ["a", "b"]


def test_the_token_bucket_counts_nanoseconds_so_its_wait_always_moves_the_clock() -> None:
    # In float seconds the bucket refilled from 118.2 to 128.2 held 0.9999999999999998 tokens
    # and asked to wait 1.3e-14 s, which 128.2 + 1.3e-14 cannot express: the pass re-armed at
    # the same instant forever. In whole nanoseconds the deficit is no deficit.
    queue = RateLimitedTimedQueue(qps=0.1)
    queue.add("a", "", 0.0)
    queue.add("b", "", 0.0)
    done: list[str] = []
    wait = queue.try_process(118.2, lambda n: done.append(n) is None)
    assert wait == pytest.approx(10.0) and done == ["a"]
    assert queue.try_process(118.2 + wait, lambda n: done.append(n) is None) is None
    assert done == ["a", "b"]
    limiter = TokenBucketRateLimiter(qps=0.1)
    assert limiter.try_accept(5.0) and not limiter.try_accept(5.0)
    assert limiter.wait(5.0) == 10.0 and 0 < limiter.wait(14.99999999) <= 1e-8  # nanoseconds
    assert not limiter.try_accept(14.99999999) and limiter.try_accept(15.0)
    assert TokenBucketRateLimiter(qps=0.0).wait(1.0) is None


def test_a_dead_node_with_watch_faults_does_not_livelock_the_clock() -> None:
    # Issue 15's reproduction: this schedule once spun the tainting pass at t = 265.1 s.
    c = Cluster(nodes=3, seed=20)
    c.apply({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
             "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                      "template": {"metadata": {"labels": {"app": "web"}},
                                   "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}})
    c.faults.reorder_watch_events(user="system:kube-scheduler")
    c.faults.duplicate_watch_events(user="system:kube-controller-manager")
    c.faults.kill_node("node-2")
    c.run(300)
    assert ("node.kubernetes.io/unreachable", "NoExecute") in taints(c, "node-2")


def test_a_dead_node_goes_unknown_then_tainted_then_its_pods_are_evicted_on_time() -> None:
    c = kubelet_cluster(nodes=3)
    start_node_lifecycle(c)
    c.apply(pod("default-tolerations"))
    quick = pod("tolerates-60s")
    quick["spec"]["tolerations"] = [{**UNREACHABLE_TOLERATION, "tolerationSeconds": 60}]
    c.apply(quick)
    forever = pod("tolerates-forever")
    forever["spec"]["tolerations"] = [UNREACHABLE_TOLERATION]
    c.apply(forever)
    c.run(20)
    assert [t["tolerationSeconds"] for t in c.get("pods", "default-tolerations")["spec"]["tolerations"]] \
        == [300, 300]   # DefaultTolerationSeconds admission: not-ready and unreachable
    c.faults.kill_node("node-1")
    killed = c.clock.now
    last_renewal = parse_time(c.get("leases", "node-1", namespace="kube-node-lease")["spec"]["renewTime"])
    unknown_at = killed + c.run_until(lambda: ready_condition(c, "node-1")["status"] == "Unknown",
                                      timeout=120)
    # node-monitor-grace-period (50 s) after the controller last *saw* a renewal; it looks every 5 s.
    assert 50 < unknown_at - last_renewal <= 60
    cond = ready_condition(c, "node-1")
    assert (cond["reason"], cond["message"]) == ("NodeStatusUnknown", "Kubelet stopped posting node status.")
    c.run(0.5)
    assert (UNREACHABLE, "NoSchedule") in taints(c, "node-1")   # the scheduler stops choosing it
    assert (UNREACHABLE, "NoExecute") not in taints(c, "node-1")
    c.run(5)
    assert (UNREACHABLE, "NoExecute") in taints(c, "node-1")    # the next monitor pass
    tainted = parse_time(next(t["timeAdded"] for t in c.get("nodes", "node-1")["spec"]["taints"]
                              if t["effect"] == "NoExecute"))
    assert tainted == pytest.approx(unknown_at + 5, abs=1)
    assert [e["message"] for e in events(c, "node-1", "NodeNotReady")] == \
        ["Node node-1 status is now: NodeNotReady"]
    assert events(c, "default-tolerations", "NodeNotReady")[0]["message"] == "Node is not ready"
    assert next(x for x in c.get("pods", "default-tolerations")["status"]["conditions"]
                if x["type"] == "Ready")["status"] == "False"
    deleted = {}
    for _ in range(400):
        c.run(1)
        for name in ("tolerates-60s", "default-tolerations"):
            if name not in deleted and c.get("pods", name)["metadata"].get("deletionTimestamp"):
                deleted[name] = c.clock.now
    assert deleted["tolerates-60s"] - tainted == pytest.approx(60, abs=1.5)
    assert deleted["default-tolerations"] - tainted == pytest.approx(300, abs=1.5)
    assert not c.get("pods", "tolerates-forever")["metadata"].get("deletionTimestamp")
    evicted = c.get("pods", "default-tolerations")
    disruption = next(x for x in evicted["status"]["conditions"] if x["type"] == "DisruptionTarget")
    assert disruption["reason"] == "DeletionByTaintManager"
    assert events(c, "default-tolerations", "TaintManagerEviction")[0]["message"] == \
        "Marking for deletion Pod default/default-tolerations"
    # The node is dead: its pods stay Terminating until it comes back (or someone force-deletes).
    c.faults.revive_node("node-1")
    c.run(30)
    assert not c.exists("pods", "default-tolerations") and not c.exists("pods", "tolerates-60s")
    assert c.exists("pods", "tolerates-forever")
    assert ready_condition(c, "node-1")["status"] == "True" and taints(c, "node-1") == []


def test_a_node_that_comes_back_in_time_keeps_its_pods() -> None:
    c = kubelet_cluster(nodes=3)
    start_node_lifecycle(c)
    c.apply(pod("web"))
    c.run(10)
    c.faults.partition("node-1")
    c.run_until(lambda: (UNREACHABLE, "NoExecute") in taints(c, "node-1"), timeout=120)
    c.run(100)
    c.faults.heal("node-1")
    # The kubelet writes Ready again once its Node informer shows the Unknown the controller
    # wrote: tryUpdateNodeStatus reads the lister first (kubelet_node_status.go), and that
    # informer relists only after its backoff, grown during the partition (up to 30 s,
    # jittered to twice that). Still long before the 300 s toleration runs out.
    c.run(90)
    assert taints(c, "node-1") == [] and ready_condition(c, "node-1")["status"] == "True"
    c.run(340)
    assert not c.get("pods", "web")["metadata"].get("deletionTimestamp")
    assert events(c, "web", "TaintManagerEviction")[0]["message"] == "Cancelling deletion of Pod default/web"
    assert next(x for x in c.get("pods", "web")["status"]["conditions"]
                if x["type"] == "Ready")["status"] == "True"   # the kubelet repaired what NLC wrote


def test_when_every_node_is_down_nothing_is_evicted() -> None:
    c = kubelet_cluster(nodes=1)
    start_node_lifecycle(c)
    c.apply(pod("web"))
    c.run(10)
    c.faults.kill_node("node-1")
    c.run(900)
    assert ready_condition(c, "node-1")["status"] == "Unknown"
    assert (UNREACHABLE, "NoExecute") not in taints(c, "node-1")   # full disruption: hands off
    assert not c.get("pods", "web")["metadata"].get("deletionTimestamp")


def test_hollow_nodes_are_left_alone_and_cordoned_nodes_get_the_unschedulable_taint() -> None:
    c = Cluster(nodes=2, components=[])
    start_node_lifecycle(c)
    c.run(600)
    assert ready_condition(c, "node-1")["status"] == "True" and taints(c, "node-1") == []
    k = kubelet_cluster(nodes=2)
    start_node_lifecycle(k)
    k.kubectl("cordon node-2")
    k.run(1)
    assert taints(k, "node-2") == [("node.kubernetes.io/unschedulable", "NoSchedule")]
    k.kubectl("uncordon node-2")
    k.run(1)
    assert taints(k, "node-2") == []
    assert NOT_READY not in {t[0] for t in taints(k, "node-1")}


@pytest.mark.skipif(not {"scheduler", "controller-manager", "kubelet"} <= set(cluster_module.COMPONENTS),
                    reason="needs the scheduler and the controller manager")
def test_a_deployment_comes_back_on_the_healthy_nodes() -> None:
    c = Cluster(nodes=3, seed=1)
    c.apply({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
             "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                      "template": {"metadata": {"labels": {"app": "web"}},
                                   "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}})
    c.run(30)
    victim = c.get("pods")[0]["spec"]["nodeName"]
    c.faults.kill_node(victim)

    def healthy() -> int:
        return sum(1 for p in c.get("pods") if p["spec"].get("nodeName") != victim
                   and p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp"))
    took = c.run_until(lambda: healthy() == 3, timeout=600)
    assert 350 < took < 380   # ~55 s to notice, 5 s to taint, 300 s of toleration, then rescheduled
