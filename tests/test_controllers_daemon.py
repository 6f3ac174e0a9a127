"""The DaemonSet controller (kubelab/controllers/daemon/), with upstream's test tables where
they transcribe: pkg/controller/daemon/daemon_controller_test.go (TestNodeShouldRunDaemonPod,
the taint tests), util/daemonset_util_test.go (TestReplaceDaemonSetPodNodeNameNodeAffinity,
TestGetTargetNodeName), update_test.go (the rolling update's bounds), and a running cluster."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError
from kubelab.controllers.daemon.util import (
    add_or_update_daemon_pod_tolerations,
    get_target_node_name,
    node_should_run_daemon_pod,
    replace_daemon_set_pod_node_name_node_affinity,
)

SIMPLE = {"name": "simple-daemon", "type": "production"}   # simpleDaemonSetLabel
SIMPLE2 = {"name": "simple-daemon", "type": "test"}        # simpleDaemonSetLabel2


def _ds(spec: dict[str, Any] | None = None, name: str = "ds") -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": name, "namespace": "default", "uid": "uid-ds"},
            "spec": {"selector": {"matchLabels": SIMPLE},
                     "template": {"metadata": {"labels": SIMPLE},
                                  "spec": {"containers": [{"name": "c", "image": "foo/bar"}],
                                           **(spec or {})}}}}


def _node(taints: list[dict[str, str]] | None = None, unschedulable: bool = False
          ) -> dict[str, Any]:
    return {"metadata": {"name": "test-node", "labels": dict(SIMPLE)},
            "spec": {**({"taints": taints} if taints else {}),
                     **({"unschedulable": True} if unschedulable else {})}}


def _affinity(values: list[str]) -> dict[str, Any]:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "type", "operator": "In", "values": values}]}]}}}


# TestNodeShouldRunDaemonPod: (predicateName, template spec, node, shouldRun, shouldContinueRunning).
# Resources and host ports are the default scheduler's business since 1.12: they never stop a
# daemon pod here, so those rows expect (True, True).
SHOULD_RUN = [
    ("ShouldRunDaemonPod", {}, _node(), True, True),
    ("InsufficientResourceError", {"containers": [{"name": "c", "image": "foo/bar", "resources": {
        "requests": {"memory": "200M", "cpu": "0.5"}}}]}, _node(), True, True),
    ("ErrPodNotMatchHostName", {"nodeName": "other-node"}, _node(), False, False),
    ("ErrNodeSelectorNotMatch", {"nodeSelector": SIMPLE2}, _node(), False, False),
    ("ShouldRunDaemonPod", {"nodeSelector": SIMPLE}, _node(), True, True),
    ("ErrPodAffinityNotMatch", {"affinity": _affinity(["test"])}, _node(), False, False),
    ("ShouldRunDaemonPod", {"affinity": _affinity(["production"])}, _node(), True, True),
    ("ShouldRunDaemonPodOnUnschedulableNode", {}, _node(unschedulable=True), True, True),
    # TestTaintedNodeDaemonDoesNotLaunchIntolerantPod / TestTaintedNodeDaemonLaunchesToleratePod /
    # TestNodeDaemonLaunchesToleratePod: a NoSchedule taint it does not tolerate stops new pods,
    # not running ones; a NoExecute one stops both; a tolerated one stops nothing.
    ("NoScheduleTaint", {}, _node([{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]),
     False, True),
    ("NoExecuteTaint", {}, _node([{"key": "dedicated", "value": "x", "effect": "NoExecute"}]),
     False, False),
    ("ToleratedTaint", {"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "x",
                                         "effect": "NoSchedule"}]},
     _node([{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]), True, True),
    # TestTaintPressureNodeDaemonLaunchesPod, TestTaintOutOfDiskNodeDaemonLaunchesCriticalPod:
    # the tolerations the controller adds cover a node's problems.
    ("PressureTaints", {}, _node([{"key": f"node.kubernetes.io/{k}", "effect": "NoSchedule"}
                                  for k in ("disk-pressure", "memory-pressure", "pid-pressure",
                                            "unschedulable")]), True, True),
    ("NotReadyNoExecute", {}, _node([{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"},
                                     {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}]),
     True, True),
    ("NetworkUnavailable", {}, _node([{"key": "node.kubernetes.io/network-unavailable",
                                       "effect": "NoSchedule"}]), False, True),
    ("NetworkUnavailableHostNetwork", {"hostNetwork": True},
     _node([{"key": "node.kubernetes.io/network-unavailable", "effect": "NoSchedule"}]), True, True),
]


@pytest.mark.parametrize(("name", "spec", "node", "should_run", "should_continue"), SHOULD_RUN,
                         ids=[f"{i}-{row[0]}" for i, row in enumerate(SHOULD_RUN)])
@pytest.mark.parametrize("strategy", [{"type": "OnDelete"},
                                      {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}])
def test_node_should_run_daemon_pod(name: str, spec: dict[str, Any], node: dict[str, Any],
                                    should_run: bool, should_continue: bool,
                                    strategy: dict[str, Any]) -> None:
    ds = _ds(spec)
    ds["spec"]["updateStrategy"] = strategy
    assert node_should_run_daemon_pod(node, ds) == (should_run, should_continue)


def test_daemon_tolerations_are_added_or_replaced() -> None:
    spec: dict[str, Any] = {"hostNetwork": True, "tolerations": [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300}]}
    add_or_update_daemon_pod_tolerations(spec)
    assert spec["tolerations"] == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
        *({"key": f"node.kubernetes.io/{k}", "operator": "Exists", "effect": e} for k, e in (
            ("unreachable", "NoExecute"), ("disk-pressure", "NoSchedule"),
            ("memory-pressure", "NoSchedule"), ("pid-pressure", "NoSchedule"),
            ("unschedulable", "NoSchedule"), ("network-unavailable", "NoSchedule")))]


PIN = {"nodeSelectorTerms": [{"matchFields": [
    {"key": "metadata.name", "operator": "In", "values": ["host_1"]}]}]}

# TestReplaceDaemonSetPodNodeNameNodeAffinity: (affinity before, after) for node host_1.
REPLACE = [
    (None, {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": PIN}}),
    ({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "hostname", "operator": "In", "values": ["host_2"]}]}]}}},
     {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": PIN}}),
    ({"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "preference": {"matchExpressions": [
            {"key": "hostname", "operator": "In", "values": ["host_2"]}]}}]}},
     {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
         {"weight": 100, "preference": {"matchExpressions": [
             {"key": "hostname", "operator": "In", "values": ["host_2"]}]}}],
         "requiredDuringSchedulingIgnoredDuringExecution": PIN}}),
    ({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In",
                          "values": ["host_1", "host_2"]}]}]}}},
     {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": PIN}}),
    ({"podAffinity": {"x": 1}},
     {"podAffinity": {"x": 1}, "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": PIN}}),
]


@pytest.mark.parametrize(("before", "after"), REPLACE)
def test_replace_daemon_set_pod_node_name_node_affinity(before: Any, after: Any) -> None:
    assert replace_daemon_set_pod_node_name_node_affinity(before, "host_1") == after


# TestGetTargetNodeName: spec.nodeName wins; else the single metadata.name In term; else none.
TARGETS = [
    ({"nodeName": "node-1"}, "node-1"),
    ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                "values": ["node-1"]}]}]}}}}, "node-1"),
    ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                "values": ["node-1", "node-2"]}]}]}}}}, None),
    ({}, None),
]


@pytest.mark.parametrize(("spec", "node"), TARGETS)
def test_get_target_node_name(spec: dict[str, Any], node: str | None) -> None:
    assert get_target_node_name({"metadata": {"name": "pod1"}, "spec": spec}) == node


# ------------------------------------------------------------------ in a cluster

AGENT = {"apiVersion": "apps/v1", "kind": "DaemonSet",
         "metadata": {"name": "agent", "namespace": "default"},
         "spec": {"selector": {"matchLabels": {"app": "agent"}},
                  "template": {"metadata": {"labels": {"app": "agent"}},
                               # busybox's own sh would exit at once: the agent sleeps
                               "spec": {"containers": [{"name": "a", "image": "busybox:1.36",
                                                        "command": ["sleep", "infinity"]}]}}}}


def _status(c: Cluster) -> dict[str, Any]:
    return c.get("daemonsets", "agent").get("status") or {}


def _pods(c: Cluster) -> list[dict[str, Any]]:
    return [p for p in c.get("pods", label_selector="app=agent")
            if not p["metadata"].get("deletionTimestamp")]


def _rolled_out(c: Cluster, n: int) -> bool:
    st = _status(c)
    return st.get("updatedNumberScheduled") == n and st.get("numberAvailable") == n and \
        st.get("observedGeneration") == c.get("daemonsets", "agent")["metadata"]["generation"] and \
        len(_pods(c)) == n


def test_one_pod_per_node_pinned_by_affinity_and_counted_in_status() -> None:
    c = Cluster(nodes=3)
    c.apply(AGENT)
    c.run_until(lambda: _status(c).get("numberReady") == 3, timeout=60)
    pods = _pods(c)
    assert sorted(p["spec"]["nodeName"] for p in pods) == ["node-1", "node-2", "node-3"]
    for pod in pods:  # the controller names the node; the default scheduler bound it there
        assert get_target_node_name({"spec": {"affinity": pod["spec"]["affinity"]}}) == \
            pod["spec"]["nodeName"]
        assert pod["metadata"]["labels"]["pod-template-generation"] == "1"
        assert pod["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet"
    st = _status(c)
    assert {k: st.get(k) for k in ("desiredNumberScheduled", "currentNumberScheduled",
                                   "numberReady", "updatedNumberScheduled", "numberAvailable",
                                   "numberMisscheduled", "observedGeneration")} == {
        "desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 3,
        "updatedNumberScheduled": 3, "numberAvailable": 3, "numberMisscheduled": 0,
        "observedGeneration": 1}
    revisions = c.get("controllerrevisions")
    assert [r["revision"] for r in revisions] == [1]
    assert {p["metadata"]["labels"]["controller-revision-hash"] for p in pods} == \
        {revisions[0]["metadata"]["labels"]["controller-revision-hash"]}
    table = c.kubectl("get ds agent").splitlines()
    assert table[0].split() == ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE",
                                "NODE", "SELECTOR", "AGE"]
    assert table[1].split()[:7] == ["agent", "3", "3", "3", "3", "3", "<none>"]
    assert c.kubectl("rollout status ds/agent") == 'daemon set "agent" successfully rolled out'
    described = c.kubectl("describe ds agent").splitlines()  # describeDaemonSet's lines
    assert described[:3] == ["Name:           agent", "Selector:       app=agent",
                             "Node-Selector:  <none>"]
    assert "Desired Number of Nodes Scheduled: 3" in described
    assert "Number of Nodes Misscheduled: 0" in described
    assert "Pods Status:  3 Running / 0 Waiting / 0 Succeeded / 0 Failed" in described


def test_a_deleted_pod_comes_back_a_new_node_gets_one_and_a_label_change_moves_them() -> None:
    c = Cluster(nodes=2)
    c.apply({**AGENT, "spec": {**AGENT["spec"], "template": {
        **AGENT["spec"]["template"], "spec": {**AGENT["spec"]["template"]["spec"],
                                              "nodeSelector": {"agent": "yes"}}}}})
    c.run(5)
    assert _pods(c) == [] and _status(c)["desiredNumberScheduled"] == 0
    c.kubectl("label node node-1 agent=yes")
    c.run_until(lambda: _status(c).get("numberReady") == 1, timeout=60)
    victim = _pods(c)[0]["metadata"]["name"]
    c.kubectl(f"delete pod {victim}")
    c.run_until(lambda: [p["metadata"]["name"] for p in _pods(c)] not in ([], [victim]) and
                _status(c).get("numberReady") == 1, timeout=60)
    # A node that joins (here created by hand and Ready, with no kubelet) gets its pod at once.
    node = c.client.create({"apiVersion": "v1", "kind": "Node",
                            "metadata": {"name": "node-9", "labels": {"agent": "yes"}}})
    node["status"] = {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
                      "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
    c.client.update_status(node)
    c.run_until(lambda: sorted(str(p["spec"].get("nodeName")) for p in _pods(c)) ==
                ["node-1", "node-9"], timeout=60)
    c.kubectl("label node node-1 agent-")  # no longer wanted there: deleted
    c.run_until(lambda: [p["spec"].get("nodeName") for p in _pods(c)] == ["node-9"], timeout=60)


@pytest.mark.parametrize(("rolling", "most_down", "most_up"), [
    ({"maxUnavailable": 1}, 1, 4),    # delete one old pod at a time, never surge
    ({"maxUnavailable": 2}, 2, 4),
    ({"maxUnavailable": 0, "maxSurge": 1}, 0, 5),  # a new pod beside an old one, on one node
])
def test_rolling_update_keeps_its_bounds(rolling: dict[str, int], most_down: int,
                                         most_up: int) -> None:
    c = Cluster(nodes=4)
    c.apply({**AGENT, "spec": {**AGENT["spec"], "updateStrategy": {
        "type": "RollingUpdate", "rollingUpdate": rolling}}})
    c.run_until(lambda: _rolled_out(c, 4), timeout=60)
    old_hash = _pods(c)[0]["metadata"]["labels"]["controller-revision-hash"]
    c.client.patch("daemonsets", "agent", {"spec": {"template": {"spec": {"containers": [
        {"name": "a", "image": "busybox:1.37"}]}}}}, "default", patch_type="strategic")
    seen_down, seen_up = 0, 0

    def watch() -> bool:
        nonlocal seen_down, seen_up
        pods = _pods(c)
        ready = [p for p in pods if any(cond.get("type") == "Ready" and cond.get("status") == "True"
                                        for cond in (p.get("status") or {}).get("conditions") or [])]
        seen_down = max(seen_down, 4 - len({p["spec"].get("nodeName") for p in ready}))
        seen_up = max(seen_up, len(pods))
        return _rolled_out(c, 4)
    c.run_until(watch, timeout=300)
    assert seen_down <= most_down and seen_up <= most_up
    pods = _pods(c)
    assert {p["spec"]["containers"][0]["image"] for p in pods} == {"busybox:1.37"}
    assert old_hash not in {p["metadata"]["labels"]["controller-revision-hash"] for p in pods}
    assert sorted(r["revision"] for r in c.get("controllerrevisions")) == [1, 2]
    assert c.get("daemonsets", "agent")["metadata"]["annotations"][
        "deprecated.daemonset.template.generation"] == "2"


@pytest.mark.parametrize(("change", "message"), [
    ({"updateStrategy": {"type": "Sometimes"}},
     'spec.updateStrategy.type: Unsupported value: "Sometimes": supported values: "OnDelete", '
     '"RollingUpdate"'),
    ({"updateStrategy": {"type": "RollingUpdate",
                         "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}},
     "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when "
     "`maxSurge` is 0"),
    ({"selector": {"matchLabels": {"app": "other"}}},
     "spec.template.metadata.labels: Invalid value:"),
])
def test_validation_in_upstreams_words(change: dict[str, Any], message: str) -> None:
    c = Cluster(nodes=1, components=[])
    with pytest.raises(ApiError) as err:
        c.client.create({**AGENT, "spec": {**AGENT["spec"], **change}})
    assert err.value.code == 422 and message in err.value.message


def test_defaults_as_set_defaults_daemon_set() -> None:
    c = Cluster(nodes=1, components=[])
    ds = c.client.create(AGENT)
    assert ds["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {
        "maxUnavailable": 1, "maxSurge": 0}}
    assert ds["spec"]["revisionHistoryLimit"] == 10
    assert ds["status"] == {"currentNumberScheduled": 0, "numberMisscheduled": 0,
                            "desiredNumberScheduled": 0, "numberReady": 0}
