"""The namespace controller: deleting a namespace deletes everything in it, then the namespace."""

from __future__ import annotations

import pytest

from kubelab.api.errors import ApiError
from kubelab.viz import mark_pods_ready
from tests.controllers_helpers import cluster, deployment


def conditions(ns: dict[str, object]) -> dict[str, tuple[str, str, str]]:
    return {x["type"]: (x["status"], x["reason"], x["message"])  # type: ignore[index]
            for x in ns["status"].get("conditions") or ()}  # type: ignore[attr-defined]


def test_deleting_a_namespace_deletes_its_content_then_the_namespace() -> None:
    c = cluster()
    c.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    c.apply(deployment(namespace="team", replicas=2))
    c.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                     "metadata": {"name": "settings", "namespace": "team"}, "data": {}})
    c.run(2)
    mark_pods_ready(c, "team")  # bound pods: their deletion waits for a kubelet
    assert c.kubectl("delete namespace team") == 'namespace "team" deleted'
    ns = c.get("namespaces", "team", namespace=None)
    assert ns["status"]["phase"] == "Terminating" and ns["spec"]["finalizers"] == ["kubernetes"]
    c.run(1)
    ns = c.get("namespaces", "team", namespace=None)
    remaining = conditions(ns)["NamespaceContentRemaining"]
    assert remaining[:2] == ("True", "SomeResourcesRemain")
    assert "pods. has 2 resource instances" in remaining[2]
    assert c.get("configmaps", namespace="team") == [] and c.get("deployments", namespace="team") == []
    mark_pods_ready(c, "team")  # the kubelets finish the pods' graceful deletion
    c.run(30)
    assert not c.exists("namespaces", "team", "")
    assert c.get("pods", namespace="team") == []
    with pytest.raises(ApiError, match='namespaces "team" not found'):
        c.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": "late", "namespace": "team"}, "data": {}})


def test_content_with_finalizers_holds_the_namespace_and_says_so() -> None:
    c = cluster()
    c.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    c.client.create({"apiVersion": "v1", "kind": "ConfigMap", "data": {},
                     "metadata": {"name": "held", "namespace": "team", "finalizers": ["example.com/hold"]}})
    c.client.delete("namespaces", "team", "")
    c.run(12)
    ns = c.get("namespaces", "team", namespace=None)
    found = conditions(ns)
    assert found["NamespaceFinalizersRemaining"] == (
        "True", "SomeFinalizersRemain",
        "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances")
    assert found["NamespaceDeletionDiscoveryFailure"] == ("False", "ResourcesDiscovered",
                                                          "All resources successfully discovered")
    c.client.patch("configmaps", "held", {"metadata": {"finalizers": None}}, "team")
    c.run(12)  # requeued after the estimate: it notices the namespace is empty now
    assert not c.exists("namespaces", "team", "")
