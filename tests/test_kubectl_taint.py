"""kubectl taint: kubectl's outputs and errors (k8s.io/kubectl pkg/cmd/taint)."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab.cluster import Cluster


def taints(c: Cluster, node: str = "node-1") -> list[dict[str, Any]]:
    return c.get("nodes", node, namespace="").get("spec", {}).get("taints") or []  # type: ignore[no-any-return]


def test_add_overwrite_and_remove_taints() -> None:
    c = Cluster(nodes=2, components=[])
    assert c.kubectl("taint nodes node-1 dedicated=gpu:NoSchedule") == "node/node-1 tainted"
    assert taints(c) == [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    again = c.kubectl("taint nodes node-1 dedicated=cpu:NoSchedule")
    assert (again, again.exit_code) == (
        "error: node node-1 already has dedicated taint(s) with same effect(s) and --overwrite is false", 1)
    assert c.kubectl("taint nodes node-1 dedicated=cpu:NoSchedule --overwrite") == "node/node-1 modified"
    assert c.kubectl("taint nodes node-1 spot:PreferNoSchedule") == "node/node-1 tainted"
    assert [t["key"] for t in taints(c)] == ["spot", "dedicated"]  # new taints go first
    assert c.kubectl("taint nodes node-1 dedicated:NoSchedule-") == "node/node-1 untainted"
    assert c.kubectl("taint nodes node-1 spot-") == "node/node-1 untainted"  # by key: any effect
    assert taints(c) == []
    assert c.kubectl("taint nodes node-1 node-2 a=b:NoExecute") == "node/node-1 tainted\nnode/node-2 tainted"


@pytest.mark.parametrize("command, message", [
    ("taint nodes node-1 a:NoSchedule-", 'error: taint "a:NoSchedule" not found'),
    ("taint nodes node-1 a=b:Sometimes",
     "error: invalid taint effect: Sometimes, unsupported taint effect\n"
     "See 'kubectl taint -h' for help and examples"),
    ("taint nodes node-1 a=b=c:NoSchedule", "error: invalid taint spec: a=b=c:NoSchedule\nSee"),
    ("taint nodes node-1 a:b:NoSchedule", "error: invalid taint spec: a:b:NoSchedule\nSee"),
    ("taint nodes node-1 a=b", "error: invalid taint spec: a=b, name part must consist of"),
    ("taint nodes node-1 a=b:NoSchedule a=c:NoSchedule",
     "error: duplicated taints with the same key and effect: a=c:NoSchedule"),
    ("taint nodes node-1 a=b:NoSchedule a-",
     'error: can not both modify and remove the following taint(s) in the same command: {"a":""}'),
    ("taint pods web a=b:NoSchedule", "error: invalid resource type pods, only node types are supported"),
    ("taint nodes a=b:NoSchedule",
     "error: at least one resource name must be specified since 'all' parameter is not set"),
    ("taint nodes node-1", "error: at least one taint update is required"),
    ("taint a=b:NoSchedule", "error: one or more resources must be specified as <resource> <name>"),
    ("taint nodes a=b:NoSchedule node-1",
     "error: all resources must be specified before taint changes: node-1"),
    ("taint nodes node-9 a=b:NoSchedule", 'Error from server (NotFound): nodes "node-9" not found'),
])
def test_errors_are_kubectls_and_change_nothing(command: str, message: str) -> None:
    c = Cluster(nodes=1, components=[])
    out = c.kubectl(command)
    assert out.startswith(message) and out.exit_code == 1
    assert taints(c) == []
