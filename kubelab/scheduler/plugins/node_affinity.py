"""NodeAffinity: spec.nodeSelector and spec.affinity.nodeAffinity.

pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go.
Filter: the node must match the nodeSelector and one of the required nodeSelectorTerms.
PreFilter narrows the search when the terms name nodes (matchFields metadata.name In).
Score: the sum of the weights of the preferred terms the node matches, normalized so the
best node gets 100 (DefaultNormalizeScore, not reversed).

NodeAffinityArgs.addedAffinity (a profile-wide affinity every pod must also satisfy) is
supported; the upstream reason for it is "node(s) didn't match scheduler-enforced node affinity".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubelab.scheduler.interface import (
    MAX_NODE_SCORE,
    Code,
    CycleState,
    Handle,
    NodeScore,
    PreFilterResult,
    Status,
)
from kubelab.scheduler.plugins.helper import (
    RequiredNodeAffinity,
    default_normalize_score,
    node_selector_term_matches,
    preferred_scheduling_score,
)
from kubelab.scheduler.types import NodeInfo, Object

__all__ = ["ERR_REASON_POD", "NodeAffinity"]

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
_PRE_FILTER_KEY = "PreFilterNodeAffinity"
_PRE_SCORE_KEY = "PreScoreNodeAffinity"


def _node_affinity(pod: Object) -> Mapping[str, Any]:
    return ((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}


class NodeAffinity:
    name = "NodeAffinity"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        added = args.get("addedAffinity") or {}
        required = added.get("requiredDuringSchedulingIgnoredDuringExecution")
        self.added_terms: list[Mapping[str, Any]] | None = None
        if required is not None:
            self.added_terms = [t for t in required.get("nodeSelectorTerms") or ()
                                if t.get("matchExpressions") or t.get("matchFields")]
        self.added_preferred: list[Mapping[str, Any]] = list(
            added.get("preferredDuringSchedulingIgnoredDuringExecution") or ())

    def pre_filter(self, state: CycleState, pod: Object,
                   nodes: Sequence[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        required = _node_affinity(pod).get("requiredDuringSchedulingIgnoredDuringExecution")
        if required is None and self.added_terms is None and not (pod.get("spec") or {}).get("nodeSelector"):
            return None, Status(Code.Skip)  # nothing to check for this pod
        state.write(_PRE_FILTER_KEY, RequiredNodeAffinity(pod))
        terms = (required or {}).get("nodeSelectorTerms") or []
        if not terms:
            return None, None
        # Terms that pin node names (matchFields metadata.name In) let us skip other nodes.
        node_names: set[str] = set()
        for term in terms:
            names: set[str] | None = None
            for req in term.get("matchFields") or ():
                if req.get("key") == "metadata.name" and req.get("operator") == "In":
                    values = set(req.get("values") or ())
                    names = values if names is None else names & values
            if names is None:
                return None, None  # this term can match any node, and terms are ORed
            node_names |= names
        if not node_names:
            return None, Status(Code.UnschedulableAndUnresolvable, ERR_REASON_CONFLICT)
        return PreFilterResult(frozenset(node_names)), None

    def filter(self, state: CycleState, pod: Object, node_info: NodeInfo) -> Status | None:
        labels, name = node_info.labels, node_info.name
        if self.added_terms is not None and not any(
                node_selector_term_matches(t, labels, name) for t in self.added_terms):
            return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_ENFORCED)
        try:
            required: RequiredNodeAffinity = state.read(_PRE_FILTER_KEY)
        except KeyError:  # PreFilter disabled or skipped: work it out here
            required = RequiredNodeAffinity(pod)
        if not required.match(labels, name):
            return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_POD)
        return None

    def pre_score(self, state: CycleState, pod: Object, nodes: Sequence[NodeInfo]) -> Status | None:
        preferred = _node_affinity(pod).get("preferredDuringSchedulingIgnoredDuringExecution")
        if preferred is None and not self.added_preferred:
            return Status(Code.Skip)
        state.write(_PRE_SCORE_KEY, list(preferred or ()))
        return None

    def score(self, state: CycleState, pod: Object, node_info: NodeInfo) -> int:
        try:
            preferred = state.read(_PRE_SCORE_KEY)
        except KeyError:
            preferred = _node_affinity(pod).get("preferredDuringSchedulingIgnoredDuringExecution") or []
        labels, name = node_info.labels, node_info.name
        return (preferred_scheduling_score(self.added_preferred, labels, name)
                + preferred_scheduling_score(preferred, labels, name))

    def normalize_score(self, state: CycleState, pod: Object, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None

