"""The object hierarchy as a graph: Deployment -> ReplicaSet -> Pod -> Node.

Built from live objects (what the API server holds now), as a networkx.DiGraph that learners
can query like any other graph:

    g = object_graph(cluster)
    [n for n, a in g.nodes(data=True) if a["kind"] == "Pod" and not a["ready"]]
    nx.descendants(g, "Deployment/default/web")

Edges point from owner to dependent along metadata.ownerReferences (kind="owns"), and from a
pod to the node it is bound to along spec.nodeName (kind="runs-on"). Only the kinds asked for
are drawn: an owner (or node) of a kind left out is left out too; one of a kind that was listed
but is not there (a dangling reference) is drawn with missing=True.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import networkx as nx

from kubelab.api import Object
from kubelab.api.errors import ApiError

__all__ = ["DEFAULT_KINDS", "node_id", "object_graph"]

DEFAULT_KINDS = ("deployments", "replicasets", "pods", "nodes")
REVISION = "deployment.kubernetes.io/revision"


def node_id(kind: str, name: str, namespace: str = "") -> str:
    """The graph's name for an object: `Pod/default/web-7d4f8-x2k9q`, `Node/node-1`."""
    return f"{kind}/{namespace}/{name}" if namespace else f"{kind}/{name}"


def _pod_ready(pod: Object) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or ())


def _node_ready(node: Object) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or ())


def _attributes(obj: Object) -> dict[str, Any]:
    meta, status, spec = obj["metadata"], obj.get("status") or {}, obj.get("spec") or {}
    kind = obj.get("kind", "")
    attrs: dict[str, Any] = {"kind": kind, "name": meta.get("name", ""),
                             "namespace": meta.get("namespace", ""), "uid": meta.get("uid", ""),
                             "deleting": bool(meta.get("deletionTimestamp")),
                             "finalizers": list(meta.get("finalizers") or ()),
                             "revision": (meta.get("annotations") or {}).get(REVISION, "")}
    if kind == "Pod":
        attrs.update(phase=status.get("phase", "Pending"), ready=_pod_ready(obj),
                     node=spec.get("nodeName", ""))
    elif kind == "Node":
        attrs.update(phase="Ready" if _node_ready(obj) else "NotReady", ready=_node_ready(obj),
                     unschedulable=bool(spec.get("unschedulable")))
    elif "replicas" in spec or kind in ("ReplicaSet", "Deployment"):
        ready, want = int(status.get("readyReplicas", 0)), int(spec.get("replicas", 1))
        attrs.update(replicas=want, ready_replicas=ready,
                     available_replicas=int(status.get("availableReplicas", 0)),
                     ready=ready >= want, phase="")
    return attrs


def object_graph(source: Any, namespace: str | None = None,
                 kinds: Iterable[str] = DEFAULT_KINDS) -> nx.DiGraph:
    """The graph of live objects. source: a Cluster, or anything with a `client` or the
    client itself (list(resource, namespace) is all it needs). namespace=None: all of them.

    Node attributes: kind, name, namespace, uid, phase, ready, deleting, finalizers, revision
    (plus node for pods; replicas, ready_replicas, available_replicas for workloads).
    Edge attributes: kind ("owns" or "runs-on"), controller, block_owner_deletion."""
    client = getattr(source, "client", source)
    graph = nx.DiGraph()
    objects: list[Object] = []
    listed: set[str] = set()  # the kinds asked for: a reference to another kind is not followed
    for resource in kinds:
        info = client.resource(resource)
        listed.add(info.kind)
        ns = (namespace or "") if info.namespaced else ""
        try:
            items = client.list(info.resource, ns)["items"]
        except ApiError:
            continue  # not allowed to list it, or not served: draw the rest
        for item in items:
            item.setdefault("kind", info.kind)
            item.setdefault("apiVersion", info.api_version)
        objects += items
    by_uid = {}
    for obj in objects:
        meta = obj["metadata"]
        nid = node_id(obj["kind"], meta["name"], meta.get("namespace", ""))
        graph.add_node(nid, **_attributes(obj))
        by_uid[meta.get("uid")] = nid
    for obj in objects:
        meta = obj["metadata"]
        nid = node_id(obj["kind"], meta["name"], meta.get("namespace", ""))
        for ref in meta.get("ownerReferences") or ():
            owner = by_uid.get(ref.get("uid"))
            if owner is None and ref.get("kind") not in listed:
                continue  # a kind left out of the picture, not a missing object
            if owner is None:
                # A kind we listed, and this owner is not there: a dangling reference. Show it.
                owner = node_id(ref.get("kind", ""), ref.get("name", ""), meta.get("namespace", ""))
                if owner not in graph:
                    graph.add_node(owner, kind=ref.get("kind", ""), name=ref.get("name", ""),
                                   namespace=meta.get("namespace", ""), uid=ref.get("uid", ""),
                                   phase="", ready=False, deleting=False, finalizers=[], revision="",
                                   missing=True)
            graph.add_edge(owner, nid, kind="owns", controller=bool(ref.get("controller")),
                           block_owner_deletion=bool(ref.get("blockOwnerDeletion")))
        node_name = (obj.get("spec") or {}).get("nodeName") if obj["kind"] == "Pod" else None
        if node_name and "Node" in listed:
            target = node_id("Node", node_name)
            if target not in graph:
                graph.add_node(target, kind="Node", name=node_name, namespace="", uid="",
                               phase="", ready=False, deleting=False, finalizers=[], revision="",
                               missing=True)
            graph.add_edge(nid, target, kind="runs-on", controller=False, block_owner_deletion=False)
    return graph
