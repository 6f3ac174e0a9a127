"""The Deployment controller: event handlers and syncDeployment (kubernetes/kubernetes
pkg/controller/deployment/deployment_controller.go).

A Deployment never touches pods. It owns ReplicaSets, one per pod template it has had, and
rolls out by scaling them: the new one up, the old ones down (rolling.py), or all old ones to
zero and then the new one up (recreate.py). The ReplicaSet controller does the rest. The
methods of upstream's DeploymentController are spread over sync.py, rolling.py, recreate.py,
rollback.py and progress.py here too; each takes the controller as its first argument.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError, ParseError
from kubelab.api.labels import selector_from_label_selector
from kubelab.api.meta import deep_copy, get_controller_of_no_copy
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.delta_fifo import DeletedFinalStateUnknown
from kubelab.client.events import WARNING
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory
from kubelab.controllers.controller_ref_manager import ControllerRefManager, recheck_deletion_timestamp
from kubelab.controllers.controller_utils import (
    CONTROLLER_UID_INDEX,
    POD_CONTROLLER_UID_INDEX,
    add_indexer_once,
    controller_uid_index_func,
    filter_pods_by_owner,
    pod_controller_uid_index_func,
)
from kubelab.controllers.deployment import recreate, rollback, rolling, sync

__all__ = ["DeploymentController"]

class DeploymentController:
    NAME = "deployment-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory, *,
                 workers: int = 5, cost: float | None = None) -> None:
        self.ctx, self.client, self.clock = ctx, ctx.client, ctx.clock
        self.recorder = ctx.recorder(self.NAME)
        self.controller = Controller(self.NAME, self.sync_deployment, ctx.clock, workers=workers,
                                     cost=ctx.sync_cost if cost is None else cost,
                                     trace=ctx.trace, client=ctx.client)
        self.queue = self.controller.queue
        d_informer = informers.informer_for("deployments")
        rs_informer = informers.informer_for("replicasets")
        pod_informer = informers.informer_for("pods")
        self.d_lister, self.rs_lister = d_informer.lister, rs_informer.lister
        self.rs_indexer = add_indexer_once(rs_informer, CONTROLLER_UID_INDEX, controller_uid_index_func)
        self.pod_indexer = add_indexer_once(pod_informer, POD_CONTROLLER_UID_INDEX,
                                            pod_controller_uid_index_func)
        d_informer.add_event_handler(self.controller.handler())
        rs_informer.add_event_handler(ResourceEventHandler(self._add_rs, self._update_rs,
                                                           self._delete_rs))
        pod_informer.add_event_handler(ResourceEventHandler(on_delete=self._delete_pod))

    @property
    def now(self) -> float:
        return self.clock.now

    def run(self) -> None:
        self.controller.run()

    def stop(self) -> None:
        self.controller.stop()

    def enqueue_after(self, d: Object, seconds: float) -> None:
        meta = d["metadata"]
        self.queue.add_after(f"{meta.get('namespace', '')}/{meta['name']}", seconds)

    def enqueue_rate_limited(self, d: Object) -> None:
        meta = d["metadata"]
        self.queue.add_rate_limited(f"{meta.get('namespace', '')}/{meta['name']}")

    # ------------------------------------------------------------------ event handlers

    def _resolve_controller_ref(self, namespace: str, ref: Object) -> Object | None:
        if ref.get("kind") != "Deployment":
            return None
        d, exists = self.d_lister.indexer.get_by_key(f"{namespace}/{ref.get('name')}")
        return d if exists and d["metadata"].get("uid") == ref.get("uid") else None

    def _deployments_for_rs(self, rs: Object) -> list[Object]:
        """getDeploymentsForReplicaSet: Deployments whose selector matches an orphan RS."""
        labels = rs["metadata"].get("labels") or {}
        out = []
        for d in self.d_lister.by_namespace(rs["metadata"].get("namespace", "")).list():
            try:
                selector = selector_from_label_selector(d["spec"].get("selector"))
            except ParseError:
                continue
            if not selector.empty() and selector.matches(labels):
                out.append(d)
        return out

    def _add_rs(self, rs: Object) -> None:
        if rs["metadata"].get("deletionTimestamp"):
            self._delete_rs(rs)
            return
        ref = get_controller_of_no_copy(rs)
        if ref is not None:
            d = self._resolve_controller_ref(rs["metadata"].get("namespace", ""), ref)
            if d is not None:
                self.controller.enqueue(d)
            return
        for d in self._deployments_for_rs(rs):
            self.controller.enqueue(d)

    def _update_rs(self, old: Object, cur: Object) -> None:
        if old["metadata"].get("resourceVersion") == cur["metadata"].get("resourceVersion"):
            return
        cur_ref, old_ref = get_controller_of_no_copy(cur), get_controller_of_no_copy(old)
        namespace = cur["metadata"].get("namespace", "")
        if cur_ref != old_ref and old_ref is not None:
            d = self._resolve_controller_ref(namespace, old_ref)
            if d is not None:
                self.controller.enqueue(d)
        if cur_ref is not None:
            d = self._resolve_controller_ref(namespace, cur_ref)
            if d is not None:
                self.controller.enqueue(d)
            return
        if cur_ref != old_ref or old["metadata"].get("labels") != cur["metadata"].get("labels"):
            for d in self._deployments_for_rs(cur):
                self.controller.enqueue(d)

    def _delete_rs(self, obj: Any) -> None:
        rs = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        ref = get_controller_of_no_copy(rs) if rs else None
        if ref is not None:
            d = self._resolve_controller_ref(rs["metadata"].get("namespace", ""), ref)
            if d is not None:
                self.controller.enqueue(d)

    def _delete_pod(self, obj: Any) -> None:
        """A Recreate rollout waits for every old pod to be gone: the last one wakes it."""
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        d = self._deployment_for_pod(pod) if pod else None
        if d is None or (d["spec"].get("strategy") or {}).get("type") != "Recreate":
            return
        rss = self._replica_sets_owned(d)
        if not any(self.pods_of(rs) for rs in rss):
            self.controller.enqueue(d)

    def _deployment_for_pod(self, pod: Object) -> Object | None:
        ref = get_controller_of_no_copy(pod)
        if ref is None or ref.get("kind") != "ReplicaSet":
            return None
        namespace = pod["metadata"].get("namespace", "")
        rs, exists = self.rs_indexer.get_by_key(f"{namespace}/{ref.get('name')}")
        if not exists or rs["metadata"].get("uid") != ref.get("uid"):
            return None
        rs_ref = get_controller_of_no_copy(rs)
        return self._resolve_controller_ref(namespace, rs_ref) if rs_ref else None

    # ------------------------------------------------------------------ listing

    def _replica_sets_owned(self, d: Object) -> list[Object]:
        return self.rs_indexer.by_index(CONTROLLER_UID_INDEX, d["metadata"]["uid"])

    def pods_of(self, rs: Object) -> list[Object]:
        return filter_pods_by_owner(self.pod_indexer, rs, include_orphans=False)

    def get_replica_sets_for_deployment(self, d: Object) -> list[Object]:
        """getReplicaSetsForDeployment: claim the ReplicaSets (adopt orphans that match the
        selector, release owned ones that stopped matching)."""
        meta = d["metadata"]
        selector = selector_from_label_selector(d["spec"].get("selector"))
        candidates = [rs for rs in self.rs_lister.by_namespace(meta.get("namespace", "")).list()
                      if (ref := get_controller_of_no_copy(rs)) is None or ref.get("uid") == meta["uid"]]

        def fresh() -> Object:
            latest = self.client.get("deployments", meta["name"], meta.get("namespace", "default"))
            if latest["metadata"].get("uid") != meta["uid"]:
                raise ApiError(409, "Conflict", f"original Deployment {meta.get('namespace')}/"
                               f"{meta['name']} is gone: got uid {latest['metadata'].get('uid')}, "
                               f"wanted {meta['uid']}")
            return latest
        manager = ControllerRefManager(self.client, d, selector, "replicasets",
                                       recheck_deletion_timestamp(fresh))
        return manager.claim(candidates)

    # ------------------------------------------------------------------ syncDeployment

    def sync_deployment(self, key: str) -> None:
        d, exists = self.d_lister.indexer.get_by_key(key)
        if not exists:
            return  # deleted: the garbage collector takes care of its ReplicaSets
        d = deep_copy(d)
        if selector_from_label_selector(d["spec"].get("selector") or {}).empty():
            self.recorder.event(d, WARNING, "SelectingAll",
                                "This deployment is selecting all pods. A non-empty selector is required.")
            status = d.setdefault("status", {})
            if status.get("observedGeneration", 0) < d["metadata"].get("generation", 0):
                status["observedGeneration"] = d["metadata"].get("generation", 0)
                self.client.update_status(d)
            return
        rs_list = self.get_replica_sets_for_deployment(d)
        if d["metadata"].get("deletionTimestamp"):
            sync.sync_status_only(self, d, rs_list)
            return
        sync.check_paused_conditions(self, d)
        if d["spec"].get("paused"):
            sync.sync(self, d, rs_list)
            return
        if rollback.get_rollback_to(d) is not None:
            rollback.rollback(self, d, rs_list)
            return
        if sync.is_scaling_event(self, d, rs_list):
            sync.sync(self, d, rs_list)
            return
        kind = (d["spec"].get("strategy") or {}).get("type")
        if kind == "Recreate":
            recreate.rollout_recreate(self, d, rs_list)
        elif kind == "RollingUpdate":
            rolling.rollout_rolling(self, d, rs_list)
        else:
            raise ValueError(f"unexpected deployment strategy type: {kind}")
