"""The Dangling condition of each FlowSchema: does the priority level it names exist?

Follows presyncFlowSchemaStatus in k8s.io/apiserver pkg/util/flowcontrol/apf_controller.go:
when a FlowSchema's condition is not what it should be, the controller writes its status
(upstream with a server-side apply as api-priority-and-fairness-config-consumer-v1; kubelab
with an update of the status subresource by the server itself). `kubectl get flowschemas`
prints the condition's status in its MISSINGPL column.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubelab.api import deep_copy
from kubelab.api.errors import ApiError
from kubelab.api.request import Request
from kubelab.apiserver.auth.audit import AuditRecord
from kubelab.apiserver.bootstrap import LOOPBACK
from kubelab.apiserver.context import RequestContext
from kubelab.apiserver.flowcontrol.bootstrap import GROUP

if TYPE_CHECKING:
    from kubelab.apiserver.server import APIServer

__all__ = ["dangling_condition", "write_flow_schema_status"]


def dangling_condition(level: str, found: bool, now: str) -> dict[str, Any]:
    if found:
        message = f"This FlowSchema references the PriorityLevelConfiguration object named " \
                  f'"{level}" and it exists'
    else:
        message = f"This FlowSchema references the PriorityLevelConfiguration object named " \
                  f'"{level}" but there is no such object'
    return {"type": "Dangling", "status": "False" if found else "True",
            "lastTransitionTime": now, "reason": "Found" if found else "NotFound",
            "message": message}


def needs_update(fs: dict[str, Any], wanted: dict[str, Any]) -> bool:
    for cond in (fs.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Dangling":
            return any(cond.get(k) != wanted[k] for k in ("status", "reason", "message"))
    return True


def write_flow_schema_status(server: APIServer, fs: dict[str, Any], wanted: dict[str, Any]
                             ) -> None:
    """PUT flowschemas/<name>/status with the Dangling condition replaced."""
    name = fs["metadata"]["name"]
    served = server.served.lookup(GROUP, "flowschemas")
    if served is None or not server.running:
        return
    obj = deep_copy(fs)
    conditions = [c for c in (obj.get("status") or {}).get("conditions") or []
                  if c.get("type") != "Dangling"]
    obj["status"] = {"conditions": [*conditions, wanted]}
    record = AuditRecord(server.clock.now, LOOPBACK.name, "update", "flowschemas", "", name,
                         "status")
    request = Request("update", "flowschemas", name=name, group=GROUP, subresource="status",
                      body=obj)
    try:
        server.registry.update(RequestContext(request, served, LOOPBACK, record, server), obj)
        record.code = 200
    except ApiError as err:  # gone or changed meanwhile: the next reload looks again
        record.code, record.message = err.code, err.message
    server.log(record)
