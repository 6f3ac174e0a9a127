"""API Priority and Fairness (flowcontrol.apiserver.k8s.io/v1), kube-apiserver's front door.

    c = Cluster(apf=True)                      # or server.enable_priority_and_fairness()
    c.apiserver.flowcontrol.snapshot()         # seats in use and queue lengths per level
    c.apiserver.flowcontrol.completed          # each request: level, flow, wait, seats

Read in this order: bootstrap.py (the FlowSchemas and PriorityLevelConfigurations every
server ensures), rule.py (does a request match a FlowSchema?), shufflesharding.py (a flow's
hand of queues), work_estimator.py (seats, and kubelab's service-time cost model),
queueset.py (fair queuing on the simulated clock), apf_controller.py (classification, the
configuration's concurrency shares, 429s). Upstream: k8s.io/apiserver pkg/util/flowcontrol/.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubelab.api.request import Request
from kubelab.apiserver.apis.schema_flowcontrol import FLOWCONTROL_SCHEMAS  # adds them to SCHEMAS
from kubelab.apiserver.auth.audit import AuditRecord
from kubelab.apiserver.bootstrap import LOOPBACK
from kubelab.apiserver.context import RequestContext
from kubelab.apiserver.endpoints.decode import decode_body
from kubelab.apiserver.flowcontrol.apf_controller import (
    SERVER_CONCURRENCY_LIMIT,
    TOO_MANY_REQUESTS,
    APFController,
    Classification,
    hash_flow_id,
)
from kubelab.apiserver.flowcontrol.bootstrap import GROUP, config_objects
from kubelab.apiserver.flowcontrol.queueset import QueuedRequest, QueueSet
from kubelab.apiserver.flowcontrol.shufflesharding import Dealer

if TYPE_CHECKING:
    from kubelab.apiserver.server import APIServer

__all__ = ["FLOWCONTROL_SCHEMAS", "GROUP", "SERVER_CONCURRENCY_LIMIT", "TOO_MANY_REQUESTS", "APFController",
           "Classification", "Dealer", "QueueSet", "QueuedRequest", "enable",
           "ensure_config_objects", "hash_flow_id"]


def ensure_config_objects(server: APIServer) -> None:
    """Create every bootstrap FlowSchema and PriorityLevelConfiguration that is missing, as
    the configuration ensurer does at each start (pkg/registry/flowcontrol/ensurer)."""
    for resource, obj in config_objects():
        served = server.served.lookup(GROUP, resource)
        name = obj["metadata"]["name"]
        if served is None or server.store.range(served.key("", name)).kvs:
            continue
        record = AuditRecord(server.clock.now, LOOPBACK.name, "create", resource, "", name)
        ctx = RequestContext(Request("create", resource, group=GROUP, body=obj), served,
                             LOOPBACK, record, server)
        ctx.enter("decode")
        server.registry.create(ctx, decode_body(obj, served.info, served.schema))
        record.code = 201
        server.log(record)


def enable(server: APIServer, server_concurrency_limit: int = SERVER_CONCURRENCY_LIMIT
           ) -> APFController:
    """Turn priority and fairness on for server: its objects exist, every request is
    classified and queued from now on."""
    ensure_config_objects(server)
    server.flowcontrol = APFController(server, server_concurrency_limit)
    return server.flowcontrol
