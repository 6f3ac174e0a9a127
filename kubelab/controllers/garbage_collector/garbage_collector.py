"""The garbage collector: delete dependents whose owners are gone, and carry out the three
propagation policies (kubernetes/kubernetes pkg/controller/garbagecollector/garbagecollector.go).

- Background (kubectl's default): the owner is deleted at once; its dependents then have a
  dangling ownerReference and are deleted here.
- Foreground: the owner stays, with deletionTimestamp and the foregroundDeletion finalizer,
  until every dependent that blocks it (blockOwnerDeletion: true) is gone; the collector
  deletes those dependents, then removes the finalizer and the owner goes.
- Orphan: the owner stays with the orphan finalizer until the collector has removed the
  ownerReferences pointing at it from every dependent; then the finalizer, and the owner, go.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.resources import BUILTIN_RESOURCES
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.delta_fifo import DeletedFinalStateUnknown
from kubelab.client.retry import retry_on_conflict
from kubelab.client.shared_informer import (
    ResourceEventHandler,
    SharedIndexInformer,
    SharedInformerFactory,
)
from kubelab.controllers.garbage_collector.graph import Node, ObjectReference, has_finalizer
from kubelab.controllers.garbage_collector.graph_builder import FOREGROUND, ORPHAN, GraphBuilder

__all__ = ["GarbageCollector"]

class GarbageCollector:
    NAME = "garbage-collector-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory, *, workers: int = 20,
                 cost: float | None = None) -> None:
        self.ctx, self.client = ctx, ctx.client
        cost = ctx.sync_cost if cost is None else cost
        self.delete_controller = Controller("garbagecollector/attempt-to-delete",
                                            self._attempt_to_delete_worker, ctx.clock,
                                            workers=workers, cost=cost, trace=ctx.trace, client=ctx.client)
        self.orphan_controller = Controller("garbagecollector/attempt-to-orphan",
                                            self._attempt_to_orphan_worker, ctx.clock,
                                            workers=workers, cost=cost, trace=ctx.trace, client=ctx.client)
        self.graph = GraphBuilder(lambda n: self.delete_controller.queue.add(n.uid),
                                  lambda n: self.orphan_controller.queue.add(n.uid))
        # Monitors: one informer per deletable resource (GetDeletableResources: it supports
        # delete, list and watch; events excepted, as upstream's ignoredResources), shared with
        # the other controllers; custom resources come and go with their CRDs.
        for info in BUILTIN_RESOURCES:
            if info.resource != "events" and all(info.supports(v) for v in ("delete", "list", "watch")):
                informers.informer_for(info.resource).add_event_handler(self.graph.handler())
        self._custom: dict[str, SharedIndexInformer] = {}
        informers.informer_for("customresourcedefinitions").add_event_handler(ResourceEventHandler(
            on_add=self._crd_changed, on_update=lambda _old, new: self._crd_changed(new),
            on_delete=self._crd_deleted))
        self._running = False

    def run(self) -> None:
        self._running = True
        for informer in self._custom.values():
            informer.run()
        self.delete_controller.run()
        self.orphan_controller.run()

    def stop(self) -> None:
        self._running = False
        for informer in self._custom.values():
            informer.stop()
        self.delete_controller.stop()
        self.orphan_controller.stop()

    def _crd_changed(self, crd: Object) -> None:
        spec = crd.get("spec") or {}
        plural, group = (spec.get("names") or {}).get("plural"), spec.get("group", "")
        key = f"{plural}.{group}"
        if not plural or key in self._custom:
            return
        try:
            informer = SharedIndexInformer(self.client, key, self.ctx.clock, rand=self.ctx.rand,
                                           trace=self.ctx.trace, name=self.NAME)
        except ApiError:
            return  # not served yet; the CRD's next update brings us back
        informer.add_event_handler(self.graph.handler())
        self._custom[key] = informer
        if self._running:
            informer.run()

    def _crd_deleted(self, obj: Any) -> None:
        crd = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        spec = (crd or {}).get("spec") or {}
        informer = self._custom.pop(f"{(spec.get('names') or {}).get('plural')}.{spec.get('group', '')}",
                                    None)
        if informer is not None:
            informer.stop()

    # ------------------------------------------------------------------ API access

    def _resource(self, ref: ObjectReference) -> tuple[str, bool]:
        info = self.client.resource_for({"apiVersion": ref.api_version, "kind": ref.kind})
        return info.resource, info.namespaced

    def _get(self, ref: ObjectReference) -> Object:
        resource, namespaced = self._resource(ref)
        return self.client.get(resource, ref.name, ref.namespace if namespaced else "")

    def _patch(self, ref: ObjectReference, patch: Object, patch_type: str) -> Object:
        resource, namespaced = self._resource(ref)
        return self.client.patch(resource, ref.name, patch, ref.namespace if namespaced else "",
                                 patch_type=patch_type)

    def _delete(self, ref: ObjectReference, policy: str) -> None:
        resource, namespaced = self._resource(ref)
        self.client.delete(resource, ref.name, ref.namespace if namespaced else "",
                           propagation_policy=policy, preconditions={"uid": ref.uid})

    # ------------------------------------------------------------------ attemptToDelete

    def _attempt_to_delete_worker(self, uid: str) -> None:
        node = self.graph.uid_to_node.get(uid)
        if node is None:
            return  # deleted meanwhile
        was_virtual = node.virtual
        self.attempt_to_delete_item(node)
        if was_virtual and node.virtual and uid in self.graph.uid_to_node:
            # The owner exists but no informer has shown it yet: look again later.
            raise ApiError(409, "Conflict", f"item {node.identity} hasn't been observed via informer yet")

    def attempt_to_delete_item(self, item: Node) -> None:
        if item.being_deleted and not item.deleting_dependents:
            return  # being deleted in the background already: nothing to add
        try:
            latest = self._get(item.identity)
        except ApiError as err:
            if err.code != 404:
                raise
            self.graph.virtual_delete(item.identity)
            return
        if latest["metadata"].get("uid") != item.uid:
            self.graph.virtual_delete(item.identity)  # same name, another object: ours is gone
            return
        if item.deleting_dependents:
            self._process_deleting_dependents_item(item)
            return
        owners = latest["metadata"].get("ownerReferences") or []
        if not owners:
            return
        solid, dangling, waiting = self._classify_references(item, owners)
        if solid:
            if not dangling and not waiting:
                return  # a live owner: keep it
            # Keep the object for its live owners; drop the references to the others.
            gone = [o.get("uid") for o in dangling + waiting]
            self._remove_owner_references(item, gone)
            return
        if waiting and item.dependents:
            # Every owner waits for its dependents in the foreground, and this object has
            # dependents of its own: delete it in the foreground too, so the wait propagates.
            self._delete(item.identity, "Foreground")
            return
        if has_finalizer(latest, ORPHAN):
            policy = "Orphan"
        elif has_finalizer(latest, FOREGROUND):
            policy = "Foreground"
        else:
            policy = "Background"
        self._delete(item.identity, policy)

    def _classify_references(self, item: Node, owners: list[Object]
                             ) -> tuple[list[Object], list[Object], list[Object]]:
        """solid: the owner exists and is not waiting for us; dangling: it does not exist (or
        another object has its name now); waiting: it is being deleted in the foreground."""
        solid, dangling, waiting = [], [], []
        for ref in owners:
            identity = ObjectReference(ref.get("apiVersion", ""), ref.get("kind", ""),
                                       ref.get("name", ""), ref.get("uid", ""), item.identity.namespace)
            try:
                owner = self._get(identity)
            except ApiError as err:
                if err.code != 404:
                    raise
                dangling.append(ref)
                continue
            if owner["metadata"].get("uid") != ref.get("uid"):
                dangling.append(ref)
            elif owner["metadata"].get("deletionTimestamp") and has_finalizer(owner, FOREGROUND):
                waiting.append(ref)
            else:
                solid.append(ref)
        return solid, dangling, waiting

    def _process_deleting_dependents_item(self, item: Node) -> None:
        blocking = item.blocking_dependents()
        if not blocking:
            self._remove_finalizer(item, FOREGROUND)  # the last blocker is gone: let it go
            return
        for dep in blocking:
            if not dep.deleting_dependents:
                self.delete_controller.queue.add(dep.uid)

    # ------------------------------------------------------------------ attemptToOrphan

    def _attempt_to_orphan_worker(self, uid: str) -> None:
        owner = self.graph.uid_to_node.get(uid)
        if owner is None:
            return
        for dep in list(owner.dependents.values()):
            try:
                self._remove_owner_references(dep, [owner.uid])
            except ApiError as err:
                if err.code != 404:
                    raise
        self._remove_finalizer(owner, ORPHAN)

    # ------------------------------------------------------------------ patches

    def _remove_owner_references(self, item: Node, uids: list[Any]) -> None:
        """deleteOwnerRefStrategicMergePatch (built-in kinds) or a JSON merge patch with the
        remaining list (custom resources), with the dependent's uid as precondition."""
        info = self.client.resource_for({"apiVersion": item.identity.api_version,
                                         "kind": item.identity.kind})
        if info in BUILTIN_RESOURCES:
            patch: Object = {"metadata": {"ownerReferences": [{"$patch": "delete", "uid": uid}
                                                              for uid in uids],
                                          "uid": item.uid}}
            self._patch(item.identity, patch, "strategic")
            return
        latest = self._get(item.identity)
        remaining = [o for o in latest["metadata"].get("ownerReferences") or ()
                     if o.get("uid") not in uids]
        self._patch(item.identity, {"metadata": {"ownerReferences": remaining or None,
                                                 "uid": item.uid}}, "merge")

    def _remove_finalizer(self, item: Node, finalizer: str) -> None:
        """Read, drop the finalizer, write back with the read resourceVersion; on conflict,
        again (retry.RetryOnConflict)."""
        def attempt() -> None:
            try:
                latest = self._get(item.identity)
            except ApiError as err:
                if err.code == 404:
                    return
                raise
            finalizers = list(latest["metadata"].get("finalizers") or ())
            if finalizer not in finalizers:
                return
            finalizers.remove(finalizer)
            self._patch(item.identity, {"metadata": {
                "resourceVersion": latest["metadata"]["resourceVersion"],
                "finalizers": finalizers or None}}, "merge")
        retry_on_conflict(attempt)
