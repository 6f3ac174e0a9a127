"""DefaultPreemption: the PostFilter plugin that makes room for a pod by deleting lower-priority pods.

pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go: PostFilter (which
prefixes the Evaluator's message with "preemption: "), calculateNumCandidates,
GetOffsetAndNumCandidates, CandidatesToVictimsMap, SelectVictimsOnNode,
PodEligibleToPreemptOthers, OrderedScoreFuncs (none: the default criteria),
isPreemptionAllowed, podTerminatingByPreemption and filterPodsWithPDBViolation, in that
order. The Evaluator (the generic part of preemption) is kubelab/scheduler/preemption.py.

Its args are DefaultPreemptionArgs: minCandidateNodesPercentage (10) and
minCandidateNodesAbsolute (100): the dry run stops once max(10% of the nodes, 100) candidates
are found (all of them on a cluster of fewer than 100 nodes).

Departure: PreFilter extensions (AddPod/RemovePod) are not run while victims are removed and
reprieved, since no in-tree kubelab plugin has them yet; PodTopologySpread's counts stay
those of the cycle's start, as if the victims matched none of its selectors.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubelab.api.errors import ParseError
from kubelab.api.labels import selector_from_label_selector
from kubelab.scheduler.interface import Code, CycleState, NodeToStatus, PostFilterResult, Status
from kubelab.scheduler.preemption import (
    Candidate,
    Evaluator,
    Victims,
    more_important_pod,
    pod_priority,
)
from kubelab.scheduler.types import NodeInfo, Object, PodInfo

__all__ = ["DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE", "DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE",
           "DefaultPreemption", "filter_pods_with_pdb_violation", "pod_terminating_by_preemption"]

NO_VICTIMS = "No preemption victims found for incoming pod"
DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10  # v1 defaults.go SetDefaults_DefaultPreemptionArgs
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100


class DefaultPreemption:
    name = "DefaultPreemption"

    def __init__(self, args: Mapping[str, Any], handle: Any) -> None:
        self.handle = handle
        self.min_candidate_nodes_percentage = int(args.get("minCandidateNodesPercentage",
                                                           DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE))
        self.min_candidate_nodes_absolute = int(args.get("minCandidateNodesAbsolute",
                                                         DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE))
        self.evaluator = Evaluator(self.name, handle, self)

    def post_filter(self, state: CycleState, pod: Object, node_to_status: Mapping[str, Status]
                    ) -> tuple[PostFilterResult | None, Status]:
        m = node_to_status if isinstance(node_to_status, NodeToStatus) else NodeToStatus(node_to_status)
        result, status = self.evaluator.preempt(state, pod, m)
        msg = status.message()
        if msg:
            return result, Status(status.code, "preemption: " + msg)
        return result, status

    def calculate_num_candidates(self, num_nodes: int) -> int:
        """calculateNumCandidates: a percentage of the nodes, at least the absolute minimum,
        never more than there are nodes."""
        n = num_nodes * self.min_candidate_nodes_percentage // 100
        n = max(n, self.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """GetOffsetAndNumCandidates: a random node to start the dry run at (rand.Int31n, from
        the framework's seeded random source), and how many candidates to look for."""
        rand = getattr(self.handle, "rand", None)
        offset = rand.randrange(num_nodes) if rand is not None and num_nodes > 0 else 0
        return offset, self.calculate_num_candidates(num_nodes)

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]:
        return {c.name: c.victims for c in candidates}

    def _now(self) -> float:
        clock = getattr(self.handle, "clock", None)
        return float(clock.now) if clock is not None else 0.0

    def select_victims_on_node(self, state: CycleState, pod: Object, node_info: NodeInfo,
                               pdbs: Sequence[Object]) -> tuple[list[Object], int, Status]:
        """SelectVictimsOnNode: the fewest pods to delete on node_info (a copy) for pod to fit.

        Remove every pod preemption may take; if pod still does not fit, the node is no
        candidate. Otherwise put the pods back one by one, most important first, PDB-violating
        ones before the others; a pod the preemptor no longer fits beside is a victim."""
        potential_victims = [pi for pi in node_info.pods.values()
                             if self.is_preemption_allowed(node_info, pi, pod)]
        for pi in potential_victims:
            node_info.remove_pod(pi)
        if not potential_victims:
            return [], 0, Status(Code.UnschedulableAndUnresolvable, NO_VICTIMS)
        status = self.handle.run_filter_plugins_with_nominated_pods(state, pod, node_info)
        if status is not None and not status.is_success():
            return [], 0, status
        now = self._now()
        potential_victims.sort(key=functools.cmp_to_key(
            lambda a, b: -1 if more_important_pod(a.pod, b.pod, now) else
            (1 if more_important_pod(b.pod, a.pod, now) else 0)))
        violating, non_violating = filter_pods_with_pdb_violation(potential_victims, pdbs)
        victims: list[PodInfo] = []

        def reprieve_pod(pi: PodInfo) -> bool:
            node_info.add_pod_info(pi)
            fits = self.handle.run_filter_plugins_with_nominated_pods(state, pod, node_info) is None
            if not fits:
                node_info.remove_pod(pi)
                victims.append(pi)
            return fits

        num_violating_victim = sum(1 for pi in violating if not reprieve_pod(pi))
        for pi in non_violating:
            reprieve_pod(pi)
        if violating and non_violating:  # keep the victims most important first
            victims.sort(key=functools.cmp_to_key(
                lambda a, b: -1 if more_important_pod(a.pod, b.pod, now) else
                (1 if more_important_pod(b.pod, a.pod, now) else 0)))
        return [pi.pod for pi in victims], num_violating_victim, Status(Code.Success)

    def pod_eligible_to_preempt_others(self, pod: Object, nominated_node_status: Status | None
                                       ) -> tuple[bool, str]:
        """PodEligibleToPreemptOthers: not with preemptionPolicy Never; and not again while
        pods it preempted on its nominated node are still terminating (unless that node
        became UnschedulableAndUnresolvable)."""
        if (pod.get("spec") or {}).get("preemptionPolicy") == "Never":
            return False, "not eligible due to preemptionPolicy=Never."
        nominated = (pod.get("status") or {}).get("nominatedNodeName") or ""
        if nominated:
            status = nominated_node_status
            if status is not None and status.code == Code.UnschedulableAndUnresolvable:
                return True, ""
            node_info = self.handle.snapshot.node_info_map.get(nominated)
            if node_info is not None:
                for p in node_info.pods.values():
                    if self.is_preemption_allowed(node_info, p, pod) and pod_terminating_by_preemption(p.pod):
                        return False, "not eligible due to a terminating pod on the nominated node."
        return True, ""

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, Victims]) -> list[Callable[[str], float]]:
        """OrderedScoreFuncs: none, so pickOneNodeForPreemption uses its default criteria."""
        return []

    def is_preemption_allowed(self, node_info: NodeInfo, victim: PodInfo, preemptor: Object) -> bool:
        """isPreemptionAllowed: the victim must have a lower priority than the preemptor
        (IsEligiblePod, the extra filter upstream lets a build plug in, allows all)."""
        return pod_priority(victim.pod) < pod_priority(preemptor)


def pod_terminating_by_preemption(pod: Object) -> bool:
    """podTerminatingByPreemption: being deleted, with DisruptionTarget=True from preemption."""
    if not (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "DisruptionTarget":
            return bool(condition.get("status") == "True"
                        and condition.get("reason") == "PreemptionByScheduler")
    return False


def filter_pods_with_pdb_violation(pod_infos: Sequence[PodInfo], pdbs: Sequence[Object]
                                   ) -> tuple[list[PodInfo], list[PodInfo]]:
    """filterPodsWithPDBViolation: split the pods (keeping their order) into those whose
    deletion would take some matching PDB below zero disruptions allowed, and the others.
    A pod already in a PDB's disruptedPods was counted by the API server: it uses no budget.
    A PDB with an empty or invalid selector matches nothing."""
    allowed = [int((pdb.get("status") or {}).get("disruptionsAllowed") or 0) for pdb in pdbs]
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for info in pod_infos:
        violated = False
        if info.labels:
            for i, pdb in enumerate(pdbs):
                if (pdb.get("metadata") or {}).get("namespace", "default") != info.namespace:
                    continue
                try:
                    selector = selector_from_label_selector((pdb.get("spec") or {}).get("selector"))
                except ParseError:
                    continue
                if selector.empty() or not selector.matches(info.labels):
                    continue
                if info.name in ((pdb.get("status") or {}).get("disruptedPods") or {}):
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(info)
    return violating, non_violating
