"""API Priority and Fairness (flowcontrol.apiserver.k8s.io/v1), kube-apiserver's front door.

    c = Cluster(apf=True)                      # or server.enable_priority_and_fairness()
    c.apiserver.flowcontrol.snapshot()         # seats in use and queue lengths per level
    c.apiserver.flowcontrol.completed          # each request: level, flow, wait, seats

Read in this order: bootstrap.py (the FlowSchemas and PriorityLevelConfigurations every
server ensures), rule.py (does a request match a FlowSchema?), shufflesharding.py (a flow's
hand of queues), work_estimator.py (seats, and kubelab's service-time cost model),
queueset.py (fair queuing on the simulated clock), apf_controller.py (classification, the
configuration read through listers, the concurrency shares, 429s), dropped_requests_tracker.py
(their Retry-After). Upstream: k8s.io/apiserver pkg/util/flowcontrol/.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubelab.apiserver.apis.schema_flowcontrol import FLOWCONTROL_SCHEMAS  # adds them to SCHEMAS
from kubelab.apiserver.flowcontrol.apf_controller import (
    SERVER_CONCURRENCY_LIMIT,
    TOO_MANY_REQUESTS,
    APFController,
    Classification,
    hash_flow_id,
)
from kubelab.apiserver.flowcontrol.bootstrap import GROUP, ensure_config_objects
from kubelab.apiserver.flowcontrol.queueset import QueuedRequest, QueueSet
from kubelab.apiserver.flowcontrol.shufflesharding import Dealer

if TYPE_CHECKING:
    from kubelab.apiserver.server import APIServer

__all__ = ["FLOWCONTROL_SCHEMAS", "GROUP", "SERVER_CONCURRENCY_LIMIT", "TOO_MANY_REQUESTS", "APFController",
           "Classification", "Dealer", "QueueSet", "QueuedRequest", "enable",
           "ensure_config_objects", "hash_flow_id"]


def enable(server: APIServer, server_concurrency_limit: int = SERVER_CONCURRENCY_LIMIT
           ) -> APFController:
    """Turn priority and fairness on for server: its objects exist, every request is
    classified and queued from now on."""
    ensure_config_objects(server)
    server.flowcontrol = APFController(server, server_concurrency_limit)
    return server.flowcontrol
