"""The StatefulSet controller: pods with stable names, identities and storage, created and
deleted in order (kubernetes/kubernetes pkg/controller/statefulset/stateful_set.go).

One sync, for one StatefulSet key:
1. read the set from the cache (gone: done) and parse its selector;
2. adopt the orphaned ControllerRevisions its selector matches (adoptOrphanRevisions);
3. claim its pods: those it controls and the orphans named `<set>-<ordinal>` that its
   selector matches (getPodsForStatefulSet, with isMemberOf as the claim's filter);
4. hand set and pods to the control loop (stateful_set_control.py), which creates, deletes
   and updates pods and writes status;
5. with minReadySeconds, look again when the pods should have become available.

Events that queue a sync: any change to a set; a pod of one created, changed or deleted; an
orphan that some set's selector matches. ControllerRevisions queue nothing (upstream adds no
handler for them either).

The controller takes the MaxUnavailableStatefulSet feature gate (alpha in 1.34, so off by
default; the API server drops maxUnavailable then, as upstream's strategy does).
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError, ParseError
from kubelab.api.labels import Selector, selector_from_label_selector
from kubelab.api.meta import get_controller_of_no_copy, split_key
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.delta_fifo import DeletedFinalStateUnknown
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory
from kubelab.controllers.controller_ref_manager import ControllerRefManager, recheck_deletion_timestamp
from kubelab.controllers.controller_utils import (
    POD_CONTROLLER_UID_INDEX,
    add_indexer_once,
    filter_pods_by_owner,
    is_pod_ready,
    pod_controller_uid_index_func,
)
from kubelab.controllers.history import History
from kubelab.controllers.statefulset.stateful_pod_control import StatefulPodControl
from kubelab.controllers.statefulset.stateful_set_control import StatefulSetControl
from kubelab.controllers.statefulset.stateful_set_utils import is_member_of

__all__ = ["StatefulSetController"]


def _tombstone(obj: Any) -> Object:
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj  # type: ignore[no-any-return]


def _key(obj: Object) -> str:
    return f"{obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}"


class StatefulSetController:
    NAME = "statefulset-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory, *,
                 workers: int = 5, cost: float | None = None,
                 max_unavailable_stateful_set: bool = False) -> None:
        self.ctx, self.client, self.clock = ctx, ctx.client, ctx.clock
        self.recorder = ctx.recorder(self.NAME)
        self.controller = Controller(self.NAME, self.sync, ctx.clock, workers=workers,
                                     cost=ctx.sync_cost if cost is None else cost,
                                     trace=ctx.trace, client=ctx.client)
        self.queue = self.controller.queue
        set_informer = informers.informer_for("statefulsets")
        pod_informer = informers.informer_for("pods")
        revision_informer = informers.informer_for("controllerrevisions")
        # The claims' lister, once the API serves PersistentVolumeClaims (see
        # stateful_pod_control.py); the static table is asked, so no request is sent.
        claims = None
        if self.client.resources.lookup("persistentvolumeclaims") is not None:
            claims = informers.informer_for("persistentvolumeclaims").indexer
        self.set_indexer = set_informer.indexer
        self.pod_indexer = add_indexer_once(pod_informer, POD_CONTROLLER_UID_INDEX,
                                            pod_controller_uid_index_func)
        self.history = History(ctx.client, revision_informer.indexer)
        self.pod_control = StatefulPodControl(ctx.client, self.recorder, claims)
        self.control = StatefulSetControl(self, max_unavailable_stateful_set=max_unavailable_stateful_set)
        set_informer.add_event_handler(ResourceEventHandler(
            self.controller.enqueue, lambda old, cur: self.controller.enqueue(cur),
            lambda obj: self.queue.add(_key(_tombstone(obj)))))
        pod_informer.add_event_handler(ResourceEventHandler(self.add_pod, self.update_pod,
                                                            self.delete_pod))

    def run(self) -> None:
        self.controller.run()

    def stop(self) -> None:
        self.controller.stop()

    # ------------------------------------------------------------------ event handlers

    def resolve_controller_ref(self, namespace: str, ref: Object) -> Object | None:
        if ref.get("kind") != "StatefulSet":
            return None
        sts, exists = self.set_indexer.get_by_key(f"{namespace}/{ref.get('name')}")
        return sts if exists and sts["metadata"].get("uid") == ref.get("uid") else None

    def get_stateful_sets_for_pod(self, pod: Object) -> list[Object]:
        """getStatefulSetsForPod: the sets of the pod's namespace whose selector matches it."""
        labels = pod["metadata"].get("labels") or {}
        out = []
        for sts in self.set_indexer.list():
            if sts["metadata"].get("namespace") != pod["metadata"].get("namespace"):
                continue
            try:
                selector = selector_from_label_selector(sts["spec"].get("selector"))
            except ParseError:
                continue
            if not selector.empty() and selector.matches(labels):
                out.append(sts)
        return out

    def add_pod(self, pod: Object) -> None:
        if pod["metadata"].get("deletionTimestamp"):
            self.delete_pod(pod)  # a restarted controller may first see it being deleted
            return
        ref = get_controller_of_no_copy(pod)
        if ref is not None:
            sts = self.resolve_controller_ref(pod["metadata"].get("namespace", ""), ref)
            if sts is not None:
                self.controller.enqueue(sts)
            return
        for sts in self.get_stateful_sets_for_pod(pod):  # an orphan: does a set want it?
            self.controller.enqueue(sts)

    def update_pod(self, old: Object, cur: Object) -> None:
        if old["metadata"].get("resourceVersion") == cur["metadata"].get("resourceVersion"):
            return
        label_changed = old["metadata"].get("labels") != cur["metadata"].get("labels")
        cur_ref, old_ref = get_controller_of_no_copy(cur), get_controller_of_no_copy(old)
        namespace = cur["metadata"].get("namespace", "")
        if cur_ref != old_ref and old_ref is not None:
            sts = self.resolve_controller_ref(namespace, old_ref)
            if sts is not None:
                self.controller.enqueue(sts)
        if cur_ref is not None:
            sts = self.resolve_controller_ref(namespace, cur_ref)
            if sts is None:
                return
            self.controller.enqueue(sts)
            min_ready = int(sts["spec"].get("minReadySeconds") or 0)
            if min_ready > 0 and not is_pod_ready(old) and is_pod_ready(cur):
                # Available minReadySeconds after it became Ready; +1 s as the +1 s of the
                # ReplicaSet's requeue (docs/ARCHITECTURE.md): a pod is available strictly after.
                self.queue.add_after(_key(sts), min_ready + 1)
            return
        if label_changed or cur_ref != old_ref:
            for sts in self.get_stateful_sets_for_pod(cur):
                self.controller.enqueue(sts)

    def delete_pod(self, obj: Any) -> None:
        pod = _tombstone(obj)
        ref = get_controller_of_no_copy(pod) if pod else None
        if ref is None:
            return
        sts = self.resolve_controller_ref(pod["metadata"].get("namespace", ""), ref)
        if sts is not None:
            self.controller.enqueue(sts)

    # ------------------------------------------------------------------ sync

    def sync(self, key: str) -> None:
        split_key(key)
        sts, exists = self.set_indexer.get_by_key(key)
        if not exists:
            return  # "StatefulSet has been deleted"
        try:
            selector = selector_from_label_selector(sts["spec"].get("selector"))
        except ParseError:
            return  # a non-transient error: not retried
        self.adopt_orphan_revisions(sts)
        pods = self.get_pods_for_stateful_set(sts, selector)
        self.sync_stateful_set(sts, pods)

    def _can_adopt(self, sts: Object) -> Any:
        """canAdoptFunc: before the first adoption, read the set afresh and refuse when it is
        being deleted or was re-created under another uid."""
        meta = sts["metadata"]

        def fresh() -> Object:
            latest = self.client.get("statefulsets", meta["name"], meta.get("namespace", "default"))
            if latest["metadata"].get("uid") != meta["uid"]:
                raise ApiError(409, "Conflict", f"original StatefulSet {meta.get('namespace')}/"
                               f"{meta['name']} is gone: got uid {latest['metadata'].get('uid')}, "
                               f"wanted {meta['uid']}")
            return latest
        return recheck_deletion_timestamp(fresh)

    def adopt_orphan_revisions(self, sts: Object) -> None:
        orphans = [r for r in self.control.list_revisions(sts) if get_controller_of_no_copy(r) is None]
        if orphans:
            self._can_adopt(sts)()
            self.control.adopt_orphan_revisions(sts, orphans)

    def get_pods_for_stateful_set(self, sts: Object, selector: Selector) -> list[Object]:
        """getPodsForStatefulSet: claim the pods (adopt matching orphans that are members,
        release owned pods that stopped matching)."""
        manager = ControllerRefManager(self.client, sts, selector, "pods", self._can_adopt(sts))
        return manager.claim(filter_pods_by_owner(self.pod_indexer, sts),
                             filter_=lambda pod: is_member_of(sts, pod))

    def sync_stateful_set(self, sts: Object, pods: list[Object]) -> None:
        status = self.control.update_stateful_set(sts, pods)
        min_ready = int(sts["spec"].get("minReadySeconds") or 0)
        if min_ready > 0 and status.get("availableReplicas") != sts["spec"].get("replicas", 1):
            # "One more sync to handle the clock skew"; +1 s as in update_pod.
            self.queue.add_after(_key(sts), min_ready + 1)
