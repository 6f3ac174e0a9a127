"""The Scheduler component in a Cluster: informers, queue, cache, binding, events, crashes."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from scheduler_helpers import make_node

from kubelab.api import ApiError
from kubelab.client.component import ComponentContext
from kubelab.cluster import Cluster
from kubelab.scheduler import Scheduler, SchedulerConfigError, load_config

BIN_PACKING = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: bin-packing
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
"""


def cluster(nodes: Any = 3, **kwargs: Any) -> Cluster:
    """A control plane with only the scheduler (and hollow nodes): the other components are
    other notebooks' business."""
    return Cluster(nodes=nodes, components=["scheduler"], **kwargs)


def pod(name: str, cpu: str = "100m", memory: str = "128Mi", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx",
                                     "resources": {"requests": {"cpu": cpu, "memory": memory}}}], **spec}}


def node_of(c: Cluster, name: str) -> str | None:
    return c.get("pods", name)["spec"].get("nodeName")  # type: ignore[no-any-return]


def scheduler(c: Cluster) -> Scheduler:
    s = c.components["scheduler"]
    assert isinstance(s, Scheduler)
    return s


def condition(c: Cluster, name: str) -> dict[str, Any]:
    conds = c.get("pods", name)["status"].get("conditions") or []
    return next(x for x in conds if x["type"] == "PodScheduled")  # type: ignore[no-any-return]


def attempt_times(c: Cluster, key: str) -> list[float]:
    return [r.time for r in c.trace.filter(component="scheduler", object_prefix=f"pods/{key}")
            if r.verb in ("assume", "unschedulable", "error")]


def test_pods_stay_pending_without_a_scheduler_and_are_bound_once_it_starts() -> None:
    c = Cluster(nodes=2, components=[])
    c.apply([pod("web-1"), pod("web-2")])
    c.run(60)
    assert [node_of(c, "web-1"), node_of(c, "web-2")] == [None, None]
    assert c.events() == []
    c.restart_component("scheduler")
    c.run(1)
    assert {node_of(c, "web-1"), node_of(c, "web-2")} <= {"node-1", "node-2"}
    bindings = [r for r in c.apiserver.audit if r.subresource == "binding"]
    assert [(r.user, r.code) for r in bindings] == [("system:kube-scheduler", 201)] * 2
    assert [r.object for r in c.trace.filter(verb="create", object_prefix="pods/default/web-1/binding")]


def test_binding_records_the_scheduled_event_and_the_api_server_sets_pod_scheduled_true() -> None:
    c = cluster(nodes=3)
    c.apply(pod("web-1"))
    c.run(1)
    host = node_of(c, "web-1")
    events = [e for e in c.events() if e["involvedObject"]["name"] == "web-1"]
    assert [(e["type"], e["reason"], e["message"], e["source"]["component"]) for e in events] == [
        ("Normal", "Scheduled", f"Successfully assigned default/web-1 to {host}", "default-scheduler")]
    assert condition(c, "web-1")["status"] == "True"


def test_failed_scheduling_message_event_and_pod_condition() -> None:
    c = cluster(nodes=[make_node("node-1", cpu="4", memory="1Gi"), make_node("node-2", cpu="1"),
                       make_node("node-3", cpu="1")])
    c.apply(pod("web-1", cpu="2", memory="2Gi"))
    c.run(1)
    # Every node asks for more than it has at all (UnschedulableAndUnresolvable), so
    # DefaultPreemption says why it cannot help, in upstream's words.
    message = ("0/3 nodes are available: 1 Insufficient memory, 2 Insufficient cpu. preemption: "
               "0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
    [event] = [e for e in c.events() if e["reason"] == "FailedScheduling"]
    assert (event["type"], event["message"], event["source"]["component"]) == ("Warning", message,
                                                                                 "default-scheduler")
    cond = condition(c, "web-1")
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", message)
    assert scheduler(c).pending() == "activeQ:0; backoffQ:0; unschedulablePods:1"
    assert "0/3 nodes are available" in c.kubectl("describe pod web-1")


def test_an_unschedulable_pod_is_retried_as_soon_as_a_big_enough_node_is_added() -> None:
    c = cluster(nodes=[make_node("node-1", cpu="1")])
    c.apply(pod("big", cpu="2"))
    c.run(20)
    c.client.create(make_node("tiny", cpu="1"))  # too small: its QueueingHint says QueueSkip
    c.run(20)
    assert len(attempt_times(c, "default/big")) == 1
    added_at = c.clock.now
    c.client.create(make_node("node-2", cpu="4"))
    c.run(1)
    assert node_of(c, "big") == "node-2"
    assert attempt_times(c, "default/big")[-1] - added_at < 1.0  # not after 5 minutes
    moved = c.trace.filter(component="scheduler", verb="queue", object_prefix="pods/default/big")
    assert [r.detail for r in moved][-1] == {"queue": "activeQ", "event": "NodeAdd"}


def test_freed_resources_from_a_deleted_pod_wake_the_waiting_pod() -> None:
    c = cluster(nodes=[make_node("node-1", cpu="1")])
    c.apply(pod("first", cpu="1"))
    c.run(1)
    c.apply(pod("second", cpu="1"))
    c.run(5)
    assert node_of(c, "second") is None
    c.client.delete("pods", "first", grace_period_seconds=0)
    c.run(2)
    assert node_of(c, "second") == "node-1"


def test_without_any_event_an_unschedulable_pod_is_retried_after_five_minutes() -> None:
    c = cluster(nodes=[make_node("node-1", cpu="1")])
    c.apply(pod("big", cpu="2"))
    c.run(600)
    times = attempt_times(c, "default/big")
    assert len(times) == 2  # podMaxInUnschedulablePodsDuration, checked every 30 s
    assert 300 < times[1] - times[0] <= 330


def test_backoff_doubles_from_one_second_to_ten() -> None:
    c = cluster(nodes=0)  # "no nodes available to schedule pods": no plugin to wait for: backoff
    c.apply(pod("web-1"))
    c.run(60)
    times = attempt_times(c, "default/web-1")
    gaps = [b - a for a, b in itertools.pairwise(times)][:6]
    for gap, backoff in zip(gaps, [1, 2, 4, 8, 10, 10], strict=True):
        assert backoff <= gap <= backoff + 1  # the backoffQ is flushed once a second
    assert condition(c, "web-1")["message"] == "no nodes available to schedule pods"


def test_higher_priority_pods_are_scheduled_first_then_first_come_first_served() -> None:
    c = cluster(nodes=2)
    c.faults.crash("scheduler")
    for name, priority in (("low", 0), ("mid-a", 100), ("high", 1000), ("mid-b", 100)):
        c.apply(pod(name, priority=priority))
    c.faults.restart("scheduler")
    c.run(1)
    bound = [r.object.rsplit("/", 1)[-1] for r in c.trace.filter(component="scheduler", verb="bound")]
    assert bound == ["high", "mid-a", "mid-b", "low"]


def test_scheduler_name_routes_pods_to_their_profile_and_ignores_other_schedulers() -> None:
    nodes = [make_node(f"node-{i}", cpu="4") for i in (1, 2, 3)]
    c = cluster(nodes=nodes, replace={"scheduler": lambda ctx: Scheduler(ctx, config=BIN_PACKING)})
    c.apply([pod(f"packed-{i}", cpu="1", schedulerName="bin-packing") for i in range(3)])
    c.apply(pod("theirs", schedulerName="my-scheduler"))
    c.run(2)
    assert len({node_of(c, f"packed-{i}") for i in range(3)}) == 1  # MostAllocated packs
    sources = {e["source"]["component"] for e in c.events() if e["reason"] == "Scheduled"}
    assert sources == {"bin-packing"}
    assert node_of(c, "theirs") is None
    assert not [e for e in c.events() if e["involvedObject"]["name"] == "theirs"]


def test_the_replace_seam_passes_a_configuration_and_a_bad_one_is_refused_clearly() -> None:
    c = cluster(nodes=3, replace={"scheduler": lambda ctx: Scheduler(ctx, config=load_config(BIN_PACKING))})
    assert sorted(scheduler(c).profiles) == ["bin-packing", "default-scheduler"]
    bad_plugin = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                  "profiles": [{"plugins": {"score": {"enabled": [{"name": "NodeResourceFit"}]}}}]}
    with pytest.raises(SchedulerConfigError, match='ScorePlugin "NodeResourceFit" does not exist'):
        cluster(nodes=1, replace={"scheduler": lambda ctx: Scheduler(ctx, config=bad_plugin)})
    bad_weight = {**bad_plugin, "profiles": [
        {"plugins": {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": -2}]}}}]}
    with pytest.raises(SchedulerConfigError, match=r"weight: Invalid value: -2: weight of score plugin"):
        cluster(nodes=1, replace={"scheduler": lambda ctx: Scheduler(ctx, config=bad_weight)})
    with pytest.raises(ValueError, match="cycle_cost must be a number of seconds >= 0"):
        cluster(nodes=1, replace={"scheduler": lambda ctx: Scheduler(ctx, cycle_cost=-1)})


@pytest.mark.parametrize("spec, message", [
    ({"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "two"}}}]},
     "quantities must match the regular expression"),
    ({"containers": [{"name": "c", "image": "nginx"}], "nodeSelector": {"bad key!": "x"}},
     'spec.nodeSelector: Invalid value: "bad key!"'),
])
def test_bad_pods_are_refused_by_the_api_server_before_the_scheduler_sees_them(
        spec: dict[str, Any], message: str) -> None:
    c = cluster(nodes=1)
    with pytest.raises(ApiError, match=message):
        c.client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad"}, "spec": spec})
    c.run(1)
    assert scheduler(c).attempts == 0 and c.events() == []


def crash_factory(**kwargs: Any) -> Any:
    return {"scheduler": lambda ctx: Scheduler(ctx, **kwargs)}


def assert_bound_once_within_capacity(c: Cluster, names: list[str]) -> None:
    ok = [r.name for r in c.apiserver.audit if r.subresource == "binding" and r.code == 201]
    assert sorted(ok) == sorted(names)  # every pod bound, none twice
    used: dict[str, int] = {}
    for p in c.get("pods"):
        used[p["spec"]["nodeName"]] = used.get(p["spec"]["nodeName"], 0) + 1
    assert max(used.values()) <= 4  # 4 one-cpu pods fit a 4-cpu node


def test_a_crash_between_assume_and_bind_loses_the_assumption_and_books_nothing_twice() -> None:
    c = cluster(nodes=3, replace=crash_factory(cycle_cost=1.0))
    names = [f"web-{i}" for i in range(12)]  # exactly fills 3 nodes of 4 cpu
    c.apply([pod(n, cpu="1") for n in names])
    c.run_until(lambda: len(c.trace.filter(component="scheduler", verb="assume")) == 5)
    c.run(0.5)  # the fifth pod is assumed, its binding not sent yet
    c.faults.crash("scheduler")
    assert len([r for r in c.apiserver.audit if r.subresource == "binding"]) == 4
    c.faults.restart("scheduler")
    c.run(30)
    assert_bound_once_within_capacity(c, names)
    assert not scheduler(c).cache.assumed_pods


def test_a_binding_on_the_wire_lands_after_a_restart_and_the_409_is_handled() -> None:
    c = cluster(nodes=3, replace=crash_factory(bind_latency=0.5))
    c.apply(pod("web-1", cpu="1"))
    c.run_until(lambda: bool(c.trace.filter(component="scheduler", verb="assume")))
    c.run(0.2)  # the binding was sent and is on its way to the API server
    c.faults.crash("scheduler")
    c.faults.restart("scheduler")  # relists: web-1 still looks unbound, so it is scheduled again
    c.run(5)
    bindings = [(r.code, r.message) for r in c.apiserver.audit if r.subresource == "binding"]
    assert [code for code, _ in bindings] == [201, 409]
    host = node_of(c, "web-1")
    assert f'pod web-1 is already assigned to node "{host}"' in bindings[1][1]
    failed = [e for e in c.events() if e["reason"] == "FailedScheduling"]
    assert failed and failed[0]["message"].startswith('running Bind plugin "DefaultBinder": Operation cannot')
    assert condition(c, "web-1")["status"] == "True"  # the API server's word is not overwritten
    cache = scheduler(c).cache
    assert not cache.assumed_pods and len(cache.pod_states) == 1
    info = cache.snapshot.get(str(host))
    assert [p.name for p in info.pods.values()] == ["web-1"]
    assert sum(len(n.pods) for n in cache.snapshot) == 1  # counted once, where it really is


def test_explain_keeps_the_last_decision_per_pod() -> None:
    c = cluster(nodes=[make_node("node-1", cpu="1"), make_node("node-2", cpu="4")],
                replace={"scheduler": lambda ctx: Scheduler(ctx, explain=True)})
    c.apply([pod("web-1", cpu="2"), pod("web-2", cpu="8")])
    c.run(1)
    chosen = scheduler(c).explain("web-1")
    assert chosen.selected == "node-2" and chosen.feasible == ["node-2"]
    assert "node-1" in chosen.table() and "Insufficient cpu" in chosen.table()
    refused = scheduler(c).explain("default/web-2")
    assert refused.selected is None and refused.error == (
        "0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    with pytest.raises(ValueError, match="no scheduling decision recorded for pod default/nope"):
        scheduler(c).explain("nope")


def test_taints_tolerations_and_cordon_are_respected() -> None:
    c = cluster(nodes=3)
    assert c.kubectl("taint nodes node-1 dedicated=gpu:NoSchedule") == "node/node-1 tainted"
    assert c.kubectl("cordon node-2") == "node/node-2 cordoned"
    c.apply([pod(f"plain-{i}") for i in range(3)])
    tolerates = [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
    c.apply(pod("gpu-job", tolerations=tolerates, nodeSelector={"kubernetes.io/hostname": "node-1"}))
    c.run(1)
    assert {node_of(c, f"plain-{i}") for i in range(3)} == {"node-3"}
    assert node_of(c, "gpu-job") == "node-1"
    c.apply(pod("waiting", nodeSelector={"kubernetes.io/hostname": "node-2"}))
    c.run(1)
    assert node_of(c, "waiting") is None
    assert c.kubectl("uncordon node-2") == "node/node-2 uncordoned"
    c.run(1)
    assert node_of(c, "waiting") == "node-2"  # NodeUnschedulable registered the node update


def test_same_seed_same_placements() -> None:
    def placements(seed: int) -> list[str | None]:
        c = cluster(nodes=5, seed=seed)
        c.apply([pod(f"web-{i}") for i in range(10)])
        c.run(1)
        return [node_of(c, f"web-{i}") for i in range(10)]
    assert placements(7) == placements(7)


def test_stop_is_a_crash_that_leaves_no_timers_behind() -> None:
    c = cluster(nodes=1)
    before = c.clock.pending(include_background=True)
    c.faults.crash("scheduler")
    c.run(100)  # stale callbacks of the dead instance fire and do nothing
    assert c.clock.pending(include_background=True) <= before
    ctx = ComponentContext("scheduler", c.client_for("system:kube-scheduler"), c.clock, c.rand, c.trace)
    fresh = Scheduler(ctx)
    assert not fresh.running and fresh.pending() == "activeQ:0; backoffQ:0; unschedulablePods:0"


def test_the_package_exports_what_it_lists() -> None:
    import kubelab.scheduler as package

    assert all(hasattr(package, name) for name in package.__all__)
    assert {"Scheduler", "load_config", "Explanation", "PriorityQueue", "Cache"} <= set(package.__all__)
