"""Each scheduler plugin against upstream's semantics: filter reasons and score formulas.

Expected numbers come from upstream's formulas and tests (noderesources/*_test.go,
tainttoleration, nodeaffinity, imagelocality, podtopologyspread), recomputed by hand here.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from scheduler_helpers import make_node, make_pod

from kubelab.scheduler.framework import Framework
from kubelab.scheduler.interface import Code, CycleState, NodeScore, Status
from kubelab.scheduler.plugins.balanced_allocation import NodeResourcesBalancedAllocation
from kubelab.scheduler.plugins.helper import (
    build_broken_linear_function,
    default_normalize_score,
    go_div,
    go_round,
    tolerates_taint,
)
from kubelab.scheduler.plugins.image_locality import ImageLocality, calculate_priority
from kubelab.scheduler.plugins.node_affinity import NodeAffinity
from kubelab.scheduler.plugins.node_name import NodeName
from kubelab.scheduler.plugins.node_resources_fit import NodeResourcesFit
from kubelab.scheduler.plugins.node_unschedulable import NodeUnschedulable
from kubelab.scheduler.plugins.pod_topology_spread import PodTopologySpread
from kubelab.scheduler.plugins.taint_toleration import TaintToleration
from kubelab.scheduler.snapshot import Snapshot
from kubelab.scheduler.types import NodeInfo, PodInfo, pod_requests

MB = 1024 * 1024


def handle_for(*nodes: NodeInfo) -> Framework:
    fwk = Framework()  # plugins use it as their Handle: they need its snapshot
    fwk.snapshot = Snapshot.from_node_infos(nodes)
    return fwk


def run_filter(plugin: Any, pod: dict[str, Any], node: NodeInfo,
               nodes: tuple[NodeInfo, ...] = ()) -> Status | None:
    state = CycleState()
    if hasattr(plugin, "pre_filter"):
        _, status = plugin.pre_filter(state, pod, list(nodes) or [node])
        if status is not None and status.code == Code.Skip:
            return None
    result: Status | None = plugin.filter(state, pod, node)
    return result


def run_scores(plugin: Any, pod: dict[str, Any], nodes: list[NodeInfo]) -> tuple[list[int], list[int]]:
    """(raw, normalized) scores as the framework computes them."""
    state = CycleState()
    if hasattr(plugin, "pre_score"):
        status = plugin.pre_score(state, pod, nodes)
        if status is not None and status.code == Code.Skip:
            return [0] * len(nodes), [0] * len(nodes)
    raw = [plugin.score(state, pod, n) for n in nodes]
    scores = [NodeScore(n.name, s) for n, s in zip(nodes, raw, strict=True)]
    if hasattr(plugin, "normalize_score"):
        plugin.normalize_score(state, pod, scores)
    return raw, [s.score for s in scores]


def node_info(name: str, cpu: str = "4", memory: str = "8Gi", pods: tuple[dict[str, Any], ...] = (),
              **kw: Any) -> NodeInfo:
    return NodeInfo(make_node(name, cpu, memory, **kw), pods)


def two_container_pod(name: str = "p") -> dict[str, Any]:
    pod = make_pod(name, "1000m", "2000")
    pod["spec"]["containers"].append({"name": "d", "image": "nginx",
                                      "resources": {"requests": {"cpu": "2000m", "memory": "3000"}}})
    return pod


# --- requests and NodeInfo ---------------------------------------------------------------------

def test_pod_requests_take_the_max_of_containers_and_each_init_container_plus_overhead() -> None:
    # fit.go computePodResourceRequest's own example: result cpu 3, memory 3G.
    pod = make_pod("p", "2", "1G")
    pod["spec"]["containers"].append({"name": "c2", "resources": {"requests": {"cpu": "1", "memory": "1G"}}})
    pod["spec"]["initContainers"] = [
        {"name": "i1", "resources": {"requests": {"cpu": "2", "memory": "1G"}}},
        {"name": "i2", "resources": {"requests": {"cpu": "2", "memory": "3G"}}}]
    assert pod_requests(pod) == {"cpu": 3000, "memory": 3_000_000_000}
    pod["spec"]["overhead"] = {"cpu": "250m", "memory": "100M"}
    assert pod_requests(pod) == {"cpu": 3250, "memory": 3_100_000_000}


def test_sidecar_init_containers_add_up_with_the_regular_containers() -> None:
    pod = make_pod("p", "1", None)
    pod["spec"]["initContainers"] = [
        {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}},
        {"name": "setup", "resources": {"requests": {"cpu": "2"}}}]
    # running: 1 + 0.5; while "setup" runs: 0.5 (sidecar started first) + 2.
    assert pod_requests(pod) == {"cpu": 2500}


def test_node_info_sums_requests_incrementally_with_non_zero_defaults_for_scoring() -> None:
    info = node_info("n")
    a, b = make_pod("a", "250m", "1Gi"), make_pod("b", None, None)
    info.add_pod(a)
    info.add_pod(b)
    assert (info.requested.milli_cpu, info.requested.memory) == (250, 2**30)
    # b requests nothing: it counts 100m and 200Mi when scoring (util/pod_resources.go).
    assert (info.non_zero_requested.milli_cpu, info.non_zero_requested.memory) == (350, 2**30 + 200 * MB)
    info.remove_pod(a)
    assert (info.requested.milli_cpu, len(info.pods)) == (0, 1)
    with pytest.raises(KeyError, match="no corresponding pod"):
        info.remove_pod(a)


def test_snapshot_follows_pods_assumed_bound_moved_and_finished() -> None:
    snap = Snapshot([make_node("a"), make_node("b")])
    pod = make_pod("p", "1", "1Gi")
    snap.assume_pod(PodInfo(pod), "a")
    assert snap.get("a").requested.milli_cpu == 1000
    snap.add_pod(make_pod("p", "1", "1Gi", node_name="a"))  # the informer confirms the binding
    assert snap.get("a").requested.milli_cpu == 1000 and len(snap.get("a").pods) == 1
    snap.add_pod(make_pod("p", "1", "1Gi"))  # an update without nodeName leaves the assumed pod
    assert len(snap.get("a").pods) == 1
    done = make_pod("p", "1", "1Gi", node_name="a")
    done["status"] = {"phase": "Succeeded"}
    snap.update_pod(None, done)
    assert snap.get("a").requested.milli_cpu == 0
    snap.add_pod(make_pod("q", "1", "1Gi", node_name="c"))  # node c not seen yet
    snap.add_node(make_node("c"))
    assert snap.get("c").requested.milli_cpu == 1000
    with pytest.raises(KeyError, match='nodeinfo not found for node name "zz"'):
        snap.get("zz")


# --- NodeResourcesFit: Filter ------------------------------------------------------------------

@pytest.mark.parametrize(("pod", "reasons", "code"), [
    (make_pod("p", "1", "1Gi"), (), None),
    (make_pod("p", "3", "1Gi"), ("Insufficient cpu",), Code.Unschedulable),
    (make_pod("p", "1", "7Gi"), ("Insufficient memory",), Code.Unschedulable),
    (make_pod("p", "3", "7Gi"), ("Insufficient cpu", "Insufficient memory"), Code.Unschedulable),
    (make_pod("p", "5", "1Gi"), ("Insufficient cpu",), Code.UnschedulableAndUnresolvable),
])
def test_fit_filter_reasons(pod: dict[str, Any], reasons: tuple[str, ...], code: Code | None) -> None:
    node = node_info("n", "4", "8Gi", pods=(make_pod("old", "2", "2Gi"),))
    status = run_filter(NodeResourcesFit({}, Framework()), pod, node)
    if code is None:
        assert status is None
    else:
        assert status is not None and (status.code, status.reasons) == (code, reasons)


def test_fit_filter_counts_pods_ephemeral_storage_and_extended_resources() -> None:
    node = node_info("n", pods=(make_pod("old"),))
    node.allocatable.allowed_pod_number = 1
    pod = make_pod("p")
    pod["spec"]["containers"][0]["resources"]["requests"].update(
        {"ephemeral-storage": "1Gi", "example.com/gpu": "1"})
    status = run_filter(NodeResourcesFit({}, Framework()), pod, node)
    assert status is not None
    assert status.reasons == ("Too many pods", "Insufficient ephemeral-storage",
                              "Insufficient example.com/gpu")
    ignoring = NodeResourcesFit({"ignoredResourceGroups": ["example.com"]}, Framework())
    assert run_filter(ignoring, pod, node).reasons == (  # type: ignore[union-attr]
        "Too many pods", "Insufficient ephemeral-storage")


def test_fit_filter_uses_init_container_peak() -> None:
    pod = make_pod("p", "100m", "1Gi")
    pod["spec"]["initContainers"] = [{"name": "i", "resources": {"requests": {"cpu": "3500m"}}}]
    status = run_filter(NodeResourcesFit({}, Framework()), pod, node_info("n", "4", "8Gi",
                                                                          pods=(make_pod("o", "1", "1Gi"),)))
    assert status is not None and status.reasons == ("Insufficient cpu",)


# --- NodeResourcesFit: Score -------------------------------------------------------------------

def sized_nodes() -> list[NodeInfo]:
    # least_allocated_test.go "nothing scheduled, resources requested, differently sized nodes"
    return [node_info("node1", "4000m", "10000"), node_info("node2", "6000m", "10000")]


def test_least_allocated_score() -> None:
    raw, _ = run_scores(NodeResourcesFit({}, Framework()), two_container_pod(), sized_nodes())
    # node1: ((4000-3000)*100/4000 + (10000-5000)*100/10000) / 2 = (25 + 50) / 2 = 37
    assert raw == [37, 50]


def test_least_allocated_resource_weights() -> None:
    args = {"scoringStrategy": {"type": "LeastAllocated",
                                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 3}]}}
    raw, _ = run_scores(NodeResourcesFit(args, Framework()), two_container_pod(), sized_nodes())
    assert raw == [(25 * 1 + 50 * 3) // 4, (50 + 50 * 3) // 4]


def test_least_allocated_counts_defaults_for_pods_without_requests() -> None:
    node = node_info("n", "1000m", f"{1000 * MB}", pods=(make_pod("be", None, None),))
    raw, _ = run_scores(NodeResourcesFit({}, Framework()), make_pod("p", None, None), [node])
    # 2 x 100m of 1000m and 2 x 200Mi of 1000Mi: (80 + 60) / 2
    assert raw == [70]


def test_most_allocated_score_caps_at_capacity() -> None:
    args = {"scoringStrategy": {"type": "MostAllocated"}}
    raw, _ = run_scores(NodeResourcesFit(args, Framework()), two_container_pod(), sized_nodes())
    assert raw == [(75 + 50) // 2, (50 + 50) // 2]  # most_allocated_test.go: 62, 50
    big = make_pod("big", "8", "20000")
    assert run_scores(NodeResourcesFit(args, Framework()), big, sized_nodes())[0] == [100, 100]


def test_requested_to_capacity_ratio_uses_the_shape_and_rounds() -> None:
    args = {"scoringStrategy": {"type": "RequestedToCapacityRatio",
                                "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 10},
                                                                        {"utilization": 100, "score": 0}]}}}
    raw, _ = run_scores(NodeResourcesFit(args, Framework()), two_container_pod(), sized_nodes())
    # cpu 75% -> 25, memory 50% -> 50: round(37.5) = 38 (Go's math.Round; LeastAllocated floors to 37)
    assert raw == [38, 50]


def test_broken_linear_function_truncates_toward_zero_like_go() -> None:
    f = build_broken_linear_function([(0, 100), (30, 0)])
    assert [f(-5), f(0), f(20), f(30), f(99)] == [100, 100, 34, 0, 0]  # 100 + (-2000 / 30 -> -66)
    assert go_div(-7, 2) == -3 and go_div(7, -2) == -3 and go_div(7, 2) == 3
    assert go_round(37.5) == 38 and go_round(2.5) == 3 and go_round(-2.5) == -3


def test_balanced_allocation_standard_deviation() -> None:
    plugin = NodeResourcesBalancedAllocation({}, Framework())
    raw, _ = run_scores(plugin, two_container_pod(), sized_nodes())
    # node1 fractions 0.75 and 0.5: std 0.125, (1 - 0.125) * 100 = 87; node2 0.5 and 0.5: 100
    assert raw == [87, 100]
    three = NodeResourcesBalancedAllocation({"resources": [{"name": "cpu"}, {"name": "memory"},
                                                           {"name": "example.com/gpu"}]}, Framework())
    pod = two_container_pod()
    pod["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "1"
    gpu_node = NodeInfo(make_node("g", "4000m", "10000"))
    gpu_node.allocatable.scalar_resources["example.com/gpu"] = 4
    fractions = [0.75, 0.5, 0.25]
    mean = sum(fractions) / 3
    std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / 3)
    assert run_scores(three, pod, [gpu_node])[0] == [int((1 - std) * 100)]


def test_balanced_allocation_skips_best_effort_pods() -> None:
    state = CycleState()
    status = NodeResourcesBalancedAllocation({}, Framework()).pre_score(state, make_pod("p", None, None), [])
    assert status is not None and status.code == Code.Skip


# --- normalize ---------------------------------------------------------------------------------

def test_default_normalize_score_and_reverse() -> None:
    scores = [NodeScore(n, s) for n, s in (("a", 0), ("b", 3), ("c", 7))]
    default_normalize_score(100, False, scores)
    assert [s.score for s in scores] == [0, 42, 100]
    scores = [NodeScore(n, s) for n, s in (("a", 0), ("b", 3), ("c", 7))]
    default_normalize_score(100, True, scores)
    assert [s.score for s in scores] == [100, 58, 0]
    zeros = [NodeScore("a", 0), NodeScore("b", 0)]
    default_normalize_score(100, True, zeros)
    assert [s.score for s in zeros] == [100, 100]
    zeros = [NodeScore("a", 0)]
    default_normalize_score(100, False, zeros)
    assert zeros[0].score == 0


# --- TaintToleration ---------------------------------------------------------------------------

def taint(key: str, value: str = "", effect: str = "NoSchedule") -> dict[str, str]:
    return {"key": key, "value": value, "effect": effect}


def test_taint_filter_reason_and_effects() -> None:
    plugin = TaintToleration({}, Framework())
    tainted = node_info("n", taints=[taint("ok", "x", "PreferNoSchedule"), taint("dedicated", "gpu")])
    status = run_filter(plugin, make_pod("p"), tainted)
    assert status is not None and status.code == Code.UnschedulableAndUnresolvable
    # 1.34 (kubernetes#134740): the reason no longer names the taint.
    assert status.reasons == ("node(s) had untolerated taint(s)",)
    no_value = node_info("m", taints=[taint("node-role.kubernetes.io/control-plane", effect="NoExecute")])
    assert run_filter(plugin, make_pod("p"), no_value).reasons == (  # type: ignore[union-attr]
        "node(s) had untolerated taint(s)",)
    tolerating = make_pod("p", tolerations=[{"key": "dedicated", "operator": "Equal", "value": "gpu"}])
    assert run_filter(plugin, tolerating, tainted) is None
    assert run_filter(plugin, make_pod("p", tolerations=[{"operator": "Exists"}]), tainted) is None


@pytest.mark.parametrize(("toleration", "tolerated"), [
    ({"key": "k", "operator": "Exists"}, True),
    ({"key": "k", "value": "v"}, True),  # empty operator means Equal
    ({"key": "k", "value": "w"}, False),
    ({"key": "k", "operator": "Exists", "effect": "NoExecute"}, False),
    ({"operator": "Exists"}, True),  # empty key with Exists matches every taint
    ({"key": "other", "operator": "Exists"}, False),
])
def test_tolerates_taint(toleration: dict[str, str], tolerated: bool) -> None:
    assert tolerates_taint(toleration, taint("k", "v")) is tolerated


def test_taint_score_counts_prefer_no_schedule_and_reverses() -> None:
    plugin = TaintToleration({}, Framework())
    nodes = [node_info("a"), node_info("b", taints=[taint("x", effect="PreferNoSchedule")]),
             node_info("c", taints=[taint("x", effect="PreferNoSchedule"),
                                    taint("y", effect="PreferNoSchedule")])]
    raw, normalized = run_scores(plugin, make_pod("p"), nodes)
    assert (raw, normalized) == ([0, 1, 2], [100, 50, 0])
    tolerant = make_pod("p", tolerations=[{"key": "x", "operator": "Exists", "effect": "PreferNoSchedule"}])
    assert run_scores(plugin, tolerant, nodes) == ([0, 0, 1], [100, 100, 0])


# --- NodeAffinity ------------------------------------------------------------------------------

def affinity_pod(terms: list[dict[str, Any]] | None = None, preferred: list[dict[str, Any]] | None = None,
                 **spec: Any) -> dict[str, Any]:
    node_affinity: dict[str, Any] = {}
    if terms is not None:
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
    if preferred is not None:
        node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    return make_pod("p", affinity={"nodeAffinity": node_affinity}, **spec)


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)}


@pytest.mark.parametrize(("requirement", "fits"), [
    (expr("zone", "In", "z1", "z2"), True), (expr("zone", "In", "z3"), False),
    (expr("zone", "NotIn", "z3"), True), (expr("missing", "NotIn", "x"), True),
    (expr("zone", "Exists"), True), (expr("zone", "DoesNotExist"), False),
    (expr("cores", "Gt", "8"), True), (expr("cores", "Lt", "8"), False),
    (expr("cores", "Gt", "x"), False), (expr("zone", "Gt", "1"), False),
])
def test_node_affinity_operators(requirement: dict[str, Any], fits: bool) -> None:
    node = node_info("n", labels={"zone": "z1", "cores": "16"})
    pod = affinity_pod([{"matchExpressions": [requirement]}])
    status = run_filter(NodeAffinity({}, Framework()), pod, node)
    assert (status is None) is fits
    if not fits:
        assert status is not None and status.reasons == ("node(s) didn't match Pod's node affinity/selector",)
        assert status.code == Code.UnschedulableAndUnresolvable


@pytest.mark.parametrize("requirement", [
    expr("zone", "NotIn", "not a label value!"),  # would match z1 if it were not checked
    expr("bad key!", "DoesNotExist"),
    expr("zone", "NotIn"),  # NotIn needs values
    expr("zone", "Exists", "z1"),  # Exists takes none
    expr("zone", "Near", "z1"),  # not an operator
])
def test_a_requirement_that_does_not_parse_matches_no_node(requirement: dict[str, Any]) -> None:
    """nodeaffinity.go: the term's selector fails to parse, so it matches nothing and the node
    is UnschedulableAndUnresolvable; another term of the same pod still counts."""
    node = node_info("n", labels={"zone": "z1"})
    plugin = NodeAffinity({}, Framework())
    status = run_filter(plugin, affinity_pod([{"matchExpressions": [requirement]}]), node)
    assert status is not None and status.code == Code.UnschedulableAndUnresolvable
    assert status.reasons == ("node(s) didn't match Pod's node affinity/selector",)
    other = {"matchExpressions": [expr("zone", "In", "z1")]}
    assert run_filter(plugin, affinity_pod([{"matchExpressions": [requirement]}, other]), node) is None


def test_node_selector_and_terms_are_anded_and_terms_ored() -> None:
    node = node_info("n", labels={"disk": "ssd", "zone": "z1"})
    plugin = NodeAffinity({}, Framework())
    assert run_filter(plugin, make_pod("p", nodeSelector={"disk": "ssd"}), node) is None
    assert run_filter(plugin, make_pod("p", nodeSelector={"disk": "hdd"}), node) is not None
    ored = [{"matchExpressions": [expr("zone", "In", "z9")]},
            {"matchExpressions": [expr("zone", "In", "z1")]}]
    assert run_filter(plugin, affinity_pod(ored), node) is None
    assert run_filter(plugin, affinity_pod(ored, nodeSelector={"disk": "hdd"}), node) is not None
    assert run_filter(plugin, affinity_pod([{}]), node) is not None  # an empty term matches nothing


def test_node_affinity_match_fields_narrow_the_search_in_pre_filter() -> None:
    plugin = NodeAffinity({}, Framework())
    pod = affinity_pod([{"matchFields": [expr("metadata.name", "In", "a")]},
                        {"matchFields": [expr("metadata.name", "In", "b")]}])
    result, status = plugin.pre_filter(CycleState(), pod, [])
    assert status is None and result is not None and result.node_names == {"a", "b"}
    conflict = affinity_pod([{"matchFields": [expr("metadata.name", "In", "a"),
                                              expr("metadata.name", "In", "b")]}])
    _, status = plugin.pre_filter(CycleState(), conflict, [])
    assert status is not None and status.reasons == ("pod affinity terms conflict",)
    assert run_filter(plugin, pod, node_info("a")) is None
    assert run_filter(plugin, pod, node_info("c")) is not None
    _, skip = plugin.pre_filter(CycleState(), make_pod("p"), [])
    assert skip is not None and skip.code == Code.Skip


def test_node_affinity_preferred_terms_sum_weights_and_normalize() -> None:
    preferred = [{"weight": 2, "preference": {"matchExpressions": [expr("zone", "In", "z1")]}},
                 {"weight": 3, "preference": {"matchExpressions": [expr("disk", "In", "ssd")]}},
                 {"weight": 0, "preference": {"matchExpressions": [expr("disk", "Exists")]}}]
    nodes = [node_info("a", labels={"zone": "z1", "disk": "ssd"}), node_info("b", labels={"zone": "z1"}),
             node_info("c")]
    raw, normalized = run_scores(NodeAffinity({}, Framework()), affinity_pod(preferred=preferred), nodes)
    assert (raw, normalized) == ([5, 2, 0], [100, 40, 0])


def test_node_affinity_added_affinity_from_plugin_args() -> None:
    args = {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [expr("pool", "In", "batch")]}]}}}
    status = run_filter(NodeAffinity(args, Framework()), make_pod("p"), node_info("n"))
    assert status is not None and status.reasons == ("node(s) didn't match scheduler-enforced node affinity",)


# --- NodeName, NodeUnschedulable ---------------------------------------------------------------

def test_node_name_and_node_unschedulable() -> None:
    assert run_filter(NodeName({}, Framework()), make_pod("p", node_name="a"), node_info("a")) is None
    status = run_filter(NodeName({}, Framework()), make_pod("p", node_name="a"), node_info("b"))
    assert status is not None and status.reasons == ("node(s) didn't match the requested node name",)
    cordoned = node_info("c", unschedulable=True)
    status = run_filter(NodeUnschedulable({}, Framework()), make_pod("p"), cordoned)
    assert status is not None and status.reasons == ("node(s) were unschedulable",)
    assert status.code == Code.UnschedulableAndUnresolvable
    tolerant = make_pod("p", tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                                           "effect": "NoSchedule"}])
    assert run_filter(NodeUnschedulable({}, Framework()), tolerant, cordoned) is None


# --- ImageLocality -----------------------------------------------------------------------------

def test_image_locality_thresholds() -> None:
    assert calculate_priority(0, 1) == 0
    assert calculate_priority(23 * MB, 1) == 0
    assert calculate_priority(1000 * MB, 1) == 100
    assert calculate_priority(5000 * MB, 1) == 100
    assert calculate_priority(500 * MB, 1) == 100 * (500 - 23) // (1000 - 23)
    assert calculate_priority(1000 * MB, 2) == 100 * (1000 - 23) // (2000 - 23)  # per container


def test_image_locality_scales_by_spread() -> None:
    a = NodeInfo(make_node("a", images=[("registry/big:1.0", 500 * MB), ("nginx:latest", 100 * MB)]))
    b = NodeInfo(make_node("b", images=[("nginx:latest", 100 * MB)]))
    c = NodeInfo(make_node("c"))
    fwk = handle_for(a, b, c)
    pod = make_pod("p", image="registry/big:1.0")
    pod["spec"]["containers"].append({"name": "web", "image": "nginx"})  # no tag: nginx:latest
    raw, normalized = run_scores(ImageLocality({}, fwk), pod, [a, b, c])
    on_a = int(500 * MB * 1 / 3) + int(100 * MB * 2 / 3)
    on_b = int(100 * MB * 2 / 3)
    assert raw == normalized == [calculate_priority(on_a, 2), calculate_priority(on_b, 2), 0]
    assert raw[0] > raw[1] > 0
    one_node = NodeInfo(make_node("solo", images=[("tiny:1", 60 * MB)]))
    solo = handle_for(one_node, c, NodeInfo(make_node("d")))
    # 60 MiB on 1 of 3 nodes counts 20 MiB: under the 23 MiB threshold, so it scores 0.
    assert run_scores(ImageLocality({}, solo), make_pod("p", image="tiny:1"), [one_node])[0] == [0]


# --- PodTopologySpread -------------------------------------------------------------------------

def spread(key: str, max_skew: int = 1, when: str = "DoNotSchedule", **extra: Any) -> dict[str, Any]:
    return {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": {"app": "web"}}, **extra}


def zoned_nodes(counts: dict[str, int], zones: dict[str, str]) -> list[NodeInfo]:
    nodes = []
    for name, zone in zones.items():
        pods = tuple(make_pod(f"{name}-{i}", labels={"app": "web"}) for i in range(counts.get(name, 0)))
        nodes.append(node_info(name, labels={"zone": zone} if zone else {}, pods=pods))
    return nodes


def test_spread_filter_by_zone_with_max_skew() -> None:
    nodes = zoned_nodes({"a": 1, "b": 1}, {"a": "z1", "b": "z1", "c": "z2", "d": ""})
    plugin = PodTopologySpread({}, Framework())
    pod = make_pod("p", labels={"app": "web"}, topologySpreadConstraints=[spread("zone")])
    state = CycleState()
    plugin.pre_filter(state, pod, nodes)
    verdicts = [plugin.filter(state, pod, n) for n in nodes]
    # z1 has 2 matching pods, z2 has 0: z1 would reach skew 2 + 1 - 0 = 3 > 1
    assert verdicts[0] is not None
    assert verdicts[0].reasons == ("node(s) didn't match pod topology spread constraints",)
    assert verdicts[0].code == Code.Unschedulable
    assert verdicts[2] is None
    assert verdicts[3] is not None and verdicts[3].code == Code.UnschedulableAndUnresolvable
    assert verdicts[3].reasons == (
        "node(s) didn't match pod topology spread constraints (missing required label)",)
    # a pod that does not match its own selector does not add itself: skew 2 - 0 = 2 > 1 still
    other = make_pod("q", labels={"app": "db"}, topologySpreadConstraints=[spread("zone", max_skew=2)])
    state = CycleState()
    plugin.pre_filter(state, other, nodes)
    assert plugin.filter(state, other, nodes[0]) is None


def test_spread_min_domains_makes_the_global_minimum_zero() -> None:
    nodes = zoned_nodes({"a": 1, "c": 1}, {"a": "z1", "c": "z2"})
    plugin = PodTopologySpread({}, Framework())
    pod = make_pod("p", labels={"app": "web"}, topologySpreadConstraints=[spread("zone", minDomains=3)])
    state = CycleState()
    plugin.pre_filter(state, pod, nodes)
    assert plugin.filter(state, pod, nodes[0]) is not None  # 1 + 1 - 0 > 1
    without = make_pod("p", labels={"app": "web"}, topologySpreadConstraints=[spread("zone")])
    state = CycleState()
    plugin.pre_filter(state, without, nodes)
    assert plugin.filter(state, without, nodes[0]) is None  # 1 + 1 - 1 = 1


def test_spread_counts_only_nodes_the_pod_may_use_and_its_namespace() -> None:
    nodes = zoned_nodes({"a": 1}, {"a": "z1", "c": "z2"})
    nodes[0].add_pod(make_pod("elsewhere", labels={"app": "web"}, namespace="other"))
    plugin = PodTopologySpread({}, Framework())
    # nodeAffinityPolicy Honor (default): z2 is not allowed, so only z1 counts and min is 1
    pod = make_pod("p", labels={"app": "web"}, topologySpreadConstraints=[spread("zone")],
                   nodeSelector={"zone": "z1"})
    state = CycleState()
    plugin.pre_filter(state, pod, nodes)
    assert plugin.filter(state, pod, nodes[0]) is None
    ignore = make_pod("p", labels={"app": "web"}, nodeSelector={"zone": "z1"},
                      topologySpreadConstraints=[spread("zone", nodeAffinityPolicy="Ignore")])
    state = CycleState()
    plugin.pre_filter(state, ignore, nodes)
    assert plugin.filter(state, ignore, nodes[0]) is not None


def test_spread_score_schedule_anyway_by_hostname() -> None:
    nodes = zoned_nodes({"a": 0, "b": 1, "c": 3}, {"a": "z1", "b": "z1", "c": "z2"})
    fwk = handle_for(*nodes)
    plugin = PodTopologySpread({}, fwk)
    pod = make_pod("p", labels={"app": "web"},
                   topologySpreadConstraints=[spread("kubernetes.io/hostname", 2, "ScheduleAnyway")])
    raw, normalized = run_scores(plugin, pod, nodes)
    weight = math.log(3 + 2)
    expected = [go_round(count * weight + 1) for count in (0, 1, 3)]
    assert raw == expected
    top, low = max(expected), min(expected)
    assert normalized == [100 * (top + low - s) // top for s in expected]
    assert normalized[0] == 100


def test_spread_score_ignores_nodes_without_the_label_and_skips_without_constraints() -> None:
    nodes = zoned_nodes({"a": 2}, {"a": "z1", "b": "z2", "c": ""})
    fwk = handle_for(*nodes)
    plugin = PodTopologySpread({}, fwk)
    pod = make_pod("p", labels={"app": "web"},
                   topologySpreadConstraints=[spread("zone", 1, "ScheduleAnyway")])
    raw, normalized = run_scores(plugin, pod, nodes)
    weight = math.log(2 + 2)
    assert raw == [go_round(2 * weight), 0, 0]
    assert normalized == [100 * (raw[0] + 0 - raw[0]) // raw[0], 100, 0]
    state = CycleState()
    status = plugin.pre_score(state, make_pod("q"), nodes)
    assert status is not None and status.code == Code.Skip
