"""The CronJob controller: create a Job at each scheduled time (kubernetes/kubernetes
pkg/controller/cronjob/cronjob_controllerv2.go, ControllerV2).

It keeps no timers of its own: each sync ends by putting the CronJob's key back on the
workqueue for 100 ms after its next scheduled time (queue.AddAfter), so on kubelab's virtual
clock a day of schedules replays in a moment. One sync (sync, syncCronJob), for one key:

1. read the CronJob and the Jobs it controls from the caches (getJobsToBeReconciled);
2. delete finished Jobs beyond successfulJobsHistoryLimit / failedJobsHistoryLimit, oldest
   first (cleanupFinishedJobs, removeOldestJobs);
3. reconcile status.active with the Jobs: drop finished ones (SawCompletedJob) and missing
   ones (MissingJob), note lastSuccessfulTime, warn of an unknown Job (UnexpectedJob);
4. unless deleted, suspended, or its time zone or schedule is invalid: find the most recent
   unmet schedule (nextScheduleTime; more than 100 missed gives the TooManyMissedTimes
   warning), skip it when it is older than startingDeadlineSeconds (MissSchedule) or already
   done, honour concurrencyPolicy (Forbid: JobAlreadyActive; Replace: delete the active Jobs),
   and create the Job named <cronjob>-<scheduled time in minutes since the epoch>
   (SuccessfulCreate), recording it in status.active and lastScheduleTime;
5. write the status once, if anything changed, and requeue for the next schedule.

The event reasons and messages are upstream's.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubelab.api import Object
from kubelab.api.cron import CronError, Schedule, load_location, parse_standard
from kubelab.api.errors import ApiError
from kubelab.api.meta import deep_copy, get_controller_of_no_copy, object_ref, parse_time, split_key
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.delta_fifo import DeletedFinalStateUnknown
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory
from kubelab.controllers.cronjob.utils import (
    MissedSchedules,
    by_job_start_time,
    delete_from_active_list,
    get_job_from_template2,
    get_time_hash_in_minutes,
    in_active_list,
    in_active_list_by_name,
    most_recent_schedule_time,
    next_schedule_time_duration,
    to_time,
)

__all__ = ["ControllerV2", "format_schedule"]

NORMAL, WARNING = "Normal", "Warning"


def _finished_status(job: Object) -> str | None:
    """getFinishedStatus: "Complete" or "Failed" once that condition is True."""
    for c in (job.get("status") or {}).get("conditions") or ():
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return str(c["type"])
    return None


def format_schedule(cj: Object, recorder: Any | None) -> str:
    """formatSchedule: a TZ in the schedule is used as it is (with a warning); otherwise the
    timeZone field becomes a TZ= prefix for the parser."""
    spec = cj.get("spec") or {}
    schedule = str(spec.get("schedule") or "")
    if "TZ" in schedule:
        if recorder is not None:
            recorder.event(cj, WARNING, "UnsupportedSchedule",
                           f'CRON_TZ or TZ used in schedule "{schedule}" is not officially '
                           "supported, see https://kubernetes.io/docs/concepts/workloads/"
                           "controllers/cron-jobs/ for more details")
        return schedule
    if spec.get("timeZone") is not None:
        try:
            load_location(spec["timeZone"])
        except CronError:
            return schedule
        return f"TZ={spec['timeZone']} {schedule}"
    return schedule


class ControllerV2:
    NAME = "cronjob-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory, *,
                 workers: int = 5) -> None:  # ConcurrentCronJobSyncs
        self.ctx, self.client, self.clock = ctx, ctx.client, ctx.clock
        self.recorder = ctx.recorder(self.NAME)
        self.controller = Controller("cronjob", self.sync_handler, ctx.clock, workers=workers,
                                     trace=ctx.trace, client=ctx.client, cost=ctx.sync_cost)
        self.queue = self.controller.queue
        job_informer = informers.informer_for("jobs")
        cron_job_informer = informers.informer_for("cronjobs")
        self.job_indexer = job_informer.indexer
        self.cron_job_indexer = cron_job_informer.indexer
        job_informer.add_event_handler(ResourceEventHandler(self.add_job, self.update_job,
                                                            self.delete_job))
        cron_job_informer.add_event_handler(ResourceEventHandler(
            self.controller.enqueue, self.update_cron_job, self.controller.enqueue))

    def run(self) -> None:
        self.controller.run()

    def stop(self) -> None:
        self.controller.stop()

    def now(self) -> datetime:
        return to_time(self.clock.now)

    # ------------------------------------------------------------------ the loop

    def sync_handler(self, key: str) -> None:
        """processNextWorkItem: an error requeues with backoff (the loop's), a requeueAfter
        forgets the key's failures and puts it back for then."""
        requeue_after, err = self.sync(key)
        if requeue_after is not None:
            self.queue.forget(key)
            self.queue.add_after(key, requeue_after)
        elif err is not None:
            raise err

    def sync(self, key: str) -> tuple[float | None, Exception | None]:
        cron_job, exists = self.cron_job_indexer.get_by_key(key)
        if not exists:
            return None, None  # deleted: nothing to requeue
        jobs = self.get_jobs_to_be_reconciled(cron_job)
        cron_job_copy = deep_copy(cron_job)  # every change, then one status update
        update_after_cleanup = self.cleanup_finished_jobs(cron_job_copy, jobs)
        try:
            requeue_after, update_after_sync = self.sync_cron_job(cron_job_copy, jobs)
            sync_err: Exception | None = None
        except _SyncError as err:
            requeue_after, update_after_sync, sync_err = None, err.update_status, err.cause
        if update_after_cleanup or update_after_sync:
            self.client.update_status(cron_job_copy)  # an error requeues with backoff
        if requeue_after is not None:
            return requeue_after, None
        return None, sync_err

    def resolve_controller_ref(self, namespace: str, ref: dict[str, Any]) -> Object | None:
        if ref.get("kind") != "CronJob":
            return None
        cron_job, exists = self.cron_job_indexer.get_by_key(f"{namespace}/{ref.get('name')}")
        if not exists or cron_job["metadata"].get("uid") != ref.get("uid"):
            return None
        return cron_job  # type: ignore[no-any-return]

    def get_jobs_to_be_reconciled(self, cron_job: Object) -> list[Object]:
        """Every Job in the namespace whose controller reference names this CronJob."""
        namespace, name = cron_job["metadata"].get("namespace", ""), cron_job["metadata"]["name"]
        jobs = []
        for job in self.job_indexer.list():
            if job["metadata"].get("namespace") != namespace:
                continue
            ref = get_controller_of_no_copy(job)
            if ref is not None and ref.get("name") == name:
                jobs.append(job)
        return jobs

    # ------------------------------------------------------------------ event handlers

    def add_job(self, job: Any) -> None:
        if job["metadata"].get("deletionTimestamp"):
            self.delete_job(job)
            return
        ref = get_controller_of_no_copy(job)
        if ref is not None:
            cron_job = self.resolve_controller_ref(job["metadata"].get("namespace", ""), ref)
            if cron_job is not None:
                self.controller.enqueue(cron_job)

    def update_job(self, old: Any, cur: Any) -> None:
        if cur["metadata"].get("resourceVersion") == old["metadata"].get("resourceVersion"):
            return
        cur_ref, old_ref = get_controller_of_no_copy(cur), get_controller_of_no_copy(old)
        namespace = cur["metadata"].get("namespace", "")
        if cur_ref != old_ref and old_ref is not None:
            cron_job = self.resolve_controller_ref(namespace, old_ref)
            if cron_job is not None:
                self.controller.enqueue(cron_job)
        if cur_ref is not None:
            cron_job = self.resolve_controller_ref(namespace, cur_ref)
            if cron_job is not None:
                self.controller.enqueue(cron_job)

    def delete_job(self, obj: Any) -> None:
        job = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        ref = get_controller_of_no_copy(job)
        if ref is None:
            return  # no controller cares about orphans being deleted
        cron_job = self.resolve_controller_ref(job["metadata"].get("namespace", ""), ref)
        if cron_job is not None:
            self.controller.enqueue(cron_job)

    def update_cron_job(self, old: Any, cur: Any) -> None:
        """updateCronJob: a new schedule or time zone requeues for its next time; any other
        change requeues now."""
        old_spec, new_spec = old.get("spec") or {}, cur.get("spec") or {}
        if old_spec.get("schedule") != new_spec.get("schedule") or \
                old_spec.get("timeZone") != new_spec.get("timeZone"):
            try:
                sched = parse_standard(format_schedule(cur, None))
            except CronError:
                self.recorder.event(cur, WARNING, "UnParseableCronJobSchedule",
                                    f"unparseable schedule for cronjob: {new_spec.get('schedule')}")
                return
            key = f"{cur['metadata'].get('namespace', '')}/{cur['metadata']['name']}"
            self.queue.add_after(key, next_schedule_time_duration(cur, self.now(), sched))
            return
        self.controller.enqueue(cur)

    # ------------------------------------------------------------------ syncCronJob

    def sync_cron_job(self, cron_job: Object, jobs: list[Object]) -> tuple[float | None, bool]:
        """syncCronJob: (requeue after, whether the status must be written). A failure raises
        _SyncError carrying both."""
        now = self.now()
        update_status = False
        namespace, name = cron_job["metadata"].get("namespace", ""), cron_job["metadata"]["name"]
        status = cron_job.setdefault("status", {})
        children = set()
        for j in jobs:
            uid = j["metadata"].get("uid")
            children.add(uid)
            found, finished = in_active_list(cron_job, uid), _finished_status(j)
            if not found and finished is None:
                try:
                    fresh = self.client.get("cronjobs", name, namespace)
                except ApiError as err:
                    raise _SyncError(err, update_status) from err
                if in_active_list(fresh, uid):
                    cron_job.clear()
                    cron_job.update(fresh)
                    status = cron_job.setdefault("status", {})
                    continue
                self.recorder.event(cron_job, WARNING, "UnexpectedJob", "Saw a job that the "
                                    f"controller did not create or forgot: {j['metadata']['name']}")
            elif found and finished is not None:
                delete_from_active_list(cron_job, uid)
                self.recorder.event(cron_job, NORMAL, "SawCompletedJob",
                                    f"Saw completed job: {j['metadata']['name']}, status: {finished}")
                update_status = True
            elif finished == "Complete":
                # A Job need not be active to count: its completion time is what matters.
                completion = (j.get("status") or {}).get("completionTime")
                if completion and (not status.get("lastSuccessfulTime") or
                                   to_time_str(completion) > to_time_str(status["lastSuccessfulTime"])):
                    status["lastSuccessfulTime"] = completion
                    update_status = True

        # An active Job that no longer exists is dropped, after asking the API server (the
        # cache may just be slow).
        for ref in list(status.get("active") or ()):
            if ref.get("uid") in children:
                continue
            try:
                self.client.get("jobs", ref.get("name", ""), ref.get("namespace", namespace))
            except ApiError as err:
                if err.code != 404:
                    raise _SyncError(err, update_status) from err
                self.recorder.event(cron_job, NORMAL, "MissingJob",
                                    f"Active job went missing: {ref.get('name')}")
                delete_from_active_list(cron_job, ref.get("uid", ""))
                update_status = True

        if cron_job["metadata"].get("deletionTimestamp"):
            return None, update_status  # being deleted: only the status
        spec = cron_job.get("spec") or {}
        if spec.get("timeZone") is not None:
            try:
                load_location(spec["timeZone"])
            except CronError as err:
                self.recorder.event(cron_job, WARNING, "UnknownTimeZone",
                                    f'invalid timeZone: "{spec["timeZone"]}": {err}')
                return None, update_status
        if spec.get("suspend"):
            return None, update_status
        try:
            sched = parse_standard(format_schedule(cron_job, self.recorder))
        except CronError as err:
            self.recorder.event(cron_job, WARNING, "UnparseableSchedule",
                                f'unparseable schedule: "{spec.get("schedule")}" : {err}')
            return None, update_status
        scheduled_time, sched_err = self.next_schedule_time(cron_job, now, sched)
        if sched_err is not None:
            self.recorder.event(cron_job, WARNING, "InvalidSchedule",
                                f"invalid schedule: {spec.get('schedule')} : {sched_err}")
            return None, update_status
        if scheduled_time is None:
            # No unmet start time: only after a restart, the queue wakes us at each schedule.
            return next_schedule_time_duration(cron_job, now, sched), update_status

        deadline = spec.get("startingDeadlineSeconds")
        if deadline is not None and (scheduled_time - now).total_seconds() + deadline < 0:
            self.recorder.event(cron_job, WARNING, "MissSchedule",
                                "Missed scheduled time to start a job: "
                                + scheduled_time.strftime("%a, %d %b %Y %H:%M:%S +0000"))
            return next_schedule_time_duration(cron_job, now, sched), update_status
        job_name = f"{name}-{get_time_hash_in_minutes(scheduled_time)}"
        last = status.get("lastScheduleTime")
        if in_active_list_by_name(cron_job, job_name, namespace) or \
                (last and to_time_str(last) == scheduled_time):
            return next_schedule_time_duration(cron_job, now, sched), update_status
        policy = spec.get("concurrencyPolicy")
        if policy == "Forbid" and status.get("active"):
            # Not seeing an active Job is possible (the caches lag), so concurrency with
            # Forbid is possible in theory, when runs are close together.
            self.recorder.event(cron_job, NORMAL, "JobAlreadyActive", "Not starting job because "
                                "prior execution is running and concurrency policy is Forbid")
            return next_schedule_time_duration(cron_job, now, sched), update_status
        if policy == "Replace":
            for ref in list(status.get("active") or ()):
                try:
                    job = self.client.get("jobs", ref.get("name", ""), ref.get("namespace", namespace))
                except ApiError as err:
                    self.recorder.event(cron_job, WARNING, "FailedGet", f"Get job: {err}")
                    raise _SyncError(err, update_status) from err
                if not self.delete_job_of(cron_job, job):
                    raise _SyncError(RuntimeError(f"could not replace job {namespace}/"
                                                  f"{job['metadata']['name']}"), update_status)
                update_status = True

        job_req = get_job_from_template2(cron_job, scheduled_time)
        try:
            job_resp = self.client.create(job_req, namespace)
            created = True
        except ApiError as err:
            if any(c.get("type") == "NamespaceTerminating"
                   for c in err.details.get("causes") or ()):
                raise _SyncError(err, update_status) from err  # every create would fail
            if err.code != 409 or err.reason != "AlreadyExists":
                self.recorder.event(cron_job, WARNING, "FailedCreate", f"Error creating job: {err}")
                raise _SyncError(err, update_status) from err
            # Created before, but the status update was lost: adopt it if it is ours.
            try:
                job_resp = self.client.get("jobs", job_req["metadata"]["name"], namespace)
            except ApiError as get_err:
                raise _SyncError(get_err, update_status) from get_err
            ref = get_controller_of_no_copy(job_resp)
            if ref is None or ref.get("uid") != cron_job["metadata"].get("uid"):
                return None, update_status  # another actor's Job: assume it updates the status
            if in_active_list(cron_job, job_resp["metadata"].get("uid", "")):
                return None, update_status
            created = False
        if created:
            self.recorder.event(cron_job, NORMAL, "SuccessfulCreate",
                                f"Created job {job_resp['metadata']['name']}")
        # The Job's name is the lock: if we crash before this status update, the next sync
        # finds the same name taken and adopts the Job instead of making a second one.
        ref = object_ref(job_resp)
        status = cron_job.setdefault("status", {})
        status["active"] = [*(status.get("active") or []),
                            {"kind": "Job", "namespace": namespace, "name": ref["name"],
                             "uid": ref["uid"], "apiVersion": "batch/v1",
                             "resourceVersion": ref["resourceVersion"]}]
        status["lastScheduleTime"] = scheduled_time.strftime("%Y-%m-%dT%H:%M:%SZ")
        return next_schedule_time_duration(cron_job, now, sched), True

    def next_schedule_time(self, cj: Object, now: datetime,
                           sched: Schedule) -> tuple[datetime | None, str | None]:
        """nextScheduleTime: the most recent unmet schedule (None if none), warning when more
        than 100 were missed."""
        _, most_recent, missed, err = most_recent_schedule_time(cj, now, sched, True)
        if most_recent is None or most_recent > now:
            return None, err
        if missed == MissedSchedules.MANY:
            self.recorder.event(cj, WARNING, "TooManyMissedTimes", "too many missed start times. "
                                "Set or decrease .spec.startingDeadlineSeconds or check clock skew")
        return most_recent, err

    # ------------------------------------------------------------------ cleanup

    def cleanup_finished_jobs(self, cj: Object, jobs: list[Object]) -> bool:
        """cleanupFinishedJobs: keep at most the history limits of finished Jobs."""
        spec = cj.get("spec") or {}
        if spec.get("failedJobsHistoryLimit") is None and spec.get("successfulJobsHistoryLimit") is None:
            return False
        successful = [j for j in jobs if _finished_status(j) == "Complete"]
        failed = [j for j in jobs if _finished_status(j) == "Failed"]
        update_status = False
        if spec.get("successfulJobsHistoryLimit") is not None and \
                self.remove_oldest_jobs(cj, successful, spec["successfulJobsHistoryLimit"]):
            update_status = True
        if spec.get("failedJobsHistoryLimit") is not None and \
                self.remove_oldest_jobs(cj, failed, spec["failedJobsHistoryLimit"]):
            update_status = True
        return update_status

    def remove_oldest_jobs(self, cj: Object, jobs: list[Object], max_jobs: int) -> bool:
        update_status = False
        to_delete = len(jobs) - max_jobs
        for job in sorted(jobs, key=by_job_start_time)[:max(0, to_delete)]:
            if self.delete_job_of(cj, job):
                update_status = True
        return update_status

    def delete_job_of(self, cj: Object, job: Object) -> bool:
        """deleteJob: the Job (its pods follow, background propagation) and its reference."""
        namespace, name = split_key(f"{job['metadata'].get('namespace', '')}/{job['metadata']['name']}")
        try:
            self.client.delete("jobs", name, namespace, propagation_policy="Background")
        except ApiError as err:
            self.recorder.event(cj, WARNING, "FailedDelete", f"Deleted job: {err}")
            return False
        delete_from_active_list(cj, job["metadata"].get("uid", ""))
        self.recorder.event(cj, NORMAL, "SuccessfulDelete", f"Deleted job {name}")
        return True


def to_time_str(stamp: str) -> datetime:
    return to_time(parse_time(stamp))


class _SyncError(Exception):
    """syncCronJob's error return, with the updateStatus it returns beside it."""

    def __init__(self, cause: Exception, update_status: bool) -> None:
        super().__init__(str(cause))
        self.cause, self.update_status = cause, update_status
