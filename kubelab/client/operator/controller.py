"""The Operator: a component that runs one Reconciler (controller-runtime pkg/builder/
controller.go for the wiring, pkg/internal/controller/controller.go for the loop:
processNextWorkItem, reconcileHandler).

    Operator(ctx, MyReconciler(), for_resource="settlementjobs", owns=["jobs"])

watches the primary kind (`For`), the kinds it owns (`Owns`: an event maps to the owner's
Request) and any others with a map function (`Watches`), waits for the caches to sync, and then
for each Request taken from the rate-limited workqueue calls reconcile and decides:

    an exception          -> add_rate_limited (back-off 5 ms doubling to 1000 s)
    TerminalError         -> forget: not retried
    Result(requeue_after) -> forget, then add_after(requeue_after)
    Result(requeue=True)  -> add_rate_limited
    anything else         -> forget

One worker by default (MaxConcurrentReconciles = 1); a key is never reconciled by two workers
at once. Every reconcile is written down (ReconcileRecord) with the requests it sent, so a
notebook can show what it cost. A crash (stop) loses the caches and the queue.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kubelab.api.errors import ApiError
from kubelab.api.meta import split_key
from kubelab.client.client import Client
from kubelab.client.component import ComponentContext
from kubelab.client.operator.cache import Cache, RequestLog
from kubelab.client.operator.handler import (
    MapFunc,
    enqueue_request_for_object,
    enqueue_request_for_owner,
    handler_for,
)
from kubelab.client.operator.reconcile import Reconciler, Request, Result, TerminalError
from kubelab.client.shared_informer import SharedInformerFactory
from kubelab.client.workqueue import RateLimitingQueue, default_controller_rate_limiter
from kubelab.sim.clock import Timer

__all__ = ["Operator", "ReconcileRecord"]

SYNCED_POLL_PERIOD = 0.1


@dataclass
class ReconcileRecord:
    """One reconcile: when, for which key, the requests it sent, and how it ended."""

    time: float
    request: Request
    requests: list[str] = field(default_factory=list)
    outcome: str = ""

    def __str__(self) -> str:
        sent = "; ".join(self.requests) or "no requests"
        return f"t={self.time:g} {self.request}: {self.outcome} ({sent})"


class Operator:
    def __init__(self, ctx: ComponentContext, reconciler: Reconciler, *, for_resource: str,
                 owns: Iterable[str] = (), watches: Mapping[str, MapFunc] | None = None,
                 namespace: str = "", max_concurrent_reconciles: int = 1, resync_period: float = 0.0,
                 cost: float = 0.0) -> None:
        self.ctx, self.name, self.clock = ctx, ctx.name, ctx.clock
        self.reconciler, self.cost = reconciler, cost
        self.informers = SharedInformerFactory(ctx.client, ctx.clock, resync_period=resync_period,
                                               namespace=namespace, rand=ctx.rand, trace=ctx.trace,
                                               name=ctx.name)
        self.cache = Cache(self.informers)
        # The reconciler's own client: the same identity, with every request written down.
        self.request_log = RequestLog(ctx.client.api)
        self.client = Client(self.request_log, ctx.client.token, user_agent=ctx.client.user_agent,
                             resources=ctx.client.resources, server=ctx.client.server)
        # Events go through the component's own client: they are not the reconcile's requests.
        reconciler.inject(client=self.client, cache=self.cache, clock=ctx.clock, recorder=ctx.recorder())
        self.queue: RateLimitingQueue[Request] = RateLimitingQueue(
            ctx.clock, default_controller_rate_limiter(ctx.clock), name=ctx.name)
        primary = self.informers.informer_for(for_resource)
        primary.add_event_handler(handler_for(enqueue_request_for_object, self.queue.add))
        info = ctx.client.resource(for_resource)
        for resource in owns:
            self.informers.informer_for(resource).add_event_handler(handler_for(
                enqueue_request_for_owner(info.api_version, info.kind), self.queue.add))
        for resource, map_func in (watches or {}).items():
            self.informers.informer_for(resource).add_event_handler(handler_for(map_func, self.queue.add))
        self.records: list[ReconcileRecord] = []
        self._idle = max_concurrent_reconciles
        self._running = False
        self._poll: Timer | None = None

    # ------------------------------------------------------------------ the component

    def start(self) -> None:
        self.informers.start()
        self._wait_for_cache_sync()

    def _wait_for_cache_sync(self) -> None:
        self._poll = None
        if not self.informers.has_synced():
            self._poll = self.clock.call_later(SYNCED_POLL_PERIOD, self._wait_for_cache_sync)
            return
        self._running = True
        self.queue.on_ready(self._wake)

    def stop(self) -> None:
        """A crash: the caches, the queue and anything the reconciler kept in memory."""
        if self._poll is not None:
            self._poll.cancel()
        self._running = False
        self.queue.shut_down()
        self.informers.stop()

    # ------------------------------------------------------------------ the loop

    def _wake(self) -> None:
        while self._running and self._idle > 0 and len(self.queue) > 0:
            self._idle -= 1
            if not self.process_next_work_item():
                self._idle += 1
                return

    def process_next_work_item(self) -> bool:
        request, shutdown = self.queue.get()
        if shutdown or request is None:
            return False
        self.reconcile_handler(request)
        return True

    def reconcile_handler(self, request: Request) -> None:
        record = ReconcileRecord(self.clock.now, request)
        start = len(self.request_log.entries)
        after: float | None = None
        try:
            result = self.reconciler.reconcile(request)
        except TerminalError as err:
            record.outcome, action = f"terminal error: {err}", "forget"
        except Exception as err:  # any failure is retried with back-off, never fatal
            reason = err.reason if isinstance(err, ApiError) else type(err).__name__
            record.outcome, action = f"error {reason}: requeued with back-off", "rate-limited"
        else:
            result = result or Result()
            if result.requeue_after > 0:
                record.outcome, action = f"requeue after {result.requeue_after:g}s", "after"
                after = result.requeue_after
            elif result.requeue:
                record.outcome, action = "requeue", "rate-limited"
            else:
                record.outcome, action = "done", "forget"
        record.requests = [RequestLog.describe(e) for e in self.request_log.entries[start:]]
        self.records.append(record)
        self.ctx.trace.record(self.name, "reconcile", str(request), outcome=record.outcome,
                              requests=len(record.requests))
        self.clock.call_later(self.cost, self._finish, request, action, after)

    def _finish(self, request: Request, action: str, after: float | None) -> None:
        if action == "rate-limited":
            self.queue.add_rate_limited(request)
        else:
            self.queue.forget(request)
            if after is not None:
                self.queue.add_after(request, after)
        self.queue.done(request)
        self._idle += 1
        self._wake()

    def enqueue(self, key: str) -> None:
        """Add a Request by its `namespace/name` key, as an event would."""
        namespace, name = split_key(key)
        self.queue.add(Request(namespace, name))

    def __repr__(self) -> str:
        return f"<Operator {self.name}: {len(self.records)} reconciles>"

