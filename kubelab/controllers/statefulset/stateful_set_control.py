"""One StatefulSet's reconciliation (kubernetes/kubernetes
pkg/controller/statefulset/stateful_set_control.go: defaultStatefulSetControl's
UpdateStatefulSet, performUpdate, getStatefulSetRevisions, updateStatefulSet, processReplica,
processCondemned, updateStatefulSetAfterInvariantEstablished, truncateHistory,
updateStatefulSetStatus, and the helpers runForAll, slowStartBatch, updateStatus,
completeRollingUpdate, inconsistentStatus; stateful_set_status_updater.go).

updateStatefulSet, for the pods the set owns:
1. split them into `replicas` (ordinals start..start+replicas-1, one slot each) and
   `condemned` (valid ordinals beyond the range, highest first); fill each empty slot with a
   pod still to be created, at the current revision below the partition, else the update one;
2. process each replica in ordinal order: recreate a Failed or Succeeded one (delete it now,
   create it at a later sync), create a missing one (its claims first), and with OrderedReady
   ("monotonic") stop at the first one that is not yet Running, Ready and Available, so pod n+1
   is created only when 0..n are; Parallel creates them all at once (slow-start batches);
3. delete the condemned pods, highest ordinal first: with OrderedReady one at a time, and only
   when every replica is healthy (scaling down waits for a broken pod to heal, unless the
   condemned pod is the first unhealthy one);
4. RollingUpdate: delete the pod with the highest ordinal >= partition that is not at the
   update revision, one at a time, waiting for each replacement to be healthy (or, with the
   MaxUnavailableStatefulSet gate, up to maxUnavailable at once); OnDelete: nothing, a pod is
   updated when someone deletes it.
The status counts the pods (replicas, ready, available, current, updated) and names the
current and update revisions; when every pod is updated and ready the update revision becomes
the current one (completeRollingUpdate).

Departures: in Parallel mode, the batches of slowStartBatch run one pod after another (upstream:
goroutines); a status write that conflicts is retried with a fresh GET, not the lister's copy
(the cache cannot change while a sync runs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kubelab.api import Object
from kubelab.api.errors import ApiError, ParseError
from kubelab.api.labels import selector_from_label_selector
from kubelab.api.meta import deep_copy
from kubelab.client.events import NORMAL, WARNING
from kubelab.controllers.history import (
    find_equal_revisions,
    new_controller_revision,
    sort_controller_revisions,
)
from kubelab.controllers.statefulset.stateful_set_utils import (
    allows_burst,
    apply_revision,
    get_ordinal,
    get_patch,
    get_pod_revision,
    get_start_ordinal,
    identity_matches,
    is_created,
    is_failed,
    is_healthy,
    is_pending,
    is_running_and_available,
    is_running_and_ready,
    is_succeeded,
    is_terminating,
    new_versioned_stateful_set_pod,
    pod_in_ordinal_range,
    storage_matches,
)

if TYPE_CHECKING:
    from kubelab.controllers.statefulset.stateful_set import StatefulSetController

__all__ = ["StatefulSetControl", "complete_rolling_update", "get_stateful_set_max_unavailable",
           "slow_start_batch", "update_status"]


def slow_start_batch(initial_batch_size: int, remaining: int,
                     fn: Callable[[int], object]) -> tuple[int, ApiError | None]:
    """slowStartBatch: call fn(0), then fn(1..2), then the next 4, ... stopping after the
    first batch with an error. Returns (successes, the first error)."""
    successes, index, batch = 0, 0, min(remaining, initial_batch_size)
    while batch > 0:
        for _ in range(batch):
            try:
                fn(index)
            except ApiError as err:
                return successes, err
            successes += 1
            index += 1
        remaining -= batch
        batch = min(2 * batch, remaining)
    return successes, None


def run_for_all(pods: list[Object], fn: Callable[[int], bool], monotonic: bool) -> bool:
    """runForAll: in order, stopping when fn says so (monotonic); else all, in batches.
    Returns whether the caller should stop; errors propagate."""
    if monotonic:
        return any(fn(i) for i in range(len(pods)))
    _, error = slow_start_batch(1, len(pods), fn)
    if error is not None:
        raise error
    return False


def update_status(status: Object, min_ready_seconds: int, current_revision: Object,
                  update_revision: Object, now: float, *pod_lists: list[Object]) -> None:
    """updateStatus / computeReplicaStatus: the counters over the given pods."""
    counts = dict.fromkeys(("replicas", "readyReplicas", "availableReplicas", "currentReplicas",
                            "updatedReplicas"), 0)
    for pods in pod_lists:
        for pod in pods:
            if is_created(pod):
                counts["replicas"] += 1
            if is_running_and_ready(pod):
                counts["readyReplicas"] += 1
                if is_running_and_available(pod, min_ready_seconds, now):
                    counts["availableReplicas"] += 1
            if is_created(pod) and not is_terminating(pod):
                revision = get_pod_revision(pod)
                if revision == current_revision["metadata"]["name"]:
                    counts["currentReplicas"] += 1
                if revision == update_revision["metadata"]["name"]:
                    counts["updatedReplicas"] += 1
    status.update(counts)


def complete_rolling_update(sts: Object, status: Object) -> None:
    """completeRollingUpdate: all pods updated and ready: the update revision is now current."""
    if (sts["spec"].get("updateStrategy") or {}).get("type") == "RollingUpdate" and \
            status["updatedReplicas"] == status["replicas"] and \
            status["readyReplicas"] == status["replicas"]:
        status["currentReplicas"] = status["updatedReplicas"]
        status["currentRevision"] = status["updateRevision"]


def inconsistent_status(sts: Object, status: Object) -> bool:
    """inconsistentStatus: does the stored status differ from the computed one?"""
    old = sts.get("status") or {}
    if status["observedGeneration"] > old.get("observedGeneration", 0):
        return True
    return any(old.get(f, 0) != status[f] for f in (
        "replicas", "currentReplicas", "readyReplicas", "updatedReplicas", "availableReplicas")) \
        or any(old.get(f, "") != status[f] for f in ("currentRevision", "updateRevision"))


def get_stateful_set_max_unavailable(max_unavailable: int | str | None, replicas: int) -> int:
    """getStatefulSetMaxUnavailable: an int, or a percentage of replicas rounded down; never < 1."""
    value = 1 if max_unavailable is None else max_unavailable
    if isinstance(value, str):
        value = int(value.rstrip("%")) * replicas // 100
    return max(int(value), 1)


def _wire_status(status: Object) -> Object:
    """StatefulSetStatus as JSON: omitempty drops the zero counters and empty revisions;
    replicas, availableReplicas and collisionCount (a pointer) are always written."""
    keep = ("replicas", "availableReplicas", "collisionCount")
    return {k: v for k, v in status.items() if k in keep or v}


class StatefulSetControl:
    """defaultStatefulSetControl, over the controller's pod control, history and clock."""

    def __init__(self, ssc: StatefulSetController, *, max_unavailable_stateful_set: bool = False) -> None:
        self.ssc, self.pod_control, self.history = ssc, ssc.pod_control, ssc.history
        self.recorder, self.clock, self.client = ssc.recorder, ssc.clock, ssc.client
        # The MaxUnavailableStatefulSet feature gate: alpha, off, in 1.34.
        self.max_unavailable_stateful_set = max_unavailable_stateful_set

    def update_stateful_set(self, sts: Object, pods: list[Object]) -> Object:
        """UpdateStatefulSet: the revisions, the pods, the status; then the history trimmed,
        even after an error (which is raised once the history is trimmed)."""
        sts = deep_copy(sts)  # a new revision changes it; the cache's copy stays as it is
        revisions = sort_controller_revisions(self.list_revisions(sts))
        current_revision, update_revision, status, error = self.perform_update(sts, pods, revisions)
        self.truncate_history(sts, pods, revisions, current_revision, update_revision)
        if error is not None:
            raise error
        return status

    def list_revisions(self, sts: Object) -> list[Object]:
        try:
            selector = selector_from_label_selector(sts["spec"].get("selector"))
        except ParseError:
            return []
        return self.history.list_controller_revisions(sts, selector)

    def adopt_orphan_revisions(self, sts: Object, revisions: list[Object]) -> None:
        for revision in revisions:
            self.history.adopt_controller_revision(sts, revision)

    def perform_update(self, sts: Object, pods: list[Object], revisions: list[Object]
                       ) -> tuple[Object, Object, Object, ApiError | None]:
        """performUpdate: the pods, then the status, which is written even when the pods'
        step failed; the first error is returned."""
        current_revision, update_revision, collision_count = \
            self.get_stateful_set_revisions(sts, revisions)
        error: ApiError | None = None
        try:
            status = self._update_stateful_set(sts, current_revision, update_revision,
                                               collision_count, pods)
        except _StatusError as err:
            status, error = err.status, err.cause
        try:
            self.update_stateful_set_status(sts, status)
        except ApiError as err:
            error = error or err
        return current_revision, update_revision, status, error

    def get_stateful_set_revisions(self, sts: Object, revisions: list[Object]
                                   ) -> tuple[Object, Object, int]:
        """getStatefulSetRevisions: the update revision is the current template's (an equal
        older revision is reused with the next number, else one is created); the current
        revision is the one status.currentRevision names, or the update one to begin with."""
        status = sts.get("status") or {}
        collision_count = [int(status.get("collisionCount") or 0)]
        next_revision = revisions[-1].get("revision", 0) + 1 if revisions else 1
        template_labels = ((sts["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {}
        update_revision = new_controller_revision(sts, template_labels, get_patch(sts),
                                                  next_revision, collision_count[0])
        annotations = sts["metadata"].get("annotations")
        if annotations:
            update_revision["metadata"]["annotations"] = dict(annotations)
        equal = find_equal_revisions(revisions, update_revision)
        if equal and revisions[-1]["metadata"]["name"] == equal[-1]["metadata"]["name"]:
            update_revision = revisions[-1]  # the newest revision is the current template
        elif equal:
            update_revision = self.history.update_controller_revision(
                equal[-1], update_revision["revision"])  # rolled back: renumber it
        else:
            update_revision = self.history.create_controller_revision(
                sts, update_revision, collision_count)
        current_revision = next((r for r in revisions
                                 if r["metadata"]["name"] == status.get("currentRevision")),
                                update_revision)
        return current_revision, update_revision, collision_count[0]

    def _update_stateful_set(self, sts: Object, current_revision: Object, update_revision: Object,
                             collision_count: int, pods: list[Object]) -> Object:
        """updateStatefulSet (see the module's docstring)."""
        current_set = apply_revision(sts, current_revision)
        update_set = apply_revision(sts, update_revision)
        min_ready, now = int(sts["spec"].get("minReadySeconds") or 0), self.clock.now
        status: Object = {"observedGeneration": sts["metadata"].get("generation", 0),
                          "currentRevision": current_revision["metadata"]["name"],
                          "updateRevision": update_revision["metadata"]["name"],
                          "collisionCount": collision_count}
        update_status(status, min_ready, current_revision, update_revision, now, pods)
        start = get_start_ordinal(sts)
        replicas: list[Object | None] = [None] * int(sts["spec"].get("replicas", 1))
        condemned: list[Object] = []
        for pod in pods:
            if pod_in_ordinal_range(pod, sts):
                replicas[get_ordinal(pod) - start] = pod
            elif get_ordinal(pod) >= 0:
                condemned.append(pod)
            # a pod whose ordinal cannot be parsed is ignored
        for i, slot in enumerate(replicas):
            if slot is None:
                replicas[i] = new_versioned_stateful_set_pod(
                    current_set, update_set, current_revision["metadata"]["name"],
                    update_revision["metadata"]["name"], start + i)
        filled: list[Object] = [p for p in replicas if p is not None]
        condemned.sort(key=get_ordinal, reverse=True)  # descendingOrdinal
        first_unhealthy: Object | None = next((p for p in filled if not is_healthy(p)), None)
        if first_unhealthy is None:
            first_unhealthy = next((p for p in reversed(condemned) if not is_healthy(p)), None)
        if sts["metadata"].get("deletionTimestamp"):
            return status
        monotonic = not allows_burst(sts)

        def finish() -> Object:
            update_status(status, min_ready, current_revision, update_revision, now, filled, condemned)
            return status

        try:
            if run_for_all(filled, lambda i: self.process_replica(
                    sts, current_set, update_set, current_revision, update_revision, monotonic,
                    filled, i), monotonic):
                return finish()
            fix_claim = self._fix_pod_claim(update_set, condemned)
            if run_for_all(condemned, fix_claim, monotonic):
                return finish()
            if run_for_all(condemned, lambda i: self.process_condemned(
                    sts, first_unhealthy, monotonic, condemned, i), monotonic):
                return finish()
        except ApiError as err:
            raise _StatusError(finish(), err) from None
        finish()
        strategy = sts["spec"].get("updateStrategy") or {}
        if strategy.get("type") == "OnDelete":
            return status
        try:
            if self.max_unavailable_stateful_set:
                return self.update_stateful_set_after_invariant_established(
                    sts, filled, update_revision, status)
            update_min = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
            for target in range(len(filled) - 1, update_min - 1, -1):
                pod = filled[target]
                if get_pod_revision(pod) != update_revision["metadata"]["name"] and \
                        not is_terminating(pod):
                    try:
                        self.pod_control.delete_stateful_pod(sts, pod)
                    except ApiError as err:
                        if err.code != 404:
                            raise
                    status["currentReplicas"] -= 1
                    return status
                if not is_healthy(pod):  # wait for the replaced pod
                    return status
        except ApiError as err:
            raise _StatusError(status, err) from None
        return status

    def _fix_pod_claim(self, update_set: Object, condemned: list[Object]) -> Callable[[int], bool]:
        """Fix the claims' owners of condemned pods (the retention policy's whenScaled)."""
        def fix(i: int) -> bool:
            if not self.pod_control.claims_match_retention_policy(update_set, condemned[i]):
                self.pod_control.update_pod_claim_for_retention_policy(update_set, condemned[i])
            return False
        return fix

    def process_replica(self, sts: Object, current_set: Object, update_set: Object,
                        current_revision: Object, update_revision: Object, monotonic: bool,
                        replicas: list[Object], i: int) -> bool:
        """processReplica: True means stop processing (wait for this pod)."""
        pod = replicas[i]
        meta = sts["metadata"]
        if is_failed(pod) or is_succeeded(pod):
            # A pod that ended (evicted, its node rebooted, ...) is made again, whatever its
            # exit code: delete it now; the new one is created at a sync after it is gone.
            if not is_terminating(pod):
                if is_failed(pod):
                    self.recorder.event(sts, WARNING, "RecreatingFailedPod",
                                        f"StatefulSet {meta.get('namespace')}/{meta['name']} is "
                                        f"recreating failed Pod {pod['metadata']['name']}")
                else:
                    self.recorder.event(sts, NORMAL, "RecreatingTerminatedPod",
                                        f"StatefulSet {meta.get('namespace')}/{meta['name']} is "
                                        f"recreating terminated Pod {pod['metadata']['name']}")
                self.pod_control.delete_stateful_pod(sts, pod)
            return True
        if not is_created(pod):
            if self.pod_control.pod_claim_is_stale(sts, pod):
                return True  # its old claim must go first
            self.pod_control.create_stateful_pod(sts, pod)
            return monotonic  # OrderedReady: one pod per sync
        if is_pending(pod):
            self.pod_control.create_persistent_volume_claims(sts, pod)
        if monotonic and is_terminating(pod):
            return True  # wait for graceful deletion to finish
        if monotonic and not is_running_and_ready(pod):
            return True  # every predecessor must be Running and Ready
        if monotonic and not is_running_and_available(pod, int(sts["spec"].get("minReadySeconds") or 0),
                                                      self.clock.now):
            return True  # ... and Available
        retention_match = self.pod_control.claims_match_retention_policy(update_set, pod)
        if identity_matches(sts, pod) and storage_matches(sts, pod) and retention_match:
            return False
        self.pod_control.update_stateful_pod(update_set, deep_copy(pod))
        return False

    def process_condemned(self, sts: Object, first_unhealthy: Object | None, monotonic: bool,
                          condemned: list[Object], i: int) -> bool:
        """processCondemned: delete one pod beyond the range; OrderedReady blocks while it is
        terminating or unhealthy (unless it is the first unhealthy pod)."""
        pod = condemned[i]
        if is_terminating(pod):
            return monotonic
        if monotonic and pod is not first_unhealthy and (
                not is_running_and_ready(pod) or not is_running_and_available(
                    pod, int(sts["spec"].get("minReadySeconds") or 0), self.clock.now)):
            return True
        self.pod_control.delete_stateful_pod(sts, pod)
        return True

    def update_stateful_set_after_invariant_established(
            self, sts: Object, replicas: list[Object], update_revision: Object, status: Object) -> Object:
        """updateStatefulSetAfterInvariantEstablished (MaxUnavailableStatefulSet): delete up to
        maxUnavailable minus the unavailable pods at once, highest ordinal first."""
        rolling = (sts["spec"].get("updateStrategy") or {}).get("rollingUpdate") or {}
        update_min = int(rolling.get("partition") or 0)
        max_unavailable = get_stateful_set_max_unavailable(rolling.get("maxUnavailable"),
                                                           int(sts["spec"].get("replicas", 1)))
        min_ready = int(sts["spec"].get("minReadySeconds") or 0)
        unavailable = sum(1 for p in replicas
                          if not is_running_and_available(p, min_ready, self.clock.now) or
                          is_terminating(p))
        if unavailable >= max_unavailable:
            return status
        to_delete, deleted = max_unavailable - unavailable, 0
        for target in range(len(replicas) - 1, update_min - 1, -1):
            if deleted >= to_delete:
                break
            pod = replicas[target]
            if get_pod_revision(pod) != update_revision["metadata"]["name"] and not is_terminating(pod):
                try:
                    self.pod_control.delete_stateful_pod(sts, pod)
                except ApiError as err:
                    if err.code != 404:
                        raise
                deleted += 1
                status["currentReplicas"] -= 1
        return status

    def update_stateful_set_status(self, sts: Object, status: Object) -> None:
        """updateStatefulSetStatus: complete a finished rolling update, and write the status
        only when it changed (realStatefulSetStatusUpdater: retried on a conflict)."""
        complete_rolling_update(sts, status)
        if not inconsistent_status(sts, status):
            return
        current = deep_copy(sts)
        for attempt in range(5):  # retry.DefaultRetry's steps
            current["status"] = _wire_status(status)
            try:
                self.client.update_status(current)
                return
            except ApiError as err:
                if err.code != 409 or attempt == 4:
                    raise
                meta = sts["metadata"]
                current = self.client.get("statefulsets", meta["name"], meta.get("namespace", "default"))

    def truncate_history(self, sts: Object, pods: list[Object], revisions: list[Object],
                         current: Object, update: Object) -> None:
        """truncateHistory: keep revisionHistoryLimit revisions that no pod runs and that are
        neither current nor the update; delete the oldest of the rest."""
        live = {current["metadata"]["name"], update["metadata"]["name"],
                *(get_pod_revision(p) for p in pods)}
        history = [r for r in revisions if r["metadata"]["name"] not in live]
        limit = int(sts["spec"].get("revisionHistoryLimit", 10))
        for revision in history[:max(0, len(history) - limit)]:
            self.history.delete_controller_revision(revision)


class _StatusError(Exception):
    """An error from updateStatefulSet, with the status it had computed so far: upstream
    returns both, and performUpdate writes the status before it returns the error."""

    def __init__(self, status: Object, cause: ApiError) -> None:
        super().__init__(cause.message)
        self.status, self.cause = status, cause
