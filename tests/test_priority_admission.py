"""The Priority admission plugin (plugin/pkg/admission/priority/admission.go): a pod's
priorityClassName resolved to its priority and preemptionPolicy, the globalDefault class,
upstream's refusals; and one globalDefault PriorityClass at most."""

from __future__ import annotations

from typing import Any

import pytest

from kubelab import Cluster
from kubelab.api.errors import ApiError


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "app", "image": "nginx"}], **spec}}


def priority_class(name: str, value: int, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, **fields}


@pytest.fixture
def c() -> Cluster:
    return Cluster(nodes=1, components=[])


def spec_of(c: Cluster, name: str) -> tuple[Any, ...]:
    spec = c.client.get("pods", name)["spec"]
    return spec.get("priorityClassName"), spec.get("priority"), spec.get("preemptionPolicy")


def test_a_class_gives_its_value_and_preemption_policy(c: Cluster) -> None:
    c.client.create(priority_class("gold", 1000, preemptionPolicy="Never"))
    c.client.create(pod("p", priorityClassName="gold"))
    assert spec_of(c, "p") == ("gold", 1000, "Never")
    c.client.create(pod("critical", priorityClassName="system-node-critical"))
    assert spec_of(c, "critical") == ("system-node-critical", 2000001000, "PreemptLowerPriority")


def test_a_missing_class_or_a_wrong_priority_is_forbidden(c: Cluster) -> None:
    with pytest.raises(ApiError) as err:
        c.client.create(pod("p", priorityClassName="gold"))
    assert (err.value.code, err.value.message) == (
        403, 'pods "p" is forbidden: no PriorityClass with name gold was found')
    c.client.create(priority_class("gold", 1000))
    with pytest.raises(ApiError, match=r"the integer value of priority \(7\) must not be provided "
                       r"in pod spec; priority admission controller computed 1000 from the given "
                       r"PriorityClass name"):
        c.client.create(pod("q", priorityClassName="gold", priority=7))
    assert c.kubectl("get pods") == "No resources found in default namespace."


def test_the_global_default_class_applies_to_pods_without_one(c: Cluster) -> None:
    c.client.create(pod("before"))
    assert spec_of(c, "before") == (None, 0, "PreemptLowerPriority")
    c.client.create(priority_class("low", -5, globalDefault=True))
    c.client.create(pod("after"))
    assert spec_of(c, "after") == ("low", -5, "PreemptLowerPriority")
    with pytest.raises(ApiError, match=r"PriorityClass low is already marked as default\. Only one "
                       r"default can exist"):
        c.client.create(priority_class("other", 1, globalDefault=True))
    lines = c.kubectl("get priorityclasses").splitlines()
    assert lines[1].split() == ["low", "-5", "true", "0s", "PreemptLowerPriority"]


def test_an_update_keeps_the_admitted_priority(c: Cluster) -> None:
    c.client.create(priority_class("gold", 1000))
    c.client.create(pod("p", priorityClassName="gold"))
    live = c.client.get("pods", "p")
    live["metadata"]["labels"] = {"a": "b"}
    c.client.update(live)
    assert spec_of(c, "p")[1] == 1000
