"""The garbage collector and the three propagation policies (pkg/controller/garbagecollector/)."""

from __future__ import annotations

from typing import Any

from kubelab.api.errors import ApiError
from kubelab.cluster import Cluster
from tests.controllers_helpers import active_pods, cluster, deployment, replica_sets

DELETED_WEB = 'deployment.apps "web" deleted from default namespace'  # kubectl 1.34 names the namespace


def configmap(name: str, owners: list[dict[str, Any]] | None = None,
              finalizers: list[str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if owners:
        meta["ownerReferences"] = owners
    if finalizers:
        meta["finalizers"] = finalizers
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {}}


def ref(obj: dict[str, Any], block: bool = False) -> dict[str, Any]:
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": obj["metadata"]["name"],
            "uid": obj["metadata"]["uid"], "blockOwnerDeletion": block}


def web(c: Cluster) -> None:
    """A Deployment of 2 whose pods stay unscheduled: deleting them is immediate."""
    c.apply(deployment(replicas=2))
    c.run(2)
    assert len(replica_sets(c)) == 1 and len(active_pods(c)) == 2


def test_background_deletes_the_owner_at_once_and_the_dependents_after() -> None:
    c = cluster()
    web(c)
    assert c.kubectl("delete deployment web") == DELETED_WEB
    assert not c.exists("deployments", "web")  # gone before any dependent
    assert len(replica_sets(c)) == 1
    c.run(2)
    assert replica_sets(c) == [] and c.get("pods") == []


def test_foreground_keeps_the_owner_until_its_blocking_dependents_are_gone() -> None:
    c = cluster()
    web(c)
    rs_name = replica_sets(c)[0]["metadata"]["name"]
    deleted: list[str] = []
    rs_finalizers: list[list[str]] = []

    def on_record(r: Any) -> None:
        if r.verb != "watch-event" or r.detail.get("to") != "system:kube-controller-manager":
            return
        if r.detail.get("type") == "DELETED":
            deleted.append(r.object.split("/")[0])
        elif r.object == f"replicasets/default/{rs_name}" and c.exists("replicasets", rs_name):
            rs_finalizers.append(c.get("replicasets", rs_name)["metadata"].get("finalizers") or [])
    c.trace.subscribe(on_record)
    assert c.kubectl("delete deployment web --cascade=foreground") == DELETED_WEB
    d = c.get("deployments", "web")
    assert d["metadata"]["deletionTimestamp"] and d["metadata"]["finalizers"] == ["foregroundDeletion"]
    c.run(3)
    assert not c.exists("deployments", "web")
    # Pods first, then the ReplicaSet (which has dependents of its own, so the collector deleted
    # it in the foreground too), then the Deployment.
    assert deleted == ["pods", "pods", "replicasets", "deployments"]
    assert ["foregroundDeletion"] in rs_finalizers


def test_orphan_removes_owner_references_and_keeps_the_dependents() -> None:
    c = cluster()
    web(c)
    rs_name = replica_sets(c)[0]["metadata"]["name"]
    assert c.kubectl("delete deployment web --cascade=orphan") == DELETED_WEB
    c.run(2)
    assert not c.exists("deployments", "web")
    rs = c.get("replicasets", rs_name)
    assert not rs["metadata"].get("ownerReferences")
    assert len(active_pods(c)) == 2  # the pods still belong to the surviving ReplicaSet


def test_dangling_owner_reference_gets_the_dependent_deleted() -> None:
    c = cluster()
    c.client.create(configmap("orphaned", [{"apiVersion": "v1", "kind": "ConfigMap", "name": "ghost",
                                            "uid": "00000000-0000-4000-8000-000000000000"}]))
    owner = c.client.create(configmap("owner"))
    c.client.create(configmap("kept", [ref(owner)]))
    # Same name as an existing owner, but another uid: that owner is gone too.
    impostor = {**ref(owner), "uid": "11111111-1111-4111-8111-111111111111"}
    c.client.create(configmap("impostor-child", [impostor]))
    c.run(2)
    assert not c.exists("configmaps", "orphaned")
    assert not c.exists("configmaps", "impostor-child")
    assert c.exists("configmaps", "kept")


def test_a_dependent_with_a_live_owner_loses_only_its_dangling_reference() -> None:
    c = cluster()
    owner = c.client.create(configmap("owner"))
    ghost = {"apiVersion": "v1", "kind": "ConfigMap", "name": "ghost",
             "uid": "22222222-2222-4222-8222-222222222222"}
    c.client.create(configmap("child", [ref(owner), ghost]))
    c.run(2)
    child = c.get("configmaps", "child")
    assert [r["name"] for r in child["metadata"]["ownerReferences"]] == ["owner"]


def test_non_blocking_dependents_do_not_hold_a_foreground_deletion() -> None:
    c = cluster()
    owner = c.client.create(configmap("owner"))
    c.client.create(configmap("held", [ref(owner, block=False)], finalizers=["example.com/hold"]))
    c.client.delete("configmaps", "owner", propagation_policy="Foreground")
    c.run(2)
    assert not c.exists("configmaps", "owner")  # nothing blocked it
    held = c.get("configmaps", "held")
    assert held["metadata"]["deletionTimestamp"]  # deleted after its owner, kept by its finalizer
    c.client.patch("configmaps", "held", {"metadata": {"finalizers": None}})
    assert not c.exists("configmaps", "held")


def test_the_collector_finishes_an_orphaning_after_a_crash() -> None:
    c = cluster()
    owner = c.client.create(configmap("owner"))
    c.client.create(configmap("child", [ref(owner, block=True)]))
    c.run(1)
    c.faults.crash("controller-manager")
    c.client.delete("configmaps", "owner", propagation_policy="Orphan")
    c.run(2)
    assert c.get("configmaps", "owner")["metadata"]["finalizers"] == ["orphan"]  # nobody to act
    c.faults.restart("controller-manager")
    c.run(2)
    assert not c.exists("configmaps", "owner")
    assert not c.get("configmaps", "child")["metadata"].get("ownerReferences")


def test_deleting_a_replica_set_deletes_its_pods_and_the_deployment_makes_a_new_one() -> None:
    c = cluster()
    web(c)
    old = replica_sets(c)[0]
    c.client.delete("replicasets", old["metadata"]["name"])
    c.run(3)
    rss = replica_sets(c)
    assert len(rss) == 1 and rss[0]["metadata"]["uid"] != old["metadata"]["uid"]
    owners = {p["metadata"]["ownerReferences"][0]["uid"] for p in active_pods(c)}
    assert owners == {rss[0]["metadata"]["uid"]}
    try:
        c.client.get("replicasets", old["metadata"]["name"])
    except ApiError as err:  # same name (same template hash), new object
        assert err.code == 404
