"""The hot paths have shortcuts (issue: performance); each must agree with the general code it
stands for, on inputs chosen to hit the edges (overcommit, zero capacity, huge memory)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubelab.api.request import Request
from kubelab.apiserver import APIServer
from kubelab.apiserver.watch_cache import Cacher
from kubelab.scheduler.algorithm import NodePluginScores, select_host
from kubelab.scheduler.plugins.resource_allocation import (
    DEFAULT_RESOURCES,
    ResourceAllocationScorer,
    balanced_cpu_memory,
    balanced_resource_scorer,
    least_allocated_cpu_memory,
    least_resource_scorer,
    most_allocated_cpu_memory,
    most_resource_scorer,
)
from kubelab.scheduler.types import NodeInfo
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


@pytest.mark.parametrize(("general", "shortcut", "use_requested"), [
    (least_resource_scorer([("cpu", 1), ("memory", 1)]), least_allocated_cpu_memory, False),
    (least_resource_scorer([("cpu", 3), ("memory", 1)]), least_allocated_cpu_memory, False),
    (most_resource_scorer([("cpu", 1), ("memory", 2)]), most_allocated_cpu_memory, False),
    (balanced_resource_scorer, balanced_cpu_memory, True),
])
def test_cpu_memory_shortcuts_score_like_the_general_path(general: Any, shortcut: Any,
                                                          use_requested: bool) -> None:
    weights = getattr(general, "weights", [1, 1])
    resources = [("cpu", weights[0]), ("memory", weights[1])]
    fast = ResourceAllocationScorer("x", general, resources, use_requested, shortcut=shortcut)
    slow = ResourceAllocationScorer("x", general, resources, use_requested)
    assert fast.score is not fast.score_resources and slow.score == slow.score_resources
    rand = random.Random(7)
    for _ in range(300):
        info = NodeInfo(_node(rand), [_pod(rand, i) for i in range(rand.randrange(4))])
        requests = fast.pod_request_list(_pod(rand, 99))
        assert fast.score(info, requests) == slow.score(info, requests)


def test_other_resources_take_the_general_path() -> None:
    resources = [("memory", 1), ("cpu", 1)]
    scorer = ResourceAllocationScorer("x", least_resource_scorer(resources), resources, False,
                                      shortcut=least_allocated_cpu_memory)
    assert scorer.score == scorer.score_resources
    legacy = ResourceAllocationScorer("x", most_resource_scorer(DEFAULT_RESOURCES), DEFAULT_RESOURCES,
                                      False, cpu_memory=most_resource_scorer(DEFAULT_RESOURCES).cpu_memory)
    info = NodeInfo(_node(random.Random(1)))
    assert legacy.score(info, [100, 1 << 30]) == legacy.score_resources(info, [100, 1 << 30])


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
