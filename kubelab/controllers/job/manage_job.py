"""manageJob: create or delete a Job's pods (kubernetes/kubernetes pkg/controller/job/
job_controller.go manageJob, activePodsForRemoval, deleteJobPods, deleteActivePods, and
indexed_job_utils.go firstPendingIndexes, appendDuplicatedIndexPodsForRemoval).

Active pods should number min(parallelism, completions - succeeded) (parallelism alone without
completions, until one succeeds). Creates come in slow-start batches, at most 500 per sync, and
wait for the pod-failure back-off.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubelab.api import Object
from kubelab.api.errors import ApiError
from kubelab.api.meta import deep_copy
from kubelab.client.events import NORMAL, WARNING
from kubelab.controllers.controller_utils import (
    SLOW_START_INITIAL_BATCH_SIZE,
    is_pod_ready,
    new_controller_ref,
    seconds,
    slow_start_batch,
)
from kubelab.controllers.job.backoff_utils import BackoffRecord
from kubelab.controllers.job.indexed_job_utils import (
    COMPLETION_INDEX_ANNOTATION,
    COMPLETION_INDEX_ENV,
    get_completion_index,
)
from kubelab.controllers.job.tracking import remove_tracking_finalizer
from kubelab.controllers.job.util import JOB_TRACKING_FINALIZER, only_replace_failed_pods

if TYPE_CHECKING:
    from kubelab.controllers.job.job_controller import JobController, SyncJobCtx

__all__ = ["MAX_POD_CREATE_DELETE_PER_SYNC", "delete_active_pods", "manage_job"]

MAX_POD_CREATE_DELETE_PER_SYNC = 500
_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}


def _removal_order(pod: Object) -> tuple[Any, ...]:
    """controller.ActivePods: unassigned, then pending, not ready, newer pods go first."""
    status = pod.get("status") or {}
    created = pod["metadata"].get("creationTimestamp")
    return (bool((pod.get("spec") or {}).get("nodeName")), _PHASE_RANK.get(status.get("phase", ""), 0),
            is_pod_ready(pod), -(seconds(created) if created else 0.0))


def active_pods_for_removal(job: Object, pods: list[Object], rm_at_least: int) -> list[Object]:
    """activePodsForRemoval: in Indexed mode, pods with a bad or duplicate index first."""
    rm: list[Object] = []
    left = sorted(pods, key=_removal_order)
    if job["spec"].get("completionMode") == "Indexed":
        completions, seen, keep = int(job["spec"].get("completions") or 0), set(), []
        for pod in reversed(left):  # keep the best pod of each index
            ix = get_completion_index(pod)
            if ix < 0 or ix >= completions or ix in seen:
                rm.append(pod)
            else:
                seen.add(ix)
                keep.append(pod)
        left = list(reversed(keep))
    return rm + left[:max(rm_at_least - len(rm), 0)]


def delete_active_pods(jm: JobController, job: Object, pods: list[Object]) -> tuple[int, ApiError | None]:
    """deleteActivePods: a finished Job's running pods are deleted (and later counted failed)."""
    deleted, error = 0, None
    for pod in pods:
        try:
            jm.pod_control.delete_pod(job["metadata"]["namespace"], pod["metadata"]["name"], job)
            deleted += 1
        except ApiError as err:
            if err.code == 404:
                deleted += 1
            elif error is None:
                error = err
    return deleted, error


def _delete_job_pods(jm: JobController, job: Object, pods: list[Object]) -> tuple[int, ApiError | None]:
    """deleteJobPods: pods deleted for a smaller parallelism are not failures: their finalizer
    goes first, so they are never counted."""
    deleted, error = 0, None
    for pod in pods:
        try:
            remove_tracking_finalizer(jm, pod)
            jm.pod_control.delete_pod(job["metadata"]["namespace"], pod["metadata"]["name"], job)
            deleted += 1
        except ApiError as err:
            if err.code == 404:
                deleted += 1
            elif error is None:
                error = err
    return deleted, error


def first_pending_indexes(jctx: SyncJobCtx, count: int, completions: int) -> list[int]:
    """firstPendingIndexes: the lowest indexes that neither succeeded nor run now."""
    taken = jctx.succeeded_indexes | {get_completion_index(p) for p in jctx.active_pods}
    return [ix for ix in range(completions) if ix not in taken][:count]


def pod_template_for(job: Object, index: int | None) -> tuple[Object, str]:
    """The pod template with the tracking finalizer (and, Indexed, the index), and the
    generateName: `<job>-` or `<job>-<index>-` (podGenerateNameWithIndex)."""
    template = deep_copy(job["spec"].get("template") or {})
    meta = template.setdefault("metadata", {})
    meta["finalizers"] = [*(meta.get("finalizers") or []), JOB_TRACKING_FINALIZER]
    name = job["metadata"]["name"]
    if index is None:
        return template, f"{name}-"
    meta.setdefault("annotations", {})[COMPLETION_INDEX_ANNOTATION] = str(index)
    meta.setdefault("labels", {})[COMPLETION_INDEX_ANNOTATION] = str(index)
    spec = template.setdefault("spec", {})
    spec.setdefault("hostname", f"{name}-{index}")
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        env = container.setdefault("env", [])
        if not any(e.get("name") == COMPLETION_INDEX_ENV for e in env):
            env.append({"name": COMPLETION_INDEX_ENV, "valueFrom": {"fieldRef": {
                "fieldPath": f"metadata.annotations['{COMPLETION_INDEX_ANNOTATION}']"}}})
    return template, f"{name}-{index}-"


def _create_pod(jm: JobController, job: Object, index: int | None) -> None:
    template, generate_name = pod_template_for(job, index)
    meta = template["metadata"]
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {**meta, "generateName": generate_name, "namespace": job["metadata"]["namespace"],
                        "ownerReferences": [new_controller_ref(job)]},
           "spec": template.get("spec") or {}}
    try:
        created = jm.client.create(pod, job["metadata"]["namespace"])
    except ApiError as err:
        jm.recorder.event(job, WARNING, "FailedCreate", f"Error creating: {err.message}")
        raise
    jm.recorder.event(job, NORMAL, "SuccessfulCreate", f"Created pod: {created['metadata']['name']}")


def manage_job(jm: JobController, jctx: SyncJobCtx, backoff: BackoffRecord) -> tuple[int, ApiError | None]:
    """Returns the number of active pods after this sync, and the first error."""
    job, spec = jctx.job, jctx.job["spec"]
    key = f"{job['metadata']['namespace']}/{job['metadata']['name']}"
    active = len(jctx.active_pods)
    parallelism = int(spec.get("parallelism", 1))
    if spec.get("suspend"):
        deleted, err = _delete_job_pods(jm, job, jctx.active_pods)
        return active - deleted, err
    completions = spec.get("completions")
    if completions is None:
        want_active = active if jctx.succeeded > 0 else parallelism
    else:
        want_active = max(min(int(completions) - jctx.succeeded, parallelism), 0)
    rm_at_least = max(active - want_active, 0)
    to_delete = active_pods_for_removal(job, jctx.active_pods, rm_at_least)[:MAX_POD_CREATE_DELETE_PER_SYNC]
    if to_delete:
        jm.expectations.expect_deletions(key, len(to_delete))
        deleted, err = _delete_job_pods(jm, job, to_delete)
        for _ in range(len(to_delete) - deleted):
            jm.expectations.deletion_observed(key)
        active -= deleted
        jctx.terminating += deleted
        if err is not None:
            return active, err
    terminating = jctx.terminating if only_replace_failed_pods(job) else 0
    if active >= want_active:
        return active, None
    remaining = backoff.get_remaining_time(jm.clock.now)
    if remaining > 0:
        jm.queue.add_after(key, remaining)
        return active, None
    diff = min(want_active - active - terminating, MAX_POD_CREATE_DELETE_PER_SYNC)
    if diff <= 0:
        return active, None
    indexes: list[int | None] = [None] * diff
    if spec.get("completionMode") == "Indexed":
        indexes = list(first_pending_indexes(jctx, diff, int(completions or 0)))
        diff = len(indexes)
        if diff == 0:
            return active, None
    jm.expectations.expect_creations(key, diff)
    pending = iter(indexes)
    created, err = slow_start_batch(diff, SLOW_START_INITIAL_BATCH_SIZE,
                                    lambda: _create_pod(jm, job, next(pending)))
    for _ in range(diff - created):
        jm.expectations.creation_observed(key)  # never created: never observed
    return active + created, err
