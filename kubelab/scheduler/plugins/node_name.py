"""NodeName: a pod that names its node (spec.nodeName) fits only that node.

pkg/scheduler/framework/plugins/nodename/node_name.go.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubelab.scheduler.interface import Code, CycleState, Handle, Status
from kubelab.scheduler.types import NodeInfo, Object

__all__ = ["ERR_REASON", "NodeName"]

ERR_REASON = "node(s) didn't match the requested node name"


class NodeName:
    name = "NodeName"

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        del args, handle  # no configuration

    def filter(self, state: CycleState, pod: Object, node_info: NodeInfo) -> Status | None:
        wanted = (pod.get("spec") or {}).get("nodeName")
        if not wanted or wanted == node_info.name:
            return None
        return Status(Code.UnschedulableAndUnresolvable, ERR_REASON)

