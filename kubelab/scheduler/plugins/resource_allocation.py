"""How node resource scores are computed: LeastAllocated, MostAllocated,
RequestedToCapacityRatio and BalancedAllocation.

pkg/scheduler/framework/plugins/noderesources/: resource_allocation.go (what "requested" and
"allocatable" mean per resource), least_allocated.go, most_allocated.go,
requested_to_capacity_ratio.go and balanced_allocation.go (the formulas). Each score is an
integer in [0, 100] computed with Go's integer arithmetic.

"Requested" includes the incoming pod. For cpu and memory the strategies of NodeResourcesFit
use the non-zero requests (a container without a request counts 100m CPU and 200Mi memory);
BalancedAllocation uses the real requests (useRequested).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from kubelab.scheduler.interface import MAX_NODE_SCORE
from kubelab.scheduler.plugins.helper import build_broken_linear_function, go_round
from kubelab.scheduler.types import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    NodeInfo,
    Object,
    pod_requests,
)

__all__ = [
    "DEFAULT_RESOURCES",
    "ResourceAllocationScorer",
    "Scorer",
    "balanced_resource_scorer",
    "least_requested_score",
    "least_resource_scorer",
    "most_requested_score",
    "most_resource_scorer",
    "requested_to_capacity_ratio_scorer",
]

ResourceSpec = tuple[str, int]  # (resource name, weight)
Scorer = Callable[[list[int], list[int]], int]  # (requested, allocatable) -> score

DEFAULT_RESOURCES: tuple[ResourceSpec, ...] = (("cpu", 1), ("memory", 1))
MAX_CUSTOM_PRIORITY_SCORE = 10  # RequestedToCapacityRatio shapes score 0..10
_MAX_UTILIZATION = 100
_NATIVE = ("cpu", "memory", "ephemeral-storage", "pods")


def least_requested_score(requested: int, capacity: int) -> int:
    """(capacity - requested) * 100 / capacity: the emptier the node, the higher."""
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def most_requested_score(requested: int, capacity: int) -> int:
    """requested * 100 / capacity: the fuller the node, the higher (bin packing). Requested
    may exceed capacity because of the non-zero defaults; it is capped."""
    if capacity == 0:
        return 0
    return min(requested, capacity) * MAX_NODE_SCORE // capacity


def _weighted_scorer(resources: Sequence[ResourceSpec], score_one: Callable[[int, int], int]) -> Scorer:
    """The weighted average of score_one over the resources the node has, rounded down
    (leastResourceScorer and mostResourceScorer)."""
    weights = [weight for _, weight in resources]

    def scorer(requested: list[int], allocatable: list[int]) -> int:
        node_score = weight_sum = 0
        for used, capacity, weight in zip(requested, allocatable, weights, strict=False):
            if capacity:  # a resource the node does not have is not scored
                node_score += score_one(used, capacity) * weight
                weight_sum += weight
        return node_score // weight_sum if weight_sum else 0

    return scorer


def least_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    return _weighted_scorer(resources, least_requested_score)


def most_resource_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    return _weighted_scorer(resources, most_requested_score)


def requested_to_capacity_ratio_scorer(resources: Sequence[ResourceSpec],
                                       shape: Sequence[tuple[int, int]]) -> Scorer:
    """Score each resource by a broken-linear function of its utilization (0-100%) whose
    points score 0-10, scaled to 0-100; then a weighted average, rounded."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = build_broken_linear_function([(u, s * scale) for u, s in shape])

    def scorer(requested: list[int], allocatable: list[int]) -> int:
        node_score = weight_sum = 0
        for i, (_, weight) in enumerate(resources):
            capacity = allocatable[i]
            if capacity == 0:
                continue
            used = requested[i]
            score = raw(_MAX_UTILIZATION if used > capacity else used * _MAX_UTILIZATION // capacity)
            if score > 0:
                node_score += score * weight
                weight_sum += weight
        return go_round(node_score / weight_sum) if weight_sum else 0

    return scorer


def balanced_resource_scorer(requested: list[int], allocatable: list[int]) -> int:
    """(1 - std) * 100 where std is the standard deviation of the requested fractions:
    a node whose cpu and memory are used alike scores high. With two resources the
    standard deviation is |f1 - f2| / 2."""
    fractions = []
    for used, capacity in zip(requested, allocatable, strict=False):
        if capacity:
            fraction = used / capacity
            fractions.append(fraction if fraction < 1.0 else 1.0)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)


class ResourceAllocationScorer:
    """resourceAllocationScorer: gathers (requested, allocatable) per configured resource
    for one node and hands them to the scorer (resource_allocation.go score)."""

    def __init__(self, name: str, scorer: Scorer, resources: Sequence[ResourceSpec],
                 use_requested: bool) -> None:
        self.name = name
        self.scorer = scorer
        self.resources = tuple(resources)
        self.use_requested = use_requested

    def pod_request_list(self, pod: Object) -> list[int]:
        """calculatePodResourceRequestList, in the order of self.resources."""
        defaults = None if self.use_requested else {"cpu": DEFAULT_MILLI_CPU_REQUEST,
                                                    "memory": DEFAULT_MEMORY_REQUEST}
        requests = pod_requests(pod, defaults)
        return [requests.get(name, 0) for name, _ in self.resources]

    def score(self, node_info: NodeInfo, pod_requests_list: list[int]) -> int:
        """(requested, allocatable) of each configured resource the node has, for the scorer;
        requested counts the incoming pod (calculateResourceAllocatableRequest)."""
        node_requested = node_info.requested if self.use_requested else node_info.non_zero_requested
        n = len(self.resources)
        requested, allocatable = [0] * n, [0] * n
        for i, (name, _) in enumerate(self.resources):
            pod_request = pod_requests_list[i]
            if name == "cpu":
                alloc, used = node_info.allocatable.milli_cpu, node_requested.milli_cpu
            elif name == "memory":
                alloc, used = node_info.allocatable.memory, node_requested.memory
            elif name == "ephemeral-storage":
                alloc, used = node_info.allocatable.ephemeral_storage, node_info.requested.ephemeral_storage
            elif name in _NATIVE or pod_request == 0 or name not in node_info.allocatable.scalar_resources:
                continue  # an extended resource the pod does not ask for is not scored
            else:
                alloc = node_info.allocatable.scalar_resources[name]
                used = node_info.requested.scalar_resources.get(name, 0)
            if alloc:
                allocatable[i], requested[i] = alloc, used + pod_request
        return self.scorer(requested, allocatable)
