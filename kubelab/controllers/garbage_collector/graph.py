"""The garbage collector's picture of the world: objects joined by ownerReferences
(kubernetes/kubernetes pkg/controller/garbagecollector/graph.go).

Every object the collector watches is a node, keyed by uid; an ownerReference is an edge from
the owner's node to the dependent's. An owner the collector has not seen (yet, or ever) is a
*virtual* node, built from the reference alone: the collector then asks the API server whether
it exists; if it does not, its dependents have a dangling owner and are collected.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubelab.api import Object

__all__ = ["Node", "ObjectReference", "has_finalizer"]

@dataclass(frozen=True)
class ObjectReference:
    """objectReference: an ownerReference's coordinates plus the namespace."""

    api_version: str
    kind: str
    name: str
    uid: str
    namespace: str = ""

    @classmethod
    def of(cls, obj: Object) -> ObjectReference:
        meta = obj["metadata"]
        return cls(obj.get("apiVersion", ""), obj.get("kind", ""), meta.get("name", ""),
                   meta.get("uid", ""), meta.get("namespace", ""))

    def __str__(self) -> str:
        ns = f"namespace={self.namespace}, " if self.namespace else ""
        return (f"[{self.api_version}/{self.kind}, {ns}name: {self.name}, uid: {self.uid}]")


@dataclass(eq=False)
class Node:
    identity: ObjectReference
    owners: list[Object] = field(default_factory=list)      # the object's ownerReferences
    dependents: dict[str, Node] = field(default_factory=dict)  # by uid, in insertion order
    being_deleted: bool = False
    # The object waits, with the foregroundDeletion finalizer, for its blocking dependents.
    deleting_dependents: bool = False
    # Made up from an ownerReference; never seen through an informer (yet).
    virtual: bool = False

    @property
    def uid(self) -> str:
        return self.identity.uid

    def blocking_dependents(self) -> list[Node]:
        """Dependents whose reference to this node has blockOwnerDeletion: true."""
        return [dep for dep in self.dependents.values()
                if any(o.get("uid") == self.uid and o.get("blockOwnerDeletion") for o in dep.owners)]


def has_finalizer(obj: Object, finalizer: str) -> bool:
    return finalizer in (obj["metadata"].get("finalizers") or ())
