"""The pod-failure back-off of a Job (kubernetes/kubernetes pkg/controller/job/backoff_utils.go).

After failures, the next pod waits DEFAULT_JOB_POD_FAILURE_BACKOFF (10 s), doubled for every
failure since the last success, at most MAX_JOB_POD_FAILURE_BACKOFF (10 min, as the code says;
the documentation's "six minutes" is older). The record lives in the controller's memory, as
upstream's backoffStore does: a restarted controller starts from the pods it sees.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubelab.api import Object
from kubelab.controllers.controller_utils import seconds

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


def get_finished_time(pod: Object, now: float) -> float:
    """getFinishedTime: the last container's finishedAt, else the deletion time, else now."""
    finished = [seconds(cs["state"]["terminated"]["finishedAt"])
                for cs in (pod.get("status") or {}).get("containerStatuses") or ()
                if ((cs.get("state") or {}).get("terminated") or {}).get("finishedAt")]
    if finished:
        return max(finished)
    deleted = pod["metadata"].get("deletionTimestamp")
    return seconds(deleted) if deleted else now


class BackoffStore:
    """backoffStore: one record per Job key."""

    def __init__(self) -> None:
        self.store: dict[str, BackoffRecord] = {}

    def update_backoff_record(self, record: BackoffRecord) -> None:
        self.store[record.key] = record

    def remove_backoff_record(self, key: str) -> None:
        self.store.pop(key, None)

    def new_backoff_record(self, key: str, new_succeeded: list[Object], new_failed: list[Object],
                           now: float) -> BackoffRecord:
        """newBackoffRecord: the record after this sync's newly finished pods."""
        old = self.store.get(key) or BackoffRecord(key)
        record = BackoffRecord(key, old.failures_after_last_success, old.last_failure_time)
        failed = sorted(get_finished_time(p, now) for p in new_failed)
        if not new_succeeded:
            if failed:
                record.failures_after_last_success += len(failed)
                record.last_failure_time = failed[-1]
            return record
        record.failures_after_last_success, record.last_failure_time = 0, None
        last_success = max(get_finished_time(p, now) for p in new_succeeded)
        for failed_time in reversed(failed):
            if not failed_time > last_success:
                break
            if record.last_failure_time is None:
                record.last_failure_time = failed_time
            record.failures_after_last_success += 1
        return record
