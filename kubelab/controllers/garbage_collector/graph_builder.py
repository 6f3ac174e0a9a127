"""GraphBuilder: keep the ownership graph in step with informer events, and notice the moments
that need the collector (kubernetes/kubernetes pkg/controller/garbagecollector/graph_builder.go).

- an object appears with owners the graph has never seen: a virtual owner node is made and
  queued, so the collector checks whether that owner exists;
- an object is deleted: its dependents are queued (their owner may now be gone: Background);
- an object starts being deleted with the `orphan` finalizer: queued for orphaning;
- with `foregroundDeletion`: marked deleting-dependents; it and its dependents are queued.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubelab.api import Object
from kubelab.client.delta_fifo import DeletedFinalStateUnknown
from kubelab.client.shared_informer import ResourceEventHandler
from kubelab.controllers.garbage_collector.graph import Node, ObjectReference, has_finalizer

__all__ = ["FOREGROUND", "ORPHAN", "GraphBuilder"]

ORPHAN = "orphan"                   # metav1.FinalizerOrphanDependents
FOREGROUND = "foregroundDeletion"   # metav1.FinalizerDeleteDependents


def _being_deleted(obj: Object | None) -> bool:
    return bool(obj is not None and obj["metadata"].get("deletionTimestamp"))


def _starts_with_finalizer(old: Object | None, new: Object, finalizer: str) -> bool:
    """deletionStartsWithFinalizer: new is being deleted with the finalizer, old was not."""
    if not _being_deleted(new) or not has_finalizer(new, finalizer):
        return False
    return old is None or not _being_deleted(old) or not has_finalizer(old, finalizer)


class GraphBuilder:
    def __init__(self, attempt_to_delete: Callable[[Node], None],
                 attempt_to_orphan: Callable[[Node], None]) -> None:
        self.uid_to_node: dict[str, Node] = {}
        self.attempt_to_delete = attempt_to_delete
        self.attempt_to_orphan = attempt_to_orphan

    def handler(self) -> ResourceEventHandler:
        return ResourceEventHandler(on_add=lambda obj: self.on_change(None, obj),
                                    on_update=self.on_change, on_delete=self.on_delete)

    # ------------------------------------------------------------------ processGraphChanges

    def on_change(self, old: Object | None, obj: Object) -> None:
        meta = obj["metadata"]
        node = self.uid_to_node.get(meta.get("uid", ""))
        if node is not None and node.virtual:
            node.virtual = False  # observed at last: a real object now
            node.identity = ObjectReference.of(obj)
        if node is None:
            node = Node(ObjectReference.of(obj), owners=list(meta.get("ownerReferences") or ()),
                        being_deleted=_being_deleted(obj),
                        deleting_dependents=_being_deleted(obj) and has_finalizer(obj, FOREGROUND))
            self.uid_to_node[node.uid] = node
            self._add_dependent_to_owners(node, node.owners)
        else:
            new_owners = list(meta.get("ownerReferences") or ())
            old_by_uid = {o.get("uid"): o for o in node.owners}
            new_by_uid = {o.get("uid"): o for o in new_owners}
            added = [o for uid, o in new_by_uid.items() if uid not in old_by_uid]
            removed = [o for uid, o in old_by_uid.items() if uid not in new_by_uid]
            changed = [(old_by_uid[uid], o) for uid, o in new_by_uid.items()
                       if uid in old_by_uid and old_by_uid[uid] != o]
            if added or removed or changed:
                self._add_unblocked_owners_to_delete_queue(removed, changed)
                node.owners = new_owners
                self._add_dependent_to_owners(node, added)
                for ref in removed:
                    owner = self.uid_to_node.get(ref.get("uid", ""))
                    if owner is not None:
                        owner.dependents.pop(node.uid, None)
            if _being_deleted(obj):
                node.being_deleted = True
        self._process_transitions(old, obj, node)

    def on_delete(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
        if not obj:
            return
        node = self.uid_to_node.get(obj["metadata"].get("uid", ""))
        if node is not None:
            self.remove(node)

    def virtual_delete(self, identity: ObjectReference) -> None:
        """enqueueVirtualDeleteEvent: the API server says this owner does not exist."""
        node = self.uid_to_node.get(identity.uid)
        if node is not None and node.virtual:
            self.remove(node)

    def remove(self, node: Node) -> None:
        """removeNode, then: its dependents may now have a dangling owner, and an owner
        waiting in foreground deletion may have lost its last blocking dependent."""
        self.uid_to_node.pop(node.uid, None)
        for ref in node.owners:
            owner = self.uid_to_node.get(ref.get("uid", ""))
            if owner is not None:
                owner.dependents.pop(node.uid, None)
        for dep in list(node.dependents.values()):
            self.attempt_to_delete(dep)
        for ref in node.owners:
            owner = self.uid_to_node.get(ref.get("uid", ""))
            if owner is not None and owner.deleting_dependents:
                self.attempt_to_delete(owner)

    # ------------------------------------------------------------------ helpers

    def _add_dependent_to_owners(self, node: Node, owners: list[Object]) -> None:
        for ref in owners:
            uid = ref.get("uid", "")
            owner = self.uid_to_node.get(uid)
            if owner is None:
                # Never seen: a virtual node, in the dependent's namespace, checked by the
                # collector (which removes it again if the API server has no such object).
                owner = Node(ObjectReference(ref.get("apiVersion", ""), ref.get("kind", ""),
                                             ref.get("name", ""), uid, node.identity.namespace),
                             virtual=True)
                self.uid_to_node[uid] = owner
                owner.dependents[node.uid] = node
                self.attempt_to_delete(owner)
            else:
                owner.dependents[node.uid] = node

    def _add_unblocked_owners_to_delete_queue(self, removed: list[Object],
                                              changed: list[tuple[Object, Object]]) -> None:
        """A dependent dropped its blocking reference: its owner may finish deleting now."""
        unblocked = [o for o in removed if o.get("blockOwnerDeletion")]
        unblocked += [new for old, new in changed
                      if old.get("blockOwnerDeletion") and not new.get("blockOwnerDeletion")]
        for ref in unblocked:
            owner = self.uid_to_node.get(ref.get("uid", ""))
            if owner is not None and owner.deleting_dependents:
                self.attempt_to_delete(owner)

    def _process_transitions(self, old: Object | None, new: Object, node: Node) -> None:
        if _starts_with_finalizer(old, new, ORPHAN):
            self.attempt_to_orphan(node)
            return
        if _starts_with_finalizer(old, new, FOREGROUND):
            node.deleting_dependents = True
            for dep in list(node.dependents.values()):
                self.attempt_to_delete(dep)
            self.attempt_to_delete(node)
