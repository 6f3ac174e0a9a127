"""Counting a Job's finished pods exactly once (kubernetes/kubernetes pkg/controller/job/
job_controller.go trackJobStatusAndRemoveFinalizers, flushUncountedAndRemoveFinalizers,
cleanUncountedPodsWithoutFinalizers, enactJobFinished, recordJobFinished).

Every pod a Job creates carries the finalizer batch.kubernetes.io/job-tracking, so it cannot
vanish before it was counted. For the pods that finished:
1. write their uids to status.uncountedTerminatedPods (succeeded / failed);
2. remove their finalizers;
3. move the uids whose pods no longer carry the finalizer into status.succeeded / failed.
A crash between any two steps loses nothing and counts nothing twice: step 1 is in the API,
and a uid is counted only once its finalizer is gone. Indexed Jobs count succeeded indexes
instead of uids (status.completedIndexes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import deep_copy
from kubelab.client.events import NORMAL, WARNING
from kubelab.controllers.job.indexed_job_utils import format_indexes, get_completion_index
from kubelab.controllers.job.pod_failure_policy import match_pod_failure_policy
from kubelab.controllers.job.util import (
    JOB_TRACKING_FINALIZER,
    ensure_job_condition,
    find_condition,
    has_job_tracking_finalizer,
    is_pod_failed,
    new_condition,
)

if TYPE_CHECKING:
    from kubelab.controllers.job.job_controller import JobController, SyncJobCtx

__all__ = ["remove_tracking_finalizer", "track_job_status_and_remove_finalizers"]

INTERIM = ("FailureTarget", "SuccessCriteriaMet")


def remove_tracking_finalizer(jm: JobController, pod: Object) -> None:
    """removeTrackingFinalizerPatch: a strategic merge patch deleting our finalizer only."""
    meta = pod["metadata"]
    jm.client.patch("pods", meta["name"],
                    {"metadata": {"$deleteFromPrimitiveList/finalizers": [JOB_TRACKING_FINALIZER]}},
                    meta.get("namespace", "default"), patch_type="strategic")


def _can_remove_finalizer(jctx: SyncJobCtx, pod: Object, considered_failed: bool) -> bool:
    """canRemoveFinalizer: a pod that finished or is being deleted; or any pod of a Job
    that has finished for good."""
    if pod["metadata"].get("deletionTimestamp") or considered_failed or \
            (pod.get("status") or {}).get("phase") == "Succeeded":
        return True
    finished = jctx.finished_condition
    return finished is not None and finished["type"] not in INTERIM


def track_job_status_and_remove_finalizers(jm: JobController, jctx: SyncJobCtx, needs_flush: bool) -> None:
    job, spec = jctx.job, jctx.job["spec"]
    indexed = spec.get("completionMode") == "Indexed"
    completions = int(spec.get("completions") or 0)
    status = job["status"]
    uncounted = status.get("uncountedTerminatedPods") or {}
    succeeded_uids = list(uncounted.get("succeeded") or [])
    failed_uids = list(uncounted.get("failed") or [])
    to_remove: list[Object] = []
    for pod in jctx.pods:
        uid = pod["metadata"]["uid"]
        if not has_job_tracking_finalizer(pod) or uid in jctx.expected_rm_finalizers:
            continue
        considered_failed = is_pod_failed(pod, job)
        if not _can_remove_finalizer(jctx, pod, considered_failed):
            continue
        to_remove.append(pod)
        ix = get_completion_index(pod)
        if (pod.get("status") or {}).get("phase") == "Succeeded" and uid not in jctx.uncounted_failed:
            if not indexed and uid not in succeeded_uids:
                succeeded_uids.append(uid)
                needs_flush = True
        elif (considered_failed or (jctx.finished_condition is not None
                                    and jctx.finished_condition["type"] != "SuccessCriteriaMet")) \
                and uid not in failed_uids and (not indexed or 0 <= ix < completions) \
                and match_pod_failure_policy(spec.get("podFailurePolicy"), pod)[1]:
            # When the Job is finished, every pod not terminated counts as failed.
            failed_uids.append(uid)
            needs_flush = True
    if indexed:
        text = format_indexes(jctx.succeeded_indexes)
        if text != status.get("completedIndexes", ""):
            needs_flush = True
        status["succeeded"], status["completedIndexes"] = len(jctx.succeeded_indexes), text
    finished = jctx.finished_condition
    if finished is not None and finished["type"] in INTERIM and find_condition(job, finished["type"]) is None:
        status.setdefault("conditions", []).append(finished)
        needs_flush = True
    status["uncountedTerminatedPods"] = {"succeeded": succeeded_uids, "failed": failed_uids}
    if finished is not None and not succeeded_uids and not failed_uids and jctx.terminating == 0:
        needs_flush = True  # the Job can be marked finished now
    if needs_flush or to_remove:
        _flush_uncounted_and_remove_finalizers(jm, jctx, to_remove)


def _update_status(jm: JobController, job: Object) -> Object:
    uncounted = job["status"].get("uncountedTerminatedPods") or {}
    job["status"]["uncountedTerminatedPods"] = {k: v for k, v in uncounted.items() if v}
    for field in ("active", "succeeded", "failed"):  # omitempty int32s; ready is a pointer
        if not job["status"].get(field):
            job["status"].pop(field, None)
    updated = jm.client.update_status(job)
    updated.setdefault("status", {}).setdefault("uncountedTerminatedPods", {})
    return updated


def _flush_uncounted_and_remove_finalizers(jm: JobController, jctx: SyncJobCtx,
                                           to_remove: list[Object]) -> None:
    key = f"{jctx.job['metadata']['namespace']}/{jctx.job['metadata']['name']}"
    job = jctx.job = _update_status(jm, jctx.job)  # step 1: the uids are in the API
    removed: set[str] = set()
    expected = jm.finalizer_expectations.setdefault(key, set())
    error: ApiError | None = None
    for pod in to_remove:  # step 2
        uid = pod["metadata"]["uid"]
        expected.add(uid)
        try:
            remove_tracking_finalizer(jm, pod)
        except ApiError as err:
            if err.code != 404:
                expected.discard(uid)
                error = error or err
                continue
        removed.add(uid)
    # Step 3 (cleanUncountedPodsWithoutFinalizers): count what lost its finalizer.
    with_finalizer = {p["metadata"]["uid"] for p in jctx.pods if has_job_tracking_finalizer(p)} - removed
    status = job["status"]
    uncounted = status.get("uncountedTerminatedPods") or {}
    for kind, field in (("succeeded", "succeeded"), ("failed", "failed")):
        uids = list(uncounted.get(kind) or [])
        left = [u for u in uids if u in with_finalizer]
        status[field] = int(status.get(field) or 0) + len(uids) - len(left)
        uncounted[kind] = left
    status["uncountedTerminatedPods"] = uncounted
    before = deep_copy(status)
    finished = _enact_job_finished(jm, jctx)
    if status != before or removed:
        jctx.job = _update_status(jm, job)
    if finished is not None:
        _record_job_finished(jm, jctx.job, finished)
    if error is not None:
        raise error


def _enact_job_finished(jm: JobController, jctx: SyncJobCtx) -> Object | None:
    """enactJobFinished: Complete or Failed only once nothing is uncounted or terminating."""
    finished = jctx.finished_condition
    if finished is None:
        return None
    uncounted = jctx.job["status"].get("uncountedTerminatedPods") or {}
    if uncounted.get("succeeded") or uncounted.get("failed") or jctx.terminating > 0:
        return None
    now = jm.clock.now
    if finished["type"] == "FailureTarget":
        finished = new_condition("Failed", finished["reason"], finished["message"], now)
    elif finished["type"] == "SuccessCriteriaMet":
        finished = new_condition("Complete", finished["reason"], finished["message"], now)
    ensure_job_condition(jctx.job, finished)
    if finished["type"] == "Complete":
        jctx.job["status"]["completionTime"] = finished["lastTransitionTime"]
    return finished


def _record_job_finished(jm: JobController, job: Object, finished: Object) -> None:
    if finished["type"] == "Complete":
        jm.recorder.event(job, NORMAL, "Completed", "Job completed")
    else:
        jm.recorder.event(job, WARNING, finished["reason"], finished["message"])
