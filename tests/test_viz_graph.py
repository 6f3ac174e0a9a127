"""The object-hierarchy graph built from live objects."""

from __future__ import annotations

import networkx as nx

from kubelab.viz import mark_pods_ready, node_id, object_graph
from tests.controllers_helpers import cluster, deployment, replica_sets, settle


def test_graph_follows_owner_references_and_node_names() -> None:
    c = cluster(nodes=2)
    c.apply(deployment(replicas=3))
    settle(c)
    g = object_graph(c)
    rs = replica_sets(c)[0]["metadata"]["name"]
    d_id, rs_id = node_id("Deployment", "web", "default"), node_id("ReplicaSet", rs, "default")
    pods = [n for n, a in g.nodes(data=True) if a["kind"] == "Pod"]
    assert len(pods) == 3
    assert list(g.successors(d_id)) == [rs_id]
    assert sorted(g.successors(rs_id)) == sorted(pods)
    assert {g.edges[d_id, rs_id]["kind"], g.edges[d_id, rs_id]["controller"]} == {"owns", True}
    for p in pods:
        (node,) = list(g.successors(p))
        assert g.nodes[node]["kind"] == "Node" and g.edges[p, node]["kind"] == "runs-on"
        assert (g.nodes[p]["phase"], g.nodes[p]["ready"], g.nodes[p]["deleting"]) == ("Running", True, False)
    assert g.nodes[rs_id]["revision"] == "1" and g.nodes[rs_id]["replicas"] == 3
    assert nx.descendants(g, d_id) >= {rs_id, *pods}
    assert {node_id("Node", "node-1"), node_id("Node", "node-2")} <= set(g)


def test_graph_shows_deletion_and_readiness_as_they_are() -> None:
    c = cluster(nodes=1)
    c.apply(deployment(replicas=2))
    c.run(2)
    g = object_graph(c, namespace="default")
    assert all(not a["ready"] and a["phase"] == "Pending" and not a.get("node")
               for _, a in g.nodes(data=True) if a["kind"] == "Pod")
    mark_pods_ready(c)
    c.run(1)
    c.client.delete("deployments", "web", propagation_policy="Orphan")
    # Before the collector acts: the Deployment waits with the orphan finalizer.
    g = object_graph(c)
    attrs = g.nodes[node_id("Deployment", "web", "default")]
    assert attrs["deleting"] and attrs["finalizers"] == ["orphan"]


def test_a_dangling_owner_is_drawn_as_missing() -> None:
    c = cluster(nodes=1)
    c.client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "lost", "namespace": "default", "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "gone",
             "uid": "33333333-3333-4333-8333-333333333333", "controller": True}]},
        "spec": {"containers": [{"name": "a", "image": "nginx"}]}})
    g = object_graph(c)
    owner = node_id("ReplicaSet", "gone", "default")
    assert g.nodes[owner]["missing"] and g.has_edge(owner, node_id("Pod", "lost", "default"))


def test_a_kind_left_out_by_the_filter_is_not_drawn_as_missing() -> None:
    c = cluster(nodes=1)
    c.apply(deployment(replicas=2))
    settle(c)
    g = object_graph(c, kinds=("replicasets", "pods"))
    assert {a["kind"] for _, a in g.nodes(data=True)} == {"ReplicaSet", "Pod"}
    assert not any(a.get("missing") for _, a in g.nodes(data=True))
    assert all(a["node"] == "node-1" for _, a in g.nodes(data=True) if a["kind"] == "Pod")
