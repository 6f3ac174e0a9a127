"""The disruption controller: keep each PodDisruptionBudget's status true, so the eviction
subresource knows how many pods may go (kubernetes/kubernetes
pkg/controller/disruption/disruption.go).

One sync (sync, trySync), for one budget:
1. the pods its selector matches (getPodsForPdb; in policy/v1 an empty selector matches all);
2. expectedPods and desiredHealthy (getExpectedPodCount): an integer minAvailable counts the
   pods themselves; a percentage, or maxUnavailable, needs the scale of the pods' controllers
   (getExpectedScale, through the finders: a Deployment through its ReplicaSet, a ReplicaSet,
   else any controller's scale subresource), rounded up;
3. the pods the eviction subresource marked as going (status.disruptedPods), kept for two
   minutes (DeletionTimeout) and otherwise forgotten (buildDisruptedPodMap);
4. currentHealthy: the Ready pods that are neither being deleted nor marked (countHealthyPods);
5. disruptionsAllowed = currentHealthy - desiredHealthy (never below 0, and 0 while no pod is
   expected), with the DisruptionAllowed condition (SufficientPods / InsufficientPods), written
   only if something changed (updatePdbStatus). A failed sync writes disruptionsAllowed 0 and
   the condition SyncFailed (failSafe): when in doubt, evictions are refused.

A second loop resets a DisruptionTarget condition that an eviction left on a pod which was
then not deleted, after two minutes (syncStalePodDisruption). The recheck of a budget whose
marked pods expire is an AddAfter on the main queue (upstream: a recheck queue feeding it).
"""

from __future__ import annotations

import math
from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError, ParseError
from kubelab.api.labels import selector_from_label_selector
from kubelab.api.meta import deep_copy, get_controller_of_no_copy, parse_time, rfc3339
from kubelab.api.poddisruptionbudget import (
    DISRUPTION_ALLOWED_CONDITION,
    SYNC_FAILED_REASON,
    conditions_are_up_to_date,
    set_status_condition,
    update_disruption_allowed_condition,
)
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.delta_fifo import DeletedFinalStateUnknown
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory

__all__ = ["DELETION_TIMEOUT", "DisruptionController", "get_scaled_value_from_int_or_percent"]

DELETION_TIMEOUT = 2 * 60.0            # a marked pod should be gone within this
STALE_POD_DISRUPTION_TIMEOUT = 2 * 60.0


def get_scaled_value_from_int_or_percent(value: int | str, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent."""
    if isinstance(value, int):
        return value
    if not value.endswith("%"):
        raise ValueError("invalid value for IntOrString: invalid type: string is not a percentage")
    try:
        percent = int(value[:-1])
    except ValueError:
        raise ValueError(f'invalid value "{value}": strconv.Atoi: parsing "{value[:-1]}": '
                         "invalid syntax") from None
    scaled = percent * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def _is_pod_ready(pod: Object) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or ())


def _selector(pdb: Object) -> Any:
    return selector_from_label_selector((pdb.get("spec") or {}).get("selector"))


class DisruptionController:
    NAME = "disruption-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory) -> None:
        self.ctx, self.client, self.clock = ctx, ctx.client, ctx.clock
        self.recorder = ctx.recorder(self.NAME)
        self.controller = Controller("disruption", self.sync, ctx.clock, trace=ctx.trace,
                                     client=ctx.client, cost=ctx.sync_cost)
        self.queue = self.controller.queue
        self.stale_controller = Controller("disruption_stale_pod_disruption",
                                           self.sync_stale_pod_disruption, ctx.clock,
                                           trace=ctx.trace, client=ctx.client, cost=ctx.sync_cost)
        pod_informer = informers.informer_for("pods")
        pdb_informer = informers.informer_for("poddisruptionbudgets")
        self.pod_indexer = pod_informer.indexer
        self.pdb_indexer = pdb_informer.indexer
        self.rs_indexer = informers.informer_for("replicasets").indexer
        self.deployment_indexer = informers.informer_for("deployments").indexer
        pod_informer.add_event_handler(ResourceEventHandler(self.add_pod, self.update_pod,
                                                            self.delete_pod))
        pdb_informer.add_event_handler(ResourceEventHandler(
            self.controller.enqueue, lambda _old, cur: self.controller.enqueue(cur),
            self.controller.enqueue))

    def run(self) -> None:
        self.controller.run()
        self.stale_controller.run()

    def stop(self) -> None:
        self.controller.stop()
        self.stale_controller.stop()

    # ------------------------------------------------------------------ pods -> budgets

    def get_pdb_for_pod(self, pod: Object) -> Object | None:
        """getPdbForPod: the first budget that selects the pod (a warning if several do)."""
        pdbs = self.get_pod_pod_disruption_budgets(pod)
        if not pdbs:
            return None
        if len(pdbs) > 1:
            meta = pod["metadata"]
            self.recorder.event(pod, "Warning", "MultiplePodDisruptionBudgets",
                                f'Pod "{meta.get("namespace", "")}"/"{meta["name"]}" matches '
                                f'multiple PodDisruptionBudgets.  Chose "{pdbs[0]["metadata"]["name"]}"'
                                " arbitrarily.")
        return pdbs[0]

    def get_pod_pod_disruption_budgets(self, pod: Object) -> list[Object]:
        """PodDisruptionBudgetLister's GetPodPodDisruptionBudgets (a pod without labels has none)."""
        labels = pod["metadata"].get("labels") or {}
        if not labels:
            return []
        namespace = pod["metadata"].get("namespace", "")
        found = []
        for pdb in sorted(self.pdb_indexer.list(), key=lambda p: p["metadata"]["name"]):
            if pdb["metadata"].get("namespace", "") != namespace:
                continue
            try:
                if _selector(pdb).matches(labels):
                    found.append(pdb)
            except ParseError:
                continue
        return found

    def add_pod(self, pod: Any) -> None:
        pdb = self.get_pdb_for_pod(pod)
        if pdb is not None:
            self.controller.enqueue(pdb)
        self._enqueue_if_stale(pod)

    def update_pod(self, old: Any, cur: Any) -> None:
        pdb = self.get_pdb_for_pod(cur)
        if pdb is not None:
            self.controller.enqueue(pdb)
        self._enqueue_if_stale(cur)

    def delete_pod(self, obj: Any) -> None:
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        pdb = self.get_pdb_for_pod(pod)
        if pdb is not None:
            self.controller.enqueue(pdb)

    def _enqueue_if_stale(self, pod: Object) -> None:
        has, clean_after = self.non_terminating_pod_has_stale_disruption_condition(pod)
        if has:
            meta = pod["metadata"]
            self.stale_controller.queue.add_after(f"{meta.get('namespace', '')}/{meta['name']}",
                                                  clean_after)

    # ------------------------------------------------------------------ sync

    def get_pods_for_pdb(self, pdb: Object) -> list[Object]:
        selector = _selector(pdb)
        namespace = pdb["metadata"].get("namespace", "")
        return [p for p in self.pod_indexer.list()
                if p["metadata"].get("namespace", "") == namespace
                and selector.matches(p["metadata"].get("labels") or {})]

    def sync(self, key: str) -> None:
        pdb, exists = self.pdb_indexer.get_by_key(key)
        if not exists:
            return
        try:
            self.try_sync(pdb)
        except ApiError as err:
            if err.code == 409:
                raise  # requeued without the fail-safe
            self.fail_safe(pdb, str(err.message))
            raise
        except ValueError as err:
            self.fail_safe(pdb, str(err))
            raise

    def try_sync(self, pdb: Object) -> None:
        try:
            pods = self.get_pods_for_pdb(pdb)
        except ParseError as err:
            self.recorder.event(pdb, "Warning", "NoPods", f"Failed to get pods: {err}")
            raise ValueError(str(err)) from err
        if not pods:
            self.recorder.event(pdb, "Normal", "NoPods", "No matching pods found")
        try:
            expected, desired, unmanaged = self.get_expected_pod_count(pdb, pods)
        except (ValueError, ApiError) as err:
            message = err.message if isinstance(err, ApiError) else str(err)
            self.recorder.event(pdb, "Warning", "CalculateExpectedPodCountFailed",
                                f"Failed to calculate the number of expected pods: {message}")
            raise
        if unmanaged:
            self.recorder.event(pdb, "Warning", "UnmanagedPods", "Pods selected by this "
                                f"PodDisruptionBudget (selector: {_format_selector(pdb)}) were "
                                "found to be unmanaged. As a result, the status of the PDB cannot "
                                "be calculated correctly, which may result in undefined behavior. "
                                'To account for these pods please set ".spec.minAvailable" field '
                                "of the PDB to an integer value.")
        now = self.clock.now
        disrupted, recheck = self.build_disrupted_pod_map(pods, pdb, now)
        healthy = count_healthy_pods(pods, disrupted, now)
        self.update_pdb_status(pdb, healthy, desired, expected, disrupted)
        if recheck is not None:
            self.queue.add_after(f"{pdb['metadata'].get('namespace', '')}/{pdb['metadata']['name']}",
                                 max(0.0, recheck - now))

    def get_expected_pod_count(self, pdb: Object, pods: list[Object]) -> tuple[int, int, list[str]]:
        """getExpectedPodCount: (expectedPods, desiredHealthy, the pods without a controller)."""
        spec = pdb.get("spec") or {}
        unmanaged: list[str] = []
        expected = desired = 0
        if spec.get("maxUnavailable") is not None:
            expected, unmanaged = self.get_expected_scale(pdb, pods)
            max_unavailable = get_scaled_value_from_int_or_percent(spec["maxUnavailable"],
                                                                   expected, True)
            desired = max(0, expected - max_unavailable)
        elif spec.get("minAvailable") is not None:
            if isinstance(spec["minAvailable"], int):
                desired, expected = spec["minAvailable"], len(pods)
            else:
                expected, unmanaged = self.get_expected_scale(pdb, pods)
                desired = get_scaled_value_from_int_or_percent(spec["minAvailable"], expected, True)
        return expected, desired, unmanaged

    def get_expected_scale(self, pdb: Object, pods: list[Object]) -> tuple[int, list[str]]:
        """getExpectedScale: the sum of the scales of the pods' controllers, each counted once."""
        controller_scale: dict[str, int] = {}
        unmanaged: list[str] = []
        for pod in pods:
            ref = get_controller_of_no_copy(pod)
            if ref is None:
                unmanaged.append(pod["metadata"]["name"])
                continue
            if ref.get("uid") in controller_scale:
                continue
            namespace = pod["metadata"].get("namespace", "")
            for finder in (self.get_pod_deployment, self.get_pod_replica_set,
                           self.get_scale_controller):
                found = finder(ref, namespace)
                if found is not None:
                    controller_scale[found[0]] = found[1]
                    break
            else:
                raise ValueError(f'found no controllers for pod "{pod["metadata"]["name"]}"')
        return sum(controller_scale.values()), unmanaged

    # The finders (podControllerFinder): (uid, scale) of the controller, or None.

    def _replica_set(self, ref: dict[str, Any], namespace: str) -> Object | None:
        if ref.get("kind") != "ReplicaSet" or str(ref.get("apiVersion", "")).split("/")[0] not in (
                "apps", "extensions"):
            return None
        rs, exists = self.rs_indexer.get_by_key(f"{namespace}/{ref.get('name')}")
        return rs if exists and rs["metadata"].get("uid") == ref.get("uid") else None

    def get_pod_replica_set(self, ref: dict[str, Any], namespace: str) -> tuple[str, int] | None:
        """getPodReplicaSet: a ReplicaSet's replicas, unless a Deployment controls it."""
        rs = self._replica_set(ref, namespace)
        if rs is None:
            return None
        owner = get_controller_of_no_copy(rs)
        if owner is not None and owner.get("kind") == "Deployment":
            return None
        return rs["metadata"]["uid"], int((rs.get("spec") or {}).get("replicas", 1))

    def get_pod_deployment(self, ref: dict[str, Any], namespace: str) -> tuple[str, int] | None:
        """getPodDeployment: through the pod's ReplicaSet, its Deployment's replicas."""
        rs = self._replica_set(ref, namespace)
        if rs is None:
            return None
        owner = get_controller_of_no_copy(rs)
        if owner is None or owner.get("kind") != "Deployment":
            return None
        deployment, exists = self.deployment_indexer.get_by_key(f"{namespace}/{owner.get('name')}")
        if not exists or deployment["metadata"].get("uid") != owner.get("uid"):
            return None
        return deployment["metadata"]["uid"], int((deployment.get("spec") or {}).get("replicas", 1))

    def get_scale_controller(self, ref: dict[str, Any], namespace: str) -> tuple[str, int] | None:
        """getScaleController: any other controller that serves a scale subresource."""
        try:
            info = self.client.resource(str(ref.get("kind", "")))
            scale = self.client.get_scale(info.resource, str(ref.get("name", "")), namespace)
        except ApiError as err:
            if err.code == 404:
                return None
            raise
        if scale["metadata"].get("uid") != ref.get("uid"):
            return None
        return str(ref.get("uid")), int((scale.get("spec") or {}).get("replicas", 0))

    def build_disrupted_pod_map(self, pods: list[Object], pdb: Object,
                                now: float) -> tuple[dict[str, str], float | None]:
        """buildDisruptedPodMap: the marked pods still expected to go, and when to look again."""
        disrupted = (pdb.get("status") or {}).get("disruptedPods") or {}
        result: dict[str, str] = {}
        recheck: float | None = None
        for pod in pods:
            name = pod["metadata"]["name"]
            if pod["metadata"].get("deletionTimestamp") or name not in disrupted:
                continue
            expected_deletion = parse_time(disrupted[name]) + DELETION_TIMEOUT
            if expected_deletion < now:
                meta = pdb["metadata"]
                # (upstream's message names the namespace twice, a slip kept as it is)
                self.recorder.event(pod, "Warning", "NotDeleted", "Pod was expected by PDB "
                                    f"{meta.get('namespace', '')}/{meta.get('namespace', '')} "
                                    "to be deleted but it wasn't")
            else:
                if recheck is None or expected_deletion < recheck:
                    recheck = expected_deletion
                result[name] = disrupted[name]
        return result, recheck

    def update_pdb_status(self, pdb: Object, healthy: int, desired: int, expected: int,
                          disrupted: dict[str, str]) -> None:
        """updatePdbStatus: write the counts, if they changed."""
        allowed = healthy - desired
        if expected <= 0 or allowed <= 0:
            allowed = 0
        status = pdb.get("status") or {}
        generation = pdb["metadata"].get("generation", 0)
        if (status.get("currentHealthy", 0), status.get("desiredHealthy", 0),
                status.get("expectedPods", 0), status.get("disruptionsAllowed", 0),
                status.get("disruptedPods") or {}, status.get("observedGeneration", 0)) == \
                (healthy, desired, expected, allowed, disrupted, generation) and \
                conditions_are_up_to_date(pdb):
            return
        new = deep_copy(pdb)
        new["status"] = {"observedGeneration": generation,
                         **({"disruptedPods": disrupted} if disrupted else {}),
                         "disruptionsAllowed": allowed, "currentHealthy": healthy,
                         "desiredHealthy": desired, "expectedPods": expected,
                         "conditions": (new.get("status") or {}).get("conditions") or []}
        update_disruption_allowed_condition(new, self.clock.now)
        self.client.update_status(new)

    def fail_safe(self, pdb: Object, message: str) -> None:
        """failSafe: at least say that no disruption is allowed now."""
        new = deep_copy(pdb)
        status = new.setdefault("status", {})
        status["disruptionsAllowed"] = 0
        conditions = status.setdefault("conditions", [])
        set_status_condition(conditions, {
            "type": DISRUPTION_ALLOWED_CONDITION, "status": "False", "reason": SYNC_FAILED_REASON,
            "message": message, "observedGeneration": status.get("observedGeneration", 0)},
            self.clock.now)
        self.client.update_status(new)

    # ------------------------------------------------------------------ stale conditions

    def non_terminating_pod_has_stale_disruption_condition(self, pod: Object) -> tuple[bool, float]:
        if pod["metadata"].get("deletionTimestamp"):
            return False, 0.0
        cond = next((c for c in (pod.get("status") or {}).get("conditions") or ()
                     if c.get("type") == "DisruptionTarget"), None)
        phase = (pod.get("status") or {}).get("phase")
        if cond is None or cond.get("status") != "True" or \
                cond.get("reason") == "TerminationByKubelet" or phase in ("Succeeded", "Failed"):
            return False, 0.0
        since = self.clock.now - parse_time(cond.get("lastTransitionTime") or rfc3339(self.clock.now))
        return True, max(0.0, STALE_POD_DISRUPTION_TIMEOUT - since)

    def sync_stale_pod_disruption(self, key: str) -> None:
        """syncStalePodDisruption: DisruptionTarget back to False on a pod that stayed."""
        pod, exists = self.pod_indexer.get_by_key(key)
        if not exists:
            return
        has, clean_after = self.non_terminating_pod_has_stale_disruption_condition(pod)
        if not has:
            return
        if clean_after > 0:
            self.stale_controller.queue.add_after(key, clean_after)
            return
        new = deep_copy(pod)
        for c in new["status"]["conditions"]:
            if c.get("type") == "DisruptionTarget":
                c["status"] = "False"
                c["lastTransitionTime"] = rfc3339(self.clock.now)
                c.pop("reason", None)
                c.pop("message", None)
        self.client.update_status(new)


def count_healthy_pods(pods: list[Object], disrupted: dict[str, str], now: float) -> int:
    """countHealthyPods: Ready pods that are not going (deleted, or marked within the timeout)."""
    healthy = 0
    for pod in pods:
        if pod["metadata"].get("deletionTimestamp"):
            continue
        mark = disrupted.get(pod["metadata"]["name"])
        if mark is not None and parse_time(mark) + DELETION_TIMEOUT > now:
            continue
        if _is_pod_ready(pod):
            healthy += 1
    return healthy


def _format_selector(pdb: Object) -> str:
    return str((pdb.get("spec") or {}).get("selector"))
