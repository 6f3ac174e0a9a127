"""NodeResourcesFit: does the pod fit in what the node has left, and how full is the node?

pkg/scheduler/framework/plugins/noderesources/fit.go.
Filter: the node must have room for one more pod and for every resource the pod requests:
    request <= allocatable - (sum of the requests of the pods already there).
Each shortfall is a reason: "Too many pods", "Insufficient cpu", "Insufficient memory",
"Insufficient ephemeral-storage", "Insufficient <extended resource>". If the pod asks for
more than the whole node has, preemption cannot help: UnschedulableAndUnresolvable.
Score: the scoring strategy of NodeResourcesFitArgs (LeastAllocated by default spreads pods;
MostAllocated packs them; RequestedToCapacityRatio follows a configured shape).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubelab.scheduler.interface import Code, CycleState, Handle, PreFilterResult, Status
from kubelab.scheduler.plugins.resource_allocation import (
    DEFAULT_RESOURCES,
    ResourceAllocationScorer,
    Scorer,
    least_resource_scorer,
    most_resource_scorer,
    requested_to_capacity_ratio_scorer,
)
from kubelab.scheduler.types import NodeInfo, Object, Resource, pod_requests

__all__ = ["NodeResourcesFit", "default_fit_args"]

_PRE_FILTER_KEY = "PreFilterNodeResourcesFit"
_PRE_SCORE_KEY = "PreScoreNodeResourcesFit"
DEFAULT_SHAPE = ({"utilization": 0, "score": 10}, {"utilization": 100, "score": 0})


def default_fit_args(args: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """v1 defaults.go SetDefaults_NodeResourcesFitArgs: LeastAllocated over cpu and memory,
    weight 1 each; RequestedToCapacityRatio without a shape gets (0%, 10) -> (100%, 0)."""
    out = dict(args or {})
    strategy = dict(out.get("scoringStrategy") or {"type": "LeastAllocated"})
    strategy.setdefault("type", "LeastAllocated")
    if not strategy.get("resources"):
        strategy["resources"] = [{"name": n, "weight": w} for n, w in DEFAULT_RESOURCES]
    if strategy["type"] == "RequestedToCapacityRatio" and not strategy.get("requestedToCapacityRatio"):
        strategy["requestedToCapacityRatio"] = {"shape": [dict(p) for p in DEFAULT_SHAPE]}
    out["scoringStrategy"] = strategy
    return out


def _is_extended(name: str) -> bool:
    return "/" in name and not name.startswith("kubernetes.io/")


class NodeResourcesFit:
    name = "NodeResourcesFit"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        args = default_fit_args(args)
        self.ignored_resources = set(args.get("ignoredResources") or ())
        self.ignored_resource_groups = set(args.get("ignoredResourceGroups") or ())
        strategy = args["scoringStrategy"]
        resources = [(r["name"], int(r.get("weight") or 1)) for r in strategy["resources"]]
        kind = strategy["type"]
        scorer: Scorer
        if kind in ("LeastAllocated", "MostAllocated"):
            make = least_resource_scorer if kind == "LeastAllocated" else most_resource_scorer
            scorer = make(resources)
        elif kind == "RequestedToCapacityRatio":
            shape = [(int(p["utilization"]), int(p["score"]))
                     for p in strategy["requestedToCapacityRatio"]["shape"]]
            scorer = requested_to_capacity_ratio_scorer(resources, shape)
        else:
            raise ValueError(f"scoring strategy {kind} is not supported")
        self.strategy = kind
        self.scorer = ResourceAllocationScorer(kind, scorer, resources, use_requested=False)

    # --- Filter -------------------------------------------------------------------------------

    def _request(self, pod: Object) -> Resource:
        """computePodResourceRequest, minus the extended resources configured as ignored."""
        request = Resource(pod_requests(pod))
        request.scalar_resources = {
            name: value for name, value in request.scalar_resources.items()
            if value > 0 and not (_is_extended(name) and (
                name in self.ignored_resources or name.split("/")[0] in self.ignored_resource_groups))}
        return request

    def pre_filter(self, state: CycleState, pod: Object,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        state.write(_PRE_FILTER_KEY, self._request(pod))
        return None, None

    def filter(self, state: CycleState, pod: Object, node_info: NodeInfo) -> Status | None:
        return _fits_request(self._pre_filter_state(state, pod), node_info)

    def _pre_filter_state(self, state: CycleState, pod: Object) -> Resource:
        try:
            request: Resource = state.read(_PRE_FILTER_KEY)
        except KeyError:
            request = self._request(pod)
        return request

    # --- Score --------------------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Object, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(_PRE_SCORE_KEY, self.scorer.pod_request_list(pod))
        return None

    def score(self, state: CycleState, pod: Object, node_info: NodeInfo) -> int:
        return self.scorer.score(node_info, self._pre_score_state(state, pod))

    def _pre_score_state(self, state: CycleState, pod: Object) -> list[int]:
        try:
            requests: list[int] = state.read(_PRE_SCORE_KEY)
        except KeyError:
            requests = self.scorer.pod_request_list(pod)
        return requests


def _fits_request(request: Resource, node_info: NodeInfo) -> Status | None:
    """fitsRequest: every shortfall is a reason, in upstream's order (pods, cpu, memory,
    ephemeral-storage, then the scalar resources); asking for more than the whole node has
    makes the status UnschedulableAndUnresolvable."""
    have, used = node_info.allocatable, node_info.requested
    reasons: list[str] = []
    unresolvable = False
    if len(node_info.pods) + 1 > have.allowed_pod_number:
        reasons.append("Too many pods")
    if (request.milli_cpu == 0 and request.memory == 0 and request.ephemeral_storage == 0
            and not request.scalar_resources):
        return Status(Code.Unschedulable, *reasons) if reasons else None
    if request.milli_cpu > 0 and request.milli_cpu > have.milli_cpu - used.milli_cpu:
        reasons.append("Insufficient cpu")
        unresolvable = request.milli_cpu > have.milli_cpu
    if request.memory > 0 and request.memory > have.memory - used.memory:
        reasons.append("Insufficient memory")
        unresolvable = unresolvable or request.memory > have.memory
    storage = request.ephemeral_storage
    if storage > 0 and storage > have.ephemeral_storage - used.ephemeral_storage:
        reasons.append("Insufficient ephemeral-storage")
        unresolvable = unresolvable or storage > have.ephemeral_storage
    for name, want in request.scalar_resources.items():
        capacity = have.scalar_resources.get(name, 0)
        if want > 0 and want > capacity - used.scalar_resources.get(name, 0):
            reasons.append(f"Insufficient {name}")
            unresolvable = unresolvable or want > capacity
    if not reasons:
        return None
    return Status(Code.UnschedulableAndUnresolvable if unresolvable else Code.Unschedulable, *reasons)
