"""Small helpers of the Job controller (kubernetes/kubernetes pkg/controller/job/utils.go and
the condition helpers of job_controller.go)."""

from __future__ import annotations

from kubelab.api import Object
from kubelab.api.meta import rfc3339

__all__ = ["JOB_TRACKING_FINALIZER", "ensure_job_condition", "find_condition", "has_job_tracking_finalizer",
           "is_job_finished", "is_pod_failed", "new_condition", "only_replace_failed_pods"]

# pkg/apis/batch/types.go: a pod the Job controller has not counted yet keeps this finalizer,
# so its deletion cannot make the Job lose track of a success or a failure.
JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"


def find_condition(job: Object, kind: str) -> Object | None:
    for condition in (job.get("status") or {}).get("conditions") or ():
        if condition.get("type") == kind:
            return condition  # type: ignore[no-any-return]
    return None


def is_job_finished(job: Object) -> bool:
    """IsJobFinished: a Complete or Failed condition that is True."""
    return any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
               for c in (job.get("status") or {}).get("conditions") or ())


def new_condition(kind: str, reason: str, message: str, now: float, status: str = "True") -> Object:
    stamp = rfc3339(now)
    return {"type": kind, "status": status, "lastProbeTime": stamp, "lastTransitionTime": stamp,
            "reason": reason, "message": message}


def ensure_job_condition(job: Object, condition: Object) -> bool:
    """ensureJobConditionStatus: add the condition, or update one of its type whose status
    differs (lastTransitionTime then changes). True if anything changed."""
    conditions = job["status"].setdefault("conditions", [])
    for i, existing in enumerate(conditions):
        if existing.get("type") == condition["type"]:
            if existing.get("status") == condition["status"]:
                return False
            conditions[i] = condition
            return True
    conditions.append(condition)
    return True


def has_job_tracking_finalizer(pod: Object) -> bool:
    return JOB_TRACKING_FINALIZER in (pod["metadata"].get("finalizers") or ())


def only_replace_failed_pods(job: Object) -> bool:
    """onlyReplaceFailedPods: podReplacementPolicy Failed (the default with a podFailurePolicy)."""
    spec = job.get("spec") or {}
    return spec.get("podReplacementPolicy") == "Failed" or spec.get("podFailurePolicy") is not None


def is_pod_failed(pod: Object, job: Object) -> bool:
    """isPodFailed: Failed; or, unless only failed pods are replaced, being deleted before it
    succeeded (an orphan may never reach Failed)."""
    phase = (pod.get("status") or {}).get("phase")
    if phase == "Failed":
        return True
    if only_replace_failed_pods(job):
        return False
    return bool(pod["metadata"].get("deletionTimestamp")) and phase != "Succeeded"
