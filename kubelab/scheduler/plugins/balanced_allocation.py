"""NodeResourcesBalancedAllocation: prefer nodes whose resources would be used evenly.

pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go. The score is
(1 - std) * 100, std being the standard deviation of requested/allocatable over the
configured resources (cpu and memory by default), counting the incoming pod and using real
requests. A pod that requests nothing (best effort) is not scored by this plugin: PreScore
returns Skip so such pods do not all pile onto one node (kubernetes issue #129138).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubelab.scheduler.interface import Code, CycleState, Handle, Status
from kubelab.scheduler.plugins.resource_allocation import (
    DEFAULT_RESOURCES,
    ResourceAllocationScorer,
    balanced_resource_scorer,
)
from kubelab.scheduler.types import NodeInfo, Object

__all__ = ["NodeResourcesBalancedAllocation"]

_PRE_SCORE_KEY = "PreScoreNodeResourcesBalancedAllocation"


class NodeResourcesBalancedAllocation:
    name = "NodeResourcesBalancedAllocation"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        resources = [(r["name"], int(r.get("weight") or 1)) for r in args.get("resources") or ()]
        self.scorer = ResourceAllocationScorer(
            self.name, balanced_resource_scorer, resources or DEFAULT_RESOURCES, use_requested=True)

    def pre_score(self, state: CycleState, pod: Object, nodes: Sequence[NodeInfo]) -> Status | None:
        requests = self.scorer.pod_request_list(pod)
        if not any(requests):
            return Status(Code.Skip)
        state.write(_PRE_SCORE_KEY, requests)
        return None

    def score(self, state: CycleState, pod: Object, node_info: NodeInfo) -> int:
        try:
            requests: list[int] = state.read(_PRE_SCORE_KEY)
        except KeyError:  # PreScore did not run: work it out here, as upstream's Score does
            requests = self.scorer.pod_request_list(pod)
            if not any(requests):
                return 0
        return self.scorer.score(node_info, requests)
