"""DefaultPreemption, checked against upstream's own tables (transcribed as data from
pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go: TestPostFilter,
TestDryRunPreemption, TestPickOneNodeForPreemption), then in a running cluster: the victims'
DisruptionTarget condition and Preempted event, the preemptor's nominatedNodeName, the
nominated pod's room kept from lower-priority pods, and preemptionPolicy: Never."""

from __future__ import annotations

from typing import Any

import pytest
from scheduler_helpers import make_node

from kubelab.cluster import Cluster
from kubelab.scheduler import Scheduler
from kubelab.scheduler.config import SchedulerConfigError, load_config
from kubelab.scheduler.framework import Framework
from kubelab.scheduler.interface import Code, CycleState, NodeToStatus, Status
from kubelab.scheduler.plugins.default_preemption import DefaultPreemption, filter_pods_with_pdb_violation
from kubelab.scheduler.preemption import Victims, pick_one_node_for_preemption
from kubelab.scheduler.snapshot import Snapshot
from kubelab.scheduler.types import PodInfo

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400"}
MAX_INT32 = 2**31 - 1


def node(name: str, capacity: dict[str, str]) -> dict[str, Any]:
    """st.MakeNode().Capacity(res): 32 pods unless the capacity says otherwise."""
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {}},
            "spec": {}, "status": {"allocatable": {"pods": "32", **capacity}}}


def pod(name: str, priority: int | None = None, req: dict[str, str] | None = None, node_name: str = "",
        labels: dict[str, str] | None = None, start: int | None = None, **spec: Any) -> dict[str, Any]:
    """st.MakePod(): no requests unless Req(...) is given; StartTime(epochTimeN) is N ns after the epoch."""
    p: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": name, "labels": labels or {}},
        "spec": {"containers": [{"name": "c", "image": "nginx",
                                 "resources": {"requests": req} if req else {}}], **spec},
        "status": {}}
    if priority is not None:
        p["spec"]["priority"] = priority
    if node_name:
        p["spec"]["nodeName"] = node_name
    if start is not None:
        p["status"]["startTime"] = f"1970-01-01T00:00:00.{start:06d}Z"  # microseconds keep the order
    return p


def pdb(name: str, match: dict[str, str], allowed: int) -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": match}}, "status": {"disruptionsAllowed": allowed}}


class FakeClient:
    """What preemption writes: status patches and deletions; PDBs to list."""

    def __init__(self, pdbs: list[dict[str, Any]] | None = None) -> None:
        self.pdbs = pdbs or []
        self.patched: list[tuple[str, dict[str, Any]]] = []
        self.deleted: list[str] = []

    def list(self, resource: str, namespace: str = "") -> dict[str, Any]:
        assert resource == "poddisruptionbudgets"
        return {"items": self.pdbs}

    def patch(self, resource: str, name: str, patch: dict[str, Any], namespace: str = "default",
              **kwargs: Any) -> dict[str, Any]:
        self.patched.append((name, patch))
        return {}

    def delete(self, resource: str, name: str, namespace: str = "default") -> dict[str, Any]:
        self.deleted.append(name)
        return {}


PLUGINS = {"multiPoint": {"disabled": [{"name": "*"}]},
           "preFilter": {"enabled": [{"name": "NodeResourcesFit"}]},
           "filter": {"enabled": [{"name": "NodeResourcesFit"}]},
           "postFilter": {"enabled": [{"name": "DefaultPreemption"}]},
           "bind": {"enabled": [{"name": "DefaultBinder"}]}}


def framework(nodes: list[dict[str, Any]], pods: list[dict[str, Any]],
              client: FakeClient | None = None) -> tuple[Framework, DefaultPreemption]:
    """NodeResourcesFit as PreFilter and Filter, DefaultPreemption with its default args."""
    config = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                          "kind": "KubeSchedulerConfiguration", "profiles": [{"plugins": PLUGINS}]})
    fwk = Framework(config.profiles[0], client=client or FakeClient())
    fwk.snapshot = Snapshot(nodes, pods)
    plugin = fwk.plugins["DefaultPreemption"]
    assert isinstance(plugin, DefaultPreemption)
    return fwk, plugin


# --- TestPostFilter ------------------------------------------------------------------------------

U, UU = Code.Unschedulable, Code.UnschedulableAndUnresolvable
POST_FILTER = [
    ("pod with higher priority can be made schedulable",
     pod("p", HIGH), [pod("p1", node_name="node1")], [], [node("node1", ONE_POD)], {"node1": U},
     "node1", {"p1"}, (Code.Success, "")),
    ("pod with tied priority is still unschedulable",
     pod("p"), [pod("p1", node_name="node1")], [], [node("node1", ONE_POD)], {"node1": U},
     "", set(), (U, "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.")),
    ("preemption should respect filteredNodesStatuses",
     pod("p", HIGH), [pod("p1", node_name="node1")], [], [node("node1", ONE_POD)], {"node1": UU},
     "", set(), (U, "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")),
    ("preemption should respect absent NodeToStatusReader entry meaning UnschedulableAndUnresolvable",
     pod("p", HIGH), [pod("p1", node_name="node1")], [], [node("node1", ONE_POD)], {},
     "", set(), (U, "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")),
    ("pod can be made schedulable on one node",
     pod("p", MID), [pod("p1", HIGH, node_name="node1"), pod("p2", LOW, node_name="node2")], [],
     [node("node1", ONE_POD), node("node2", ONE_POD)], {"node1": U, "node2": U},
     "node2", {"p2"}, (Code.Success, "")),
    ("pod can be made schedulable on minHighestPriority node",
     pod("p", VERY_HIGH),
     [pod("p1", HIGH, node_name="node1", labels={"test.kubernetes.io/is-violating-pdb": "non-violating"}),
      pod("p2", LOW, node_name="node1", labels={"test.kubernetes.io/is-violating-pdb": "violating"}),
      pod("p3", MID, node_name="node2", labels={"test.kubernetes.io/is-violating-pdb": "violating"})],
     [pdb("violating-pdb", {"test.kubernetes.io/is-violating-pdb": "violating"}, 0),
      pdb("non-violating-pdb", {"test.kubernetes.io/is-violating-pdb": "non-violating"}, MAX_INT32)],
     [node("node1", ONE_POD), node("node2", ONE_POD)], {"node1": U, "node2": U},
     "node2", {"p3"}, (Code.Success, "")),
    ("no candidate nodes found, no enough resource after removing low priority pods",
     pod("p", HIGH, LARGE), [pod("p1", node_name="node1"), pod("p2", node_name="node2")], [],
     [node("node1", NODE_RES), node("node2", NODE_RES)], {"node1": U, "node2": U},
     "", set(), (U, "preemption: 0/2 nodes are available: 2 Insufficient cpu.")),
    ("no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
     pod("p", HIGH, LARGE),
     [pod("p1", HIGH, node_name="node1"), pod("p2", node_name="node2"),
      pod("p3", HIGH, node_name="node3")], [],
     [node("node1", ONE_POD), node("node2", NODE_RES), node("node3", ONE_POD)],
     {"node1": U, "node2": U, "node3": U},
     "", set(), (U, "preemption: 0/3 nodes are available: 1 Insufficient cpu, "
                    "2 No preemption victims found for incoming pod.")),
    ("no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes "
     "don't have enough CPU resource",
     pod("p", HIGH, LARGE), [pod("p1", node_name="node1"), pod("p2", node_name="node2")], [],
     [node(f"node{i}", NODE_RES) for i in range(1, 5)], {"node1": U, "node2": U, "node4": UU},
     "", set(), (U, "preemption: 0/4 nodes are available: 2 Insufficient cpu, "
                    "2 Preemption is not helpful for scheduling.")),
]


@pytest.mark.parametrize(("name", "preemptor", "pods", "pdbs", "nodes", "statuses", "nominated", "victims",
                          "want"), POST_FILTER, ids=[case[0] for case in POST_FILTER])
def test_post_filter_upstream_table(name: str, preemptor: dict[str, Any], pods: list[dict[str, Any]],
                                    pdbs: list[dict[str, Any]], nodes: list[dict[str, Any]],
                                    statuses: dict[str, Code], nominated: str, victims: set[str],
                                    want: tuple[Code, str]) -> None:
    client = FakeClient(pdbs)
    fwk, plugin = framework(nodes, pods, client)
    state = CycleState()
    fwk.run_pre_filter_plugins(state, preemptor, fwk.snapshot.node_info_list)
    m = NodeToStatus({n: Status(code) for n, code in statuses.items()}, Status(UU))
    result, status = plugin.post_filter(state, preemptor, m)
    assert (status.code, status.message()) == want
    assert result is not None and result.nominated_node_name == nominated
    assert set(client.deleted) == victims
    # Each victim got DisruptionTarget=True (reason PreemptionByScheduler) before its DELETE.
    assert {name for name, patch in client.patched
            if patch["status"]["conditions"][0]["reason"] == "PreemptionByScheduler"} == victims


def test_preemption_policy_never_and_a_terminating_victim_make_a_pod_not_eligible() -> None:
    fwk, plugin = framework([node("node1", ONE_POD)], [pod("p1", node_name="node1")])
    never = pod("p", HIGH, preemptionPolicy="Never")
    result, status = plugin.post_filter(CycleState(), never, NodeToStatus({"node1": Status(U)}))
    assert result is None and (status.code, status.message()) == (
        U, "preemption: not eligible due to preemptionPolicy=Never.")
    # A pod nominated to a node where a pod it preempted is still terminating waits.
    terminating = pod("p1", node_name="node1")
    terminating["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    terminating["status"]["conditions"] = [{"type": "DisruptionTarget", "status": "True",
                                            "reason": "PreemptionByScheduler"}]
    fwk.snapshot = Snapshot([node("node1", ONE_POD)], [terminating])
    nominated = pod("p", HIGH)
    nominated["status"]["nominatedNodeName"] = "node1"
    _, status = plugin.post_filter(CycleState(), nominated, NodeToStatus({"node1": Status(U)}))
    assert status.message() == "preemption: not eligible due to a terminating pod on the nominated node."
    # ... unless the nominated node is now UnschedulableAndUnresolvable.
    _, status = plugin.post_filter(CycleState(), nominated, NodeToStatus({"node1": Status(UU)}))
    assert status.message() == ("preemption: 0/1 nodes are available: "
                                "1 Preemption is not helpful for scheduling.")


# --- TestDryRunPreemption (nodes of veryLargeRes) -------------------------------------------------

DRY_RUN = [
    ("a pod that fits on both nodes when lower priority pods are preempted",
     pod("p", HIGH, LARGE), [pod("p1", MID, LARGE, "node1"), pod("p2", MID, LARGE, "node2")],
     [("node1", ["p1"]), ("node2", ["p2"])]),
    ("a pod that would fit on the nodes, but other pods running are higher priority, "
     "no preemption would happen",
     pod("p", LOW, LARGE), [pod("p1", MID, LARGE, "node1"), pod("p2", MID, LARGE, "node2")], []),
    ("medium priority pod is preempted, but lower priority one stays as it is small",
     pod("p", HIGH, LARGE),
     [pod("p1.1", LOW, SMALL, "node1"), pod("p1.2", MID, LARGE, "node1"), pod("p2", MID, LARGE, "node2")],
     [("node1", ["p1.2"]), ("node2", ["p2"])]),
    ("mixed priority pods are preempted",
     pod("p", HIGH, LARGE),
     [pod("p1.1", MID, SMALL, "node1"), pod("p1.2", LOW, SMALL, "node1"), pod("p1.3", MID, MEDIUM, "node1"),
      pod("p1.4", HIGH, SMALL, "node1"), pod("p2", HIGH, LARGE, "node2")],
     [("node1", ["p1.3", "p1.2"])]),
    ("mixed priority pods are preempted, pick later StartTime one when priorities are equal",
     pod("p", HIGH, LARGE),
     [pod("p1.1", LOW, SMALL, "node1", start=5), pod("p1.2", LOW, SMALL, "node1", start=4),
      pod("p1.3", MID, MEDIUM, "node1", start=3), pod("p1.4", HIGH, SMALL, "node1", start=2),
      pod("p2", HIGH, LARGE, "node2", start=1)],
     [("node1", ["p1.3", "p1.1"])]),
]


@pytest.mark.parametrize(("name", "preemptor", "pods", "expected"), DRY_RUN, ids=[c[0] for c in DRY_RUN])
def test_dry_run_preemption_upstream_table(name: str, preemptor: dict[str, Any], pods: list[dict[str, Any]],
                                           expected: list[tuple[str, list[str]]]) -> None:
    fwk, plugin = framework([node("node1", VERY_LARGE), node("node2", VERY_LARGE)], pods)
    state = CycleState()
    fwk.run_pre_filter_plugins(state, preemptor, fwk.snapshot.node_info_list)
    nodes = fwk.snapshot.node_info_list
    candidates, _ = plugin.evaluator.dry_run_preemption(state, preemptor, nodes, [], 0, 2)
    # Upstream compares victims as sets sorted by name; the order we keep is most important first.
    assert [(c.name, [p["metadata"]["name"] for p in c.victims.pods]) for c in candidates] == expected
    # The dry run works on copies: the snapshot still counts every pod.
    assert sum(len(n.pods) for n in fwk.snapshot) == len(pods)


# --- TestPickOneNodeForPreemption (dry run then SelectCandidate, nodes of veryLargeRes) ----------

PICK = [
    ("a pod that fits on both nodes when lower priority pods are preempted", ["node1", "node2"],
     pod("p", HIGH, LARGE),
     [pod("m1.1", MID, LARGE, "node1", start=0), pod("m2.1", MID, LARGE, "node2", start=0)],
     {"node1", "node2"}),
    ("node with min highest priority pod is picked", ["node1", "node2", "node3"], pod("p", HIGH, VERY_LARGE),
     [pod("m1.1", MID, MEDIUM, "node1", start=0), pod("m1.2", MID, LARGE, "node1", start=0),
      pod("m2.1", MID, MEDIUM, "node2", start=0), pod("m2.2", LOW, MEDIUM, "node2", start=0),
      pod("m3.1", LOW, MEDIUM, "node3", start=0), pod("m3.2", LOW, MEDIUM, "node3", start=0)],
     {"node3"}),
    ("when highest priorities are the same, minimum sum of priorities is picked", ["node1", "node2", "node3"],
     pod("p", HIGH, VERY_LARGE),
     [pod("m1.1", MID, MEDIUM, "node1", start=0), pod("m1.2", MID, LARGE, "node1", start=0),
      pod("m2.1", MID, LARGE, "node2", start=0), pod("m2.2", LOW, MEDIUM, "node2", start=0),
      pod("m3.1", MID, MEDIUM, "node3", start=0), pod("m3.2", MID, MEDIUM, "node3", start=0)],
     {"node2"}),
    ("when highest priority and sum are the same, minimum number of pods is picked",
     ["node1", "node2", "node3"],
     pod("p", HIGH, VERY_LARGE),
     [pod("m1.1", MID, SMALL, "node1", start=0), pod("m1.2", NEG, SMALL, "node1", start=0),
      pod("m1.3", MID, SMALL, "node1", start=0), pod("m1.4", NEG, SMALL, "node1", start=0),
      pod("m2.1", MID, LARGE, "node2", start=0), pod("m2.2", NEG, MEDIUM, "node2", start=0),
      pod("m3.1", MID, MEDIUM, "node3", start=0), pod("m3.2", NEG, SMALL, "node3", start=0),
      pod("m3.3", LOW, SMALL, "node3", start=0)],
     {"node2"}),
    ("sum of adjusted priorities is considered", ["node1", "node2", "node3"], pod("p", HIGH, VERY_LARGE),
     [pod("m1.1", MID, SMALL, "node1", start=0), pod("m1.2", NEG, SMALL, "node1", start=0),
      pod("m1.3", NEG, SMALL, "node1", start=0),
      pod("m2.1", MID, LARGE, "node2", start=0), pod("m2.2", NEG, MEDIUM, "node2", start=0),
      pod("m3.1", MID, MEDIUM, "node3", start=0), pod("m3.2", NEG, SMALL, "node3", start=0),
      pod("m3.3", LOW, SMALL, "node3", start=0)],
     {"node2"}),
    ("non-overlapping lowest high priority, sum priorities, and number of pods",
     ["node1", "node2", "node3", "node4"], pod("p", VERY_HIGH, VERY_LARGE),
     [pod("m1.1", MID, SMALL, "node1", start=0), pod("m1.2", LOW, SMALL, "node1", start=0),
      pod("m1.3", LOW, SMALL, "node1", start=0), pod("m2.1", HIGH, LARGE, "node2", start=0),
      pod("m3.1", MID, MEDIUM, "node3", start=0), pod("m3.2", LOW, SMALL, "node3", start=0),
      pod("m3.3", LOW, SMALL, "node3", start=0), pod("m3.4", LOW, MEDIUM, "node3", start=0),
      pod("m4.1", MID, MEDIUM, "node4", start=0), pod("m4.2", MID, SMALL, "node4", start=0),
      pod("m4.3", MID, SMALL, "node4", start=0), pod("m4.4", NEG, SMALL, "node4", start=0)],
     {"node1"}),
]


@pytest.mark.parametrize(("name", "nodes", "preemptor", "pods", "expected"), PICK, ids=[c[0] for c in PICK])
def test_pick_one_node_for_preemption_upstream_table(name: str, nodes: list[str], preemptor: dict[str, Any],
                                                     pods: list[dict[str, Any]], expected: set[str]) -> None:
    fwk, plugin = framework([node(n, VERY_LARGE) for n in nodes], pods)
    state = CycleState()
    fwk.run_pre_filter_plugins(state, preemptor, fwk.snapshot.node_info_list)
    candidates, _ = plugin.evaluator.dry_run_preemption(state, preemptor, fwk.snapshot.node_info_list, [], 0,
                                                        len(nodes))
    best, _ = plugin.evaluator.select_candidate(candidates)
    assert best is not None and best.name in expected


def test_pick_one_node_breaks_ties_by_the_latest_start_of_the_most_important_victims() -> None:
    """Criterion 5, and each criterion deciding only when the earlier ones tie."""
    def victims(*pods: dict[str, Any], violations: int = 0) -> Victims:
        return Victims(list(pods), violations)
    older = victims(pod("a", MID, start=1), pod("b", LOW, start=9))
    younger = victims(pod("c", MID, start=5), pod("d", LOW, start=0))
    assert pick_one_node_for_preemption({"n1": older, "n2": younger}, now=100) == "n2"
    # Fewer PDB violations beat everything else, even a much higher-priority victim.
    assert pick_one_node_for_preemption(
        {"n1": victims(pod("e", HIGH)), "n2": victims(pod("f", LOW), violations=1)}, now=100) == "n1"
    # A full tie: the first candidate.
    assert pick_one_node_for_preemption({"n2": victims(pod("g", LOW, start=1)),
                                         "n1": victims(pod("h", LOW, start=1))}, now=100) == "n2"


def test_filter_pods_with_pdb_violation_counts_the_budget_down_and_skips_disrupted_pods() -> None:
    labels = {"app": "web"}
    infos = [PodInfo(pod(f"w{i}", labels=labels)) for i in range(3)] + [PodInfo(pod("other"))]
    budget = pdb("web", labels, 1)
    violating, ok = filter_pods_with_pdb_violation(infos, [budget])
    assert [i.name for i in violating] == ["w1", "w2"] and [i.name for i in ok] == ["w0", "other"]
    budget["status"]["disruptedPods"] = {"w0": "2026-01-01T00:00:00Z"}  # already counted by the API
    violating, ok = filter_pods_with_pdb_violation(infos, [budget])
    assert [i.name for i in violating] == ["w2"]
    # An empty selector matches nothing; another namespace's budget does not apply.
    empty = {**budget, "spec": {"selector": {}}}
    elsewhere = {**budget, "metadata": {"name": "web", "namespace": "prod"}}
    assert filter_pods_with_pdb_violation(infos, [empty, elsewhere])[0] == []


def test_default_preemption_args_are_validated_in_upstream_words() -> None:
    def profile(args: dict[str, Any]) -> dict[str, Any]:
        return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                "profiles": [{"pluginConfig": [{"name": "DefaultPreemption", "args": args}]}]}
    with pytest.raises(SchedulerConfigError) as info:
        load_config(profile({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}))
    assert "cannot be zero at the same time as minCandidateNodesAbsolute" in str(info.value)
    with pytest.raises(SchedulerConfigError, match=r"not in valid range \[0, 100\]"):
        load_config(profile({"minCandidateNodesPercentage": 101}))
    fwk = Framework(load_config(profile({"minCandidateNodesPercentage": 50,
                                         "minCandidateNodesAbsolute": 2})).profiles[0])
    plugin = fwk.plugins["DefaultPreemption"]
    assert isinstance(plugin, DefaultPreemption)
    # calculateNumCandidates: max(percentage, absolute), at most the node count.
    assert [plugin.calculate_num_candidates(n) for n in (1, 3, 10)] == [1, 2, 5]


# --- in a running cluster ------------------------------------------------------------------------

def priority_class(name: str, value: int, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, **fields}


def workload(name: str, cpu: str, klass: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"priorityClassName": klass, "terminationGracePeriodSeconds": 0, **spec,
                     "containers": [{"name": "c", "image": "nginx",
                                     "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]}}


@pytest.fixture(scope="module")
def preempted() -> Cluster:
    """Two 2-CPU nodes full of low-priority pods, then a high-priority pod that needs 1.5 CPU."""
    c = Cluster(nodes=[make_node("node-1", cpu="2"), make_node("node-2", cpu="2")],
                replace={"scheduler": lambda ctx: Scheduler(ctx, explain=True)})
    # kind's cluster first comes up (as `kind create cluster --wait`): kindnet's pods (100m,
    # system-node-critical) would otherwise preempt fillers scheduled before them
    c.run(5)
    c.apply([priority_class("low", 100), priority_class("high", 1000)])
    # 900m each: two fill a worker beside its kindnet pod and a coredns replica (100m each)
    c.apply([workload(f"filler-{i}", "900m", "low") for i in range(4)])
    c.run(5)
    c.apply(workload("vip", "1500m", "high"))
    c.run(30)
    return c


def test_a_high_priority_pod_preempts_two_low_priority_pods_and_is_bound_to_their_node(preempted: Cluster
                                                                                        ) -> None:
    c = preempted
    vip = c.get("pods", "vip")
    node_name = vip["spec"]["nodeName"]
    assert vip["status"]["nominatedNodeName"] == node_name  # set by the scheduler after preemption
    line = next(x for x in c.kubectl("get pods -o wide").splitlines() if x.startswith("vip "))
    assert line.split()[6:8] == [node_name, node_name]  # the NODE and NOMINATED NODE columns
    events = c.events()
    preempted_events = [e for e in events if e["reason"] == "Preempted"]
    assert {e["message"] for e in preempted_events} == {
        f"Preempted by pod {vip['metadata']['uid']} on node {node_name}"}
    victims = {e["involvedObject"]["name"] for e in preempted_events}
    assert len(victims) == 2  # 2 CPU node, two 900m pods, 1.5 CPU to free: both go
    pods = c.client.list("pods", "default")["items"]  # (kube-system's add-ons stay on the node)
    on_node = sorted(p["metadata"]["name"] for p in pods if p["spec"].get("nodeName") == node_name)
    assert on_node == ["vip"] and victims.isdisjoint(p["metadata"]["name"] for p in pods)
    first = next(e for e in events if e["reason"] == "FailedScheduling"
                 and e["involvedObject"]["name"] == "vip")
    # Preemption succeeded: its Success status adds nothing to the message.
    # (kind's control-plane node is tainted NoSchedule)
    assert first["message"] == ("0/3 nodes are available: 1 node(s) had untolerated taint(s), "
                                "2 Insufficient cpu.")


def test_the_scheduler_explains_which_victims_on_which_node_and_why() -> None:
    """The explanation of the failed attempt that preempted (before the pod's retry replaces it)."""
    c = Cluster(nodes=[make_node("node-1", cpu="2"), make_node("node-2", cpu="2")], components=["scheduler"],
                replace={"scheduler": lambda ctx: Scheduler(ctx, explain=True)})
    c.apply([priority_class("lowest", 50), priority_class("low", 100), priority_class("mid", 500),
             priority_class("high", 1000)])
    c.apply([workload("a", "1", "low", nodeName="node-1"), workload("b", "1", "mid", nodeName="node-1"),
             workload("c", "1", "mid", nodeName="node-2"), workload("d", "1", "lowest", nodeName="node-2",
                                                           terminationGracePeriodSeconds=30)])
    c.run(1)
    c.apply(workload("vip", "1", "high"))
    c.run(0.5)  # one attempt; the retry waits out its 1 s backoff
    sched = c.components["scheduler"]
    assert isinstance(sched, Scheduler)
    preemption = sched.explain("vip").preemption
    assert preemption is not None and preemption.nominated == "node-2"
    # Each node frees one CPU by deleting its one lower pod (the mid ones are reprieved first);
    # node-2's victim has the lower priority: criterion 2 decides.
    assert [(c.node, c.victims) for c in preemption.candidates] == [
        ("node-1", ("default/a (priority 100)",)), ("node-2", ("default/d (priority 50)",))]
    assert preemption.reason == "the lowest highest-priority victim"
    table = sched.explain("vip").table()
    assert "preemption: nominated node-2 (the lowest highest-priority victim)" in table
    assert "node-2 *: evict default/d (priority 50)" in table
    events = [e for e in c.events() if e["reason"] == "Preempted"]
    assert [e["involvedObject"]["name"] for e in events] == ["d"]
    victim = c.get("pods", "d")
    assert victim["metadata"].get("deletionTimestamp")  # no kubelet here: it stays terminating
    [condition] = [x for x in victim["status"]["conditions"] if x["type"] == "DisruptionTarget"]
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "True", "PreemptionByScheduler", "default-scheduler: preempting to accommodate a higher priority pod")
    assert c.get("pods", "vip")["status"]["nominatedNodeName"] == "node-2"


def test_preemption_policy_never_waits_without_preempting() -> None:
    c = Cluster(nodes=[make_node("node-1", cpu="2")], components=["scheduler"])
    c.apply([priority_class("low", 100), priority_class("polite", 1000, preemptionPolicy="Never")])
    c.apply([workload("filler", "2", "low")])
    c.run(2)
    c.apply(workload("waiter", "1", "polite"))
    c.run(5)
    assert not c.get("pods", "waiter")["spec"].get("nodeName")
    [event] = [e for e in c.events() if e["reason"] == "FailedScheduling"]
    assert event["message"] == ("0/1 nodes are available: 1 Insufficient cpu. "
                                "preemption: not eligible due to preemptionPolicy=Never.")
    assert not [e for e in c.events() if e["reason"] == "Preempted"]


def test_the_room_a_preemption_made_is_kept_for_the_nominated_pod() -> None:
    """A lower-priority pod that comes while the preemptor waits out its backoff does not take
    the freed node: the filters count the nominated pod there (RunFilterPluginsWithNominatedPods)."""
    c = Cluster(nodes=[make_node("node-1", cpu="2")], components=["scheduler"])
    c.apply([priority_class("low", 100), priority_class("mid", 500), priority_class("high", 1000)])
    c.apply(workload("victim", "2", "low"))
    c.run(1)
    c.apply(workload("vip", "2", "high"))
    c.run(0.2)  # vip preempted victim; it retries after its 1 s backoff
    assert c.get("pods", "vip")["status"]["nominatedNodeName"] == "node-1"
    sched = c.components["scheduler"]
    assert isinstance(sched, Scheduler)
    assert [i.name for i in sched.queue.nominated_pods_for_node("node-1")] == ["vip"]
    c.apply(workload("sneaky", "2", "mid"))
    c.run(3)
    assert c.get("pods", "vip")["spec"]["nodeName"] == "node-1"
    assert not c.get("pods", "sneaky")["spec"].get("nodeName")
    sneaky_attempts = [r.detail["message"] for r in c.trace.filter(component="scheduler",
                                                                  object_prefix="pods/default/sneaky")
                       if r.verb == "unschedulable"]
    # Its first try met the nominated vip on node-1 (1 Insufficient cpu); preemption found only
    # pods of higher priority there, vip itself once bound.
    assert sneaky_attempts and sneaky_attempts[0].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert sched.queue.nominated_pods_for_node("node-1") == []  # bound: no longer nominated


def test_a_pod_disruption_budget_steers_the_preemption_to_another_node() -> None:
    """Criterion 1 before criterion 2: node-1's victim has the lower priority, but deleting it
    would violate its PodDisruptionBudget (disruptionsAllowed 0), so node-2's goes."""
    c = Cluster(nodes=[make_node("node-1", cpu="2"), make_node("node-2", cpu="2")], components=["scheduler"])
    c.apply([priority_class("lowest", 50), priority_class("low", 100), priority_class("high", 1000)])
    guarded = workload("guarded", "2", "lowest", nodeName="node-1")
    guarded["metadata"]["labels"] = {"app": "guarded"}
    c.apply([guarded, workload("plain", "2", "low", nodeName="node-2"),
             {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
              "metadata": {"name": "guarded", "namespace": "default"},
              "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}}}])
    c.run(1)
    c.apply(workload("vip", "2", "high"))
    c.run(3)
    assert [e["involvedObject"]["name"] for e in c.events() if e["reason"] == "Preempted"] == ["plain"]
    assert c.get("pods", "vip")["spec"]["nodeName"] == "node-2"
    assert c.get("pods", "guarded")["spec"]["nodeName"] == "node-1"
