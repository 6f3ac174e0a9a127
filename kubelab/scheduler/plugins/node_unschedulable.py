"""NodeUnschedulable: a cordoned node (spec.unschedulable) takes no new pods.

pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go. A pod that tolerates
the node.kubernetes.io/unschedulable:NoSchedule taint may still go there (DaemonSet pods do).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubelab.scheduler.interface import Code, CycleState, Handle, Status
from kubelab.scheduler.plugins.helper import tolerations_tolerate_taint
from kubelab.scheduler.types import NodeInfo, Object

__all__ = ["ERR_REASON_UNSCHEDULABLE", "NodeUnschedulable"]

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
# well_known_taints.go TaintNodeUnschedulable, with the effect the node controller gives it.
_UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


class NodeUnschedulable:
    name = "NodeUnschedulable"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        del args, handle  # no configuration

    def filter(self, state: CycleState, pod: Object, node_info: NodeInfo) -> Status | None:
        if not node_info.unschedulable:
            return None
        tolerations = (pod.get("spec") or {}).get("tolerations") or ()
        if tolerations_tolerate_taint(tolerations, _UNSCHEDULABLE_TAINT):
            return None
        return Status(Code.UnschedulableAndUnresolvable, ERR_REASON_UNSCHEDULABLE)

