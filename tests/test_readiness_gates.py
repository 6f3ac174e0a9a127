"""Pod readiness gates: the kubelet holds Ready back until each gate's condition, which someone
else sets, is True (pkg/kubelet/status/generate.go GeneratePodReadyCondition, kubelet.go
HandlePodReconcile with NeedToReconcilePodReadiness, status_manager.go mergePodStatus), and
`kubectl get pods -o wide` counts them in READINESS GATES (printers.go printPod)."""

from __future__ import annotations

from typing import Any

from kubelab import Cluster

GATE = "example.com/feature-1"
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
       "spec": {"readinessGates": [{"conditionType": GATE}],
                "containers": [{"name": "nginx", "image": "nginx:1.27"}]}}


def conditions(c: Cluster) -> dict[str, dict[str, Any]]:
    return {x["type"]: x for x in c.client.get("pods", "web", "default")["status"]["conditions"]}


def wide(c: Cluster) -> list[str]:
    header, row = c.kubectl("get pods -o wide").splitlines()
    assert header.split()[-2:] == ["READINESS", "GATES"]
    return row.split()


def test_ready_waits_for_the_gate_and_the_wide_column_counts_it() -> None:
    c = Cluster(nodes=1, seed=1)
    c.apply(POD)
    c.run(20)
    ready = conditions(c)["Ready"]
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "False", "ReadinessGatesNotReady",
        f'corresponding condition of pod readiness gate "{GATE}" does not exist.')
    assert conditions(c)["ContainersReady"]["status"] == "True"
    row = wide(c)
    assert (row[1], row[2], row[-1]) == ("1/1", "Running", "0/1")  # READY counts containers
    described = c.kubectl("describe pod web")
    assert "Readiness Gates:\n  Type                    Status\n  example.com/feature-1   <none> \n" \
        in described, described

    c.client.patch("pods", "web", {"status": {"conditions": [{"type": GATE, "status": "False"}]}},
                   "default", patch_type="strategic", subresource="status")
    c.run(1)
    assert conditions(c)["Ready"]["message"] == \
        f'the status of pod readiness gate "{GATE}" is not "True", but False'

    c.client.patch("pods", "web", {"status": {"conditions": [{"type": GATE, "status": "True"}]}},
                   "default", patch_type="strategic", subresource="status")
    c.run(1)
    assert conditions(c)["Ready"]["status"] == "True" and wide(c)[-1] == "1/1"
    c.run(25)  # the status manager's syncs keep the condition it does not own
    assert conditions(c)[GATE]["status"] == "True" and conditions(c)["Ready"]["status"] == "True"


def test_a_pod_without_gates_shows_none() -> None:
    c = Cluster(nodes=1, seed=1)
    c.apply({**POD, "spec": {"containers": POD["spec"]["containers"]}})
    c.run(10)
    assert wide(c)[-1] == "<none>"
