"""The Job controller: run pods to completion (kubernetes/kubernetes
pkg/controller/job/job_controller.go).

One sync (syncJob), for one Job key:
1. read the Job from the cache (gone: forget it; finished: nothing to do);
2. find its pods, and the ones that finished since the last sync and still carry the
   `batch.kubernetes.io/job-tracking` finalizer (getNewFinishedPods);
3. decide whether the Job has finished: a podFailurePolicy FailJob rule matched, more failures
   than backoffLimit (BackoffLimitExceeded), active longer than activeDeadlineSeconds
   (DeadlineExceeded), or enough successes (CompletionsReached). A finish is written first as an
   interim condition (FailureTarget, SuccessCriteriaMet); Complete or Failed follow once no pod
   is left terminating or uncounted, as upstream does since 1.31;
4. if not finished, create or delete pods towards min(parallelism, remaining completions)
   (manageJob, manage_job.py), waiting out the pod-failure back-off (backoff_utils.py);
5. count finished pods exactly once: write their uids to status.uncountedTerminatedPods,
   remove their finalizers, then move them into succeeded / failed (tracking.py).

The TTL after a Job finishes is another controller, as upstream: controllers/ttlafterfinished/
"""

from __future__ import annotations

from typing import Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import deep_copy, get_controller_of_no_copy, rfc3339, split_key
from kubelab.client.component import ComponentContext
from kubelab.client.controller_loop import Controller
from kubelab.client.delta_fifo import DeletedFinalStateUnknown
from kubelab.client.shared_informer import ResourceEventHandler, SharedInformerFactory
from kubelab.controllers.controller_utils import (
    POD_CONTROLLER_UID_INDEX,
    ControllerExpectations,
    PodControl,
    add_indexer_once,
    filter_active_pods,
    is_pod_ready,
    pod_controller_uid_index_func,
    seconds,
)
from kubelab.controllers.job import manage_job, tracking
from kubelab.controllers.job.backoff_utils import BackoffStore
from kubelab.controllers.job.indexed_job_utils import get_completion_index, parse_indexes
from kubelab.controllers.job.pod_failure_policy import match_pod_failure_policy
from kubelab.controllers.job.util import (
    find_condition,
    has_job_tracking_finalizer,
    is_job_finished,
    is_pod_failed,
    new_condition,
)

__all__ = ["SYNC_JOB_BATCH_PERIOD", "JobController", "SyncJobCtx"]

SYNC_JOB_BATCH_PERIOD = 1.0  # syncJobBatchPeriod: pod events within a second make one sync
JOB_CONTROLLER_NAME = "kubernetes.io/job-controller"  # spec.managedBy of Jobs it manages


def _tombstone(obj: Any) -> Object:
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj  # type: ignore[no-any-return]


def _key(obj: Object) -> str:
    return f"{obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}"


class SyncJobCtx:
    """syncJobCtx: what one sync learned about one Job."""

    def __init__(self, job: Object, pods: list[Object]) -> None:
        self.job = job
        self.pods = pods
        self.active_pods = filter_active_pods(pods)
        self.finished_condition: Object | None = None
        self.succeeded = 0
        self.failed = 0
        self.terminating = sum(1 for p in pods if p["metadata"].get("deletionTimestamp")
                               and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed"))
        uncounted = (job.get("status") or {}).get("uncountedTerminatedPods") or {}
        self.uncounted_succeeded: set[str] = set(uncounted.get("succeeded") or ())
        self.uncounted_failed: set[str] = set(uncounted.get("failed") or ())
        self.expected_rm_finalizers: set[str] = set()
        self.prev_succeeded_indexes: set[int] = set()
        self.succeeded_indexes: set[int] = set()


class JobController:
    NAME = "job-controller"

    def __init__(self, ctx: ComponentContext, informers: SharedInformerFactory, *,
                 workers: int = 5) -> None:
        self.ctx, self.client, self.clock = ctx, ctx.client, ctx.clock
        self.recorder = ctx.recorder(self.NAME)
        self.pod_control = PodControl(ctx.client, self.recorder)
        self.expectations = ControllerExpectations(ctx.clock)
        # finalizerExpectations: per Job, the pods whose finalizer removal the cache has not
        # shown yet; they must not be counted a second time meanwhile.
        self.finalizer_expectations: dict[str, set[str]] = {}
        self.pod_backoff_store = BackoffStore()
        self.controller = Controller(self.NAME, self.sync_job, ctx.clock, workers=workers,
                                     trace=ctx.trace, client=ctx.client, cost=ctx.sync_cost)
        self.queue = self.controller.queue
        # orphanQueue: pods whose Job is gone (or finished) but which still have the finalizer.
        self.orphan_controller = Controller("job-orphan-pod", self.sync_orphan_pod, ctx.clock,
                                            trace=ctx.trace, client=ctx.client,
                                            cost=ctx.sync_cost)
        job_informer = informers.informer_for("jobs")
        pod_informer = informers.informer_for("pods")
        self.job_indexer = job_informer.indexer
        self.pod_indexer = add_indexer_once(pod_informer, POD_CONTROLLER_UID_INDEX,
                                            pod_controller_uid_index_func)
        job_informer.add_event_handler(ResourceEventHandler(self._add_job, self._update_job,
                                                            self._delete_job))
        pod_informer.add_event_handler(ResourceEventHandler(self._add_pod, self._update_pod,
                                                            lambda obj: self._delete_pod(obj, True)))

    def run(self) -> None:
        self.controller.run()
        self.orphan_controller.run()

    def stop(self) -> None:
        self.controller.stop()
        self.orphan_controller.stop()

    # ------------------------------------------------------------------ event handlers

    def enqueue_sync_job_immediately(self, job: Object) -> None:
        self.queue.add(_key(job))

    def enqueue_sync_job_batched(self, job: Object) -> None:
        self.queue.add_after(_key(job), SYNC_JOB_BATCH_PERIOD)

    def _add_job(self, job: Object) -> None:
        self.enqueue_sync_job_immediately(job)

    def _update_job(self, old: Object, cur: Object) -> None:
        if old["metadata"].get("uid") != cur["metadata"].get("uid"):
            self._delete_job(DeletedFinalStateUnknown(_key(old), old))
        if old["metadata"].get("generation") == cur["metadata"].get("generation"):
            # A status update (typically the controller's own, after pod events) is batched,
            # so a Job's syncs come at most once per syncJobBatchPeriod; a spec change syncs now.
            self.enqueue_sync_job_batched(cur)
        else:
            self.enqueue_sync_job_immediately(cur)

    def _delete_job(self, obj: Any) -> None:
        job = _tombstone(obj)
        self.enqueue_sync_job_immediately(job)
        # Its pods may still carry the finalizer: the orphan worker removes it.
        for pod in self.pod_indexer.by_index(POD_CONTROLLER_UID_INDEX, job["metadata"].get("uid", "")):
            if has_job_tracking_finalizer(pod):
                self.orphan_controller.enqueue(pod)

    def _resolve_controller_ref(self, namespace: str, ref: Object) -> Object | None:
        if ref.get("kind") != "Job":
            return None
        job, exists = self.job_indexer.get_by_key(f"{namespace}/{ref.get('name')}")
        return job if exists and job["metadata"].get("uid") == ref.get("uid") else None

    def _job_of(self, pod: Object) -> Object | None:
        ref = get_controller_of_no_copy(pod)
        if ref is None:
            return None
        return self._resolve_controller_ref(pod["metadata"].get("namespace", ""), ref)

    def _add_pod(self, pod: Object) -> None:
        if pod["metadata"].get("deletionTimestamp"):
            self._delete_pod(pod, False)  # a restarted controller may see a pod being deleted
            return
        job = self._job_of(pod)
        if job is None:
            if has_job_tracking_finalizer(pod):
                self.orphan_controller.enqueue(pod)
            return
        self.expectations.creation_observed(_key(job))
        self.enqueue_sync_job_batched(job)

    def _update_pod(self, old: Object, cur: Object) -> None:
        if old["metadata"].get("resourceVersion") == cur["metadata"].get("resourceVersion"):
            return
        if cur["metadata"].get("deletionTimestamp"):
            self._delete_pod(cur, False)  # graceful deletion starts with this update
            return
        job = self._job_of(cur)
        if job is None:
            if has_job_tracking_finalizer(cur):
                self.orphan_controller.enqueue(cur)
            return
        if has_job_tracking_finalizer(old) and not has_job_tracking_finalizer(cur):
            self.finalizer_removal_observed(_key(job), cur["metadata"]["uid"])
        self.enqueue_sync_job_batched(job)

    def _delete_pod(self, obj: Any, final: bool) -> None:
        pod = _tombstone(obj)
        job = self._job_of(pod)
        if job is None:
            if not final and has_job_tracking_finalizer(pod):
                self.orphan_controller.enqueue(pod)
            return
        key = _key(job)
        self.expectations.deletion_observed(key)
        if final or not has_job_tracking_finalizer(pod):
            self.finalizer_removal_observed(key, pod["metadata"]["uid"])
        self.enqueue_sync_job_batched(job)

    def finalizer_removal_observed(self, key: str, uid: str) -> None:
        expected = self.finalizer_expectations.get(key)
        if expected is not None:
            expected.discard(uid)

    # ------------------------------------------------------------------ orphan pods

    def sync_orphan_pod(self, key: str) -> None:
        """syncOrphanPod: remove the finalizer of a pod whose Job is gone or finished."""
        pod, exists = self.pod_indexer.get_by_key(key)
        if not exists or not has_job_tracking_finalizer(pod):
            return
        job = self._job_of(pod)
        if job is not None and not is_job_finished(job):
            return  # its Job will count it
        tracking.remove_tracking_finalizer(self, pod)

    # ------------------------------------------------------------------ sync

    def sync_job(self, key: str) -> None:
        """syncJob, in upstream's order: the Job; the expectations, then its pods; the counts;
        startTime; the finish decision; then delete pods (finished) or manage_job; status."""
        split_key(key)
        cached, exists = self.job_indexer.get_by_key(key)
        if not exists:
            self.expectations.delete_expectations(key)
            self.finalizer_expectations.pop(key, None)
            self.pod_backoff_store.remove_backoff_record(key)
            return
        managed_by = (cached.get("spec") or {}).get("managedBy")
        if managed_by not in (None, JOB_CONTROLLER_NAME):
            return  # another controller's Job (spec.managedBy)
        if is_job_finished(cached):
            return  # don't redo the termination
        job = deep_copy(cached)  # the cache's object is read-only
        job.setdefault("status", {})
        spec, status, now = job["spec"], job["status"], self.clock.now
        # The expectations before the pods: a pod created meanwhile only defers the sync.
        satisfied_expectations = self.expectations.satisfied_expectations(key)
        jctx = SyncJobCtx(job, self.pod_indexer.by_index(POD_CONTROLLER_UID_INDEX, job["metadata"]["uid"]))
        jctx.expected_rm_finalizers = set(self.finalizer_expectations.get(key, ()))
        active = len(jctx.active_pods)
        new_succeeded, new_failed = self.get_new_finished_pods(jctx)
        jctx.succeeded = int(status.get("succeeded") or 0) + len(new_succeeded) + \
            len(jctx.uncounted_succeeded)
        counted_failures = [p for p in new_failed
                            if match_pod_failure_policy(spec.get("podFailurePolicy"), p)[1]]
        jctx.failed = int(status.get("failed") or 0) + len(counted_failures) + len(jctx.uncounted_failed)
        # Job first start. Set startTime only if the Job is not suspended.
        if not status.get("startTime") and not spec.get("suspend"):
            status["startTime"] = rfc3339(now)
        new_backoff = self.pod_backoff_store.new_backoff_record(key, new_succeeded, new_failed)
        jctx.finished_condition = self.finished_condition(key, jctx)
        if spec.get("completionMode") == "Indexed":
            self.calculate_succeeded_indexes(jctx, new_succeeded)
        manage_job_err: ApiError | None = None
        if jctx.finished_condition is not None:  # remove active pods if the Job finished
            deleted, manage_job_err = manage_job.delete_active_pods(self, job, jctx.active_pods)
            active -= deleted
            jctx.terminating += deleted
        else:
            if satisfied_expectations and not job["metadata"].get("deletionTimestamp"):
                active, manage_job_err = manage_job.manage_job(self, jctx, new_backoff)
            completions = spec.get("completions")
            complete = jctx.succeeded > 0 and active == 0 if completions is None else \
                jctx.succeeded >= int(completions) and active == 0
            if complete:
                jctx.finished_condition = new_condition(
                    "SuccessCriteriaMet", "CompletionsReached",
                    "Reached expected number of succeeded pods", now)
        ready = sum(1 for p in jctx.active_pods if is_pod_ready(p))
        needs_status_update = active != status.get("active", 0) or ready != status.get("ready") or \
            jctx.terminating != status.get("terminating") or \
            status.get("startTime") != (cached.get("status") or {}).get("startTime")
        status["active"], status["ready"], status["terminating"] = active, ready, jctx.terminating
        tracking.track_job_status_and_remove_finalizers(self, jctx, needs_status_update)
        self.pod_backoff_store.update_backoff_record(new_backoff)
        if manage_job_err is not None:
            raise manage_job_err

    def finished_condition(self, key: str, jctx: SyncJobCtx) -> Object | None:
        """syncJob's finish decision. A finish an earlier sync decided (SuccessCriteriaMet,
        FailureTarget) is kept; else a podFailurePolicy FailJob rule, then backoffLimit, then
        activeDeadlineSeconds (with a sync queued for when it passes)."""
        job, now = jctx.job, self.clock.now
        spec, status = job["spec"], job["status"]
        criteria = find_condition(job, "SuccessCriteriaMet")
        if criteria is not None and criteria.get("status") == "True":
            return new_condition("Complete", criteria.get("reason", ""), criteria.get("message", ""), now)
        target = find_condition(job, "FailureTarget")
        if target is not None and target.get("status") == "True":
            return new_condition("Failed", target.get("reason", ""), target.get("message", ""), now)
        message = self.get_fail_job_message(job, jctx.pods)
        if message is not None:
            return new_condition("FailureTarget", "PodFailurePolicy", message, now)
        if jctx.failed > int(spec.get("backoffLimit", 6)) or past_backoff_limit_on_failure(job, jctx.pods):
            return new_condition("FailureTarget", "BackoffLimitExceeded",
                                 "Job has reached the specified backoff limit", now)
        if self.past_active_deadline(job):
            return new_condition("FailureTarget", "DeadlineExceeded",
                                 "Job was active longer than specified deadline", now)
        if spec.get("activeDeadlineSeconds") is not None and not spec.get("suspend"):
            started = seconds(status["startTime"])
            self.queue.add_after(key, float(spec["activeDeadlineSeconds"]) - (now - started))
        return None

    @staticmethod
    def calculate_succeeded_indexes(jctx: SyncJobCtx, new_succeeded: list[Object]) -> None:
        """calculateSucceededIndexes: status.completedIndexes plus the new successes' indexes;
        an Indexed Job's succeeded count is the number of indexes."""
        completions = int(jctx.job["spec"].get("completions") or 0)
        jctx.prev_succeeded_indexes = parse_indexes(jctx.job["status"].get("completedIndexes", ""),
                                                    completions)
        jctx.succeeded_indexes = jctx.prev_succeeded_indexes | {
            get_completion_index(p) for p in new_succeeded if 0 <= get_completion_index(p) < completions}
        jctx.succeeded = len(jctx.succeeded_indexes)

    def get_new_finished_pods(self, jctx: SyncJobCtx) -> tuple[list[Object], list[Object]]:
        """getNewFinishedPods: finished pods with the finalizer, not counted yet."""
        succeeded, failed = [], []
        for pod in jctx.pods:
            uid = pod["metadata"]["uid"]
            if not has_job_tracking_finalizer(pod) or uid in jctx.expected_rm_finalizers:
                continue
            if uid in jctx.uncounted_succeeded or uid in jctx.uncounted_failed:
                continue
            if (pod.get("status") or {}).get("phase") == "Succeeded":
                succeeded.append(pod)
            elif is_pod_failed(pod, jctx.job):
                failed.append(pod)
        return succeeded, failed

    def get_fail_job_message(self, job: Object, pods: list[Object]) -> str | None:
        """getFailJobMessage: the message of the first failed pod a FailJob rule matches."""
        policy = job["spec"].get("podFailurePolicy")
        if policy is None:
            return None
        for pod in pods:
            if is_pod_failed(pod, job):
                message, _, _ = match_pod_failure_policy(policy, pod)
                if message is not None:
                    return message
        return None

    def past_active_deadline(self, job: Object) -> bool:
        """pastActiveDeadline: running for activeDeadlineSeconds or longer."""
        deadline, start = job["spec"].get("activeDeadlineSeconds"), job["status"].get("startTime")
        if deadline is None or not start or job["spec"].get("suspend"):
            return False
        return self.clock.now - seconds(start) >= float(deadline)


def past_backoff_limit_on_failure(job: Object, pods: list[Object]) -> bool:
    """pastBackoffLimitOnFailure: with restartPolicy OnFailure the kubelet restarts containers
    in place, so the restarts of active pods count towards backoffLimit."""
    template_spec = ((job["spec"].get("template") or {}).get("spec") or {})
    if template_spec.get("restartPolicy") != "OnFailure":
        return False
    restarts = 0
    for pod in pods:
        status = pod.get("status") or {}
        if status.get("phase") in ("Running", "Pending"):
            for key in ("initContainerStatuses", "containerStatuses"):
                restarts += sum(int(cs.get("restartCount") or 0) for cs in status.get(key) or ())
    limit = int(job["spec"].get("backoffLimit", 6))
    return restarts > 0 if limit == 0 else restarts >= limit
