"""The framework, the algorithm and profile configuration (schedule_one.go, framework.go,
default_plugins.go, the FitError message and KubeSchedulerConfiguration validation)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from typing import Any

import pytest
from scheduler_helpers import make_node, make_pod

from kubelab.cluster import Cluster
from kubelab.scheduler import Scheduler
from kubelab.scheduler.config import SchedulerConfigError, default_profile, load_config
from kubelab.scheduler.framework import Framework
from kubelab.scheduler.interface import Code, CycleState, NodePluginScores, PostFilterResult, Status
from kubelab.scheduler.schedule_one import (
    NoNodesAvailableError,
    SchedulingError,
    num_feasible_nodes_to_find,
    schedule_pod,
    select_host,
)
from kubelab.scheduler.snapshot import Snapshot
from kubelab.scheduler.types import FitError, NodeInfo, Object, PodInfo


def schedule_all(fwk: Framework, snapshot: Snapshot, pods: list[dict[str, Any]]) -> list[str]:
    placed = []
    for pod in pods:
        result = schedule_pod(fwk, CycleState(), pod, snapshot)
        snapshot.assume_pod(PodInfo(pod), result.suggested_host)
        placed.append(result.suggested_host)
    return placed


def fit_error(fwk: Framework, pod: dict[str, Any], snapshot: Snapshot) -> FitError:
    with pytest.raises(FitError) as info:
        schedule_pod(fwk, CycleState(), pod, snapshot)
    return info.value


# --- the FitError message ----------------------------------------------------------------------

def test_fit_error_counts_reasons_and_sorts_them_as_text() -> None:
    snap = Snapshot([make_node("a", "1", "8Gi"), make_node("b", "1", "8Gi"), make_node("c", "4", "1Gi")])
    err = fit_error(Framework(), make_pod("p", "2", "2Gi"), snap)
    assert str(err) == "0/3 nodes are available: 1 Insufficient memory, 2 Insufficient cpu."
    assert err.diagnosis.unschedulable_plugins == {"NodeResourcesFit"}


def test_fit_error_counts_every_reason_of_a_node_and_sorts_10_before_2() -> None:
    nodes = [make_node(f"n{i}", "1", "1Gi") for i in range(10)]
    nodes += [make_node("t1", taints=[{"key": "gpu", "value": "true", "effect": "NoSchedule"}]),
              make_node("t2", unschedulable=True)]
    err = fit_error(Framework(), make_pod("p", "2", "2Gi"), Snapshot(nodes))
    assert str(err) == ("0/12 nodes are available: 1 node(s) had untolerated taint(s), "
                        "1 node(s) were unschedulable, 10 Insufficient cpu, 10 Insufficient memory.")


def test_fit_error_without_post_filter_has_no_preemption_text_and_with_one_appends_it() -> None:
    snap = Snapshot([make_node(n, "1") for n in "abc"])
    assert str(fit_error(Framework(), make_pod("p", "2"), snap)) == \
        "0/3 nodes are available: 3 Insufficient cpu."

    class NoVictims:
        name = "Preemption"

        def __init__(self, args: Mapping[str, Any], handle: Any) -> None:
            pass

        def post_filter(self, state: CycleState, pod: Object, node_to_status: Mapping[str, Status]
                        ) -> tuple[PostFilterResult | None, Status]:
            n = len(node_to_status)
            return None, Status(Code.Unschedulable, f"preemption: 0/{n} nodes are available: "
                                f"{n} No preemption victims found for incoming pod.")

    registry = {"Preemption": NoVictims}
    # DefaultPreemption is a default PostFilter now: this stand-in replaces it.
    plugins = {"postFilter": {"disabled": [{"name": "DefaultPreemption"}],
                              "enabled": [{"name": "Preemption"}]}}
    config = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                          "kind": "KubeSchedulerConfiguration", "profiles": [{"plugins": plugins}]},
                         registry=registry)
    # schedule_pod itself runs no PostFilter: scheduling_cycle does, on the FitError.
    assert str(fit_error(Framework(config.profiles[0], registry=registry), make_pod("p", "2"), snap)) == \
        "0/3 nodes are available: 3 Insufficient cpu."
    c = Cluster(nodes=3, components=["scheduler"],
                replace={"scheduler": lambda ctx: Scheduler(ctx, config=config, registry=registry)})
    c.client.create(make_pod("p", "100"))
    c.run(1)
    [event] = [e for e in c.events() if e["reason"] == "FailedScheduling"]
    assert event["message"] == (
        "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: "
        "3 No preemption victims found for incoming pod.")


def test_fit_error_from_pre_filter_and_from_nodes_pre_filter_left_out() -> None:
    snap = Snapshot([make_node("a", "1"), make_node("b"), make_node("c")])
    conflict = make_pod("p", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["a"]},
            {"key": "metadata.name", "operator": "In", "values": ["b"]}]}]}}})
    assert str(fit_error(Framework(), conflict, snap)) == \
        "0/3 nodes are available: pod affinity terms conflict."
    pin = {"key": "metadata.name", "operator": "In", "values": ["a"]}
    only_a = make_pod("p", "2", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [pin]}]}}})
    assert str(fit_error(Framework(), only_a, snap)) == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity].")


def test_no_nodes() -> None:
    with pytest.raises(NoNodesAvailableError, match="no nodes available to schedule pods"):
        schedule_pod(Framework(), CycleState(), make_pod("p"), Snapshot())


# --- how many nodes, and which -----------------------------------------------------------------

@pytest.mark.parametrize(("nodes", "expected"), [
    (1, 1), (50, 50), (99, 99), (100, 100), (125, 100), (200, 100), (250, 120), (500, 230),
    (1000, 420), (2000, 680), (5000, 500), (6000, 300), (10000, 500), (15000, 750),
])
def test_num_feasible_nodes_to_find_adaptive(nodes: int, expected: int) -> None:
    # max(5, 50 - nodes/125)% of the nodes, at least 100 (schedule_one.go)
    assert num_feasible_nodes_to_find(None, nodes) == expected


def test_num_feasible_nodes_to_find_configured_percentages() -> None:
    assert num_feasible_nodes_to_find(30, 1000) == 300
    assert num_feasible_nodes_to_find(1, 1000) == 100  # never fewer than 100
    assert num_feasible_nodes_to_find(100, 1000) == 1000
    assert num_feasible_nodes_to_find(None, 1000, global_percentage=20) == 200
    assert num_feasible_nodes_to_find(0, 1000, global_percentage=20) == 420  # the profile's 0 means adaptive


# pkg/scheduler/schedule_one_test.go TestNumFeasibleNodesToFind, transcribed:
# (name, global percentageOfNodesToScore, the profile's (None: unset), nodes, wanted).
NUM_FEASIBLE_NODES_TO_FIND = [
    ("not set percentageOfNodesToScore and nodes number not more than 50", 0, None, 10, 10),
    ("set profile percentageOfNodesToScore and nodes number not more than 50", 0, 40, 10, 10),
    ("not set percentageOfNodesToScore and nodes number more than 50", 0, None, 1000, 420),
    ("set profile percentageOfNodesToScore and nodes number more than 50", 0, 40, 1000, 400),
    ("set global and profile percentageOfNodesToScore and nodes number more than 50", 100, 40, 1000, 400),
    ("set global percentageOfNodesToScore and nodes number more than 50", 40, None, 1000, 400),
    ("not set profile percentageOfNodesToScore and nodes number more than 50*125", 0, None, 6000, 300),
    ("set profile percentageOfNodesToScore and nodes number more than 50*125", 0, 40, 6000, 2400),
]


@pytest.mark.parametrize(("name", "global_percentage", "profile_percentage", "nodes", "want"),
                         NUM_FEASIBLE_NODES_TO_FIND, ids=[row[0] for row in NUM_FEASIBLE_NODES_TO_FIND])
def test_num_feasible_nodes_to_find_upstream(name: str, global_percentage: int,
                                             profile_percentage: int | None, nodes: int, want: int) -> None:
    assert num_feasible_nodes_to_find(profile_percentage, nodes, global_percentage) == want


def test_a_cluster_sets_percentage_of_nodes_to_score_in_the_scheduler_config() -> None:
    # As a scale test's KubeSchedulerConfiguration does; SchedulingBasic keeps the default.
    from kubelab.cluster import Cluster
    from kubelab.scheduler import Scheduler

    nodes = [make_node(f"n{i:03}") for i in range(250)]
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "percentageOfNodesToScore": 60}
    c = Cluster(nodes=nodes, components=["scheduler"],
                replace={"scheduler": lambda ctx: Scheduler(ctx, config=config)})
    c.client.create(make_pod("p"))
    c.run(2)
    fwk = c.components["scheduler"].profiles["default-scheduler"]
    assert fwk.global_percentage == 60
    assert fwk.next_start_node_index == 150  # 60% of 250 looked at, not the adaptive 120


def test_round_robin_start_index_carries_across_cycles() -> None:
    snap = Snapshot([make_node(f"n{i:03}") for i in range(250)])
    fwk = Framework(rand=random.Random(0))
    assert fwk.next_start_node_index == 0
    first = schedule_pod(fwk, CycleState(), make_pod("p1"), snap)
    assert (first.evaluated_nodes, first.feasible_nodes) == (120, 120)  # 250 nodes: 48% -> 120
    assert fwk.next_start_node_index == 120
    schedule_pod(fwk, CycleState(), make_pod("p2"), snap)
    assert fwk.next_start_node_index == 240
    third = schedule_pod(fwk, CycleState(), make_pod("p3"), snap, explain=True)
    assert fwk.next_start_node_index == (240 + 120) % 250
    assert third.explanation is not None
    evaluated = [n.node for n in third.explanation.nodes.values() if n.evaluated]
    assert evaluated[:3] == ["n240", "n241", "n242"] and evaluated[10] == "n000"


def test_rejected_nodes_count_as_processed() -> None:
    nodes = [make_node(f"n{i:03}", "1" if i % 2 else "8") for i in range(200)]
    fwk = Framework()
    result = schedule_pod(fwk, CycleState(), make_pod("p", "2"), Snapshot(nodes))
    # 200 nodes: find 100 feasible; every other node is too small, so 199 nodes are looked at.
    assert (result.feasible_nodes, result.evaluated_nodes) == (100, 199)
    assert fwk.next_start_node_index == 199


def test_the_search_starts_at_the_index_modulo_the_nodes_prefilter_left() -> None:
    """findNodesThatPassFilters checks nodes[(nextStartNodeIndex + i) % len(nodes)], where
    nodes are those PreFilter left: with two nodes left and the index at 5, the second goes first."""
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"plugins": {"score": {"disabled": [{"name": "*"}]}}}]}
    fwk = Framework(load_config(config).profiles[0])
    snap = Snapshot([make_node(f"n{i}") for i in range(10)])
    pinned = make_pod("p", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}
                              for name in ("n3", "n7")]}}})
    fwk.next_start_node_index = 5
    result = schedule_pod(fwk, CycleState(), pinned, snap)  # no score plugins: the first feasible node wins
    assert (result.suggested_host, result.evaluated_nodes) == ("n7", 1)
    assert fwk.next_start_node_index == 6


# --- choosing among the best -------------------------------------------------------------------

def test_select_host_takes_the_highest_total() -> None:
    scores = [NodePluginScores("a", 10), NodePluginScores("b", 30), NodePluginScores("c", 20)]
    assert select_host(scores, random.Random(0)) == "b"


def test_select_host_breaks_ties_with_the_seed() -> None:
    scores = [NodePluginScores(n, 50) for n in "abcd"] + [NodePluginScores("e", 10)]
    assert select_host(scores, random.Random(7)) == select_host(scores, random.Random(7))
    chosen = Counter(select_host(scores, random.Random(seed)) for seed in range(400))
    assert set(chosen) == set("abcd")  # every tied node is reachable, the loser never
    assert min(chosen.values()) > 60  # and roughly uniformly (100 each expected)


def test_same_seed_same_placements() -> None:
    def run(seed: int) -> list[str]:
        snap = Snapshot([make_node(n) for n in "abcdef"])
        return schedule_all(Framework(rand=random.Random(seed)), snap, [make_pod(f"p{i}") for i in range(12)])

    assert run(3) == run(3)
    assert len({tuple(run(s)) for s in range(5)}) > 1


# --- profiles ----------------------------------------------------------------------------------

def test_default_profile_matches_upstream_defaults() -> None:
    profile = default_profile()
    assert profile.score_weights == {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1,
                                     "PodTopologySpread": 2, "NodeResourcesBalancedAllocation": 1,
                                     "ImageLocality": 1}
    assert profile.plugins["filter"] == ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
                                         "NodeResourcesFit", "VolumeBinding", "PodTopologySpread"]
    assert profile.plugins["preBind"] == ["VolumeBinding"]
    assert profile.plugins["bind"] == ["DefaultBinder"]
    assert profile.plugin_config["NodeResourcesFit"]["scoringStrategy"]["type"] == "LeastAllocated"
    assert load_config(None).profiles[0].plugins == profile.plugins


CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: packer
  percentageOfNodesToScore: 50
  plugins:
    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
      enabled:
      - name: NodeResourcesFit
        weight: 5
    filter:
      disabled:
      - name: TaintToleration
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
"""


def test_profile_loading_enable_disable_and_weights() -> None:
    config = load_config(CONFIG)
    packer = config.profile("packer")
    assert packer.percentage_of_nodes_to_score == 50
    assert "NodeResourcesBalancedAllocation" not in packer.plugins["score"]
    assert packer.plugins["score"][0] == "NodeResourcesFit"  # an override keeps first place
    assert packer.score_weights["NodeResourcesFit"] == 5 and packer.score_weights["TaintToleration"] == 3
    assert "TaintToleration" not in packer.plugins["filter"]
    assert "TaintToleration" in packer.plugins["score"]  # disabled at filter only
    assert packer.plugin_config["NodeResourcesFit"]["scoringStrategy"]["resources"] == [
        {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
    with pytest.raises(KeyError, match='profile not found for scheduler name "nope"'):
        config.profile("nope")
    star = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                        "profiles": [{"plugins": {"score": {"disabled": [{"name": "*"}],
                                                            "enabled": [{"name": "ImageLocality"}]}}}]})
    assert star.profiles[0].plugins["score"] == ["ImageLocality"]
    assert star.profiles[0].score_weights == {"ImageLocality": 1}


def test_most_allocated_packs_where_least_allocated_spreads() -> None:
    def placements(profile_name: str) -> Counter[str]:
        snap = Snapshot([make_node(n, "4", "8Gi") for n in "abc"])
        fwk = Framework(load_config(CONFIG).profile(profile_name), rand=random.Random(1))
        return Counter(schedule_all(fwk, snap, [make_pod(f"p{i}", "500m", "512Mi") for i in range(6)]))

    assert sorted(placements("default-scheduler").values()) == [2, 2, 2]
    assert sorted(placements("packer").values()) == [6]


def test_weights_multiply_normalized_scores() -> None:
    snap = Snapshot([make_node("a", labels={"disk": "ssd"}), make_node("b")])
    pod = make_pod("p", affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 7, "preference": {"matchExpressions": [{"key": "disk", "operator": "Exists"}]}}]}})
    result = schedule_pod(Framework(), CycleState(), pod, snap, explain=True)
    assert result.suggested_host == "a" and result.explanation is not None
    by_plugin = {s.plugin: s for s in result.explanation.nodes["a"].scores}
    affinity = by_plugin["NodeAffinity"]
    assert (affinity.raw, affinity.normalized, affinity.weight, affinity.weighted) == (7, 100, 2, 200)
    assert result.explanation.nodes["a"].total == sum(s.weighted for s in by_plugin.values())


@pytest.mark.parametrize(("change", "message"), [
    ({"profiles": [{"plugins": {"score": {"enabled": [{"name": "NodeResourcesFitt"}]}}}]},
     'profiles[0].plugins.score.enabled[0].name: Invalid value: "NodeResourcesFitt": ScorePlugin '
     '"NodeResourcesFitt" does not exist'),
    ({"profiles": [{"plugins": {"filter": {"enabled": [{"name": "InterPodAffinity"}]}}}]},
     "kube-scheduler plugin that kubelab does not implement"),
    ({"profiles": [{"plugins": {"score": {"enabled": [{"name": "NodeName"}]}}}]},
     'plugin "NodeName" does not extend ScorePlugin plugin'),
    ({"profiles": [{"plugins": {"permit": {"enabled": [{"name": "NodeName"}]}}}]},
     'plugin "NodeName" does not extend PermitPlugin plugin'),
    ({"profiles": [{"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": -1}]}}}]},
     "profiles[0].plugins.score.enabled[0].weight: Invalid value: -1: weight of score plugin"),
    ({"profiles": [{"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": 2**62}]}}}]},
     "total score of Score plugins could overflow"),
    ({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit",
                                      "args": {"scoringStrategy": {"type": "Packed"}}}]}]},
     'profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "Packed": supported values: '
     '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"'),
    ({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 101}]}}}]}]},
     "resource weight of cpu not in valid range (0, 100]"),
    ({"profiles": [{"pluginConfig": [{"name": "NodeResourcesBalancedAllocation",
                                      "args": {"resources": [{"name": "cpu", "weight": 2}]}}]}]},
     "profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 2: must be 1"),
    ({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
        "type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": [
            {"utilization": 50, "score": 1}, {"utilization": 10, "score": 11}]}}}}]}]},
     "values must be sorted in increasing order"),
    ({"profiles": [{"pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultingType": "Some"}}]}]},
     "defaultingType: Unsupported value"),
    ({"profiles": [{"plugins": {"scroe": {}}}]},
     'strict decoding error: unknown field "profiles[0].plugins.scroe"'),
    ({"profiles": [{"schedulerName": "x"}, {"schedulerName": "x"}]},
     'profiles[1].schedulerName: Duplicate value: "x"'),
    ({"percentageOfNodesToScore": 101},
     "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"),
    ({"profiles": [{"plugins": {"bind": {"disabled": [{"name": "*"}]}}}]},
     'at least one bind plugin is needed for profile with scheduler name "default-scheduler"'),
    ({"apiVersion": "kubescheduler.config.k8s.io/v1beta9"},
     'no kind "KubeSchedulerConfiguration" is registered'),
])
def test_bad_configuration_is_refused(change: dict[str, Any], message: str) -> None:
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", **change}
    with pytest.raises(SchedulerConfigError) as info:
        load_config(config)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)


def test_disabling_upstream_only_plugins_is_allowed() -> None:
    plugins = {"multiPoint": {"disabled": [{"name": "InterPodAffinity"}]},
               "queueSort": {"disabled": [{"name": "PrioritySort"}]}}
    config = load_config({"apiVersion": "kubescheduler.config.k8s.io/v1",
                          "kind": "KubeSchedulerConfiguration", "profiles": [{"plugins": plugins}]})
    assert config.profiles[0].plugins == default_profile().plugins


# --- explanation and binding -------------------------------------------------------------------

def test_explanation_records_filters_and_scores_and_renders_a_table() -> None:
    snap = Snapshot([make_node("small", "1"), make_node("big", "8"), make_node("mid", "4")])
    fwk = Framework(rand=random.Random(0))
    result = schedule_pod(fwk, CycleState(), make_pod("web", "2"), snap, explain=True)
    explanation = result.explanation
    assert explanation is not None and explanation.selected == result.suggested_host == "big"
    small = explanation.nodes["small"]
    assert not small.feasible and small.filters[-1].plugin == "NodeResourcesFit"
    assert small.filters[-1].reasons == ("Insufficient cpu",) and small.scores == []
    assert explanation.feasible == ["big", "mid"]
    fit = {s.plugin: s for s in explanation.nodes["big"].scores}["NodeResourcesFit"]
    memory = 8 * 2**30
    expected = ((8000 - 2000) * 100 // 8000 + (memory - 128 * 2**20) * 100 // memory) // 2
    assert fit.raw == fit.normalized == expected
    table = explanation.table()
    assert "pod default/web (scheduler default-scheduler) -> big" in table
    assert "NodeResourcesFit: Insufficient cpu" in table and "big *" in table
    assert "PreFilter: NodeAffinity skip; VolumeBinding skip; PodTopologySpread skip" in table
    assert schedule_pod(fwk, CycleState(), make_pod("quiet"), snap).explanation is None


def test_fit_error_carries_the_explanation() -> None:
    snap = Snapshot([make_node("a", "1")])
    with pytest.raises(FitError) as info:
        schedule_pod(Framework(), CycleState(), make_pod("p", "2"), snap, explain=True)
    explanation = info.value.explanation
    assert explanation is not None and explanation.selected is None
    assert explanation.error == "0/1 nodes are available: 1 Insufficient cpu."
    assert "unschedulable: 0/1 nodes are available" in explanation.table()


def test_one_feasible_node_is_chosen_without_scoring() -> None:
    snap = Snapshot([make_node("a", "1"), make_node("b", "8")])
    result = schedule_pod(Framework(), CycleState(), make_pod("p", "2"), snap, explain=True)
    assert (result.suggested_host, result.evaluated_nodes, result.feasible_nodes) == ("b", 2, 1)
    assert result.explanation is not None and result.explanation.nodes["b"].scores == []


def test_bind_plugin_calls_the_given_function_and_reports_errors() -> None:
    bound: list[tuple[str, str]] = []
    fwk = Framework(bind=lambda pod, node: bound.append((pod["metadata"]["name"], node)))
    assert fwk.run_bind_plugins(CycleState(), make_pod("p"), "a") is None
    assert bound == [("p", "a")]

    def refuse(pod: Object, node: str) -> None:
        raise RuntimeError('pods "p" is being deleted')

    status = Framework(bind=refuse).run_bind_plugins(CycleState(), make_pod("p"), "a")
    assert status is not None and status.code == Code.Error
    assert status.message() == 'running Bind plugin "DefaultBinder": pods "p" is being deleted'
    unwired = Framework().run_bind_plugins(CycleState(), make_pod("p"), "a")
    assert unwired is not None and "no bind function" in unwired.message()


def test_schedule_pod_accepts_a_list_of_node_infos_and_a_filter_error_is_not_a_fit_error() -> None:
    infos = [NodeInfo(make_node("a")), NodeInfo(make_node("b"))]
    assert schedule_pod(Framework(), CycleState(), make_pod("p"), infos).suggested_host in {"a", "b"}
    bad = make_pod("p")
    bad["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    with pytest.raises(Exception, match="lots"):
        schedule_pod(Framework(), CycleState(), bad, infos)


def test_topology_spread_keeps_zones_even_through_the_whole_framework() -> None:
    nodes = [make_node(f"{zone}-{i}", labels={"topology.kubernetes.io/zone": zone})
             for zone in ("z1", "z2", "z3") for i in range(2)]
    snap = Snapshot(nodes)
    constraint = {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                  "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}}
    pods = [make_pod(f"web-{i}", labels={"app": "web"}, topologySpreadConstraints=[constraint])
            for i in range(9)]
    placed = schedule_all(Framework(rand=random.Random(5)), snap, pods)
    assert sorted(Counter(host.split("-")[0] for host in placed).values()) == [3, 3, 3]
    # A pod restricted to z1 counts only z1 (nodeAffinityPolicy Honor): skew 3 + 1 - 3 is fine.
    pinned = make_pod("web-x", labels={"app": "web"}, topologySpreadConstraints=[constraint],
                      nodeSelector={"topology.kubernetes.io/zone": "z1"})
    assert schedule_pod(Framework(), CycleState(), pinned, snap).suggested_host.startswith("z1")


class _Scorer:
    """A score plugin that gives every node the same score."""

    name = "Fixed"
    value: Any = 0

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def score(self, state: CycleState, pod: Object, node_info: NodeInfo) -> Any:
        return self.value


@pytest.mark.parametrize(("value", "error"), [
    (0, None), (100, None), (42.5, None),  # the rule is 0 <= score <= 100, not "an integer"
    (101, "invalid score 101"), (-1, "invalid score -1"),
])
def test_score_range_check(value: Any, error: str | None) -> None:
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"plugins": {"score": {"enabled": [{"name": "Fixed"}]}}}]}
    scorer = type("Fixed", (_Scorer,), {"value": value})
    fwk = Framework(load_config(config, {"Fixed": scorer}).profiles[0], registry={"Fixed": scorer})
    snapshot = Snapshot([make_node("a"), make_node("b")])
    if error is None:
        assert schedule_pod(fwk, CycleState(), make_pod("p"), snapshot).suggested_host in ("a", "b")
    else:
        with pytest.raises(SchedulingError) as info:
            schedule_pod(fwk, CycleState(), make_pod("p"), snapshot)
        assert str(info.value) == (f'plugin "Fixed" returns an {error}, it should in the range of [0, 100] '
                                   "after normalizing")
