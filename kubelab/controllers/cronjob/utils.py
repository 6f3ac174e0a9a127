"""What the CronJob controller computes about times and Jobs (kubernetes/kubernetes
pkg/controller/cronjob/utils.go): inActiveList, inActiveListByName, deleteFromActiveList,
mostRecentScheduleTime (with its count of missed schedules), nextScheduleTimeDuration,
nextScheduleTime, getJobFromTemplate2 and getTimeHashInMinutes, byJobStartTime.

Times are timezone-aware datetimes here, as Go's time.Time: the controller turns the virtual
clock's seconds into them (kubelab.api.meta.epoch() + seconds) and back.
"""

from __future__ import annotations

import enum
from datetime import datetime, timedelta
from typing import Any

from kubelab.api import Object
from kubelab.api.cron import Schedule, load_location
from kubelab.api.meta import deep_copy, epoch, parse_time

__all__ = ["CRON_JOB_SCHEDULED_TIMESTAMP_ANNOTATION", "NEXT_SCHEDULE_DELTA", "MissedSchedules",
           "by_job_start_time", "delete_from_active_list", "get_job_from_template2",
           "get_time_hash_in_minutes", "in_active_list", "in_active_list_by_name",
           "most_recent_schedule_time", "next_schedule_time_duration", "to_seconds", "to_time"]

# batchv1.CronJobScheduledTimestampAnnotation (feature CronJobsScheduledAnnotation, on by default)
CRON_JOB_SCHEDULED_TIMESTAMP_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp"
# nextScheduleDelta: requeue 100 ms after the next schedule, for clock skew.
NEXT_SCHEDULE_DELTA = 0.1


class MissedSchedules(enum.Enum):
    """missedSchedulesType."""
    NONE = "none"
    FEW = "few"
    MANY = "many"


def to_time(seconds: float) -> datetime:
    """Virtual seconds as a time.Time (UTC)."""
    return epoch() + timedelta(seconds=seconds)


def to_seconds(t: datetime) -> float:
    return (t - epoch()).total_seconds()


def _status(cj: Object) -> dict[str, Any]:
    return cj.get("status") or {}


def in_active_list(cj: Object, uid: str) -> bool:
    return any(j.get("uid") == uid for j in _status(cj).get("active") or ())


def in_active_list_by_name(cj: Object, name: str, namespace: str) -> bool:
    return any(j.get("name") == name and j.get("namespace") == namespace
               for j in _status(cj).get("active") or ())


def delete_from_active_list(cj: Object, uid: str) -> None:
    status = cj.setdefault("status", {})
    status["active"] = [j for j in status.get("active") or () if j.get("uid") != uid]


def most_recent_schedule_time(cj: Object, now: datetime, schedule: Schedule,
                              include_starting_deadline_seconds: bool,
                              ) -> tuple[datetime, datetime | None, MissedSchedules, str | None]:
    """mostRecentScheduleTime: (the last schedule time or the creation time, the most recent
    time a Job should have been created or None if that is after now, how many schedules were
    missed, an error when two schedules are less than a second apart: February 30th)."""
    meta, spec = cj["metadata"], cj.get("spec") or {}
    earliest = to_time(parse_time(meta["creationTimestamp"]))
    missed = MissedSchedules.NONE
    if _status(cj).get("lastScheduleTime"):
        earliest = to_time(parse_time(_status(cj)["lastScheduleTime"]))
    deadline = spec.get("startingDeadlineSeconds")
    if include_starting_deadline_seconds and deadline is not None:
        # The controller is not going to schedule anything before this point.
        scheduling_deadline = now - timedelta(seconds=deadline)
        if scheduling_deadline > earliest:
            earliest = scheduling_deadline
    t1 = schedule.next(earliest)
    t2 = schedule.next(t1)
    if now < t1:
        return earliest, None, missed, None
    if now < t2:
        return earliest, t1, missed, None
    between = round((t2 - t1).total_seconds())
    if between < 1:
        return earliest, None, missed, "time difference between two schedules is less than 1 second"
    # A rough count: how many intervals of t2 - t1 fit between t1 and now.
    elapsed = int((now - t1).total_seconds())
    number_missed = elapsed // between + 1
    # Start one interval early, and let the schedule find the exact times (for schedules
    # whose intervals differ, such as "30 6-16/4 * * 1-5").
    most_recent: datetime | None = None
    t = schedule.next(t1 + timedelta(seconds=(number_missed - 1 - 1) * between))
    while t <= now:
        most_recent = t
        t = schedule.next(t)
    if number_missed > 100:
        missed = MissedSchedules.MANY
    elif number_missed > 0:
        missed = MissedSchedules.FEW
    return earliest, most_recent, missed, None


def next_schedule_time_duration(cj: Object, now: datetime, schedule: Schedule) -> float:
    """nextScheduleTimeDuration: seconds until 100 ms after the next schedule."""
    earliest, most_recent, missed, err = most_recent_schedule_time(cj, now, schedule, False)
    if err is not None:
        most_recent = now  # requeue at some point: the next slot from now
    elif most_recent is None:
        most_recent = earliest if missed == MissedSchedules.NONE else now
    return (schedule.next(most_recent) - now).total_seconds() + NEXT_SCHEDULE_DELTA


def get_time_hash_in_minutes(scheduled: datetime) -> int:
    """getTimeHashInMinutes: Unix time in minutes, the suffix of a Job's name."""
    return int(scheduled.timestamp()) // 60


def _rfc3339_in(t: datetime) -> str:
    """Go's time.RFC3339 of t in its zone: "Z" for a zero offset, "+01:00" otherwise."""
    text = t.replace(microsecond=0).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def get_job_from_template2(cj: Object, scheduled: datetime) -> Object:
    """getJobFromTemplate2: the Job for one scheduled time, named after it in minutes, owned
    by the CronJob, with the scheduled time (in the CronJob's zone) as an annotation."""
    template = (cj.get("spec") or {}).get("jobTemplate") or {}
    template_meta = template.get("metadata") or {}
    meta = cj["metadata"]
    annotations = dict(template_meta.get("annotations") or {})
    location = load_location((cj.get("spec") or {}).get("timeZone") or "")
    annotations[CRON_JOB_SCHEDULED_TIMESTAMP_ANNOTATION] = _rfc3339_in(scheduled.astimezone(location))
    job_meta: dict[str, Any] = {"name": f"{meta['name']}-{get_time_hash_in_minutes(scheduled)}"}
    if template_meta.get("labels"):
        job_meta["labels"] = dict(template_meta["labels"])
    job_meta["annotations"] = annotations
    job_meta["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "CronJob",
                                    "name": meta["name"], "uid": meta["uid"], "controller": True,
                                    "blockOwnerDeletion": True}]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": job_meta,
            "spec": deep_copy(template.get("spec") or {})}


def by_job_start_time(job: Object) -> tuple[int, float, str]:
    """byJobStartTime as a sort key: by status.startTime (jobs without one last), then name."""
    start = (job.get("status") or {}).get("startTime")
    return (1, 0.0, job["metadata"]["name"]) if not start else \
        (0, parse_time(start), job["metadata"]["name"])
