"""The filter before priority and fairness: --max-requests-inflight, for comparison.

Follows k8s.io/apiserver pkg/server/filters/maxinflight.go (WithMaxInFlightLimit), what
kube-apiserver runs with --enable-priority-and-fairness=false: at most 400 read-only (get,
list) and 200 mutating requests at once, one slot each whatever their size; long-running
requests (watches) are not counted; a request that finds no free slot gets 429 with
Retry-After: 1 at once, unless its user is in system:masters. No queues, no flows: a flood
takes the slots of everybody. Cluster(apf="max-inflight") turns it on. Each request holds its
slot for the service time of kubelab's cost model (work_estimator.py), as under APF, so the
two can be compared on the same requests.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from kubelab.api.errors import ApiError
from kubelab.api.request import Request
from kubelab.apiserver.auth.audit import AuditRecord
from kubelab.apiserver.auth.authn import MASTERS, UserInfo
from kubelab.apiserver.context import Served
from kubelab.apiserver.flowcontrol.apf_controller import KEPT, TOO_MANY_REQUESTS, Classification
from kubelab.apiserver.flowcontrol.queueset import QueuedRequest, QueueSet
from kubelab.apiserver.flowcontrol.work_estimator import (
    ObjectCountTracker,
    WorkEstimate,
    estimate_work,
    service_seconds,
)

if TYPE_CHECKING:
    from kubelab.apiserver.server import APIServer
    from kubelab.apiserver.storage.watch_cache import CacheEvent

__all__ = ["MAX_MUTATING_REQUESTS_INFLIGHT", "MAX_REQUESTS_INFLIGHT", "MaxInFlightFilter"]

MAX_REQUESTS_INFLIGHT = 400
MAX_MUTATING_REQUESTS_INFLIGHT = 200
NON_MUTATING_VERBS = frozenset({"get", "list", "watch"})


class MaxInFlightFilter:
    """Two pools of slots, read-only and mutating; the same surface as APFController."""

    def __init__(self, server: APIServer, max_requests_inflight: int = MAX_REQUESTS_INFLIGHT,
                 max_mutating_requests_inflight: int = MAX_MUTATING_REQUESTS_INFLIGHT) -> None:
        self.server = server
        self.limits = (max_requests_inflight, max_mutating_requests_inflight)
        self.server_concurrency_limit = sum(self.limits)
        self.tracker = ObjectCountTracker(server)
        self.completed: deque[QueuedRequest] = deque(maxlen=KEPT)
        self.last: Classification | None = None  # no FlowSchemas: never classified, no headers
        self._inflight: list[tuple[AuditRecord, QueuedRequest, QueueSet]] = []
        self.pools: dict[str, QueueSet] = {}
        self.stop()

    def on_config_events(self, resource: str, events: list[CacheEvent]) -> None:
        """FlowSchemas mean nothing to this filter."""

    def stop(self) -> None:
        for pool in self.pools.values():
            pool.stop()
        clock = self.server.clock
        self.pools = {"readOnly": QueueSet(clock, "readOnly", self.limits[0], on_done=self.completed.append),
                      "mutating": QueueSet(clock, "mutating", self.limits[1], on_done=self.completed.append)}
        self._inflight = []

    def start_request(self, request: Request, served: Served, user: UserInfo,
                      record: AuditRecord) -> None:
        if request.verb == "watch":  # long-running: not limited
            return
        kind = "readOnly" if request.verb in NON_MUTATING_VERBS else "mutating"
        pool = self.pools[kind]
        record.priority_level = kind
        if MASTERS in user.groups and not pool.can_accommodate_seats(1):
            return  # "a system:master is so powerful that they should always get an answer"
        objects = estimate_work(self.server, self.tracker, request, served.prefix,
                                served.info.group, 0).objects
        req = QueuedRequest(kind, WorkEstimate(objects=objects), self.server.clock.now, kind,
                            user.name, f"{request.verb} {record.object}")
        if not pool.start_request(req, 0):
            self.completed.append(req)
            raise ApiError(429, "TooManyRequests", TOO_MANY_REQUESTS, {"retryAfterSeconds": 1})
        self._inflight.append((record, req, pool))

    def note_items(self, record: AuditRecord, items: int) -> None:
        if self._inflight and self._inflight[-1][0] is record:
            req = self._inflight[-1][1]
            req.estimate = WorkEstimate(objects=items)

    def finish_request(self, record: AuditRecord) -> None:
        if not self._inflight or self._inflight[-1][0] is not record:
            return
        _, req, pool = self._inflight.pop()
        pool.set_service(req, service_seconds(req.estimate, record.latency))

    def queue_sets(self) -> list[QueueSet]:
        """The two pools (what /metrics reads)."""
        return list(self.pools.values())

    def restarted(self) -> MaxInFlightFilter:
        return MaxInFlightFilter(self.server, *self.limits)

    def snapshot(self) -> list[dict[str, Any]]:
        return [{"priorityLevel": name, "type": "MaxInFlight", "nominalCL": pool.concurrency_limit,
                 "maxSeats": 1, "seatsInUse": pool.seats_in_use, "executing": pool.requests_executing,
                 "waiting": 0, "queueLengths": [], "dispatched": pool.dispatched,
                 "rejected": dict(pool.rejected)} for name, pool in self.pools.items()]
