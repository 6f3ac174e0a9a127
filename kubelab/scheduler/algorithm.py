"""One scheduling cycle's algorithm: find the nodes that fit, score them, pick one.

Follows pkg/scheduler/schedule_one.go (schedulePod, findNodesThatFitPod,
findNodesThatPassFilters, numFeasibleNodesToFind, prioritizeNodes, selectHost) and the
FitError message of pkg/scheduler/framework/types.go. Upstream checks nodes in parallel;
we check them one after another, which gives the same answer in a reproducible order.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import TYPE_CHECKING, NamedTuple

from kubelab.scheduler.explain import Explanation
from kubelab.scheduler.interface import Code, CycleState, PostFilterResult, Status
from kubelab.scheduler.snapshot import Snapshot
from kubelab.scheduler.types import NodeInfo, Object

if TYPE_CHECKING:
    from kubelab.scheduler.framework import Framework

__all__ = [
    "MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND",
    "MIN_FEASIBLE_NODES_TO_FIND",
    "Diagnosis",
    "FitError",
    "NoNodesAvailableError",
    "NodePluginScores",
    "ScheduleResult",
    "SchedulingError",
    "find_nodes_that_fit_pod",
    "find_nodes_that_pass_filters",
    "num_feasible_nodes_to_find",
    "prioritize_nodes",
    "schedule_pod",
    "select_host",
]

# Score at least this many feasible nodes, and at least this percentage of the cluster:
# enough to spread pods well, few enough to stay fast on 5,000 nodes.
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


class SchedulingError(Exception):
    """A plugin failed (Code.Error): the pod is retried later, it is not unschedulable."""


class NoNodesAvailableError(SchedulingError):
    def __init__(self) -> None:
        super().__init__("no nodes available to schedule pods")


@dataclass
class Diagnosis:
    """Why nodes were rejected: each rejected node's Status, plus one Status standing for
    the nodes never looked at because PreFilter ruled them out."""

    node_to_status: dict[str, Status] = field(default_factory=dict)
    absent_nodes_status: Status | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""

    def add_plugin_status(self, status: Status) -> None:
        if status.plugin and status.is_rejected():
            self.unschedulable_plugins.add(status.plugin)


class FitError(Exception):
    """No node fits. str(err) is upstream's message, e.g.
    `0/3 nodes are available: 1 Insufficient memory, 2 Insufficient cpu.`"""

    def __init__(self, pod: Object, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis
        self.explanation: Explanation | None = None
        self.post_filter_result: PostFilterResult | None = None  # e.g. a node to nominate

    def __str__(self) -> str:
        d, n = self.diagnosis, self.num_all_nodes
        message = f"0/{n} nodes are available:"
        if d.pre_filter_msg:
            message += f" {d.pre_filter_msg}."
        else:  # count each reason over the nodes; sort "count reason" strings as text
            reasons: Counter[str] = Counter()
            for status in d.node_to_status.values():
                reasons.update(status.reasons)
            if len(d.node_to_status) < n and d.absent_nodes_status is not None:
                for reason in d.absent_nodes_status.reasons:
                    reasons[reason] += n - len(d.node_to_status)
            histogram = sorted(f"{count} {reason}" for reason, count in reasons.items())
            if histogram:
                message += " " + ", ".join(histogram) + "."
        if d.post_filter_msg:  # only when a PostFilter plugin (preemption) ran
            message += f" {d.post_filter_msg}"
        return message


class NodePluginScores(NamedTuple):
    """A node and its total score. prioritize_nodes returns plain (name, total) tuples,
    which unpack the same way: building a NamedTuple per feasible node per cycle costs
    eight times as much as zip's tuples."""

    name: str
    total_score: int


@dataclass
class ScheduleResult:
    suggested_host: str
    evaluated_nodes: int  # nodes the filters ran on (feasible + rejected)
    feasible_nodes: int
    explanation: Explanation | None = None


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


def schedule_pod(fwk: Framework, state: CycleState, pod: Object, snapshot: Snapshot,
                 explanation: Explanation | None = None) -> ScheduleResult:
    """schedulePod: raises NoNodesAvailableError, FitError or SchedulingError."""
    if len(snapshot) == 0:
        raise NoNodesAvailableError()
    feasible, diagnosis = find_nodes_that_fit_pod(fwk, state, pod, snapshot, explanation)
    if not feasible:
        raise FitError(pod, len(snapshot), diagnosis)
    evaluated = len(feasible) + len(diagnosis.node_to_status)
    if len(feasible) == 1:  # nothing to compare: skip scoring
        if explanation is not None:
            explanation.note = "one feasible node: scoring skipped"
        return ScheduleResult(feasible[0].name, evaluated, 1, explanation)
    host = select_host(_node_totals(fwk, state, pod, feasible, explanation), fwk.rand)
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
    """Filter nodes round-robin from fwk.next_start_node_index until enough are feasible."""
    num_all = len(nodes)
    if num_all == 0:
        return []
    to_find = num_feasible_nodes_to_find(fwk.percentage_of_nodes_to_score, num_all, fwk.global_percentage)
    if not fwk.has_score_plugins():
        to_find = 1  # without scores any feasible node is as good as another
    start = fwk.next_start_node_index
    if not fwk.has_filter_plugins():
        return [nodes[(start + i) % num_all] for i in range(to_find)]
    # Round-robin from start. The next (to_find - found) nodes are checked whatever they
    # answer (the search cannot stop before), so they are checked as one batch, plugin by
    # plugin: the same nodes, plugins and verdicts as one node at a time, in fewer calls.
    order = [*nodes[start:], *nodes[:start]]
    feasible: list[NodeInfo] = []
    checked = 0
    while checked < num_all and len(feasible) < to_find:
        batch = order[checked:checked + to_find - len(feasible)]
        checked += len(batch)
        statuses = fwk.run_filter_plugins_on_nodes(state, pod, batch, explanation)
        if not any(statuses):  # every node fits: the usual case
            feasible += batch
            continue
        for node_info, status in zip(batch, statuses, strict=True):
            if status is None:
                feasible.append(node_info)
            elif status.code == Code.Error:
                raise SchedulingError(status.message())
            else:
                diagnosis.node_to_status[node_info.name] = status
                diagnosis.add_plugin_status(status)
    return feasible


def prioritize_nodes(fwk: Framework, state: CycleState, pod: Object, nodes: Sequence[NodeInfo],
                     explanation: Explanation | None = None) -> list[tuple[str, int]]:
    """PreScore, then Score, NormalizeScore and weights; (node name, total) per node."""
    return list(_node_totals(fwk, state, pod, nodes, explanation))


def _node_totals(fwk: Framework, state: CycleState, pod: Object, nodes: Sequence[NodeInfo],
                 explanation: Explanation | None = None) -> Iterator[tuple[str, int]]:
    """prioritize_nodes as an iterator, for select_host to read without a list of pairs."""
    names = [n.name for n in nodes]
    if not fwk.has_score_plugins():
        return zip(names, repeat(1))
    status = fwk.run_pre_score_plugins(state, pod, nodes, explanation)
    if status is not None:
        raise SchedulingError(status.message())
    return zip(names, fwk.run_score_plugins(state, pod, nodes, explanation), strict=True)


def select_host(node_scores: Iterable[tuple[str, int]], rand: random.Random) -> str:
    """The highest total wins; ties are broken uniformly at random by reservoir sampling:
    the k-th tied node replaces the choice with probability 1/k (selectHost).
    node_scores: NodePluginScores, or the plain (name, total) pairs of prioritize_nodes."""
    scores = iter(node_scores)
    first = next(scores, None)
    if first is None:
        raise SchedulingError("empty priorityList")
    selected, best = first
    tied = 1
    for name, total in scores:
        if total < best:
            continue
        if total > best:
            selected, best, tied = name, total, 1
        else:
            tied += 1
            if rand.random() * tied < 1:  # probability 1/tied, like rand.Intn(tied) == 0
                selected = name
    return selected
