"""Preemption: when no node fits a pod, find a node where deleting lower-priority pods makes room.

pkg/scheduler/framework/preemption/preemption.go (the Evaluator: Preempt, findCandidates,
DryRunPreemption, SelectCandidate, pickOneNodeForPreemption, prepareCandidate, the
PreemptPod function, getLowerPriorityNominatedPods) and pkg/scheduler/util/utils.go
(GetPodStartTime, GetEarliestPodStartTime, MoreImportantPod). The plugin that drives it,
with the policy parts upstream leaves to the plugin (who may be a victim, how victims are
chosen on one node), is plugins/default_preemption.py.

One preemption, as Preempt runs it:

    0. is the preemptor allowed to preempt? (preemptionPolicy: Never; victims still terminating)
    1. the nodes where it might help: those whose filter Status was Unschedulable, not
       UnschedulableAndUnresolvable ("Preemption is not helpful for scheduling")
    2. dry run on each: remove every lower-priority pod, check the pod fits, then put back
       ("reprieve") as many as possible, PDB-violating ones first, most important first
    3. pick one candidate: fewest PDB violations, then the lowest highest-priority victim,
       the smallest sum of priorities, the fewest victims, the latest start time
    4. delete its victims (DisruptionTarget=True, reason PreemptionByScheduler, then DELETE,
       and a Preempted event), clear lower-priority nominations on that node
    5. nominate the node: the scheduling cycle writes status.nominatedNodeName

Departures (also in docs/ARCHITECTURE.md): the dry run checks the nodes one after another
(upstream: 16 goroutines), so candidates come in node order from the random offset; victims
are deleted synchronously, as with the SchedulerAsyncPreemption gate off (kubelab has no
goroutines; the deletions are API calls on the virtual clock either way); PDBs are listed
from the API when a dry run may find victims, not from an informer (an informer would add
watch traffic to every scenario, preemption or not); and the offset is not drawn, nor PDBs
listed, when no potential node has a lower-priority pod: the dry run's answer cannot depend
on them then, and scenarios without priorities keep their random stream.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from kubelab.api.errors import ApiError
from kubelab.api.meta import parse_time, rfc3339
from kubelab.client.events import NORMAL
from kubelab.scheduler.explain import PREEMPTION_EXPLANATION_KEY, PreemptionCandidate, PreemptionExplanation
from kubelab.scheduler.interface import (
    Code,
    CycleState,
    NodeToStatus,
    PostFilterResult,
    Status,
    as_status,
)
from kubelab.scheduler.types import Diagnosis, FitError, NodeInfo, Object, PodInfo

__all__ = [
    "Candidate",
    "Evaluator",
    "PreemptionInterface",
    "Victims",
    "get_earliest_pod_start_time",
    "get_pod_start_time",
    "more_important_pod",
    "pick_one_node_for_preemption",
    "pick_with_reason",
    "pod_priority",
]

MAX_INT32 = 2**31 - 1
NOT_HELPFUL = "Preemption is not helpful for scheduling"


def pod_priority(pod: Object) -> int:
    """corev1helpers.PodPriority: spec.priority, 0 when unset (admission sets it)."""
    return int((pod.get("spec") or {}).get("priority") or 0)


def get_pod_start_time(pod: Object, now: float) -> float:
    """GetPodStartTime: status.startTime; a pod not started yet counts as starting now."""
    started = (pod.get("status") or {}).get("startTime")
    return parse_time(started) if started else now


def more_important_pod(pod1: Object, pod2: Object, now: float) -> bool:
    """MoreImportantPod: higher priority first; at equal priority the one running longer."""
    p1, p2 = pod_priority(pod1), pod_priority(pod2)
    if p1 != p2:
        return p1 > p2
    return get_pod_start_time(pod1, now) < get_pod_start_time(pod2, now)


@dataclass
class Victims:
    """extender/v1 Victims: the pods to delete on one node, most important first."""

    pods: list[Object] = field(default_factory=list)
    num_pdb_violations: int = 0


@dataclass
class Candidate:
    """A node where preemption would make the pod fit, and what it would cost."""

    name: str
    victims: Victims


def get_earliest_pod_start_time(victims: Victims, now: float) -> float | None:
    """GetEarliestPodStartTime: the earliest start among the highest-priority victims."""
    if not victims.pods:
        return None
    earliest = get_pod_start_time(victims.pods[0], now)
    highest = pod_priority(victims.pods[0])
    for pod in victims.pods:
        priority = pod_priority(pod)
        if priority == highest:
            earliest = min(earliest, get_pod_start_time(pod, now))
        elif priority > highest:
            highest, earliest = priority, get_pod_start_time(pod, now)
    return earliest


# What each of pickOneNodeForPreemption's criteria prefers, for the explanation.
CRITERIA = ("the fewest PDB violations", "the lowest highest-priority victim",
            "the smallest sum of victims' priorities", "the fewest victims",
            "the latest start of its most important victims")


def pick_one_node_for_preemption(nodes_to_victims: Mapping[str, Victims], now: float,
                                 score_funcs: Sequence[Callable[[str], float]] = ()) -> str:
    """pickOneNodeForPreemption: each criterion keeps the nodes with the best score; the next
    one breaks their tie; after the last, the first node left wins. The criteria, in order:
    1. the fewest PDB violations; 2. the lowest priority of the most important victim;
    3. the smallest sum of victims' priorities (each shifted by 2^31 so that negative
    priorities still add up); 4. the fewest victims; 5. the latest start time of the most
    important victims (the youngest workload loses the least work)."""
    return pick_with_reason(nodes_to_victims, now, score_funcs)[0]


def pick_with_reason(nodes_to_victims: Mapping[str, Victims], now: float,
                     score_funcs: Sequence[Callable[[str], float]] = ()) -> tuple[str, str]:
    """pickOneNodeForPreemption, and which criterion decided (kubelab's, for explain)."""
    if not nodes_to_victims:
        return "", ""
    candidates = list(nodes_to_victims)
    if len(candidates) == 1:
        return candidates[0], "the only candidate"
    names: Sequence[str] = [f"criterion {i + 1}" for i in range(len(score_funcs))]
    if not score_funcs:
        def earliest(node: str) -> float:
            started = get_earliest_pod_start_time(nodes_to_victims[node], now)
            return float("-inf") if started is None else started  # "Should not reach here"
        score_funcs = (
            lambda node: -nodes_to_victims[node].num_pdb_violations,
            lambda node: -pod_priority(nodes_to_victims[node].pods[0]),
            lambda node: -sum(pod_priority(p) + MAX_INT32 + 1 for p in nodes_to_victims[node].pods),
            lambda node: -len(nodes_to_victims[node].pods),
            earliest,
        )
        names = CRITERIA
    for score, name in zip(score_funcs, names, strict=True):
        best: float = float("-inf")
        selected: list[str] = []
        for node in candidates:
            value = score(node)
            if value > best:
                best, selected = value, []
            if value == best:
                selected.append(node)
        if len(selected) == 1:
            return selected[0], name
        candidates = selected
    return candidates[0], "a tie on every criterion: the first candidate"


class PreemptionInterface(Protocol):
    """What a preemption plugin gives the Evaluator (preemption.go Interface)."""

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]: ...

    def calculate_num_candidates(self, num_nodes: int) -> int: ...

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]: ...

    def pod_eligible_to_preempt_others(self, pod: Object, nominated_node_status: Status | None
                                       ) -> tuple[bool, str]: ...

    def select_victims_on_node(self, state: CycleState, pod: Object, node_info: NodeInfo,
                               pdbs: Sequence[Object]) -> tuple[list[Object], int, Status]: ...

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, Victims]
                            ) -> list[Callable[[str], float]]: ...

    def is_preemption_allowed(self, node_info: NodeInfo, victim: PodInfo, preemptor: Object) -> bool: ...


class Evaluator:
    """The generic half of preemption (preemption.go Evaluator). handle is the Framework:
    its snapshot, client, clock, recorder and pod nominator."""

    def __init__(self, plugin_name: str, handle: Any, interface: PreemptionInterface) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        self.interface = interface

    def now(self) -> float:
        clock = getattr(self.handle, "clock", None)
        return float(clock.now) if clock is not None else 0.0

    # --- Preempt --------------------------------------------------------------------------

    def preempt(self, state: CycleState, pod: Object, m: NodeToStatus
                ) -> tuple[PostFilterResult | None, Status]:
        """Preempt. <None, Unschedulable>: not eligible, keep the nomination; <result(""),
        Unschedulable>: preemption cannot help, clear it; <result(node), Success>: victims
        deleted, nominate node. The preemptor is the queue's copy, which its informer keeps
        current (upstream re-reads it from the pod lister)."""
        nominated = (pod.get("status") or {}).get("nominatedNodeName") or ""
        ok, msg = self.interface.pod_eligible_to_preempt_others(
            pod, m.get_status(nominated) if nominated else None)
        if not ok:
            state.write(PREEMPTION_EXPLANATION_KEY, PreemptionExplanation(eligible=False, message=msg))
            return None, Status(Code.Unschedulable, msg)
        all_nodes = list(self.handle.snapshot.node_info_list)
        try:
            candidates, node_statuses = self.find_candidates(state, all_nodes, pod, m)
        except (ApiError, SchedulingFailure) as err:
            return None, as_status(err)
        explanation = PreemptionExplanation(
            node_statuses={n: s.message() or s.code.name for n, s in node_statuses.items()})
        state.write(PREEMPTION_EXPLANATION_KEY, explanation)
        if not candidates:
            node_statuses.absent_nodes_status = Status(Code.UnschedulableAndUnresolvable, NOT_HELPFUL)
            diagnosis = Diagnosis(node_to_status=dict(node_statuses),
                                  absent_nodes_status=node_statuses.absent_nodes_status)
            message = str(FitError(pod, len(all_nodes), diagnosis))
            explanation.message = message
            return PostFilterResult(""), Status(Code.Unschedulable, message)
        best, reason = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, Status(Code.Unschedulable, "no candidate node for preemption")
        explanation.candidates = [
            PreemptionCandidate(c.name, tuple(f"{_pod_ref(p)} (priority {pod_priority(p)})"
                                              for p in c.victims.pods), c.victims.num_pdb_violations)
            for c in candidates]
        explanation.nominated, explanation.reason = best.name, reason
        status = self.prepare_candidate(best, pod)
        if status is not None:
            return None, status
        return PostFilterResult(best.name), Status(Code.Success)

    def find_candidates(self, state: CycleState, all_nodes: Sequence[NodeInfo], pod: Object,
                        m: NodeToStatus) -> tuple[list[Candidate], NodeToStatus]:
        """findCandidates: dry-run the nodes whose Status was Unschedulable."""
        if not all_nodes:
            raise SchedulingFailure("no nodes available")
        potential_nodes = m.nodes_for_status_code(all_nodes, Code.Unschedulable)
        if not potential_nodes:
            return [], NodeToStatus()
        if self._any_potential_victim(potential_nodes, pod):
            pdbs = self._pod_disruption_budgets()
            offset, num_candidates = self.interface.get_offset_and_num_candidates(len(potential_nodes))
        else:  # every node answers "No preemption victims found": offset and PDBs cannot matter
            pdbs, offset = [], 0
            num_candidates = self.interface.calculate_num_candidates(len(potential_nodes))
        return self.dry_run_preemption(state, pod, potential_nodes, pdbs, offset, num_candidates)

    def _any_potential_victim(self, nodes: Iterable[NodeInfo], pod: Object) -> bool:
        return any(self.interface.is_preemption_allowed(n, p, pod) for n in nodes for p in n.pods.values())

    def _pod_disruption_budgets(self) -> list[Object]:
        """getPodDisruptionBudgets: every PDB in the cluster (upstream: the PDB lister)."""
        client = getattr(self.handle, "client", None)
        if client is None:
            return []
        return list(client.list("poddisruptionbudgets", "").get("items") or [])

    def dry_run_preemption(self, state: CycleState, pod: Object, potential_nodes: Sequence[NodeInfo],
                           pdbs: Sequence[Object], offset: int, num_candidates: int
                           ) -> tuple[list[Candidate], NodeToStatus]:
        """DryRunPreemption: select victims on copies of the nodes, from `offset` round the
        list, until num_candidates candidates are found with at least one violating no PDB.
        Candidates without PDB violations come first."""
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        node_statuses = NodeToStatus()
        errors: list[str] = []
        for i in range(len(potential_nodes)):
            node_copy = potential_nodes[(offset + i) % len(potential_nodes)].snapshot()
            pods, num_pdb_violations, status = self.interface.select_victims_on_node(
                state.clone(), pod, node_copy, pdbs)
            if status.is_success() and pods:
                candidate = Candidate(node_copy.name, Victims(pods, num_pdb_violations))
                (violating if num_pdb_violations else non_violating).append(candidate)
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break  # upstream cancels the other goroutines
                continue
            if status.is_success():
                status = Status(Code.Error, f'expected at least one victim pod on node "{node_copy.name}"')
            if status.code == Code.Error:
                errors.append(status.message())
            node_statuses[node_copy.name] = status
        candidates = non_violating[:num_candidates] + violating[:num_candidates]
        if errors and not candidates:
            raise SchedulingFailure(", ".join(errors))
        return candidates, node_statuses

    def select_candidate(self, candidates: Sequence[Candidate]) -> tuple[Candidate | None, str]:
        """SelectCandidate: the one candidate, or the node pickOneNodeForPreemption picks
        (and, for the explanation, the criterion that picked it)."""
        if not candidates:
            return None, ""
        if len(candidates) == 1:
            return candidates[0], "the only candidate"
        victims_map = self.interface.candidates_to_victims_map(candidates)
        score_funcs = self.interface.ordered_score_funcs(victims_map)
        node, reason = pick_with_reason(victims_map, self.now(), score_funcs)
        if node in victims_map:
            return Candidate(node, victims_map[node]), reason
        return candidates[0], "the first candidate"  # "Should not reach here"

    # --- acting on the choice -------------------------------------------------------------

    def prepare_candidate(self, candidate: Candidate, pod: Object) -> Status | None:
        """prepareCandidate: preempt every victim, then clear the nominations of lower-priority
        pods on that node (they may not fit any more; clearing them requeues them)."""
        for victim in candidate.victims.pods:
            try:
                self.preempt_pod(candidate, pod, victim)
            except ApiError as err:
                return as_status(err)
        nominator = getattr(self.handle, "pod_nominator", None)
        if nominator is not None:
            lower = [p for p in nominator.nominated_pods_for_node(candidate.name)
                     if pod_priority(p.pod) < pod_priority(pod)]
            for info in lower:
                self.clear_nominated_node_name(info.pod)
        return None

    def preempt_pod(self, candidate: Candidate, preemptor: Object, victim: Object) -> None:
        """The default PreemptPod: the DisruptionTarget condition first (so the victim's
        controllers and the kubelet know why it goes), then DELETE, then the Preempted event."""
        meta = victim.get("metadata") or {}
        name, namespace = meta.get("name", ""), meta.get("namespace") or "default"
        client = self.handle.client
        scheduler_name = (preemptor.get("spec") or {}).get("schedulerName") or "default-scheduler"
        condition = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                     "message": f"{scheduler_name}: preempting to accommodate a higher priority pod",
                     "lastProbeTime": None, "lastTransitionTime": rfc3339(self.now())}
        if meta.get("generation"):
            condition["observedGeneration"] = meta["generation"]
        old = next((c for c in (victim.get("status") or {}).get("conditions") or ()
                    if c.get("type") == "DisruptionTarget"), None)
        if old is None or any(old.get(k) != condition[k] for k in ("status", "reason", "message")):
            client.patch("pods", name, {"status": {"conditions": [condition]}}, namespace,
                         patch_type="strategic", subresource="status")
        try:
            client.delete("pods", name, namespace)
        except ApiError as err:
            if err.code != 404:
                raise
            return  # "Victim Pod is already deleted"
        recorder = getattr(self.handle, "recorder", None)
        if recorder is not None:
            uid = (preemptor.get("metadata") or {}).get("uid", "")
            recorder.event(dict(victim), NORMAL, "Preempted",
                           f"Preempted by pod {uid} on node {candidate.name}")

    def clear_nominated_node_name(self, pod: Object) -> None:
        """util.ClearNominatedNodeName: patch status.nominatedNodeName away."""
        meta = pod.get("metadata") or {}
        with contextlib.suppress(ApiError):  # "We do not return as this error is not critical."
            self.handle.client.patch("pods", meta.get("name", ""), {"status": {"nominatedNodeName": None}},
                                     meta.get("namespace") or "default", patch_type="strategic",
                                     subresource="status")


def _pod_ref(pod: Object) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"


class SchedulingFailure(Exception):
    """An error that ends the preemption attempt with an Error status."""
