"""The ReplicaSet controller: keep spec.replicas pods running (kubernetes/kubernetes
pkg/controller/replicaset/replica_set.go and replica_set_utils.go).

One sync (syncReplicaSet), for one ReplicaSet key:
1. read the ReplicaSet from the cache (gone: forget its expectations, done);
2. note whether its expectations are met (pods it created or deleted that the cache has not
   shown yet): if not, the cache is behind, and counting now would double-create;
3. list its pods (FilterPodsByOwner: the pods it controls and the orphans of its namespace),
   keep the active ones (filter_active_pods), and claim them (adopt matching orphans, release
   owned pods that stopped matching);
4. if the expectations are met, create the missing pods in slow-start batches, or delete the
   surplus in rank order (manage_replicas);
5. write status (calculate_status: replicas, fullyLabeledReplicas, readyReplicas,
   availableReplicas, observedGeneration).
Every change to the ReplicaSet or to one of its pods queues a sync, its own status writes
included, as upstream does. Delete a pod and the informer's event wakes step 4: the pod
"comes back" as a new one.
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
    BURST_REPLICAS,
    CONTROLLER_UID_INDEX,
    POD_CONTROLLER_UID_INDEX,
    SLOW_START_INITIAL_BATCH_SIZE,
    PodControl,
    UIDTrackingControllerExpectations,
    add_indexer_once,
    controller_uid_index_func,
    filter_active_pods,
    filter_pods_by_owner,
    has_namespace_terminating_cause,
    is_pod_ready,
    new_controller_ref,
    pod_controller_uid_index_func,
    slow_start_batch,
)
from kubelab.controllers.pod_ranking import rank_pods_for_deletion, ranks_by_related_pods_on_same_node
from kubelab.controllers.replicaset.replica_set_utils import calculate_status, update_replica_set_status

__all__ = ["ReplicaSetController"]

def _tombstone(obj: Any) -> Object:
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj  # type: ignore[no-any-return]


class ReplicaSetController:
    NAME = "replicaset-controller"
    # NewBaseController's parameters, which the replication manager sets for its own kind
    # (kubelab/controllers/replication/): the kind it controls, its resource, the events' source.
    KIND, RESOURCE, EVENT_SOURCE = "ReplicaSet", "replicasets", "replicaset-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory, *,
                 burst_replicas: int = BURST_REPLICAS, workers: int = 5,
                 cost: float | None = None) -> None:
        self.ctx, self.client, self.clock = ctx, ctx.client, ctx.clock
        self.burst_replicas = burst_replicas
        self.expectations = UIDTrackingControllerExpectations(ctx.clock)
        self.pod_control = PodControl(ctx.client, ctx.recorder(self.EVENT_SOURCE))
        self.controller = Controller(self.NAME, self.sync_replica_set, ctx.clock, workers=workers,
                                     cost=ctx.sync_cost if cost is None else cost,
                                     trace=ctx.trace, client=ctx.client)
        self.queue = self.controller.queue
        rs_informer = informers.informer_for(self.RESOURCE)
        pod_informer = informers.informer_for("pods")
        self.rs_indexer = add_indexer_once(rs_informer, CONTROLLER_UID_INDEX, controller_uid_index_func)
        self.pod_indexer = add_indexer_once(pod_informer, POD_CONTROLLER_UID_INDEX,
                                            pod_controller_uid_index_func)
        self.rs_lister = rs_informer.lister
        rs_informer.add_event_handler(ResourceEventHandler(self.controller.enqueue,
                                                           self._update_rs, self._delete_rs))
        pod_informer.add_event_handler(ResourceEventHandler(self._add_pod, self._update_pod,
                                                            self._delete_pod))

    def run(self) -> None:
        self.controller.run()

    @staticmethod
    def label_selector(rs: Object) -> Any:
        """The owner's spec.selector as a LabelSelector (a ReplicaSet's already is one)."""
        return rs["spec"].get("selector")

    def stop(self) -> None:
        self.controller.stop()

    # ------------------------------------------------------------------ event handlers

    def _key(self, obj: Object) -> str:
        meta = obj["metadata"]
        return f"{meta.get('namespace', '')}/{meta['name']}"

    def _update_rs(self, old: Object, cur: Object) -> None:
        if old["metadata"].get("uid") != cur["metadata"].get("uid"):
            self._delete_rs(DeletedFinalStateUnknown(self._key(old), old))
        # Upstream: "it is safer to sync any time this function is triggered". That includes
        # the echo of our own status write: a stale echo after a newer sync is corrected so.
        self.controller.enqueue(cur)

    def _delete_rs(self, obj: Any) -> None:
        key = self._key(_tombstone(obj))
        self.expectations.delete_expectations(key)  # a new RS of that name starts clean
        self.queue.add(key)

    def _resolve_controller_ref(self, namespace: str, ref: Object) -> Object | None:
        if ref.get("kind") != self.KIND:
            return None
        rs, exists = self.rs_indexer.get_by_key(f"{namespace}/{ref.get('name')}")
        return rs if exists and rs["metadata"].get("uid") == ref.get("uid") else None

    def _pod_replica_sets(self, pod: Object) -> list[Object]:
        """GetPodReplicaSets: ReplicaSets of the pod's namespace whose selector matches it."""
        labels = pod["metadata"].get("labels") or {}
        out = []
        for rs in self.rs_lister.by_namespace(pod["metadata"].get("namespace", "")).list():
            try:
                selector = selector_from_label_selector(self.label_selector(rs))
            except ParseError:
                continue  # an invalid selector matches nothing
            if not selector.empty() and selector.matches(labels):  # empty selects nothing here
                out.append(rs)
        return out

    def _add_pod(self, pod: Object) -> None:
        if pod["metadata"].get("deletionTimestamp"):
            # A restarted controller may first see a pod already being deleted.
            self._delete_pod(pod)
            return
        ref = get_controller_of_no_copy(pod)
        if ref is not None:
            rs = self._resolve_controller_ref(pod["metadata"].get("namespace", ""), ref)
            if rs is not None:
                key = self._key(rs)
                self.expectations.creation_observed(key)
                self.queue.add(key)
            return
        for rs in self._pod_replica_sets(pod):  # an orphan: does anyone want it?
            self.controller.enqueue(rs)

    def _update_pod(self, old: Object, cur: Object) -> None:
        if old["metadata"].get("resourceVersion") == cur["metadata"].get("resourceVersion"):
            return  # a resync: nothing changed
        label_changed = old["metadata"].get("labels") != cur["metadata"].get("labels")
        if cur["metadata"].get("deletionTimestamp"):
            # Graceful deletion starts with this update; count it as the deletion now, so the
            # replacement is created at once, not after the grace period.
            self._delete_pod(cur)
            if label_changed:
                self._delete_pod(old)
            return
        cur_ref, old_ref = get_controller_of_no_copy(cur), get_controller_of_no_copy(old)
        namespace = cur["metadata"].get("namespace", "")
        if cur_ref != old_ref and old_ref is not None:
            rs = self._resolve_controller_ref(namespace, old_ref)
            if rs is not None:
                self.controller.enqueue(rs)
        if cur_ref is not None:
            rs = self._resolve_controller_ref(namespace, cur_ref)
            if rs is None:
                return
            self.controller.enqueue(rs)
            min_ready = int(rs["spec"].get("minReadySeconds") or 0)
            if min_ready > 0 and not is_pod_ready(old) and is_pod_ready(cur):
                # Ready now, available minReadySeconds later: look again then (+1 s for skew).
                self.queue.add_after(self._key(rs), min_ready + 1)
            return
        if label_changed or cur_ref != old_ref:
            for rs in self._pod_replica_sets(cur):
                self.controller.enqueue(rs)

    def _delete_pod(self, obj: Any) -> None:
        pod = _tombstone(obj)
        ref = get_controller_of_no_copy(pod) if pod else None
        if ref is None:
            return  # nobody cares about orphans going away
        rs = self._resolve_controller_ref(pod["metadata"].get("namespace", ""), ref)
        if rs is None:
            return
        key = self._key(rs)
        self.expectations.deletion_observed_of(key, self._key(pod))
        self.queue.add(key)

    # ------------------------------------------------------------------ sync

    def sync_replica_set(self, key: str) -> None:
        split_key(key)  # a malformed key raises here, as SplitMetaNamespaceKey fails upstream
        rs, exists = self.rs_indexer.get_by_key(key)
        if not exists:
            self.expectations.delete_expectations(key)
            return
        rs_needs_sync = self.expectations.satisfied_expectations(key)
        try:
            selector = selector_from_label_selector(self.label_selector(rs))
        except ParseError:
            return  # validation keeps these out; upstream logs the error and gives up
        # Every pod it controls, even one that stopped matching (it must be released), and the
        # orphans it might adopt. Cached objects: copy one before changing it.
        all_pods = filter_pods_by_owner(self.pod_indexer, rs)
        filtered_pods = filter_active_pods(all_pods)
        filtered_pods = self.claim_pods(rs, selector, filtered_pods)
        manage_replicas_error: ApiError | None = None
        if rs_needs_sync and not rs["metadata"].get("deletionTimestamp"):
            try:
                self.manage_replicas(filtered_pods, rs)
            except ApiError as err:
                manage_replicas_error = err
        new_status = calculate_status(rs, filtered_pods, manage_replicas_error, self.clock.now)
        # Always updates status as pods come up or die.
        updated = update_replica_set_status(self.client, rs, new_status)
        spec = updated["spec"]
        min_ready = int(spec.get("minReadySeconds") or 0)
        if manage_replicas_error is None and min_ready > 0 and \
                updated["status"].get("readyReplicas") == spec.get("replicas", 1) and \
                updated["status"].get("availableReplicas") != spec.get("replicas", 1):
            # Upstream: "the last line of defence against clock-skew", after minReadySeconds.
            # Virtual time has no skew, and a pod is available strictly *after* that long, so
            # look one second later (else this lands exactly on the boundary, sees nothing).
            self.queue.add_after(key, min_ready + 1)
        if manage_replicas_error is not None:
            raise manage_replicas_error

    def claim_pods(self, rs: Object, selector: Selector, filtered_pods: list[Object]) -> list[Object]:
        """claimPods: adopt and release through a PodControllerRefManager; before the first
        adoption, read the ReplicaSet afresh (a quorum read) and refuse if it is being
        deleted or was re-created under another uid."""
        meta = rs["metadata"]

        def fresh() -> Object:
            latest = self.client.get(self.RESOURCE, meta["name"], meta.get("namespace", "default"))
            if latest["metadata"].get("uid") != meta["uid"]:
                raise ApiError(409, "Conflict", f"original {self.KIND} {meta.get('namespace')}/"
                               f"{meta['name']} is gone: got uid {latest['metadata'].get('uid')}, "
                               f"wanted {meta['uid']}")
            return latest
        manager = ControllerRefManager(self.client, rs, selector, "pods",
                                       recheck_deletion_timestamp(fresh))
        return manager.claim(filtered_pods)

    def manage_replicas(self, pods: list[Object], rs: Object) -> None:
        """Create or delete pods so that len(pods) becomes spec.replicas, at most
        burst_replicas per sync. Does not change `pods`."""
        key, namespace = self._key(rs), rs["metadata"].get("namespace", "default")
        diff = len(pods) - int(rs["spec"].get("replicas", 1))
        if diff < 0:
            diff = min(-diff, self.burst_replicas)
            self.expectations.expect_creations(key, diff)
            template, ref = rs["spec"].get("template") or {}, new_controller_ref(rs)

            def create() -> None:
                try:
                    self.pod_control.create_pods(namespace, template, rs, ref)
                except ApiError as err:
                    if not has_namespace_terminating_cause(err):
                        raise  # a terminating namespace refuses every create: not a failure
            created, error = slow_start_batch(diff, SLOW_START_INITIAL_BATCH_SIZE, create)
            for _ in range(diff - created):
                # Pods we never created will never be observed: stop expecting them.
                self.expectations.creation_observed(key)
            if error is not None:
                raise error
        elif diff > 0:
            diff = min(diff, self.burst_replicas)
            to_delete = self._pods_to_delete(pods, rs, diff)
            self.expectations.expect_deletions_of(key, [self._key(p) for p in to_delete])
            errors = []
            for pod in to_delete:
                try:
                    self.pod_control.delete_pod(namespace, pod["metadata"]["name"], rs)
                except ApiError as err:
                    self.expectations.deletion_observed_of(key, self._key(pod))
                    if err.code != 404:
                        errors.append(err)
            if errors:
                raise errors[0]

    def _pods_to_delete(self, pods: list[Object], rs: Object, diff: int) -> list[Object]:
        if diff >= len(pods):
            return list(pods)  # all of them: no need to rank
        related: list[Object] = []
        ref = get_controller_of_no_copy(rs)
        siblings = self.rs_indexer.by_index(CONTROLLER_UID_INDEX, str(ref.get("uid"))) \
            if ref is not None else [rs]
        for sibling in siblings or [rs]:
            related += filter_pods_by_owner(self.pod_indexer, sibling, include_orphans=False)
        ranks = ranks_by_related_pods_on_same_node(pods, related)
        return rank_pods_for_deletion(pods, ranks, self.clock.now)[:diff]
