"""The hot paths have shortcuts (issue: performance); each must agree with the general code it
stands for, on inputs chosen to hit the edges (overcommit, zero capacity, huge memory)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pytest
from scheduler_helpers import make_node, make_pod

from kubelab.api.request import Request
from kubelab.apiserver import APIServer
from kubelab.apiserver.watch_cache import Cacher
from kubelab.scheduler.algorithm import FitError, NodePluginScores, SchedulingError, select_host
from kubelab.scheduler.config import load_config
from kubelab.scheduler.framework import Framework
from kubelab.scheduler.interface import Code, CycleState, NodeScore, Status
from kubelab.scheduler.plugins.node_memo import NodeMemo
from kubelab.scheduler.plugins.registry import in_tree_registry
from kubelab.scheduler.plugins.resource_allocation import (
    DEFAULT_RESOURCES,
    ResourceAllocationScorer,
    least_resource_scorer,
    most_resource_scorer,
)
from kubelab.scheduler.snapshot import Snapshot
from kubelab.scheduler.types import NodeInfo, Object, PodInfo
from kubelab.sim import Clock, Trace
from kubelab.store import Store


def _node(rand: random.Random) -> dict[str, Any]:
    cpu = rand.choice(["0", "500m", "1", "4", "64"])
    memory = rand.choice(["0", "1Mi", "512Mi", "32Gi", "4Ti"])
    return {"metadata": {"name": "n"}, "spec": {},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}}}


def _pod(rand: random.Random, i: int) -> dict[str, Any]:
    requests = {k: v for k, v in (("cpu", rand.choice([None, "0", "10m", "1", "3"])),
                                  ("memory", rand.choice([None, "0", "10Mi", "1Gi", "40Gi"])))
                if v is not None}
    return {"metadata": {"name": f"p{i}", "namespace": "default", "uid": f"u{i}"},
            "spec": {"nodeName": "n", "containers": [{"name": "c", "resources": {"requests": requests}}]}}


@pytest.mark.parametrize("general", [
    least_resource_scorer([("cpu", 1), ("memory", 1)]),
    least_resource_scorer([("cpu", 3), ("memory", 1)]),
    most_resource_scorer([("cpu", 1), ("memory", 2)]),
])
def test_the_cpu_memory_shortcut_scores_like_the_general_path(general: Any) -> None:
    resources = [("cpu", general.weights[0]), ("memory", general.weights[1])]
    fast = ResourceAllocationScorer("x", general, resources, False, cpu_memory=general.cpu_memory)
    slow = ResourceAllocationScorer("x", general, resources, False)
    assert fast.score is not fast.score_resources and slow.score == slow.score_resources
    rand = random.Random(7)
    for _ in range(300):
        info = NodeInfo(_node(rand), [_pod(rand, i) for i in range(rand.randrange(4))])
        requests = fast.pod_request_list(_pod(rand, 99))
        assert fast.score(info, requests) == slow.score(info, requests)
        assert fast.score_nodes([info], requests) == [slow.score(info, requests)]


def test_other_resources_take_the_general_path() -> None:
    resources = [("memory", 1), ("cpu", 1)]
    scorer = least_resource_scorer(resources)
    assert ResourceAllocationScorer("x", scorer, resources, False, cpu_memory=scorer.cpu_memory
                                    ).score.__name__ == "score_resources"


def test_select_host_takes_plain_pairs_and_node_plugin_scores_alike() -> None:
    pairs = [("a", 5), ("b", 9), ("c", 9)]
    named = [NodePluginScores(n, s) for n, s in pairs]
    for seed in range(20):
        assert select_host(pairs, random.Random(seed)) == select_host(named, random.Random(seed))


def test_the_watch_window_keeps_bytes_not_decoded_objects() -> None:
    clock = Clock()
    server = APIServer(Store(clock, trace=Trace(lambda: clock.now)), clock, random.Random(0))
    token = server.token_for("admin")
    selected: list[Any] = []
    everything: list[Any] = []
    server.watch(Request("watch", "configmaps", namespace="default", token=token,
                         label_selector="app=x"), selected.append)
    server.watch(Request("watch", "configmaps", namespace="default", token=token), everything.append)
    for i in range(3):
        server.handle(Request("create", "configmaps", namespace="default", token=token, body={
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"c{i}", "labels": {"app": "x" if i else "y"}}}))
    clock.run_until_idle()
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in selected] == \
        [("ADDED", "c1"), ("ADDED", "c2")]
    assert [e["object"]["metadata"]["name"] for e in everything] == ["c0", "c1", "c2"]
    assert selected[0]["object"] is not everything[1]["object"]  # each watcher has its own copy
    cacher: Cacher = next(c for c in server.served.cachers.values() if c.resource == "configmaps")
    assert cacher.window and all(ev._obj is None and ev._prev is None for ev in cacher.window)


# --- the batch forms of the plugins (filter_nodes, score_nodes, normalize_scores) -------------

def _random_node(rand: random.Random, i: int) -> dict[str, Any]:
    taints = []
    if rand.random() < 0.2:
        taints.append({"key": rand.choice(["a", "b"]), "value": rand.choice(["", "x"]),
                       "effect": rand.choice(["NoSchedule", "PreferNoSchedule", "NoExecute"])})
    labels = {"zone": rand.choice(["z1", "z2"])} if rand.random() < 0.9 else {}
    if rand.random() < 0.3:
        labels["disk"] = "ssd"
    node = make_node(f"n{i}", cpu=rand.choice(["0", "500m", "1", "4"]),
                     memory=rand.choice(["0", "1Gi", "8Gi"]), pods=rand.choice(["2", "110"]),
                     labels=labels, taints=taints,
                     images=[("nginx:latest", 300 << 20)] if rand.random() < 0.3 else [],
                     unschedulable=rand.random() < 0.1)
    for name, values in (("example.com/gpu", ["1", "2"]), ("ephemeral-storage", ["1Gi", "10Gi"])):
        if rand.random() < 0.2:
            node["status"]["allocatable"][name] = rand.choice(values)
    return node


def _random_pod(rand: random.Random, i: int) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if rand.random() < 0.3:
        spec["tolerations"] = [{"key": rand.choice(["a", "b"]), "operator": "Exists"}]
    if rand.random() < 0.2:
        spec["nodeSelector"] = {"disk": "ssd"}
    if rand.random() < 0.2:
        zone_z1 = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}
        spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 5, "preference": zone_z1}]}}
    if rand.random() < 0.2:
        spec["topologySpreadConstraints"] = [{
            "maxSkew": 1, "topologyKey": rand.choice(["zone", "kubernetes.io/hostname"]),
            "whenUnsatisfiable": rand.choice(["DoNotSchedule", "ScheduleAnyway"]),
            "labelSelector": {"matchLabels": {"app": "w"}}}]
    if rand.random() < 0.05:
        spec["nodeName"] = f"n{rand.randrange(12)}"
    pod = make_pod(f"p{i}", cpu=rand.choice([None, "0", "100m", "1", "3"]),
                   memory=rand.choice([None, "128Mi", "1Gi", "6Gi"]), labels={"app": "w"}, **spec)
    requests = pod["spec"]["containers"][0]["resources"]["requests"]
    if rand.random() < 0.15:
        requests["example.com/gpu"] = "1"
    if rand.random() < 0.1:
        requests["ephemeral-storage"] = "2Gi"
    return pod


def _per_node_only(plugin: Any) -> Any:
    """The plugin without its batch forms, as a learner would write it."""
    proxy = SimpleNamespace(name=plugin.name)
    for method in ("pre_filter", "filter", "post_filter", "pre_score", "score", "normalize_score", "bind"):
        if hasattr(plugin, method):
            setattr(proxy, method, getattr(plugin, method))
    return proxy


def _verdicts(statuses: list[Status | None]) -> list[Any]:
    return [None if s is None else (s.code, s.reasons, s.plugin) for s in statuses]


def test_in_tree_batch_forms_agree_with_the_per_node_forms() -> None:
    rand = random.Random(11)
    checked = Counter[str]()
    for seed in range(40):
        fwk = Framework(rand=random.Random(seed))
        snapshot = Snapshot([_random_node(rand, i) for i in range(12)])
        for i in range(6):
            snapshot.assume_pod(PodInfo(_random_pod(rand, 100 + i)), f"n{rand.randrange(12)}")
        fwk.snapshot = snapshot
        pod = _random_pod(rand, seed)
        nodes = snapshot.node_info_list
        state = CycleState()
        fwk.run_pre_filter_plugins(state, pod, nodes)
        for pl in fwk.filter_plugins:
            if hasattr(pl, "filter_nodes") and pl.name not in state.skip_filter_plugins:
                assert _verdicts(pl.filter_nodes(state, pod, nodes)) == \
                    _verdicts([pl.filter(state, pod, n) for n in nodes]), pl.name
                checked[pl.name] += 1
        fwk.run_pre_score_plugins(state, pod, nodes)
        names = [n.name for n in nodes]
        for pl in fwk.score_plugins:
            if pl.name in state.skip_score_plugins:
                continue
            raw = [pl.score(state, pod, n) for n in nodes]
            if hasattr(pl, "score_nodes"):
                assert pl.score_nodes(state, pod, nodes) == raw, pl.name
                checked[pl.name] += 1
            if hasattr(pl, "normalize_scores"):
                node_scores = [NodeScore(n, s) for n, s in zip(names, raw, strict=True)]
                pl.normalize_score(state, pod, node_scores)  # type: ignore[attr-defined]
                assert pl.normalize_scores(state, pod, names, raw) == [s.score for s in node_scores]
                checked[pl.name] += 1
    assert set(checked) >= {"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
                            "NodeResourcesFit", "PodTopologySpread", "NodeResourcesBalancedAllocation",
                            "ImageLocality"}


def _decisions(fwk: Framework, seed: int) -> list[Any]:
    rand = random.Random(seed)
    snapshot = Snapshot([_random_node(rand, i) for i in range(rand.choice([12, 150]))])
    out: list[Any] = []
    for i in range(25):
        pod = _random_pod(rand, i)
        try:
            result = fwk.schedule_pod(pod, snapshot, explain=True)
        except FitError as err:
            assert err.explanation is not None
            out.append((str(err), sorted(err.diagnosis.unschedulable_plugins), err.explanation.table(),
                        sorted((n, repr(s)) for n, s in err.diagnosis.node_to_status.items())))
            continue
        assert result.explanation is not None
        out.append((result.suggested_host, result.evaluated_nodes, result.feasible_nodes,
                    result.explanation.table(), fwk.next_start_node_index))
        snapshot.assume_pod(PodInfo({**pod, "spec": {**pod["spec"], "nodeName": result.suggested_host}}),
                            result.suggested_host)
    return out


def test_the_framework_decides_alike_with_and_without_batch_forms() -> None:
    per_node = {cls.name: (lambda args, handle, cls=cls: _per_node_only(cls(args, handle)))
                for cls in in_tree_registry().values()}
    for seed in range(8):
        batch = _decisions(Framework(rand=random.Random(seed)), seed)
        assert batch == _decisions(Framework(rand=random.Random(seed), registry=per_node), seed)


class _Flaky:
    """A filter whose batch form fails: the framework asks node by node to find the culprit."""

    name = "Flaky"

    def __init__(self, args: Any, handle: Any) -> None:
        self.calls: list[str] = []

    def filter(self, state: CycleState, pod: Object, node_info: NodeInfo) -> Status | None:
        self.calls.append(node_info.name)
        if node_info.name == "b":
            raise RuntimeError("disk on fire")
        return None if node_info.name != "c" else Status(Code.Unschedulable, "no")

    def filter_nodes(self, state: CycleState, pod: Object, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        raise RuntimeError("batch broke")


def test_a_failing_batch_filter_falls_back_to_one_node_at_a_time() -> None:
    config = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
              "profiles": [{"plugins": {"filter": {"enabled": [{"name": "Flaky"}]}}}]}
    profile = load_config(config, {"Flaky": _Flaky}).profiles[0]
    fwk = Framework(profile, registry={"Flaky": _Flaky})
    fwk.snapshot = snapshot = Snapshot([make_node(n) for n in "abcd"])
    state = CycleState()
    fwk.run_pre_filter_plugins(state, make_pod("p"), snapshot.node_info_list)
    verdicts = fwk.run_filter_plugins_on_nodes(state, make_pod("p"), snapshot.node_info_list)
    error = (Code.Error, ('running "Flaky" filter plugin: disk on fire',), "Flaky")
    assert _verdicts(verdicts) == [None, error, (Code.Unschedulable, ("no",), "Flaky"), None]
    with pytest.raises(SchedulingError, match="disk on fire"):
        fwk.schedule_pod(make_pod("p"), snapshot)


def test_remembered_scores_follow_every_change_of_a_node() -> None:
    least = least_resource_scorer(DEFAULT_RESOURCES)
    fit = ResourceAllocationScorer("x", least, DEFAULT_RESOURCES, False, cpu_memory=least.cpu_memory)
    general = ResourceAllocationScorer("x", least, DEFAULT_RESOURCES, False)
    snapshot = Snapshot([make_node(n, "4", "8Gi") for n in "abc"])
    request = [500, 1 << 30]

    def agree() -> list[int]:
        nodes = snapshot.node_info_list
        scores = fit.score_nodes(nodes, request)
        assert scores == [general.score(n, request) for n in nodes]
        return scores

    before = agree()
    generation = snapshot.get("a").generation
    snapshot.add_pod(make_pod("p1", "2", "4Gi", node_name="a"))
    assert snapshot.get("a").generation != generation
    after = agree()
    assert after[0] < before[0] and after[1:] == before[1:]
    snapshot.remove_pod(make_pod("p1", node_name="a"))
    assert agree() == before
    snapshot.update_node(make_node("b", "8", "8Gi"))  # set_node: more cpu
    assert agree()[1] > before[1]
    snapshot.remove_node("c")
    snapshot.add_node(make_node("c", "1", "1Gi"))  # same name, a new NodeInfo
    assert agree()[2] < before[2]
    request = [3000, 1 << 20]  # another pod
    agree()


def test_node_memo_works_out_only_changed_nodes_and_stays_the_size_of_the_cluster() -> None:
    snapshot = Snapshot([make_node(n) for n in "abc"])
    memo: NodeMemo[int] = NodeMemo()
    asked: list[list[str]] = []

    def pods_per_node(changed: list[NodeInfo]) -> list[int]:
        asked.append([n.name for n in changed])
        return [len(n.pods) for n in changed]

    nodes = snapshot.node_info_list
    assert memo.results("shape", nodes, pods_per_node) == [0, 0, 0]
    for i in range(20):
        snapshot.add_pod(make_pod(f"p{i}", node_name="b"))
        assert memo.results("shape", nodes, pods_per_node) == [0, i + 1, 0]
    assert asked == [["a", "b", "c"]] + [["b"]] * 20 and len(memo) == 3
    assert memo.results("another shape", nodes, pods_per_node) == [0, 20, 0]
    assert asked[-1] == ["a", "b", "c"]


def test_fit_filter_verdicts_follow_the_node() -> None:
    fwk = Framework()
    fwk.snapshot = snapshot = Snapshot([make_node("a", "1", "1Gi"), make_node("b", "1", "1Gi")])
    fit = fwk.plugins["NodeResourcesFit"]
    pod = make_pod("p", "600m", "100Mi")
    state = CycleState()
    fwk.run_pre_filter_plugins(state, pod, snapshot.node_info_list)

    def verdicts() -> list[Any]:
        nodes = snapshot.node_info_list
        batch = _verdicts(fit.filter_nodes(state, pod, nodes))  # type: ignore[attr-defined]
        assert batch == _verdicts([fit.filter(state, pod, n) for n in nodes])  # type: ignore[attr-defined]
        return batch

    assert verdicts() == [None, None]
    snapshot.add_pod(make_pod("q", "500m", "100Mi", node_name="a"))
    assert verdicts() == [(Code.Unschedulable, ("Insufficient cpu",), ""), None]
    snapshot.update_node(make_node("a", "2", "1Gi"))
    assert verdicts() == [None, None]


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
        assert fwk.schedule_pod(make_pod("p"), snapshot).suggested_host in ("a", "b")
    else:
        with pytest.raises(SchedulingError) as info:
            fwk.schedule_pod(make_pod("p"), snapshot)
        assert str(info.value) == (f'plugin "Fixed" returns an {error}, it should in the range of [0, 100] '
                                   "after normalizing")
