"""The pod-failure back-off of a Job (kubernetes/kubernetes pkg/controller/job/backoff_utils.go).

After failures, the next pod waits DEFAULT_JOB_POD_FAILURE_BACKOFF (10 s), doubled for every
failure since the last success, at most MAX_JOB_POD_FAILURE_BACKOFF (10 min, as the code says;
the documentation's "six minutes" is older). The record lives in the controller's memory, as
upstream's backoffStore does: a restarted controller starts from the pods it sees.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kubelab.api import Object
from kubelab.controllers.controller_utils import get_pod_ready_condition, seconds

__all__ = ["DEFAULT_JOB_POD_FAILURE_BACKOFF", "MAX_JOB_POD_FAILURE_BACKOFF", "BackoffRecord",
           "BackoffStore", "get_finished_time"]

DEFAULT_JOB_POD_FAILURE_BACKOFF = 10.0
MAX_JOB_POD_FAILURE_BACKOFF = 10 * 60.0


@dataclass
class BackoffRecord:
    key: str
    failures_after_last_success: int = 0
    last_failure_time: float | None = None

    def get_remaining_time(self, now: float, default_backoff: float = DEFAULT_JOB_POD_FAILURE_BACKOFF,
                           max_backoff: float = MAX_JOB_POD_FAILURE_BACKOFF) -> float:
        """getRemainingTimeForFailuresCount: how long the next pod must still wait."""
        if self.failures_after_last_success == 0 or self.last_failure_time is None:
            return 0.0
        backoff = default_backoff
        for _ in range(1, self.failures_after_last_success):
            backoff *= 2
            if backoff >= max_backoff:
                backoff = max_backoff
                break
        elapsed = now - self.last_failure_time
        return 0.0 if backoff < elapsed else backoff - elapsed


def get_finished_time(pod: Object) -> float:
    """getFinishedTime, in this order: the latest finishedAt when every container has finished
    (sidecars included: they stop last); else the Ready=False condition's lastTransitionTime
    (the kubelet sets it as the pod turns terminal); else the deletion time less the grace
    period (PodGC deletes orphaned pods); else, which should not happen, the creation time."""
    for finish_time in (_get_finish_time_from_containers(pod),
                        _get_finish_time_from_pod_ready_false_condition(pod),
                        _get_finish_time_from_deletion_timestamp(pod)):
        if finish_time is not None:
            return finish_time
    created = pod["metadata"].get("creationTimestamp")
    return seconds(created) if created else 0.0  # metav1.Time's zero value, in virtual time


def _get_finish_time_from_containers(pod: Object) -> float | None:
    status = pod.get("status") or {}
    finish_time = _latest_finish_time(None, status.get("containerStatuses") or ())
    # SidecarContainers (on in 1.34): restartable init containers finish after the others.
    sidecars = {c.get("name") for c in (pod.get("spec") or {}).get("initContainers") or ()
                if c.get("restartPolicy") == "Always"}
    return _latest_finish_time(finish_time, [cs for cs in status.get("initContainerStatuses") or ()
                                             if cs.get("name") in sidecars])


def _latest_finish_time(prev: float | None, statuses: Iterable[Object]) -> float | None:
    """latestFinishTime: None as soon as one of the containers has not finished."""
    finish_time = prev
    for cs in statuses:
        finished_at = ((cs.get("state") or {}).get("terminated") or {}).get("finishedAt")
        if not finished_at:
            return None
        if finish_time is None or finish_time < seconds(finished_at):
            finish_time = seconds(finished_at)
    return finish_time


def _get_finish_time_from_pod_ready_false_condition(pod: Object) -> float | None:
    condition = get_pod_ready_condition(pod)
    if condition is not None and condition.get("status") == "False" and \
            condition.get("lastTransitionTime"):
        return seconds(condition["lastTransitionTime"])
    return None


def _get_finish_time_from_deletion_timestamp(pod: Object) -> float | None:
    deleted = pod["metadata"].get("deletionTimestamp")
    if deleted:
        return seconds(deleted) - float(pod["metadata"].get("deletionGracePeriodSeconds") or 0)
    return None


class BackoffStore:
    """backoffStore: one record per Job key."""

    def __init__(self) -> None:
        self.store: dict[str, BackoffRecord] = {}

    def update_backoff_record(self, record: BackoffRecord) -> None:
        self.store[record.key] = record

    def remove_backoff_record(self, key: str) -> None:
        self.store.pop(key, None)

    def new_backoff_record(self, key: str, new_succeeded: list[Object],
                           new_failed: list[Object]) -> BackoffRecord:
        """newBackoffRecord: the record after this sync's newly finished pods."""
        old = self.store.get(key) or BackoffRecord(key)
        record = BackoffRecord(key, old.failures_after_last_success, old.last_failure_time)
        failed = sorted(get_finished_time(p) for p in new_failed)
        if not new_succeeded:
            if failed:
                record.failures_after_last_success += len(failed)
                record.last_failure_time = failed[-1]
            return record
        record.failures_after_last_success, record.last_failure_time = 0, None
        last_success = max(get_finished_time(p) for p in new_succeeded)
        for failed_time in reversed(failed):
            if not failed_time > last_success:
                break
            if record.last_failure_time is None:
                record.last_failure_time = failed_time
            record.failures_after_last_success += 1
        return record
