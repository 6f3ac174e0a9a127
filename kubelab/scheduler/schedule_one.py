"""One pod, start to finish: the scheduling cycle, the binding cycle, and what a failure does.

pkg/scheduler/schedule_one.go (ScheduleOne, schedulingCycle, bindingCycle, handleBindingCycleError,
handleSchedulingFailure, updatePod). In virtual time:

    t              pop the pod, run the profile's plugins, assume the chosen node in the cache
    t + cost       the next cycle may start; the binding "goroutine" POSTs pods/<name>/binding
    t + cost + latency   the API server applies the binding (latency: bind_latency)

A crash before t + cost loses the binding with the process. A binding already sent still
reaches the API server, as a request on the wire would; only its answer is lost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubelab.api.errors import ApiError
from kubelab.api.meta import rfc3339
from kubelab.client.events import NORMAL, WARNING
from kubelab.scheduler.algorithm import FitError, NoNodesAvailableError, SchedulingError
from kubelab.scheduler.cache import CacheError
from kubelab.scheduler.events import ASSIGNED_POD_DELETE
from kubelab.scheduler.framework import Framework
from kubelab.scheduler.interface import CycleState, Status
from kubelab.scheduler.scheduling_queue import QueuedPodInfo, queued_pod_key
from kubelab.scheduler.types import Object

if TYPE_CHECKING:
    from kubelab.scheduler.scheduler import Scheduler

__all__ = ["NOTE_LENGTH_LIMIT", "schedule_one", "truncate_message"]

NOTE_LENGTH_LIMIT = 1024  # pkg/apis/core/validation NoteLengthLimit: the longest event message


def truncate_message(message: str) -> str:
    if len(message) <= NOTE_LENGTH_LIMIT:
        return message
    return message[:NOTE_LENGTH_LIMIT - 4] + " ..."


def schedule_one(sched: Scheduler) -> bool:
    """Try the next pod in activeQ. Returns False when there was none."""
    info = sched.queue.pop()
    if info is None:
        return False
    pod = info.pod
    fwk = sched.profiles[(pod.get("spec") or {}).get("schedulerName", "")]
    if _skip_pod_schedule(sched, fwk, pod):
        sched.queue.done(pod)
        return True
    sched.attempts += 1
    state = CycleState()
    try:
        result = fwk.schedule_pod(pod, sched.cache.update_snapshot(), state, explain=sched.explain_mode)
    except FitError as err:
        _keep_explanation(sched, pod, err.explanation)
        handle_scheduling_failure(sched, fwk, info, str(err), rejected=True,
                                  plugins=set(err.diagnosis.unschedulable_plugins))
        return True
    except NoNodesAvailableError as err:
        # UnschedulableAndUnresolvable, but no plugin to wait for: the pod backs off and retries.
        handle_scheduling_failure(sched, fwk, info, str(err), rejected=True, plugins=set())
        return True
    except SchedulingError as err:
        handle_scheduling_failure(sched, fwk, info, str(err), rejected=False, plugins=set())
        return True
    _keep_explanation(sched, pod, result.explanation)
    host = result.suggested_host
    # The informer's object is read-only: the assumed pod is a copy with spec.nodeName set.
    assumed = {**pod, "spec": {**(pod.get("spec") or {}), "nodeName": host}}
    try:
        sched.cache.assume_pod(assumed)
    except CacheError as err:  # upstream: "most probably result of a BUG in retrying logic"
        handle_scheduling_failure(sched, fwk, info, str(err), rejected=False, plugins=set())
        return True
    sched.ctx.trace.record(sched.ctx.name, "assume", f"pods/{info.key}", node=host,
                           evaluated=result.evaluated_nodes, feasible=result.feasible_nodes)
    sched.ctx.clock.call_later(sched.cycle_cost, _binding_cycle, sched, fwk, state, info, assumed, host)
    return True


def _skip_pod_schedule(sched: Scheduler, fwk: Framework, pod: Object) -> bool:
    meta = pod.get("metadata") or {}
    if meta.get("deletionTimestamp"):
        sched.recorders[fwk.profile_name].event(
            dict(pod), WARNING, "FailedScheduling",
            f"skip schedule deleting pod: {meta.get('namespace')}/{meta.get('name')}")
        return True
    return sched.cache.is_assumed_pod(pod)  # an update re-queued a pod we already placed


def _keep_explanation(sched: Scheduler, pod: Object, explanation: Any) -> None:
    if explanation is not None:
        key = queued_pod_key(pod)
        sched.explanations.pop(key, None)  # re-inserted last: the newest decision is the last entry
        sched.explanations[key] = explanation


# --- binding -------------------------------------------------------------------------------------

def _binding_cycle(sched: Scheduler, fwk: Framework, state: CycleState, info: QueuedPodInfo,
                   assumed: Object, host: str) -> None:
    if not sched.running:
        return  # crashed before the binding was sent: it dies with the process
    if sched.bind_latency > 0:
        sched.ctx.clock.call_later(sched.bind_latency, _bind, sched, fwk, state, info, assumed, host)
    else:
        _bind(sched, fwk, state, info, assumed, host)


def _bind(sched: Scheduler, fwk: Framework, state: CycleState, info: QueuedPodInfo, assumed: Object,
          host: str) -> None:
    status = fwk.run_bind_plugins(state, assumed, host)  # DefaultBinder: POST pods/<name>/binding
    if not sched.running:
        return  # the request arrived, but nobody is left to read the answer
    sched.cache.finish_binding(assumed, sched.ctx.clock.now)
    if status is not None:
        _handle_binding_cycle_error(sched, fwk, info, assumed, status)
        return
    sched.scheduled += 1
    sched.ctx.trace.record(sched.ctx.name, "bound", f"pods/{info.key}", node=host, attempts=info.attempts)
    sched.recorders[fwk.profile_name].event(dict(assumed), NORMAL, "Scheduled",
                                            f"Successfully assigned {info.key} to {host}")


def _handle_binding_cycle_error(sched: Scheduler, fwk: Framework, info: QueuedPodInfo, assumed: Object,
                                status: Status) -> None:
    try:
        sched.cache.forget_pod(assumed)
    except CacheError as err:
        sched.ctx.trace.record(sched.ctx.name, "cache-error", f"pods/{info.key}", error=str(err))
    else:
        # Forgetting gives the node's resources back: pods waiting for room may fit now.
        sched.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE, assumed, None)
    conflict = sched.bind_conflicts.pop(info.key, False)
    handle_scheduling_failure(sched, fwk, info, status.message(), rejected=False, plugins=set(),
                              update_condition=not conflict)


def bind_through_api(sched: Scheduler, pod: Object, node: str) -> None:
    """What DefaultBinder calls: the binding subresource, with the scheduler's own identity."""
    try:
        sched.ctx.client.bind(dict(pod), node)
    except ApiError as err:
        if err.code == 409:
            sched.bind_conflicts[queued_pod_key(pod)] = True
        raise


# --- failures ------------------------------------------------------------------------------------

def handle_scheduling_failure(sched: Scheduler, fwk: Framework, info: QueuedPodInfo, message: str, *,
                              rejected: bool, plugins: set[str], update_condition: bool = True) -> None:
    """Requeue the pod (unless it is gone or was bound meanwhile), tell people why with a
    FailedScheduling event, and record PodScheduled=False on the pod.

    One deviation: when the binding was refused because the pod is already bound (409), the
    API server's PodScheduled=True is left alone; upstream would overwrite it with False here."""
    pod = info.pod
    reason = "Unschedulable" if rejected else "SchedulerError"
    info.unschedulable_plugins = plugins
    sched.ctx.trace.record(sched.ctx.name, "unschedulable" if rejected else "error", f"pods/{info.key}",
                           message=message, attempts=info.attempts)
    cached, _ = sched.pod_informer.indexer.get_by_key(info.key)
    if cached is None:
        pass  # deleted meanwhile: nothing to requeue
    elif (cached.get("spec") or {}).get("nodeName"):
        pass  # "Pod has been assigned to node. Abort adding it back to queue."
    else:
        info.pod = cached
        sched.queue.add_unschedulable_if_not_present(info, sched.queue.scheduling_cycle)
    sched.queue.done(pod)
    sched.recorders[fwk.profile_name].event(dict(pod), WARNING, "FailedScheduling", truncate_message(message))
    if update_condition:
        _update_pod_condition(sched, pod, {"type": "PodScheduled", "status": "False", "reason": reason,
                                           "message": message})


def _update_pod_condition(sched: Scheduler, pod: Object, condition: dict[str, Any]) -> None:
    """updatePod: patch pods/status only if the condition changes (podutil.UpdatePodCondition)."""
    conditions = (pod.get("status") or {}).get("conditions") or ()
    old = next((c for c in conditions if c.get("type") == condition["type"]), None)
    now = rfc3339(sched.ctx.clock.now)
    new = {**condition, "lastProbeTime": None, "lastTransitionTime": now}
    if old is not None:
        if old.get("status") == new["status"]:
            new["lastTransitionTime"] = old.get("lastTransitionTime")
        if all(old.get(k) == new.get(k) for k in ("status", "reason", "message", "lastTransitionTime")):
            return
    meta = pod.get("metadata") or {}
    try:
        sched.ctx.client.patch("pods", meta.get("name", ""), {"status": {"conditions": [new]}},
                               meta.get("namespace") or "default", patch_type="strategic",
                               subresource="status")
    except ApiError as err:  # e.g. the pod was deleted meanwhile: nothing to record
        sched.ctx.trace.record(sched.ctx.name, "update-failed", f"pods/{queued_pod_key(pod)}",
                               error=err.reason)
