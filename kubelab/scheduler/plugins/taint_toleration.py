"""TaintToleration: a node's taints keep away pods that do not tolerate them.

pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go.
Filter: a NoSchedule or NoExecute taint the pod does not tolerate rules the node out. Since
kubernetes#134740 (in 1.34's patch releases) the reason no longer names the taint, which the
pod's author may not be allowed to see: "node(s) had untolerated taint(s)".
Score: count the PreferNoSchedule taints the pod does not tolerate; fewer is better, so the
counts are normalized in reverse (DefaultNormalizeScore(MaxNodeScore, reverse=true)).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubelab.scheduler.interface import MAX_NODE_SCORE, Code, CycleState, Handle, NodeScore, Status
from kubelab.scheduler.plugins.helper import (
    default_normalize_score,
    find_matching_untolerated_taint,
    tolerations_tolerate_taint,
)
from kubelab.scheduler.types import NodeInfo, Object

__all__ = ["ERR_REASON_NOT_MATCH", "TaintToleration"]

ERR_REASON_NOT_MATCH = "node(s) had untolerated taint(s)"

_PRE_SCORE_KEY = "PreScoreTaintToleration"


class TaintToleration:
    name = "TaintToleration"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        del args, handle  # no configuration

    def filter(self, state: CycleState, pod: Object, node_info: NodeInfo) -> Status | None:
        if not node_info.no_schedule_taints:
            return None
        tolerations = (pod.get("spec") or {}).get("tolerations") or ()
        if find_matching_untolerated_taint(node_info.no_schedule_taints, tolerations) is None:
            return None
        return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_NOT_MATCH)

    def pre_score(self, state: CycleState, pod: Object, nodes: Sequence[NodeInfo]) -> Status | None:
        # Only tolerations with an empty effect or PreferNoSchedule can tolerate these taints.
        tolerations = [t for t in (pod.get("spec") or {}).get("tolerations") or ()
                       if t.get("effect") in (None, "", "PreferNoSchedule")]
        state.write(_PRE_SCORE_KEY, tolerations)
        return None

    def score(self, state: CycleState, pod: Object, node_info: NodeInfo) -> int:
        if not node_info.prefer_no_schedule_taints:
            return 0
        tolerations = state.read(_PRE_SCORE_KEY)
        return sum(1 for taint in node_info.prefer_no_schedule_taints
                   if not tolerations_tolerate_taint(tolerations, taint))

    def normalize_score(self, state: CycleState, pod: Object, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, True, scores)
        return None

