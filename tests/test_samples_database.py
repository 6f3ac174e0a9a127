"""Notebook 08's Database operator (kubelab/samples/database.py): a Database gets a StatefulSet,
a headless Service and a backup CronJob, each controlled by it; drift is repaired, a quiet
reconcile sends nothing, and deleting the Database deletes all three through the garbage
collector."""

from __future__ import annotations

import pytest

from kubelab import Cluster
from kubelab.cluster.anatomy import STANDARD_STORAGE_CLASS
from kubelab.samples.database import DATABASE_CRD, database, database_operator
from kubelab.viz import object_graph

CHILDREN = (("statefulsets", "orders"), ("services", "orders"), ("cronjobs", "orders-backup"))


@pytest.fixture(scope="module")
def c() -> Cluster:
    cluster = Cluster(nodes=2, seed=8)
    assert cluster.get("storageclasses", "standard")["provisioner"] == \
        STANDARD_STORAGE_CLASS["provisioner"]  # kind's, with the anatomy
    cluster.apply(DATABASE_CRD)
    cluster.run(2)
    cluster.add_component("database-operator", database_operator)
    cluster.apply(database("orders", replicas=2, backupSchedule="30 1 * * *"))
    cluster.run(60)
    return cluster


def test_three_children_each_controlled_by_the_database(c: Cluster) -> None:
    db = c.get("databases", "orders")
    for resource, name in CHILDREN:
        refs = c.get(resource, name)["metadata"]["ownerReferences"]
        assert refs == [{"apiVersion": "db.kubelab.dev/v1", "kind": "Database", "name": "orders",
                         "uid": db["metadata"]["uid"], "controller": True,
                         "blockOwnerDeletion": True}]
    sts, svc, cj = (c.get(r, n) for r, n in CHILDREN)
    assert svc["spec"]["clusterIP"] == "None" and sts["spec"]["serviceName"] == "orders"
    assert cj["spec"]["schedule"] == "30 1 * * *" and cj["spec"]["concurrencyPolicy"] == "Forbid"
    # the StatefulSet made its ordered pods and their claims; the Database reports them ready
    pods = c.get("pods", label_selector="app.kubernetes.io/instance=orders")
    assert sorted(p["metadata"]["name"] for p in pods) == ["orders-0", "orders-1"]
    claims = {p["metadata"]["name"] for p in c.get("persistentvolumeclaims")}
    assert claims == {"data-orders-0", "data-orders-1"}
    assert db["status"]["readyReplicas"] == 2 and db["status"]["conditions"][0]["status"] == "True"
    g = object_graph(c, "default", kinds=("databases", "statefulsets", "services", "cronjobs", "pods"))
    assert {v for _u, v in g.out_edges("Database/default/orders")} == {
        "StatefulSet/default/orders", "Service/default/orders", "CronJob/default/orders-backup"}
    assert ("StatefulSet/default/orders", "Pod/default/orders-1") in g.edges


def test_a_quiet_reconcile_sends_nothing_and_drift_is_repaired(c: Cluster) -> None:
    op = c.components["database-operator"]
    op.enqueue("default/orders")
    c.run(1)
    assert op.records[-1].requests == []
    c.kubectl("scale statefulset orders --replicas=4")
    c.kubectl("delete cronjob orders-backup")
    c.run(5)
    assert c.get("statefulsets", "orders")["spec"]["replicas"] == 2
    assert c.get("cronjobs", "orders-backup")["spec"]["schedule"] == "30 1 * * *"
    c.apply(database("orders", replicas=2, backupSchedule="0 3 * * *"))
    c.run(5)
    assert c.get("cronjobs", "orders-backup")["spec"]["schedule"] == "0 3 * * *"


def test_deleting_the_database_deletes_what_it_owns(c: Cluster) -> None:
    c.kubectl("delete db orders")
    c.run(30)
    for resource, name in CHILDREN:
        assert not c.exists(resource, name)
    assert not c.get("pods", label_selector="app.kubernetes.io/instance=orders")
