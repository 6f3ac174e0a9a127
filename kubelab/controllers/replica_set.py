"""The ReplicaSet controller: keep spec.replicas pods running (kubernetes/kubernetes
pkg/controller/replicaset/replica_set.go and replica_set_utils.go).

One sync, for one ReplicaSet key:
1. read the ReplicaSet from the cache (gone: forget its expectations, done);
2. if its expectations are not met yet (pods it created or deleted that the cache has not
   shown), do not manage replicas: the cache is behind, counting now would double-create;
3. claim pods (adopt matching orphans, release owned pods that stopped matching);
4. create the missing pods in slow-start batches, or delete the surplus in rank order;
5. write status (replicas, fullyLabeledReplicas, readyReplicas, availableReplicas,
   observedGeneration).
Delete a pod and the informer's event wakes step 4: the pod "comes back" as a new one.
"""

from __future__ import annotations

from typing import Any

import orjson

from kubelab.api.errors import ApiError, ParseError
from kubelab.api.labels import Selector, selector_from_label_selector
from kubelab.api.meta import get_controller_of_no_copy, split_key
from kubelab.client.component import ComponentContext
from kubelab.client.controller import Controller
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
    filter_pods_by_owner,
    get_pod_ready_condition,
    has_namespace_terminating_cause,
    is_pod_active,
    is_pod_ready,
    new_controller_ref,
    pod_controller_uid_index_func,
    slow_start_batch,
)
from kubelab.controllers.pod_ranking import rank_pods_for_deletion, ranks_by_related_pods_on_same_node
from kubelab.controllers.replica_set_utils import PodVerdicts, calculate_status, update_replica_set_status

__all__ = ["ReplicaSetController", "label_selector"]

Object = dict[str, Any]
_SELECTORS: dict[bytes, Selector] = {}


def label_selector(ls: Any) -> Selector:
    """metav1.LabelSelectorAsSelector, memoised: every sync of every ReplicaSet parses it."""
    key = orjson.dumps(ls, option=orjson.OPT_SORT_KEYS)
    selector = _SELECTORS.get(key)
    if selector is None:
        selector = _SELECTORS[key] = selector_from_label_selector(ls)
    return selector


def _seen_by_sync(pod: Object) -> tuple[Any, ...]:
    """What a ReplicaSet sync counts from a pod: whether it is claimed (labels, controller
    reference), active (deletionTimestamp, a Succeeded or Failed phase) and Ready since when
    (available is Ready for minReadySeconds). What else a sync reads from pods (nodeName, the
    Pending or Running phase, restarts, the pod-deletion-cost annotation) only ranks surplus pods
    for deletion, and a sync that deletes, whatever woke it, reads their current values."""
    meta = pod["metadata"]
    ready = get_pod_ready_condition(pod)
    ready_since = ready.get("lastTransitionTime", "") if ready is not None and \
        ready.get("status") == "True" else None
    return (meta.get("labels"), meta.get("ownerReferences"), meta.get("deletionTimestamp"),
            is_pod_active(pod), ready_since)


def _only_status_changed(old: Object, cur: Object) -> bool:
    return old.get("spec") == cur.get("spec") and \
        {k: v for k, v in old["metadata"].items() if k != "resourceVersion"} == \
        {k: v for k, v in cur["metadata"].items() if k != "resourceVersion"}


def _tombstone(obj: Any) -> Object:
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj  # type: ignore[no-any-return]


class ReplicaSetController:
    NAME = "replicaset-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory, *,
                 burst_replicas: int = BURST_REPLICAS, workers: int = 5, cost: float = 0.0) -> None:
        self.ctx, self.client, self.clock = ctx, ctx.client, ctx.clock
        self.burst_replicas = burst_replicas
        self.expectations = UIDTrackingControllerExpectations(ctx.clock)
        self.pod_control = PodControl(ctx.client, ctx.recorder(self.NAME))
        self.controller = Controller(self.NAME, self.sync_replica_set, ctx.clock, workers=workers,
                                     cost=cost, trace=ctx.trace)
        self.queue = self.controller.queue
        # key -> the resourceVersion our last status write returned: its echo needs no sync.
        self._status_written: dict[str, str] = {}
        self._verdicts: dict[str, PodVerdicts] = {}  # key -> what its pods count for
        rs_informer = informers.informer_for("replicasets")
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

    def stop(self) -> None:
        self.controller.stop()

    # ------------------------------------------------------------------ event handlers

    def _key(self, obj: Object) -> str:
        meta = obj["metadata"]
        return f"{meta.get('namespace', '')}/{meta['name']}"

    def _update_rs(self, old: Object, cur: Object) -> None:
        if old["metadata"].get("uid") != cur["metadata"].get("uid"):
            self._delete_rs(DeletedFinalStateUnknown(self._key(old), old))
        key = self._key(cur)
        written = self._status_written.pop(key, None)
        if written is not None and cur["metadata"].get("resourceVersion") == written and \
                _only_status_changed(old, cur):
            # Ours, not upstream's: upstream syncs on every update, so each status write
            # comes back as one more sync, which finds the status it just wrote. At 1,000
            # pods per ReplicaSet that doubles the cost of every pod becoming Ready.
            return
        self.queue.add(key)

    def _delete_rs(self, obj: Any) -> None:
        key = self._key(_tombstone(obj))
        self._status_written.pop(key, None)
        self.expectations.delete_expectations(key)  # a new RS of that name starts clean
        self.queue.add(key)

    def _resolve_controller_ref(self, namespace: str, ref: Object) -> Object | None:
        if ref.get("kind") != "ReplicaSet":
            return None
        rs, exists = self.rs_indexer.get_by_key(f"{namespace}/{ref.get('name')}")
        return rs if exists and rs["metadata"].get("uid") == ref.get("uid") else None

    def _pod_replica_sets(self, pod: Object) -> list[Object]:
        """GetPodReplicaSets: ReplicaSets of the pod's namespace whose selector matches it."""
        labels = pod["metadata"].get("labels") or {}
        out = []
        for rs in self.rs_lister.by_namespace(pod["metadata"].get("namespace", "")).list():
            try:
                selector = label_selector(rs["spec"].get("selector"))
            except ParseError:
                continue
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
        if _seen_by_sync(old) == _seen_by_sync(cur):
            # Ours, not upstream's: upstream syncs on every pod update ("the associated
            # ReplicaSet will only list from local storage, so it should be ok"). A binding, or
            # the kubelet's first status (Pending, not Ready), changes nothing a sync counts,
            # and in Python a sync of a 1,000-pod ReplicaSet per such update is what would make
            # 30,000 pods slow. The outcome is the same.
            return
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
            self._verdicts.pop(key, None)
            return
        needs_sync = self.expectations.satisfied_expectations(key)
        try:
            selector = label_selector(rs["spec"].get("selector"))
        except ParseError:
            return  # validation keeps these out; an invalid selector matches nothing
        pods = filter_pods_by_owner(self.pod_indexer, rs)
        verdicts = self._verdicts.setdefault(key, PodVerdicts())
        pods, all_claimed = verdicts.refresh(rs, selector, pods)  # FilterActivePods
        if not all_claimed:  # else ClaimPods would keep every pod and change nothing
            pods = self._claim_pods(rs, selector, pods)
        manage_error: ApiError | None = None
        if needs_sync and not rs["metadata"].get("deletionTimestamp"):
            try:
                self.manage_replicas(pods, rs)
            except ApiError as err:
                manage_error = err
        status = calculate_status(rs, pods, verdicts, manage_error, self.clock.now)
        updated = update_replica_set_status(self.client, rs, status)
        if updated is not rs:
            self._status_written[key] = updated["metadata"].get("resourceVersion", "")
        spec = updated["spec"]
        min_ready = int(spec.get("minReadySeconds") or 0)
        if manage_error is None and min_ready > 0 and \
                updated["status"].get("readyReplicas") == spec.get("replicas", 1) and \
                updated["status"].get("availableReplicas") != spec.get("replicas", 1):
            # Upstream: "the last line of defence against clock-skew", after minReadySeconds.
            # Virtual time has no skew, and a pod is available strictly *after* that long, so
            # look one second later (else this lands exactly on the boundary, sees nothing).
            self.queue.add_after(key, min_ready + 1)
        if manage_error is not None:
            raise manage_error

    def _claim_pods(self, rs: Object, selector: Selector, pods: list[Object]) -> list[Object]:
        meta = rs["metadata"]

        def fresh() -> Object:
            latest = self.client.get("replicasets", meta["name"], meta.get("namespace", "default"))
            if latest["metadata"].get("uid") != meta["uid"]:
                raise ApiError(409, "Conflict", f"original ReplicaSet {meta.get('namespace')}/"
                               f"{meta['name']} is gone: got uid {latest['metadata'].get('uid')}, "
                               f"wanted {meta['uid']}")
            return latest
        manager = ControllerRefManager(self.client, rs, selector, "pods",
                                       recheck_deletion_timestamp(fresh))
        return manager.claim(pods)

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
