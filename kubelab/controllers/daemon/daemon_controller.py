"""The DaemonSet controller: one pod per eligible node (kubernetes/kubernetes
pkg/controller/daemon/daemon_controller.go).

One sync (syncDaemonSet), for one DaemonSet key:
1. read the DaemonSet and every Node from the caches (gone or being deleted: done);
2. find the ControllerRevision of the current template, creating it if needed
   (constructHistory, update.go): its name's hash becomes the pods' controller-revision-hash;
3. if the expectations are not met (pods it created or deleted that the cache has not shown
   yet), only write the status;
4. otherwise manage: for each node, podsShouldBeOnNode decides whether a daemon pod must be
   created there (nodeShouldRunDaemonPod: the node's name, the pod's node affinity and
   nodeSelector, the taints it does not tolerate) or which of its pods must go (failed ones, a
   second one, every one on a node that no longer wants it); syncNodes creates each missing pod
   with a node affinity naming its node (the default scheduler binds it) and deletes the rest;
5. with expectations met, the RollingUpdate strategy replaces old pods (update.go
   rollingUpdate: maxUnavailable, or maxSurge), and old revisions beyond
   revisionHistoryLimit are deleted (cleanupHistory);
6. write the status counters (updateDaemonSetStatus).

Events that queue a sync: any DaemonSet change, a pod of one created, changed or deleted, an
orphan that matches, a node added, or a node change that changes whether a DaemonSet should
run there (labels, taints, conditions).

Departures: the failed-pod back-off (failedPodsBackoff) is not kept: a failed daemon pod is
deleted on the next sync; ControllerRevision events queue no sync (the controller reads them
when it syncs for another reason); pods are created one slow-start batch after another, in
order, not in parallel goroutines.
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError, ParseError
from kubelab.api.labels import selector_from_label_selector
from kubelab.api.meta import deep_copy, get_controller_of_no_copy, split_key
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.delta_fifo import DeletedFinalStateUnknown
from kubelab.client.events import WARNING
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory
from kubelab.controllers.controller_ref_manager import ControllerRefManager, recheck_deletion_timestamp
from kubelab.controllers.controller_utils import (
    BURST_REPLICAS,
    POD_CONTROLLER_UID_INDEX,
    SLOW_START_INITIAL_BATCH_SIZE,
    ControllerExpectations,
    PodControl,
    add_indexer_once,
    filter_pods_by_owner,
    has_namespace_terminating_cause,
    is_pod_available,
    is_pod_ready,
    new_controller_ref,
    pod_controller_uid_index_func,
    seconds,
    slow_start_batch,
)
from kubelab.controllers.daemon.update import DaemonHistory, rolling_update
from kubelab.controllers.daemon.util import (
    CONTROLLER_REVISION_HASH,
    create_pod_template,
    get_target_node_name,
    get_template_generation,
    is_pod_updated,
    new_pod,
    node_should_run_daemon_pod,
    replace_daemon_set_pod_node_name_node_affinity,
)

__all__ = ["DaemonSetsController", "new_pod", "node_should_run_daemon_pod"]


def _tombstone(obj: Any) -> Object:
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj  # type: ignore[no-any-return]


def _key(obj: Object) -> str:
    return f"{obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}"


def _by_creation_timestamp_and_phase(pods: list[Object]) -> list[Object]:
    """podByCreationTimestampAndPhase: scheduled pods first, then the oldest, then by name."""
    return sorted(pods, key=lambda p: (not (p.get("spec") or {}).get("nodeName"),
                                       seconds(p["metadata"].get("creationTimestamp") or
                                               "1970-01-01T00:00:00Z"), p["metadata"]["name"]))


class DaemonSetsController:
    NAME = "daemonset-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory, *,
                 burst_replicas: int = 250, workers: int = 2, cost: float = 0.0) -> None:
        self.ctx, self.client, self.clock = ctx, ctx.client, ctx.clock
        self.burst_replicas = min(burst_replicas, BURST_REPLICAS)
        self.expectations = ControllerExpectations(ctx.clock)
        self.recorder = ctx.recorder(self.NAME)
        self.pod_control = PodControl(ctx.client, self.recorder)
        self.controller = Controller(self.NAME, self.sync_daemon_set, ctx.clock, workers=workers,
                                     cost=cost, trace=ctx.trace)
        self.queue = self.controller.queue
        ds_informer = informers.informer_for("daemonsets")
        pod_informer = informers.informer_for("pods")
        node_informer = informers.informer_for("nodes")
        history_informer = informers.informer_for("controllerrevisions")
        self.ds_indexer, self.node_indexer = ds_informer.indexer, node_informer.indexer
        self.pod_indexer = add_indexer_once(pod_informer, POD_CONTROLLER_UID_INDEX,
                                            pod_controller_uid_index_func)
        self.history = DaemonHistory(ctx.client, history_informer.indexer)
        ds_informer.add_event_handler(ResourceEventHandler(
            self.controller.enqueue, lambda old, cur: self.controller.enqueue(cur), self._delete_ds))
        pod_informer.add_event_handler(ResourceEventHandler(self._add_pod, self._update_pod,
                                                            self._delete_pod))
        node_informer.add_event_handler(ResourceEventHandler(self._add_node, self._update_node,
                                                             None))

    def run(self) -> None:
        self.controller.run()

    def stop(self) -> None:
        self.controller.stop()

    # ------------------------------------------------------------------ event handlers

    def _daemon_sets(self) -> list[Object]:
        return list(self.ds_indexer.list())

    def _delete_ds(self, obj: Any) -> None:
        key = _key(_tombstone(obj))
        self.expectations.delete_expectations(key)
        self.queue.add(key)

    def _resolve_controller_ref(self, namespace: str, ref: Object) -> Object | None:
        if ref.get("kind") != "DaemonSet":
            return None
        ds, exists = self.ds_indexer.get_by_key(f"{namespace}/{ref.get('name')}")
        return ds if exists and ds["metadata"].get("uid") == ref.get("uid") else None

    def _pod_daemon_sets(self, pod: Object) -> list[Object]:
        """GetPodDaemonSets: the DaemonSets of the pod's namespace whose selector matches it."""
        labels = pod["metadata"].get("labels") or {}
        out = []
        for ds in self._daemon_sets():
            if ds["metadata"].get("namespace") != pod["metadata"].get("namespace"):
                continue
            try:
                selector = selector_from_label_selector(ds["spec"].get("selector"))
            except ParseError:
                continue
            if not selector.empty() and selector.matches(labels):
                out.append(ds)
        return out

    def _add_pod(self, pod: Object) -> None:
        if pod["metadata"].get("deletionTimestamp"):
            self._delete_pod(pod)
            return
        ref = get_controller_of_no_copy(pod)
        if ref is not None:
            ds = self._resolve_controller_ref(pod["metadata"].get("namespace", ""), ref)
            if ds is not None:
                self.expectations.creation_observed(_key(ds))
                self.queue.add(_key(ds))
            return
        for ds in self._pod_daemon_sets(pod):
            self.controller.enqueue(ds)

    def _update_pod(self, old: Object, cur: Object) -> None:
        if old["metadata"].get("resourceVersion") == cur["metadata"].get("resourceVersion"):
            return
        if cur["metadata"].get("deletionTimestamp"):
            self._delete_pod(cur)
            return
        cur_ref, old_ref = get_controller_of_no_copy(cur), get_controller_of_no_copy(old)
        namespace = cur["metadata"].get("namespace", "")
        if cur_ref != old_ref and old_ref is not None:
            ds = self._resolve_controller_ref(namespace, old_ref)
            if ds is not None:
                self.controller.enqueue(ds)
        if cur_ref is not None:
            ds = self._resolve_controller_ref(namespace, cur_ref)
            if ds is None:
                return
            self.controller.enqueue(ds)
            min_ready = int(ds["spec"].get("minReadySeconds") or 0)
            if min_ready > 0 and not is_pod_ready(old) and is_pod_ready(cur):
                self.queue.add_after(_key(ds), min_ready + 1)
            return
        if old["metadata"].get("labels") != cur["metadata"].get("labels") or cur_ref != old_ref:
            for ds in self._pod_daemon_sets(cur):
                self.controller.enqueue(ds)

    def _delete_pod(self, obj: Any) -> None:
        pod = _tombstone(obj)
        ref = get_controller_of_no_copy(pod) if pod else None
        if ref is None:
            return
        ds = self._resolve_controller_ref(pod["metadata"].get("namespace", ""), ref)
        if ds is not None:
            self.expectations.deletion_observed(_key(ds))
            self.queue.add(_key(ds))

    def _add_node(self, node: Object) -> None:
        for ds in self._daemon_sets():
            if node_should_run_daemon_pod(node, ds)[0]:
                self.controller.enqueue(ds)

    @staticmethod
    def _should_ignore_node_update(old: Object, cur: Object) -> bool:
        """shouldIgnoreNodeUpdate: nothing a DaemonSet looks at changed (heartbeats aside)."""
        def view(node: Object) -> Any:
            conditions = sorted((c.get("type"), c.get("status"))
                                for c in (node.get("status") or {}).get("conditions") or [])
            return node["metadata"].get("labels"), node.get("spec"), conditions
        return bool(view(old) == view(cur))

    def _update_node(self, old: Object, cur: Object) -> None:
        daemon_sets = self._daemon_sets()
        if not daemon_sets or self._should_ignore_node_update(old, cur):
            return
        for ds in daemon_sets:
            if node_should_run_daemon_pod(old, ds) != node_should_run_daemon_pod(cur, ds):
                self.controller.enqueue(ds)

    # ------------------------------------------------------------------ sync

    def sync_daemon_set(self, key: str) -> None:
        split_key(key)
        ds, exists = self.ds_indexer.get_by_key(key)
        if not exists:
            self.expectations.delete_expectations(key)
            return
        nodes = sorted(self.node_indexer.list(), key=lambda n: n["metadata"]["name"])
        if ds["metadata"].get("deletionTimestamp"):
            return
        cur, old = self.history.construct_history(ds)
        hash_ = (cur["metadata"].get("labels") or {}).get(CONTROLLER_REVISION_HASH, "")
        if not self.expectations.satisfied_expectations(key):
            self.update_daemon_set_status(ds, nodes, hash_, update_observed_gen=False)
            return
        error: ApiError | None = None
        try:
            self.update_daemon_set(ds, nodes, hash_, key, old)
        except ApiError as err:
            error = err
        self.update_daemon_set_status(ds, nodes, hash_, update_observed_gen=True)
        if error is not None:
            raise error

    def update_daemon_set(self, ds: Object, nodes: list[Object], hash_: str, key: str,
                          old: list[Object]) -> None:
        self.manage(ds, nodes, hash_)
        if self.expectations.satisfied_expectations(key) and \
                (ds["spec"].get("updateStrategy") or {}).get("type") == "RollingUpdate":
            rolling_update(self, ds, nodes, hash_)
        self.history.cleanup_history(ds, old, self._daemon_pods(ds))

    def _daemon_pods(self, ds: Object) -> list[Object]:
        """getDaemonPods: claim (adopt and release) the pods the selector matches."""
        try:
            selector = selector_from_label_selector(ds["spec"].get("selector"))
        except ParseError:
            return []
        meta = ds["metadata"]

        def fresh() -> Object:
            latest = self.client.get("daemonsets", meta["name"], meta.get("namespace", "default"))
            if latest["metadata"].get("uid") != meta["uid"]:
                raise ApiError(409, "Conflict", f"original DaemonSet {meta.get('namespace')}/"
                               f"{meta['name']} is gone: got uid {latest['metadata'].get('uid')}, "
                               f"wanted {meta['uid']}")
            return latest
        manager = ControllerRefManager(self.client, ds, selector, "pods",
                                       recheck_deletion_timestamp(fresh))
        return manager.claim(filter_pods_by_owner(self.pod_indexer, ds))

    def get_nodes_to_daemon_pods(self, ds: Object, include_deleted_terminal: bool = False
                                 ) -> dict[str, list[Object]]:
        """getNodesToDaemonPods: node name -> its daemon pods, oldest first."""
        out: dict[str, list[Object]] = {}
        for pod in self._daemon_pods(ds):
            terminal = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
            if not include_deleted_terminal and terminal and pod["metadata"].get("deletionTimestamp"):
                continue
            node = get_target_node_name(pod)
            if node is not None:
                out.setdefault(node, []).append(pod)
        return {n: _by_creation_timestamp_and_phase(pods) for n, pods in out.items()}

    def manage(self, ds: Object, nodes: list[Object], hash_: str) -> None:
        node_to_daemon_pods = self.get_nodes_to_daemon_pods(ds)
        nodes_needing: list[str] = []
        pods_to_delete: list[str] = []
        for node in nodes:
            needing, delete = self.pods_should_be_on_node(node, node_to_daemon_pods, ds, hash_)
            nodes_needing += needing
            pods_to_delete += delete
        # getUnscheduledPodsWithoutNode: pods bound to nowhere, aimed at a node that is gone.
        names = {n["metadata"]["name"] for n in nodes}
        for node_name, pods in sorted(node_to_daemon_pods.items()):
            if node_name not in names:
                pods_to_delete += [p["metadata"]["name"] for p in pods
                                   if not (p.get("spec") or {}).get("nodeName")]
        self.sync_nodes(ds, pods_to_delete, nodes_needing, hash_)

    def pods_should_be_on_node(self, node: Object, node_to_daemon_pods: dict[str, list[Object]],
                               ds: Object, hash_: str) -> tuple[list[str], list[str]]:
        """podsShouldBeOnNode: (the node, if it needs a daemon pod; the pods to delete there)."""
        name = node["metadata"]["name"]
        should_run, should_continue = node_should_run_daemon_pod(node, ds)
        pods = node_to_daemon_pods.get(name)
        needing: list[str] = []
        delete: list[str] = []
        if should_run and not pods:
            needing.append(name)
        elif should_continue and pods:
            running = []
            for pod in pods:
                if pod["metadata"].get("deletionTimestamp"):
                    continue
                if (pod.get("status") or {}).get("phase") == "Failed":
                    self.recorder.event(ds, WARNING, "FailedDaemonPod",
                                        f"Found failed daemon pod {pod['metadata'].get('namespace')}/"
                                        f"{pod['metadata']['name']} on node {name}, will try to kill it")
                    delete.append(pod["metadata"]["name"])
                else:
                    running.append(pod)
            if not _allows_surge(ds):
                # More than one running pod on a node: keep the oldest.
                delete += [p["metadata"]["name"] for p in _by_creation_timestamp_and_phase(running)[1:]]
            elif len(running) <= 1:
                if not running and should_run:
                    needing.append(name)
            else:
                delete += self._surge_pods_to_delete(ds, running, hash_)
        elif not should_continue and pods:
            delete += [p["metadata"]["name"] for p in pods if not p["metadata"].get("deletionTimestamp")]
        return needing, delete

    def _surge_pods_to_delete(self, ds: Object, running: list[Object], hash_: str) -> list[str]:
        """Surging: keep the oldest new pod, and the oldest old one while the new one is not
        available yet (an unready old pod goes at once); every other pod is deleted."""
        oldest_new = oldest_old = None
        delete = []
        for pod in _by_creation_timestamp_and_phase(running):
            if (pod["metadata"].get("labels") or {}).get(CONTROLLER_REVISION_HASH) == hash_:
                if oldest_new is None:
                    oldest_new = pod
                    continue
            elif oldest_old is None:
                oldest_old = pod
                continue
            delete.append(pod["metadata"]["name"])
        if oldest_new is not None and oldest_old is not None and (
                not is_pod_ready(oldest_old) or
                is_pod_available(oldest_new, int(ds["spec"].get("minReadySeconds") or 0), self.clock.now)):
            delete.append(oldest_old["metadata"]["name"])
        return delete

    def sync_nodes(self, ds: Object, pods_to_delete: list[str], nodes_needing: list[str],
                   hash_: str) -> None:
        """syncNodes: create a pod for each node that needs one (slow start), delete the rest."""
        key, namespace = _key(ds), ds["metadata"].get("namespace", "default")
        create_diff = min(len(nodes_needing), self.burst_replicas)
        delete_diff = min(len(pods_to_delete), self.burst_replicas)
        nodes_needing, pods_to_delete = nodes_needing[:create_diff], pods_to_delete[:delete_diff]
        self.expectations.set_expectations(key, create_diff, delete_diff)
        template = create_pod_template(ds["spec"].get("template") or {}, get_template_generation(ds),
                                       hash_)
        ref = new_controller_ref(ds)
        targets = iter(nodes_needing)
        errors: list[ApiError] = []

        def create() -> None:
            pod_template = deep_copy(template)
            spec = pod_template["spec"]
            spec["affinity"] = replace_daemon_set_pod_node_name_node_affinity(spec.get("affinity"),
                                                                              next(targets))
            try:
                self.pod_control.create_pods(namespace, pod_template, ds, ref)
            except ApiError as err:
                if not has_namespace_terminating_cause(err):
                    raise
        created, error = slow_start_batch(create_diff, SLOW_START_INITIAL_BATCH_SIZE, create)
        for _ in range(create_diff - created):
            self.expectations.creation_observed(key)
        if error is not None:
            errors.append(error)
        for name in pods_to_delete:
            try:
                self.pod_control.delete_pod(namespace, name, ds)
            except ApiError as err:
                self.expectations.deletion_observed(key)
                if err.code != 404:
                    errors.append(err)
        if errors:
            raise errors[0]

    # ------------------------------------------------------------------ status

    def update_daemon_set_status(self, ds: Object, nodes: list[Object], hash_: str, *,
                                 update_observed_gen: bool) -> None:
        node_to_daemon_pods = self.get_nodes_to_daemon_pods(ds)
        min_ready = int(ds["spec"].get("minReadySeconds") or 0)
        generation = get_template_generation(ds)
        desired = current = misscheduled = ready = updated = available = 0
        for node in nodes:
            should_run, _ = node_should_run_daemon_pod(node, ds)
            pods = node_to_daemon_pods.get(node["metadata"]["name"])
            if not should_run:
                misscheduled += 1 if pods else 0
                continue
            desired += 1
            if not pods:
                continue
            current += 1
            pod = pods[0]
            if is_pod_ready(pod):
                ready += 1
                if is_pod_available(pod, min_ready, self.clock.now):
                    available += 1
            if is_pod_updated(pod, hash_, generation):
                updated += 1
        counts = {"desiredNumberScheduled": desired, "currentNumberScheduled": current,
                  "numberMisscheduled": misscheduled, "numberReady": ready,
                  "updatedNumberScheduled": updated, "numberAvailable": available,
                  "numberUnavailable": desired - available}
        self._store_daemon_set_status(ds, counts, update_observed_gen)
        if min_ready > 0 and ready != available:
            self.queue.add_after(_key(ds), min_ready)

    def _store_daemon_set_status(self, ds: Object, counts: dict[str, int],
                                 update_observed_gen: bool) -> None:
        """storeDaemonSetStatus: nothing to write when the counters and observedGeneration
        already say so; else an update of status, with a fresh GET and a retry on failure."""
        status = ds.get("status") or {}
        generation = ds["metadata"].get("generation", 0)
        if all(status.get(k, 0) == v for k, v in counts.items()) and \
                status.get("observedGeneration", 0) >= generation:
            return
        current = deep_copy(ds)
        for attempt in range(2):
            new_status = {**(current.get("status") or {}), **counts}
            if update_observed_gen:
                new_status["observedGeneration"] = generation
            for field in ("numberAvailable", "numberUnavailable", "updatedNumberScheduled"):
                if not new_status.get(field):
                    new_status.pop(field, None)  # omitempty
            current["status"] = new_status
            try:
                self.client.update_status(current)
                return
            except ApiError as err:
                if attempt == 1 or err.code == 404:
                    raise
                meta = ds["metadata"]
                current = self.client.get("daemonsets", meta["name"], meta.get("namespace", "default"))


def _allows_surge(ds: Object) -> bool:
    """util.AllowsSurge: a RollingUpdate strategy with a maxSurge that is not zero."""
    strategy = ds["spec"].get("updateStrategy") or {}
    surge = (strategy.get("rollingUpdate") or {}).get("maxSurge")
    return strategy.get("type") == "RollingUpdate" and surge not in (None, 0, "0", "0%")
