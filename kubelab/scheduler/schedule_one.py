"""One pod, start to finish: the scheduling cycle, the binding cycle, and what a failure does.

pkg/scheduler/schedule_one.go, in its order: ScheduleOne and schedulingCycle; schedulePod,
findNodesThatFitPod, findNodesThatPassFilters, numFeasibleNodesToFind, prioritizeNodes and
selectHost (one cycle's algorithm: find the nodes that fit, score them, pick one); then
bindingCycle, handleBindingCycleError, handleSchedulingFailure and updatePod. In virtual time:

    t              pop the pod, run the profile's plugins, assume the chosen node in the cache
    t + cost       the next cycle may start; the binding "goroutine" POSTs pods/<name>/binding
    t + cost + latency   the API server applies the binding (latency: bind_latency)

A crash before t + cost loses the binding with the process. A binding already sent still
reaches the API server, as a request on the wire would; only its answer is lost. Upstream
checks and scores nodes on 16 goroutines; kubelab checks them one after another, which gives
the same answer in a reproducible order.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubelab.api.errors import ApiError
from kubelab.api.meta import rfc3339
from kubelab.client.events import NORMAL, WARNING
from kubelab.scheduler.cache import CacheError
from kubelab.scheduler.events import ASSIGNED_POD_DELETE
from kubelab.scheduler.explain import PREEMPTION_EXPLANATION_KEY, Explanation
from kubelab.scheduler.interface import (
    Code,
    CycleState,
    NodePluginScores,
    NodeToStatus,
    PostFilterResult,
    Status,
    as_status,
)
from kubelab.scheduler.scheduling_queue import QueuedPodInfo, queued_pod_key
from kubelab.scheduler.snapshot import Snapshot
from kubelab.scheduler.types import Diagnosis, FitError, NodeInfo, Object

if TYPE_CHECKING:
    from kubelab.scheduler.framework import Framework
    from kubelab.scheduler.scheduler import Scheduler

__all__ = [
    "MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND",
    "MIN_FEASIBLE_NODES_TO_FIND",
    "NOTE_LENGTH_LIMIT",
    "NoNodesAvailableError",
    "ScheduleResult",
    "SchedulingError",
    "find_nodes_that_fit_pod",
    "find_nodes_that_pass_filters",
    "handle_binding_cycle_error",
    "handle_scheduling_failure",
    "num_feasible_nodes_to_find",
    "prioritize_nodes",
    "schedule_one",
    "schedule_pod",
    "scheduling_cycle",
    "select_host",
    "truncate_message",
    "update_pod",
]

NOTE_LENGTH_LIMIT = 1024  # pkg/apis/core/validation NoteLengthLimit: the longest event message
# Score at least this many feasible nodes, and at least this percentage of the cluster:
# enough to spread pods well, few enough to stay fast on 5,000 nodes.
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
# VolumeBinding's PreBind waits for the claims to be bound: bindTimeoutSeconds, polled each second.
PRE_BIND_TIMEOUT, PRE_BIND_POLL = 600.0, 1.0


class SchedulingError(Exception):
    """A plugin failed (Code.Error): the pod is retried later, it is not unschedulable."""


class NoNodesAvailableError(SchedulingError):
    """ErrNoNodesAvailable."""

    def __init__(self) -> None:
        super().__init__("no nodes available to schedule pods")


@dataclass
class ScheduleResult:
    """scheduler.go ScheduleResult."""

    suggested_host: str
    evaluated_nodes: int  # nodes the filters ran on (feasible + rejected)
    feasible_nodes: int
    explanation: Explanation | None = None


_NO_RESULT = ScheduleResult("", 0, 0)  # what a failed cycle returns beside its status


def truncate_message(message: str) -> str:
    if len(message) <= NOTE_LENGTH_LIMIT:
        return message
    return message[:NOTE_LENGTH_LIMIT - 4] + " ..."


def schedule_one(sched: Scheduler) -> bool:
    """ScheduleOne: try the next pod in activeQ. Returns False when there was none."""
    info = sched.queue.pop()
    if info is None:
        return False
    pod = info.pod
    fwk = sched.profiles[(pod.get("spec") or {}).get("schedulerName", "")]
    if _skip_pod_schedule(sched, fwk, pod):
        sched.queue.done(pod)
        return True
    sched.attempts += 1
    start = sched.ctx.clock.now  # the attempt's metrics time it from here
    state = CycleState()
    result, assumed_info, status = scheduling_cycle(sched, state, fwk, info)
    if status is not None:
        err = status.as_error()
        plugins = set(err.diagnosis.unschedulable_plugins) if isinstance(err, FitError) else set()
        nominating = err.post_filter_result if isinstance(err, FitError) else None
        handle_scheduling_failure(sched, fwk, assumed_info, status.message(), rejected=status.is_rejected(),
                                  plugins=plugins, nominating=nominating, start=start)
        return True
    # The binding "goroutine" starts once this cycle's cost has elapsed.
    sched.ctx.clock.call_later(sched.cycle_cost, _binding_cycle, sched, fwk, state, assumed_info,
                               result.suggested_host, start)
    return True


def scheduling_cycle(sched: Scheduler, state: CycleState, fwk: Framework, info: QueuedPodInfo
                     ) -> tuple[ScheduleResult, QueuedPodInfo, Status | None]:
    """schedulingCycle: schedule_pod; on a FitError, PostFilter (preemption) may make room for
    a later cycle; else assume the pod on the chosen node. A None status is success, and the
    QueuedPodInfo returned is then the assumed pod's."""
    pod = info.pod
    try:
        result = schedule_pod(fwk, state, pod, sched.cache.update_snapshot(), explain=sched.explain_mode)
    except NoNodesAvailableError as err:
        # UnschedulableAndUnresolvable, but no plugin to wait for: the pod backs off and retries.
        return _NO_RESULT, info, Status(Code.UnschedulableAndUnresolvable, str(err)).with_error(err)
    except FitError as err:
        if fwk.has_post_filter_plugins():
            # Run PostFilter plugins to try to make the pod schedulable in a future cycle.
            node_to_status = NodeToStatus(err.diagnosis.node_to_status, err.diagnosis.absent_nodes_status)
            nominated, post_status = fwk.run_post_filter_plugins(state, pod, node_to_status)
            err.diagnosis.post_filter_msg = post_status.message()
            err.post_filter_result = nominated
            if nominated is not None and nominated.nominated_node_name:
                sched.ctx.trace.record(sched.ctx.name, "nominate", f"pods/{info.key}",
                                       node=nominated.nominated_node_name)
            if err.explanation is not None:
                err.explanation.error = str(err)  # the message now ends with PostFilter's
                err.explanation.preemption = state.get(PREEMPTION_EXPLANATION_KEY)
        _keep_explanation(sched, pod, err.explanation)
        return _NO_RESULT, info, Status(Code.Unschedulable, str(err)).with_error(err)
    except SchedulingError as err:
        return _NO_RESULT, info, as_status(err)
    _keep_explanation(sched, pod, result.explanation)
    host = result.suggested_host
    # The informer's object is read-only: the assumed pod is a copy with spec.nodeName set.
    assumed_info = copy.copy(info)
    assumed_info.pod = {**pod, "spec": {**(pod.get("spec") or {}), "nodeName": host}}
    try:
        sched.cache.assume_pod(assumed_info.pod)
    except CacheError as err:  # upstream: "most probably result of a BUG in retrying logic"
        return _NO_RESULT, assumed_info, as_status(err)
    sched.queue.delete_nominated_pod_if_exists(assumed_info.pod)
    sched.ctx.trace.record(sched.ctx.name, "assume", f"pods/{info.key}", node=host,
                           evaluated=result.evaluated_nodes, feasible=result.feasible_nodes)
    return result, assumed_info, None


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
        if explanation.preemption is not None and explanation.preemption.nominated:
            sched.preemptions.pop(key, None)  # the pod's later cycles replace its explanation, not this
            sched.preemptions[key] = explanation


# --- the scheduling algorithm: filter, score, select ----------------------------------------------

def schedule_pod(fwk: Framework, state: CycleState, pod: Object, snapshot: Snapshot | Sequence[NodeInfo],
                 *, explain: bool = False) -> ScheduleResult:
    """schedulePod: raises NoNodesAvailableError, FitError or SchedulingError. With explain=True
    the result (or the FitError) carries an Explanation of every plugin's verdict and score."""
    if not isinstance(snapshot, Snapshot):
        snapshot = Snapshot.from_node_infos(snapshot)
    fwk.snapshot = snapshot  # what the plugins' handle lists during this cycle
    if len(snapshot) == 0:
        raise NoNodesAvailableError()
    explanation = None
    if explain:
        meta = pod.get("metadata") or {}
        explanation = Explanation(f"{meta.get('namespace', 'default')}/{meta.get('name', '')}",
                                  fwk.profile_name, len(snapshot))
    feasible, diagnosis = find_nodes_that_fit_pod(fwk, state, pod, snapshot, explanation)
    if not feasible:
        err = FitError(pod, len(snapshot), diagnosis)
        if explanation is not None:
            explanation.error = str(err)
            explanation.finish([n.name for n in snapshot])
            err.explanation = explanation
        raise err
    evaluated = len(feasible) + len(diagnosis.node_to_status)
    if len(feasible) == 1:  # nothing to compare: skip scoring
        host = feasible[0].name
        if explanation is not None:
            explanation.note = "one feasible node: scoring skipped"
    else:
        priority_list = prioritize_nodes(fwk, state, pod, feasible, explanation)
        host = select_host(priority_list, fwk.rand)
    if explanation is not None:
        explanation.selected = host
        explanation.finish([n.name for n in snapshot])
    return ScheduleResult(host, evaluated, len(feasible), explanation)


def find_nodes_that_fit_pod(fwk: Framework, state: CycleState, pod: Object, snapshot: Snapshot,
                            explanation: Explanation | None = None) -> tuple[list[NodeInfo], Diagnosis]:
    """Run PreFilter, then Filter over the nodes PreFilter left, from where the last cycle
    stopped; advance that start index by the number of nodes looked at."""
    all_nodes = snapshot.node_info_list
    diagnosis = Diagnosis()
    result, status, plugins_with_nodes = fwk.run_pre_filter_plugins(state, pod, all_nodes, explanation)
    diagnosis.unschedulable_plugins = set(plugins_with_nodes)
    if status is not None:
        if not status.is_rejected():
            raise SchedulingError(status.message())
        diagnosis.absent_nodes_status = status  # every node gets PreFilter's verdict
        diagnosis.pre_filter_msg = status.message()
        diagnosis.add_plugin_status(status)
        if explanation is not None:
            note = f"rejected at PreFilter by {status.plugin}: {status.message()}"
            for n in all_nodes:
                explanation.node(n.name).note = note
        return [], diagnosis
    nodes: Sequence[NodeInfo] = all_nodes
    if result is not None and result.node_names is not None:
        nodes = [n for n in all_nodes if n.name in result.node_names]
        diagnosis.absent_nodes_status = Status(
            Code.UnschedulableAndUnresolvable,
            f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins_with_nodes))}]")
        if explanation is not None:
            note = "excluded by PreFilter: " + diagnosis.absent_nodes_status.message()
            for n in all_nodes:
                if n.name not in result.node_names:
                    explanation.node(n.name).note = note
    feasible = find_nodes_that_pass_filters(fwk, state, pod, diagnosis, nodes, explanation)
    processed = len(feasible) + len(diagnosis.node_to_status)
    fwk.next_start_node_index = (fwk.next_start_node_index + processed) % len(all_nodes)
    return feasible, diagnosis


def find_nodes_that_pass_filters(fwk: Framework, state: CycleState, pod: Object, diagnosis: Diagnosis,
                                 nodes: Sequence[NodeInfo],
                                 explanation: Explanation | None = None) -> list[NodeInfo]:
    """Check the nodes one by one, round-robin from fwk.next_start_node_index, until
    num_feasible_nodes_to_find of them fit; each rejected node's Status goes to the diagnosis."""
    num_all_nodes = len(nodes)
    if num_all_nodes == 0:
        return []
    num_nodes_to_find = num_feasible_nodes_to_find(fwk.percentage_of_nodes_to_score, num_all_nodes,
                                                   fwk.global_percentage)
    if not fwk.has_score_plugins():
        num_nodes_to_find = 1  # without scores any feasible node is as good as another
    start = fwk.next_start_node_index
    if not fwk.has_filter_plugins():
        return [nodes[(start + i) % num_all_nodes] for i in range(num_nodes_to_find)]
    feasible: list[NodeInfo] = []
    for i in range(num_all_nodes):
        node_info = nodes[(start + i) % num_all_nodes]
        status = fwk.run_filter_plugins_with_nominated_pods(state, pod, node_info, explanation)
        if status is None:
            feasible.append(node_info)
            if len(feasible) == num_nodes_to_find:
                break  # upstream cancels the other goroutines here
        elif status.code == Code.Error:
            raise SchedulingError(status.message())
        else:
            diagnosis.node_to_status[node_info.name] = status
            diagnosis.add_plugin_status(status)
    return feasible


def num_feasible_nodes_to_find(percentage_of_nodes_to_score: int | None, num_all_nodes: int,
                               global_percentage: int = 0) -> int:
    """How many feasible nodes to find before the search stops (numFeasibleNodesToFind).

    Small clusters (< 100 nodes) are searched whole. Otherwise the profile's percentage, else
    the global one; 0 means adaptive: 50% minus 1% per 125 nodes, never under 5%; and never
    fewer than 100 nodes. Go's int32 arithmetic truncates, as // does for these positives."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    percentage = global_percentage if percentage_of_nodes_to_score is None else percentage_of_nodes_to_score
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


def prioritize_nodes(fwk: Framework, state: CycleState, pod: Object, nodes: Sequence[NodeInfo],
                     explanation: Explanation | None = None) -> list[NodePluginScores]:
    """PreScore, then Score, NormalizeScore and weights: one NodePluginScores per node.
    Without score plugins every node scores 1."""
    if not fwk.has_score_plugins():
        return [NodePluginScores(n.name, 1) for n in nodes]
    status = fwk.run_pre_score_plugins(state, pod, nodes, explanation)
    if status is not None:
        raise SchedulingError(status.message())
    return fwk.run_score_plugins(state, pod, nodes, explanation)


def select_host(node_scores: Sequence[NodePluginScores], rand: random.Random) -> str:
    """The highest total wins; ties are broken uniformly at random by reservoir sampling:
    the k-th tied node replaces the choice with probability 1/k (selectHost)."""
    if not node_scores:
        raise SchedulingError("empty priorityList")
    selected, best = node_scores[0]
    tied = 1
    for name, total in node_scores[1:]:
        if total < best:
            continue
        if total > best:
            selected, best, tied = name, total, 1
        else:
            tied += 1
            if rand.random() * tied < 1:  # probability 1/tied, like rand.Intn(tied) == 0
                selected = name
    return selected


# --- binding -------------------------------------------------------------------------------------

def _binding_cycle(sched: Scheduler, fwk: Framework, state: CycleState, assumed_info: QueuedPodInfo,
                   host: str, start: float) -> None:
    """bindingCycle. The binding request leaves now and reaches the API server bind_latency later."""
    if not sched.running:
        return  # crashed before the binding was sent: it dies with the process
    if sched.bind_latency > 0:
        sched.ctx.clock.call_later(sched.bind_latency, _bind, sched, fwk, state, assumed_info, host,
                                   start)
    else:
        _bind(sched, fwk, state, assumed_info, host, start)


def _bind(sched: Scheduler, fwk: Framework, state: CycleState, assumed_info: QueuedPodInfo,
          host: str, start: float, waiting_since: float | None = None) -> None:
    assumed = assumed_info.pod
    # PreBind (VolumeBinding: bind the claims, then wait for the PV controller, polling).
    status = fwk.run_pre_bind_plugins(state, assumed, host)
    if status is not None and status.code == Code.Wait:
        now = sched.ctx.clock.now
        since = now if waiting_since is None else waiting_since
        if not sched.running:
            return
        if now - since < PRE_BIND_TIMEOUT:
            sched.ctx.clock.call_later(PRE_BIND_POLL, _bind, sched, fwk, state, assumed_info, host,
                                       start, since)
            return
        status = Status(Code.Error, f'running PreBind plugin "{status.plugin}": binding volumes: '
                        "context deadline exceeded", plugin=status.plugin)
    if status is None:
        status = fwk.run_bind_plugins(state, assumed, host)  # DefaultBinder: POST pods/<name>/binding
    if not sched.running:
        return  # the request arrived, but nobody is left to read the answer
    sched.cache.finish_binding(assumed, sched.ctx.clock.now)
    if status is not None:
        handle_binding_cycle_error(sched, fwk, assumed_info, status, start)
        return
    sched.scheduled += 1
    now = sched.ctx.clock.now
    sched.metrics.attempt("scheduled", fwk.profile_name, now - start)  # metrics.PodScheduled
    first = assumed_info.initial_attempt_timestamp
    sched.metrics.scheduled_sli(assumed_info.attempts, now - (now if first is None else first))
    sched.ctx.trace.record(sched.ctx.name, "bound", f"pods/{assumed_info.key}", node=host,
                           attempts=assumed_info.attempts)
    sched.recorders[fwk.profile_name].event(dict(assumed), NORMAL, "Scheduled",
                                            f"Successfully assigned {assumed_info.key} to {host}")


def handle_binding_cycle_error(sched: Scheduler, fwk: Framework, assumed_info: QueuedPodInfo,
                               status: Status, start: float | None = None) -> None:
    """handleBindingCycleError: forget the assumed pod, then fail the pod as a cycle would."""
    assumed = assumed_info.pod
    try:
        sched.cache.forget_pod(assumed)
    except CacheError as err:
        sched.ctx.trace.record(sched.ctx.name, "cache-error", f"pods/{assumed_info.key}", error=str(err))
    else:
        # Forgetting gives the node's resources back: pods waiting for room may fit now.
        sched.queue.move_all_to_active_or_backoff_queue(ASSIGNED_POD_DELETE, assumed, None)
    conflict = sched.bind_conflicts.pop(assumed_info.key, False)
    handle_scheduling_failure(sched, fwk, assumed_info, status.message(), rejected=False, plugins=set(),
                              update_condition=not conflict, start=start)


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
                              rejected: bool, plugins: set[str], update_condition: bool = True,
                              nominating: PostFilterResult | None = None,
                              start: float | None = None) -> None:
    """Requeue the pod (unless it is gone or was bound meanwhile), tell people why with a
    FailedScheduling event, and record PodScheduled=False on the pod. A PostFilter result
    (preemption's) nominates its node, or clears the nomination when its node is "";
    without one the pod's nomination stays (upstream's ModeOverride and ModeNoop).

    One deviation: when the binding was refused because the pod is already bound (409), the
    API server's PodScheduled=True is left alone; upstream would overwrite it with False here."""
    pod = info.pod
    reason = "Unschedulable" if rejected else "SchedulerError"
    now = sched.ctx.clock.now  # metrics.PodUnschedulable / PodScheduleError, timed from start
    sched.metrics.attempt("unschedulable" if rejected else "error", fwk.profile_name,
                          now - (now if start is None else start))
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
        sched.queue.add_nominated_pod(cached, None if nominating is None else nominating.nominated_node_name)
    sched.queue.done(pod)
    sched.recorders[fwk.profile_name].event(dict(pod), WARNING, "FailedScheduling", truncate_message(message))
    nominated_node = None if nominating is None else nominating.nominated_node_name
    if update_condition:
        update_pod(sched, pod, {"type": "PodScheduled", "status": "False", "reason": reason,
                                "message": message}, nominated_node)


def update_pod(sched: Scheduler, pod: Object, condition: dict[str, Any],
               nominated_node_name: str | None = None) -> None:
    """updatePod: patch pods/status only if the condition changes (podutil.UpdatePodCondition)
    or status.nominatedNodeName is to be set to another value (None: leave it)."""
    conditions = (pod.get("status") or {}).get("conditions") or ()
    old = next((c for c in conditions if c.get("type") == condition["type"]), None)
    now = rfc3339(sched.ctx.clock.now)
    new = {**condition, "lastProbeTime": None, "lastTransitionTime": now}
    current_nominated = (pod.get("status") or {}).get("nominatedNodeName") or ""
    nnn_needs_update = nominated_node_name is not None and nominated_node_name != current_nominated
    condition_same = False
    if old is not None:
        if old.get("status") == new["status"]:
            new["lastTransitionTime"] = old.get("lastTransitionTime")
        condition_same = all(old.get(k) == new.get(k)
                             for k in ("status", "reason", "message", "lastTransitionTime"))
    if condition_same and not nnn_needs_update:
        return
    status: dict[str, Any] = {} if condition_same else {"conditions": [new]}
    if nnn_needs_update:
        status["nominatedNodeName"] = nominated_node_name or None
    meta = pod.get("metadata") or {}
    try:
        sched.ctx.client.patch("pods", meta.get("name", ""), {"status": status},
                               meta.get("namespace") or "default", patch_type="strategic",
                               subresource="status")
    except ApiError as err:  # e.g. the pod was deleted meanwhile: nothing to record
        sched.ctx.trace.record(sched.ctx.name, "update-failed", f"pods/{queued_pod_key(pod)}",
                               error=err.reason)
