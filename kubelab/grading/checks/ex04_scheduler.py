"""Checks for notebook 04's exercises: a Filter plugin (4.1) and a Score plugin (4.2).

The learner's plugin is registered as an out-of-tree plugin of a running kube-scheduler
(Scheduler(registry=...)) and enabled in its profile, as a KubeSchedulerConfiguration would.
Expected results come from kubelab's own plugins run on the very same case or the very same
seeded cluster (TaintToleration's filter, NodeResourcesFit's MostAllocated score), so the
learner is held to upstream's behaviour, not to numbers typed into a test.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kubelab.grading.checks.common import pod
from kubelab.grading.context import CheckContext
from kubelab.grading.exercises import check
from kubelab.scheduler import Scheduler
from kubelab.scheduler.interface import CycleState, Status
from kubelab.scheduler.plugins.resource_allocation import (
    DEFAULT_RESOURCES,
    ResourceAllocationScorer,
    most_resource_scorer,
)
from kubelab.scheduler.plugins.taint_toleration import TaintToleration
from kubelab.scheduler.types import NodeInfo

__all__: list[str] = []

CONFIG_API = "kubescheduler.config.k8s.io/v1"


def node(name: str, cpu: str = "4", memory: str = "8Gi", taints: list[dict[str, str]] | None = None
         ) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {"taints": taints} if taints else {},
            "status": {"capacity": {"cpu": cpu, "memory": memory, "pods": "110"},
                       "allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}}}


def _plugin_class(name: str, point: str, call: Callable[..., Any]) -> type:
    """An out-of-tree plugin for the registry: built as cls(args, handle), serving `point`."""
    def init(self: Any, args: Mapping[str, Any], handle: Any) -> None:
        del args, handle
    if point == "filter":
        return type(name, (), {"name": name, "__init__": init,
                               "filter": lambda self, state, p, ni: call(state, p, ni)})
    return type(name, (), {"name": name, "__init__": init,
                           "score": lambda self, state, p, ni: int(call(state, p, ni))})


def _reference_score() -> Callable[[Any, Any, NodeInfo], int]:
    scorer = ResourceAllocationScorer("MostAllocated", most_resource_scorer(DEFAULT_RESOURCES),
                                      DEFAULT_RESOURCES, use_requested=False)
    return lambda state, p, ni: scorer.score(ni, scorer.pod_request_list(p))


def _run(ctx: CheckContext, name: str, point: str, call: Callable[..., Any], nodes: list[dict[str, Any]],
         story: Callable[[Any], None]) -> tuple[dict[str, str], dict[str, str]]:
    """Run `story` on a cluster whose scheduler uses `call` as plugin `name`; return where
    each pod went and the last FailedScheduling message of each pod that went nowhere."""
    plugins: dict[str, Any]
    if point == "filter":
        plugins = {"filter": {"disabled": [{"name": "TaintToleration"}], "enabled": [{"name": name}]}}
    else:
        plugins = {"score": {"disabled": [{"name": "*"}], "enabled": [{"name": name, "weight": 1}]}}
    config = {"apiVersion": CONFIG_API, "kind": "KubeSchedulerConfiguration",
              "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]}
    registry = {name: _plugin_class(name, point, call)}
    c = ctx.cluster(nodes=nodes, components=["scheduler"],
                    replace={"scheduler": lambda sctx: Scheduler(sctx, config=config, registry=registry)})
    story(c)
    placed = {p["metadata"]["name"]: p["spec"]["nodeName"]
              for p in c.get("pods") if p["spec"].get("nodeName")}
    failed = {e["involvedObject"]["name"]: e["message"] for e in c.events()
              if e.get("reason") == "FailedScheduling"}
    return placed, {k: v for k, v in failed.items() if k not in placed}


def _compare(ctx: CheckContext, mine: tuple[dict[str, str], dict[str, str]],
             reference: tuple[dict[str, str], dict[str, str]], plugin: str) -> None:
    for pod_name in sorted(set(mine[0]) | set(reference[0])):
        got, expected = mine[0].get(pod_name, "<pending>"), reference[0].get(pod_name, "<pending>")
        if got != expected:
            ctx.fail(f"pod {pod_name} was placed differently than with kubelab's {plugin}",
                     expected=f"pod {pod_name} on node {expected}", got=f"pod {pod_name} on node {got}")
    for pod_name, expected in sorted(reference[1].items()):
        got = mine[1].get(pod_name, "<no FailedScheduling event>")
        if got != expected:
            ctx.fail(f"the FailedScheduling event of pod {pod_name} differs",
                     expected=f"event message: {expected}", got=f"event message: {got}")


# ---------------------------------------------------------------- 4.1 TaintFilter

NO_SCHEDULE = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
NO_EXECUTE = {"key": "maintenance", "effect": "NoExecute"}
PREFER = {"key": "slow", "value": "yes", "effect": "PreferNoSchedule"}
TAINT_CASES: list[tuple[str, list[dict[str, str]], list[dict[str, Any]]]] = [
    ("no taints", [], []),
    ("NoSchedule, no toleration", [NO_SCHEDULE], []),
    ("NoSchedule, Equal toleration", [NO_SCHEDULE],
     [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]),
    ("NoSchedule, toleration with another value", [NO_SCHEDULE],
     [{"key": "dedicated", "operator": "Equal", "value": "cpu", "effect": "NoSchedule"}]),
    ("NoSchedule, Exists on the key", [NO_SCHEDULE], [{"key": "dedicated", "operator": "Exists"}]),
    ("NoSchedule, Exists without a key (tolerates everything)", [NO_SCHEDULE], [{"operator": "Exists"}]),
    ("NoSchedule, operator left out (Equal)", [NO_SCHEDULE], [{"key": "dedicated", "value": "gpu"}]),
    ("NoExecute, toleration for NoSchedule only", [NO_EXECUTE],
     [{"key": "maintenance", "operator": "Exists", "effect": "NoSchedule"}]),
    ("NoExecute, toleration for every effect", [NO_EXECUTE], [{"key": "maintenance", "operator": "Exists"}]),
    ("NoExecute without a value, Equal with an empty value", [NO_EXECUTE],
     [{"key": "maintenance", "operator": "Equal", "value": "", "effect": "NoExecute"}]),
    ("PreferNoSchedule only (a Score matter, not a Filter one)", [PREFER], []),
    ("two taints, one tolerated", [NO_SCHEDULE, {"key": "zone", "value": "b", "effect": "NoSchedule"}],
     [{"key": "dedicated", "operator": "Exists"}]),
]


def _status(s: Any) -> str:
    if s is None:
        return "None (the node fits)"
    if isinstance(s, Status):
        return f"Status({s.code.name}, {', '.join(s.reasons)!r})"
    return f"{s!r} (not a Status)"


@check("4.1", points=5, hint="A taint is tolerated when a toleration's effect is empty or the "
       "same, and its key matches (an empty key with Exists matches all) with Exists, or Equal "
       "and the same value. Only NoSchedule and NoExecute taints filter.")
def agrees_with_taint_toleration(ctx: CheckContext) -> None:
    plugin = ctx.learner()
    reference = TaintToleration({}, None)  # type: ignore[arg-type]
    for label, taints, tolerations in TAINT_CASES:
        info = NodeInfo(node("n1", taints=taints))
        candidate = pod("p", tolerations=tolerations) if tolerations else pod("p")
        expected = reference.filter(CycleState(), candidate, info)
        got = plugin.filter(CycleState(), candidate, info)
        if _status(got) != _status(expected):
            ctx.fail(f"case {label!r}: taints {taints}, tolerations {tolerations}",
                     expected=f"Status {_status(expected)}", got=f"Status {_status(got)}")


@check("4.1", points=5, seeds=(1, 2), hint="Return Status(Code.UnschedulableAndUnresolvable, "
       "'node(s) had untolerated taint(s)') for a node with an untolerated taint: the "
       "scheduler counts these reasons in its FailedScheduling message.")
def schedules_a_tainted_cluster(ctx: CheckContext) -> None:
    nodes = [node("node-1", taints=[NO_SCHEDULE]), node("node-2", taints=[NO_EXECUTE]),
             node("node-3", taints=[PREFER]), node("node-4")]

    def story(c: Any) -> None:
        for i in range(4):
            c.client.create(pod(f"plain-{i}"))
        c.client.create(pod("gpu", tolerations=[{"key": "dedicated", "value": "gpu",
                                                 "effect": "NoSchedule"}]))
        c.client.create(pod("anything", tolerations=[{"operator": "Exists"}]))
        c.client.create(pod("half", tolerations=[{"key": "maintenance", "operator": "Exists",
                                                  "effect": "NoSchedule"}]))
        c.run(5)
        for name in ("node-3", "node-4"):  # kubectl taint nodes ... freeze=now:NoSchedule
            n = c.client.get("nodes", name)
            n["spec"]["taints"] = [*(n["spec"].get("taints") or []),
                                   {"key": "freeze", "value": "now", "effect": "NoSchedule"}]
            c.client.update(n)
        c.client.create(pod("late"))
        c.run(5)

    learner = ctx.learner()
    mine = _run(ctx, "TaintFilter", "filter", learner.filter, nodes, story)
    reference_plugin = TaintToleration({}, None)  # type: ignore[arg-type]
    reference = _run(ctx, "TaintFilter", "filter", reference_plugin.filter, nodes, story)
    _compare(ctx, mine, reference, "TaintToleration")


# ---------------------------------------------------------------- 4.2 BinPackingScore

SCORE_CASES: list[tuple[str, dict[str, Any], list[dict[str, Any]], dict[str, Any]]] = [
    ("an empty node, 1 CPU / 1Gi pod", node("n", "4", "8Gi"), [],
     {"requests": {"cpu": "1", "memory": "1Gi"}}),
    ("a half-full node", node("n", "4", "8Gi"), [{"requests": {"cpu": "2", "memory": "3Gi"}}],
     {"requests": {"cpu": "500m", "memory": "512Mi"}}),
    ("a pod without requests (counts 100m and 200Mi)", node("n", "2", "4Gi"),
     [{"requests": {"cpu": "1"}}], {}),
    ("more requested than the node has (capped at 100)", node("n", "1", "1Gi"),
     [{"requests": {"cpu": "900m", "memory": "900Mi"}}], {"requests": {"cpu": "500m", "memory": "500Mi"}}),
    ("odd numbers (integer division)", node("n", "3", "7Gi"), [{"requests": {"cpu": "1", "memory": "1Gi"}}],
     {"requests": {"cpu": "333m", "memory": "1000Mi"}}),
]


def _with_resources(name: str, resources: dict[str, Any]) -> dict[str, Any]:
    return pod(name, containers=[{"name": "app", "image": "nginx:1.27", "resources": resources}])


@check("4.2", points=5, hint="Per resource: min(requested, allocatable) * 100 // allocatable, where "
       "requested is the node's non-zero requests plus the pod's; then (cpu + memory) // 2.")
def agrees_with_most_allocated(ctx: CheckContext) -> None:
    plugin = ctx.learner()
    reference = _reference_score()
    for label, n, existing, resources in SCORE_CASES:
        on_node = [_with_resources(f"old-{i}", r) for i, r in enumerate(existing)]
        for p in on_node:
            p["spec"]["nodeName"] = "n"
        info = NodeInfo(n, on_node)
        candidate = _with_resources("new", resources)
        expected = reference(CycleState(), candidate, info)
        got = plugin.score(CycleState(), candidate, info)
        if got != expected:
            ctx.fail(f"case {label!r}", expected=f"score {expected}", got=f"score {got!r}")


@check("4.2", points=5, seeds=(1, 2), hint="With bin packing the scheduler fills a node before "
       "starting the next: the highest score goes to the fullest node that still fits.")
def packs_a_cluster(ctx: CheckContext) -> None:
    nodes = [node(f"node-{i}") for i in range(1, 5)]

    def story(c: Any) -> None:
        for i in range(8):
            c.client.create(_with_resources(f"web-{i}", {"requests": {"cpu": "1", "memory": "1Gi"}}))
            c.run(1)

    learner = ctx.learner()
    mine = _run(ctx, "BinPackingScore", "score", learner.score, nodes, story)
    reference = _run(ctx, "BinPackingScore", "score", _reference_score(), nodes, story)
    _compare(ctx, mine, reference, "NodeResourcesFit (MostAllocated)")
    used = len(set(mine[0].values()))
    ctx.expect_equal(used, 2, "nodes used for eight 1-CPU pods on 4-CPU nodes (packed, not spread)",
                     unit="node(s) used")
