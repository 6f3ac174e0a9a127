"""PodTopologySpread: spread matching pods evenly over zones, nodes or any topology label.

pkg/scheduler/framework/plugins/podtopologyspread/: common.go, filtering.go, scoring.go.

For a constraint {topologyKey, maxSkew, labelSelector}, a domain is one value of the
topologyKey label (one zone, or one node for kubernetes.io/hostname), and a domain's count is
the number of pods in the pod's namespace, on nodes of that domain, matching labelSelector.

Filter (whenUnsatisfiable: DoNotSchedule): placing the pod on a node must keep
    count(node's domain) + (1 if the pod matches its own selector) - min count <= maxSkew.
The minimum is over the eligible domains; with minDomains set and fewer domains than that,
it is 0. A node without the topology label is rejected ("(missing required label)").
Which nodes count follows nodeAffinityPolicy (default Honor: only nodes the pod's
nodeSelector/affinity allows) and nodeTaintsPolicy (default Ignore).

Score (whenUnsatisfiable: ScheduleAnyway): fewer matching pods in the node's domains scores
higher: raw = sum(count * log(domains + 2) + maxSkew - 1), then normalized so the least loaded
node gets 100. Nodes missing a topology label score 0.

System default constraints (hostname maxSkew 3, zone maxSkew 5, ScheduleAnyway) apply
upstream to pods selected by a Service, ReplicaSet, ReplicationController or StatefulSet.
Finding that selector needs those objects, which this API-free core does not have: set
`default_selector` on the plugin (pod -> Selector or None) to turn defaulting on; by default
pods without their own constraints are not spread.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubelab.api.labels import Operator, Requirement, Selector, selector_from_label_selector
from kubelab.scheduler.interface import (
    MAX_NODE_SCORE,
    Code,
    CycleState,
    Handle,
    NodeScore,
    PreFilterResult,
    Status,
)
from kubelab.scheduler.plugins.helper import RequiredNodeAffinity, find_matching_untolerated_taint, go_round
from kubelab.scheduler.types import NodeInfo, Object, PodInfo

__all__ = ["ERR_REASON_CONSTRAINTS_NOT_MATCH", "ERR_REASON_NODE_LABEL_NOT_MATCH",
           "SYSTEM_DEFAULT_CONSTRAINTS", "PodTopologySpread"]

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
LABEL_HOSTNAME = "kubernetes.io/hostname"
SYSTEM_DEFAULT_CONSTRAINTS = (
    {"topologyKey": LABEL_HOSTNAME, "whenUnsatisfiable": "ScheduleAnyway", "maxSkew": 3},
    {"topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway", "maxSkew": 5},
)
_PRE_FILTER_KEY = "PreFilterPodTopologySpread"
_PRE_SCORE_KEY = "PreScorePodTopologySpread"
_MAX_INT32 = 2**31 - 1


@dataclass(frozen=True)
class Constraint:
    """topologySpreadConstraint: a v1.TopologySpreadConstraint with its selector parsed."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int = 1
    node_affinity_policy: str = "Honor"
    node_taints_policy: str = "Ignore"

    def counts_node(self, node_info: NodeInfo, required: RequiredNodeAffinity,
                    tolerations: Sequence[Mapping[str, Any]]) -> bool:
        """matchNodeInclusionPolicies: does this node's domain take part at all?"""
        if self.node_affinity_policy == "Honor" and not required.match(node_info.labels, node_info.name):
            return False
        return not (self.node_taints_policy == "Honor"
                    and find_matching_untolerated_taint(node_info.no_schedule_taints, tolerations))


def _has_keys(node_info: NodeInfo, constraints: Sequence[Constraint]) -> bool:
    return all(c.topology_key in node_info.labels for c in constraints)


def count_pods_match_selector(pods: Mapping[str, PodInfo], selector: Selector, namespace: str) -> int:
    """Matching pods in the namespace, not counting pods being deleted (kubernetes #87621)."""
    if selector.empty():
        return 0
    return sum(1 for p in pods.values()
               if not p.terminating and p.namespace == namespace and selector.matches(p.labels))


@dataclass
class _PreFilterState:
    constraints: list[Constraint]
    counts: list[dict[str, int]]  # per constraint: domain -> matching pods
    min_match: list[int]  # per constraint: the global minimum, minDomains applied
    self_match: list[int]  # per constraint: 1 if the pod matches its own selector


@dataclass
class _PreScoreState:
    constraints: list[Constraint]
    ignored_nodes: set[str]
    counts: list[dict[str, int]]
    weights: list[float]  # topologyNormalizingWeight: log(number of domains + 2)


class PodTopologySpread:
    name = "PodTopologySpread"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.handle = handle
        self.system_defaulted = (args.get("defaultingType") or "System") == "System"
        self.default_constraints: list[Mapping[str, Any]] = list(
            SYSTEM_DEFAULT_CONSTRAINTS if self.system_defaulted else args.get("defaultConstraints") or ())
        # pod -> the selector of its Service/ReplicaSet/...; None leaves defaulting off.
        self.default_selector: Callable[[Object], Selector | None] | None = None

    def _constraints(self, pod: Object, action: str) -> list[Constraint]:
        spec, labels = pod.get("spec") or {}, (pod.get("metadata") or {}).get("labels") or {}
        if spec.get("topologySpreadConstraints"):
            return [_parse(c, labels) for c in spec["topologySpreadConstraints"]
                    if c.get("whenUnsatisfiable") == action]
        defaults = [c for c in self.default_constraints if c.get("whenUnsatisfiable") == action]
        selector = self.default_selector(pod) if defaults and self.default_selector else None
        if selector is None or selector.empty():
            return []
        return [Constraint(int(c["maxSkew"]), c["topologyKey"], selector) for c in defaults]

    # --- Filter: DoNotSchedule ----------------------------------------------------------------

    def pre_filter(self, state: CycleState, pod: Object,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        constraints = self._constraints(pod, "DoNotSchedule")
        if not constraints:
            return None, Status(Code.Skip)
        namespace = (pod.get("metadata") or {}).get("namespace", "default")
        required = RequiredNodeAffinity(pod)
        tolerations = (pod.get("spec") or {}).get("tolerations") or ()
        counts: list[dict[str, int]] = [{} for _ in constraints]
        for node_info in nodes:
            if not _has_keys(node_info, constraints):
                continue
            for i, c in enumerate(constraints):
                if c.counts_node(node_info, required, tolerations):
                    value = node_info.labels[c.topology_key]
                    counts[i][value] = counts[i].get(value, 0) + count_pods_match_selector(
                        node_info.pods, c.selector, namespace)
        min_match = [0 if len(counts[i]) < c.min_domains else min(counts[i].values(), default=_MAX_INT32)
                     for i, c in enumerate(constraints)]
        labels = (pod.get("metadata") or {}).get("labels") or {}
        self_match = [1 if c.selector.matches(labels) else 0 for c in constraints]
        state.write(_PRE_FILTER_KEY, _PreFilterState(constraints, counts, min_match, self_match))
        return None, None

    def filter(self, state: CycleState, pod: Object, node_info: NodeInfo) -> Status | None:
        s: _PreFilterState = state.read(_PRE_FILTER_KEY)
        for i, c in enumerate(s.constraints):
            value = node_info.labels.get(c.topology_key)
            if value is None:
                return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_NODE_LABEL_NOT_MATCH)
            skew = s.counts[i].get(value, 0) + s.self_match[i] - s.min_match[i]
            if skew > c.max_skew:
                return Status(Code.Unschedulable, ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return None

    # --- Score: ScheduleAnyway ----------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Object, nodes: Sequence[NodeInfo]) -> Status | None:
        all_nodes = self.handle.snapshot.node_info_list
        constraints = self._constraints(pod, "ScheduleAnyway") if all_nodes else []
        if not constraints:
            return Status(Code.Skip)
        # Nodes without every topology label are ignored, except under system defaulting,
        # so that nodes without a zone label can still be spread by hostname.
        own = bool((pod.get("spec") or {}).get("topologySpreadConstraints"))
        require_all = own or not self.system_defaulted
        ignored: set[str] = set()
        counts: list[dict[str, int]] = [{} for _ in constraints]
        for node_info in nodes:
            if require_all and not _has_keys(node_info, constraints):
                ignored.add(node_info.name)
                continue
            for i, c in enumerate(constraints):
                if c.topology_key != LABEL_HOSTNAME:  # per-node counts are made in Score
                    counts[i].setdefault(node_info.labels.get(c.topology_key, ""), 0)
        weights = [math.log((len(nodes) - len(ignored) if c.topology_key == LABEL_HOSTNAME
                             else len(counts[i])) + 2) for i, c in enumerate(constraints)]
        namespace = (pod.get("metadata") or {}).get("namespace", "default")
        required = RequiredNodeAffinity(pod)
        tolerations = (pod.get("spec") or {}).get("tolerations") or ()
        for node_info in all_nodes:
            if require_all and not _has_keys(node_info, constraints):
                continue
            for i, c in enumerate(constraints):
                value = node_info.labels.get(c.topology_key, "")
                if value in counts[i] and c.counts_node(node_info, required, tolerations):
                    counts[i][value] += count_pods_match_selector(node_info.pods, c.selector, namespace)
        state.write(_PRE_SCORE_KEY, _PreScoreState(constraints, ignored, counts, weights))
        return None

    def score(self, state: CycleState, pod: Object, node_info: NodeInfo) -> int:
        s: _PreScoreState = state.read(_PRE_SCORE_KEY)
        if node_info.name in s.ignored_nodes:
            return 0
        namespace = (pod.get("metadata") or {}).get("namespace", "default")
        score = 0.0
        for i, c in enumerate(s.constraints):
            value = node_info.labels.get(c.topology_key)
            if value is None:
                continue
            if c.topology_key == LABEL_HOSTNAME:
                count = count_pods_match_selector(node_info.pods, c.selector, namespace)
            else:
                count = s.counts[i][value]
            score += count * s.weights[i] + (c.max_skew - 1)  # scoreForCount
        return go_round(score)

    def normalize_score(self, state: CycleState, pod: Object, scores: list[NodeScore]) -> Status | None:
        """Fewer matching pods is better: the lowest total gets 100; ignored nodes get 0."""
        s: _PreScoreState = state.read(_PRE_SCORE_KEY)
        ignored = s.ignored_nodes
        valid = [n.score for n in scores if n.name not in ignored]
        lowest, highest = min(valid, default=0), max(valid, default=0)
        for n in scores:
            n.score = (0 if n.name in ignored else MAX_NODE_SCORE if highest == 0
                       else MAX_NODE_SCORE * (highest + lowest - n.score) // highest)
        return None

def _parse(c: Mapping[str, Any], pod_labels: Mapping[str, str]) -> Constraint:
    """filterTopologySpreadConstraints for one constraint: parse its selector and merge in
    matchLabelKeys (the pod's own values for those label keys)."""
    selector = selector_from_label_selector(c.get("labelSelector"))
    extra = [Requirement(k, Operator.Equals, (pod_labels[k],))
             for k in c.get("matchLabelKeys") or () if k in pod_labels]
    if extra and not selector.matches_nothing:
        selector = Selector(selector.requirements + tuple(extra))
    return Constraint(int(c.get("maxSkew", 1)), c.get("topologyKey", ""), selector,
                      int(c.get("minDomains") or 1), c.get("nodeAffinityPolicy") or "Honor",
                      c.get("nodeTaintsPolicy") or "Ignore")
