"""API Priority and Fairness: classify each request, then let its priority level's queues decide.

Follows k8s.io/apiserver pkg/util/flowcontrol/apf_controller.go and apf_filter.go, and the
filter pkg/server/filters/priority-and-fairness.go. The filter runs after authentication and
before authorization (DefaultBuildHandlerChain):

1. classify (startRequest): the FlowSchemas in order of matchingPrecedence, then name; the
   first that matches names the priority level. Its distinguisher (ByUser, ByNamespace or
   none) and the schema's name make the flow; sha256 of "<schema>\\0<distinguisher>" is the
   hash that deals the flow its queues (hashFlowID).
2. estimate the request's seats (work_estimator.py).
3. the level's queue set (queueset.py) admits or rejects. Exempt levels are never limited.
   A rejection is 429 "Too many requests, please try again later." with Retry-After
   (dropped_requests_tracker.go: 1 s, doubled while drops go on, at most 32 s).

The configuration controller (configController) reads FlowSchemas and
PriorityLevelConfigurations through informers, driven by their events and a workqueue: an event
puts the one key on configQueue, and its worker (syncOne) digests what the listers hold. kubelab's
API server may not import kubelab.client (a layer contract), so the informers' part is played by
what the server has: a lister per resource (storage/lister.py), listed from the store when the
controller starts and then fed by that resource's watch cache events (serving.py on_change).
Departure: a request that arrives while a sync is queued runs the sync first, instead of being
classified by the configuration from before the change.

The configuration controller's sums (finishQueueSetReconfigsLocked): the server's concurrency
limit, --max-requests-inflight (400) + --max-mutating-requests-inflight (200) = 600, is shared
out by nominalConcurrencyShares: nominalCL = ceil(600 x shares / sum of all shares), and a
level's max seats per request is max(1, min(ceil(0.15 x nominalCL), nominalCL / handSize)).

Simplified (docs/ARCHITECTURE.md section 9): no borrowing between levels (each level runs
at its nominalCL; lendablePercent and borrowingLimitPercent are read and reported, not
used), and a reconfigured level starts with fresh queues instead of quiescing the old ones.
See queueset.py for how the queues run beside the synchronous request path.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubelab.api.errors import ApiError
from kubelab.api.request import Request
from kubelab.apiserver.auth.audit import AuditRecord
from kubelab.apiserver.auth.authn import UserInfo
from kubelab.apiserver.context import Served
from kubelab.apiserver.flowcontrol.bootstrap import (
    GROUP,
    MANDATORY_FLOW_SCHEMAS,
    MANDATORY_PRIORITY_LEVELS,
    ensure_config_objects,
)
from kubelab.apiserver.flowcontrol.dropped_requests_tracker import DroppedRequestsStats
from kubelab.apiserver.flowcontrol.queueset import QueuedRequest, QueueSet
from kubelab.apiserver.flowcontrol.rule import (
    FlowSchemaDigest,
    RequestDigest,
    digest,
    matches_flow_schema,
)
from kubelab.apiserver.flowcontrol.status import (
    dangling_condition,
    needs_update,
    write_flow_schema_status,
)
from kubelab.apiserver.flowcontrol.work_estimator import (
    ObjectCountTracker,
    estimate_work,
    service_seconds,
)
from kubelab.apiserver.storage.lister import CacheLister
from kubelab.apiserver.storage.prefixes import key_prefix
from kubelab.apiserver.storage.watch_cache import CacheEvent

if TYPE_CHECKING:
    from kubelab.apiserver.server import APIServer

__all__ = ["APFController", "Classification", "PriorityLevelState", "hash_flow_id"]

SERVER_CONCURRENCY_LIMIT = 400 + 200
PRIORITY_LEVEL_MAX_SEATS_PERCENT = 0.15
REQUEST_WAIT_LIMIT = 60.0 / 4           # --request-timeout / 4
TOO_MANY_REQUESTS = "Too many requests, please try again later."
KEPT = 50_000  # finished requests kept for notebooks and panels


def hash_flow_id(fs_name: str, distinguisher: str) -> int:
    digest = hashlib.sha256(fs_name.encode() + b"\0" + distinguisher.encode()).digest()
    return int.from_bytes(digest[:8], "little")


@dataclass(frozen=True, slots=True)
class Classification:
    flow_schema: str
    priority_level: str
    flow_schema_uid: str
    priority_level_uid: str
    distinguisher: str


@dataclass(eq=False)
class PriorityLevelState:
    pl: dict[str, Any]
    nominal_cl: int
    lendable_cl: int
    borrowing_cl: int
    max_seats: int           # 0: no per-level cap (exempt, Reject levels)
    queues: QueueSet
    dropped: DroppedRequestsStats = field(default_factory=DroppedRequestsStats)

    @property
    def name(self) -> str:
        return str(self.pl["metadata"]["name"])


class APFController:
    """One API server's priority and fairness: its configuration and every level's queues."""

    def __init__(self, server: APIServer,
                 server_concurrency_limit: int = SERVER_CONCURRENCY_LIMIT) -> None:
        self.server = server
        self.server_concurrency_limit = server_concurrency_limit
        self.tracker = ObjectCountTracker(server)
        self.levels: dict[str, PriorityLevelState] = {}
        self.flow_schemas: list[FlowSchemaDigest] = []  # in matching order
        self.completed: deque[QueuedRequest] = deque(maxlen=KEPT)  # finished or rejected
        # apiserver_flowcontrol_rejected_requests_total: (flow schema, level, reason) -> count
        self.rejections: dict[tuple[str, str, str], int] = {}
        self.last: Classification | None = None   # the latest request's (notebooks read it)
        self._inflight: list[tuple[AuditRecord, QueuedRequest, PriorityLevelState]] = []
        self._dirty = True  # the listers are listed: the first request digests them
        self.pl_lister = CacheLister(server, key_prefix(GROUP, "prioritylevelconfigurations"))
        self.fs_lister = CacheLister(server, key_prefix(GROUP, "flowschemas"))

    # ------------------------------------------------------------------ configuration

    def on_config_events(self, resource: str, events: list[CacheEvent]) -> None:
        """The informers' event handlers: the lister takes the watch cache's events, and any
        change puts the one key on the configuration queue (configQueue.Add(0))."""
        lister = self.fs_lister if resource == "flowschemas" else self.pl_lister
        if lister.on_events(events):
            self.config_queue_add()

    def config_queue_add(self) -> None:
        """configQueue.Add(0): one key, so changes that come while it waits fold into one sync."""
        if not self._dirty:
            self._dirty = True
            self.server.clock.call_later(0, self.process_next_work_item)

    def process_next_work_item(self) -> None:
        if self._dirty and self.server.running and self.server.flowcontrol is self:
            self.sync_one()

    def sync_one(self) -> None:
        """Digest what the listers hold now (syncOne: plLister.List, fsLister.List)."""
        self._dirty = False
        self.digest_config_objects(self.pl_lister.list(), self.fs_lister.list())

    def digest_config_objects(self, new_pls: list[dict[str, Any]],
                              new_fss: list[dict[str, Any]]) -> None:
        # The mandatory objects always apply, even while deleted (digestConfigObjects).
        pls = _with_mandatory(new_pls, MANDATORY_PRIORITY_LEVELS)
        share_sum = sum(_spec_commons(pl)[0] for pl in pls) or 1
        old, self.levels = self.levels, {}
        for pl in pls:
            self.levels[pl["metadata"]["name"]] = self._level(pl, share_sum, old)
        for state in old.values():
            state.queues.stop()
        # digestFlowSchemasLocked: a schema naming a missing level is Dangling and ignored.
        good = []
        for fs in _with_mandatory(new_fss, MANDATORY_FLOW_SCHEMAS):
            level = fs["spec"]["priorityLevelConfiguration"]["name"]
            found = level in self.levels
            wanted = dangling_condition(level, found, self.server.timestamp())
            if "uid" in fs["metadata"] and needs_update(fs, wanted):
                self.server.clock.call_later(0, write_flow_schema_status, self.server, fs, wanted)
            if found:
                good.append(digest(fs))
        self.flow_schemas = sorted(good, key=lambda fs: (fs.matching_precedence, fs.name))

    def _level(self, pl: dict[str, Any], share_sum: int,
               old: dict[str, PriorityLevelState]) -> PriorityLevelState:
        shares, lendable, borrowing = _spec_commons(pl)
        limit = self.server_concurrency_limit
        nominal = math.ceil(limit * shares / share_sum)
        lendable_cl = round(nominal * lendable / 100)
        borrowing_cl = round(nominal * borrowing / 100) if borrowing is not None else limit
        queuing = ((pl["spec"].get("limited") or {}).get("limitResponse") or {}).get("queuing")
        max_seats = 0
        if queuing:
            hand = int(queuing.get("handSize", 1))
            max_seats = max(1, min(math.ceil(nominal * PRIORITY_LEVEL_MAX_SEATS_PERCENT),
                                   nominal // hand))
        name = pl["metadata"]["name"]
        previous = old.pop(name, None)
        if previous is not None and previous.pl["spec"] == pl["spec"] and \
                previous.nominal_cl == nominal:
            previous.pl = pl
            return previous
        exempt = pl["spec"].get("type") == "Exempt"
        queues = QueueSet(self.server.clock, name, nominal,
                          int(queuing["queues"]) if queuing else 0,
                          int(queuing["handSize"]) if queuing else 1,
                          int(queuing["queueLengthLimit"]) if queuing else 0,
                          exempt=exempt, wait_limit=REQUEST_WAIT_LIMIT, on_done=self._done)
        return PriorityLevelState(pl, nominal, lendable_cl, borrowing_cl, max_seats, queues)

    def restarted(self) -> APFController:
        """The server is back: its configuration objects ensured again, every queue empty."""
        ensure_config_objects(self.server)
        return APFController(self.server, self.server_concurrency_limit)

    def stop(self) -> None:
        """The server stopped: every queued and executing request is gone with it."""
        for state in self.levels.values():
            state.queues.stop()
        self.levels, self._inflight, self._dirty = {}, [], True

    # ------------------------------------------------------------------ the filter

    def classify(self, rd: RequestDigest) -> tuple[FlowSchemaDigest, str]:
        """The FlowSchema that matches first, and the request's flow distinguisher."""
        if self._dirty:  # a request before the queued sync: it runs first (see the docstring)
            self.sync_one()
        chosen = next((fs for fs in self.flow_schemas if matches_flow_schema(rd, fs)), None)
        if chosen is None:  # cannot happen while catch-all exists; upstream falls back on it
            chosen = next(fs for fs in self.flow_schemas if fs.name == "catch-all")
        method = chosen.distinguisher_method
        distinguisher = rd.user.name if method == "ByUser" else \
            rd.namespace if method == "ByNamespace" else ""
        return chosen, distinguisher

    def start_request(self, request: Request, served: Served, user: UserInfo,
                      record: AuditRecord) -> None:
        """Admit the request into its level's queues, or raise 429 TooManyRequests."""
        namespace = request.name if served.info.resource == "namespaces" and \
            not served.info.group else request.namespace
        rd = RequestDigest(user, request.verb, served.info.group, served.info.resource,
                           request.subresource, namespace)
        fs, distinguisher = self.classify(rd)
        state = self.levels.get(fs.priority_level) or self.levels["catch-all"]
        self.last = Classification(fs.name, state.name, fs.uid,
                                   str(state.pl["metadata"].get("uid", "")), distinguisher)
        set_response_headers(self.last, request)  # served or refused, the answer says how
        record.flow_schema, record.priority_level = self.last.flow_schema, state.name
        estimate = estimate_work(self.server, self.tracker, request, served.prefix,
                                 served.info.group, state.max_seats)
        req = QueuedRequest(f"{self.last.flow_schema}/{distinguisher}", estimate,
                            self.server.clock.now, state.name, user.name,
                            f"{request.verb} {record.object}")
        num_queues = state.queues.dealer.deck_size if state.queues.dealer is not None else 0
        hash_value = hash_flow_id(self.last.flow_schema, distinguisher) if num_queues > 1 else 0
        if not state.queues.start_request(req, hash_value):
            self.completed.append(req)
            rejected = (self.last.flow_schema, state.name, req.outcome)  # metrics.AddReject
            self.rejections[rejected] = self.rejections.get(rejected, 0) + 1
            retry_after = state.dropped.record_dropped_request(self.server.clock.now)
            raise ApiError(429, "TooManyRequests", TOO_MANY_REQUESTS,
                           {"retryAfterSeconds": retry_after})
        self._inflight.append((record, req, state))

    def note_items(self, record: AuditRecord, items: int) -> None:
        """A list returned `items` objects: what its service time counts (work_estimator.py)."""
        if self._inflight and self._inflight[-1][0] is record:
            req = self._inflight[-1][1]
            req.estimate = dataclasses.replace(req.estimate, objects=items)

    def finish_request(self, record: AuditRecord) -> None:
        """The request the record belongs to has run: its seats are held for its service time."""
        if not self._inflight or self._inflight[-1][0] is not record:
            return
        _, req, state = self._inflight.pop()
        state.queues.set_service(req, service_seconds(req.estimate, record.latency))

    def _done(self, req: QueuedRequest) -> None:
        self.completed.append(req)

    # ------------------------------------------------------------------ what panels read

    def queue_sets(self) -> list[QueueSet]:
        """Every priority level's queue set, by level name (what /metrics reads)."""
        return [state.queues for _, state in sorted(self.levels.items())]

    def snapshot(self) -> list[dict[str, Any]]:
        """Per level: seats in use of its limit, requests waiting and executing, queue
        lengths, requests dispatched and rejected so far."""
        if self._dirty:  # a request before the queued sync: it runs first (see the docstring)
            self.sync_one()
        rows = []
        for name, state in sorted(self.levels.items()):
            qs = state.queues
            rows.append({"priorityLevel": name, "type": state.pl["spec"].get("type", ""),
                         "nominalCL": state.nominal_cl, "maxSeats": state.max_seats,
                         "seatsInUse": qs.seats_in_use, "executing": qs.requests_executing,
                         "waiting": qs.requests_waiting, "queueLengths": qs.queue_lengths(),
                         "dispatched": qs.dispatched, "rejected": dict(qs.rejected)})
        return rows


def set_response_headers(classification: Classification, request: Request) -> None:
    """setResponseHeaders: the UIDs of the request's own FlowSchema and priority level."""
    request.response_headers["X-Kubernetes-PF-FlowSchema-UID"] = classification.flow_schema_uid
    request.response_headers["X-Kubernetes-PF-PriorityLevel-UID"] = \
        classification.priority_level_uid


def _with_mandatory(objects: list[dict[str, Any]], mandatory: list[dict[str, Any]]
                    ) -> list[dict[str, Any]]:
    names = {o["metadata"]["name"] for o in objects}
    return objects + [m for m in mandatory if m["metadata"]["name"] not in names]


def _spec_commons(pl: dict[str, Any]) -> tuple[int, int, int | None]:
    """plSpecCommons: nominalConcurrencyShares, lendablePercent, borrowingLimitPercent."""
    spec = pl.get("spec") or {}
    part = spec.get("exempt") if spec.get("type") == "Exempt" else spec.get("limited")
    part = part or {}
    shares = part.get("nominalConcurrencyShares")
    if shares is None:  # the v1 default: 30 for Limited, 0 for Exempt
        shares = 0 if spec.get("type") == "Exempt" else 30
    borrowing = part.get("borrowingLimitPercent")
    return int(shares), int(part.get("lendablePercent") or 0), \
        None if borrowing is None else int(borrowing)
