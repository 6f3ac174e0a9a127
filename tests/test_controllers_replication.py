"""ReplicationControllers and the replication manager (kubelab/controllers/replication/): the
ReplicaSet controller's code run for core/v1's older kind, as pkg/controller/replication does;
SetDefaults_ReplicationController and ValidateReplicationController's messages."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError

RC: dict[str, Any] = {
    "apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "nginx"},
    "spec": {"replicas": 3, "template": {"metadata": {"labels": {"app": "nginx"}}, "spec": {
        "containers": [{"name": "nginx", "image": "nginx:1.27"}]}}}}


def _pods(c: Cluster) -> list[dict[str, Any]]:
    return [p for p in c.get("pods", label_selector="app=nginx")
            if not p["metadata"].get("deletionTimestamp")]


def test_defaults_take_the_selector_and_labels_from_the_template() -> None:
    c = Cluster(nodes=1, components=[])
    body = {**RC, "spec": {k: v for k, v in RC["spec"].items() if k != "replicas"}}
    rc = c.client.create(body)
    assert rc["spec"]["selector"] == {"app": "nginx"} and rc["metadata"]["labels"] == {"app": "nginx"}
    assert rc["spec"]["replicas"] == 1 and rc["status"] == {"replicas": 0}
    own = c.client.create({**RC, "metadata": {"name": "own", "labels": {"team": "a"}},
                           "spec": {**RC["spec"], "selector": {"app": "nginx"}}})
    assert own["metadata"]["labels"] == {"team": "a"}  # only empty labels are defaulted


@pytest.mark.parametrize(("spec", "message"), [
    ({"replicas": 1}, "spec.selector: Required value"),
    ({"replicas": -1, "selector": {"app": "nginx"}},
     "spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
    ({"selector": {"app": "other"}}, "spec.template.metadata.labels: Invalid value:"),
    ({"template": {**RC["spec"]["template"], "spec": {**RC["spec"]["template"]["spec"],
                                                      "restartPolicy": "Never"}}},
     'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'),
    ({"template": {**RC["spec"]["template"], "spec": {**RC["spec"]["template"]["spec"],
                                                      "activeDeadlineSeconds": 5}}},
     "activeDeadlineSeconds in ReplicationController is not Supported"),
])
def test_validation_in_upstreams_words(spec: dict[str, Any], message: str) -> None:
    c = Cluster(nodes=1, components=[])
    body = {**RC, "spec": {**RC["spec"], **spec}}
    if "template" in spec and "selector" not in spec:
        body["spec"]["selector"] = {"app": "nginx"}
    if spec == {"replicas": 1}:
        body["spec"] = {"replicas": 1}  # no template: nothing to take the selector from
    with pytest.raises(ApiError) as err:
        c.client.create(body)
    assert err.value.code == 422 and message in err.value.message, err.value.message


def test_the_manager_keeps_the_replicas_running_as_the_replicaset_controller_does() -> None:
    c = Cluster(nodes=2)
    c.apply(RC)
    c.run_until(lambda: (c.get("replicationcontrollers", "nginx").get("status") or {})
                .get("readyReplicas") == 3, timeout=60)
    rc = c.get("replicationcontrollers", "nginx")
    assert rc["status"] == {"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 3,
                            "availableReplicas": 3, "observedGeneration": 1}
    pods = _pods(c)
    assert all(p["metadata"]["name"].startswith("nginx-") and
               p["metadata"]["ownerReferences"][0]["kind"] == "ReplicationController" and
               p["metadata"]["ownerReferences"][0]["uid"] == rc["metadata"]["uid"] for p in pods)
    events = [e for e in c.get("events") if e["involvedObject"]["kind"] == "ReplicationController"]
    assert sorted(e["message"] for e in events) == sorted(f"Created pod: {p['metadata']['name']}"
                                                          for p in pods)
    assert {e["source"]["component"] for e in events} == {"replication-controller"}
    table = c.kubectl("get rc -o wide").splitlines()
    assert table[0].split() == ["NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES",
                                "SELECTOR"]
    row = table[1].split()
    assert row[:4] == ["nginx", "3", "3", "3"] and row[5:] == ["nginx", "nginx:1.27", "app=nginx"]
    described = c.kubectl("describe rc nginx").splitlines()
    assert described[:3] == ["Name:         nginx", "Namespace:    default", "Selector:     app=nginx"]
    assert "Replicas:     3 current / 3 desired" in described
    # A deleted pod is replaced; a scale down deletes; the owner's deletion takes the pods.
    victim = pods[0]["metadata"]["name"]
    c.kubectl(f"delete pod {victim}")
    c.run_until(lambda: len(_pods(c)) == 3 and victim not in {p["metadata"]["name"] for p in _pods(c)},
                timeout=60)
    assert c.kubectl("scale rc nginx --replicas=1") == "replicationcontroller/nginx scaled"
    c.run_until(lambda: len(_pods(c)) == 1 and
                c.get("replicationcontrollers", "nginx")["status"].get("replicas") == 1, timeout=60)
    c.kubectl("delete rc nginx")
    c.run_until(lambda: not _pods(c), timeout=60)  # the garbage collector follows the owner
